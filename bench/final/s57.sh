#!/bin/bash
# s57.sh OUT - session 9 (~3 min, either GPU): k_llm_attn_decode_long from a second decode
# graph past the short-context path (NVHCQ_AD_LONG=0: k_llm_attn_decode everywhere, as before).
# Correctness (test_llm_attn_decode, test_llm_e2e, test_llm_ppl on rm:0 and cuda:0), then tg128 at
# depth 0, 1024, 4096 (Q6_K, Q8_0) alternating. Logs a_*.
set -u
out=${1:?usage: s57.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/a_gpu.txt"
for t in test_llm_attn_decode test_llm_e2e test_llm_ppl; do
    HCQ_TEST_DEVS='rm:0 cuda:0' timeout 200 build/tests/$t >"$out/a_$t.txt" 2>&1
done
echo "tests: $(grep -hE "FAIL|passed" "$out"/a_test_*.txt | tr '\n' ' ')"
V=tests/data/tokenizers/ggml-vocab-gpt-2.gguf
for ty in q6_k q8_0; do
    build/nvhcq gen-model --preset llama-3.2-1b --type $ty --vocab $V -o /tmp/m_$ty.gguf >/dev/null 2>&1 || echo "gen $ty failed"
done
build/nvhcq llm-bench -m /tmp/m_q6_k.gguf -p 0 -n 128 -r 3 --dev rm:0 >/dev/null 2>&1 # warm
for ty in q6_k q8_0; do for r in 1 2; do for v in NVHCQ_AD_LONG=0 X=0; do
    x=$(env $v timeout 60 build/nvhcq llm-bench -m /tmp/m_$ty.gguf -p 0 -n 128 -d 0,1024,4096 -r 2 --dev rm:0 2>&1 | grep -E "tg|rror" | awk -F'|' '{printf "%s ", $(NF-1)}')
    echo "$ty r$r [$v] d0, d1024, d4096: $x"
done; done; done | tee "$out/a_tg.txt"
echo "== end $(($(date +%s) - t0)) s"
