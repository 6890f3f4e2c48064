/* SPDX-License-Identifier: MIT */
/*
 * fuzz_tok.c - libFuzzer target for encode/decode with the real vocabularies of
 * tests/data/tokenizers/ (loaded once; run from the repository root, as `make fuzz` does).
 * Input: one byte choosing the vocabulary, then the text. Properties, checked with abort():
 * every id is inside the vocabulary; decoding the ids of encode(text) (special tokens off)
 * gives the text back byte for byte: for any bytes with a byte-level BPE vocabulary that has
 * a token for every byte (gpt-2), for printable ASCII text (plus newline and tab) with the
 * other byte-level ones (mpt, falcon, starcoder, refact lack tokens for some bytes;
 * deepseek's byte tokens are user-defined and decode as their text, as in llama.cpp); the
 * streaming detokenizer's output equals the concatenated pieces for valid UTF-8. Seeds:
 * tests/fuzz/seeds_fuzz_tok/ (the vocabularies' llama.cpp test inputs, mk_tok_seeds.py).
 */
#include "llm.h"
#include "llm_unicode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const vocabs[] = {
    "gpt-2", "llama-spm", "deepseek-llm", "deepseek-coder", "falcon", "mpt", "starcoder", "refact",
};
#define NV (sizeof vocabs / sizeof vocabs[0])
static struct llm_gguf *g[NV];
static struct llm_tok *tok[NV];
static bool tried[NV], lossless[NV];

static bool
valid_utf8(const char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        uint32_t l;
        if (llm_utf8_decode(s + i, n - i, &l) == 0xFFFD && !(l == 3 && !memcmp(s + i, "\xEF\xBF\xBD", 3)))
            return false;
        i += l;
    }
    return true;
}

static struct llm_tok *
vocab(size_t i)
{
    if (!tried[i]) {
        char path[128];
        tried[i] = true;
        snprintf(path, sizeof path, "tests/data/tokenizers/ggml-vocab-%s.gguf", vocabs[i]);
        if (llm_gguf_open(path, &g[i]) != HCQ_OK || llm_tok_create(g[i], &tok[i]) != HCQ_OK)
            abort(); /* the committed vocabularies must load */
        lossless[i] = i != 1;
        for (int b = 0; b < 256 && lossless[i]; b++) {
            char c = (char)b, out[16];
            int32_t id[8];
            size_t n = 0, on = 0;
            if (llm_tok_encode(tok[i], &c, 1, false, false, id, 8, &n) != HCQ_OK || n > 8)
                abort();
            for (size_t k = 0; k < n; k++)
                on += llm_tok_piece(tok[i], id[k], false, out + on, sizeof out - on);
            lossless[i] = on == 1 && out[0] == c;
        }
    }
    return tok[i];
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int32_t ids[1 << 14];
    static char dec[1 << 16], str[1 << 16];
    if (size < 1 || size > 4096)
        return 0;
    size_t vi = data[0] % NV;
    struct llm_tok *t = vocab(vi);
    const char *text = (const char *)data + 1;
    size_t len = size - 1, n = 0;
    for (int ps = 0; ps < 2; ps++) {
        if (llm_tok_encode(t, text, len, false, ps, ids, sizeof ids / sizeof ids[0], &n) != HCQ_OK)
            abort(); /* any byte string encodes */
        if (n > sizeof ids / sizeof ids[0])
            abort(); /* at most one id per byte plus one per special token */
        size_t dn = 0, sn = 0;
        struct llm_detok d;
        llm_detok_init(&d);
        for (size_t i = 0; i < n; i++) {
            if (ids[i] < 0 || (uint32_t)ids[i] >= llm_tok_vocab_size(t))
                abort();
            dn += llm_tok_piece(t, ids[i], false, dec + dn, sizeof dec - dn);
            sn += llm_detok_push(&d, t, ids[i], str + sn, sizeof str - sn);
        }
        sn += llm_detok_flush(&d, str + sn, sizeof str - sn);
        bool bpe = vi != 1; /* every vocabulary but llama-spm is byte-level BPE */
        bool ascii = true;
        for (size_t i = 0; i < len && ascii; i++)
            ascii =
                ((uint8_t)text[i] >= 0x20 && (uint8_t)text[i] < 0x7F) || text[i] == '\n' || text[i] == '\t';
        if (bpe && !ps && (lossless[vi] || ascii) && (dn != len || memcmp(dec, text, len)))
            abort(); /* byte-level BPE loses nothing */
        if (bpe && !ps && valid_utf8(text, len) && (sn != dn || memcmp(str, dec, dn)))
            abort(); /* streaming holds back only incomplete sequences */
    }
    return 0;
}
