#!/bin/bash
# s142.sh OUT - session 19; either GPU; carry .llqb .commit; ~4 min. WP: the second pass of weights
# requested between the PDL wait and the prologue (NVHCQ_MVQ_WP=1: k_llm_matvec_ab.cu's _wp builds
# of the Q4_0 / Q8_0 two-group kernels and the Q6_K one) against the default, where a warp has one
# pass in flight through the prologue (s139's timeline: 1.2 us for Q|K|V / gate|up, 1.9 us for
# down). tg128 alternating, two rounds, Q8_0 / Q4_0 / Q6_K; profiles on Q8_0; test_llm_matvec and
# test_llm_e2e (under WP) on rm:0.
set -u
OUT=${1:?usage: s142.sh OUT}
mkdir -p "$OUT"
export T0=$(date +%s)
. bench/final/lib.sh
call_build || exit 1
quant_files Q8_0 Q4_0 Q6_K >"$OUT/quant.log" 2>&1
cat "$OUT/quant.log"
for r in 1 2; do for ty in Q8_0 Q4_0 Q6_K; do
    F=/tmp/q/$ty.gguf
    echo "$ty r$r [base] tg128: $(env_cell NVHCQ_X=0)"
    echo "$ty r$r [wp] tg128: $(env_cell NVHCQ_MVQ_WP=1)"
done; done 2>&1 | tee "$OUT/a_tg.txt"
echo "== tg done $(($(date +%s) - T0)) s"
{ profile_row build/nvhcq /tmp/q/Q8_0.gguf Q8_0 base
  NVHCQ_MVQ_WP=1 profile_row build/nvhcq /tmp/q/Q8_0.gguf Q8_0 wp; } >"$OUT/a_profile.txt" 2>&1
grep -E "profile|^\| mv" "$OUT/a_profile.txt"
HCQ_TEST_DEVS='rm:0' timeout 200 build/tests/test_llm_matvec >"$OUT/t_matvec.txt" 2>&1
echo "test_llm_matvec rm:0 rc=$? $(grep -E "FAIL|passed" "$OUT/t_matvec.txt" | tr '\n' ' ')"
grep -E "rm:0 k_llm_matvec_q8_.*_wp" "$OUT/t_matvec.txt"
NVHCQ_MVQ_WP=1 HCQ_TEST_DEVS='rm:0' timeout 150 build/tests/test_llm_e2e >"$OUT/t_e2e.txt" 2>&1
echo "test_llm_e2e rm:0 wp rc=$? $(grep -E "FAIL|passed" "$OUT/t_e2e.txt" | tr '\n' ' ')"
dmesg | grep -E "NVRM: Xid" | tail -n 5 | cut -c1-300
echo "== end $(($(date +%s) - T0)) s"
