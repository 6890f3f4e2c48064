#!/bin/bash
# s161.sh OUT - session 22 (asks for an H200; either GPU; carry .commit; ~5 min). After s136 at
# 3135cd5 (the FREE_CTA_SLOTS fit default: every rm:0 / cuda:0 suite passed, 17 failures all from
# the emulators' stub programs - no kernel, a NULL dereference - fixed since): the suites that
# crashed and touch a GPU - test_llm_e2e on every device it opens, tests/suites/selftest.sh and
# cli.sh - then what s160's lost stdout held: tg128 fit vs PB_QMD_FREE_CTA_SLOTS=0 (gen-model Q8_0 /
# Q4_K, two rounds) and `bench latency --devs rm:0,cuda:0` under each; on an H200 also issue 13's
# copy / alloc rows. Every line also lands in $OUT/a_s161.txt.
set -u
OUT=${1:?usage: s161.sh OUT}
mkdir -p "$OUT"
export T0=$(date +%s)
. bench/final/lib.sh
{
call_build || exit 1
build/tests/test_llm_e2e >"$OUT/a_e2e.txt" 2>&1
echo "test_llm_e2e rc=$? $(grep -E "FAIL|passed|crash|Segm" "$OUT/a_e2e.txt" | tr '\n' ' ' | cut -c1-300)"
for s in selftest cli; do
    BUILD=build GPU=1 timeout 200 sh tests/suites/$s.sh >/tmp/s.txt 2>&1
    echo "suite $s rc=$? $(grep -E "FAIL|passed" /tmp/s.txt | tr '\n' ' ' | cut -c1-300)"
done
echo "== tests done $(($(date +%s) - T0)) s"
gen_models q8_0 q4_k
for r in 1 2; do
    for ty in q8_0 q4_k; do
        F=/tmp/m_$ty.gguf
        echo "$ty r$r fit: $(env_cell) | 0: $(env_cell PB_QMD_FREE_CTA_SLOTS=0)"
    done
done
echo "== tg done $(($(date +%s) - T0)) s"
L="$OUT/a_lat.txt"
export LAT_DEVS=rm:0,cuda:0
lat_run "fit" | grep -v -E "copy_to|signal"
lat_run "0" PB_QMD_FREE_CTA_SLOTS=0 | grep -v -E "copy_to|signal"
copy_alloc_h200 200
call_end
} 2>&1 | tee "$OUT/a_s161.txt"
