#!/bin/bash
# s148.sh OUT - session 20; either GPU; carry .llqb .commit; ~8 min. The f16 FFN intermediate on
# kernels of their own (patches/s148-h16.patch: k_llm_matvec_h.cu, the engine's NVHCQ_H16 - on in
# the patch, =0 off - and their tests; the default kernels' code as before) against the tree:
# tg128 alternating, two rounds, five types; a Q8_0 profile of each; test_llm_matvec and
# test_llm_e2e of the patched build on rm:0 and cuda:0. As run (at 8e0ba02 + that diff, the tree
# being the patched one and the base a build with the diff reversed; the test_llm_matvec run there
# lacked the patch's "_h" suffix in typed_kernel_type and trapped - fixed in the patch since).
set -u
OUT=${1:?usage: s148.sh OUT}
mkdir -p "$OUT"
export T0=$(date +%s)
. bench/final/lib.sh
call_build || exit 1
variant_build h16 "$PWD/bench/final/patches/s148-h16.patch" || exit 1
H=/tmp/v_h16/build
quant_files Q8_0 Q4_0 Q6_K Q4_K_M Q5_K_M >"$OUT/quant.log" 2>&1
cat "$OUT/quant.log"
echo "== builds done $(($(date +%s) - T0)) s"
for r in 1 2; do for ty in Q8_0 Q4_0 Q6_K Q4_K_M Q5_K_M; do
    F=/tmp/q/$ty.gguf
    echo "$ty r$r [base] tg128: $(env_cell NVHCQ_X=0)"
    echo "$ty r$r [h16 off] tg128: $(bin_cell $H/nvhcq NVHCQ_H16=0)"
    echo "$ty r$r [h16] tg128: $(bin_cell $H/nvhcq NVHCQ_X=0)"
done; done 2>&1 | tee "$OUT/a_tg.txt"
echo "== tg done $(($(date +%s) - T0)) s"
{ profile_row build/nvhcq /tmp/q/Q8_0.gguf Q8_0 base
  profile_row $H/nvhcq /tmp/q/Q8_0.gguf Q8_0 h16; } >"$OUT/a_profile.txt" 2>&1
grep -E "profile|^\| mv" "$OUT/a_profile.txt"
for t in test_llm_matvec test_llm_e2e; do
    HCQ_TEST_DEVS='rm:0 cuda:0' timeout 200 $H/tests/$t >"$OUT/t_$t.txt" 2>&1
    echo "$t rm:0 cuda:0 rc=$? $(grep -E "FAIL|passed" "$OUT/t_$t.txt" | head -5 | tr '\n' ' ')"
done
dmesg | grep -E "NVRM: Xid" | tail -n 5 | cut -c1-300
echo "== end $(($(date +%s) - T0)) s"
