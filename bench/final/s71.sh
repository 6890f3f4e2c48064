#!/bin/bash
# s71.sh OUT - session 11 (~8 min, either GPU, no llama.cpp): (1) the per-type decode mat-vecs
# with x' in conflict-free shared-memory slots (k_llm_mvq_slot; NVHCQ_MVQ_SWZ=0 = the logical
# order as before) - correctness on rm:0 and cuda:0 (test_llm_matvec runs both builds of every
# type, test_llm_e2e), then tg128 A/B alternating on gen-model files (q6_k, q8_0, q4_k) and a
# profile of each; (2) s70's prefill part that found no files: pp512 / pp2048 with the LLM
# prefill GEMM on cp.async (NVHCQ_LLM_GEMM_TMA=0) and on TMA (=1, never timed before). Logs a_*.
set -u
out=${1:?usage: s71.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/a_gpu.txt"
V=tests/data/tokenizers/ggml-vocab-gpt-2.gguf
for ty in q6_k q8_0 q4_k; do
    build/nvhcq gen-model --preset llama-3.2-1b --type $ty --vocab $V -o /tmp/m_$ty.gguf >/dev/null 2>&1 || echo "gen $ty failed"
done
for t in test_llm_matvec test_llm_e2e; do
    HCQ_TEST_DEVS='rm:0 cuda:0' timeout 200 build/tests/$t >"$out/a_$t.txt" 2>&1
    echo "$t rc=$?"
done
echo "tests: $(grep -hE "FAIL|passed" "$out"/a_test_*.txt | tr '\n' ' ') ($(($(date +%s) - t0)) s)"
grep -E "rm:0 k_llm_matvec_q8_q|cuda:0 k_llm_matvec_q8_q" "$out/a_test_llm_matvec.txt" | head -20
build/nvhcq llm-bench -m /tmp/m_q6_k.gguf -p 0 -n 128 -r 3 --dev rm:0 >/dev/null 2>&1 # warm
for r in 1 2; do for ty in q6_k q8_0 q4_k; do for v in NVHCQ_MVQ_SWZ=0 X=0; do
    x=$(env $v timeout 60 build/nvhcq llm-bench -m /tmp/m_$ty.gguf -p 0 -n 128 -r 3 --dev rm:0 2>&1 | grep -E "tg|rror" | awk -F'|' '{printf "%s ", $(NF-1)}')
    echo "$ty r$r [$v] tg128: $x"
done; done; done 2>&1 | tee "$out/a_tg.txt"
for ty in q6_k q8_0; do for v in NVHCQ_MVQ_SWZ=0 X=0; do
    echo "-- profile $ty [$v]"
    env $v timeout 60 build/nvhcq llm-bench -m /tmp/m_$ty.gguf -p 0 -n 128 -r 1 --profile --dev rm:0 2>&1 | grep -E "^\|" | head -16
done; done > "$out/a_profile.txt" 2>&1
echo "-- cuda:0 tg128 (same kernels): $(for ty in q6_k q8_0 q4_k; do timeout 60 build/nvhcq llm-bench -m /tmp/m_$ty.gguf -p 0 -n 128 -r 3 --dev cuda:0 2>&1 | grep -E "tg" | awk -F'|' '{printf "%s %s; ", "'$ty'", $(NF-1)}'; done)" | tee -a "$out/a_tg.txt"
for ty in q6_k q8_0; do for p in 512 2048; do for v in 0 1; do
    x=$(NVHCQ_LLM_GEMM_TMA=$v timeout 60 build/nvhcq llm-bench -m /tmp/m_$ty.gguf -p $p -n 0 -r 3 --dev rm:0 2>&1 | grep -E "pp|rror" | awk -F'|' '{printf "%s ", $(NF-1)}')
    echo "$ty pp$p [NVHCQ_LLM_GEMM_TMA=$v]: $x"
done; done; done 2>&1 | tee "$out/a_pp.txt"
echo "== end $(($(date +%s) - t0)) s"
