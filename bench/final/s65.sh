#!/bin/bash
# s65.sh OUT - session 10's last verification call (nvidia-h100-x1, carry .commit; ~8.5 min): the
# segment-end QMD release without its own membar is the default now. `bench latency` default vs
# PB_END_QMD_RELEASE_MEMBAR=1 vs PB_END_QMD_RELEASE=0, two alternating rounds, nothing else
# running; then the whole `make test-gpu` on this tree. Logs a_*.
set -u
out=${1:?usage: s65.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/a_gpu.txt"
for r in 1 2; do for v in X=0 PB_END_QMD_RELEASE_MEMBAR=1 PB_END_QMD_RELEASE=0; do
    echo "-- latency r$r [$v]"
    env $v timeout 60 build/nvhcq bench latency --devs rm:0,cuda:0 2>&1 | grep -E "launch_sync|back_to_back|graph_300|dep_chain|signal_round|copy_to" | cut -c1-130
done; done | tee "$out/a_latency.txt"
echo "== latency done $(($(date +%s) - t0)) s"
SKIP_SUITES="llama3_vocab qwen2_vocab command_r_vocab" timeout 420 make test-gpu CUARCH=90 >"$out/a_test_gpu.txt" 2>&1
echo "make test-gpu rc=$? after $(($(date +%s) - t0)) s"
grep -E "FAIL|total" "$out/a_test_gpu.txt" | tail -8
dmesg 2>/dev/null | grep -iE "xid" | tail -4
echo "== end $(($(date +%s) - t0)) s"
