#!/bin/bash
# s116.sh OUT - session 16 (either GPU; carry .llqb .commit; ~8 min): the decode attention and the O
# projection as one launch (k_llm_attn_o.cu; engine switch NVHCQ_AO_MAX, default 0 = off in this
# tree). 1. its kernel test and the LLM e2e suite on rm:0 and cuda:0; 2. tg128 A/B on the five
# llama-quantize files, alternating: base (NVHCQ_AO_MAX=0), ao (256, fixed-order sums), red (256,
# NVHCQ_AO_DET=0: RED adds); 3. tg128 at depth 128 (positions 128..255: the fused launch's
# repeated attention at its longest) for Q8_0; 4. one-step profiles of Q8_0 base / ao.
set -u
OUT=${1:?usage: s116.sh OUT}
mkdir -p "$OUT"
. bench/final/lib.sh
make -j16 CUARCH=90 >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/a_gpu.txt"
(quant_files Q4_K_M Q5_K_M Q8_0 Q4_0 Q6_K >"$OUT/quant.log" 2>&1) &
QP=$!
HCQ_TEST_DEVS='rm:0 cuda:0' timeout 150 build/tests/test_llm_attn_o >"$OUT/t_attn_o.txt" 2>&1
echo "test_llm_attn_o rc=$?"
HCQ_TEST_DEVS='rm:0 cuda:0' timeout 240 build/tests/test_llm_e2e >"$OUT/t_e2e.txt" 2>&1
echo "test_llm_e2e rc=$?"
grep -hE "FAIL|passed|outside the bound|AO_" "$OUT"/t_*.txt | head -40
wait $QP
cat "$OUT/quant.log"
for r in 1 2; do for f in Q8_0 Q4_K_M Q6_K Q4_0 Q5_K_M; do
    echo "$f r$r [base] tg128: $(NVHCQ_AO_MAX=0 tg_cell build/nvhcq /tmp/q/$f.gguf rm:0)"
    echo "$f r$r [ao] tg128: $(NVHCQ_AO_MAX=256 tg_cell build/nvhcq /tmp/q/$f.gguf rm:0)"
    echo "$f r$r [red] tg128: $(NVHCQ_AO_MAX=256 NVHCQ_AO_DET=0 tg_cell build/nvhcq /tmp/q/$f.gguf rm:0)"
done; done 2>&1 | tee "$OUT/a_tg.txt"
d128() { timeout 90 build/nvhcq llm-bench -m /tmp/q/Q8_0.gguf -p 0 -n 128 -d 128 -r 3 --dev rm:0 2>&1 | grep -E "tg|rror" | awk -F'|' '{printf "%s ", $(NF-1)}'; }
for r in 1 2; do
    echo "Q8_0 d128 r$r [base] tg128: $(NVHCQ_AO_MAX=0 d128)"
    echo "Q8_0 d128 r$r [ao] tg128: $(NVHCQ_AO_MAX=256 d128)"
done 2>&1 | tee "$OUT/a_d128.txt"
NVHCQ_AO_MAX=0 profile_row build/nvhcq /tmp/q/Q8_0.gguf Q8_0 base | tee "$OUT/a_prof.txt"
NVHCQ_AO_MAX=256 profile_row build/nvhcq /tmp/q/Q8_0.gguf Q8_0 ao | tee -a "$OUT/a_prof.txt"
echo "== end $(($(date +%s) - T0)) s"
