#!/bin/bash
# s84.sh OUT - session 12's last tree: the whole `make test-gpu` with nothing else running
# (timeout 540 s), either GPU. ~8 min.
set -u
out=${1:?usage: s84.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/a_gpu.txt"
SKIP_SUITES="llama3_vocab qwen2_vocab command_r_vocab" timeout 540 make test-gpu CUARCH=90 >"$out/a_test_gpu.txt" 2>&1
echo "make test-gpu rc=$?"
grep -E "FAIL|^total" "$out/a_test_gpu.txt" | tail -8
echo "== end $(($(date +%s) - t0)) s"
