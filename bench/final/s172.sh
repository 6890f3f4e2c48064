#!/bin/bash
# s172.sh OUT - session 23 (ask for an H200; carry .commit; ~4 min). On an H200 s164.sh first.
# Then: cbuf0 built in CPU memory and copied once (PB_CBUF0_SCRATCH=1) against built in the
# ring through BAR1 (default): `bench latency --devs rm:0` and launch_split, alternating, two
# rounds; the whole HCQ suite on rm:0 under each (the default now also has pb_qmd_set's
# 16-entry cache: every PDL link goes through it).
set -u
OUT=${1:?usage: s172.sh OUT}
mkdir -p "$OUT"
export T0=$(date +%s)
. bench/final/lib.sh
{
call_build || exit 1
h200_s164
launch_split_build || exit 1
L="$OUT/a_lat.txt"
export LAT_DEVS=rm:0
for r in 1 2; do
    lat_run "direct" | grep -E "launch_sync|back_to_back|graph_300|pdl"
    lat_run "scratch" PB_CBUF0_SCRATCH=1 | grep -E "launch_sync|back_to_back|graph_300|pdl"
    split_plain direct
    split_plain scratch PB_CBUF0_SCRATCH=1
done
for v in 0 1; do
    PB_CBUF0_SCRATCH=$v timeout 200 build/tests/hcq_suite --dev rm:0 --klog >"$OUT/a_suite_$v.txt" 2>&1
    echo "hcq_suite rm:0 PB_CBUF0_SCRATCH=$v rc=$? $(grep -E "FAIL" "$OUT/a_suite_$v.txt" | head -5 | tr '\n' ' ') $(tail -1 "$OUT/a_suite_$v.txt")"
done
call_end
} 2>&1 | tee "$OUT/a_s172.txt"
