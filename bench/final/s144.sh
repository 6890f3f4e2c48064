#!/bin/bash
# s144.sh OUT - session 19; either GPU; carry .llqb .commit; ~5 min. The one-pass prologue reading
# two blocks of x per thread before quantizing either (patches/s144-pro2.patch; rows of k 8192 -
# the FFN down projection - took two dependent L2 round trips after the PDL wait: 1.9 us per CTA in
# s139's timeline) against the tree: two builds, tg128 alternating, two rounds, Q8_0 / Q4_0 /
# Q4_K_M (down on the changed bodies) and Q6_K (down on _w2, unchanged: a control); profiles on
# Q8_0; test_llm_matvec and test_llm_e2e of the patched build on rm:0.
set -u
OUT=${1:?usage: s144.sh OUT}
mkdir -p "$OUT"
export T0=$(date +%s)
. bench/final/lib.sh
call_build || exit 1
variant_build pro2 "$PWD/bench/final/patches/s144-pro2.patch" || exit 1
V=/tmp/v_pro2/build
quant_files Q8_0 Q4_0 Q4_K_M Q6_K >"$OUT/quant.log" 2>&1
cat "$OUT/quant.log"
echo "== builds done $(($(date +%s) - T0)) s"
for r in 1 2; do for ty in Q8_0 Q4_0 Q4_K_M Q6_K; do
    echo "$ty r$r [base] tg128: $(tg_cell build/nvhcq /tmp/q/$ty.gguf rm:0)"
    echo "$ty r$r [pro2] tg128: $(tg_cell $V/nvhcq /tmp/q/$ty.gguf rm:0)"
done; done 2>&1 | tee "$OUT/a_tg.txt"
echo "== tg done $(($(date +%s) - T0)) s"
{ profile_row build/nvhcq /tmp/q/Q8_0.gguf Q8_0 base
  profile_row $V/nvhcq /tmp/q/Q8_0.gguf Q8_0 pro2; } >"$OUT/a_profile.txt" 2>&1
grep -E "profile|^\| mv" "$OUT/a_profile.txt"
for t in test_llm_matvec test_llm_e2e; do
    HCQ_TEST_DEVS='rm:0' timeout 200 $V/tests/$t >"$OUT/t_$t.txt" 2>&1
    echo "$t (pro2) rm:0 rc=$? $(grep -E "FAIL|passed" "$OUT/t_$t.txt" | tr '\n' ' ')"
done
dmesg | grep -E "NVRM: Xid" | tail -n 5 | cut -c1-300
echo "== end $(($(date +%s) - T0)) s"
