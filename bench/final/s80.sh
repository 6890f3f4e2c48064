#!/bin/bash
# s80.sh OUT - session 12 (either GPU; carry .anchor .commit): the same-file comparison with
# llama.cpp after the attention change (9f33162): llama.cpp builds while tg128 runs on gen-model
# files on rm:0 and cuda:0 (CPU busy compiling: indicative only); then vs-llamacpp (pp512 +
# tg128, REPS 3) and decode profiles of the llama-quantize Q4_K_M and Q8_0 files. ~7 min.
set -u
out=${1:?usage: s80.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
ll=/tmp/ll
(bash .anchor/llamacpp/build.sh $ll 90 >"$out/llbuild.log" 2>&1; echo "llama.cpp build rc=$? after $(($(date +%s) - t0)) s" >>"$out/llbuild.log") &
bp=$!
make -j8 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/a_gpu.txt"
V=tests/data/tokenizers/ggml-vocab-gpt-2.gguf
for ty in q6_k q8_0 q4_k; do
    build/nvhcq gen-model --preset llama-3.2-1b --type $ty --vocab $V -o /tmp/m_$ty.gguf >/dev/null 2>&1 || echo "gen $ty failed"
done
for ty in q6_k q8_0 q4_k; do for d in rm:0 cuda:0; do
    x=$(timeout 60 build/nvhcq llm-bench -m /tmp/m_$ty.gguf -p 0 -n 128 -r 3 --dev $d 2>&1 | grep -E "tg|rror" | awk -F'|' '{printf "%s ", $(NF-1)}')
    echo "$ty [$d] tg128 (llama.cpp compiling): $x"
done; done 2>&1 | tee "$out/a_tg.txt"
wait $bp
tail -1 "$out/llbuild.log"
B=$ll/b/bin
[ -x $B/llama-bench ] || { echo "no llama-bench"; exit 1; }
NVHCQ=build/nvhcq NVHCQ_COMMIT="$(cat .commit)" DEVS="rm:0" TYPES="Q4_K_M Q6_K Q8_0" REPS=3 \
    timeout 240 bash bench/vs-llamacpp.sh $B /tmp/vs >"$out/vs.log" 2>&1
cp /tmp/vs/vs-llamacpp.md "$out/a_vs.md"; cp /tmp/vs/vs-llamacpp.json "$out/a_vs.json"
grep -E "tg128|pp512" /tmp/vs/vs-llamacpp.md
for f in $(ls /tmp/vs/models/*Q4_K_M*.gguf /tmp/vs/models/*Q8_0*.gguf 2>/dev/null); do
    echo "-- profile $f"
    timeout 60 build/nvhcq llm-bench -m $f -p 0 -n 128 -r 1 --profile --dev rm:0 2>&1 | grep -E "^\|" | head -16
done >"$out/a_profile.txt" 2>&1
grep -E "profile|tg128|down|gate|qkv|o\+|attn|output" "$out/a_profile.txt"
echo "== end $(($(date +%s) - t0)) s"
