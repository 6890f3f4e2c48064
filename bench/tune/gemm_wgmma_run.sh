#!/bin/sh
# Developer script (GPU machine, sm_90): build for CUARCH=90, run the GEMM tests on cuda:0 and
# rm:0 (k_gemm_* and k_gemm_wgmma_* against the CPU twin and a double reference), then
# `nvhcq bench gemm` on both (wgmma rows, the mma.sync rows they replace, the cuBLAS anchor).
# Usage: sh bench/tune/gemm_wgmma_run.sh [OUTDIR]   (bench/notes-gemm.md, session 5)
out=${1:-/tmp}
mkdir -p "$out"
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
grep -i "warn\|spill" "$out/build.log" | head
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
for d in cuda:0 rm:0; do
    timeout 60 build/tests/hcq_suite --dev "$d" kernel_gemm kernel_table_complete 2>&1 | tail -12
done
timeout "${BENCH_S:-70}" build/nvhcq bench gemm --devs rm:0,cuda:0 --json "$out/bench-gemm.json" 2>&1 |
    grep "gemm\|error\|ERROR\|FAIL"
