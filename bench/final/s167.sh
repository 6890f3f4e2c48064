#!/bin/bash
# s167.sh OUT - session 23 (either GPU; carry .commit; ~2.5 min): s166 again after a warm-up
# (s166's first round ran with the GPU still slow: one stamped empty launch 6.5 us of GPU time
# in round 1, 2.4 in round 2), 20000 rounds each, plus what the CPU pays to write through the
# BAR1 mapping (LAUNCH_SPLIT_MAP=1: s166 showed submit at 2.3-3.3 us of host time, most of a
# launch + sync) and how the machine's page attribute table and the driver map BAR memory.
set -u
OUT=${1:?usage: s167.sh OUT}
mkdir -p "$OUT"
export T0=$(date +%s)
. bench/final/lib.sh
{
call_build || exit 1
h200_s164
launch_split_build || exit 1
echo "cpu pat flag: $(grep -o -w pat /proc/cpuinfo | head -1) ; cmdline: $(cat /proc/cmdline | cut -c1-200)"
grep -i -E "PAT|WriteComb|Cache" /proc/driver/nvidia/params 2>/dev/null | tr '\n' ' '; echo
dmesg | grep -i -E "x86/PAT|PAT config|mtrr|write-comb|NVRM.*PAT" | head -8 | cut -c1-200
mount -t debugfs none /sys/kernel/debug 2>/dev/null
f=/sys/kernel/debug/x86/pat_memtype_list
[ -r $f ] && { echo "pat_memtype_list: $(wc -l <$f) lines"; awk '{print $1}' $f | sort | uniq -c; } || echo "no $f"
lspci -vv -d 10de: 2>/dev/null | grep -E "Region|Memory at" | head -6
timeout 60 build/nvhcq bench latency --devs rm:0 >/dev/null 2>&1 # warm-up
split() { # NAME VAR=V...
    local n=$1
    shift
    env "$@" timeout 60 build/launch_split "${DEV:-rm:0}" 20000 2>&1 | sed "s/^launch_split /[$n] /" | tr -s ' '
}
LAUNCH_SPLIT_MAP=1 split map
for r in 1 2 3; do
    split default
    split end_membar0 PB_QMD_END_MEMBAR=0
    split gpget_first PB_GPGET_READ=1
    DEV=cuda:0 split cuda
done
call_end
} 2>&1 | tee "$OUT/a_s167.txt"
