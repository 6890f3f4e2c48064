#!/bin/bash
# s183.sh OUT - session 24, prepared for the next session (either GPU; carry .commit; ~6 min): the
# driver's allocation path. s182 (H100) found a cold 256 MiB device allocation + free at 7.0 ms
# against CUDA's 0.39: NV_ESC_RM_MAP_MEMORY_DMA 4.9 ms and its unmap 1.8 ms - the RM mapping
# next to UVM's, asked for with 4 KiB PTEs (UVM's own mapping of the same range: 40 us). Two A/Bs
# against the default, each under the HCQ suite on rm:0 with the kernel log, test_llm_e2e on
# rm:0 and tg128 (the weights' mapping): HCQ_RM_DMA_MAP=0 (no RM mapping for GPU-only device memory) and
# HCQ_RM_MAP_HUGE=1 (the RM mapping in 2 MiB PTEs where the memory has them; session 8 found no
# decode difference on H200). Then `bench alloc` rows for each, cuda:0 beside.
set -u
OUT=${1:?usage: s183.sh OUT}
mkdir -p "$OUT"
export T0=$(date +%s)
. bench/final/lib.sh
{
call_build || exit 1
gen_models q8_0 q4_k
for v in X=0 HCQ_RM_DMA_MAP=0 HCQ_RM_MAP_HUGE=1; do
    echo "== $v"
    env $v timeout 150 build/tests/hcq_suite --dev rm:0 --klog >"$OUT/a_suite_$v.txt" 2>&1
    echo "hcq_suite rm:0 --klog rc=$? $(grep -E "FAIL" "$OUT/a_suite_$v.txt" | head -3 | tr '\n' ' ') $(tail -1 "$OUT/a_suite_$v.txt")"
    env $v HCQ_TEST_DEVS=rm:0 timeout 120 build/tests/test_llm_e2e >"$OUT/a_e2e_$v.txt" 2>&1
    echo "test_llm_e2e rm:0 rc=$? $(grep -E "FAIL" "$OUT/a_e2e_$v.txt" | head -3 | tr '\n' ' ') $(tail -1 "$OUT/a_e2e_$v.txt")"
    for ty in q8_0 q4_k; do F=/tmp/m_$ty.gguf; echo "tg128 $ty [$v]: $(env_cell $v)"; done
    env $v timeout 100 build/nvhcq bench alloc --devs rm:0 2>&1 | grep -E "^alloc.*(cold|rror)" | sed "s/^/[$v] /"
done
timeout 100 build/nvhcq bench alloc --devs cuda:0 2>&1 | grep -E "^alloc.*(cold|rror)" | sed "s/^/[cuda] /"
call_end
} 2>&1 | tee "$OUT/a_s183.txt"
