#!/bin/bash
# s81.sh OUT - session 12 (either GPU; carry .anchor .commit): the two-type mat-vec
# (k_llm_matvec_q8_q4k_q6k: Q4_K_M's Q|K|V, Q4_K with a Q6_K V) against the switching body it
# replaces there (NVHCQ_MVQ_TYPED=0x1F, same binary). GPU tests while llama.cpp builds; then the
# same-file comparison (default build), tg128 alternating on the llama-quantize Q4_K_M file and
# the gen-model q4_k file, and a profile. ~7 min. Logs a_*.
set -u
out=${1:?usage: s81.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
ll=/tmp/ll
(bash .anchor/llamacpp/build.sh $ll 90 >"$out/llbuild.log" 2>&1; echo "llama.cpp build rc=$? after $(($(date +%s) - t0)) s" >>"$out/llbuild.log") &
bp=$!
make -j8 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/a_gpu.txt"
for t in test_llm_matvec test_llm_e2e test_llm_real; do
    HCQ_TEST_DEVS='rm:0 cuda:0' timeout 150 build/tests/$t >"$out/t_$t.txt" 2>&1
    echo "$t rc=$?"
done
grep -h "q4k_q6k" "$out/t_test_llm_matvec.txt"
echo "tests: $(grep -hE "FAIL|passed" "$out"/t_*.txt | tr '\n' ' ')" | tee "$out/a_tests.txt"
V=tests/data/tokenizers/ggml-vocab-gpt-2.gguf
build/nvhcq gen-model --preset llama-3.2-1b --type q4_k --vocab $V -o /tmp/m_q4_k.gguf >/dev/null 2>&1 || echo "gen failed"
wait $bp
tail -1 "$out/llbuild.log"
B=$ll/b/bin
[ -x $B/llama-bench ] || { echo "no llama-bench"; exit 1; }
NVHCQ=build/nvhcq NVHCQ_COMMIT="$(cat .commit)+q4k_q6k" DEVS="rm:0" TYPES="Q4_K_M Q6_K Q8_0" REPS=3 \
    timeout 200 bash bench/vs-llamacpp.sh $B /tmp/vs >"$out/vs.log" 2>&1
cp /tmp/vs/vs-llamacpp.md "$out/a_vs.md"; cp /tmp/vs/vs-llamacpp.json "$out/a_vs.json"
grep -E "tg128|pp512" /tmp/vs/vs-llamacpp.md
QM=$(ls /tmp/vs/models/*Q4_K_M*.gguf | head -1)
for r in 1 2; do for f in $QM /tmp/m_q4_k.gguf; do for v in 0x1F 0x3F; do
    x=$(NVHCQ_MVQ_TYPED=$v timeout 40 build/nvhcq llm-bench -m $f -p 0 -n 128 -r 3 --dev rm:0 2>&1 | grep -E "tg|rror" | awk -F'|' '{printf "%s ", $(NF-1)}')
    echo "$(basename $f) r$r [typed $v] tg128: $x"
done; done; done 2>&1 | tee "$out/a_tg.txt"
for v in 0x1F 0x3F; do
    echo "-- profile Q4_K_M [typed $v]"
    NVHCQ_MVQ_TYPED=$v timeout 60 build/nvhcq llm-bench -m $QM -p 0 -n 128 -r 1 --profile --dev rm:0 2>&1 | grep -E "^\|" | head -16
done >"$out/a_profile.txt" 2>&1
grep -E "profile|tg128|qkv" "$out/a_profile.txt"
echo "== end $(($(date +%s) - t0)) s"
