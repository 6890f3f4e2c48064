#!/bin/bash
# s162.sh OUT - session 22 (for an H200; carry .commit; ~3 min): issue 13's H200 rows at the fit
# default - `bench latency --devs rm:0,cuda:0` under the default and PB_QMD_FREE_CTA_SLOTS=0,
# the suite's exec_update / graphs (variable grids exercised for real since c2a79dd) on rm:0
# and cuda:0, then `bench copy alloc --devs rm:0,cuda:0` on an H200 (its copy / alloc rows were wave 1's).
set -u
OUT=${1:?usage: s162.sh OUT}
mkdir -p "$OUT"
export T0=$(date +%s)
. bench/final/lib.sh
{
call_build || exit 1
L="$OUT/a_lat.txt"
export LAT_DEVS=rm:0,cuda:0
lat_run "fit" | grep -v -E "copy_to|signal"
lat_run "0" PB_QMD_FREE_CTA_SLOTS=0 | grep -E "graph_300|dep_chain"
suite_graphs
copy_alloc_h200 150
call_end
} 2>&1 | tee "$OUT/a_s162.txt"
