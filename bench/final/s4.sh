#!/bin/bash
# s4.sh OUT - one device call (session 4): build; GPU tests of the tiled prefill attention,
# the decode kernels and the end-to-end device match; then A/B in the same process order:
# decode tg128 per type with and without the L2 prefetch hints (NVHCQ_L2PF), pp512 with the
# tiled vs the per-token prefill attention (NVHCQ_ATTN=naive), one decode profile.
set -u
out=${1:?usage: s4.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
B=build
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
echo "== build $(($(date +%s) - t0)) s"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
export HCQ_TEST_DEVS="rm:0 cuda:0"
for t in test_llm_attn_prefill test_llm_attn_decode test_llm_matvec; do
    timeout 120 $B/tests/$t 2>&1 | grep -E "worst|FAIL|passed" | tail -4
done
timeout 200 $B/tests/test_llm_e2e devices_match_cpu devices_match_cpu_gemm persistent_vs_per_kernel 2>&1 | grep -E "vs cpu|FAIL|passed|ok" | tail -12
unset HCQ_TEST_DEVS
echo "== tests done $(($(date +%s) - t0)) s"
V=tests/data/tokenizers/ggml-vocab-gpt-2.gguf
for ty in ${TYPES:-q6_k q4_k q8_0}; do
    f=/tmp/m_$ty.gguf
    $B/nvhcq gen-model --preset llama-3.2-1b --type $ty --vocab $V -o $f >/dev/null 2>&1 || echo "gen $ty failed"
    for pf in 0 1 0 1; do
        echo "-- $ty NVHCQ_L2PF=$pf"
        NVHCQ_L2PF=$pf timeout 60 $B/nvhcq llm-bench -m $f -p 0 -n 128 -r 3 --dev rm:0 2>&1 | grep -E "tg|error|warn" | tail -2
    done
done
f=/tmp/m_q6_k.gguf
for a in naive tile naive tile; do
    echo "-- pp512 NVHCQ_ATTN=$a"
    NVHCQ_ATTN=$a timeout 60 $B/nvhcq llm-bench -m $f -p 512 -n 0 -r 5 --dev rm:0 2>&1 | grep -E "pp|error"
done
echo "-- pp512 cuda:0 tile"
timeout 60 $B/nvhcq llm-bench -m $f -p 512 -n 0 -r 5 --dev cuda:0 2>&1 | grep -E "pp|error"
for pf in 1 0; do
    echo "-- profile NVHCQ_L2PF=$pf"
    NVHCQ_L2PF=$pf timeout 60 $B/nvhcq llm-bench -m $f -p 0 -n 64 -r 1 --profile --dev rm:0 2>&1 | tail -10
done
echo "-- ncu prefill kernels (tile)"
timeout 150 ncu --metrics gpu__time_duration.sum --csv $B/nvhcq llm-bench -m $f -p 512 -n 0 -r 1 --dev cuda:0 2>/dev/null |
    awk -F'","' '/gpu__time_duration/ {gsub(/"/,"",$NF); k=$5; s[k]+=$NF; n[k]++} END {for (k in s) printf "%-28s %4d launches %10.1f\n", k, n[k], s[k]}' | sort -k4 -n -r | head -12
echo "all done after $(($(date +%s) - t0)) s"
