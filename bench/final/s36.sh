#!/bin/bash
# s36.sh OUT - for branch p1-default (session 7, not run yet): the one-pass prologue with
# evict-first weights as k_llm_matvec_q8's default and in the persistent decode kernel (so
# persistent_vs_per_kernel stays bit-identical). Checks: test_llm_matvec, test_llm_e2e on rm:0
# and cuda:0 (must be 16/0: persistent_vs_per_kernel is the one that failed for p1ef on main),
# then tg128 default vs NVHCQ_MVQ=p2 (main's default), two rounds. Merge the branch if the
# tests pass and the default is not slower (s35 on main: p1ef +0.8-1.5%).
set -u
out=${1:?usage: s36.sh OUT}
mkdir -p "$out"
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
echo "matvec: $(HCQ_TEST_DEVS='rm:0 cuda:0' timeout 150 build/tests/test_llm_matvec 2>&1 | grep -E "FAIL|passed" | tr '\n' ' ')"
echo "e2e: $(HCQ_TEST_DEVS='rm:0 cuda:0' timeout 200 build/tests/test_llm_e2e 2>&1 | grep -E "FAIL|NMSE [1-9]|passed" | tr '\n' ' ')"
V=tests/data/tokenizers/ggml-vocab-gpt-2.gguf
for ty in q6_k q4_k q8_0; do
    build/nvhcq gen-model --preset llama-3.2-1b --type $ty --vocab $V -o /tmp/m_$ty.gguf >/dev/null 2>&1 || echo "gen $ty failed"
done
for round in 1 2; do for ty in q6_k q4_k q8_0; do for v in "X=default" "NVHCQ_MVQ=p2"; do
    r=$(env $v timeout 40 build/nvhcq llm-bench -m /tmp/m_$ty.gguf -p 0 -n 128 -r 3 --dev rm:0 2>&1 | grep -E "tg128|rror" | tail -1 | awk -F'|' '{print $(NF-1)}')
    echo "r$round $ty [$v] $r"
done; done; done
