#!/bin/bash
# (Session 17: the PB_CHAIN=counter* modes were removed after these calls; apply
# bench/final/patches/s126-chain-counter.patch to run them again.)
# s127.sh OUT - session 17 (either GPU; carry .commit; ~2 min): issue 13's graph row, PB_CHAIN=counterinc:
# every chained grid's dependence counter raised by the front end (PCAS INCREMENT_DEPENDENCE) before
# it is scheduled from the pushbuffer, released by its predecessor's DECREMENT_DEPENDENCE (s126: the
# QMD's own DEPENDENCE_COUNTER field is not what the hardware counts). Three alternating rounds of
# `bench latency --devs rm:0` against the default chain, the HCQ suite's chain/graph tests under it.
set -u
OUT=${1:?usage: s127.sh OUT}
mkdir -p "$OUT"
export T0=$(date +%s)
. bench/final/lib.sh
make -j16 CUARCH=90 >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/a_gpu.txt"
L="$OUT/log.txt"
lat() {
    local n=$1; shift
    env "$@" timeout 60 build/nvhcq bench latency --devs rm:0 >/tmp/lat.txt 2>&1
    local rc=$?
    cat /tmp/lat.txt >>"$L"
    echo "[$n] rc=$rc"
    grep -E "launch_sync|back_to_back|graph_300|dep_chain|dep_step|rror|FAIL" /tmp/lat.txt | tr -s ' ' | cut -c1-300 |
        sed "s/^/  $n /"
}
klog() { dmesg | tail -n 400 | grep -E "NVRM: Xid" | tail -n 6 | cut -c1-300; }
{
    for r in 1 2 3; do
        lat base PB_CHAIN=all
        lat counterinc PB_CHAIN=counterinc
    done
    klog
    PB_CHAIN=counterinc timeout 120 build/tests/hcq_suite --dev rm:0 --klog exec_ graphs dep_wait kernel_ \
        update_copy prune cross_queue memory_barrier >"$OUT/t_suite_counterinc.txt" 2>&1
    echo "suite counterinc rc=$? $(grep -E "FAIL|passed" "$OUT/t_suite_counterinc.txt" | tr '\n' ' ' | cut -c1-400)"
    klog
    echo "== end $(($(date +%s) - T0)) s"
} 2>&1 | tee "$OUT/a_summary.txt"
