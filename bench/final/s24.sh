#!/bin/bash
# s24.sh OUT - session 6, H100: latch ids back to 1..65535 (default); the e2e PDL A/Bs
# (pdl_vs_serial, rope_fused_vs_own_launch, persistent_vs_per_kernel) with the default body and
# the one-pass prologue (p1), then the whole e2e suite with p1, then the random 32-bit start
# (PB_PDL_LATCH=rand) last.
set -u
out=${1:?usage: s24.sh OUT}
mkdir -p "$out"
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
t() { timeout 150 build/tests/test_llm_e2e pdl_vs_serial rope_fused_vs_own_launch persistent_vs_per_kernel 2>&1 | grep -E "(rm|cuda):0 .*NMSE|step 1|passed" | tr '\n' ' ' | sed 's/  */ /g'; echo; }
for i in 1 2; do echo "default: $(HCQ_TEST_DEVS=rm:0 t)"; done
for i in 1 2; do echo "p1: $(NVHCQ_MVQ=p1 HCQ_TEST_DEVS=rm:0 t)"; done
echo "p1 whole e2e: $(NVHCQ_MVQ=p1 HCQ_TEST_DEVS=rm:0 timeout 200 build/tests/test_llm_e2e 2>&1 | grep -E 'FAIL|passed' | tr '\n' ' ')"
echo "default whole e2e: $(HCQ_TEST_DEVS=rm:0 timeout 200 build/tests/test_llm_e2e 2>&1 | grep -E 'FAIL|passed' | tr '\n' ' ')"
echo "rand: $(PB_PDL_LATCH=rand HCQ_TEST_DEVS=rm:0 t)"
echo "default after rand: $(HCQ_TEST_DEVS=rm:0 t)"
