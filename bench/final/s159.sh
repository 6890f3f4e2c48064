#!/bin/bash
# s159.sh OUT - prepared in session 21 for an H200 call (not yet run; on an H100 it repeats the
# H100 rows); carry .commit; ~3 min. Issue 13's rows that docs/status.md's H200 table still has
# from wave 1: `nvhcq bench copy alloc latency --devs rm:0,cuda:0` (nothing else running), twice;
# then the HCQ suite's stress_memory_churn (10,000 alloc/free: fds, mappings, the driver's free
# memory back to the start) and memory / copy tests on rm:0 with the kernel log checked.
set -u
OUT=${1:?usage: s159.sh OUT}
mkdir -p "$OUT"
export T0=$(date +%s)
. bench/final/lib.sh
call_build || exit 1
for r in 1 2; do
    timeout 240 build/nvhcq bench copy alloc latency --devs rm:0,cuda:0 --json "$OUT/a_bench_r$r.json" \
        >"$OUT/a_bench_r$r.txt" 2>&1
    echo "[bench r$r] rc=$? ($(($(date +%s) - T0)) s)"
    grep -E "^(copy|alloc|latency)" "$OUT/a_bench_r$r.txt" | tr -s ' ' | cut -c1-110
done
HCQ_STRESS_S=10 timeout 300 build/tests/hcq_suite --dev rm:0 --slow --klog stress_memory_churn mem_ close_frees copy \
    small_copies long_copy import_host >"$OUT/a_suite.txt" 2>&1
echo "hcq_suite rm:0 (memory churn, copies) rc=$? $(grep -E "FAIL|passed" "$OUT/a_suite.txt" | tr '\n' ' ' | cut -c1-300)"
dmesg | grep -E "NVRM: Xid" | tail -n 5 | cut -c1-300
echo "== end $(($(date +%s) - T0)) s"
