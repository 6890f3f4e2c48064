#!/bin/bash
# s69.sh OUT - session 10's last call (nvidia-h100-x1, carry .commit; ~3 min): the TMA-fed GEMM is
# the default on sm_90 now. The whole hcq suite on rm:0 and cuda:0, the LLM prefill/e2e tests on
# rm:0 (every sm_90 launch writes cbuf0 0x198), one `bench gemm` round. Logs a_*.
set -u
out=${1:?usage: s69.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/a_gpu.txt"
{
for d in rm:0 cuda:0; do
    timeout 200 build/tests/hcq_suite --dev $d >"$out/s.txt" 2>&1
    echo "suite $d: $(grep -E "FAIL|passed" "$out/s.txt" | tr '\n' ' ')"
done
for t in test_llm_dequant test_llm_attn_prefill test_llm_e2e; do
    HCQ_TEST_DEVS='rm:0' timeout 150 build/tests/$t >"$out/t.txt" 2>&1
    echo "$t rm:0: $(grep -E "FAIL|passed" "$out/t.txt" | tr '\n' ' ')"
done
} 2>&1 | tee "$out/a_tests.txt"
timeout 150 build/nvhcq bench gemm --devs rm:0,cuda:0 2>&1 | grep -E "gemm" | cut -c1-150 | tee "$out/a_gemm.txt"
dmesg 2>/dev/null | grep -iE "xid" | tail -3
echo "== end $(($(date +%s) - t0)) s"
