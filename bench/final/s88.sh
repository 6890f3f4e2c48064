#!/bin/bash
# s88.sh OUT - A/B of patches/s88-acc-red.patch (either GPU; carry .llqb .commit; ~6 min): the
# mat-vec's ACC epilogue without bias (O + residual, down + residual: 32 launches per step) as
# one reduction in L2 (atomicAdd, compiled to RED: no return) instead of load y, add, store -
# the load is an L2 round trip after the sums, on every ACC launch's critical path. One writer
# per element, so y + a rounds as before (subnormals flushed: RED.F32 is FTZ). GPU tests of the
# patched build (test_llm_matvec has an ACC-without-bias case since session 13), then tg128
# alternating tree / patch on the five llama-quantize files, and Q8_0 profiles.
set -u
OUT=${1:?usage: s88.sh OUT}
mkdir -p "$OUT"
. bench/final/lib.sh
make -j16 CUARCH=90 >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
variant_build red bench/final/patches/s88-acc-red.patch || exit 1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/a_gpu.txt"
quant_files Q8_0 Q5_K_M Q4_0 Q6_K Q4_K_M
for t in test_llm_matvec test_llm_e2e; do
    (cd /tmp/v_red && HCQ_TEST_DEVS='rm:0 cuda:0' timeout 150 build/tests/$t) >"$OUT/t_$t.txt" 2>&1
    echo "red $t rc=$?"
done
echo "tests: $(grep -hE "FAIL|passed" "$OUT"/t_*.txt | tr '\n' ' ')" | tee "$OUT/a_tests.txt"
declare -A BIN=([base]=build/nvhcq [red]=/tmp/v_red/build/nvhcq)
for r in 1 2; do for ty in Q8_0 Q5_K_M Q4_0 Q6_K Q4_K_M; do for v in base red; do
    echo "$ty r$r [$v] tg128: $(tg_cell ${BIN[$v]} /tmp/q/$ty.gguf rm:0)"
done; done; done 2>&1 | tee "$OUT/a_tg.txt"
for v in base red; do
    echo "-- profile Q8_0 [$v]"
    timeout 60 ${BIN[$v]} llm-bench -m /tmp/q/Q8_0.gguf -p 0 -n 128 -r 1 --profile --dev rm:0 2>&1 | grep -E "^\|" | head -16
done >"$OUT/a_profile.txt" 2>&1
grep -E "profile|tg128|mv |attn" "$OUT/a_profile.txt"
echo "== end $(($(date +%s) - T0)) s"
