#!/bin/bash
# s106.sh OUT - **the next session's first call** (either GPU; carry .llqb .commit; ~6 min).
# 1. Session 14's last tree (s105's content, refused for device time): the LLM GPU tests on rm:0 and
#    cuda:0 (c693f1b folded the Q4_KR / Q5_KR repack parts into one case - host code, checked value
#    by value on the CPU) and one tg128 cell per llama-quantize file.
# 2. dq = patches/s106-dq-q4kr-q5kr.patch (device code never run): the prefill's weight expansion
#    (k_llm_dequant_f16) on a task path for Q4_KR / Q5_KR - since session 14 those rows take the
#    per-value path (k_llm_dq_at) - with test_llm_dequant on rm:0 and cuda:0, pp512 A/B.
set -u
OUT=${1:?usage: s106.sh OUT}
mkdir -p "$OUT"
. bench/final/lib.sh
make -j16 CUARCH=90 >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
variant_build dq bench/final/patches/s106-dq-q4kr-q5kr.patch || exit 1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/a_gpu.txt"
quant_files Q4_K_M Q5_K_M Q8_0 Q4_0 Q6_K
for t in test_llm_e2e test_llm_real test_llm_matvec; do
    HCQ_TEST_DEVS='rm:0 cuda:0' timeout 150 build/tests/$t >"$OUT/t_$t.txt" 2>&1
    echo "$t rc=$?"
done
(cd /tmp/v_dq && HCQ_TEST_DEVS='rm:0 cuda:0' timeout 150 build/tests/test_llm_dequant) >"$OUT/t_dq_dequant.txt" 2>&1
echo "dq test_llm_dequant rc=$?"
echo "tests: $(grep -hE "FAIL|passed" "$OUT"/t_*.txt | tr '\n' ' ')" | tee "$OUT/a_tests.txt"
grep -h -A3 "FAIL" "$OUT"/t_*.txt | head -20
for f in Q4_K_M Q5_K_M Q8_0 Q4_0 Q6_K; do echo "$f [base] tg128: $(tg_cell build/nvhcq /tmp/q/$f.gguf rm:0)"; done 2>&1 | tee "$OUT/a_tg.txt"
pp_cell() { timeout 60 "$1" llm-bench -m "$2" -p 512 -n 0 -r 3 --dev rm:0 2>&1 | grep -E "pp|rror" | awk -F'|' '{printf "%s ", $(NF-1)}'; }
for r in 1 2; do for f in Q4_K_M Q5_K_M; do
    echo "$f r$r [base] pp512: $(pp_cell build/nvhcq /tmp/q/$f.gguf)"
    echo "$f r$r [dq] pp512: $(pp_cell /tmp/v_dq/build/nvhcq /tmp/q/$f.gguf)"
done; done 2>&1 | tee "$OUT/a_pp.txt"
echo "== end $(($(date +%s) - T0)) s"
