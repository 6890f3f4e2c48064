#!/bin/bash
# s107.sh OUT - session 15's first call (ask nvidia-h200; carry .anchor .llqb .commit): on an H200
# it runs s86.sh (the H200 evidence issues 11-13 lack: bench gemm latency, tg128, the same-file
# comparison on five types, pp2048), on an H100 s106.sh (the final tree's LLM GPU tests and tg128
# cells, and the Q4_KR / Q5_KR task-path dequant A/B). Which GPU came is the first line.
set -u
OUT=${1:?usage: s107.sh OUT}
mkdir -p "$OUT"
g=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "gpu: $g"
case "$g" in
*H200*) exec bash bench/final/s86.sh "$OUT" ;;
*) exec bash bench/final/s106.sh "$OUT" ;;
esac
