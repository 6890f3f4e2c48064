#!/bin/bash
# s149.sh OUT - session 20; either GPU; carry .llqb .commit; ~7 min. Why was the f16 intermediate on
# its own kernels (s148) slower (Q8_0 -0.7%, Q4_0 -2.4%) when the same flags in every kernel (s147)
# gained 1.0-1.8% over that build? Hypothesis: gate|up and down on kernels of another module make
# each step run two codes where Q8_0 / Q4_0 ran one (the x2 kernel for every launch), and the
# launch after each switch pays for instruction fetches. Test: the s148 patch with its module
# compiled without the flags (patches/s149-copy.patch: K_LLM_MVQ_H16 0 - the kernels ignore them,
# f32 as the default, byte-for-byte the default kernels' code in another module), against the
# tree and the s148 patch; tg128 alternating, two rounds; Q8_0 profiles.
set -u
OUT=${1:?usage: s149.sh OUT}
mkdir -p "$OUT"
export T0=$(date +%s)
. bench/final/lib.sh
call_build || exit 1
variant_build h16 "$PWD/bench/final/patches/s148-h16.patch" || exit 1
variant_build copy "$PWD/bench/final/patches/s148-h16.patch" "$PWD/bench/final/patches/s149-copy.patch" || exit 1
quant_files Q8_0 Q4_0 Q6_K >"$OUT/quant.log" 2>&1
cat "$OUT/quant.log"
echo "== builds done $(($(date +%s) - T0)) s"
for r in 1 2; do for ty in Q8_0 Q4_0 Q6_K; do
    F=/tmp/q/$ty.gguf
    echo "$ty r$r [base] tg128: $(env_cell NVHCQ_X=0)"
    echo "$ty r$r [copy] tg128: $(bin_cell /tmp/v_copy/build/nvhcq NVHCQ_X=0)"
    echo "$ty r$r [h16] tg128: $(bin_cell /tmp/v_h16/build/nvhcq NVHCQ_X=0)"
done; done 2>&1 | tee "$OUT/a_tg.txt"
echo "== tg done $(($(date +%s) - T0)) s"
{ profile_row build/nvhcq /tmp/q/Q8_0.gguf Q8_0 base
  profile_row /tmp/v_copy/build/nvhcq /tmp/q/Q8_0.gguf Q8_0 copy
  profile_row /tmp/v_h16/build/nvhcq /tmp/q/Q8_0.gguf Q8_0 h16; } >"$OUT/a_profile.txt" 2>&1
grep -E "profile|^\| mv" "$OUT/a_profile.txt"
HCQ_TEST_DEVS='rm:0' timeout 150 /tmp/v_h16/build/tests/test_llm_matvec >"$OUT/t_matvec.txt" 2>&1
echo "test_llm_matvec (h16 build) rm:0 rc=$? $(grep -E "FAIL|passed" "$OUT/t_matvec.txt" | head -3 | tr '\n' ' ')"
dmesg | grep -E "NVRM: Xid" | tail -n 5 | cut -c1-300
echo "== end $(($(date +%s) - T0)) s"
