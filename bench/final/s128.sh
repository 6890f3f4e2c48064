#!/bin/bash
# s128.sh OUT - session 17 (either GPU; carry .commit; ~4 min): (1) the device-wide local-memory store
# (branch lmem): the HCQ suite on rm:0 with --klog (whole suite: every queue/graph/copy path) and the
# LLM e2e / attention tests on rm:0 (the kernels with stacks); (2) issue 13's graph row, three more
# QMD settings, one `bench latency` each between base runs: the QMD's local-memory size 0 (today every
# QMD asks for the queue's whole store per thread), barrier count 0, the per-kernel carve-out.
set -u
OUT=${1:?usage: s128.sh OUT}
mkdir -p "$OUT"
export T0=$(date +%s)
. bench/final/lib.sh
make -j16 CUARCH=90 >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/a_gpu.txt"
{
    timeout 200 build/tests/hcq_suite --dev rm:0 --klog >"$OUT/t_suite.txt" 2>&1
    echo "hcq_suite rm:0 rc=$? $(grep -E "FAIL|passed" "$OUT/t_suite.txt" | tr '\n' ' ' | cut -c1-500)"
    timeout 100 build/tests/hcq_suite --dev cuda:0 local_memory kernel_stack >"$OUT/t_suite_cuda.txt" 2>&1
    echo "hcq_suite cuda:0 (local_memory, kernel_stack) rc=$? $(grep -E "FAIL|passed" "$OUT/t_suite_cuda.txt" | tr '\n' ' ')"
    for t in test_llm_attn_decode test_llm_e2e; do
        HCQ_TEST_DEVS='rm:0' timeout 150 build/tests/$t >"$OUT/t_$t.txt" 2>&1
        echo "$t rc=$? $(grep -E "FAIL|passed" "$OUT/t_$t.txt" | tr '\n' ' ' | cut -c1-300)"
    done
    dmesg | grep -E "NVRM: Xid" | tail -n 5 | cut -c1-300
    echo "== tests done $(($(date +%s) - T0)) s"
    lat() {
        local n=$1; shift
        env "$@" timeout 60 build/nvhcq bench latency --devs rm:0 >/tmp/lat.txt 2>&1
        echo "[$n] rc=$?"
        grep -E "launch_sync|back_to_back|graph_300|dep_chain|dep_step|rror|FAIL" /tmp/lat.txt | tr -s ' ' |
            cut -c1-300 | sed "s/^/  $n /"
    }
    lat base PB_CHAIN=all
    for v in PB_QMD_FIELDS=SHADER_LOCAL_MEMORY_HIGH_SIZE=0 PB_QMD_FIELDS=BARRIER_COUNT=0 HCQ_SM_CARVEOUT_KIB=0; do
        [ $(($(date +%s) - T0)) -gt 480 ] && break
        lat "$v" "$v"
        lat base PB_CHAIN=all
    done
    dmesg | grep -E "NVRM: Xid" | tail -n 5 | cut -c1-300
    echo "== end $(($(date +%s) - T0)) s"
} 2>&1 | tee "$OUT/a_summary.txt"
