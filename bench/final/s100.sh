#!/bin/bash
# s100.sh OUT - session 14 (either GPU; carry .llqb .commit; ~7 min). Two groups per task for Q4_0 and
# Q8_0 on the launches with the longest streams only (patches/s100-x2-q4_0-q8_0.patch, device code
# never run): k_llm_matvec_q8_q4_0x2 / _q8_0x2 (112 / 119 registers) for the FFN down projection
# (k 8192) and the output head; Q|K|V, O and gate|up keep their kernels. Why: s98's Q4_0 body of 64
# values on every launch lost 4-5% in all, but its down (6.74 -> 6.18 us) and head (79.0 -> 76.0)
# were faster while Q|K|V (4.56 -> 5.66), attention and gate|up were slower.
# NVHCQ_MVQ_X2=0 on the variant = its kernels unused (the base's launches). GPU tests, tg128
# alternating on Q8_0 and Q4_0 (llama-quantize), profiles.
set -u
OUT=${1:?usage: s100.sh OUT}
mkdir -p "$OUT"
. bench/final/lib.sh
make -j16 CUARCH=90 >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
variant_build x2 bench/final/patches/s100-x2-q4_0-q8_0.patch || exit 1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/a_gpu.txt"
quant_files Q8_0 Q4_0
for t in test_llm_matvec test_llm_e2e; do
    (cd /tmp/v_x2 && HCQ_TEST_DEVS='rm:0 cuda:0' timeout 150 build/tests/$t) >"$OUT/t_x2_$t.txt" 2>&1
    echo "x2 $t rc=$?"
done
echo "tests: $(grep -hE "FAIL|passed" "$OUT"/t_*.txt | tr '\n' ' ')" | tee "$OUT/a_tests.txt"
grep -h -A3 "FAIL" "$OUT"/t_*.txt | head -30
declare -A BIN=([base]=build/nvhcq [x2]=/tmp/v_x2/build/nvhcq [x2off]=/tmp/v_x2/build/nvhcq)
cell() { if [ "$1" = x2off ]; then NVHCQ_MVQ_X2=0 tg_cell ${BIN[$1]} "$2" rm:0; else tg_cell ${BIN[$1]} "$2" rm:0; fi; }
for r in 1 2 3; do
    for f in Q8_0 Q4_0; do for v in base x2 x2off; do
        [ $r = 3 ] && [ $v = x2off ] && continue
        echo "$f r$r [$v] tg128: $(cell $v /tmp/q/$f.gguf)"
    done; done
done 2>&1 | tee "$OUT/a_tg.txt"
for f in Q8_0 Q4_0; do for v in base x2; do profile_row ${BIN[$v]} /tmp/q/$f.gguf $f $v; done; done >"$OUT/a_profile.txt" 2>&1
grep -E "profile|tg128|mv |attn" "$OUT/a_profile.txt"
echo "== end $(($(date +%s) - T0)) s"
