#!/bin/bash
# s49.sh OUT - session 9 (~8 min, either GPU; carry .anchor): issue 11's perplexity agreement with
# llama.cpp for each quant type. s48 with three files instead of one: llama.cpp builds (anchor
# kit) while nvhcq builds; `gen-model --type f16` (LLaMA-3.2-1B shapes, random weights: the
# perplexity itself means nothing, the agreement of the two tools on the same file does) is
# quantized by llama-quantize to Q4_K_M, Q6_K and Q8_0; bench/final/ppl.sh runs the
# TinyStories-656K model and the three files on rm:0 and cuda:0 against llama-perplexity,
# target |difference| <= 0.5%.
set -u
out=${1:?usage: s49.sh OUT}
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
files=""
for t in Q4_K_M Q6_K Q8_0; do
    f=/tmp/l1b-$(echo $t | tr A-Z a-z).gguf
    $B/llama-quantize /tmp/l1b-f16.gguf $f $t >"$out/quantize-$t.log" 2>&1 || tail -5 "$out/quantize-$t.log"
    files="$files $f"
done
DEVS="rm:0 cuda:0" NVHCQ_COMMIT=$(cat .commit 2>/dev/null) timeout $((590 - ($(date +%s) - t0))) bash bench/final/ppl.sh build "$out/ppl" $B $files 2>&1 | tail -16
cp "$out/ppl/ppl.md" "$out/a_ppl.md" 2>/dev/null
cp "$out/ppl/ppl.json" "$out/a_ppl.json" 2>/dev/null
echo "== end $(($(date +%s) - t0)) s"
