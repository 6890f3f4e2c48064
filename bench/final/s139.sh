#!/bin/bash
# s139.sh OUT - session 19; either GPU; carry .llqb .commit; ~4 min. E2: the per-CTA timeline of the
# decode mat-vec (NVHCQ_MVQ_TL=1: k_llm_matvec_tl.cu's builds of the Q8_0 / Q4_0 / Q6_K kernels,
# rows from src/llm/llm_tl.c in `llm-bench --profile`). First what loading the _tl builds costs
# outside a profiled step (their marks return at once there; tg128 against the default,
# alternating, two rounds, Q8_0), then the profile with the timeline on Q8_0 (twice), Q4_0 and Q6_K,
# then test_llm_matvec on rm:0 (the _tl kernels against the double reference).
set -u
OUT=${1:?usage: s139.sh OUT}
mkdir -p "$OUT"
export T0=$(date +%s)
. bench/final/lib.sh
call_build || exit 1
quant_files Q8_0 Q4_0 Q6_K >"$OUT/quant.log" 2>&1
cat "$OUT/quant.log"
for r in 1 2; do
    F=/tmp/q/Q8_0.gguf
    echo "Q8_0 r$r [base] tg128: $(env_cell NVHCQ_X=0)"
    echo "Q8_0 r$r [tl_loaded] tg128: $(env_cell NVHCQ_MVQ_TL=1)"
done 2>&1 | tee "$OUT/a_tg.txt"
echo "== tg done $(($(date +%s) - T0)) s"
tlprof() {
    echo "-- profile $1 [$2]"
    NVHCQ_MVQ_TL=1 HCQ_LOG=info timeout 90 build/nvhcq llm-bench -m "/tmp/q/$1.gguf" -p 0 -n 128 -r 1 --profile \
        --dev rm:0 2>&1 | grep -E "^\||NVHCQ_MVQ_TL|rror" | head -80
}
{ tlprof Q8_0 tl1; tlprof Q8_0 tl2; tlprof Q4_0 tl; tlprof Q6_K tl; } >"$OUT/a_tl.txt" 2>&1
grep -E "profile|NVHCQ_MVQ_TL|tl mv norm\+gate|tl mv norm\+qkv|rror" "$OUT/a_tl.txt" | head -60
echo "== tl done $(($(date +%s) - T0)) s"
HCQ_TEST_DEVS='rm:0' timeout 200 build/tests/test_llm_matvec >"$OUT/t_matvec.txt" 2>&1
echo "test_llm_matvec rm:0 rc=$? $(grep -E "FAIL|passed" "$OUT/t_matvec.txt" | tr '\n' ' ')"
grep -E "rm:0 k_llm_matvec_q8_.*_tl" "$OUT/t_matvec.txt"
dmesg | grep -E "NVRM: Xid" | tail -n 5 | cut -c1-300
echo "== end $(($(date +%s) - T0)) s"
