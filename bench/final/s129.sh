#!/bin/bash
# s129.sh OUT - session 17 (either GPU; carry .commit; ~3 min): the cuda backend sizing the context's
# stack at program load (cuCtxSetLimit), so that local_memory_growth_behind_wait no longer hangs on
# cuda:0 (s128: the launch that grew the context waited for a queue blocked on the host); the
# local-memory tests on cuda:0, then the whole HCQ suite on cuda:0, then the local-memory tests on
# rm:0 once more.
set -u
OUT=${1:?usage: s129.sh OUT}
mkdir -p "$OUT"
export T0=$(date +%s)
. bench/final/lib.sh
make -j16 CUARCH=90 >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/a_gpu.txt"
{
    timeout 100 build/tests/hcq_suite --dev cuda:0 local_memory kernel_stack >"$OUT/t_cuda_lmem.txt" 2>&1
    echo "cuda:0 local_memory rc=$? $(grep -E "FAIL|passed|ok " "$OUT/t_cuda_lmem.txt" | tr -s ' ' | tr '\n' ' ')"
    timeout 240 build/tests/hcq_suite --dev cuda:0 >"$OUT/t_cuda_suite.txt" 2>&1
    echo "cuda:0 suite rc=$? $(grep -E "FAIL|passed" "$OUT/t_cuda_suite.txt" | tr '\n' ' ')"
    timeout 100 build/tests/hcq_suite --dev rm:0 --klog local_memory kernel_stack >"$OUT/t_rm_lmem.txt" 2>&1
    echo "rm:0 local_memory rc=$? $(grep -E "FAIL|passed" "$OUT/t_rm_lmem.txt" | tr '\n' ' ')"
    dmesg | grep -E "NVRM: Xid" | tail -n 5 | cut -c1-300
    echo "== end $(($(date +%s) - T0)) s"
} 2>&1 | tee "$OUT/a_summary.txt"
