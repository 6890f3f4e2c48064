#!/bin/bash
# s173.sh OUT - session 23 (ask for an H200; carry .commit; ~2.5 min). On an H200 s164.sh first.
# Then the WFI before a launch after work the host has seen complete: default vs
# PB_IDLE_SKIP_WFI=1, `bench latency --devs rm:0` and launch_split, alternating, two rounds; the
# HCQ suite on rm:0 under the switch. Ran at 75821f5 (slower: not kept); the switch was then
# removed - its code is patches/s173-idle-skip-wfi.patch (apply with lib.sh variant_build to rerun).
set -u
OUT=${1:?usage: s173.sh OUT}
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
    lat_run "wfi" | grep -E "launch_sync|back_to_back"
    lat_run "skip" PB_IDLE_SKIP_WFI=1 | grep -E "launch_sync|back_to_back"
    split_plain wfi
    split_plain skip PB_IDLE_SKIP_WFI=1
done
PB_IDLE_SKIP_WFI=1 timeout 200 build/tests/hcq_suite --dev rm:0 --klog >"$OUT/a_suite.txt" 2>&1
echo "hcq_suite rm:0 PB_IDLE_SKIP_WFI=1 rc=$? $(grep -E "FAIL" "$OUT/a_suite.txt" | head -5 | tr '\n' ' ') $(tail -1 "$OUT/a_suite.txt")"
call_end
} 2>&1 | tee "$OUT/a_s173.txt"
