#!/bin/bash
# s14.sh OUT - session 5, one device call: decode mat-vec bodies under PDL + uniform carve-out:
# default (one pass of weights in flight before the wait) vs e2 (two passes) vs s3 (3 CTAs per SM,
# 80 registers); tg128 rm:0 per type, same process order; the mat-vec test first.
set -u
out=${1:?usage: s14.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
B=build
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
echo "== build $(($(date +%s) - t0)) s"
HCQ_TEST_DEVS="rm:0 cuda:0" timeout 100 $B/tests/test_llm_matvec 2>&1 | grep -E "e2|FAIL|passed" | tail -4
HCQ_TEST_DEVS="rm:0" timeout 100 $B/tests/test_llm_e2e pdl_vs_serial 2>&1 | grep -E "FAIL|passed" | tail -2
V=tests/data/tokenizers/ggml-vocab-gpt-2.gguf
for ty in ${TYPES:-q6_k q4_k q8_0}; do
    f=/tmp/m_$ty.gguf
    $B/nvhcq gen-model --preset llama-3.2-1b --type $ty --vocab $V -o $f >/dev/null 2>&1 || echo "gen $ty failed"
    for v in "NVHCQ_PDL=1" "NVHCQ_MVQ=e2" "NVHCQ_MVQ=s3" "NVHCQ_PDL=1" "NVHCQ_MVQ=e2" "NVHCQ_MVQ=s3"; do
        echo "-- $ty $v: $(env $v timeout 40 $B/nvhcq llm-bench -m $f -p 0 -n 128 -r 3 --dev rm:0 2>&1 | grep -E "tg|error" | tail -1)"
    done
done
echo "all done after $(($(date +%s) - t0)) s"
