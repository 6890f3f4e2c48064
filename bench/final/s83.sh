#!/bin/bash
# s83.sh OUT - session 12 (either GPU; carry .commit): the _w2 mat-vecs (two passes before the
# PDL wait) now in k_llm_matvec.cu and picked per launch: NVHCQ_MVQ_W2=0x3F puts every type's
# launches below K_LLM_MVQ_PAIR_ROWS rows (Q|K|V, O, down) on them, 0 none. tg128 alternating on
# gen-model files and per-launch profiles of each type, to choose the default mask. GPU tests of
# the variant. ~3 min.
set -u
out=${1:?usage: s83.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/a_gpu.txt"
NVHCQ_MVQ_W2=0x3F HCQ_TEST_DEVS='rm:0 cuda:0' timeout 150 build/tests/test_llm_e2e >"$out/t_e2e_w2.txt" 2>&1; echo "e2e (w2 0x3F) rc=$?"
HCQ_TEST_DEVS='rm:0' timeout 150 build/tests/test_llm_real >"$out/t_real.txt" 2>&1; echo "real rc=$?"
echo "tests: $(grep -hE "FAIL|passed" "$out"/t_*.txt | tr '\n' ' ')" | tee "$out/a_tests.txt"
V=tests/data/tokenizers/ggml-vocab-gpt-2.gguf
for ty in q6_k q8_0 q4_k; do
    build/nvhcq gen-model --preset llama-3.2-1b --type $ty --vocab $V -o /tmp/m_$ty.gguf >/dev/null 2>&1 || echo "gen $ty failed"
done
build/nvhcq llm-bench -m /tmp/m_q6_k.gguf -p 0 -n 128 -r 3 --dev rm:0 >/dev/null 2>&1 # warm
for r in 1 2; do for ty in q6_k q8_0 q4_k; do for v in 0 0x3F; do
    x=$(NVHCQ_MVQ_W2=$v timeout 40 build/nvhcq llm-bench -m /tmp/m_$ty.gguf -p 0 -n 128 -r 3 --dev rm:0 2>&1 | grep -E "tg|rror" | awk -F'|' '{printf "%s ", $(NF-1)}')
    echo "$ty r$r [w2=$v] tg128: $x"
done; done; done 2>&1 | tee "$out/a_tg.txt"
for ty in q6_k q8_0 q4_k; do for v in 0 0x3F; do
    echo "-- profile $ty [w2=$v]"
    NVHCQ_MVQ_W2=$v timeout 60 build/nvhcq llm-bench -m /tmp/m_$ty.gguf -p 0 -n 128 -r 1 --profile --dev rm:0 2>&1 | grep -E "^\|" | head -16
done; done >"$out/a_profile.txt" 2>&1
grep -E "profile|tg128|mv |attn" "$out/a_profile.txt"
echo "== end $(($(date +%s) - t0)) s"
