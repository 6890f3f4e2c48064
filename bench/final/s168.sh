#!/bin/bash
# s168.sh OUT - session 23 (either GPU; carry .commit; ~3 min): how long an idle GPU takes to
# reach its steady launch + sync (tests/hw/launch_split.c LAUNCH_SPLIT_RAMP: median of each
# 50 ms from a process's first launch, rm:0 then cuda:0, each after 10 s idle), then `bench
# latency` with the new 300 ms warm-up of its launch_sync row against HCQ_BENCH_WARM_MS=0 (the
# old 20 rounds), alternating, each after 8 s idle.
set -u
OUT=${1:?usage: s168.sh OUT}
mkdir -p "$OUT"
export T0=$(date +%s)
. bench/final/lib.sh
{
call_build || exit 1
cc -O2 -std=c11 -D_GNU_SOURCE -Iinclude -Isrc/kernels tests/hw/launch_split.c build/libnvhcq.a -ldl -lm -lpthread \
    -o build/launch_split || exit 1
for d in rm:0 cuda:0; do
    sleep 10
    LAUNCH_SPLIT_RAMP=3000 timeout 60 build/launch_split $d 2000 2>&1 | cut -c1-1500
done
L="$OUT/a_lat.txt"
export LAT_DEVS=rm:0,cuda:0
for r in 1 2; do
    sleep 8
    lat_run "warm300" | grep -E "launch_sync"
    sleep 8
    lat_run "warm0" HCQ_BENCH_WARM_MS=0 | grep -E "launch_sync"
done
call_end
} 2>&1 | tee "$OUT/a_s168.txt"
