#!/bin/bash
# s62.sh OUT - session 10's verification call (nvidia-h100-x1, carry .commit; ~9 min): the kick
# (cached GPGet, read back after the doorbell) and the segment's value from its last QMD are the
# defaults now. `bench latency` default vs PB_END_QMD_RELEASE=0 vs PB_GPGET_READ=1, alternating,
# nothing else running; then the whole `make test-gpu` on the final tree; dmesg Xid lines
# (the deliberate fault tests make three). Logs a_*.
set -u
out=${1:?usage: s62.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/a_gpu.txt"
for r in 1 2; do for v in X=0 PB_END_QMD_RELEASE=0 PB_GPGET_READ=1; do
    echo "-- latency r$r [$v]"
    env $v timeout 60 build/nvhcq bench latency --devs rm:0,cuda:0 2>&1 | grep -E "launch_sync|back_to_back|graph_300|dep_chain|signal_round|copy_to" | cut -c1-130
done; done | tee "$out/a_latency.txt"
echo "== latency done $(($(date +%s) - t0)) s"
SKIP_SUITES="llama3_vocab qwen2_vocab command_r_vocab" timeout 420 make test-gpu CUARCH=90 >"$out/a_test_gpu.txt" 2>&1
echo "make test-gpu rc=$? after $(($(date +%s) - t0)) s"
grep -E "FAIL|total" "$out/a_test_gpu.txt" | tail -8
dmesg 2>/dev/null | grep -iE "xid" | tail -5
echo "== end $(($(date +%s) - t0)) s"
