#!/bin/bash
# next8.sh OUT - the first call of the session after session 8 (~8 min, either GPU): the whole
# `make test-gpu` (not run since session 6: the three-phase attention, the mat-vec kernel per
# weight type, the PDL membar and the in-situ profile have only met their own tests and the LLM
# suites on a GPU), offline vocab suites skipped; the driver free-memory checks of session 8 on
# rm:0 and cuda:0; then the hcq suite on cuda:0 with the kernel log. Logs under OUT; the tail of each is printed.
set -u
out=${1:?usage: next8.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
SKIP_SUITES="llama3_vocab qwen2_vocab command_r_vocab" timeout 420 make test-gpu CUARCH=90 >"$out/a_test_gpu.txt" 2>&1
echo "make test-gpu rc=$? after $(($(date +%s) - t0)) s"
grep -E "FAIL|passed|failed" "$out/a_test_gpu.txt" | tail -25
for d in rm:0 cuda:0; do  # session 8's driver free-memory figure (RM heap / cuMemGetInfo)
    echo "$d: $(HCQ_STRESS_S=5 timeout 100 build/tests/hcq_suite --dev $d --slow --klog mem_stats_driver_free stress_memory_churn 2>&1 | grep -E "driver|FAIL|passed" | tr '\n' ' ')"
done
left=$((580 - ($(date +%s) - t0)))
[ $left -gt 60 ] && timeout $left build/tests/hcq_suite --dev cuda:0 --klog >"$out/a_suite_cuda0.txt" 2>&1
tail -3 "$out/a_suite_cuda0.txt" 2>/dev/null
echo "== end $(($(date +%s) - t0)) s"
