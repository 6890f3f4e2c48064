#!/bin/sh
# Developer script (GPU machine, sm_90): build gemm_wgmma_tune.cu for several (GROUP, LAG)
# variants in parallel and run each with one CTA per tile and with a persistent grid.
# Usage: sh bench/tune/run_wgmma_tune.sh OUTDIR ["G L" ...]
out=${1:-/tmp}
shift
NVCC=${NVCC:-nvcc}
command -v $NVCC >/dev/null || NVCC=/usr/local/cuda/bin/nvcc
[ $# -gt 0 ] || set -- "16 1" "8 1" "32 1" "16 2"
i=0
for c in "$@"; do
    set -- $c
    $NVCC -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Isrc/kernels -DK_GW_GROUP=$1 -DK_GW_LAG=$2 \
        bench/tune/gemm_wgmma_tune.cu -lcublas -o $out/wtune$i > $out/wbuild$i.log 2>&1 &
    i=$((i+1))
done
wait
for j in $(seq 0 $((i-1))); do
    if [ -x $out/wtune$j ]; then $out/wtune$j tiles; $out/wtune$j persist; else cat $out/wbuild$j.log; fi
done
