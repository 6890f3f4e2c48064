#!/bin/bash
# s111.sh OUT - an H200 or nothing (ask nvidia-h200; carry .anchor .llqb .commit): on an H200 the
# H200 evidence of issues 11-13 (s86.sh: bench gemm latency, tg128, the same-file comparison on
# five types, pp2048); on an H100 it prints the GPU and stops (its rows are in s110).
set -u
OUT=${1:?usage: s111.sh OUT}
mkdir -p "$OUT"
g=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "gpu: $g"
case "$g" in *H200*) exec bash bench/final/s86.sh "$OUT" ;; esac
echo "not an H200: nothing run"
