#!/bin/bash
# s117.sh OUT - session 16 (either GPU; carry .llqb .commit; ~5 min): x2w2 = the two-group mat-vec
# kernels (every Q8_0 launch, Q4_0's but gate|up) with a second unit requested before the PDL wait
# (NVHCQ_MVQ_X2W2=1; s116's fused attention + O profile showed gate|up 15.46 -> 14.44 us when its
# CTAs had longer to load before the wait). test_llm_matvec on rm:0 / cuda:0, tg128 A/B alternating
# on Q8_0 and Q4_0 (3 rounds), one-step profiles.
set -u
OUT=${1:?usage: s117.sh OUT}
mkdir -p "$OUT"
. bench/final/lib.sh
make -j16 CUARCH=90 >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/a_gpu.txt"
(quant_files Q8_0 Q4_0 >"$OUT/quant.log" 2>&1) &
QP=$!
HCQ_TEST_DEVS='rm:0 cuda:0' timeout 200 build/tests/test_llm_matvec >"$OUT/t_matvec.txt" 2>&1
echo "test_llm_matvec rc=$?"
grep -hE "FAIL|passed|x2" "$OUT"/t_*.txt | head -20
wait $QP
cat "$OUT/quant.log"
for r in 1 2 3; do for f in Q8_0 Q4_0; do
    echo "$f r$r [base] tg128: $(tg_cell build/nvhcq /tmp/q/$f.gguf rm:0)"
    echo "$f r$r [x2w2] tg128: $(NVHCQ_MVQ_X2W2=1 tg_cell build/nvhcq /tmp/q/$f.gguf rm:0)"
done; done 2>&1 | tee "$OUT/a_tg.txt"
profile_row build/nvhcq /tmp/q/Q8_0.gguf Q8_0 base | tee "$OUT/a_prof.txt"
NVHCQ_MVQ_X2W2=1 profile_row build/nvhcq /tmp/q/Q8_0.gguf Q8_0 x2w2 | tee -a "$OUT/a_prof.txt"
echo "== end $(($(date +%s) - T0)) s"
