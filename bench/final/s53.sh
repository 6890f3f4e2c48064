#!/bin/bash
# s53.sh OUT - session 9, s52 for the H200 plus `bench gemm` and pp2048 (~7 min, carry .anchor and .commit): llama.cpp builds in the
# background while the correctness runs with cbuf0 prefetch on by default (hcq suite rm:0
# --klog, test_llm_attn_prefill, test_llm_e2e, test_llm_ppl; logs a_*); then, warm and with
# nothing compiling: `bench latency` default vs PB_CBUF0_PREFETCH=0 (rm:0, cuda:0 rows beside);
# then bench/vs-llamacpp.sh with DEPTHS=0,1024,4096 on Q4_K_M, Q6_K, Q8_0 (rm:0; tg128 and
# pp512 at each depth) - issue 12's pp at depth and issue 11's tg at depth on the same files.
set -u
out=${1:?usage: s53.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
ll=/tmp/ll
(bash .anchor/llamacpp/build.sh $ll 90 >"$out/llbuild.log" 2>&1; echo "llama.cpp build rc=$? after $(($(date +%s) - t0)) s" >>"$out/llbuild.log") &
bp=$!
make -j8 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/a_gpu.txt"
timeout 200 build/tests/hcq_suite --dev rm:0 --klog >"$out/a_suite_rm0.txt" 2>&1
echo "suite rm:0: $(grep -E "FAIL|passed" "$out/a_suite_rm0.txt" | tr '\n' ' ')"
HCQ_TEST_DEVS='rm:0 cuda:0' timeout 120 build/tests/test_llm_attn_prefill >"$out/a_attn.txt" 2>&1
grep -E "worst.*(rm|cuda)|FAIL|passed" "$out/a_attn.txt" | head -6
for t in test_llm_e2e test_llm_ppl; do
    HCQ_TEST_DEVS='rm:0 cuda:0' timeout 200 build/tests/$t >"$out/a_$t.txt" 2>&1
    echo "$t: $(grep -E "FAIL|passed" "$out/a_$t.txt" | tr '\n' ' ')"
done
echo "== tests done $(($(date +%s) - t0)) s"
wait $bp
tail -1 "$out/llbuild.log"
B=$ll/b/bin
for r in 1 2; do for v in X=0 PB_CBUF0_PREFETCH=0; do
    echo "-- latency r$r [$v]"
    env $v timeout 60 build/nvhcq bench latency --devs rm:0,cuda:0 2>&1 | grep -E "launch_sync|back_to_back|graph_300|dep_chain" | cut -c1-120
done; done | tee "$out/a_latency.txt"
[ -x $B/llama-bench ] || { echo "no llama-bench"; exit 1; }
left=$((590 - ($(date +%s) - t0)))
NVHCQ_COMMIT=$(cat .commit 2>/dev/null) DEVS="rm:0" TYPES="Q4_K_M Q6_K Q8_0" REPS=2 DEPTHS=0,1024,4096 \
    timeout $left bash bench/vs-llamacpp.sh $B "$out/vs" >"$out/vs.log" 2>&1
echo "vs rc=$?"
cp "$out/vs/vs-llamacpp.md" "$out/a_vs.md" 2>/dev/null
cp "$out/vs/vs-llamacpp.json" "$out/a_vs.json" 2>/dev/null
grep -E "^\|" "$out/vs/vs-llamacpp.md" 2>/dev/null | head -60 || tail -20 "$out/vs.log"
f=$(ls "$out"/vs/models/*[Qq]6_[Kk]*.gguf 2>/dev/null | head -1)
if [ -n "$f" ]; then # pp2048 on the same Q6_K file, both tools
    echo "pp2048 llama.cpp: $(timeout 60 $B/llama-bench -m "$f" -p 2048 -n 0 -fa 1 -ngl 99 -r 2 2>&1 | grep -E "pp2048" | tail -1)" | tee "$out/a_pp2048.txt"
    echo "pp2048 nvhcq rm:0: $(timeout 60 build/nvhcq llm-bench -m "$f" -p 2048 -n 0 -r 2 --dev rm:0 2>&1 | grep -E "pp2048" | tail -1)" | tee -a "$out/a_pp2048.txt"
fi
left=$((590 - ($(date +%s) - t0)))
[ $left -gt 40 ] && timeout $left build/nvhcq bench gemm --devs rm:0,cuda:0 2>&1 | grep -E "gemm_(b?f16) " | cut -c1-130 | tee "$out/a_gemm.txt"
echo "== end $(($(date +%s) - t0)) s"
