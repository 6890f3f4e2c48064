#!/bin/bash
# s41.sh OUT - session 8: the q8 mat-vec with its body compiled per weight type
# (NVHCQ_MVQ=ts: no type switch per pass for launches of one type) against the default,
# tg128 rm:0, three types, two rounds alternating; e2e with it; its in-situ profile.
set -u
out=${1:?usage: s41.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "e2e ts: $(NVHCQ_MVQ=ts HCQ_TEST_DEVS='rm:0 cuda:0' timeout 200 build/tests/test_llm_e2e 2>&1 | grep -E "FAIL|passed" | tr '\n' ' ')"
V=tests/data/tokenizers/ggml-vocab-gpt-2.gguf
for ty in q6_k q4_k q8_0; do
    build/nvhcq gen-model --preset llama-3.2-1b --type $ty --vocab $V -o /tmp/m_$ty.gguf >/dev/null 2>&1 || echo "gen $ty failed"
done
build/nvhcq llm-bench -m /tmp/m_q6_k.gguf -p 0 -n 128 -r 5 --dev rm:0 >/dev/null 2>&1
echo "== tests done $(($(date +%s) - t0)) s"
for r in 1 2 3; do for ty in q6_k q4_k q8_0; do for v in X=0 NVHCQ_MVQ=ts; do
    x=$(env $v timeout 40 build/nvhcq llm-bench -m /tmp/m_$ty.gguf -p 0 -n 128 -r 3 --dev rm:0 2>&1 | grep -E "tg128|rror" | tail -1 | awk -F'|' '{print $(NF-1)}')
    echo "tg128 r$r $ty [$v] $x"
done; done; done
for v in X=0 NVHCQ_MVQ=ts; do
echo "-- profile [$v]"
env $v timeout 60 build/nvhcq llm-bench -m /tmp/m_q6_k.gguf -p 0 -n 128 -r 3 --profile --dev rm:0 2>&1 | grep -E "^\| [a-z]|profile:" | head -12
done
echo "== end $(($(date +%s) - t0)) s"
