#!/bin/bash
# s82.sh OUT - session 12 (either GPU; carry .commit): the per-type mat-vecs with two passes of
# weights requested before the PDL wait (NVHCQ_MVQ_W2=1: k_llm_matvec_q8_<type>_w2, same binary)
# against the default: their GPU tests (test_llm_matvec rm:0 cuda:0; test_llm_e2e rm:0 with the
# variant on), tg128 alternating on gen-model files, profiles of Q8_0 and Q4_K. ~3 min.
set -u
out=${1:?usage: s82.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/a_gpu.txt"
HCQ_TEST_DEVS='rm:0 cuda:0' timeout 200 build/tests/test_llm_matvec >"$out/t_matvec.txt" 2>&1; echo "matvec rc=$?"
NVHCQ_MVQ_W2=1 HCQ_TEST_DEVS='rm:0 cuda:0' timeout 150 build/tests/test_llm_e2e >"$out/t_e2e_w2.txt" 2>&1; echo "e2e (w2) rc=$?"
grep -h "_w2" "$out/t_matvec.txt" | grep -v "^    cpu"
echo "tests: $(grep -hE "FAIL|passed" "$out"/t_*.txt | tr '\n' ' ')" | tee "$out/a_tests.txt"
V=tests/data/tokenizers/ggml-vocab-gpt-2.gguf
for ty in q6_k q8_0 q4_k; do
    build/nvhcq gen-model --preset llama-3.2-1b --type $ty --vocab $V -o /tmp/m_$ty.gguf >/dev/null 2>&1 || echo "gen $ty failed"
done
build/nvhcq llm-bench -m /tmp/m_q6_k.gguf -p 0 -n 128 -r 3 --dev rm:0 >/dev/null 2>&1 # warm
for r in 1 2; do for ty in q6_k q8_0 q4_k; do for v in 0 1; do
    x=$(NVHCQ_MVQ_W2=$v timeout 40 build/nvhcq llm-bench -m /tmp/m_$ty.gguf -p 0 -n 128 -r 3 --dev rm:0 2>&1 | grep -E "tg|rror" | awk -F'|' '{printf "%s ", $(NF-1)}')
    echo "$ty r$r [w2=$v] tg128: $x"
done; done; done 2>&1 | tee "$out/a_tg.txt"
for ty in q8_0 q4_k; do for v in 0 1; do
    echo "-- profile $ty [w2=$v]"
    NVHCQ_MVQ_W2=$v timeout 60 build/nvhcq llm-bench -m /tmp/m_$ty.gguf -p 0 -n 128 -r 1 --profile --dev rm:0 2>&1 | grep -E "^\|" | head -16
done; done >"$out/a_profile.txt" 2>&1
grep -E "profile|tg128|mv |attn" "$out/a_profile.txt"
echo "== end $(($(date +%s) - t0)) s"
