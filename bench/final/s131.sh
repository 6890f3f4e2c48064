#!/bin/bash
# s131.sh OUT - session 17 (either GPU; carry .llqb .commit; ~6 min): (1) the O projection as row
# pairs (NVHCQ_O_PAIRS=1: 128 CTAs instead of 256, all loading before the PDL wait, so gate|up's
# CTAs fit beside them - the session's napkin analysis) against the default, tg128 alternating two
# rounds on Q8_0, Q4_0, Q6_K, Q4_K_M, a profile of each on Q8_0, the LLM e2e suite on rm:0 under it;
# (2) the device's queue-lifetime lock (hcq_device_synchronize / pb_drain_all vs a queue destroyed by
# another thread): the whole HCQ suite on rm:0 with --klog.
set -u
OUT=${1:?usage: s131.sh OUT}
mkdir -p "$OUT"
export T0=$(date +%s)
. bench/final/lib.sh
make -j16 CUARCH=90 >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/a_gpu.txt"
quant_files Q8_0 Q4_0 Q6_K Q4_K_M >"$OUT/quant.log" 2>&1
cat "$OUT/quant.log"
cell() { env "$@" timeout 60 build/nvhcq llm-bench -m "$F" -p 0 -n 128 -r 3 --dev rm:0 2>&1 | grep -E "tg|rror" | awk -F'|' '{printf "%s ", $(NF-1)}'; }
for r in 1 2; do for ty in Q8_0 Q4_0 Q6_K Q4_K_M; do
    F=/tmp/q/$ty.gguf
    echo "$ty r$r [base] tg128: $(cell NVHCQ_O_PAIRS=0)"
    echo "$ty r$r [pairs] tg128: $(cell NVHCQ_O_PAIRS=1)"
done; done 2>&1 | tee "$OUT/a_tg.txt"
echo "== tg done $(($(date +%s) - T0)) s"
{ profile_row build/nvhcq /tmp/q/Q8_0.gguf Q8_0 base
  NVHCQ_O_PAIRS=1 profile_row build/nvhcq /tmp/q/Q8_0.gguf Q8_0 pairs; } >"$OUT/a_profile.txt" 2>&1
grep -E "profile|o\+res|gate|down" "$OUT/a_profile.txt"
NVHCQ_O_PAIRS=1 HCQ_TEST_DEVS='rm:0' timeout 120 build/tests/test_llm_e2e >"$OUT/t_e2e_pairs.txt" 2>&1
echo "test_llm_e2e rm:0 pairs rc=$? $(grep -E "FAIL|passed" "$OUT/t_e2e_pairs.txt" | tr '\n' ' ')"
timeout 150 build/tests/hcq_suite --dev rm:0 --klog >"$OUT/t_suite.txt" 2>&1
echo "hcq_suite rm:0 rc=$? $(grep -E "FAIL|passed" "$OUT/t_suite.txt" | tr '\n' ' ')"
dmesg | grep -E "NVRM: Xid" | tail -n 5 | cut -c1-300
echo "== end $(($(date +%s) - T0)) s"
