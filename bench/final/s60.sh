#!/bin/bash
# s60.sh OUT - session 10 (nvidia-h100-x1, carry .commit; ~9 min): s59's `make test-gpu` hung a
# channel in test_llm_matvec (GPGet 60 / GPPut 61: the GPU missed a doorbell that beat the
# GPPut store through BAR1, once the engine stopped reading GPGet before each kick). Now the rm
# kick reads GPGet back after its doorbell and rings again if the GPU has not fetched. Here:
# `bench latency` (default vs PB_GPGET_READ=1, alternating), test_llm_matvec x3 and the hcq
# suite on rm:0, then the whole `make test-gpu`; dmesg Xid lines at the end. Logs a_*.
set -u
out=${1:?usage: s60.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/a_gpu.txt"
for r in 1 2; do for v in X=0 PB_GPGET_READ=1; do
    echo "-- latency r$r [$v]"
    env $v timeout 60 build/nvhcq bench latency --devs rm:0,cuda:0 2>&1 | grep -E "launch_sync|back_to_back|graph_300|dep_chain|signal_round" | cut -c1-130
done; done | tee "$out/a_latency.txt"
for i in 1 2 3; do
    HCQ_TEST_DEVS='rm:0' timeout 120 build/tests/test_llm_matvec >"$out/a_matvec_$i.txt" 2>&1
    echo "matvec $i: $(grep -E "FAIL|passed" "$out/a_matvec_$i.txt" | tr '\n' ' ')"
done
timeout 200 build/tests/hcq_suite --dev rm:0 --klog >"$out/a_suite_rm0.txt" 2>&1
echo "suite rm:0: $(grep -E "FAIL|passed" "$out/a_suite_rm0.txt" | tr '\n' ' ')"
echo "== $(($(date +%s) - t0)) s"
SKIP_SUITES="llama3_vocab qwen2_vocab command_r_vocab" timeout 400 make test-gpu CUARCH=90 >"$out/a_test_gpu.txt" 2>&1
echo "make test-gpu rc=$? after $(($(date +%s) - t0)) s"
grep -E "FAIL|total" "$out/a_test_gpu.txt" | tail -8
dmesg 2>/dev/null | grep -iE "xid|nvrm.*fault" | tail -5
echo "== end $(($(date +%s) - t0)) s"
