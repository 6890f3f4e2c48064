#!/bin/bash
# s109.sh OUT - session 15 (ask nvidia-h200; carry .anchor .commit): on an H200 the H200 evidence
# (s86.sh); on an H100 the whole `make test-gpu` on the session's tree, every line stamped with
# the seconds since the start (which suites outgrow one call), cut at 575 s. The hcq suite's
# kernel checks open a device once per test since this session (on cuda:0 the suite took 153 s in
# session 12's s84).
set -u
OUT=${1:?usage: s109.sh OUT}
mkdir -p "$OUT"
g=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "gpu: $g"
case "$g" in *H200*) exec bash bench/final/s86.sh "$OUT" ;; esac
T0=$(date +%s)
[ -f .commit ] && export NVHCQ_COMMIT=$(cut -c1-10 .commit)
make -j16 CUARCH=90 >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/a_gpu.txt"
timeout 575 make test-gpu CUARCH=90 2>&1 | while IFS= read -r l; do echo "$(($(date +%s) - T0)) $l"; done >"$OUT/a_test_gpu.txt"
echo "make test-gpu: $(tail -1 "$OUT/a_test_gpu.txt")"
grep -E "FAIL|^[0-9]+ total|crashed" "$OUT/a_test_gpu.txt" | tail -12
echo "-- suite summaries (seconds since start)"
grep -E "^[0-9]+ [^ ]+: [0-9]+ passed" "$OUT/a_test_gpu.txt" | tail -60
echo "-- slow tests"
grep -E "\(slow, " "$OUT/a_test_gpu.txt" | tail -40
echo "== end $(($(date +%s) - T0)) s"
