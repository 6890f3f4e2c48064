#!/bin/bash
# s169.sh OUT - session 23 (ask for an H200; carry .commit; ~3.5 min). On an H200 first s164.sh.
# Then (either GPU): `bench latency` with launch_sync's new 1.5 s warm-up against
# HCQ_BENCH_WARM_MS=0 (the old 20 rounds), alternating, each after 8 s idle; and where the
# ~2.1 us of host time in a launch + sync's submit goes: a variant with time points in
# pb_queue_submit / pb_queue_flush / pb_chan_kick / rm_chan_kick (patches/s169-submit-timing.patch,
# printed at exit) under tests/hw/launch_split.c after a 1.5 s ramp.
set -u
OUT=${1:?usage: s169.sh OUT}
mkdir -p "$OUT"
export T0=$(date +%s)
. bench/final/lib.sh
{
call_build || exit 1
h200_s164
variant_build tim "$PWD/bench/final/patches/s169-submit-timing.patch" || echo "variant failed"
LS_OUT=build/launch_split_tim launch_split_build /tmp/v_tim/build/libnvhcq.a && for r in 1 2; do
    LAUNCH_SPLIT_RAMP=1500 timeout 60 build/launch_split_tim rm:0 20000 2>&1 | grep -v "^ramp" | tr -s ' '
done
L="$OUT/a_lat.txt"
export LAT_DEVS=rm:0,cuda:0
for r in 1 2; do
    sleep 8
    lat_run "warm1500" | grep -E "launch_sync"
    sleep 8
    lat_run "warm0" HCQ_BENCH_WARM_MS=0 | grep -E "launch_sync"
done
call_end
} 2>&1 | tee "$OUT/a_s169.txt"
