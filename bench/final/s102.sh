#!/bin/bash
# s102.sh OUT - session 14's last tree against llama.cpp on the same files (either GPU; carry .anchor
# .llqb .commit; ~9 min): while llama.cpp's CUDA build runs, the LLM GPU tests (rm:0, cuda:0) and
# gen-model tg128 rows (CPU busy: indicative); then the same-file comparison on five types (tg128,
# pp512; REPS 3) and pp2048 on three types last (its own timeout).
set -u
OUT=${1:?usage: s102.sh OUT}
mkdir -p "$OUT"
. bench/final/lib.sh
ll_build_bg
make -j16 CUARCH=90 >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/a_gpu.txt"
for t in test_llm_matvec test_llm_e2e test_llm_real test_llm_attn_decode test_llm_dequant; do
    HCQ_TEST_DEVS='rm:0 cuda:0' timeout 150 build/tests/$t >"$OUT/t_$t.txt" 2>&1
    echo "$t rc=$?"
done
echo "tests: $(grep -hE "FAIL|passed" "$OUT"/t_*.txt | tr '\n' ' ')" | tee "$OUT/a_tests.txt"
grep -h -A3 "FAIL" "$OUT"/t_*.txt | head -20
gen_models q6_k q8_0 q4_k q5_k
for ty in q6_k q8_0 q4_k q5_k; do for d in rm:0 cuda:0; do
    echo "$ty [$d] tg128 (llama.cpp compiling): $(tg_cell build/nvhcq /tmp/m_$ty.gguf $d)"
done; done 2>&1 | tee "$OUT/a_tg_gen.txt"
ll_wait || exit 1
c=$(cat .commit)
TYPES="Q4_K_M Q6_K Q8_0 Q4_0 Q5_K_M" REPS=3 vs_run build/nvhcq /tmp/vs "$c"
grep -E "tg128|pp512" "$OUT/a_vs.md"
echo "== before pp2048 $(($(date +%s) - T0)) s"
mkdir -p /tmp/vs2048 && ln -sfn /tmp/vs/models /tmp/vs2048/models
TYPES="Q4_K_M Q5_K_M Q8_0" REPS=2 PP=2048 TG=0 VS_TIMEOUT=80 vs_run build/nvhcq /tmp/vs2048 "$c"
grep -E "pp2048" "$OUT/a_vs2048.md"
echo "== end $(($(date +%s) - T0)) s"
