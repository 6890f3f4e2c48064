#!/bin/bash
# s132.sh OUT - session 17's last call (either GPU; carry .llqb .commit; ~3 min): the final tree (O as
# row pairs by default) - the LLM GPU tests on rm:0 and cuda:0, tg128 default vs NVHCQ_O_PAIRS=0 on
# Q8_0 and Q5_K_M (a type s131 did not run), one round.
set -u
OUT=${1:?usage: s132.sh OUT}
mkdir -p "$OUT"
export T0=$(date +%s)
. bench/final/lib.sh
make -j16 CUARCH=90 >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/a_gpu.txt"
quant_files Q8_0 Q5_K_M >"$OUT/quant.log" 2>&1 &
for t in test_llm_e2e test_llm_real test_llm_matvec test_llm_attn_o; do
    HCQ_TEST_DEVS='rm:0 cuda:0' timeout 120 build/tests/$t >"$OUT/t_$t.txt" 2>&1
    echo "$t rc=$? $(grep -E "FAIL|passed" "$OUT/t_$t.txt" | tr '\n' ' ')"
done 2>&1 | tee "$OUT/a_tests.txt"
wait
cell() { env "$@" timeout 60 build/nvhcq llm-bench -m "$F" -p 0 -n 128 -r 3 --dev rm:0 2>&1 | grep -E "tg|rror" | awk -F'|' '{printf "%s ", $(NF-1)}'; }
for ty in Q8_0 Q5_K_M; do
    F=/tmp/q/$ty.gguf
    echo "$ty r1 [default] tg128: $(cell NVHCQ_O_PAIRS=1)"
    echo "$ty r1 [O_PAIRS=0] tg128: $(cell NVHCQ_O_PAIRS=0)"
done 2>&1 | tee "$OUT/a_tg.txt"
dmesg | grep -E "NVRM: Xid" | tail -n 5 | cut -c1-300
echo "== end $(($(date +%s) - T0)) s"
