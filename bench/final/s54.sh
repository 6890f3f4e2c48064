#!/bin/bash
# s54.sh OUT - session 9 (~6 min, H100): (1) the per-type decode mat-vecs within 85 registers
# (NVHCQ_MVQ_LB3=1: Q4_K, Q4_0, Q8_0; a PDL dependent's CTA then fits beside two of them):
# test_llm_e2e on rm:0 with it, then tg128 alternating on Q8_0 / Q4_K / Q4_0 files; (2) what
# launch + sync pays for the chain-start cache invalidation (PB_CHAIN_INVALIDATE=7 default, 1 =
# instruction only, 0 = none) and the chain end's L1_SYSMEMBAR (PB_QMD_END_MEMBAR=0): hcq suite
# rm:0 with PB_CHAIN_INVALIDATE=1 first, then `bench latency` alternating. Logs a_*.
set -u
out=${1:?usage: s54.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/a_gpu.txt"
NVHCQ_MVQ_LB3=1 HCQ_TEST_DEVS='rm:0 cuda:0' timeout 200 build/tests/test_llm_e2e >"$out/a_e2e_lb3.txt" 2>&1
echo "e2e lb3: $(grep -E "FAIL|passed" "$out/a_e2e_lb3.txt" | tr '\n' ' ')"
PB_CHAIN_INVALIDATE=1 timeout 200 build/tests/hcq_suite --dev rm:0 --klog >"$out/a_suite_ci1.txt" 2>&1
echo "suite rm:0 [PB_CHAIN_INVALIDATE=1]: $(grep -E "FAIL|passed" "$out/a_suite_ci1.txt" | tr '\n' ' ')"
V=tests/data/tokenizers/ggml-vocab-gpt-2.gguf
for ty in q8_0 q4_k q4_0; do
    build/nvhcq gen-model --preset llama-3.2-1b --type $ty --vocab $V -o /tmp/m_$ty.gguf >/dev/null 2>&1 || echo "gen $ty failed"
done
echo "== tests done $(($(date +%s) - t0)) s"
build/nvhcq llm-bench -m /tmp/m_q8_0.gguf -p 0 -n 128 -r 3 --dev rm:0 >/dev/null 2>&1 # warm
for ty in q8_0 q4_k q4_0; do for r in 1 2; do for v in X=0 NVHCQ_MVQ_LB3=1; do
    x=$(env $v timeout 40 build/nvhcq llm-bench -m /tmp/m_$ty.gguf -p 0 -n 128 -r 3 --dev rm:0 2>&1 | grep -E "tg128|rror" | tail -1 | awk -F'|' '{print $(NF-1)}')
    echo "tg128 $ty r$r [$v] $x"
done; done; done | tee "$out/a_tg.txt"
for r in 1 2; do for v in X=0 PB_CHAIN_INVALIDATE=1 PB_CHAIN_INVALIDATE=0 PB_QMD_END_MEMBAR=0; do
    echo "-- latency r$r [$v]"
    env $v timeout 60 build/nvhcq bench latency --devs rm:0 2>&1 | grep -E "launch_sync|back_to_back|graph_300|signal_round" | cut -c1-120
done; done | tee "$out/a_latency.txt"
echo "== end $(($(date +%s) - t0)) s"
