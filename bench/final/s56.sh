#!/bin/bash
# s56.sh OUT - session 9 (~4 min, H100): the three-phase split path of the decode attention
# out of line (default) vs inlined (NVHCQ_AD=s2i) vs the online-softmax split path
# (NVHCQ_AD=s1): s55 saw tg128 at depth 0 ~1% slower with it inlined (depth 4096 +6-8%).
# Correctness first (test_llm_attn_decode, test_llm_e2e on rm:0); tg128 at depth 0 and 4096,
# Q6_K and Q8_0, three rounds alternating. Logs a_*.
set -u
out=${1:?usage: s56.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/a_gpu.txt"
HCQ_TEST_DEVS='rm:0 cuda:0' timeout 200 build/tests/test_llm_attn_decode >"$out/a_attn_decode.txt" 2>&1
HCQ_TEST_DEVS='rm:0' timeout 200 build/tests/test_llm_e2e >"$out/a_e2e.txt" 2>&1
echo "tests: $(grep -E "FAIL|passed" "$out/a_attn_decode.txt" "$out/a_e2e.txt" | tr '\n' ' ')"
V=tests/data/tokenizers/ggml-vocab-gpt-2.gguf
for ty in q6_k q8_0; do
    build/nvhcq gen-model --preset llama-3.2-1b --type $ty --vocab $V -o /tmp/m_$ty.gguf >/dev/null 2>&1 || echo "gen $ty failed"
done
build/nvhcq llm-bench -m /tmp/m_q6_k.gguf -p 0 -n 128 -r 3 --dev rm:0 >/dev/null 2>&1 # warm
for ty in q6_k q8_0; do for r in 1 2 3; do for v in NVHCQ_AD=s1 NVHCQ_AD=s2i X=0; do
    x=$(env $v timeout 60 build/nvhcq llm-bench -m /tmp/m_$ty.gguf -p 0 -n 128 -d 0,4096 -r 2 --dev rm:0 2>&1 | grep -E "tg|rror" | awk -F'|' '{printf "%s ", $(NF-1)}')
    echo "$ty r$r [$v] d0, d4096: $x"
done; done; done | tee "$out/a_tg.txt"
echo "== end $(($(date +%s) - t0)) s"
