#!/bin/bash
# s51.sh OUT - session 9 (~6 min; meant for the H100): (1) cbuf0 CONSTANT_BUFFER_PREFETCH and
# per-bank invalidate A/B (PB_CBUF0_PREFETCH, PB_CBUF0_INVALIDATE; CUDA's QMDs prefetch a bank
# and invalidate the constant cache globally): hcq suite on rm:0 with the CUDA-like setting
# first (graph patch tests included), then `bench latency` rows and tg128 alternating;
# (2) the session's kernels on this GPU: test_llm_attn_prefill, test_llm_e2e, the wgmma GEMM
# tests of both tile widths, pp512 at depth with the f32 and TF32 prefill attention, and
# `bench gemm` (cuBLAS rows beside) for the 128 x 128 tiles at 1024^3.
set -u
out=${1:?usage: s51.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
CU="PB_CBUF0_PREFETCH=1 PB_CBUF0_INVALIDATE=0 PB_QMD_INVALIDATE=0x2F"
echo "suite rm:0 [$CU]: $(env $CU timeout 150 build/tests/hcq_suite --dev rm:0 --klog 2>&1 | grep -E "FAIL|passed" | tr '\n' ' ')"
HCQ_TEST_DEVS='rm:0 cuda:0' timeout 120 build/tests/test_llm_attn_prefill 2>&1 | grep -E "worst.*(rm|cuda)|FAIL|passed" | head -6
echo "e2e: $(HCQ_TEST_DEVS='rm:0 cuda:0' timeout 200 build/tests/test_llm_e2e 2>&1 | grep -E "FAIL|passed" | tr '\n' ' ')"
for d in rm:0 cuda:0; do
    echo "$d wgmma: $(timeout 100 build/tests/hcq_suite --dev $d kernel_gemm_wgmma_f16 kernel_gemm_wgmma_bf16_nt kernel_gemm_wgmma_f16_n128 kernel_gemm_wgmma_bf16_nt_n128 2>&1 | grep -E "FAIL|passed" | tr '\n' ' ')"
done
V=tests/data/tokenizers/ggml-vocab-gpt-2.gguf
build/nvhcq gen-model --preset llama-3.2-1b --type q6_k --vocab $V -o /tmp/m_q6_k.gguf >/dev/null 2>&1 || echo "gen failed"
echo "== tests done $(($(date +%s) - t0)) s"
build/nvhcq llm-bench -m /tmp/m_q6_k.gguf -p 0 -n 128 -r 3 --dev rm:0 >/dev/null 2>&1 # warm
for r in 1 2; do for v in X=0 PB_CBUF0_PREFETCH=1 PB_CBUF0_PREFETCH=2 "$CU" PB_CBUF0_INVALIDATE=0; do
    echo "-- latency r$r [$v]"
    env $v timeout 60 build/nvhcq bench latency --devs rm:0 2>&1 | grep -E "launch_sync|back_to_back|graph_300|dep_chain" | cut -c1-110
done; done
for r in 1 2; do for v in X=0 PB_CBUF0_PREFETCH=1 "$CU"; do
    x=$(env $v timeout 40 build/nvhcq llm-bench -m /tmp/m_q6_k.gguf -p 0 -n 128 -r 3 --dev rm:0 2>&1 | grep -E "tg128|rror" | tail -1 | awk -F'|' '{print $(NF-1)}')
    echo "tg128 q6_k r$r [$v] $x"
done; done
for v in NVHCQ_ATTN=tile X=0; do
    echo "-- pp [$v]"
    env $v timeout 90 build/nvhcq llm-bench -m /tmp/m_q6_k.gguf -p 512 -n 0 -d 0,1024,4096 -r 3 --dev rm:0 2>&1 | grep -E "pp|rror" | cut -c1-150
done
left=$((585 - ($(date +%s) - t0)))
[ $left -gt 40 ] && timeout $left build/nvhcq bench gemm --devs rm:0,cuda:0 2>&1 | grep -E "gemm_(b?f16) " | cut -c1-130
echo "== end $(($(date +%s) - t0)) s"
