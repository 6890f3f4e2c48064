#!/bin/bash
# s6.sh OUT - one device call: build; GPU tests of the mat-vec bodies (long-row included) and
# the end-to-end decode switches; tg128 per type with NVHCQ_MVQ_LONG=0 vs the default (same
# process order); the per-kernel profile of the default.
set -u
out=${1:?usage: s6.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
B=build
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
echo "== build $(($(date +%s) - t0)) s"
export HCQ_TEST_DEVS="rm:0 cuda:0"
timeout 150 $B/tests/test_llm_matvec 2>&1 | grep -E "long|q8:|FAIL|passed"
timeout 250 $B/tests/test_llm_e2e 2>&1 | grep -E "rm:0|cuda:0|FAIL|passed" | grep -v skipped | tail -30
unset HCQ_TEST_DEVS
echo "== tests done $(($(date +%s) - t0)) s"
V=tests/data/tokenizers/ggml-vocab-gpt-2.gguf
for ty in ${TYPES:-q6_k q4_k q8_0}; do
    f=/tmp/m_$ty.gguf
    $B/nvhcq gen-model --preset llama-3.2-1b --type $ty --vocab $V -o $f >/dev/null 2>&1 || echo "gen $ty failed"
    for v in 0 1 0 1; do
        echo "-- $ty NVHCQ_MVQ_LONG=$v"
        NVHCQ_MVQ_LONG=$v timeout 60 $B/nvhcq llm-bench -m $f -p 0 -n 128 -r 3 --dev rm:0 2>&1 | grep -E "tg|error|warn" | tail -2
    done
done
f=/tmp/m_q6_k.gguf
timeout 60 $B/nvhcq llm-bench -m $f -p 0 -n 128 -r 3 --dev cuda:0 2>&1 | grep -E "tg|error"
timeout 60 $B/nvhcq llm-bench -m $f -p 0 -n 64 -r 2 --profile --dev rm:0 2>&1 | grep -E "tg64|^\| (mv|attn|rope|embed)"
echo "all done after $(($(date +%s) - t0)) s"
