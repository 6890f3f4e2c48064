#!/bin/bash
# s151.sh OUT - session 20; either GPU; carry .llqb .commit; ~6 min. The token embedding, the decode
# step's first launch, ran as one CTA whose threads each walked d / 256 values with a dependent DRAM
# round trip per value (~10 us in the profile's embed row on H100, nothing before it to overlap):
# over d / 256 CTAs now (k_llm_embed grid.y), NVHCQ_EMBED_SPLIT=0 the one CTA. tg128 alternating,
# two rounds, five types; profiles of Q8_0 both ways; test_llm_e2e on rm:0 and cuda:0.
# S151_ROUNDS=4 S151_TYPES="Q8_0 Q4_K_M" S151_TESTS=0: the second call (s152, Q8_0 again: noisy).
set -u
OUT=${1:?usage: s151.sh OUT}
mkdir -p "$OUT"
export T0=$(date +%s)
. bench/final/lib.sh
call_build || exit 1
TYPES=${S151_TYPES:-Q8_0 Q4_0 Q6_K Q4_K_M Q5_K_M}
quant_files $TYPES >"$OUT/quant.log" 2>&1
cat "$OUT/quant.log"
echo "== builds done $(($(date +%s) - T0)) s"
for r in $(seq 1 "${S151_ROUNDS:-2}"); do for ty in $TYPES; do
    F=/tmp/q/$ty.gguf
    echo "$ty r$r [one cta] tg128: $(env_cell NVHCQ_EMBED_SPLIT=0)"
    echo "$ty r$r [split] tg128: $(env_cell NVHCQ_X=0)"
done; done 2>&1 | tee "$OUT/a_tg.txt"
echo "== tg done $(($(date +%s) - T0)) s"
{ NVHCQ_EMBED_SPLIT=0 profile_row build/nvhcq /tmp/q/Q8_0.gguf Q8_0 "one cta"
  profile_row build/nvhcq /tmp/q/Q8_0.gguf Q8_0 split; } >"$OUT/a_profile.txt" 2>&1
grep -E "profile|^\| mv|^\| embed|^\| attn" "$OUT/a_profile.txt"
[ "${S151_TESTS:-1}" = 0 ] && exit 0
HCQ_TEST_DEVS='rm:0 cuda:0' timeout 240 build/tests/test_llm_e2e >"$OUT/t_e2e.txt" 2>&1
echo "test_llm_e2e rm:0 cuda:0 rc=$? $(grep -E "FAIL|passed" "$OUT/t_e2e.txt" | head -5 | tr '\n' ' ')"
grep -E "EMBED" "$OUT/t_e2e.txt" | grep -E "rm:0|cuda:0"
dmesg | grep -E "NVRM: Xid" | tail -n 5 | cut -c1-300
echo "== end $(($(date +%s) - T0)) s"
