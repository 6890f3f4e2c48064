#!/bin/bash
# s69.sh OUT - **the next session's first call** (nvidia-h200 or nvidia-h100-x1, carry .anchor and
# .commit; ~8.5 min; then s70.sh at once, on the same warm machine). Session 10 ended without device time for it: its last commits (the TMA GEMMs
# as the default, a graph's leading WFI, the LLM prefill GEMM on TMA behind NVHCQ_LLM_GEMM_TMA=1)
# ran on no GPU. Here: tensor maps against libcuda's; the whole `make test-gpu` while llama.cpp
# builds (the LLM TMA kernel is in test_llm_dequant's GPU rows); then, with nothing compiling,
# `bench gemm` (default vs NVHCQ_GEMM=cpasync vs NVHCQ_GEMM=tma128: the TMA 128 x 128 tiles at
# 1024^3, never run before).
# Logs a_*.
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
SKIP_SUITES="llama3_vocab qwen2_vocab command_r_vocab" timeout 450 make test-gpu CUARCH=90 >"$out/a_test_gpu.txt" 2>&1
echo "make test-gpu rc=$? after $(($(date +%s) - t0)) s"
grep -E "FAIL|total|k_llm_gemm_wgmma_tma" "$out/a_test_gpu.txt" | tail -10
wait $bp
tail -1 "$out/llbuild.log"
for v in X=0 NVHCQ_GEMM=cpasync NVHCQ_GEMM=tma128; do
    echo "-- gemm [$v]"
    env $v timeout 120 build/nvhcq bench gemm --devs rm:0,cuda:0 2>&1 | grep -E "gemm_(f16|bf16) " | cut -c1-110
done 2>&1 | tee "$out/a_gemm.txt"
echo "-- latency (issue 13 on this GPU)"
timeout 150 build/nvhcq bench latency --devs rm:0,cuda:0 2>&1 | tee "$out/a_latency.txt" | grep -vE "^#" | head -30
echo "== end $(($(date +%s) - t0)) s (llama.cpp stays in /tmp/ll for s70.sh on the same warm machine)"
