#!/bin/bash
# (Session 17: the PB_CHAIN=counter* modes were removed after these calls; apply
# bench/final/patches/s126-chain-counter.patch to run them again.)
# s125.sh OUT - session 17's first call (ask nvidia-h200; carry .anchor .llqb .commit; <= 9.5 min).
# On an H100 first (~90 s): issue 13's graph row with chained grids scheduled one grid early and
# held by a dependence counter (PB_CHAIN=counter, pb_chain_counter in pb_build.c) against the
# default chain, `bench latency --devs rm:0` three alternating rounds, then the HCQ suite's chain
# and graph tests on rm:0 under the counter chain (--klog). Then (either GPU) s120.sh: the LLM GPU
# tests on rm:0 / cuda:0 (first GPU run of the review mend bf0aa47) and the same-file comparison.
set -u
OUT=${1:?usage: s125.sh OUT}
mkdir -p "$OUT"
export T0=$(date +%s)
. bench/final/lib.sh
make -j16 CUARCH=90 >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/a_gpu.txt"
if ! grep -q H200 "$OUT/a_gpu.txt"; then
    for r in 1 2 3; do
        for v in base counter; do
            if [ $v = counter ]; then e="PB_CHAIN=counter"; else e="PB_CHAIN=all"; fi
            env $e timeout 60 build/nvhcq bench latency --devs rm:0 >"$OUT/lat_${v}_$r.txt" 2>&1
            echo "r$r $v rc=$?"
            grep -E "launch_sync|back_to_back|graph_300|dep_chain|dep_step|rror|FAIL" "$OUT/lat_${v}_$r.txt" |
                tr -s ' ' | cut -c1-120 | sed "s/^/  r$r $v /"
        done
    done | tee "$OUT/a_counter.txt"
    PB_CHAIN=counter timeout 90 build/tests/hcq_suite --dev rm:0 --klog exec_ graphs dep_wait kernel_axpb \
        kernel_dep_step update_copy prune >"$OUT/t_suite_counter.txt" 2>&1
    echo "suite counter rc=$? $(tail -1 "$OUT/t_suite_counter.txt")"
    echo "== counter done $(($(date +%s) - T0)) s"
fi
bash bench/final/s120.sh "$OUT"
