#!/bin/bash
# s175.sh OUT - session 24 (ask for an H200; carry .commit): on an H200, s164.sh (CUDA graph QMD
# scan, latency rows, suite graphs, copy + alloc: the H200 half of issue 13); on any other card
# (every H200 request of sessions 22-23 got an H100), s136.sh - the whole `make test-gpu`, not run
# whole since session 23's cbuf0 change - so the call is not wasted.
set -u
OUT=${1:?usage: s175.sh OUT}
mkdir -p "$OUT"
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
    echo "H200: s164"; bash bench/final/s164.sh "$OUT"
else
    echo "not an H200: s136 (make test-gpu)"; bash bench/final/s136.sh "$OUT" 2>&1 | tee "$OUT/a_s136.txt"
fi
