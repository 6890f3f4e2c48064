#!/bin/bash
# s5.sh OUT - one device call: build; GPU tests of the fused RoPE epilogue and the per-head
# decode attention; tg128 per type, session-3 path (NVHCQ_ROPE_FUSED=0 NVHCQ_AD_HEAD_MAX=0) vs
# the new default, same process order; attention head_max at depth; mat-vec variant profiles.
set -u
out=${1:?usage: s5.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
B=build
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
echo "== build $(($(date +%s) - t0)) s"
export HCQ_TEST_DEVS="rm:0 cuda:0"
timeout 100 $B/tests/test_llm_attn_decode 2>&1 | grep -E "worst|FAIL|passed"
timeout 200 $B/tests/test_llm_e2e rope_fused_vs_own_launch attn_head_vs_split devices_match_cpu persistent_vs_per_kernel llama_int8_decode_vs_ref 2>&1 | grep -E "rm:0|cuda:0|FAIL|passed" | grep -v skipped
unset HCQ_TEST_DEVS
echo "== tests done $(($(date +%s) - t0)) s"
V=tests/data/tokenizers/ggml-vocab-gpt-2.gguf
for ty in ${TYPES:-q6_k q4_k q8_0}; do
    f=/tmp/m_$ty.gguf
    $B/nvhcq gen-model --preset llama-3.2-1b --type $ty --vocab $V -o $f >/dev/null 2>&1 || echo "gen $ty failed"
    for v in old new old new; do
        e="NVHCQ_ROPE_FUSED=1"
        [ $v = old ] && e="NVHCQ_ROPE_FUSED=0 NVHCQ_AD_HEAD_MAX=0"
        echo "-- $ty $v"
        env $e timeout 60 $B/nvhcq llm-bench -m $f -p 0 -n 128 -r 3 --dev rm:0 2>&1 | grep -E "tg|error|warn" | tail -2
    done
done
f=/tmp/m_q6_k.gguf
echo "-- cuda:0 q6_k new"
timeout 60 $B/nvhcq llm-bench -m $f -p 0 -n 128 -r 3 --dev cuda:0 2>&1 | grep -E "tg|error"
for hm in 0 64 256 1024 4096; do
    echo "-- depth NVHCQ_AD_HEAD_MAX=$hm"
    NVHCQ_AD_HEAD_MAX=$hm timeout 100 $B/nvhcq llm-bench -m $f -p 0 -n 64 -r 2 -d 0,512,1024 --dev rm:0 2>&1 | grep -E "tg|error"
done
for v in q8 split u2 s3; do
    echo "-- profile NVHCQ_MVQ=$v"
    NVHCQ_MVQ=$([ $v = q8 ] || echo $v) timeout 60 $B/nvhcq llm-bench -m $f -p 0 -n 64 -r 2 --profile --dev rm:0 2>&1 | grep -E "tg64|^\| (mv|attn|rope|embed)"
done
echo "all done after $(($(date +%s) - t0)) s"
