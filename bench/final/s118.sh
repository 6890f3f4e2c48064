#!/bin/bash
# s118.sh OUT - session 16 (either GPU; carry .llqb .commit; ~6 min): d2h = device -> host copies on a
# compute queue as the copy kernel on the main channel (PB_D2H=kernel) instead of the copy helper's
# copy engine - the decode step's 0.5 MB logits copy then chains after the output head with no
# cross-channel handovers. 1. hcq suite copy/graph tests and the LLM e2e suite with it on rm:0;
# 2. tg128 A/B alternating (base, d2h, lhost = NVHCQ_LOGITS=host: the head writes host memory)
# on Q8_0, Q6_K, Q4_K_M; 3. bench copy rm:0,cuda:0 base and d2h.
set -u
OUT=${1:?usage: s118.sh OUT}
mkdir -p "$OUT"
. bench/final/lib.sh
make -j16 CUARCH=90 >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/a_gpu.txt"
(quant_files Q8_0 Q6_K Q4_K_M >"$OUT/quant.log" 2>&1) &
QP=$!
PB_D2H=kernel timeout 150 build/tests/hcq_suite --dev rm:0 --klog copy graph >"$OUT/t_suite_d2h.txt" 2>&1
echo "hcq_suite copy graph (d2h) rc=$?"
PB_D2H=kernel HCQ_TEST_DEVS='rm:0' timeout 240 build/tests/test_llm_e2e >"$OUT/t_e2e_d2h.txt" 2>&1
echo "test_llm_e2e (d2h) rc=$?"
grep -hE "FAIL|passed" "$OUT"/t_*.txt | head -20
wait $QP
cat "$OUT/quant.log"
for r in 1 2; do for f in Q8_0 Q6_K Q4_K_M; do
    echo "$f r$r [base] tg128: $(tg_cell build/nvhcq /tmp/q/$f.gguf rm:0)"
    echo "$f r$r [d2h] tg128: $(PB_D2H=kernel tg_cell build/nvhcq /tmp/q/$f.gguf rm:0)"
    echo "$f r$r [lhost] tg128: $(NVHCQ_LOGITS=host tg_cell build/nvhcq /tmp/q/$f.gguf rm:0)"
done; done 2>&1 | tee "$OUT/a_tg.txt"
timeout 100 build/nvhcq bench copy --devs rm:0,cuda:0 >"$OUT/b_copy_base.txt" 2>&1
PB_D2H=kernel timeout 100 build/nvhcq bench copy --devs rm:0,cuda:0 >"$OUT/b_copy_d2h.txt" 2>&1
grep -h "d2h" "$OUT"/b_copy_base.txt | sed 's/^/base /'
grep -h "d2h" "$OUT"/b_copy_d2h.txt | sed 's/^/d2h  /'
echo "== end $(($(date +%s) - T0)) s"
