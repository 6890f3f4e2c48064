#!/bin/bash
# s87.sh OUT - session 13's first A/B (either GPU; carry .llqb .commit; ~7 min): llama.cpp's
# quantizer alone (.llqb/llama-quantize: a static CPU build of the anchor's source, made on the
# host, so no 5-minute CUDA build is needed to write the same files bench/vs-llamacpp.sh writes)
# quantizes the gen-model f16 LLaMA-3.2-1B file to five types. Then (1) GPU tests of the new
# two-type kernel k_llm_matvec_q8_q5k_q6k (Q5_K_M's Q|K|V: Q5_K with a Q6_K V ran the switching
# body); (2) tg128 A/B alternating: Q5_K_M with it (default NVHCQ_MVQ_TYPED 0x7F) and without
# (0x3F); Q4_0 and Q5_K_M with their types added to the _w2 mask (never measured on those types);
# (3) the per-launch profile of all five files (session 12 profiled Q4_K_M and Q8_0 only).
set -u
OUT=${1:?usage: s87.sh OUT}
mkdir -p "$OUT"
. bench/final/lib.sh
make -j16 CUARCH=90 >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/a_gpu.txt"
Q=/tmp/q && mkdir -p $Q
build/nvhcq gen-model --preset llama-3.2-1b --type f16 --vocab "$V_GPT2" -o $Q/f16.gguf >/dev/null 2>&1 || echo "gen f16 failed"
for ty in Q4_K_M Q6_K Q8_0 Q4_0 Q5_K_M; do
    .llqb/llama-quantize $Q/f16.gguf $Q/$ty.gguf $ty >$Q/quant-$ty.log 2>&1 || echo "quantize $ty failed"
done
echo "files ready ($(($(date +%s) - T0)) s): $(ls $Q)"
for t in test_llm_matvec test_llm_e2e; do
    HCQ_TEST_DEVS='rm:0 cuda:0' timeout 150 build/tests/$t >"$OUT/t_$t.txt" 2>&1
    echo "$t rc=$?"
done
grep -h "q5k_q6k" "$OUT/t_test_llm_matvec.txt"
echo "tests: $(grep -hE "FAIL|passed" "$OUT"/t_*.txt | tr '\n' ' ')" | tee "$OUT/a_tests.txt"
cell() { # FILE LABEL ENV...
    local f=$1 l=$2
    shift 2
    echo "$(basename $f .gguf) [$l] tg128: $(env "$@" bash -c "$(declare -f tg_cell); tg_cell build/nvhcq $f rm:0")"
}
for r in 1 2 3; do
    cell $Q/Q5_K_M.gguf typed7F NVHCQ_MVQ_TYPED=0x7F
    cell $Q/Q5_K_M.gguf typed3F NVHCQ_MVQ_TYPED=0x3F
    cell $Q/Q5_K_M.gguf w2_0A NVHCQ_MVQ_W2=0x0A
    cell $Q/Q4_0.gguf w2_08 NVHCQ_MVQ_W2=0x08
    cell $Q/Q4_0.gguf w2_0C NVHCQ_MVQ_W2=0x0C
done 2>&1 | tee "$OUT/a_tg.txt"
for ty in Q4_K_M Q6_K Q8_0 Q4_0 Q5_K_M; do
    echo "-- profile $ty"
    timeout 60 build/nvhcq llm-bench -m $Q/$ty.gguf -p 0 -n 128 -r 1 --profile --dev rm:0 2>&1 | grep -E "^\|" | head -16
done >"$OUT/a_profile.txt" 2>&1
grep -E "profile|tg128|mv |attn" "$OUT/a_profile.txt"
echo "== end $(($(date +%s) - T0)) s"
