#!/bin/bash
# s104.sh OUT - session 14's last kernel defaults against llama.cpp on the same files (either GPU;
# carry .anchor .llqb .commit; ~7 min): K_LLM_MVQ_X2_DEFAULT 0xC080C (every Q8_0 launch, Q4_0's all
# but gate|up on the two-groups-per-task kernels, from s103's A/B). LLM GPU tests on rm:0 and cuda:0
# while llama.cpp compiles, then tg128 / pp512 on five types (REPS 3).
set -u
OUT=${1:?usage: s104.sh OUT}
mkdir -p "$OUT"
. bench/final/lib.sh
ll_build_bg
make -j16 CUARCH=90 >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/a_gpu.txt"
for t in test_llm_matvec test_llm_e2e test_llm_real; do
    HCQ_TEST_DEVS='rm:0 cuda:0' timeout 150 build/tests/$t >"$OUT/t_$t.txt" 2>&1
    echo "$t rc=$?"
done
echo "tests: $(grep -hE "FAIL|passed" "$OUT"/t_*.txt | tr '\n' ' ')" | tee "$OUT/a_tests.txt"
grep -h -A3 "FAIL" "$OUT"/t_*.txt | head -20
ll_wait || exit 1
c=$(cat .commit)
TYPES="Q8_0 Q4_0 Q4_K_M Q6_K Q5_K_M" REPS=3 vs_run build/nvhcq /tmp/vs "$c"
grep -E "tg128|pp512" "$OUT/a_vs.md"
echo "== end $(($(date +%s) - T0)) s"
