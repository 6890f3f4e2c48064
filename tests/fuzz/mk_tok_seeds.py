#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# mk_tok_seeds.py - seed corpora of the tokenizer fuzz targets, made from the vocab files in
# tests/data/tokenizers/ (run from the repository root; standard library only):
#   seeds_fuzz_tok_vocab/<name>.gguf  the vocabulary cut to its first 320 tokens (plus up to 64
#                                     of its control/user-defined tokens) and
#                                     the merges among them, other tokenizer keys kept: small
#                                     GGUFs the vocab parser, the pre-tokenizer and encode /
#                                     decode all see
#   seeds_fuzz_tok/<name>-<k>         one byte choosing the vocabulary (index in fuzz_tok.c's
#                                     list) + input k of that vocab's .inp test vectors
import os
import struct
import sys

SRC = "tests/data/tokenizers"
VOCABS = ["ggml-vocab-gpt-2", "ggml-vocab-llama-spm", "ggml-vocab-deepseek-llm", "ggml-vocab-deepseek-coder",
          "ggml-vocab-falcon", "ggml-vocab-mpt", "ggml-vocab-starcoder", "ggml-vocab-refact"]
SIZES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}


def read_kvs(path):
    d = open(path, "rb").read()
    o = [24]
    nt, nk = struct.unpack_from("<QQ", d, 8)

    def u32():
        v = struct.unpack_from("<I", d, o[0])[0]
        o[0] += 4
        return v

    def u64():
        v = struct.unpack_from("<Q", d, o[0])[0]
        o[0] += 8
        return v

    def s():
        n = u64()
        v = d[o[0]:o[0] + n]
        o[0] += n
        return v

    def val(t):
        if t == 8:
            return s()
        if t == 9:
            et = u32()
            n = u64()
            return (et, [val(et) for _ in range(n)])
        v = d[o[0]:o[0] + SIZES[t]]
        o[0] += SIZES[t]
        return v

    kvs = []
    for _ in range(nk):
        k = s()
        t = u32()
        kvs.append((k, t, val(t)))
    return kvs


def enc_val(t, v):
    if t == 8:
        return struct.pack("<Q", len(v)) + v
    if t == 9:
        et, items = v
        return struct.pack("<IQ", et, len(items)) + b"".join(enc_val(et, x) for x in items)
    return v


def main():
    for idx, name in enumerate(VOCABS):
        kvs = read_kvs(os.path.join(SRC, name + ".gguf"))
        kv = {k: (t, v) for k, t, v in kvs}
        toks = kv[b"tokenizer.ggml.tokens"][1][1]
        types = kv.get(b"tokenizer.ggml.token_type")
        tvals = [struct.unpack("<i", x)[0] for x in types[1][1]] if types else [1] * len(toks)
        special = [i for i in range(320, len(toks)) if tvals[i] in (3, 4)][:64]
        keep = list(range(min(320, len(toks)))) + special
        kept = set(toks[i] for i in keep)
        out = []
        for k, t, v in kvs:
            if not k.startswith(b"tokenizer.") or k == b"tokenizer.chat_template":
                if k != b"general.architecture":
                    continue
            if k in (b"tokenizer.ggml.tokens", b"tokenizer.ggml.scores", b"tokenizer.ggml.token_type"):
                et, items = v
                v = (et, [items[i] for i in keep])
            elif k == b"tokenizer.ggml.merges":
                et, items = v
                v = (et, [m for m in items if b" " in m and m.split(b" ", 1)[0] in kept and
                          m.split(b" ", 1)[1] in kept and m.replace(b" ", b"", 1) in kept])
            out.append(struct.pack("<Q", len(k)) + k + struct.pack("<I", t) + enc_val(t, v))
        img = b"GGUF" + struct.pack("<IQQ", 3, 0, len(out)) + b"".join(out)
        open("tests/fuzz/seeds_fuzz_tok_vocab/%s.gguf" % name[len("ggml-vocab-"):], "wb").write(img)
        inp = open(os.path.join(SRC, name + ".gguf.inp"), "rb").read().split(b"\n__ggml_vocab_test__\n")
        for k, text in enumerate(inp[:-1]):
            if k % 4 == 0 or k == len(inp) - 2:
                open("tests/fuzz/seeds_fuzz_tok/%s-%02d" % (name[len("ggml-vocab-"):], k), "wb").write(
                    bytes([idx]) + text)


if __name__ == "__main__":
    sys.exit(main())
