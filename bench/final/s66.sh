#!/bin/bash
# s66.sh OUT - session 10 (nvidia-h100-x1, carry .commit; ~6 min): the TMA-fed wgmma GEMM. Our
# tensor-map encoder against libcuda's (tests/hw/tmap_scan.c); the four k_gemm_wgmma_*_tma
# kernels in the hcq suite on rm:0 and cuda:0 (random shapes and edges vs double, own and 3-CTA
# grids) with kernel_table_complete; then `bench gemm` default (cp.async producer) vs
# NVHCQ_GEMM=tma, alternating, rm:0 and cuda:0 rows with cuBLAS beside. Logs a_*.
set -u
out=${1:?usage: s66.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/a_gpu.txt"
cc -O2 -std=c11 -I/usr/local/cuda/include -Iinclude -Isrc/ops -Isrc/util tests/hw/tmap_scan.c build/libnvhcq.a \
    -ldl -lm -lpthread -o build/tmap_scan && build/tmap_scan >"$out/a_tmap.txt" 2>&1
tail -1 "$out/a_tmap.txt"; grep -c DIFF "$out/a_tmap.txt"
for d in rm:0 cuda:0; do
    timeout 120 build/tests/hcq_suite --dev $d kernel_gemm_wgmma_f16_tma kernel_gemm_wgmma_bf16_tma \
        kernel_gemm_wgmma_f16_nt_tma kernel_gemm_wgmma_bf16_nt_tma kernel_gemm_wgmma_f16 kernel_table_complete >"$out/s.txt" 2>&1
    echo "suite $d: $(grep -E "FAIL|passed" "$out/s.txt" | tr '\n' ' ')"
    grep -B3 FAIL "$out/s.txt" | head -12
done 2>&1 | tee "$out/a_suite.txt"
echo "== tests $(($(date +%s) - t0)) s"
for r in 1 2; do for v in X=0 NVHCQ_GEMM=tma; do
    echo "-- gemm r$r [$v]"
    env $v timeout 150 build/nvhcq bench gemm --devs rm:0,cuda:0 2>&1 | grep -E "gemm|matmul" | grep -vE "^bench:" | cut -c1-140
done; done 2>&1 | tee "$out/a_gemm.txt"
dmesg 2>/dev/null | grep -iE "xid" | tail -3
echo "== end $(($(date +%s) - t0)) s"
