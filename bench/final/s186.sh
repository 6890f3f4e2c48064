#!/bin/bash
# s186.sh OUT - session 25 (ask for an H200; carry .commit): `nvhcq bench alloc` with the new
# _fresh rows (n live distinct buffers of 4 KiB .. 256 MiB, each allocation timed: what neither
# side's free list hides) on rm:0 and cuda:0, JSON; then the ioctl breakdown of rm:0's fresh
# 4 KiB / 64 KiB host and device rows. On an H200 s180.sh runs first (issue 13's H200 half).
set -u
OUT=${1:?usage: s186.sh OUT}
mkdir -p "$OUT"
. bench/final/lib.sh
h200_first
export T0=$(date +%s)
{
[ -x build/nvhcq ] || call_build || exit 1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 200 build/nvhcq bench alloc --devs rm:0,cuda:0 --json "$OUT/a_alloc.json" 2>&1 | grep -E "^alloc|rror"
HCQ_DEBUG=ioctl HCQ_LOG=debug timeout 60 stdbuf -oL -eL build/nvhcq bench alloc --quick --devs rm:0 >"$OUT/a_ioctl.txt" 2>&1
echo "ioctl log: $(wc -l <"$OUT/a_ioctl.txt") lines"
python3 - "$OUT/a_ioctl.txt" <<'PY'
import re, sys, statistics as S
# ioctl lines belong to the row printed after them
d = {}
for l in open(sys.argv[1]):
    m = re.search(r"\((\w+)\) -> .* in ([\d.]+) us", l)
    if m:
        d.setdefault(m.group(1), []).append(float(m.group(2)))
    elif l.startswith("alloc "):
        f = l.split()
        if "fresh" in f[1]:
            print(f"{f[1]} {f[2]} {f[3]}: " + ", ".join(f"{k} {len(v)}x {S.median(v):.1f}" for k, v in sorted(d.items())))
        d = {}
PY
call_end
} 2>&1 | tee "$OUT/a_s186.txt"
