#!/bin/bash
# s46.sh OUT - for branch gemm-n128 (session 8, not run on a GPU): the wgmma GEMMs with 128 x 128
# tiles (k_gemm_wgmma_*_n128), which ops_gemm_kernel_for picks where 128 x 256 tiles would fill
# fewer than half of the SMs (1024^3: 32 tiles on 132 SMs; H200 session 8: 119 TFLOP/s, 43% of
# cuBLAS, issue 12 asks 50%). Checks: the hcq suite's wgmma tests (both tile widths) on rm:0 and
# cuda:0 with the kernel log; then `bench gemm` rm:0 and cuda:0 (cuBLAS rows beside) with the
# new choice and with NVHCQ_GEMM=wide (the old one). Merge when the tests pass and 1024^3 is
# faster.
set -u
out=${1:?usage: s46.sh OUT}
mkdir -p "$out"
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for d in rm:0 cuda:0; do
    echo "$d: $(timeout 200 build/tests/hcq_suite --dev $d --klog kernel_gemm_wgmma_f16 kernel_gemm_wgmma_bf16 kernel_gemm_wgmma_f16_nt kernel_gemm_wgmma_bf16_nt kernel_gemm_wgmma_f16_n128 kernel_gemm_wgmma_bf16_n128 kernel_gemm_wgmma_f16_nt_n128 kernel_gemm_wgmma_bf16_nt_n128 kernel_table_complete 2>&1 | grep -E "FAIL|passed" | tr '\n' ' ')"
done
for v in X=0 NVHCQ_GEMM=wide; do
    echo "-- bench gemm [$v]"
    env $v timeout 200 build/nvhcq bench gemm --devs rm:0,cuda:0 2>&1 | grep -E "gemm_(b?f16) " | grep -E "1024x|2048x" | cut -c1-130
done
