#!/bin/bash
# s21.sh OUT - session 6, H100: the one-pass prologue (NVHCQ_MVQ=p1) on the GPU (unit test,
# e2e) and tg128 A/B against the default, same call, interleaved.
set -u
out=${1:?usage: s21.sh OUT}
mkdir -p "$out"
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
HCQ_TEST_DEVS="rm:0 cuda:0" timeout 120 build/tests/test_llm_matvec 2>&1 | grep -E "q8_p1|q8:|FAIL|passed" | grep -v "^    cpu"
NVHCQ_MVQ=p1 HCQ_TEST_DEVS="rm:0" timeout 120 build/tests/test_llm_e2e 2>&1 | grep -E "FAIL|passed" | tail -4
V=tests/data/tokenizers/ggml-vocab-gpt-2.gguf
for ty in q6_k q4_k q8_0; do
    build/nvhcq gen-model --preset llama-3.2-1b --type $ty --vocab $V -o /tmp/m_$ty.gguf >/dev/null 2>&1 || echo "gen $ty failed"
done
for round in 1 2; do
    for ty in q6_k q4_k q8_0; do
        for v in "X=0" "NVHCQ_MVQ=p1"; do
            r=$(env $v timeout 60 build/nvhcq llm-bench -m /tmp/m_$ty.gguf -p 0 -n 128 -r 3 --dev rm:0 2>&1 | grep -E "tg128|rror" | tail -1 | awk -F'|' '{print $(NF-1)}')
            echo "r$round $ty [$v] $r"
        done
    done
done
