#!/bin/bash
# s160.sh OUT - session 22 (asks for an H200; either GPU; carry .commit; ~6 min). The new default
# FREE_CTA_SLOTS_EMPTY_SM (gpu_cubin_free_cta_slots_fit: ceil(CTAs / SMs) for single-wave grids,
# 0 otherwise) against the old 0 (PB_QMD_FREE_CTA_SLOTS=0), alternating: `bench latency` on rm:0
# with cuda:0 beside the default; tg128 on gen-model Q8_0 / Q4_K files; then under the default the
# whole HCQ suite on rm:0 with the kernel log checked, the LLM GPU tests on rm:0, and issue 13's
# copy / alloc rows (`bench copy alloc --devs rm:0,cuda:0`, s159's first half).
set -u
OUT=${1:?usage: s160.sh OUT}
mkdir -p "$OUT"
export T0=$(date +%s)
. bench/final/lib.sh
call_build || exit 1
L="$OUT/a_lat.txt"
for r in 1 2; do
    LAT_DEVS=rm:0,cuda:0 lat_run "fit r$r" | grep -v -E "copy_to|signal"
    lat_run "0 r$r" PB_QMD_FREE_CTA_SLOTS=0 | grep -v -E "copy_to|signal"
done
echo "== lat done $(($(date +%s) - T0)) s"
gen_models q8_0 q4_k
for r in 1 2; do
    for ty in q8_0 q4_k; do
        F=/tmp/m_$ty.gguf
        echo "$ty r$r fit: $(env_cell) | 0: $(env_cell PB_QMD_FREE_CTA_SLOTS=0)"
    done
done
echo "== tg done $(($(date +%s) - T0)) s"
timeout 240 build/tests/hcq_suite --dev rm:0 --klog >"$OUT/a_suite.txt" 2>&1
echo "hcq_suite rm:0 rc=$? $(grep -E "FAIL|passed" "$OUT/a_suite.txt" | tr '\n' ' ' | cut -c1-300)"
for t in test_llm_e2e test_llm_matvec test_llm_attn_decode test_llm_attn_o test_llm_real; do
    HCQ_TEST_DEVS=rm:0 timeout 150 build/tests/$t >/tmp/t.txt 2>&1
    echo "$t rm:0 rc=$? $(grep -E "FAIL|passed" /tmp/t.txt | tr '\n' ' ' | cut -c1-200)"
done
echo "== tests done $(($(date +%s) - T0)) s"
left=$((560 - ($(date +%s) - T0)))
if [ "$left" -gt 60 ]; then
    timeout "$left" build/nvhcq bench copy alloc --devs rm:0,cuda:0 --json "$OUT/a_bench.json" >"$OUT/a_bench.txt" 2>&1
    echo "[bench copy alloc] rc=$? ($(($(date +%s) - T0)) s)"
    grep -E "^(copy|alloc)" "$OUT/a_bench.txt" | tr -s ' ' | cut -c1-110
fi
call_end
