#!/bin/bash
# s25.sh OUT - session 6, H100: activations through __ldg again (default) - is the e2e suite
# green on rm:0 again? The one-pass prologue with x/y through L2 (NVHCQ_MVQ=p1cg): e2e PDL A/Bs
# and tg128 against the default, same call.
set -u
out=${1:?usage: s25.sh OUT}
mkdir -p "$out"
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
t() { timeout 150 build/tests/test_llm_e2e pdl_vs_serial rope_fused_vs_own_launch persistent_vs_per_kernel 2>&1 | grep -E "(rm|cuda):0 .*NMSE|step 1|passed" | tr '\n' ' ' | sed 's/  */ /g'; echo; }
echo "default whole e2e: $(HCQ_TEST_DEVS=rm:0 timeout 200 build/tests/test_llm_e2e 2>&1 | grep -E 'FAIL|passed' | tr '\n' ' ')"
echo "default: $(HCQ_TEST_DEVS=rm:0 t)"
for i in 1 2; do echo "p1cg: $(NVHCQ_MVQ=p1cg HCQ_TEST_DEVS=rm:0 t)"; done
HCQ_TEST_DEVS="rm:0" timeout 120 build/tests/test_llm_matvec 2>&1 | grep -E "q8_p1cg|FAIL|passed" | grep -v "^    cpu"
V=tests/data/tokenizers/ggml-vocab-gpt-2.gguf
for ty in q6_k q4_k q8_0; do
    build/nvhcq gen-model --preset llama-3.2-1b --type $ty --vocab $V -o /tmp/m_$ty.gguf >/dev/null 2>&1 || echo "gen $ty failed"
done
for round in 1 2; do
    for ty in q6_k q4_k q8_0; do
        for v in "X=0" "NVHCQ_MVQ=p1cg"; do
            r=$(env $v timeout 60 build/nvhcq llm-bench -m /tmp/m_$ty.gguf -p 0 -n 128 -r 3 --dev rm:0 2>&1 | grep -E "tg128|rror" | tail -1 | awk -F'|' '{print $(NF-1)}')
            echo "r$round $ty [$v] $r"
        done
    done
done
