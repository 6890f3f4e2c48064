#!/bin/bash
# s63.sh OUT - session 10 on an H200 if one comes (kind nvidia-h200, carry .commit; ~4 min): the
# `bench latency` A/B of s62 (default vs PB_END_QMD_RELEASE=0 vs PB_GPGET_READ=1, alternating,
# nothing else running), then the hcq suite, test_llm_matvec and test_llm_e2e on rm:0 (and
# cuda:0 for the LLM tests). Logs a_*.
set -u
out=${1:?usage: s63.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/a_gpu.txt"
for r in 1 2; do for v in X=0 PB_END_QMD_RELEASE=0 PB_GPGET_READ=1; do
    echo "-- latency r$r [$v]"
    env $v timeout 60 build/nvhcq bench latency --devs rm:0,cuda:0 2>&1 | grep -E "launch_sync|back_to_back|graph_300|dep_chain|signal_round|copy_to" | cut -c1-130
done; done | tee "$out/a_latency.txt"
{
timeout 200 build/tests/hcq_suite --dev rm:0 --klog >"$out/suite.txt" 2>&1
echo "suite rm:0: $(grep -E "FAIL|passed" "$out/suite.txt" | tr '\n' ' ')"
for t in test_llm_matvec test_llm_e2e; do
    HCQ_TEST_DEVS='rm:0 cuda:0' timeout 200 build/tests/$t >"$out/t.txt" 2>&1
    echo "$t: $(grep -E "FAIL|passed" "$out/t.txt" | tr '\n' ' ')"
done
} 2>&1 | tee "$out/a_tests.txt"
echo "== end $(($(date +%s) - t0)) s"
