#!/bin/bash
# gpu4.sh OUT - session 4 (as gpu3.sh, with the prefill attention test)'s measurement call (one device call, ~8 min on 16 cores): builds the
# llama.cpp anchor (.anchor/llamacpp, carried) in the background while nvhcq builds and its GPU
# LLM tests run, then the same-file comparison (bench/vs-llamacpp.sh: llama-quantize'd Q4_K_M,
# Q6_K, Q8_0 of one gen-model f16 file; llama-bench -fa 1 -ngl 99 vs nvhcq llm-bench on rm:0 and
# cuda:0) and decode at depth (both engines), plus the per-kernel profile.
set -u
out=${1:?usage: gpu3.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
ll=/tmp/ll
(bash .anchor/llamacpp/build.sh $ll 90 >"$out/llbuild.log" 2>&1; echo "llama.cpp build rc=$? after $(($(date +%s) - t0)) s" >>"$out/llbuild.log") &
bp=$!
make -j8 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
echo "== nvhcq built $(($(date +%s) - t0)) s"
for t in test_llm_matvec test_llm_attn_decode test_llm_attn_prefill test_llm_e2e test_llm_real; do
    HCQ_TEST_DEVS="rm:0 cuda:0" timeout 150 build/tests/$t 2>&1 | grep -E "FAIL|passed|rm:0|cuda:0" | tail -8
done >"$out/tests.log" 2>&1
grep -E "passed|FAIL" "$out/tests.log"
wait $bp
tail -2 "$out/llbuild.log"
B=$ll/b/bin
[ -x $B/llama-bench ] || { echo "no llama.cpp"; exit 1; }
echo "== compare $(($(date +%s) - t0)) s"
REPS=${REPS:-3} bash bench/vs-llamacpp.sh $B "$out/vs" 2>&1 | tail -3
cat "$out/vs/vs-llamacpp.md" 2>/dev/null | head -40
m=$out/vs/models/llama-3.2-1b-Q6_K.gguf
echo "== depth $(($(date +%s) - t0)) s"
timeout 100 $B/llama-bench -m $m -fa 1 -ngl 99 -p 0 -n 64 -r 2 -d 0,1024,4096 2>&1 | grep -E "tg|error" | tail -4
timeout 100 build/nvhcq llm-bench -m $m -p 0 -n 64 -r 2 -d 0,1024,4096 --dev rm:0 2>&1 | grep -E "tg" | tail -4
timeout 60 build/nvhcq llm-bench -m $m -p 0 -n 64 -r 2 --profile --dev rm:0 >"$out/profile.md" 2>&1
grep -A12 "^profile" "$out/profile.md" | head -14
echo "gpu4 done after $(($(date +%s) - t0)) s"
