#!/bin/bash
# s33.sh OUT - session 7, H100 (~2 min): per-kernel device time of one decode step with the
# session's defaults (PDL with the producer membar, evict-first weights), Q6_K and Q8_0, at
# depth 0 and 1024 - where the remaining time of a token goes.
set -u
out=${1:?usage: s33.sh OUT}
mkdir -p "$out"
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
V=tests/data/tokenizers/ggml-vocab-gpt-2.gguf
for ty in q6_k q8_0; do
    build/nvhcq gen-model --preset llama-3.2-1b --type $ty --vocab $V -o /tmp/m_$ty.gguf >/dev/null 2>&1 || echo "gen $ty failed"
    echo "== $ty"
    timeout 120 build/nvhcq llm-bench -m /tmp/m_$ty.gguf -p 0 -n 128 -r 2 -d 0,1024 --profile --dev rm:0 2>&1 | grep -vE "^\s*$" | head -70
done
