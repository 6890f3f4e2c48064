#!/bin/bash
# s27.sh OUT - session 6, H100: the final default (random-start latch ids, __ldg activations):
# chain tests, pdl_vs_serial x2, the mat-vec bodies, tg128 of three files.
set -u
out=${1:?usage: s27.sh OUT}
mkdir -p "$out"
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
timeout 60 build/tests/hcq_suite --dev rm:0 dep_wait_chain kernel_dep_step 2>&1 | tail -1
for i in 1 2; do HCQ_TEST_DEVS=rm:0 timeout 90 build/tests/test_llm_e2e pdl_vs_serial 2>&1 | tail -1; done
HCQ_TEST_DEVS="rm:0" timeout 120 build/tests/test_llm_matvec 2>&1 | tail -1
V=tests/data/tokenizers/ggml-vocab-gpt-2.gguf
for ty in q6_k q4_k q8_0; do
    build/nvhcq gen-model --preset llama-3.2-1b --type $ty --vocab $V -o /tmp/m_$ty.gguf >/dev/null 2>&1
    echo "$ty $(timeout 60 build/nvhcq llm-bench -m /tmp/m_$ty.gguf -p 0 -n 128 -r 3 --dev rm:0 2>&1 | grep -E "tg128|rror" | tail -1)"
done
