#!/bin/bash
# s23.sh OUT - session 6, H100: after the prologue's activations moved from __ldg
# (ld.global.nc) to coherent loads - do q4_k's PDL A/Bs agree again with the one-pass prologue
# (NVHCQ_MVQ=p1; s22 failed) and with the default? pdl_vs_serial, rope_fused_vs_own_launch,
# persistent_vs_per_kernel on rm:0 (random-start and from-1 latch ids) and cuda:0; then tg128.
set -u
out=${1:?usage: s23.sh OUT}
mkdir -p "$out"
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
t() { timeout 150 build/tests/test_llm_e2e pdl_vs_serial rope_fused_vs_own_launch persistent_vs_per_kernel 2>&1 | grep -E "(rm|cuda):0 .*NMSE|step 1|passed" | tr '\n' ' ' | sed 's/  */ /g'; echo; }
for i in 1 2; do echo "default, random ids: $(HCQ_TEST_DEVS=rm:0 t)"; done
for i in 1 2; do echo "p1, random ids: $(NVHCQ_MVQ=p1 HCQ_TEST_DEVS=rm:0 t)"; done
echo "p1, ids from 1: $(PB_PDL_LATCH=inc16 NVHCQ_MVQ=p1 HCQ_TEST_DEVS=rm:0 t)"
echo "p1 cuda:0: $(NVHCQ_MVQ=p1 HCQ_TEST_DEVS=cuda:0 t)"
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
