#!/bin/bash
# s72.sh OUT - session 11 (~7 min, either GPU; carry .anchor and .commit): after the conflict-free
# x' slots of the decode mat-vecs and the TMA prefill GEMM as defaults. While llama.cpp builds:
# the LLM tests and the hcq suite on rm:0 / cuda:0 (correctness; nothing timed meanwhile). Then
# the same-file comparison (llama-quantize Q4_K_M / Q6_K / Q8_0; tg128, pp512) and pp2048 on the
# same files. Logs a_*.
set -u
out=${1:?usage: s72.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
ll=/tmp/ll
(bash .anchor/llamacpp/build.sh $ll 90 >"$out/llbuild.log" 2>&1; echo "llama.cpp build rc=$? after $(($(date +%s) - t0)) s" >>"$out/llbuild.log") &
bp=$!
make -j8 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/a_gpu.txt"
for t in test_llm_matvec test_llm_e2e test_llm_dequant test_llm_ppl; do
    HCQ_TEST_DEVS='rm:0 cuda:0' timeout 200 build/tests/$t >"$out/t_$t.txt" 2>&1
    echo "$t rc=$?"
done
timeout 200 build/tests/hcq_suite --dev rm:0 --klog >"$out/t_hcq_rm0.txt" 2>&1; echo "hcq_suite rm:0 rc=$?"
grep -hE "FAIL|passed" "$out"/t_*.txt | tee "$out/a_tests.txt"
wait $bp
tail -1 "$out/llbuild.log"
B=$ll/b/bin
[ -x $B/llama-bench ] || { echo "no llama-bench"; exit 1; }
NVHCQ_COMMIT=$(cat .commit 2>/dev/null) DEVS="rm:0" TYPES="Q4_K_M Q6_K Q8_0" REPS=3 \
    timeout 300 bash bench/vs-llamacpp.sh $B /tmp/vs1 >"$out/vs1.log" 2>&1
cp /tmp/vs1/vs-llamacpp.md "$out/a_vs.md"; cp /tmp/vs1/vs-llamacpp.json "$out/a_vs.json"
grep -E "^\|" /tmp/vs1/vs-llamacpp.md | head -20
mkdir -p /tmp/vs2 && ln -sfn /tmp/vs1/models /tmp/vs2/models
NVHCQ_COMMIT=$(cat .commit 2>/dev/null) DEVS="rm:0" TYPES="Q4_K_M Q6_K Q8_0" REPS=3 PP=2048 TG=0 \
    timeout 200 bash bench/vs-llamacpp.sh $B /tmp/vs2 >"$out/vs2.log" 2>&1
cp /tmp/vs2/vs-llamacpp.md "$out/a_vs_pp2048.md"; cp /tmp/vs2/vs-llamacpp.json "$out/a_vs_pp2048.json"
grep -E "^\|" /tmp/vs2/vs-llamacpp.md | head -20
echo "== end $(($(date +%s) - t0)) s"
