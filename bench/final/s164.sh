#!/bin/bash
# s164.sh OUT - session 23 (ask for an H200; carry .commit; ~4 min): s163's CUDA graph QMD scan
# and s162's latency rows / suite / H200 copy+alloc in one call (session 22 got no H200 at all,
# so each H200 call has to carry everything issue 13 still needs there).
set -u
OUT=${1:?usage: s164.sh OUT}
mkdir -p "$OUT"
export T0=$(date +%s)
. bench/final/lib.sh
{
call_build || exit 1
cc -O2 -std=c11 -D_GNU_SOURCE -Iinclude -Isrc/kernels -Isrc/gpu -Isrc/util tests/hw/cuda_qmd_scan.c \
    build/libnvhcq.a -ldl -lm -lpthread -o build/cuda_qmd_scan || exit 1
timeout 120 build/cuda_qmd_scan cuda:0 >"$OUT/a_scan.txt" 2>&1
echo "scan rc=$? $(tail -1 "$OUT/a_scan.txt")"
grep -E "^== QMD|FREE_CTA|DEPENDEN|MEMBAR|PREFETCH|GROUP|PRIORITY|QUEUE|OCCUPANCY|unnamed" "$OUT/a_scan.txt" | head -80
L="$OUT/a_lat.txt"
export LAT_DEVS=rm:0,cuda:0
lat_run "fit" | grep -v -E "copy_to|signal"
lat_run "0" PB_QMD_FREE_CTA_SLOTS=0 | grep -E "graph_300|dep_chain"
lat_run "fit2" | grep -E "graph_300|dep_chain|launch_sync"
for d in rm:0 cuda:0; do
    timeout 60 build/tests/hcq_suite --dev $d --klog exec_update graphs >/tmp/g.txt 2>&1
    echo "suite $d exec_update graphs rc=$? $(grep -E "FAIL|passed" /tmp/g.txt | tr '\n' ' ' | cut -c1-200)"
done
copy_alloc_h200 150
call_end
} 2>&1 | tee "$OUT/a_s164.txt"
