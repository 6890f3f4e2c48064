#!/bin/bash
# s68.sh OUT - session 10 (nvidia-h100-x1, carry .commit; ~4.5 min): cbuf0 0x198 now carries the
# parameters' GPU address on sm_90 (s67 found the TMA kernel reads it). Our tensor maps against
# libcuda's; the TMA GEMM tests on rm:0 and cuda:0; the whole hcq suite on rm:0 (every sm_90
# launch now writes that slot); `bench gemm` default vs NVHCQ_GEMM=tma, two alternating rounds;
# test_llm_e2e on rm:0. Logs a_*.
set -u
out=${1:?usage: s68.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/a_gpu.txt"
cc -O2 -std=c11 -I/usr/local/cuda/include -Iinclude -Isrc/ops -Isrc/util tests/hw/tmap_scan.c build/libnvhcq.a \
    -ldl -lm -lpthread -o build/tmap_scan && build/tmap_scan >"$out/a_tmap.txt" 2>&1
tail -1 "$out/a_tmap.txt"
{
for d in rm:0 cuda:0; do
    timeout 120 build/tests/hcq_suite --dev $d kernel_gemm_wgmma_f16_tma kernel_gemm_wgmma_bf16_tma \
        kernel_gemm_wgmma_f16_nt_tma kernel_gemm_wgmma_bf16_nt_tma kernel_table_complete >"$out/s.txt" 2>&1
    echo "suite TMA $d: $(grep -E "FAIL|passed" "$out/s.txt" | tr '\n' ' ')"
done
timeout 200 build/tests/hcq_suite --dev rm:0 >"$out/s.txt" 2>&1
echo "suite rm:0: $(grep -E "FAIL|passed" "$out/s.txt" | tr '\n' ' ')"
} 2>&1 | tee "$out/a_suite.txt"
for r in 1 2; do for v in X=0 NVHCQ_GEMM=tma; do
    echo "-- gemm r$r [$v]"
    env $v timeout 150 build/nvhcq bench gemm --devs rm:0,cuda:0 2>&1 | grep -E "gemm_(f16|bf16) " | cut -c1-110
done; done 2>&1 | tee "$out/a_gemm.txt"
HCQ_TEST_DEVS='rm:0' timeout 150 build/tests/test_llm_e2e >"$out/t.txt" 2>&1
echo "test_llm_e2e rm:0: $(grep -E "FAIL|passed" "$out/t.txt" | tr '\n' ' ')" | tee -a "$out/a_suite.txt"
dmesg 2>/dev/null | grep -ciE "xid"
echo "== end $(($(date +%s) - t0)) s"
