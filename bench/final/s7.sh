#!/bin/bash
# s7.sh OUT - one device call: the dequantization test on the GPUs, the prefill e2e tests, the
# time of every prefill kernel by ncu (pp512 Q6_K, cuda:0, base clocks) and pp512 per type on
# cuda:0 (full clocks; rm:0 runs the same kernels but may sit at idle clocks after a load).
set -u
out=${1:?usage: s7.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
B=build
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
export HCQ_TEST_DEVS="rm:0 cuda:0"
timeout 120 $B/tests/test_llm_dequant 2>&1 | grep -E "matrices|FAIL|passed"
timeout 200 $B/tests/test_llm_e2e devices_match_cpu_gemm prefill_gemm_vs_ref 2>&1 | grep -E "vs cpu|vs reference|FAIL|passed"
unset HCQ_TEST_DEVS
V=tests/data/tokenizers/ggml-vocab-gpt-2.gguf
for ty in q6_k q4_k q8_0; do
    $B/nvhcq gen-model --preset llama-3.2-1b --type $ty --vocab $V -o /tmp/m_$ty.gguf >/dev/null 2>&1 || echo "gen $ty failed"
done
echo "-- ncu prefill kernels (pp512 Q6_K, cuda:0, warm-up + 1 rep)"
timeout 150 ncu --metrics gpu__time_duration.sum --csv $B/nvhcq llm-bench -m /tmp/m_q6_k.gguf -p 512 -n 0 -r 1 --dev cuda:0 2>/dev/null |
    awk -F'","' '/gpu__time_duration/ {gsub(/"/,"",$NF); k=$5; s[k]+=$NF; n[k]++} END {for (k in s) printf "%-28s %4d launches %10.1f\n", k, n[k], s[k]}' | sort -k4 -n -r | head -10
for ty in q6_k q4_k q8_0; do
    for d in cuda:0 rm:0; do
        timeout 60 $B/nvhcq llm-bench -m /tmp/m_$ty.gguf -p 512 -n 0 -r 5 --dev $d 2>&1 | grep -E "pp|error"
    done
done
echo "all done after $(($(date +%s) - t0)) s"
