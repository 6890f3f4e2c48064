#!/bin/bash
# s188.sh OUT - session 25 (ask for an H200; carry .commit; ~5 min): which pages back pinned host
# memory (HCQ_RM_HOST_PAGES=shared|private|huge, rm_mem.c): `bench alloc` host rows for each on
# rm:0, cuda:0 beside, and the kernel's THP settings; then the HCQ suite on rm:0 with the kernel
# log and test_llm_e2e under private and huge. On an H200 s180.sh first.
set -u
OUT=${1:?usage: s188.sh OUT}
mkdir -p "$OUT"
. bench/final/lib.sh
h200_first
export T0=$(date +%s)
{
[ -x build/nvhcq ] || call_build || exit 1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
uname -r; echo "THP: $(cat /sys/kernel/mm/transparent_hugepage/enabled) shmem: $(cat /sys/kernel/mm/transparent_hugepage/shmem_enabled)"
for v in shared private huge shared huge; do
    HCQ_RM_HOST_PAGES=$v timeout 150 build/nvhcq bench alloc --devs rm:0 --json "$OUT/a_alloc_$v.json" 2>&1 | grep -E "^alloc.*host|rror" | sed "s/^/[$v] /"
done
timeout 150 build/nvhcq bench alloc --devs cuda:0 2>&1 | grep -E "^alloc.*host|rror" | sed "s/^/[cuda] /"
grep -E "AnonHugePages|ShmemHugePages" /proc/meminfo
for v in private huge; do
    HCQ_RM_HOST_PAGES=$v timeout 150 build/tests/hcq_suite --dev rm:0 --klog >"$OUT/a_suite_$v.txt" 2>&1
    echo "[$v] hcq_suite rm:0 --klog rc=$? $(grep -E "FAIL" "$OUT/a_suite_$v.txt" | head -3 | tr '\n' ' ') $(tail -1 "$OUT/a_suite_$v.txt")"
    HCQ_RM_HOST_PAGES=$v HCQ_TEST_DEVS=rm:0 timeout 120 build/tests/test_llm_e2e >"$OUT/a_e2e_$v.txt" 2>&1
    echo "[$v] test_llm_e2e rm:0 rc=$? $(grep -E "FAIL" "$OUT/a_e2e_$v.txt" | head -3 | tr '\n' ' ') $(tail -1 "$OUT/a_e2e_$v.txt")"
done
call_end
} 2>&1 | tee "$OUT/a_s188.txt"
