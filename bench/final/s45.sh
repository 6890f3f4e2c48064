#!/bin/bash
# s45.sh OUT - session 8: the decode attention launched with only the CTAs that work (grid y =
# group size on the head path, a graph variable per step) against the fixed 8 x 32 grid
# (NVHCQ_AD_GRID=fixed). e2e on rm:0 and cuda:0, also with NVHCQ_AD_HEAD_MAX=16 so the 32-step
# tests cross from the head path to the split path inside one replayed graph; then tg128 rm:0
# A/B on three types, two rounds, and tg64 at depth 600 (crossing 640).
set -u
out=${1:?usage: s45.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "e2e: $(HCQ_TEST_DEVS='rm:0 cuda:0' timeout 200 build/tests/test_llm_e2e 2>&1 | grep -E "FAIL|passed" | tr '\n' ' ')"
echo "e2e head_max 16: $(NVHCQ_AD_HEAD_MAX=16 HCQ_TEST_DEVS='rm:0 cuda:0' timeout 200 build/tests/test_llm_e2e 2>&1 | grep -E "FAIL|passed" | tr '\n' ' ')"
V=tests/data/tokenizers/ggml-vocab-gpt-2.gguf
for ty in q6_k q4_k q8_0; do
    build/nvhcq gen-model --preset llama-3.2-1b --type $ty --vocab $V -o /tmp/m_$ty.gguf >/dev/null 2>&1 || echo "gen $ty failed"
done
build/nvhcq llm-bench -m /tmp/m_q6_k.gguf -p 0 -n 128 -r 5 --dev rm:0 >/dev/null 2>&1
echo "== tests done $(($(date +%s) - t0)) s"
for r in 1 2; do for ty in q6_k q4_k q8_0; do for v in X=0 NVHCQ_AD_GRID=fixed; do
    x=$(env $v timeout 40 build/nvhcq llm-bench -m /tmp/m_$ty.gguf -p 0 -n 128 -r 3 --dev rm:0 2>&1 | grep -E "tg128|rror" | tail -1 | awk -F'|' '{print $(NF-1)}')
    echo "tg128 r$r $ty [$v] $x"
done; done; done
for v in X=0 NVHCQ_AD_GRID=fixed; do
    x=$(env $v timeout 60 build/nvhcq llm-bench -m /tmp/m_q6_k.gguf -p 0 -n 64 -d 600 -r 3 --dev rm:0 2>&1 | grep -E "tg64|rror" | awk -F'|' '{printf "%s ", $(NF-1)}')
    echo "q6_k tg64 @600 [$v] $x"
done
echo "-- profile"
timeout 60 build/nvhcq llm-bench -m /tmp/m_q6_k.gguf -p 0 -n 128 -r 3 --profile --dev rm:0 2>&1 | grep -E "^\| [a-z]|profile:" | head -12
echo "== end $(($(date +%s) - t0)) s"
