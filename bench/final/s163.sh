#!/bin/bash
# s163.sh OUT - prepared in session 22, not yet run (ask for an H200; on an H100 too, for the
# comparison; carry .commit; ~2 min). Issue 13's H200 graph row: CUDA's graphs of empty kernels run
# 0.58 us/kernel on H200 and 0.81 on H100 while ours run 0.375 on both (0.65x of CUDA on H200
# against the 0.5x goal). tests/hw/cuda_qmd_scan.c now also records a CUDA graph of two launches
# (E, F) and searches this process's memory for their QMDs: what fields CUDA's graph kernel nodes
# carry on this GPU (FREE_CTA_SLOTS_EMPTY_SM, dependence, prefetch, membar...). Then the latency
# rows rm:0 / cuda:0 at the default, for the same machine.
set -u
OUT=${1:?usage: s163.sh OUT}
mkdir -p "$OUT"
export T0=$(date +%s)
. bench/final/lib.sh
{
call_build || exit 1
qmd_scan || exit 1
HCQ_QMD_SCAN_DEV=1 timeout 120 build/cuda_qmd_scan cuda:0 >"$OUT/a_scan_dev.txt" 2>&1
echo "scan with device mappings rc=$? $(tail -1 "$OUT/a_scan_dev.txt")"
grep -E "^== QMD.*graph" "$OUT/a_scan_dev.txt" | head
L="$OUT/a_lat.txt"
LAT_DEVS=rm:0,cuda:0 lat_run "default" | grep -E "graph_300|dep_chain|launch_sync"
call_end
} 2>&1 | tee "$OUT/a_s163.txt"
