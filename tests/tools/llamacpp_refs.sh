#!/bin/sh
# llamacpp_refs.sh LLAMA_BIN_DIR - regenerate tests/data/llamacpp/refs.tsv: what llama.cpp itself
# (llama-simple, llama-perplexity; build it with ../shared/anchors/llamacpp/build.sh DIR cpu) says
# on small files nvhcq writes, one row per (preset, type): the greedy continuation of PROMPT
# (N tokens, llama-simple's text after the prompt) and the perplexity of tests/data/text/story-ppl.txt
# at -c 128. tests/suites/llamacpp_refs.sh checks nvhcq against the file on cpu and the emulated GPU
# (same greedy text; perplexity within 0.5%). Run from anywhere; needs build/nvhcq.
set -eu
bin=${1:?usage: llamacpp_refs.sh LLAMA_BIN_DIR}
cd "$(dirname "$0")/../.."
. tests/data/llamacpp/cases.sh
out=tests/data/llamacpp/refs.tsv
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
{
    echo "# made by tests/tools/llamacpp_refs.sh with llama.cpp's $("$bin/llama-simple" --version 2>&1 | grep -m1 -o 'version: [0-9]*.*' || echo 'build of ../shared/anchors/llamacpp') on $(date -u +%Y-%m-%d)"
    printf '# preset\ttype\tppl\tgreedy text (%s tokens after "%s"; newlines as \\n)\n' "$N" "$PROMPT"
    for c in $CASES; do
        preset=${c%%:*}
        type=${c#*:}
        f="$tmp/$preset-$type.gguf"
        ./build/nvhcq gen-model --preset "$preset" --type "$type" --vocab "$(case $preset in phi3*) echo "$VOCAB_PHI3" ;; *) echo "$VOCAB" ;; esac)" --seed "$SEED" -o "$f" >/dev/null 2>&1
        text=$("$bin/llama-simple" -m "$f" -n "$N" "$PROMPT" 2>/dev/null | head -c 4096 | sed "1s/^\\(<s> *\\)\\{0,1\\}$PROMPT//" |
            awk 'BEGIN { ORS = "\\n" } { print }' | sed 's/\\n$//')
        ppl=$("$bin/llama-perplexity" -m "$f" -f "$TEXT" -c 128 2>&1 | sed -n 's/.*Final estimate: PPL = \([0-9.]*\).*/\1/p')
        printf '%s\t%s\t%s\t%s\n' "$preset" "$type" "$ppl" "$text"
    done
} >"$out.new"
mv "$out.new" "$out"
cat "$out"
