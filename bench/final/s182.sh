#!/bin/bash
# s182.sh OUT - session 24 (ask for an H200; carry .commit): on an H200, s164.sh. On any other
# card: the driver's allocation path (a size class's first allocation; 1.1-111x CUDA's time when
# last timed, before the pool): `bench alloc` with the new _cold rows on rm:0 and cuda:0, then
# rm:0 alone under HCQ_DEBUG=ioctl (every RM / UVM call logged with its duration), summed per
# call and the slowest calls listed.
set -u
OUT=${1:?usage: s182.sh OUT}
mkdir -p "$OUT"
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
    echo "H200: s164"; bash bench/final/s164.sh "$OUT"; exit
fi
export T0=$(date +%s)
. bench/final/lib.sh
{
echo "not an H200: the allocation path"
call_build || exit 1
timeout 150 build/nvhcq bench alloc --devs rm:0,cuda:0 --json "$OUT/a_alloc.json" 2>&1 | grep -E "^alloc|rror"
HCQ_DEBUG=ioctl HCQ_LOG=debug timeout 120 build/nvhcq bench alloc --devs rm:0 > "$OUT/alloc_dbg_rows.txt" 2> "$OUT/alloc_ioctl.log"
grep -E "^alloc" "$OUT/alloc_dbg_rows.txt" | sed 's/^/[ioctl-logged] /'
echo "== per call (count, total ms, mean us, max us):"
grep -E " in [0-9.]+ us$" "$OUT/alloc_ioctl.log" | sed -E 's/.*\(([A-Z_0-9]+)\).* in ([0-9.]+) us$/\1 \2/; s/.*(NV_ESC_RM_FREE|NV_ESC_RM_UNMAP_MEMORY_DMA).* in ([0-9.]+) us$/\1 \2/; s/.*NV_ESC_RM_CONTROL ([A-Z_0-9]+).* in ([0-9.]+) us$/CTRL_\1 \2/' |
    awk '{n[$1]++; s[$1]+=$2; if ($2>m[$1]) m[$1]=$2} END {for (k in n) printf "%-40s %7d %10.1f %9.1f %9.1f\n", k, n[k], s[k]/1e3, s[k]/n[k], m[k]}' | sort -k3 -n -r | head -20
echo "== slowest 15 calls:"
grep -E " in [0-9.]+ us$" "$OUT/alloc_ioctl.log" | awk '{print $NF-0, $0}' FS=" in " | sort -n -r | head -15 | cut -c1-200
gzip -f "$OUT/alloc_ioctl.log"
call_end
} 2>&1 | tee "$OUT/a_s182.txt"
