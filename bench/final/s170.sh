#!/bin/bash
# s170.sh OUT - session 23 (ask for an H200; carry .commit; ~4 min). The QMD encode memo
# (pb_build.c pb_qmd_encode_memo: a launch described like the queue's last one reuses its
# encoding, only the cbuf0 address rewritten; callgrind on emu:gh100: a launch + sync's submit
# 5,350 -> 2,800 instructions): `bench latency --devs rm:0,cuda:0` under the default and
# PB_QMD_MEMO=0, alternating, two rounds; launch_split under both; the whole HCQ suite on rm:0
# with the kernel log checked; test_llm_e2e (decode on rm:0 / cuda:0). On an H200 s164.sh first.
set -u
OUT=${1:?usage: s170.sh OUT}
mkdir -p "$OUT"
export T0=$(date +%s)
. bench/final/lib.sh
{
call_build || exit 1
h200_s164
launch_split_build || exit 1
L="$OUT/a_lat.txt"
export LAT_DEVS=rm:0,cuda:0
for r in 1 2; do
    lat_run "memo" | grep -v -E "copy_to|signal|cuda:0  *(dep|graph)"
    lat_run "nomemo" PB_QMD_MEMO=0 | grep -v -E "copy_to|signal|cuda:0"
done
for r in 1 2; do
    split_plain memo LAUNCH_SPLIT_RAMP=1200
    split_plain nomemo LAUNCH_SPLIT_RAMP=1200 PB_QMD_MEMO=0
done
timeout 200 build/tests/hcq_suite --dev rm:0 --klog >"$OUT/a_suite_rm.txt" 2>&1
echo "hcq_suite rm:0 rc=$? $(grep -E "FAIL" "$OUT/a_suite_rm.txt" | head -5 | tr '\n' ' ') $(tail -1 "$OUT/a_suite_rm.txt")"
timeout 150 build/tests/test_llm_e2e >"$OUT/a_e2e.txt" 2>&1
echo "test_llm_e2e rc=$? $(grep -E "FAIL" "$OUT/a_e2e.txt" | head -3 | tr '\n' ' ') $(tail -1 "$OUT/a_e2e.txt")"
call_end
} 2>&1 | tee "$OUT/a_s170.txt"
