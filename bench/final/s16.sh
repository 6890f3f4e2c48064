#!/bin/bash
# s16.sh OUT - session 5: pdl_vs_serial on rm:0 12 times (whole output of any failure), then the
# latency group's dep_step rows (each replay checks every link).
set -u
out=${1:?usage: s16.sh OUT}
mkdir -p "$out"
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
export HCQ_TEST_DEVS="rm:0"
for i in $(seq 1 12); do
    timeout 60 build/tests/test_llm_e2e pdl_vs_serial >"$out/r$i.log" 2>&1
    if grep -q "FAIL" "$out/r$i.log"; then echo "== run $i FAILED"; grep -vE "skipped|^    cpu|emu:" "$out/r$i.log" | head -30; else echo "run $i ok"; rm "$out/r$i.log"; fi
done
unset HCQ_TEST_DEVS
timeout 100 build/nvhcq bench latency --devs rm:0 2>&1 | grep -E "dep_step|FAIL|ERROR"
