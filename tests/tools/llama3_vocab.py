#!/usr/bin/env python3
# llama3_vocab.py - writes a vocabulary-only GGUF (v3, no tensors) from llama3_vocab.js's
# JSON: tokenizer.ggml.model "gpt2", pre "llama-bpe", tokens, token types (the 256 ids from
# 128000 on are control tokens, as in LLaMA-3), merges by rank, BOS 128000 / EOS 128001.
# Usage: llama3_vocab.py IN_JSON OUT_GGUF
import json, sys
from gguf_vocab import CONTROL, NORMAL, kv_arr_i32, kv_arr_str, kv_str, kv_u32, write

d = json.load(open(sys.argv[1]))
vocab, merges = d['vocab'], d['merges']
types = [CONTROL if i >= 128000 else NORMAL for i in range(len(vocab))]
write(sys.argv[2], [kv_str('general.architecture', 'llama'), kv_str('general.name', 'llama3-vocab (llama3-tokenizer-js)'),
                    kv_str('tokenizer.ggml.model', 'gpt2'), kv_str('tokenizer.ggml.pre', 'llama-bpe'),
                    kv_arr_str('tokenizer.ggml.tokens', vocab), kv_arr_i32('tokenizer.ggml.token_type', types),
                    kv_arr_str('tokenizer.ggml.merges', merges), kv_u32('tokenizer.ggml.bos_token_id', 128000),
                    kv_u32('tokenizer.ggml.eos_token_id', 128001)])
