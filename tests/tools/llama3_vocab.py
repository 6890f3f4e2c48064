#!/usr/bin/env python3
# llama3_vocab.py - writes a vocabulary-only GGUF (v3, no tensors) from llama3_vocab.js's
# JSON: tokenizer.ggml.model "gpt2", pre "llama-bpe", tokens, token types (the 256 ids from
# 128000 on are control tokens, as in LLaMA-3), merges by rank, BOS 128000 / EOS 128001.
# GGUF layout facts: docs/perf/anchors.md (GGUF). Usage: llama3_vocab.py IN_JSON OUT_GGUF
import json, struct, sys

def s(b):  # GGUF string: u64 length + bytes
    return struct.pack('<Q', len(b)) + b

def kv_str(k, v):
    return s(k.encode()) + struct.pack('<I', 8) + s(v.encode())

def kv_u32(k, v):
    return s(k.encode()) + struct.pack('<II', 4, v)

def kv_arr_str(k, vs):
    return s(k.encode()) + struct.pack('<IIQ', 9, 8, len(vs)) + b''.join(s(v.encode('utf-8')) for v in vs)

def kv_arr_i32(k, vs):
    return s(k.encode()) + struct.pack('<IIQ', 9, 5, len(vs)) + struct.pack('<%di' % len(vs), *vs)

d = json.load(open(sys.argv[1]))
vocab, merges = d['vocab'], d['merges']
types = [3 if i >= 128000 else 1 for i in range(len(vocab))]
kvs = [kv_str('general.architecture', 'llama'), kv_str('general.name', 'llama3-vocab (llama3-tokenizer-js)'),
       kv_str('tokenizer.ggml.model', 'gpt2'), kv_str('tokenizer.ggml.pre', 'llama-bpe'),
       kv_arr_str('tokenizer.ggml.tokens', vocab), kv_arr_i32('tokenizer.ggml.token_type', types),
       kv_arr_str('tokenizer.ggml.merges', merges), kv_u32('tokenizer.ggml.bos_token_id', 128000),
       kv_u32('tokenizer.ggml.eos_token_id', 128001)]
body = b'GGUF' + struct.pack('<IQQ', 3, 0, len(kvs)) + b''.join(kvs)
body += b'\0' * ((32 - len(body) % 32) % 32)  # data section (empty) at the default alignment
open(sys.argv[2], 'wb').write(body)
