#!/bin/bash
# s15.sh OUT - session 5: why does test_llm_e2e pdl_vs_serial fail on H100 rm:0 after the uniform
# carve-out (passed before it, and on H200 after it)? Its whole output under each setting.
set -u
out=${1:?usage: s15.sh OUT}
mkdir -p "$out"
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
export HCQ_TEST_DEVS="rm:0"
for v in "X=1" "X=2" "HCQ_SM_CARVEOUT_KIB=0" "NVHCQ_MVQ=cg" "NVHCQ_AD_HEAD_MAX=0"; do
    echo "== $v"
    env $v timeout 60 build/tests/test_llm_e2e pdl_vs_serial 2>&1 | grep -vE "skipped|^    cpu|emu:" | head -12
done
echo "== cuda:0"
HCQ_TEST_DEVS="cuda:0" timeout 60 build/tests/test_llm_e2e pdl_vs_serial 2>&1 | grep -vE "skipped|^    cpu|emu:" | head -8
