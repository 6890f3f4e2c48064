#!/bin/bash
# s138.sh OUT - prepared in session 18, not run there (the device budget was spent); either GPU;
# carry .llqb .commit; ~7 min. CTAs per SM per launch kind (NVHCQ_MVQ_CPS_GU / _DOWN / _HEAD,
# llm_model.c): session 17's row pairs won by leaving room for the next launch's CTAs beside O's
# one CTA per SM; gate|up, down and the head still run two CTAs per SM that fill the register file.
# One CTA per SM for one kind at a time against the default, alternating, two rounds, tg128 rm:0
# on Q8_0, Q4_0, Q6_K; a profile of each on Q8_0; test_llm_e2e on rm:0 with all three at 1.
set -u
OUT=${1:?usage: s138.sh OUT}
mkdir -p "$OUT"
export T0=$(date +%s)
. bench/final/lib.sh
call_build || exit 1
quant_files Q8_0 Q4_0 Q6_K >"$OUT/quant.log" 2>&1
cat "$OUT/quant.log"
for r in 1 2; do for ty in Q8_0 Q4_0 Q6_K; do
    F=/tmp/q/$ty.gguf
    echo "$ty r$r [base] tg128: $(env_cell NVHCQ_X=0)"
    echo "$ty r$r [gu1] tg128: $(env_cell NVHCQ_MVQ_CPS_GU=1)"
    echo "$ty r$r [down1] tg128: $(env_cell NVHCQ_MVQ_CPS_DOWN=1)"
    echo "$ty r$r [head1] tg128: $(env_cell NVHCQ_MVQ_CPS_HEAD=1)"
done; done 2>&1 | tee "$OUT/a_tg.txt"
echo "== tg done $(($(date +%s) - T0)) s"
{ profile_row build/nvhcq /tmp/q/Q8_0.gguf Q8_0 base
  NVHCQ_MVQ_CPS_GU=1 profile_row build/nvhcq /tmp/q/Q8_0.gguf Q8_0 gu1
  NVHCQ_MVQ_CPS_DOWN=1 profile_row build/nvhcq /tmp/q/Q8_0.gguf Q8_0 down1; } >"$OUT/a_profile.txt" 2>&1
grep -E "profile|o\+res|gate|down|head|output" "$OUT/a_profile.txt"
NVHCQ_MVQ_CPS_GU=1 NVHCQ_MVQ_CPS_DOWN=1 NVHCQ_MVQ_CPS_HEAD=1 HCQ_TEST_DEVS='rm:0' timeout 150 build/tests/test_llm_e2e >"$OUT/t_e2e.txt" 2>&1
echo "test_llm_e2e rm:0 cps1 rc=$? $(grep -E "FAIL|passed" "$OUT/t_e2e.txt" | tr '\n' ' ')"
dmesg | grep -E "NVRM: Xid" | tail -n 5 | cut -c1-300
echo "== end $(($(date +%s) - T0)) s"
