#!/bin/bash
# s181.sh OUT - session 24 (ask for an H200; carry .commit): on an H200, s180.sh (s164 + the HCQ
# suite on rm:0 with the kernel log + test_llm_e2e). On any other card: the new RM-object count
# (hcq_mem_stats.driver_objects) on real RM - the HCQ suite's mem_stats_driver_objects and
# stress_memory_churn (10,000 alloc/free; --slow runs the stress_ tests) on rm:0, churn on cuda:0.
set -u
OUT=${1:?usage: s181.sh OUT}
mkdir -p "$OUT"
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
    echo "H200: s180"; bash bench/final/s180.sh "$OUT"; exit
fi
export T0=$(date +%s)
. bench/final/lib.sh
{
echo "not an H200: driver_objects on real RM"
call_build || exit 1
TH_VERBOSE=0 build/tests/hcq_suite --dev rm:0 --klog --slow mem_stats_driver_objects mem_stats_driver_free stress_memory_churn close_frees_everything 2>&1 | tail -12
build/tests/hcq_suite --dev cuda:0 --slow mem_stats_driver_objects stress_memory_churn 2>&1 | tail -6
call_end
} 2>&1 | tee "$OUT/a_s181.txt"
