#!/bin/bash
# s136.sh OUT - session 18 (either GPU; carry .commit; <= 9.8 min): the whole `make test-gpu` at the
# session's tree (not run whole since session 16: session 17 added the local-memory and thread
# tests; this session the new Q4_0 / Q6_K defaults and the shared stack hash), built first with
# -j16; run_all.sh prints each suite's seconds. The node-based vocabulary suites are skipped (no
# node on the GPU machine; CI runs them). S136_LIMIT_S (default 570) is the call's seconds the
# build and the suites share (s179.sh: 595).
set -u
out=${1:?usage: s136.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/a_gpu.txt"
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
echo "built ($(($(date +%s) - t0)) s)"
SKIP_SUITES="llama3_vocab qwen2_vocab command_r_vocab" timeout $((${S136_LIMIT_S:-570} - ($(date +%s) - t0))) make test-gpu CUARCH=90 >"$out/a_test_gpu.txt" 2>&1
echo "make test-gpu rc=$?"
grep -E "FAIL|^total|crashed" "$out/a_test_gpu.txt" | tail -12
grep -E "^\(took" "$out/a_test_gpu.txt" | sort -t' ' -k2 -n -r | head -8
echo "== end $(($(date +%s) - t0)) s"
