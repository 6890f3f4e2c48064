#!/bin/bash
# s180.sh OUT - session 24 (ask for an H200; carry .commit; ~4 min on an H200, seconds elsewhere):
# on an H200, s164.sh (issue 13's H200 half: CUDA's graph QMDs, latency rows, graph suite tests,
# copy + alloc), then the defaults no H200 has run (FREE_CTA_SLOTS_EMPTY_SM on single-wave grids,
# the QMD encode memo, cbuf0 built in CPU memory) under the whole HCQ suite on rm:0 with the kernel
# log checked per test, and test_llm_e2e on rm:0 and cuda:0. On any other card it stops at once
# (exit 3) so the probe costs only the machine's start.
set -u
OUT=${1:?usage: s180.sh OUT}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 || { echo "not an H200"; exit 3; }
t0=$(date +%s)
bash bench/final/s164.sh "$OUT"
{
echo "== s164 took $(($(date +%s) - t0)) s"
s=$(date +%s); build/tests/hcq_suite --dev rm:0 --klog > "$OUT/a_suite_rm0_klog.txt" 2>&1
echo "hcq_suite rm:0 --klog: $(($(date +%s) - s)) s"; grep -E "FAIL|passed" "$OUT/a_suite_rm0_klog.txt" | tail -5
s=$(date +%s); HCQ_TEST_DEVS="rm:0 cuda:0" timeout 200 build/tests/test_llm_e2e > "$OUT/a_e2e.txt" 2>&1
echo "test_llm_e2e rm:0 cuda:0: $(($(date +%s) - s)) s"; grep -E "FAIL|passed" "$OUT/a_e2e.txt" | tail -5
dmesg | grep -E "NVRM: Xid" | tail -n 5 | cut -c1-300
echo "== s180 end $(($(date +%s) - t0)) s"
} 2>&1 | tee "$OUT/a_s180.txt"
