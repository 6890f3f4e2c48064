#!/bin/bash
# s59.sh OUT - session 10's first call (nvidia-h100-x1, carry .anchor and .commit; ~10 min):
# `bench latency` with GPGet read on every kick (PB_GPGET_READ=1, the old way) vs the cached
# GPGet (default now), alternating, rm:0 and cuda:0 rows, nothing else running; then
# llama.cpp builds in the background while the whole `make test-gpu` runs (last whole H100
# run: session 4); then the same-file comparison with depths 0 and 4096 (rm:0) in the time
# left. Logs a_*; llama.cpp stays in /tmp/ll for a follow-up call on the same warm machine.
set -u
out=${1:?usage: s59.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader | tee "$out/a_gpu.txt"
for r in 1 2 3; do for v in PB_GPGET_READ=1 X=0; do
    echo "-- latency r$r [$v]"
    env $v timeout 60 build/nvhcq bench latency --devs rm:0,cuda:0 2>&1 | grep -E "launch_sync|back_to_back|graph_300|dep_chain|signal_round" | cut -c1-130
done; done | tee "$out/a_latency.txt"
echo "== latency done $(($(date +%s) - t0)) s"
ll=/tmp/ll
if [ ! -x $ll/b/bin/llama-bench ]; then
    (bash .anchor/llamacpp/build.sh $ll 90 >"$out/llbuild.log" 2>&1; echo "llama.cpp build rc=$? after $(($(date +%s) - t0)) s" >>"$out/llbuild.log") &
    bp=$!
fi
SKIP_SUITES="llama3_vocab qwen2_vocab command_r_vocab" timeout 380 make test-gpu CUARCH=90 >"$out/a_test_gpu.txt" 2>&1
echo "make test-gpu rc=$? after $(($(date +%s) - t0)) s"
grep -E "FAIL|total" "$out/a_test_gpu.txt" | tail -8
[ -n "${bp:-}" ] && wait $bp
tail -1 "$out/llbuild.log" 2>/dev/null
B=$ll/b/bin
[ -x $B/llama-bench ] || { echo "no llama-bench"; exit 1; }
left=$((585 - ($(date +%s) - t0)))
NVHCQ_COMMIT=$(cat .commit 2>/dev/null) DEVS="rm:0" TYPES="Q4_K_M Q6_K Q8_0" REPS=2 DEPTHS=0,4096 \
    timeout $left bash bench/vs-llamacpp.sh $B "$out/vs" >"$out/vs.log" 2>&1
echo "vs rc=$?"
cp "$out/vs/vs-llamacpp.md" "$out/a_vs.md" 2>/dev/null
grep -E "^\|" "$out/vs/vs-llamacpp.md" 2>/dev/null | head -40 || tail -20 "$out/vs.log"
echo "== end $(($(date +%s) - t0)) s"
