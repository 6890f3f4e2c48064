#!/bin/bash
# (Session 17: the PB_CHAIN=counter* modes were removed after these calls; apply
# bench/final/patches/s126-chain-counter.patch to run them again.)
# s126.sh OUT - session 17 (either GPU; carry .commit; ~3 min): issue 13's graph row.
# (1) the fault text of s125's PB_CHAIN=counter (grids scheduled one early by DEPENDENT_QMD1, held by
# DEPENDENCE_COUNTER, released by DECREMENT_DEPENDENCE) with and without the decrement's prefetch;
# (2) PB_CHAIN=counterpb (every chained grid scheduled from the pushbuffer, counter 1, released by
# its predecessor's DECREMENT_DEPENDENCE + prefetch, as the CUDA driver's QMD slot 0 reads) against
# the default chain, three alternating rounds, then the HCQ suite's chain/graph tests under it;
# (3) QMD fields nvhcq does not write, one `bench latency` each between base runs (PB_QMD_FIELDS).
set -u
OUT=${1:?usage: s126.sh OUT}
mkdir -p "$OUT"
export T0=$(date +%s)
. bench/final/lib.sh
make -j16 CUARCH=90 >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/a_gpu.txt"
L="$OUT/log.txt"
lat() { # NAME ENV... : one bench latency run, rows of interest
    local n=$1; shift
    env "$@" timeout 60 build/nvhcq bench latency --devs rm:0 >/tmp/lat.txt 2>&1
    local rc=$?
    cat /tmp/lat.txt >>"$L"
    echo "[$n] rc=$rc"
    grep -E "launch_sync|back_to_back|graph_300|dep_chain|dep_step|rror|FAIL" /tmp/lat.txt | tr -s ' ' | cut -c1-700 |
        sed "s/^/  $n /"
}
klog() { dmesg | tail -n 400 | grep -E "NVRM: Xid|SKED|GR|ESR|exception" | tail -n 6 | cut -c1-300; }
{
    dmesg | tail -n 1 >/dev/null
    lat counter PB_CHAIN=counter
    klog
    lat counter_decpf PB_CHAIN=counter PB_CHAIN_DEC_PF=1
    klog
    for r in 1 2 3; do
        lat base PB_CHAIN=all
        lat counterpb PB_CHAIN=counterpb
    done
    klog
    PB_CHAIN=counterpb timeout 90 build/tests/hcq_suite --dev rm:0 --klog exec_ graphs dep_wait kernel_axpb \
        kernel_dep_step update_copy prune >"$OUT/t_suite_counterpb.txt" 2>&1
    echo "suite counterpb rc=$? $(grep -E "FAIL|passed" "$OUT/t_suite_counterpb.txt" | tr '\n' ' ' | cut -c1-400)"
    echo "== counter done $(($(date +%s) - T0)) s"
    for f in DISABLE_AUTO_INVALIDATE=1 SAMPLER_INDEX=0 API_VISIBLE_CALL_LIMIT=0 PROGRAM_PREFETCH_TYPE=1 \
        PROGRAM_PREFETCH_TYPE=2 CTA_LAUNCH_QUEUE=1 SHARED_ALLOCATION_ENABLE=1 QMD_GROUP_ID=0 \
        CONSTANT_BUFFER_PREFETCH_PRE_MAX_SIZE_SHIFTED8=4 SYNC_DOMAIN_ID=1; do
        [ $(($(date +%s) - T0)) -gt 400 ] && break
        lat "$f" PB_QMD_FIELDS=$f
        lat base PB_CHAIN=all
    done
    klog
    echo "== end $(($(date +%s) - T0)) s"
} 2>&1 | tee "$OUT/a_summary.txt" | grep -E "graph_300|rc=|==|suite|Xid|error" | cut -c1-330
