#!/bin/bash
# next9.sh OUT - the first call of the session after session 9 (~9 min, nvidia-h100-x1; carry
# .anchor and .commit): the whole `make test-gpu` on the H100 (last whole H100 run: session 4;
# session 9 ran it twice on H200), offline vocab suites skipped, while llama.cpp builds; then the
# same-file comparison on the H100 with depths for the final tree (k_llm_attn_decode_long landed
# after s52's H100 comparison). Logs a_*.
set -u
out=${1:?usage: next9.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
ll=/tmp/ll
(bash .anchor/llamacpp/build.sh $ll 90 >"$out/llbuild.log" 2>&1; echo "llama.cpp build rc=$? after $(($(date +%s) - t0)) s" >>"$out/llbuild.log") &
bp=$!
make -j8 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/a_gpu.txt"
SKIP_SUITES="llama3_vocab qwen2_vocab command_r_vocab" timeout 400 make test-gpu CUARCH=90 >"$out/a_test_gpu.txt" 2>&1
echo "make test-gpu rc=$? after $(($(date +%s) - t0)) s"
grep -E "FAIL|total" "$out/a_test_gpu.txt" | tail -8
wait $bp
tail -1 "$out/llbuild.log"
B=$ll/b/bin
[ -x $B/llama-bench ] || { echo "no llama-bench"; exit 1; }
left=$((590 - ($(date +%s) - t0)))
NVHCQ_COMMIT=$(cat .commit 2>/dev/null) DEVS="rm:0" TYPES="Q4_K_M Q6_K Q8_0" REPS=2 DEPTHS=0,4096 \
    timeout $left bash bench/vs-llamacpp.sh $B "$out/vs" >"$out/vs.log" 2>&1
echo "vs rc=$?"
cp "$out/vs/vs-llamacpp.md" "$out/a_vs.md" 2>/dev/null
grep -E "^\|" "$out/vs/vs-llamacpp.md" 2>/dev/null | head -40 || tail -20 "$out/vs.log"
echo "== end $(($(date +%s) - t0)) s"
