#!/bin/bash
# (Session 18: the x2w2 kernels lost again and were removed after this call; apply
# bench/final/patches/s134-x2w2.patch to run it again. Q4_0's gate|up on the two-group kernel won
# and is the default since: its [base] row here is the tree before that.)
# s134.sh OUT - session 18 (either GPU; carry .llqb .commit; ~6 min): E3 of bench/notes-decode.md
# session 17 - the two-group kernels with a second unit before the PDL wait (x2w2,
# NVHCQ_MVQ_X2W2=<mask>, the bits of K_LLM_MVQ_X2_DEFAULT) on gate|up alone, now that O runs one CTA
# per SM: Q8_0 (0x800) and Q4_0 (gate|up moved onto the two-group kernels, NVHCQ_MVQ_X2=0xC0C0C,
# with and without 0x400) against the default, tg128 alternating two rounds, a profile of each on
# Q8_0; test_llm_matvec (runs the x2w2 kernels) and test_llm_e2e under 0xC00 on rm:0 / cuda:0.
set -u
OUT=${1:?usage: s134.sh OUT}
mkdir -p "$OUT"
export T0=$(date +%s)
. bench/final/lib.sh
call_build || exit 1
quant_files Q8_0 Q4_0 >"$OUT/quant.log" 2>&1
cat "$OUT/quant.log"
for r in 1 2; do
    F=/tmp/q/Q8_0.gguf
    echo "Q8_0 r$r [base] tg128: $(env_cell NVHCQ_MVQ_X2W2=0)"
    echo "Q8_0 r$r [gu_w2] tg128: $(env_cell NVHCQ_MVQ_X2W2=0x800)"
    F=/tmp/q/Q4_0.gguf
    echo "Q4_0 r$r [base] tg128: $(env_cell NVHCQ_MVQ_X2W2=0)"
    echo "Q4_0 r$r [gu_x2] tg128: $(env_cell NVHCQ_MVQ_X2=0xC0C0C)"
    echo "Q4_0 r$r [gu_x2w2] tg128: $(env_cell NVHCQ_MVQ_X2=0xC0C0C NVHCQ_MVQ_X2W2=0x400)"
done 2>&1 | tee "$OUT/a_tg.txt"
echo "== tg done $(($(date +%s) - T0)) s"
{ profile_row build/nvhcq /tmp/q/Q8_0.gguf Q8_0 base
  NVHCQ_MVQ_X2W2=0x800 profile_row build/nvhcq /tmp/q/Q8_0.gguf Q8_0 gu_w2; } >"$OUT/a_profile.txt" 2>&1
grep -E "profile|o\+res|gate|down" "$OUT/a_profile.txt"
HCQ_TEST_DEVS='rm:0 cuda:0' timeout 150 build/tests/test_llm_matvec >"$OUT/t_matvec.txt" 2>&1
echo "test_llm_matvec rc=$? $(grep -E "FAIL|passed" "$OUT/t_matvec.txt" | tr '\n' ' ')"
NVHCQ_MVQ_X2W2=0xC00 NVHCQ_MVQ_X2=0xC0C0C HCQ_TEST_DEVS='rm:0 cuda:0' timeout 150 build/tests/test_llm_e2e >"$OUT/t_e2e.txt" 2>&1
echo "test_llm_e2e x2w2 rc=$? $(grep -E "FAIL|passed" "$OUT/t_e2e.txt" | tr '\n' ' ')"
dmesg | grep -E "NVRM: Xid" | tail -n 5 | cut -c1-300
echo "== end $(($(date +%s) - T0)) s"
