#!/bin/bash
# s140.sh OUT - session 19; either GPU; carry .llqb .commit; ~4 min (run twice: at 4e00ecd with one counter for every unit, then at the pooled form). gate|up of Q8_0 / Q4_0 with
# units handed out at run time (NVHCQ_MVQ_DYN=1: k_llm_matvec_q8_q8_0x2d / _q4_0x2d, k_llm_mvq.cuh
# q8_matvec_dyn) against the default fixed ranges: tg128 alternating, two rounds; the timeline
# profile (NVHCQ_MVQ_TL=1) of both on Q8_0; test_llm_e2e on rm:0 under it.
set -u
OUT=${1:?usage: s140.sh OUT}
mkdir -p "$OUT"
export T0=$(date +%s)
. bench/final/lib.sh
call_build || exit 1
quant_files Q8_0 Q4_0 >"$OUT/quant.log" 2>&1
cat "$OUT/quant.log"
for r in 1 2; do for ty in Q8_0 Q4_0; do
    F=/tmp/q/$ty.gguf
    echo "$ty r$r [base] tg128: $(env_cell NVHCQ_X=0)"
    echo "$ty r$r [dyn] tg128: $(env_cell NVHCQ_MVQ_DYN=1)"
done; done 2>&1 | tee "$OUT/a_tg.txt"
echo "== tg done $(($(date +%s) - T0)) s"
tlprof() {
    echo "-- profile $1 [$2]"
    env NVHCQ_MVQ_TL=1 HCQ_LOG=info "${@:3}" timeout 90 build/nvhcq llm-bench -m "/tmp/q/$1.gguf" -p 0 -n 128 -r 1 \
        --profile --dev rm:0 2>&1 | grep -E "^\||NVHCQ_MVQ_TL|rror" | head -80
}
{ tlprof Q8_0 tl NVHCQ_X=0; tlprof Q8_0 tl_dyn NVHCQ_MVQ_DYN=1; } >"$OUT/a_tl.txt" 2>&1
grep -E "profile|^\| mv |tl mv norm\+gate|rror" "$OUT/a_tl.txt" | grep -v "entry\|wait open first" | head -60
echo "== tl done $(($(date +%s) - T0)) s"
NVHCQ_MVQ_DYN=1 HCQ_TEST_DEVS='rm:0' timeout 150 build/tests/test_llm_e2e >"$OUT/t_e2e.txt" 2>&1
echo "test_llm_e2e rm:0 dyn rc=$? $(grep -E "FAIL|passed" "$OUT/t_e2e.txt" | tr '\n' ' ')"
dmesg | grep -E "NVRM: Xid" | tail -n 5 | cut -c1-300
echo "== end $(($(date +%s) - T0)) s"
