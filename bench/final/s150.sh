#!/bin/bash
# s150.sh OUT - session 20; either GPU; carry .llqb .commit; ~6 min. s149: a second copy of the
# same kernel for two of a step's launch kinds cost Q8_0 1.4% and Q4_0 3.1% (each switch of code
# between launches pays). The K-quant files run four codes per step (Q4_K_M: q4k_q6k for Q|K|V, q4k
# for O and gate|up and the Q4_K downs, q6k_w2 for the Q6_K downs, q6k for the head). A/B knob
# NVHCQ_MVQ_ONE=5 (=6 for Q5_K_M; patches/s150-one.patch - run in session 20 with the patch applied
# to the tree, 8e0ba02; lost, not kept) puts every launch on the two-type kernel (one code), with
# NVHCQ_MVQ_W2 adding its _w2 build for the small launches (two codes); Q6_K on q6k alone
# (NVHCQ_MVQ_W2=0x0C: one code, s135 had it 0.5% slower). tg128 alternating, two rounds; greedy
# 32-token runs compared (same tokens expected: same sums in the same order).
set -u
OUT=${1:?usage: s150.sh OUT}
mkdir -p "$OUT"
export T0=$(date +%s)
. bench/final/lib.sh
call_build || exit 1
variant_build one "$PWD/bench/final/patches/s150-one.patch" || exit 1
V=/tmp/v_one/build/nvhcq
quant_files Q4_K_M Q5_K_M Q6_K >"$OUT/quant.log" 2>&1
cat "$OUT/quant.log"
echo "== builds done $(($(date +%s) - T0)) s"
for r in 1 2; do
    F=/tmp/q/Q4_K_M.gguf
    echo "Q4_K_M r$r [base] tg128: $(env_cell NVHCQ_X=0)"
    echo "Q4_K_M r$r [one] tg128: $(bin_cell $V NVHCQ_MVQ_ONE=5)"
    echo "Q4_K_M r$r [one+w2] tg128: $(bin_cell $V NVHCQ_MVQ_ONE=5 NVHCQ_MVQ_W2=0x3C)"
    F=/tmp/q/Q5_K_M.gguf
    echo "Q5_K_M r$r [base] tg128: $(env_cell NVHCQ_X=0)"
    echo "Q5_K_M r$r [one] tg128: $(bin_cell $V NVHCQ_MVQ_ONE=6)"
    echo "Q5_K_M r$r [one+w2] tg128: $(bin_cell $V NVHCQ_MVQ_ONE=6 NVHCQ_MVQ_W2=0x5C)"
    F=/tmp/q/Q6_K.gguf
    echo "Q6_K r$r [base] tg128: $(env_cell NVHCQ_X=0)"
    echo "Q6_K r$r [q6k only] tg128: $(env_cell NVHCQ_MVQ_W2=0x0C)"
done 2>&1 | tee "$OUT/a_tg.txt"
echo "== tg done $(($(date +%s) - T0)) s"
gen() { env "$@" timeout 60 $V run -m /tmp/q/Q4_K_M.gguf -p "the" -n 32 --temp 0 --dev rm:0 2>/dev/null | md5sum; }
echo "Q4_K_M greedy 32: base $(gen NVHCQ_X=0) one $(gen NVHCQ_MVQ_ONE=5) one+w2 $(gen NVHCQ_MVQ_ONE=5 NVHCQ_MVQ_W2=0x3C)"
{ NVHCQ_X=0 profile_row build/nvhcq /tmp/q/Q4_K_M.gguf Q4_K_M base
  NVHCQ_MVQ_ONE=5 profile_row $V /tmp/q/Q4_K_M.gguf Q4_K_M one; } >"$OUT/a_profile.txt" 2>&1
grep -E "profile|^\| mv" "$OUT/a_profile.txt"
dmesg | grep -E "NVRM: Xid" | tail -n 5 | cut -c1-300
echo "== end $(($(date +%s) - T0)) s"
