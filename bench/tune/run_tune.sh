#!/bin/sh
# Developer script (GPU machine): build gemm_tune.cu for several tile configurations in
# parallel, run each, print the lines. Usage: sh bench/tune/run_tune.sh OUTDIR
out=${1:-/tmp}
NVCC=${NVCC:-nvcc}
command -v $NVCC >/dev/null || NVCC=/usr/local/cuda/bin/nvcc
i=0
for c in "128 128 2 4 3 s" "128 128 2 2 3 s" "128 64 2 2 4 s" "64 128 2 2 4 s" \
         "128 128 2 4 4 d" "128 256 2 4 3 d" "256 128 4 2 3 d" "128 256 2 4 4 d"; do
    set -- $c
    dyn=""; [ "$6" = d ] && dyn="-DK_GM_DYNAMIC"
    $NVCC -O3 -std=c++17 -arch=sm_90 -Isrc/kernels $dyn -DK_GM_BM=$1 -DK_GM_BN=$2 -DK_GM_WM=$3 -DK_GM_WN=$4 \
        -DK_GM_STAGES=$5 bench/tune/gemm_tune.cu -lcublas -o $out/tune$i > $out/build$i.log 2>&1 &
    i=$((i+1))
done
wait
for j in $(seq 0 $((i-1))); do
    if [ -x $out/tune$j ]; then $out/tune$j full; else cat $out/build$j.log; fi
done
