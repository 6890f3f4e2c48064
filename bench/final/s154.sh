#!/bin/bash
# s154.sh OUT - session 21; either GPU; carry .llqb .commit; ~6 min.
# (1) Issue 11: the output head (the step's last launch: 16% of a Q8_0 step, its warps ending
# between 77 and 101 us in session 19's timeline, nothing after it to use the early exits) on the
# dynamic-unit kernel (q8_matvec_dyn: 75% of the units fixed, the rest from 16 run-time pools),
# NVHCQ_MVQ_DYN=head; tg128 Q8_0 alternating, three rounds; profiles both ways; test_llm_e2e
# under it on rm:0. (2) Issue 13's graph row: QMD fields session 17's sweep did not try
# (PB_QMD_FIELDS), one `bench latency` each between base runs. Few files come back: a_*.txt.
set -u
OUT=${1:?usage: s154.sh OUT}
mkdir -p "$OUT"
export T0=$(date +%s)
. bench/final/lib.sh
call_build || exit 1
quant_files Q8_0 >"$OUT/a_quant.txt" 2>&1
echo "== builds done $(($(date +%s) - T0)) s"
F=/tmp/q/Q8_0.gguf
for r in 1 2 3; do
    echo "Q8_0 r$r [base] tg128: $(env_cell NVHCQ_X=0)"
    echo "Q8_0 r$r [dyn head] tg128: $(env_cell NVHCQ_MVQ_DYN=head)"
done 2>&1 | tee "$OUT/a_tg.txt"
{ profile_row build/nvhcq "$F" Q8_0 base
  NVHCQ_MVQ_DYN=head profile_row build/nvhcq "$F" Q8_0 "dyn head"; } >"$OUT/a_profile.txt" 2>&1
grep -E "profile|^\| mv norm\+output" "$OUT/a_profile.txt"
# the e2e tests' models have 2048-token vocabularies (no launch of >= 65536 rows: no head kind), so
# the check of the head on the dynamic kernel is greedy text on the 128k-row file both ways
for v in base head; do
    NVHCQ_MVQ_DYN=$([ $v = head ] && echo head || echo 0) timeout 60 build/nvhcq run -m "$F" \
        -p "Once upon a time" -n 96 --temp 0 --dev rm:0 >/tmp/run_$v.txt 2>/tmp/run_$v.err
    echo "run $v rc=$? $(wc -c </tmp/run_$v.txt) bytes"
done
cmp /tmp/run_base.txt /tmp/run_head.txt && echo "greedy 96 tokens: identical text, base vs dyn head"
cat /tmp/run_head.txt >"$OUT/a_run.txt"
NVHCQ_MVQ_DYN=head HCQ_TEST_DEVS='rm:0' timeout 150 build/tests/test_llm_e2e >"$OUT/a_e2e.txt" 2>&1
echo "test_llm_e2e NVHCQ_MVQ_DYN=head rm:0 rc=$? $(grep -E "FAIL|passed" "$OUT/a_e2e.txt" | head -5 | tr '\n' ' ')"
echo "== decode done $(($(date +%s) - T0)) s"
L="$OUT/a_lat.txt"
lat() { lat_run "$@" | grep -E "^\[|rror|FAIL| graph_300 "; } # NAME ENV...: lib.sh, the graph row
lat base NVHCQ_X=0
for f in FREE_CTA_SLOTS_EMPTY_SM=1 SEQUENTIALLY_RUN_CTAS=1 REQUIRE_SCHEDULING_PCAS=1 \
    ADD_TO_HEAD_OF_QMD_GROUP_LINKED_LIST=1 DEMOTE_L2_EVICT_LAST=1; do
    [ $(($(date +%s) - T0)) -gt 480 ] && break
    lat "$f" PB_QMD_FIELDS=$f
    lat base NVHCQ_X=0
done
dmesg | grep -E "NVRM: Xid" | tail -n 5 | cut -c1-300
echo "== end $(($(date +%s) - T0)) s"
