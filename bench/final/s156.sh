#!/bin/bash
# s156.sh OUT - session 21; either GPU; carry .commit; ~3 min. FREE_CTA_SLOTS_EMPTY_SM in V4 QMDs (the
# default since this tree; PB_QMD_FREE_CTA_SLOTS=0 restores 0): `bench latency --devs rm:0,cuda:0` at
# the default, alternating with 0 (S156_ROUNDS, default 2); then the HCQ suite on rm:0 (kernel log
# checked per test) and the LLM GPU tests on rm:0 at the default. First run (s156, tree 5648c17:
# 32 for every grid) faulted kernels that hold fewer CTAs; second (s157): gpu_cubin_free_cta_slots.
set -u
OUT=${1:?usage: s156.sh OUT}
mkdir -p "$OUT"
export T0=$(date +%s)
. bench/final/lib.sh
call_build || exit 1
L="$OUT/a_lat_full.txt"
for r in $(seq 1 "${S156_ROUNDS:-2}"); do
    LAT_DEVS=rm:0,cuda:0 lat_run "default r$r" NVHCQ_X=0
    LAT_DEVS=rm:0,cuda:0 lat_run "0 r$r" PB_QMD_FREE_CTA_SLOTS=0
done 2>&1 | tee "$OUT/a_lat.txt"
echo "== lat done $(($(date +%s) - T0)) s"
timeout 200 build/tests/hcq_suite --dev rm:0 --klog >"$OUT/a_suite.txt" 2>&1
echo "hcq_suite rm:0 rc=$? $(grep -E "FAIL|passed" "$OUT/a_suite.txt" | tr '\n' ' ' | cut -c1-300)"
for t in test_llm_e2e test_llm_matvec test_llm_attn_decode test_llm_attn_o test_llm_real; do
    HCQ_TEST_DEVS=rm:0 timeout 150 build/tests/$t >/tmp/t.txt 2>&1
    rc=$?
    cat /tmp/t.txt >>"$OUT/a_llm_full.txt"
    (exit $rc)
    echo "$t rm:0 rc=$? $(grep -E "FAIL|passed" /tmp/t.txt | tr '\n' ' ' | cut -c1-200)"
done 2>&1 | tee "$OUT/a_llm_tests.txt"
dmesg | grep -E "NVRM: Xid" | tail -n 5 | cut -c1-300
echo "== end $(($(date +%s) - T0)) s"
