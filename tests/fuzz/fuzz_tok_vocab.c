/* SPDX-License-Identifier: MIT */
/*
 * fuzz_tok_vocab.c - libFuzzer target for tokenizer construction from an untrusted GGUF
 * (tokenizer.ggml.* keys: model, pre, tokens, scores, token_type, merges, special ids) and
 * encode/decode with it. Seeds: tests/fuzz/seeds_fuzz_tok_vocab/ (the repository's vocab files
 * cut small by tests/fuzz/mk_tok_seeds.py). A vocabulary that loads must encode any text
 * (here: fixed strings and the input's own tail) with ids inside the vocabulary, and decoding
 * those ids must not read or write out of bounds (ASan/UBSan).
 */
#include "llm.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
exercise(const struct llm_tok *tok, const char *text, size_t len)
{
    static int32_t ids[8192];
    size_t n = 0;
    for (int ps = 0; ps < 2; ps++) {
        if (llm_tok_encode(tok, text, len, true, ps, ids, sizeof ids / sizeof ids[0], &n) != HCQ_OK)
            continue;
        if (n > sizeof ids / sizeof ids[0])
            n = sizeof ids / sizeof ids[0];
        uint32_t nv = llm_tok_vocab_size(tok);
        struct llm_detok d;
        llm_detok_init(&d);
        char out[256];
        for (size_t i = 0; i < n; i++) {
            if (ids[i] < 0 || (uint32_t)ids[i] >= nv)
                abort(); /* an id outside the vocabulary */
            (void)llm_detok_push(&d, tok, ids[i], out, sizeof out);
            (void)llm_tok_piece(tok, ids[i], true, out, sizeof out);
        }
        (void)llm_detok_flush(&d, out, sizeof out);
    }
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct llm_gguf *g = NULL;
    struct llm_tok *tok = NULL;
    if (llm_gguf_parse(data, size, &g) != HCQ_OK)
        return 0;
    struct llm_tok_params p = {.pre_fallback = (size & 1) ? "gpt2" : NULL};
    if (llm_tok_create_ex(g, &p, &tok) == HCQ_OK) {
        static const char *const texts[] = {
            "Hello world, it's 12345 o'clock!\n\n  \t x",
            "   Hello\n    Hello",
            "\xC3\xA4\xE2\x96\x81\xF0\x9F\x98\x81 \xE4\xBD\xA0",
            "<|endoftext|><s></s><unk>",
            "\xFF\xFE\x80 bad utf-8 \xC3",
            "",
        };
        for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
            exercise(tok, texts[i], strlen(texts[i]));
        size_t tail = size > 256 ? 256 : size;
        exercise(tok, (const char *)data + size - tail, tail);
    }
    llm_tok_destroy(tok);
    llm_gguf_destroy(g);
    return 0;
}
