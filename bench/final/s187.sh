#!/bin/bash
# s187.sh OUT - session 25 (ask for an H200; carry .commit; ~6 min): small blocks as slots of
# slabs (pb_pool.c, HCQ_POOL_SLAB) against whole blocks: `bench alloc` (fresh rows: n live
# distinct buffers, each allocation timed) for HCQ_POOL_SLAB=0 and the default, cuda:0 beside
# (JSON); then at the default the HCQ suite on rm:0 with the kernel log, test_pool-like churn
# (stress_memory_churn), test_llm_e2e on rm:0 and tg128 for both. On an H200 s180.sh first.
set -u
OUT=${1:?usage: s187.sh OUT}
mkdir -p "$OUT"
. bench/final/lib.sh
h200_first
export T0=$(date +%s)
{
[ -x build/nvhcq ] || call_build || exit 1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
gen_models q8_0 q4_k
HCQ_POOL_SLAB=0 timeout 150 build/nvhcq bench alloc --devs rm:0 --json "$OUT/a_alloc_slab0.json" 2>&1 | grep -E "^alloc.*fresh|rror" | sed "s/^/[slab=0] /"
timeout 200 build/nvhcq bench alloc --devs rm:0,cuda:0 --json "$OUT/a_alloc.json" 2>&1 | grep -E "^alloc|rror"
timeout 200 build/tests/hcq_suite --dev rm:0 --klog >"$OUT/a_suite.txt" 2>&1
echo "hcq_suite rm:0 --klog rc=$? $(grep -E "FAIL" "$OUT/a_suite.txt" | head -3 | tr '\n' ' ') $(tail -1 "$OUT/a_suite.txt")"
timeout 120 build/tests/hcq_suite --dev rm:0 --klog --slow stress_memory_churn >"$OUT/a_churn.txt" 2>&1
echo "stress_memory_churn rc=$? $(grep -E "FAIL" "$OUT/a_churn.txt" | head -3 | tr '\n' ' ') $(tail -1 "$OUT/a_churn.txt")"
HCQ_TEST_DEVS=rm:0 timeout 120 build/tests/test_llm_e2e >"$OUT/a_e2e.txt" 2>&1
echo "test_llm_e2e rm:0 rc=$? $(grep -E "FAIL" "$OUT/a_e2e.txt" | head -3 | tr '\n' ' ') $(tail -1 "$OUT/a_e2e.txt")"
for v in HCQ_POOL_SLAB=0 X=1; do for ty in q8_0 q4_k; do F=/tmp/m_$ty.gguf; echo "tg128 $ty [$v]: $(env_cell $v)"; done; done
call_end
} 2>&1 | tee "$OUT/a_s187.txt"
