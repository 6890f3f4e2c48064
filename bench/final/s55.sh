#!/bin/bash
# s55.sh OUT - session 9 (~4 min, either GPU): the three-phase split path of the decode
# attention (attn_decode_split2; NVHCQ_AD=s1 = the online-softmax split path before it).
# test_llm_attn_decode (both kernels, positions to 9000, GQA to 8) and test_llm_e2e on rm:0 and
# cuda:0; then tg128 at depth 0, 1024, 4096 (Q6_K, Q8_0) alternating, and the in-situ profile
# at depth 4096 for each. Logs a_*.
set -u
out=${1:?usage: s55.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/a_gpu.txt"
HCQ_TEST_DEVS='rm:0 cuda:0' timeout 200 build/tests/test_llm_attn_decode >"$out/a_attn_decode.txt" 2>&1
grep -E "worst.*(rm|cuda)|FAIL|passed" "$out/a_attn_decode.txt" | head -8
HCQ_TEST_DEVS='rm:0 cuda:0' timeout 200 build/tests/test_llm_e2e >"$out/a_e2e.txt" 2>&1
echo "e2e: $(grep -E "FAIL|passed" "$out/a_e2e.txt" | tr '\n' ' ')"
V=tests/data/tokenizers/ggml-vocab-gpt-2.gguf
for ty in q6_k q8_0; do
    build/nvhcq gen-model --preset llama-3.2-1b --type $ty --vocab $V -o /tmp/m_$ty.gguf >/dev/null 2>&1 || echo "gen $ty failed"
done
echo "== tests done $(($(date +%s) - t0)) s"
build/nvhcq llm-bench -m /tmp/m_q6_k.gguf -p 0 -n 128 -r 3 --dev rm:0 >/dev/null 2>&1 # warm
for ty in q6_k q8_0; do for r in 1 2; do for v in NVHCQ_AD=s1 X=0; do
    echo "-- $ty r$r [$v]"
    env $v timeout 60 build/nvhcq llm-bench -m /tmp/m_$ty.gguf -p 0 -n 128 -d 0,1024,4096 -r 2 --dev rm:0 2>&1 | grep -E "tg|rror" | cut -c1-120
done; done; done | tee "$out/a_tg.txt"
for v in NVHCQ_AD=s1 X=0; do
    echo "-- profile d4096 [$v]"
    env $v timeout 60 build/nvhcq llm-bench -m /tmp/m_q6_k.gguf -p 0 -n 32 -d 4096 -r 1 --profile --dev rm:0 2>&1 | grep -E "^\| [a-z]|profile:|step" | head -12
done | tee "$out/a_profile.txt"
echo "== end $(($(date +%s) - t0)) s"
