#!/bin/bash
# s179.sh OUT - session 24 (either GPU; carry .commit; <= 9.9 min): the whole `make test-gpu`, as
# s136.sh, but the suites get 595 s less the build (s136 gave them 570 less the build, and s175
# was cut at 516 s on a slower H100; test_llm_matvec has since lost ~40 s). Built first with -j16;
# run_all.sh prints each suite's seconds. The node-based vocabulary suites are skipped (no node on
# the GPU machine; CI runs them).
set -u
out=${1:?usage: s179.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/a_gpu.txt"
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
echo "built ($(($(date +%s) - t0)) s)"
SKIP_SUITES="llama3_vocab qwen2_vocab command_r_vocab" timeout $((595 - ($(date +%s) - t0))) make test-gpu CUARCH=90 >"$out/a_test_gpu.txt" 2>&1
echo "make test-gpu rc=$?"
grep -E "FAIL|^total|crashed" "$out/a_test_gpu.txt" | tail -12
grep -E "^\(took" "$out/a_test_gpu.txt" | sort -t' ' -k2 -n -r | head -8
echo "== end $(($(date +%s) - t0)) s"
