#!/bin/sh
# Developer script (GPU machine, sm_90): the LLM prefill GEMM on wgmma. Builds for CUARCH=90, runs
# k_llm_gemm / k_llm_gemm_wgmma against a double reference (bias, accumulate, padded stride,
# odd shapes) and the tiny models' prefill against cpu on cuda:0 and rm:0, then pp512 of a
# LLaMA-3.2-1B-shaped Q4_K model with the mma.sync GEMM (NVHCQ_GEMM=mma), wgmma for every GEMM
# (NVHCQ_GEMM=wgmma) and the default: wgmma where its tiles fill the SMs (auto: any other value).
# Usage: sh bench/tune/llm_wgmma_run.sh [OUTDIR]   (bench/notes-gemm.md, session 5)
out=${1:-/tmp}
mkdir -p "$out"
[ -f COMMIT ] && NVHCQ_COMMIT=$(head -1 COMMIT) && export NVHCQ_COMMIT
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
export HCQ_TEST_DEVS="cuda:0 rm:0"
timeout 60 build/tests/test_llm_dequant prefill_gemm_epilogue 2>&1 | tail -8
timeout 60 build/tests/test_llm_e2e devices_match_cpu_gemm prefill_gemm_vs_ref 2>&1 | tail -4
NVHCQ_GEMM=wgmma timeout 60 build/tests/test_llm_e2e devices_match_cpu_gemm 2>&1 | tail -3
m=/tmp/l1b-q4_k.gguf
timeout 90 build/nvhcq gen-model --preset llama-3.2-1b --type q4_k \
    --vocab tests/data/tokenizers/ggml-vocab-gpt-2.gguf -o $m >/dev/null 2>&1 || echo "gen-model failed"
for d in cuda:0 rm:0; do
    for g in mma wgmma auto; do
        echo "-- $d GEMM $g"
        env NVHCQ_GEMM=$g timeout 40 build/nvhcq llm-bench -m $m -p 512 -n 0 -r 5 --dev $d 2>&1 | grep -E "pp|rror"
    done
done
