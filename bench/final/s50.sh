#!/bin/bash
# s50.sh OUT - session 9 (~5 min, either GPU): the TF32 tensor-core prefill attention
# (k_llm_attn_mma, _hd128). Checks: test_llm_attn_prefill (both kernels vs double, bound 5e-3
# for TF32) and test_llm_e2e on rm:0 and cuda:0. Then, A/B alternating in one process order on
# the same file (LLaMA-3.2-1B shapes, Q6_K): pp512 at depth 0, 1024, 4096 and pp2048 with the
# f32 tile kernel (NVHCQ_ATTN=tile) and the default (mma), rm:0; cuda:0 once each.
set -u
out=${1:?usage: s50.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
HCQ_TEST_DEVS='rm:0 cuda:0' timeout 120 build/tests/test_llm_attn_prefill 2>&1 | grep -E "worst|FAIL|fail|passed" | head -12
echo "e2e: $(HCQ_TEST_DEVS='rm:0 cuda:0' timeout 200 build/tests/test_llm_e2e 2>&1 | grep -E "FAIL|passed" | tr '\n' ' ')"
V=tests/data/tokenizers/ggml-vocab-gpt-2.gguf
build/nvhcq gen-model --preset llama-3.2-1b --type q6_k --vocab $V -o /tmp/m_q6_k.gguf >/dev/null 2>&1 || echo "gen failed"
echo "== tests done $(($(date +%s) - t0)) s"
for r in 1 2; do for v in NVHCQ_ATTN=tile X=0; do
    echo "-- rm:0 r$r [$v]"
    env $v timeout 90 build/nvhcq llm-bench -m /tmp/m_q6_k.gguf -p 512 -n 0 -d 0,1024,4096 -r 3 --dev rm:0 2>&1 | grep -E "pp|rror" | cut -c1-150
    env $v timeout 60 build/nvhcq llm-bench -m /tmp/m_q6_k.gguf -p 2048 -n 0 -r 3 --dev rm:0 2>&1 | grep -E "pp|rror" | cut -c1-150
done; done
for v in NVHCQ_ATTN=tile X=0; do
    echo "-- cuda:0 [$v]"
    env $v timeout 90 build/nvhcq llm-bench -m /tmp/m_q6_k.gguf -p 512 -n 0 -d 0,4096 -r 3 --dev cuda:0 2>&1 | grep -E "pp|rror" | cut -c1-150
done
echo "== end $(($(date +%s) - t0)) s"
