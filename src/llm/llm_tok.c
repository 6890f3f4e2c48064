/* SPDX-License-Identifier: MIT */
/*
 * llm_tok.c - tokenizers built from a GGUF vocabulary (tokenizer.ggml.*): byte-level BPE
 * ("gpt2" model; split rules named by tokenizer.ggml.pre, llm_tok_pre.c) and SentencePiece
 * BPE ("llama" model: score-ordered merges, "▁" for spaces, <0xNN> byte fallback); the text
 * is partitioned on special and user-defined tokens first (llama.cpp's rule); decoding to
 * bytes. Every array the vocabulary brings is checked against the token count. Layer: llm.
 * Facts: GPT-2's byte-to-unicode table and split pattern, LLaMA-3's split pattern and
 * SentencePiece's conventions, as documented by their projects; the code is ours.
 */
#include "llm_tok_priv.h"

#include "util_log.h"
#include "llm_unicode.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ==== Hash map: bytes -> int32 ==== */

static uint64_t
hash_bytes(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
    return h;
}

static enum hcq_status
hmap_init(struct llm_hmap *m, uint64_t n)
{
    m->cap = 16;
    while (m->cap < 2 * n)
        m->cap *= 2;
    m->slots = calloc(m->cap, sizeof *m->slots);
    return m->slots ? HCQ_OK : hcq_err(HCQ_ERR_NOMEM, "llm_tok: hash map of %llu", (unsigned long long)n);
}

static void
hmap_fini(struct llm_hmap *m)
{
    free(m->slots);
}

/* Insert unless present (first wins, as the first id of duplicate tokens). */
static void
hmap_put(struct llm_hmap *m, const char *s, uint32_t n, int32_t val)
{
    for (uint64_t i = hash_bytes(s, n) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        struct llm_hslot *e = &m->slots[i];
        if (!e->s) {
            *e = (struct llm_hslot){s, n, val};
            return;
        }
        if (e->n == n && !memcmp(e->s, s, n))
            return;
    }
}

static int32_t
hmap_get(const struct llm_hmap *m, const char *s, size_t n)
{
    for (uint64_t i = hash_bytes(s, n) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        const struct llm_hslot *e = &m->slots[i];
        if (!e->s)
            return -1;
        if (e->n == n && !memcmp(e->s, s, n))
            return e->val;
    }
}

/* ==== GPT-2 byte <-> unicode ==== */

/* GPT-2's byte encoder: printable bytes 0x21-0x7E, 0xA1-0xAC, 0xAE-0xFF stand for themselves;
 * the other 68 bytes map, in increasing order, to U+0100, U+0101, ... */
static void
byte_map_init(struct llm_tok *t)
{
    uint32_t next = 256;
    for (uint32_t b = 0; b < 256; b++) {
        bool self = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
        t->byte_cp[b] = self ? b : next++;
    }
    memset(t->cp_byte, 0xFF, sizeof t->cp_byte);
    for (uint32_t b = 0; b < 256; b++)
        t->cp_byte[t->byte_cp[b]] = (int16_t)b;
}

/* ==== Create / destroy ==== */

/* Tokens matched in the text before splitting (llama.cpp's rule; CONTROL and UNKNOWN only
 * when parse_special). */
static bool
is_special_attr(int32_t a)
{
    return a == LLM_TOK_CONTROL || a == LLM_TOK_USER_DEFINED || a == LLM_TOK_UNKNOWN;
}

struct len_id {
    uint32_t len;
    int32_t id;
};

/* Longer first, then lower id (a total order: the result does not depend on qsort). */
static int
cmp_special_len(const void *a, const void *b)
{
    const struct len_id *x = a, *y = b;
    if (x->len != y->len)
        return x->len > y->len ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* An array that runs parallel to tokenizer.ggml.tokens: if present (or required) it must
 * have that many elements of that type. */
static enum hcq_status
parallel_array(const struct llm_gguf *g, const char *key, uint32_t want_type, uint64_t n, bool required,
               const uint8_t **data_out)
{
    uint32_t et;
    uint64_t cnt;
    enum hcq_status st = llm_gguf_get_arr(g, key, &et, &cnt);
    *data_out = NULL;
    if (st == HCQ_ERR_NOT_FOUND)
        return required ? hcq_err(HCQ_ERR_FORMAT,
                                  "llm_tok_create: %s missing (a SentencePiece vocabulary needs it)", key)
                        : HCQ_OK;
    if (st)
        return st;
    if (et != want_type || cnt != n)
        return hcq_err(
            HCQ_ERR_FORMAT,
            "llm_tok_create: %s has %llu elements of type %u (expected %llu of type %u, one per token)", key,
            (unsigned long long)cnt, et, (unsigned long long)n, want_type);
    *data_out = llm_gguf_arr_data(g, key);
    return HCQ_OK;
}

static enum hcq_status
load_vocab(struct llm_tok *t, const struct llm_gguf *g)
{
    uint32_t et;
    uint64_t n;
    enum hcq_status st = llm_gguf_get_arr(g, "tokenizer.ggml.tokens", &et, &n);
    if (st)
        return st;
    if (et != LLM_GGUF_STRING || n == 0 || n > (1u << 24))
        return hcq_err(HCQ_ERR_FORMAT, "llm_tok_create: tokenizer.ggml.tokens: type %u count %llu", et,
                       (unsigned long long)n);
    t->n_vocab = (uint32_t)n;
    t->toks = calloc(n, sizeof *t->toks);
    if (!t->toks)
        return hcq_err(HCQ_ERR_NOMEM, "llm_tok_create: %llu tokens", (unsigned long long)n);
    const uint8_t *scores = NULL, *types = NULL;
    if ((st = parallel_array(g, "tokenizer.ggml.scores", LLM_GGUF_FLOAT32, n, t->kind == LLM_TOK_KIND_SPM,
                             &scores)) ||
        (st = parallel_array(g, "tokenizer.ggml.token_type", LLM_GGUF_INT32, n, false, &types)))
        return st;
    if ((st = hmap_init(&t->vocab, n)))
        return st;
    for (uint64_t i = 0; i < n; i++) {
        struct llm_str s = llm_gguf_arr_str(g, "tokenizer.ggml.tokens", i);
        if (s.len > 1024)
            return hcq_err(HCQ_ERR_FORMAT, "llm_tok_create: token %llu is %llu bytes long",
                           (unsigned long long)i, (unsigned long long)s.len);
        struct llm_tok_entry *e = &t->toks[i];
        e->text = s.ptr;
        e->len = (uint32_t)s.len;
        e->attr = LLM_TOK_NORMAL;
        if (scores) {
            memcpy(&e->score, scores + 4 * i, 4);
            if (!isfinite(e->score))
                return hcq_err(HCQ_ERR_FORMAT, "llm_tok_create: tokenizer.ggml.scores[%llu] is not finite",
                               (unsigned long long)i);
        }
        if (types) {
            int32_t a;
            memcpy(&a, types + 4 * i, 4);
            if (a < 0 || a > LLM_TOK_BYTE)
                return hcq_err(HCQ_ERR_FORMAT,
                               "llm_tok_create: tokenizer.ggml.token_type[%llu] = %d (expected 0..6)",
                               (unsigned long long)i, a);
            e->attr = a ? a : LLM_TOK_NORMAL; /* 0 = undefined */
        }
        hmap_put(&t->vocab, e->text, e->len, (int32_t)i);
        if (is_special_attr(e->attr) && e->len)
            t->n_special++;
    }
    t->special = calloc(t->n_special ? t->n_special : 1, sizeof *t->special);
    struct len_id *order = calloc(t->n_special ? t->n_special : 1, sizeof *order);
    if (!t->special || !order) {
        free(order);
        return hcq_err(HCQ_ERR_NOMEM, "llm_tok_create: special tokens");
    }
    t->n_special = 0;
    for (uint32_t i = 0; i < t->n_vocab; i++)
        if (is_special_attr(t->toks[i].attr) && t->toks[i].len)
            order[t->n_special++] = (struct len_id){t->toks[i].len, (int32_t)i};
    /* longest first: the text is partitioned on longer special tokens before shorter ones */
    qsort(order, t->n_special, sizeof *order, cmp_special_len);
    for (uint32_t i = 0; i < t->n_special; i++)
        t->special[i] = order[i].id;
    free(order);
    return HCQ_OK;
}

static enum hcq_status
load_merges(struct llm_tok *t, const struct llm_gguf *g)
{
    uint32_t et;
    uint64_t n;
    enum hcq_status st = llm_gguf_get_arr(g, "tokenizer.ggml.merges", &et, &n);
    if (st)
        return st;
    if (et != LLM_GGUF_STRING)
        return hcq_err(HCQ_ERR_FORMAT,
                       "llm_tok_create: tokenizer.ggml.merges: element type %u (expected STRING)", et);
    if ((st = hmap_init(&t->merges, n)))
        return st;
    for (uint64_t i = 0; i < n; i++) {
        struct llm_str s = llm_gguf_arr_str(g, "tokenizer.ggml.merges", i);
        if (s.len > 2 * 1024 + 1 || !memchr(s.ptr, ' ', s.len))
            return hcq_err(HCQ_ERR_FORMAT,
                           "llm_tok_create: tokenizer.ggml.merges[%llu] is not \"left right\"",
                           (unsigned long long)i);
        hmap_put(&t->merges, s.ptr, (uint32_t)s.len, (int32_t)i);
    }
    return HCQ_OK;
}

static int32_t
opt_id(const struct llm_gguf *g, const char *key, uint32_t n_vocab)
{
    uint32_t v;
    if (llm_gguf_get_u32(g, key, &v))
        return -1;
    if (v >= n_vocab) {
        HCQ_LOG_WARN("llm_tok_create: %s = %u is not a token of the %u-token vocabulary: ignored", key, v,
                     n_vocab);
        return -1;
    }
    return (int32_t)v;
}

/* tokenizer.ggml.pre -> split rules; unknown names are an error unless the caller asked for
 * the GPT-2 fallback. A missing key means llama.cpp's "default" rules, with a warning. */
static enum hcq_status
select_pre(struct llm_tok *t, const struct llm_gguf *g, const struct llm_tok_params *p)
{
    struct llm_str pre;
    enum hcq_status st = llm_gguf_get_str(g, "tokenizer.ggml.pre", &pre);
    if (st == HCQ_ERR_NOT_FOUND) {
        HCQ_LOG_WARN(
            "llm_tok_create: tokenizer.ggml.pre missing: splitting with the 'default' rules (the file "
            "predates pre-tokenizer names; re-convert it if tokens look wrong)");
        t->pre = LLM_PRE_DEFAULT;
        return HCQ_OK;
    }
    if (st)
        return st;
    if (llm_pre_lookup(pre.ptr, pre.len, &t->pre))
        return HCQ_OK;
    int shown = (int)(pre.len > 64 ? 64 : pre.len);
    if (p && p->pre_fallback && !strcmp(p->pre_fallback, "gpt2")) {
        HCQ_LOG_WARN(
            "llm_tok_create: tokenizer.ggml.pre '%.*s' is not supported; splitting with GPT-2 rules as "
            "asked (tokenizer fallback gpt2): tokens may differ from the model's own tokenizer",
            shown, pre.ptr);
        t->pre = LLM_PRE_GPT2;
        return HCQ_OK;
    }
    if (p && p->pre_fallback)
        return hcq_err(HCQ_ERR_INVALID, "llm_tok_create: tokenizer fallback '%s' (the only one is gpt2)",
                       p->pre_fallback);
    char names[1024];
    llm_pre_names(names, sizeof names);
    return hcq_err(HCQ_ERR_UNSUPPORTED,
                   "llm_tok_create: tokenizer.ggml.pre '%.*s' is not supported (supported: %s); "
                   "--tokenizer-fallback gpt2 splits with GPT-2 rules anyway",
                   shown, pre.ptr, names);
}

enum hcq_status
llm_tok_create(const struct llm_gguf *g, struct llm_tok **tok_out)
{
    return llm_tok_create_ex(g, NULL, tok_out);
}

enum hcq_status
llm_tok_create_ex(const struct llm_gguf *g, const struct llm_tok_params *p, struct llm_tok **tok_out)
{
    enum hcq_status st;
    struct llm_str model;
    *tok_out = NULL;
    struct llm_tok *t = calloc(1, sizeof *t);
    if (!t)
        return hcq_err(HCQ_ERR_NOMEM, "llm_tok_create");
    if ((st = llm_gguf_get_str(g, "tokenizer.ggml.model", &model)))
        goto fail;
    if (model.len == 4 && !memcmp(model.ptr, "gpt2", 4)) {
        t->kind = LLM_TOK_KIND_BPE;
    } else if (model.len == 5 && !memcmp(model.ptr, "llama", 5)) {
        t->kind = LLM_TOK_KIND_SPM;
    } else {
        st = hcq_err(HCQ_ERR_UNSUPPORTED,
                     "llm_tok_create: tokenizer.ggml.model '%.*s' (expected gpt2 or llama)",
                     (int)(model.len > 32 ? 32 : model.len), model.ptr);
        goto fail;
    }
    if ((st = load_vocab(t, g)))
        goto fail;
    byte_map_init(t);
    t->pre = LLM_PRE_GPT2;
    if (t->kind == LLM_TOK_KIND_BPE && ((st = load_merges(t, g)) || (st = select_pre(t, g, p))))
        goto fail;
    t->bos = opt_id(g, "tokenizer.ggml.bos_token_id", t->n_vocab);
    t->eos = opt_id(g, "tokenizer.ggml.eos_token_id", t->n_vocab);
    t->eot = opt_id(g, "tokenizer.ggml.eot_token_id", t->n_vocab);
    t->unk = opt_id(g, "tokenizer.ggml.unknown_token_id", t->n_vocab);
    t->add_bos = t->kind == LLM_TOK_KIND_SPM;
    bool b;
    if (!llm_gguf_get_bool(g, "tokenizer.ggml.add_bos_token", &b))
        t->add_bos = b;
    t->add_space_prefix = t->kind == LLM_TOK_KIND_SPM;
    if (!llm_gguf_get_bool(g, "tokenizer.ggml.add_space_prefix", &b))
        t->add_space_prefix = b;
    /* end-of-generation tokens of common chat formats */
    static const char *const eog[] = {"<|eot_id|>",    "<|im_end|>", "<|end_of_text|>",
                                      "<|endoftext|>", "</s>",       "<|eom_id|>"};
    for (size_t i = 0; i < sizeof eog / sizeof eog[0] && t->n_eog < LLM_TOK_MAX_EOG - 2; i++) {
        int32_t id = llm_tok_find(t, eog[i]);
        if (id >= 0)
            t->eog[t->n_eog++] = id;
    }
    if (t->eos >= 0)
        t->eog[t->n_eog++] = t->eos;
    if (t->eot >= 0)
        t->eog[t->n_eog++] = t->eot;
    *tok_out = t;
    return HCQ_OK;
fail:
    llm_tok_destroy(t);
    return st;
}

void
llm_tok_destroy(struct llm_tok *t)
{
    if (!t)
        return;
    hmap_fini(&t->vocab);
    hmap_fini(&t->merges);
    free(t->toks);
    free(t->special);
    free(t);
}

uint32_t
llm_tok_vocab_size(const struct llm_tok *t)
{
    return t->n_vocab;
}
int32_t
llm_tok_bos(const struct llm_tok *t)
{
    return t->bos;
}
int32_t
llm_tok_eos(const struct llm_tok *t)
{
    return t->eos;
}
bool
llm_tok_add_bos_default(const struct llm_tok *t)
{
    return t->add_bos && t->bos >= 0;
}

bool
llm_tok_is_eog(const struct llm_tok *t, int32_t id)
{
    for (uint32_t i = 0; i < t->n_eog; i++)
        if (t->eog[i] == id)
            return true;
    return false;
}

int32_t
llm_tok_find(const struct llm_tok *t, const char *text)
{
    return hmap_get(&t->vocab, text, strlen(text));
}

/* ==== Output buffer ==== */

struct ids {
    int32_t *p;
    size_t cap, n;
};

static void
ids_push(struct ids *o, int32_t id)
{
    if (o->n < o->cap)
        o->p[o->n] = id;
    o->n++;
}

/* ==== Merge engine (shared by BPE and SPM) ==== */

/* A symbol: a byte span [off, off+len) of the working string, in a doubly linked list. */
struct sym {
    uint32_t off, len;
    int32_t prev, next;
};

/* Merge priority of symbols a and a->next: BPE = merge rank (lower first), SPM = score of the
 * joined token (higher first). Returns false if they cannot merge. */
static bool
pair_prio(const struct llm_tok *t, const char *w, const struct sym *a, const struct sym *b, float *prio)
{
    if (t->kind == LLM_TOK_KIND_SPM) {
        int32_t id = hmap_get(&t->vocab, w + a->off, a->len + b->len);
        if (id < 0)
            return false;
        *prio = -t->toks[id].score;
        return true;
    }
    char buf[2 * 1024 + 2];
    if (a->len + b->len + 1 > sizeof buf)
        return false;
    memcpy(buf, w + a->off, a->len);
    buf[a->len] = ' ';
    memcpy(buf + a->len + 1, w + b->off, b->len);
    int32_t r = hmap_get(&t->merges, buf, a->len + 1 + b->len);
    if (r < 0)
        return false;
    *prio = (float)r;
    return true;
}

/* A candidate merge of symbol i with its next j, as it was when pushed (lengths li, lj): stale
 * once either symbol has grown or i's neighbour changed. */
struct cand_pair {
    float prio;
    int32_t i, j;
    uint32_t li, lj;
};

/* Heap order: lower priority first, then the leftmost pair (symbol indices follow the text) -
 * the choice the merge rules make when scanning the symbols left to right for the best pair. */
static bool
pair_before(const struct cand_pair *a, const struct cand_pair *b)
{
    return a->prio < b->prio || (a->prio == b->prio && a->i < b->i);
}

static void
heap_push(struct cand_pair *h, uint32_t *n, struct cand_pair c)
{
    uint32_t k = (*n)++;
    while (k && pair_before(&c, &h[(k - 1) / 2])) {
        h[k] = h[(k - 1) / 2];
        k = (k - 1) / 2;
    }
    h[k] = c;
}

static struct cand_pair
heap_pop(struct cand_pair *h, uint32_t *n)
{
    struct cand_pair top = h[0], last = h[--(*n)];
    uint32_t k = 0;
    for (;;) {
        uint32_t c = 2 * k + 1;
        if (c >= *n)
            break;
        if (c + 1 < *n && pair_before(&h[c + 1], &h[c]))
            c++;
        if (!pair_before(&h[c], &last))
            break;
        h[k] = h[c];
        k = c;
    }
    if (*n)
        h[k] = last;
    return top;
}

/* Push the pair (i, its next) when the two may merge. */
static void
push_pair(const struct llm_tok *t, const char *w, const struct sym *s, int32_t i, struct cand_pair *h,
          uint32_t *n)
{
    const int32_t j = s[i].next;
    float prio;
    if (j >= 0 && pair_prio(t, w, &s[i], &s[j], &prio))
        heap_push(h, n, (struct cand_pair){prio, i, j, s[i].len, s[j].len});
}

/* Merge the characters of w[0..n) and emit token ids; unknown symbols fall back to bytes. The best
 * pair comes from a heap of candidates, stale ones skipped when popped: O(n log n) in the symbols
 * (a scan of every pair per merge made SentencePiece prompts, one segment of the whole text,
 * quadratic: 12 s for 100 KB). */
static enum hcq_status
merge_emit(const struct llm_tok *t, const char *w, uint32_t n, struct ids *out)
{
    if (!n)
        return HCQ_OK;
    struct sym *s = malloc(n * sizeof *s);
    /* at most n - 1 pairs at the start and two new ones per merge (at most n - 1 merges) */
    struct cand_pair *h = malloc(3ull * n * sizeof *h);
    if (!s || !h) {
        free(s);
        free(h);
        return hcq_err(HCQ_ERR_NOMEM, "llm_tok_encode: %u symbols", n);
    }
    uint32_t ns = 0, nh = 0;
    for (uint32_t off = 0; off < n;) {
        uint32_t len; /* an invalid sequence is one symbol per byte (byte fallback) */
        (void)llm_utf8_decode(w + off, n - off, &len);
        s[ns] = (struct sym){off, len, (int32_t)ns - 1, (int32_t)ns + 1};
        off += len;
        ns++;
    }
    s[ns - 1].next = -1;
    for (uint32_t i = 0; i + 1 < ns; i++)
        push_pair(t, w, s, (int32_t)i, h, &nh);
    while (nh) {
        const struct cand_pair c = heap_pop(h, &nh);
        if (s[c.i].len != c.li || s[c.i].next != c.j || s[c.j].len != c.lj)
            continue; /* stale: a symbol grew or was merged away since */
        const int32_t best = c.i, nx = c.j;
        s[best].len += s[nx].len;
        s[nx].len = 0; /* merged away: every pair naming it is stale */
        s[best].next = s[nx].next;
        if (s[nx].next >= 0)
            s[s[nx].next].prev = best;
        push_pair(t, w, s, best, h, &nh);
        if (s[best].prev >= 0)
            push_pair(t, w, s, s[best].prev, h, &nh);
    }
    for (int32_t i = 0; i >= 0; i = s[i].next) {
        int32_t id = hmap_get(&t->vocab, w + s[i].off, s[i].len);
        if (id >= 0) {
            ids_push(out, id);
            continue;
        }
        for (uint32_t k = 0; k < s[i].len; k++) {
            uint8_t byte = (uint8_t)w[s[i].off + k];
            char tb[8];
            uint32_t tl;
            if (t->kind == LLM_TOK_KIND_SPM) {
                static const char hex[] = "0123456789ABCDEF";
                tb[0] = '<';
                tb[1] = '0';
                tb[2] = 'x';
                tb[3] = hex[byte >> 4];
                tb[4] = hex[byte & 15];
                tb[5] = '>';
                tl = 6;
                id = hmap_get(&t->vocab, tb, tl);
                ids_push(out, id >= 0 ? id : (t->unk >= 0 ? t->unk : 0));
            } else {
                /* byte-level BPE: a symbol is one mapped byte, so only a vocabulary without
                 * that byte's token gets here; as llama.cpp, try the symbol's bytes as
                 * one-character tokens and drop what has none (an unknown token would
                 * decode to other text) */
                id = hmap_get(&t->vocab, w + s[i].off + k, 1);
                if (id >= 0)
                    ids_push(out, id);
            }
        }
    }
    free(s);
    free(h);
    return HCQ_OK;
}

/* ==== Byte-level BPE ==== */

/* One pre-tokenized word of raw bytes: map each byte to its GPT-2 code point, merge. */
struct bpe_ctx {
    const struct llm_tok *t;
    struct ids *out;
};

static enum hcq_status
bpe_word(void *user, const char *text, size_t len)
{
    const struct bpe_ctx *c = user;
    const struct llm_tok *t = c->t;
    char *w = malloc(len * 2 + 1);
    if (!w)
        return hcq_err(HCQ_ERR_NOMEM, "llm_tok_encode: word of %zu bytes", len);
    uint32_t n = 0;
    for (size_t i = 0; i < len; i++)
        n += llm_utf8_encode(t->byte_cp[(uint8_t)text[i]], w + n);
    enum hcq_status st = HCQ_OK;
    int32_t whole = llm_pre_ignore_merges(t->pre) ? hmap_get(&t->vocab, w, n) : -1;
    if (whole >= 0)
        ids_push(c->out, whole); /* LLaMA-3: a word that is a token is not merged piecewise */
    else
        st = merge_emit(t, w, n, c->out);
    free(w);
    return st;
}

static enum hcq_status
bpe_segment(const struct llm_tok *t, const char *text, size_t len, struct ids *out)
{
    struct bpe_ctx c = {t, out};
    return llm_pre_split(t->pre, text, len, bpe_word, &c);
}

/* ==== SentencePiece ==== */

static enum hcq_status
spm_segment(const struct llm_tok *t, const char *text, size_t len, bool prefix, struct ids *out)
{
    /* " " -> U+2581 (3 bytes), plus an optional leading one */
    char *w = malloc(len * 3 + 4);
    if (!w)
        return hcq_err(HCQ_ERR_NOMEM, "llm_tok_encode: %zu bytes", len);
    uint32_t n = 0;
    if (prefix) {
        memcpy(w, "\xE2\x96\x81", 3);
        n = 3;
    }
    for (size_t i = 0; i < len; i++) {
        if (text[i] == ' ') {
            memcpy(w + n, "\xE2\x96\x81", 3);
            n += 3;
        } else {
            w[n++] = text[i];
        }
    }
    enum hcq_status st = merge_emit(t, w, n, out);
    free(w);
    return st;
}

/* ==== Encode ==== */

/* The text is partitioned on special tokens the way llama.cpp does it: for each special
 * token, longest first, every occurrence in the still-unmatched text becomes that token;
 * what is left is tokenized piece by piece. USER_DEFINED tokens always take part, CONTROL
 * and UNKNOWN ones only with parse_special. */
struct frag {
    size_t off, len; /* raw text; len == 0 and id >= 0: a token */
    int32_t id;
};

enum hcq_status
llm_tok_encode(const struct llm_tok *t, const char *text, size_t len, bool add_bos, bool parse_special,
               int32_t *ids, size_t cap, size_t *n_out)
{
    struct ids out = {ids, cap, 0};
    enum hcq_status st = HCQ_OK;
    if (add_bos && t->bos >= 0)
        ids_push(&out, t->bos);
    /* fragments: at most one per byte plus one per match (each match splits one raw fragment
     * into at most three) -> 2 * len + 1 */
    size_t fcap = 2 * len + 1, nf = 0;
    struct frag *f = malloc(fcap * sizeof *f);
    if (!f)
        return hcq_err(HCQ_ERR_NOMEM, "llm_tok_encode: %zu bytes", len);
    if (len)
        f[nf++] = (struct frag){0, len, -1};
    for (uint32_t k = 0; k < t->n_special && nf; k++) {
        int32_t sid = t->special[k];
        const struct llm_tok_entry *e = &t->toks[sid];
        if (!parse_special && e->attr != LLM_TOK_USER_DEFINED)
            continue;
        for (size_t i = 0; i < nf; i++) {
            if (f[i].id >= 0 || f[i].len < e->len)
                continue;
            const char *base = text + f[i].off;
            const char *m = NULL;
            for (size_t p = 0; p + e->len <= f[i].len; p++)
                if (base[p] == e->text[0] && !memcmp(base + p, e->text, e->len)) {
                    m = base + p;
                    break;
                }
            if (!m)
                continue;
            /* split f[i] into [before] token [after]; `after` is examined next (i + 1 or i + 2) */
            size_t before = (size_t)(m - base), after = f[i].len - before - e->len;
            size_t add = (before ? 1 : 0) + (after ? 1 : 0); /* extra fragments */
            if (nf + add > fcap) { /* cannot happen: each match consumes >= 1 byte */
                st = hcq_err(HCQ_ERR_NOMEM, "llm_tok_encode: fragment list");
                goto done;
            }
            struct frag orig = f[i];
            memmove(&f[i + 1 + add], &f[i + 1], (nf - i - 1) * sizeof *f);
            nf += add;
            size_t j = i;
            if (before)
                f[j++] = (struct frag){orig.off, before, -1};
            f[j++] = (struct frag){orig.off + before, 0, sid};
            if (after)
                f[j] = (struct frag){orig.off + before + e->len, after, -1};
            i = j - 1; /* the loop's i++ lands on `after` */
        }
    }
    bool prev_special = true; /* SentencePiece: a space prefix at the start and after special tokens */
    for (size_t i = 0; i < nf; i++) {
        if (f[i].id >= 0) {
            ids_push(&out, f[i].id);
            prev_special = true;
            continue;
        }
        if (t->kind == LLM_TOK_KIND_SPM)
            st = spm_segment(t, text + f[i].off, f[i].len, prev_special && t->add_space_prefix, &out);
        else
            st = bpe_segment(t, text + f[i].off, f[i].len, &out);
        if (st)
            goto done;
        prev_special = false;
    }
    *n_out = out.n;
done:
    free(f);
    return st;
}

/* ==== Decode ==== */

size_t
llm_tok_piece(const struct llm_tok *t, int32_t id, bool render_special, char *buf, size_t cap)
{
    if (id < 0 || (uint32_t)id >= t->n_vocab)
        return 0;
    const struct llm_tok_entry *e = &t->toks[id];
    size_t n = 0;
    if (e->attr == LLM_TOK_CONTROL || e->attr == LLM_TOK_UNKNOWN || e->attr == LLM_TOK_UNUSED) {
        if (!render_special)
            return 0;
        n = e->len < cap ? e->len : cap;
        memcpy(buf, e->text, n);
        return n;
    }
    if (e->attr == LLM_TOK_USER_DEFINED) {
        n = e->len < cap ? e->len : cap;
        memcpy(buf, e->text, n);
        return n;
    }
    if (t->kind == LLM_TOK_KIND_SPM) {
        if (e->attr == LLM_TOK_BYTE && e->len == 6) {
            unsigned v = (unsigned)strtoul(e->text + 3, NULL, 16);
            if (cap)
                buf[n++] = (char)v;
            return n;
        }
        for (uint32_t i = 0; i < e->len && n < cap;) {
            if (i + 3 <= e->len && !memcmp(e->text + i, "\xE2\x96\x81", 3)) {
                buf[n++] = ' ';
                i += 3;
            } else {
                buf[n++] = e->text[i++];
            }
        }
        return n;
    }
    for (uint32_t i = 0; i < e->len && n < cap;) {
        uint32_t l;
        uint32_t cp = llm_utf8_decode(e->text + i, e->len - i, &l);
        i += l;
        if (cp < 512 && t->cp_byte[cp] >= 0)
            buf[n++] = (char)t->cp_byte[cp];
    }
    return n;
}

void
llm_detok_init(struct llm_detok *d)
{
    memset(d, 0, sizeof *d);
    d->first = true;
}

/* Bytes of a complete prefix of p[0..n): everything up to an incomplete trailing sequence. */
static size_t
utf8_complete(const char *p, size_t n)
{
    size_t i = n;
    /* look back at most 3 bytes for a lead byte whose sequence is cut off */
    for (size_t k = 0; k < 4 && i > 0; k++) {
        uint8_t c = (uint8_t)p[i - 1];
        if ((c & 0xC0) == 0x80) {
            i--;
            continue;
        }
        uint32_t need = llm_utf8_len(c);
        return need > n - (i - 1) ? i - 1 : n;
    }
    return n;
}

size_t
llm_detok_push(struct llm_detok *d, const struct llm_tok *t, int32_t id, char *out, size_t cap)
{
    char buf[1100];
    memcpy(buf, d->pend, d->pend_n);
    size_t n = d->pend_n;
    size_t pn = llm_tok_piece(t, id, false, buf + n, sizeof buf - n);
    bool had = pn > 0;
    if (pn && d->first && t->kind == LLM_TOK_KIND_SPM && t->add_space_prefix && buf[n] == ' ') {
        memmove(buf + n, buf + n + 1, pn - 1);
        pn--;
    }
    if (had)
        d->first = false;
    n += pn;
    size_t ok = utf8_complete(buf, n);
    if (n - ok >= sizeof d->pend) /* cannot happen for valid lengths; flush as is */
        ok = n;
    d->pend_n = (uint32_t)(n - ok);
    memcpy(d->pend, buf + ok, d->pend_n);
    /* the complete part, each byte that starts no valid sequence as U+FFFD: a lead byte whose
     * sequence the next token broke off, a stray continuation byte (random or badly trained
     * models emit such byte tokens; a JSON library refuses the invalid string) */
    size_t w = 0;
    for (size_t i = 0; i < ok;) {
        uint32_t len;
        const bool bad = llm_utf8_decode(buf + i, ok - i, &len) == 0xFFFD && len == 1;
        const size_t sn = bad ? 3 : len;
        if (w + sn > cap)
            break;
        memcpy(out + w, bad ? "\xEF\xBF\xBD" : buf + i, sn);
        w += sn;
        i += len;
    }
    return w;
}

size_t
llm_detok_flush(struct llm_detok *d, char *out, size_t cap)
{
    size_t w = 0;
    if (d->pend_n && cap >= 3) {
        memcpy(out, "\xEF\xBF\xBD", 3);
        w = 3;
    }
    d->pend_n = 0;
    return w;
}
