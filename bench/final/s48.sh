#!/bin/bash
# s48.sh OUT - prepared for the session after session 8 (~8 min, either GPU; carry .anchor): issue
# 11's perplexity agreement with llama.cpp, never run on a GPU. llama.cpp builds (anchor kit)
# while nvhcq builds; then bench/final/ppl.sh on the TinyStories-656K model and on a 1B
# LLaMA-shaped Q6_K file quantized by llama-quantize from `gen-model --type f16` (random
# weights: the perplexity means nothing, the agreement of the two tools on it does), rm:0 and
# cuda:0 against llama-perplexity, target |difference| <= 0.5%.
set -u
out=${1:?usage: s48.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
ll=/tmp/ll
(bash .anchor/llamacpp/build.sh $ll 90 >"$out/llbuild.log" 2>&1; echo "llama.cpp build rc=$? after $(($(date +%s) - t0)) s" >>"$out/llbuild.log") &
bp=$!
make -j8 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
V=tests/data/tokenizers/ggml-vocab-gpt-2.gguf
build/nvhcq gen-model --preset llama-3.2-1b --type f16 --vocab $V -o /tmp/l1b-f16.gguf >/dev/null 2>&1 || echo "gen failed"
wait $bp
tail -1 "$out/llbuild.log"
B=$ll/b/bin
[ -x $B/llama-perplexity ] || { echo "no llama-perplexity"; exit 1; }
$B/llama-quantize /tmp/l1b-f16.gguf /tmp/l1b-q6_k.gguf Q6_K >"$out/quantize.log" 2>&1 || tail -5 "$out/quantize.log"
DEVS="rm:0 cuda:0" timeout $((590 - ($(date +%s) - t0))) bash bench/final/ppl.sh build "$out/ppl" $B /tmp/l1b-q6_k.gguf 2>&1 | tail -12
cp "$out/ppl/ppl.md" "$out/a_ppl.md" 2>/dev/null
echo "== end $(($(date +%s) - t0)) s"
