#!/bin/bash
# s89.sh OUT - split pairs (q8_matvec_ks2) for more types (either GPU; carry .llqb .commit; ~6
# min). s87's profile: Q4_0's down projection streams 1.01 TB/s (9.3 us for 9.4 MB: one row of 8
# passes of 18 B per lane per warp, one pass in flight) - the most latency-bound launch of any
# type; split pairs (two warps per two rows, half the passes each) were measured on Q8_0 (+2.4%,
# kept), Q6_K and Q4_K (-1.5 / -1.7%, session 12) but never on Q4_0 or Q5_K. Variants:
# a = patches/s89-ks2-q4_0.patch, b = + Q5_K (-q4_0-q5k), c = + Q4_K (-q4_0-q5k-q4k). GPU tests of
# c (test_llm_matvec's k 8192 cases take the pair body on every such type), tg128 alternating on
# the llama-quantize Q4_0 (base, a), Q5_K_M (base, b) and Q4_K_M (base, c) files, profiles.
set -u
OUT=${1:?usage: s89.sh OUT}
mkdir -p "$OUT"
. bench/final/lib.sh
make -j16 CUARCH=90 >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
P=bench/final/patches
variant_build a $P/s89-ks2-q4_0.patch || exit 1
variant_build b $P/s89-ks2-q4_0-q5k.patch || exit 1
variant_build c $P/s89-ks2-q4_0-q5k-q4k.patch || exit 1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/a_gpu.txt"
quant_files Q4_0 Q5_K_M Q4_K_M
for t in test_llm_matvec test_llm_e2e; do
    (cd /tmp/v_c && HCQ_TEST_DEVS='rm:0 cuda:0' timeout 150 build/tests/$t) >"$OUT/t_$t.txt" 2>&1
    echo "c $t rc=$?"
done
echo "tests: $(grep -hE "FAIL|passed" "$OUT"/t_*.txt | tr '\n' ' ')" | tee "$OUT/a_tests.txt"
declare -A BIN=([base]=build/nvhcq [a]=/tmp/v_a/build/nvhcq [b]=/tmp/v_b/build/nvhcq [c]=/tmp/v_c/build/nvhcq)
for r in 1 2 3; do
    for v in base a; do echo "Q4_0 r$r [$v] tg128: $(tg_cell ${BIN[$v]} /tmp/q/Q4_0.gguf rm:0)"; done
    for v in base b; do echo "Q5_K_M r$r [$v] tg128: $(tg_cell ${BIN[$v]} /tmp/q/Q5_K_M.gguf rm:0)"; done
    for v in base c; do echo "Q4_K_M r$r [$v] tg128: $(tg_cell ${BIN[$v]} /tmp/q/Q4_K_M.gguf rm:0)"; done
done 2>&1 | tee "$OUT/a_tg.txt"
for pv in "Q4_0 base" "Q4_0 a" "Q5_K_M base" "Q5_K_M b" "Q4_K_M c"; do
    set -- $pv
    echo "-- profile $1 [$2]"
    timeout 60 ${BIN[$2]} llm-bench -m /tmp/q/$1.gguf -p 0 -n 128 -r 1 --profile --dev rm:0 2>&1 | grep -E "^\|" | head -16
done >"$OUT/a_profile.txt" 2>&1
grep -E "profile|tg128|mv |attn" "$OUT/a_profile.txt"
echo "== end $(($(date +%s) - T0)) s"
