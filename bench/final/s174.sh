#!/bin/bash
# s174.sh OUT - session 23 (either GPU; carry .commit; ~3 min): the final tree's GPU LLM checks
# after cbuf0 moved to CPU memory first (graphs build their cbuf0s through the same path):
# test_llm_e2e (every device), test_llm_attn_decode, and tg128 Q8_0 / Q4_K on rm:0 against
# PB_CBUF0_SCRATCH=0, plus the latency rows rm:0 / cuda:0.
set -u
OUT=${1:?usage: s174.sh OUT}
mkdir -p "$OUT"
export T0=$(date +%s)
. bench/final/lib.sh
{
call_build || exit 1
for t in test_llm_e2e test_llm_attn_decode; do
    timeout 150 build/tests/$t >"$OUT/a_$t.txt" 2>&1
    echo "$t rc=$? $(grep -E "FAIL" "$OUT/a_$t.txt" | head -3 | tr '\n' ' ') $(tail -1 "$OUT/a_$t.txt")"
done
gen_models q8_0 q4_k
for r in 1 2; do
    for ty in q8_0 q4_k; do
        F=/tmp/m_$ty.gguf
        echo "tg128 $ty scratch: $(env_cell) in-place: $(env_cell PB_CBUF0_SCRATCH=0)"
    done
done
L="$OUT/a_lat.txt"
LAT_DEVS=rm:0,cuda:0 lat_run "final" | grep -E "launch_sync|back_to_back|graph_300|dep_chain"
call_end
} 2>&1 | tee "$OUT/a_s174.txt"
