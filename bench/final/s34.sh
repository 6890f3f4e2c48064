#!/bin/bash
# s34.sh OUT - session 7, H100 (~3 min): the decode attention's head path with 8 positions per
# warp step and the parallel merge of the split path's partials (default) against session 6's
# forms (NVHCQ_AD=s6): correctness on the GPU (test_llm_attn_decode, e2e on rm:0 and cuda:0), then
# tg128 and tg128 @ d1024 interleaved, two rounds, Q6_K and Q8_0, then the per-kernel profile.
set -u
out=${1:?usage: s34.sh OUT}
mkdir -p "$out"
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
echo "attn: $(HCQ_TEST_DEVS='rm:0 cuda:0' timeout 120 build/tests/test_llm_attn_decode 2>&1 | grep -E "FAIL|worst|passed" | tr '\n' ' ')"
echo "e2e: $(HCQ_TEST_DEVS='rm:0 cuda:0' timeout 200 build/tests/test_llm_e2e 2>&1 | grep -E "FAIL|passed" | tr '\n' ' ')"
V=tests/data/tokenizers/ggml-vocab-gpt-2.gguf
for ty in q6_k q8_0; do
    build/nvhcq gen-model --preset llama-3.2-1b --type $ty --vocab $V -o /tmp/m_$ty.gguf >/dev/null 2>&1 || echo "gen $ty failed"
done
for round in 1 2; do for ty in q6_k q8_0; do for v in "X=default" "NVHCQ_AD=s6"; do
    r=$(env $v timeout 60 build/nvhcq llm-bench -m /tmp/m_$ty.gguf -p 0 -n 128 -r 3 -d 0,1024 --dev rm:0 2>&1 | grep -E "tg128|rror" | awk -F'|' '{printf "%s ", $(NF-1)}')
    echo "r$round $ty [$v] $r"
done; done; done
timeout 60 build/nvhcq llm-bench -m /tmp/m_q6_k.gguf -p 0 -n 128 -r 1 -d 0,1024 --profile --dev rm:0 2>&1 | grep -E "attn|profile"
