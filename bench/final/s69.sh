#!/bin/bash
# s69.sh OUT - **the next session's first call** (nvidia-h100-x1 or nvidia-h200, carry .anchor and
# .commit; ~9.5 min). Session 10 ended without device time for it: its last commits (the TMA GEMMs
# as the default, a graph's leading WFI, the LLM prefill GEMM on TMA behind NVHCQ_LLM_GEMM_TMA=1)
# ran on no GPU. Here: tensor maps against libcuda's; the whole `make test-gpu` while llama.cpp
# builds (the LLM TMA kernel is in test_llm_dequant's GPU rows); then, with nothing compiling,
# `bench gemm` and `bench latency` (default vs NVHCQ_GEMM=cpasync / PB_END_QMD_RELEASE=0), and
# pp512 / pp2048 / tg128 on the same files as llama.cpp with NVHCQ_LLM_GEMM_TMA=0 and 1. Logs a_*.
set -u
out=${1:?usage: s69.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
ll=/tmp/ll
(bash .anchor/llamacpp/build.sh $ll 90 >"$out/llbuild.log" 2>&1; echo "llama.cpp build rc=$? after $(($(date +%s) - t0)) s" >>"$out/llbuild.log") &
bp=$!
make -j8 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/a_gpu.txt"
cc -O2 -std=c11 -I/usr/local/cuda/include -Iinclude -Isrc/ops -Isrc/util -Isrc/kernels tests/hw/tmap_scan.c \
    build/libnvhcq.a -ldl -lm -lpthread -o build/tmap_scan && build/tmap_scan >"$out/tmap.txt" 2>/dev/null
tail -1 "$out/tmap.txt"
SKIP_SUITES="llama3_vocab qwen2_vocab command_r_vocab" timeout 400 make test-gpu CUARCH=90 >"$out/a_test_gpu.txt" 2>&1
echo "make test-gpu rc=$? after $(($(date +%s) - t0)) s"
grep -E "FAIL|total|k_llm_gemm_wgmma_tma" "$out/a_test_gpu.txt" | tail -10
wait $bp
tail -1 "$out/llbuild.log"
for v in X=0 NVHCQ_GEMM=cpasync; do
    echo "-- gemm [$v]"
    env $v timeout 120 build/nvhcq bench gemm --devs rm:0,cuda:0 2>&1 | grep -E "gemm_(f16|bf16) " | cut -c1-110
done 2>&1 | tee "$out/a_gemm.txt"
for v in X=0 PB_END_QMD_RELEASE=0; do
    echo "-- latency [$v]"
    env $v timeout 60 build/nvhcq bench latency --devs rm:0,cuda:0 2>&1 | grep -E "launch_sync|back_to_back|graph_300" | cut -c1-120
done 2>&1 | tee "$out/a_latency.txt"
B=$ll/b/bin
[ -x $B/llama-bench ] || { echo "no llama-bench"; exit 1; }
left=$((585 - ($(date +%s) - t0)))
NVHCQ_COMMIT=$(cat .commit 2>/dev/null) DEVS="rm:0" TYPES="Q4_K_M Q6_K Q8_0" REPS=2 \
    timeout $left bash bench/vs-llamacpp.sh $B "$out/vs" >"$out/vs.log" 2>&1
cp "$out/vs/vs-llamacpp.md" "$out/a_vs.md" 2>/dev/null
grep -E "^\|" "$out/vs/vs-llamacpp.md" 2>/dev/null | head -30
for f in "$out"/vs/*-Q*.gguf; do [ -e "$f" ] || continue
    for p in 512 2048; do for v in 0 1; do
        echo "-- $(basename $f) pp$p NVHCQ_LLM_GEMM_TMA=$v"
        NVHCQ_LLM_GEMM_TMA=$v timeout 60 build/nvhcq llm-bench -m $f -p $p -n 0 -r 3 --dev rm:0 2>&1 | grep -E "^\|.*pp"
    done; done
done 2>&1 | tee "$out/a_llm_tma.txt"
echo "== end $(($(date +%s) - t0)) s"
