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
qmd_scan || exit 1
L="$OUT/a_lat.txt"
export LAT_DEVS=rm:0,cuda:0
lat_run "fit" | grep -v -E "copy_to|signal"
lat_run "0" PB_QMD_FREE_CTA_SLOTS=0 | grep -E "graph_300|dep_chain"
lat_run "fit2" | grep -E "graph_300|dep_chain|launch_sync"
suite_graphs
copy_alloc_h200 150
call_end
} 2>&1 | tee "$OUT/a_s164.txt"
