#!/bin/bash
# s8.sh OUT - one device call: GPU tests of the fused prefill Q|K|V GEMM; pp512 A/B on cuda:0
# (full clocks) NVHCQ_QKV_GEMM=0/1; ncu time per prefill kernel.
set -u
out=${1:?usage: s8.sh OUT}
mkdir -p "$out"
B=build
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
HCQ_TEST_DEVS="rm:0 cuda:0" timeout 200 $B/tests/test_llm_e2e qkv_gemm_vs_three devices_match_cpu_gemm prefill_gemm_vs_ref 2>&1 | grep -E "rm:0|cuda:0|reference|FAIL|passed" | grep -v skipped
V=tests/data/tokenizers/ggml-vocab-gpt-2.gguf
for ty in q6_k q8_0 q4_k; do
    $B/nvhcq gen-model --preset llama-3.2-1b --type $ty --vocab $V -o /tmp/m_$ty.gguf >/dev/null 2>&1 || echo "gen $ty failed"
    for v in 0 1 0 1; do
        echo "-- $ty NVHCQ_QKV_GEMM=$v"
        NVHCQ_QKV_GEMM=$v timeout 60 $B/nvhcq llm-bench -m /tmp/m_$ty.gguf -p 512 -n 0 -r 5 --dev cuda:0 2>&1 | grep -E "pp|error"
    done
done
echo "-- ncu prefill kernels (pp512 Q6_K, cuda:0, warm-up + 1 rep)"
timeout 150 ncu --metrics gpu__time_duration.sum --csv $B/nvhcq llm-bench -m /tmp/m_q6_k.gguf -p 512 -n 0 -r 1 --dev cuda:0 2>/dev/null |
    awk -F'","' '/gpu__time_duration/ {gsub(/"/,"",$NF); k=$5; s[k]+=$NF; n[k]++} END {for (k in s) printf "%-28s %4d launches %10.1f\n", k, n[k], s[k]}' | sort -k4 -n -r | head -10
