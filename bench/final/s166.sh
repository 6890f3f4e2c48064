#!/bin/bash
# s166.sh OUT - session 23 (either GPU; carry .commit; ~2.5 min): where launch + sync's ~4.4-5.0 us
# go on rm:0 (issue 13: <= 5 us on H100), by tests/hw/launch_split.c - record / submit / wait
# host times, and a stamped pass whose device timestamps split the wait into GPU time and the
# way there and back - at the default and under the existing A/B switches, two rounds each,
# alternating; cuda:0's record / submit / wait beside them. On an H200, s164.sh first.
set -u
OUT=${1:?usage: s166.sh OUT}
mkdir -p "$OUT"
export T0=$(date +%s)
. bench/final/lib.sh
{
call_build || exit 1
h200_s164
launch_split_build || exit 1
split() { # NAME VAR=V...
    local n=$1
    shift
    env "$@" timeout 60 build/launch_split "${DEV:-rm:0}" 3000 2>&1 | sed "s/^launch_split /[$n] /" | tr -s ' '
}
for r in 1 2; do
    split default
    split end_membar0 PB_QMD_END_MEMBAR=0
    split pb_release PB_END_QMD_RELEASE=0
    split stream_sysmem PB_STREAM_MEM=sysmem
    split gpget_first PB_GPGET_READ=1
    split no_chain_inval PB_CHAIN_INVALIDATE=0
    split fcs0 PB_QMD_FREE_CTA_SLOTS=0
    DEV=cuda:0 split cuda
done
call_end
} 2>&1 | tee "$OUT/a_s166.txt"
