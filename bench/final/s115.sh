#!/bin/bash
# s115.sh OUT - session 15's last call (ask nvidia-h200, either GPU; carry .commit; ~8 min): the whole
# `make test-gpu` on the final code (the copy helper's handover skip on by default since 8c9b06f),
# every line stamped with its second, the three node-based vocabulary suites skipped
# (SKIP_SUITES: the GPU machine has no node; s109 showed them failing for that alone).
set -u
OUT=${1:?usage: s115.sh OUT}
mkdir -p "$OUT"
g=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "gpu: $g"
T0=$(date +%s)
[ -f .commit ] && export NVHCQ_COMMIT=$(cut -c1-10 .commit)
make -j16 CUARCH=90 >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/a_gpu.txt"
SKIP_SUITES="llama3_vocab qwen2_vocab command_r_vocab" timeout 575 make test-gpu CUARCH=90 2>&1 | while IFS= read -r l; do echo "$(($(date +%s) - T0)) $l"; done >"$OUT/a_test_gpu.txt"
echo "make test-gpu: $(tail -1 "$OUT/a_test_gpu.txt")"
grep -E "FAIL|^[0-9]+ total|crashed" "$OUT/a_test_gpu.txt" | tail -12
echo "-- suite summaries (seconds since start)"
grep -E "^[0-9]+ [^ ]+: [0-9]+ passed" "$OUT/a_test_gpu.txt" | tail -60
echo "-- slow tests"
grep -E "\(slow, " "$OUT/a_test_gpu.txt" | tail -40
echo "== end $(($(date +%s) - T0)) s"
