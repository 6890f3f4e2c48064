#!/bin/bash
# s77.sh OUT - session 12 (H100; carry .anchor .commit .dev): the tree after s75's changes (A, B,
# C for Q8_0 only) against the session-11 mat-vec (.dev/base/k_llm_mvq.cuh = c5a7bb7's): tg128
# alternating on gen-model files, the LLM GPU tests of the tree (rm:0, cuda:0) while llama.cpp
# builds, decode profiles (gen-model Q8_0 and the llama-quantize Q4_K_M / Q8_0 files), and the
# same-file comparison with llama.cpp (REPS 3). ~8 min. Logs a_*.
set -u
out=${1:?usage: s77.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
ll=/tmp/ll
(bash .anchor/llamacpp/build.sh $ll 90 >"$out/llbuild.log" 2>&1; echo "llama.cpp build rc=$? after $(($(date +%s) - t0)) s" >>"$out/llbuild.log") &
bp=$!
rm -rf /tmp/v_base && mkdir -p /tmp/v_base && tar --exclude=./build --exclude=./.anchor -cf - . | tar -xf - -C /tmp/v_base
cp .dev/base/k_llm_mvq.cuh /tmp/v_base/src/kernels/k_llm_mvq.cuh
make -j8 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
(cd /tmp/v_base && make -j8 CUARCH=90 >/tmp/v_base.log 2>&1) || { tail -20 /tmp/v_base.log; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/a_gpu.txt"
echo "builds done ($(($(date +%s) - t0)) s)"
for t in test_llm_matvec test_llm_e2e test_llm_attn_decode test_llm_real test_llm_valid; do
    HCQ_TEST_DEVS='rm:0 cuda:0' timeout 150 build/tests/$t >"$out/t_$t.txt" 2>&1
    echo "$t rc=$?"
done
echo "tests: $(grep -hE "FAIL|passed" "$out"/t_*.txt | tr '\n' ' ')" | tee "$out/a_tests.txt"
V=tests/data/tokenizers/ggml-vocab-gpt-2.gguf
for ty in q6_k q8_0 q4_k; do
    build/nvhcq gen-model --preset llama-3.2-1b --type $ty --vocab $V -o /tmp/m_$ty.gguf >/dev/null 2>&1 || echo "gen $ty failed"
done
declare -A BIN=([base]=/tmp/v_base/build/nvhcq [new]=build/nvhcq)
build/nvhcq llm-bench -m /tmp/m_q6_k.gguf -p 0 -n 128 -r 3 --dev rm:0 >/dev/null 2>&1 # warm
for r in 1 2; do for ty in q6_k q8_0 q4_k; do for v in base new; do
    x=$(timeout 40 ${BIN[$v]} llm-bench -m /tmp/m_$ty.gguf -p 0 -n 128 -r 3 --dev rm:0 2>&1 | grep -E "tg|rror" | awk -F'|' '{printf "%s ", $(NF-1)}')
    echo "$ty r$r [$v] tg128: $x"
done; done; done 2>&1 | tee "$out/a_tg.txt"
wait $bp
tail -1 "$out/llbuild.log"
B=$ll/b/bin
[ -x $B/llama-bench ] || { echo "no llama-bench"; exit 1; }
NVHCQ=build/nvhcq NVHCQ_COMMIT="$(cat .commit)" DEVS="rm:0" TYPES="Q4_K_M Q6_K Q8_0" REPS=3 \
    timeout 240 bash bench/vs-llamacpp.sh $B /tmp/vs >"$out/vs.log" 2>&1
cp /tmp/vs/vs-llamacpp.md "$out/a_vs.md"; cp /tmp/vs/vs-llamacpp.json "$out/a_vs.json"
grep -E "tg128|pp512" /tmp/vs/vs-llamacpp.md
for f in /tmp/m_q8_0.gguf $(ls /tmp/vs/models/*Q4_K_M*.gguf /tmp/vs/models/*Q8_0*.gguf 2>/dev/null); do
    echo "-- profile $f"
    timeout 60 build/nvhcq llm-bench -m $f -p 0 -n 128 -r 1 --profile --dev rm:0 2>&1 | grep -E "^\|" | head -16
done >"$out/a_profile.txt" 2>&1
grep -E "profile|tg128|down|gate|qkv|o\+|attn|output" "$out/a_profile.txt"
echo "== end $(($(date +%s) - t0)) s"
