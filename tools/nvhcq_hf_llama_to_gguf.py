#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# nvhcq_hf_llama_to_gguf.py - convert a small Hugging Face LLaMA checkpoint (config.json,
# one model.safetensors, tokenizer.json of the SentencePiece-style "BPE" kind: "▁" for spaces,
# optional byte fallback) into a GGUF file nvhcq runs. Standard library only, so the test
# data in tests/data/models/ can be re-made anywhere:
#
#   python3 tools/nvhcq_hf_llama_to_gguf.py DIR OUT.gguf [--type auto|f32|bf16|f16] [--name NAME]
#       [--license SPDX]
#   python3 tools/nvhcq_hf_llama_to_gguf.py DIR --encode TEXT    # token ids by tokenizer.json's
#       own rules (merge ranks), an independent check of the converted vocabulary
#
# Facts used (from the GGUF spec and the Hugging Face / GGUF LLaMA conventions):
# - GGUF v3 layout: header, key/values, tensor infos, data aligned to 32 bytes; tensor ne[] lists
#   the fastest-varying dimension first, so a PyTorch [out, in] matrix is ne = [in, out] with
#   the same bytes.
# - Hugging Face stores Q and K with "rotate half" RoPE pairs (i, i + d/2) per head; GGUF LLaMA
#   files rotate adjacent pairs (2i, 2i + 1), so the rows of each head are interleaved:
#   new row h*d + 2i + j = old row h*d + j*d/2 + i (K uses the KV head count).
# - Tensor names: token_embd, blk.N.{attn_norm, attn_q, attn_k, attn_v, attn_output, ffn_norm,
#   ffn_gate, ffn_up, ffn_down}, output_norm, output (absent when tied).
# - Tokenizer: written as a "llama" (SentencePiece) vocabulary. Hugging Face BPE merges pairs by
#   rank; SentencePiece merges the adjacent pair whose joined text has the highest score, so
#   each token gets score -(rank of the merge that forms it) (0 for base symbols) and both
#   orders agree. Types: <unk> UNKNOWN, added special tokens CONTROL, <0xNN> BYTE, others NORMAL.
import argparse
import json
import os
import struct
import sys

GGUF_U32, GGUF_I32, GGUF_F32, GGUF_BOOL, GGUF_STR, GGUF_ARR = 4, 5, 6, 7, 8, 9
T_F32, T_F16, T_BF16 = 0, 1, 30
ALIGN = 32


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack_from("<Q", data, 0)
    header = json.loads(data[8:8 + n])
    base = 8 + n
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        a, b = info["data_offsets"]
        raw = data[base + a:base + b]
        dt = info["dtype"]
        if dt == "F32":
            vals = list(struct.unpack("<%df" % (len(raw) // 4), raw))
        elif dt == "BF16":
            u = struct.unpack("<%dH" % (len(raw) // 2), raw)
            vals = list(struct.unpack("<%df" % len(u), struct.pack("<%dI" % len(u), *[x << 16 for x in u])))
        elif dt == "F16":
            vals = list(struct.unpack("<%de" % (len(raw) // 2), raw))
        else:
            sys.exit("unsupported dtype %s for %s" % (dt, name))
        out[name] = (info["shape"], vals)
    return out


def f32_bits(vals):
    return struct.unpack("<%dI" % len(vals), struct.pack("<%df" % len(vals), *vals))


def encode(vals, ttype):
    if ttype == T_F32:
        return struct.pack("<%df" % len(vals), *vals)
    if ttype == T_F16:
        return struct.pack("<%de" % len(vals), *vals)
    # bf16 with round-to-nearest-even (exact when the values came from bf16)
    out = []
    for b in f32_bits(vals):
        out.append(((b + 0x7FFF + ((b >> 16) & 1)) >> 16) & 0xFFFF)
    return struct.pack("<%dH" % len(out), *out)


def permute_rows(vals, rows, cols, n_head):
    d = rows // n_head
    out = [0.0] * len(vals)
    for h in range(n_head):
        for i in range(d // 2):
            for j in range(2):
                src = h * d + j * (d // 2) + i
                dst = h * d + 2 * i + j
                out[dst * cols:(dst + 1) * cols] = vals[src * cols:(src + 1) * cols]
    return out


class Writer:
    def __init__(self):
        self.kv = []
        self.tensors = []

    def s(self, x):
        b = x.encode("utf-8") if isinstance(x, str) else x
        return struct.pack("<Q", len(b)) + b

    def add(self, key, vtype, val):
        body = struct.pack("<I", vtype)
        if vtype == GGUF_STR:
            body += self.s(val)
        elif vtype == GGUF_U32:
            body += struct.pack("<I", val)
        elif vtype == GGUF_F32:
            body += struct.pack("<f", val)
        elif vtype == GGUF_BOOL:
            body += struct.pack("<B", 1 if val else 0)
        else:
            raise ValueError(vtype)
        self.kv.append(self.s(key) + body)

    def add_arr(self, key, etype, vals):
        body = struct.pack("<IIQ", GGUF_ARR, etype, len(vals))
        if etype == GGUF_STR:
            body += b"".join(self.s(v) for v in vals)
        elif etype == GGUF_F32:
            body += struct.pack("<%df" % len(vals), *vals)
        elif etype == GGUF_I32:
            body += struct.pack("<%di" % len(vals), *vals)
        self.kv.append(self.s(key) + body)

    def add_tensor(self, name, ne, ttype, data):
        self.tensors.append((name, ne, ttype, data))

    def write(self, path):
        head = b"GGUF" + struct.pack("<IQQ", 3, len(self.tensors), len(self.kv)) + b"".join(self.kv)
        infos, off = b"", 0
        offsets = []
        for name, ne, ttype, data in self.tensors:
            offsets.append(off)
            infos += self.s(name) + struct.pack("<I", len(ne)) + b"".join(struct.pack("<Q", x) for x in ne)
            infos += struct.pack("<IQ", ttype, off)
            off += (len(data) + ALIGN - 1) // ALIGN * ALIGN
        blob = head + infos
        blob += b"\0" * ((ALIGN - len(blob) % ALIGN) % ALIGN)
        for (name, ne, ttype, data), o in zip(self.tensors, offsets):
            blob += data + b"\0" * ((ALIGN - len(data) % ALIGN) % ALIGN)
        with open(path, "wb") as f:
            f.write(blob)


def hf_bpe_encode(tok, text):
    """tokenizer.json semantics: normalizers Prepend/Replace, no pre-tokenizer, then BPE by
    merge rank (lowest first, leftmost among equals), byte fallback, else unk."""
    for n in (tok.get("normalizer") or {}).get("normalizers", []):
        if n["type"] == "Prepend":
            text = n["prepend"] + text
        elif n["type"] == "Replace":
            text = text.replace(n["pattern"]["String"], n["content"])
    m = tok["model"]
    vocab = m["vocab"]
    rank = {}
    for r, mg in enumerate(m["merges"]):
        pair = tuple(mg.split(" ", 1)) if isinstance(mg, str) else tuple(mg)
        rank.setdefault(pair, r)
    syms = list(text)
    while len(syms) > 1:
        best = None
        for i in range(len(syms) - 1):
            r = rank.get((syms[i], syms[i + 1]))
            if r is not None and (best is None or r < best[0]):
                best = (r, i)
        if best is None:
            break
        i = best[1]
        syms[i:i + 2] = [syms[i] + syms[i + 1]]
    ids = []
    for s_ in syms:
        if s_ in vocab:
            ids.append(vocab[s_])
        elif m.get("byte_fallback") and all("<0x%02X>" % b in vocab for b in s_.encode("utf-8")):
            ids.extend(vocab["<0x%02X>" % b] for b in s_.encode("utf-8"))
        else:
            ids.append(vocab[m["unk_token"]])
    return ids


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("out", nargs="?")
    ap.add_argument("--encode", default=None)
    ap.add_argument("--type", default="auto", choices=["auto", "f32", "bf16", "f16"])
    ap.add_argument("--name", default=None)
    ap.add_argument("--license", default=None)
    a = ap.parse_args()
    tok = json.load(open(os.path.join(a.dir, "tokenizer.json")))
    if a.encode is not None:
        print(" ".join(str(i) for i in hf_bpe_encode(tok, a.encode)))
        return
    if not a.out:
        sys.exit("usage: DIR OUT.gguf | DIR --encode TEXT")
    cfg = json.load(open(os.path.join(a.dir, "config.json")))
    tcfg_path = os.path.join(a.dir, "tokenizer_config.json")
    tcfg = json.load(open(tcfg_path)) if os.path.exists(tcfg_path) else {}
    w = read_safetensors(os.path.join(a.dir, "model.safetensors"))
    if cfg.get("model_type") != "llama":
        sys.exit("model_type %s: only llama" % cfg.get("model_type"))
    d, L = cfg["hidden_size"], cfg["num_hidden_layers"]
    nh = cfg["num_attention_heads"]
    nkv = cfg.get("num_key_value_heads", nh)
    ff, V = cfg["intermediate_size"], cfg["vocab_size"]
    tied = cfg.get("tie_word_embeddings", False)

    if a.type == "auto":
        exact = all(all((b & 0xFFFF) == 0 for b in f32_bits(v)) for s, v in w.values() if len(s) == 2)
        wtype = T_BF16 if exact else T_F32
    else:
        wtype = {"f32": T_F32, "bf16": T_BF16, "f16": T_F16}[a.type]

    g = Writer()
    g.add("general.architecture", GGUF_STR, "llama")
    g.add("general.name", GGUF_STR, a.name or os.path.basename(os.path.normpath(a.dir)))
    if a.license:
        g.add("general.license", GGUF_STR, a.license)
    g.add("llama.context_length", GGUF_U32, cfg.get("max_position_embeddings", 2048))
    g.add("llama.embedding_length", GGUF_U32, d)
    g.add("llama.block_count", GGUF_U32, L)
    g.add("llama.feed_forward_length", GGUF_U32, ff)
    g.add("llama.attention.head_count", GGUF_U32, nh)
    g.add("llama.attention.head_count_kv", GGUF_U32, nkv)
    g.add("llama.attention.layer_norm_rms_epsilon", GGUF_F32, cfg.get("rms_norm_eps", 1e-5))
    g.add("llama.rope.freq_base", GGUF_F32, cfg.get("rope_theta", 10000.0))
    g.add("llama.rope.dimension_count", GGUF_U32, d // nh)
    g.add("llama.vocab_size", GGUF_U32, V)

    # tokenizer
    m = tok["model"]
    if m.get("type") != "BPE":
        sys.exit("tokenizer model %s: only BPE" % m.get("type"))
    vocab = m["vocab"]
    texts = [None] * V
    for t, i in vocab.items():
        if i < V:
            texts[i] = t
    added = {x["id"]: x for x in tok.get("added_tokens", [])}
    for i, x in added.items():
        if i < V:
            texts[i] = x["content"]
    rank_of = {}
    for r, mg in enumerate(m.get("merges", [])):
        left, right = mg.split(" ", 1) if isinstance(mg, str) else mg
        rank_of.setdefault(left + right, r)
    unk = m.get("unk_token")
    scores, types = [], []
    for i, t in enumerate(texts):
        if t is None:
            texts[i] = "[PAD%d]" % i
            t = texts[i]
        scores.append(-float(rank_of[t]) if t in rank_of else 0.0)
        if t == unk:
            types.append(2)
        elif i in added and added[i].get("special", False):
            types.append(3)
        elif len(t) == 6 and t.startswith("<0x") and t.endswith(">"):
            types.append(6)
        else:
            types.append(1)
    g.add("tokenizer.ggml.model", GGUF_STR, "llama")
    g.add_arr("tokenizer.ggml.tokens", GGUF_STR, texts)
    g.add_arr("tokenizer.ggml.scores", GGUF_F32, scores)
    g.add_arr("tokenizer.ggml.token_type", GGUF_I32, types)

    def tok_id(key):
        v = tcfg.get(key)
        if isinstance(v, dict):
            v = v.get("content")
        return vocab.get(v) if v is not None else None

    for key, gkey in (("bos_token", "bos"), ("eos_token", "eos"), ("unk_token", "unknown"), ("pad_token", "padding")):
        i = tok_id(key)
        if i is None and key in ("bos_token", "eos_token"):
            i = cfg.get(key + "_id")
        if i is not None:
            g.add("tokenizer.ggml.%s_token_id" % gkey, GGUF_U32, i)
    g.add("tokenizer.ggml.add_bos_token", GGUF_BOOL, tcfg.get("add_bos_token", True))
    g.add("tokenizer.ggml.add_eos_token", GGUF_BOOL, tcfg.get("add_eos_token", False))
    prepend = any(n.get("type") == "Prepend" for n in (tok.get("normalizer") or {}).get("normalizers", []))
    g.add("tokenizer.ggml.add_space_prefix", GGUF_BOOL, prepend)

    def tensor(hf, name, permute_heads=0):
        shape, vals = w[hf]
        if len(shape) == 1:
            g.add_tensor(name, [shape[0]], T_F32, encode(vals, T_F32))
            return
        rows, cols = shape
        if permute_heads:
            vals = permute_rows(vals, rows, cols, permute_heads)
        g.add_tensor(name, [cols, rows], wtype, encode(vals, wtype))

    emb = "model.embed_tokens.weight" if "model.embed_tokens.weight" in w else "lm_head.weight"
    tensor(emb, "token_embd.weight")
    for l in range(L):
        p = "model.layers.%d." % l
        tensor(p + "input_layernorm.weight", "blk.%d.attn_norm.weight" % l)
        tensor(p + "self_attn.q_proj.weight", "blk.%d.attn_q.weight" % l, nh)
        tensor(p + "self_attn.k_proj.weight", "blk.%d.attn_k.weight" % l, nkv)
        tensor(p + "self_attn.v_proj.weight", "blk.%d.attn_v.weight" % l)
        tensor(p + "self_attn.o_proj.weight", "blk.%d.attn_output.weight" % l)
        tensor(p + "post_attention_layernorm.weight", "blk.%d.ffn_norm.weight" % l)
        tensor(p + "mlp.gate_proj.weight", "blk.%d.ffn_gate.weight" % l)
        tensor(p + "mlp.up_proj.weight", "blk.%d.ffn_up.weight" % l)
        tensor(p + "mlp.down_proj.weight", "blk.%d.ffn_down.weight" % l)
    tensor("model.norm.weight", "output_norm.weight")
    if not tied and "lm_head.weight" in w and emb != "lm_head.weight":
        tensor("lm_head.weight", "output.weight")
    g.write(a.out)
    print("%s: %d tensors, weights %s, vocab %d" % (a.out, len(g.tensors), {0: "f32", 1: "f16", 30: "bf16"}[wtype], V))


if __name__ == "__main__":
    main()
