// llama3_vocab.js - runs llama3-tokenizer-js (MIT, npm; an independent JavaScript
// implementation of the LLaMA-3 tokenizer with its vocabulary baked in) to produce test data
// for our tokenizer without storing Meta's vocabulary in this repository:
//   node llama3_vocab.js BUNDLE.cjs INP OUT_JSON OUT_IDS
// OUT_JSON: {"vocab": [128256 token strings, id = index], "merges": ["a b", ... by rank]};
// OUT_IDS: for every input of INP (llama.cpp's vocab-test format: inputs separated by
// "\n__ggml_vocab_test__\n"), one line of " id id ..." (no BOS/EOS), like llama.cpp's .out.
'use strict';
const fs = require('fs');
const [bundle, inp, outJson, outIds] = process.argv.slice(2);
const tok = require(bundle).llama3Tokenizer;
const merges = [];
for (const [pair, rank] of tok.merges) merges.push([rank, pair]);
merges.sort((a, b) => a[0] - b[0]);
fs.writeFileSync(outJson, JSON.stringify({vocab: tok.vocabById, merges: merges.map((m) => m[1])}));
const parts = fs.readFileSync(inp, 'utf8').split('\n__ggml_vocab_test__\n');
parts.pop(); // text after the last separator is not an input
const lines = parts.map((p) => tok.encode(p, {bos: false, eos: false}).map((i) => ' ' + i).join(''));
fs.writeFileSync(outIds, lines.join('\n') + '\n');
console.log(`llama3_vocab.js: ${tok.vocabById.length} tokens, ${merges.length} merges, ${parts.length} inputs`);
