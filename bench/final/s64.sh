#!/bin/bash
# s64.sh OUT - session 10 (~2.5 min, carry .commit): launch + sync with the segment's QMD release
# without its own membar (PB_END_QMD_RELEASE_MEMBAR=0, the CUDA driver's combination: the grid's
# L1_SYSMEMBAR, a release with FE_NONE) vs the default (FE_SYSMEMBAR), three alternating rounds;
# then the hcq suite on rm:0 with it. Logs a_*.
set -u
out=${1:?usage: s64.sh OUT}
mkdir -p "$out"
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/a_gpu.txt"
for r in 1 2 3; do for v in X=0 PB_END_QMD_RELEASE_MEMBAR=0; do
    echo "-- latency r$r [$v]"
    env $v timeout 60 build/nvhcq bench latency --devs rm:0,cuda:0 2>&1 | grep -E "launch_sync|back_to_back|graph_300|signal_round|copy_to" | cut -c1-130
done; done | tee "$out/a_latency.txt"
PB_END_QMD_RELEASE_MEMBAR=0 timeout 200 build/tests/hcq_suite --dev rm:0 >"$out/a_suite.txt" 2>&1
echo "suite rm:0 [PB_END_QMD_RELEASE_MEMBAR=0]: $(grep -E "FAIL|passed" "$out/a_suite.txt" | tr '\n' ' ')"
