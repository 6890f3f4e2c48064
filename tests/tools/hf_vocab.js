// hf_vocab.js - runs @lenml/tokenizers (Apache-2.0, npm; a dependency-free JavaScript fork of
// the tokenizers of transformers.js, an implementation independent of ours) on a published
// tokenizer.json to produce expected ids for our tokenizer, without storing the vocabulary here:
//   node hf_vocab.js LIB.js TOKENIZER_JSON TOKENIZER_CONFIG_JSON INP OUT_IDS
// LIB.js: the package's dist/main.js (CommonJS). INP: llama.cpp's vocab-test format (inputs
// separated by "\n__ggml_vocab_test__\n"). OUT_IDS: for every input one line of " id id ..."
// without BOS/EOS, like llama.cpp's .out files (tests/suites/qwen2_vocab.sh, command_r_vocab.sh).
'use strict';
const fs = require('fs');
const [lib, tokJson, tokConfig, inp, outIds] = process.argv.slice(2);
const {TokenizerLoader} = require(lib);
const tok = TokenizerLoader.fromPreTrained({
    tokenizerJSON: JSON.parse(fs.readFileSync(tokJson, 'utf8')),
    tokenizerConfig: JSON.parse(fs.readFileSync(tokConfig, 'utf8')),
});
// The Digits pre-tokenizer (Command-R: individual digits) splits on Rust's char::is_numeric in
// the tokenizers library the vocabulary was published with (and \p{N} in llama.cpp): every
// Unicode number, '½' included. This implementation matches JavaScript's \d, ASCII digits
// only, so ' ½' would stay one piece; its pattern is replaced by the Unicode one. The count of
// inputs whose ids that changes is printed (1 of llama.cpp's 46 for Command-R).
const digits = [];
(function find(p) {
    if (!p) return;
    if (p.config && p.config.type === 'Digits') digits.push(p);
    for (const q of p.tokenizers || []) find(q);
})(tok.pre_tokenizer);
const asciiDigits = [];
for (const d of digits) {
    if (String(d.pattern) !== (d.config.individual_digits ? '/[^\\d]+|\\d/gu' : '/[^\\d]+|\\d+/gu')) {
        console.error(`hf_vocab.js: unexpected Digits pattern ${d.pattern}; check the correction`);
        process.exit(1);
    }
    asciiDigits.push(d.pattern);
    d.pattern = new RegExp('[^\\p{N}]+|\\p{N}' + (d.config.individual_digits ? '' : '+'), 'gu');
}
const parts = fs.readFileSync(inp, 'utf8').split('\n__ggml_vocab_test__\n');
parts.pop(); // text after the last separator is not an input
// add_special_tokens false: no BOS (Command-R adds one by default), as the .out files have none
const lines = parts.map((p) => tok.encode(p, {add_special_tokens: false}).map((i) => ' ' + i).join(''));
fs.writeFileSync(outIds, lines.join('\n') + '\n');
let changed = 0;
if (digits.length) {
    digits.forEach((d, i) => (d.pattern = asciiDigits[i]));
    parts.forEach((p, i) => {
        if (tok.encode(p, {add_special_tokens: false}).map((id) => ' ' + id).join('') !== lines[i]) changed++;
    });
}
console.log(`hf_vocab.js: ${tok.constructor.name}, ${parts.length} inputs` +
            (digits.length ? `, ${changed} of them tokenized differently by the corrected Digits split` : ''));
