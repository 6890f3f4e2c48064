#!/bin/bash
# s39.sh OUT - session 8: the decode attention's short-context path in three phases
# (attn_decode_head2: all scores at once, one CTA softmax, V summed by position groups) against
# the online-softmax path of sessions 4-7 (NVHCQ_AD=h1) and against no attention work at all
# (NVHCQ_AD=null: the launch and its wait only - the floor; its tokens are wrong). Checks first:
# test_llm_attn_decode and test_llm_e2e on rm:0 and cuda:0. Then tg128 rm:0 for the three
# types, two rounds, alternating; tg at depth 512 and 960 with the head path up to 1024
# positions (NVHCQ_AD_HEAD_MAX=1024) against the default 256; the in-situ profiles.
set -u
out=${1:?usage: s39.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "attn_decode: $(HCQ_TEST_DEVS='rm:0 cuda:0' timeout 120 build/tests/test_llm_attn_decode 2>&1 | grep -E "FAIL|passed" | head -5 | tr '\n' ' ')"
echo "e2e: $(HCQ_TEST_DEVS='rm:0 cuda:0' timeout 200 build/tests/test_llm_e2e 2>&1 | grep -E "FAIL|passed|head_vs" | tr '\n' ' ')"
V=tests/data/tokenizers/ggml-vocab-gpt-2.gguf
for ty in q6_k q4_k q8_0; do
    build/nvhcq gen-model --preset llama-3.2-1b --type $ty --vocab $V -o /tmp/m_$ty.gguf >/dev/null 2>&1 || echo "gen $ty failed"
done
build/nvhcq llm-bench -m /tmp/m_q6_k.gguf -p 0 -n 128 -r 5 --dev rm:0 >/dev/null 2>&1
echo "== tests done $(($(date +%s) - t0)) s"
for r in 1 2; do for ty in q6_k q4_k q8_0; do for v in X=0 NVHCQ_AD=h1 NVHCQ_AD=null; do
    x=$(env $v timeout 40 build/nvhcq llm-bench -m /tmp/m_$ty.gguf -p 0 -n 128 -r 3 --dev rm:0 2>&1 | grep -E "tg128|rror" | tail -1 | awk -F'|' '{print $(NF-1)}')
    echo "tg128 r$r $ty [$v] $x"
done; done; done
for v in X=0 NVHCQ_AD_HEAD_MAX=1024 "NVHCQ_AD=h1 NVHCQ_AD_HEAD_MAX=1024"; do
    x=$(env $v timeout 60 build/nvhcq llm-bench -m /tmp/m_q6_k.gguf -p 0 -n 64 -d 512,960 -r 3 --dev rm:0 2>&1 | grep -E "tg64|rror" | awk -F'|' '{printf "%s ", $(NF-1)}')
    echo "q6_k tg64 @512,@960 [$v] $x"
done
for v in X=0 NVHCQ_AD=h1; do
    echo "-- profile [$v]"
    env $v timeout 60 build/nvhcq llm-bench -m /tmp/m_q6_k.gguf -p 0 -n 128 -r 3 --profile --dev rm:0 2>&1 | grep -E "^\| [a-z]|profile:" | head -12
done
echo "== end $(($(date +%s) - t0)) s"
