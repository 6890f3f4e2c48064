#!/bin/sh
# Developer script (GPU machine, sm_90): build gemm_wgmma_tune.cu for several variants (each
# argument: nvcc -D flags) in parallel and run each with one CTA per tile and with a
# persistent grid. Usage: sh bench/tune/run_wgmma_tune.sh OUTDIR ["-DK_GW_GROUP=8 ..." ...]
out=${1:-/tmp}
shift
NVCC=${NVCC:-nvcc}
command -v $NVCC >/dev/null || NVCC=/usr/local/cuda/bin/nvcc
[ $# -gt 0 ] || set -- "-DK_GW_GROUP=16" "-DK_GW_GROUP=8" "-DK_GW_GROUP=32" "-DK_GW_LAG=2"
i=0
for c in "$@"; do
    $NVCC -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Isrc/kernels $c \
        bench/tune/gemm_wgmma_tune.cu -lcublas -o $out/wtune$i > $out/wbuild$i.log 2>&1 &
    i=$((i+1))
done
wait
for j in $(seq 0 $((i-1))); do
    if [ -x $out/wtune$j ]; then $out/wtune$j tiles; $out/wtune$j persist; else cat $out/wbuild$j.log; fi
done
