/* SPDX-License-Identifier: MIT */
/*
 * llm_gen.c - synthetic models for tests and benchmarks: random weights (deterministic in
 * the seed, independent of the thread count) with the real shapes of LLaMA-3.x / GPT-2,
 * quantized on all cores, written as GGUF with a real tokenizer vocabulary copied from a
 * vocab-only GGUF (padded with reserved control tokens up to the preset's vocabulary).
 * Layer: llm. Shapes: docs/perf/anchors.md §6.2 (LLaMA-3.2-1B) and the models' configs.
 */
#include "llm_model_priv.h"

#include "util_log.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct preset {
    const char *name;
    enum llm_arch arch;
    uint32_t n_vocab, n_embd, n_layer, n_head, n_head_kv, n_ff, n_ctx;
    float rope_base;
    bool tied;
    float rope_scale;    /* LLaMA-3.1 rope scaling factor (0: none) */
    uint32_t head_dim;   /* attention.key_length where heads are not n_embd / n_head wide (Qwen3), else 0 */
    uint32_t n_swa;      /* Gemma: attention.sliding_window */
    uint32_t swa_period; /* Gemma: attention.sliding_window_pattern written where not 0 (llama.cpp's
                          * defaults: 2 for gemma2, 6 for gemma3) */
    float softcap[2];    /* Gemma 2: attn_logit_softcapping, final_logit_softcapping */
    float linear;        /* Gemma 3 4B and up: rope.scaling.type linear, rope.scaling.factor (0: none) */
};

static const struct preset presets[] = {
    /* name            arch            vocab   d     L   H   KV  ff     ctx     base      tied  scale */
    {"tiny", LLM_ARCH_LLAMA, 0, 256, 2, 4, 2, 512, 2048, 500000.f, true, 32},
    /* one layer of llama-3.2-1b's attention shapes (every decode matrix repackable, k 2048): the
     * e2e tests of the decode paths that need them (the fused attention + O launch) */
    {"tiny-2k", LLM_ARCH_LLAMA, 0, 2048, 1, 32, 8, 2048, 2048, 500000.f, true, 32},
    {"llama-3.2-1b", LLM_ARCH_LLAMA, 128256, 2048, 16, 32, 8, 8192, 131072, 500000.f, true, 32},
    {"llama-3.2-3b", LLM_ARCH_LLAMA, 128256, 3072, 28, 24, 8, 8192, 131072, 500000.f, true, 32},
    {"llama-3.1-8b", LLM_ARCH_LLAMA, 128256, 4096, 32, 32, 8, 14336, 131072, 500000.f, false, 8},
    /* Qwen2.5's published shapes (config.json of Qwen2.5-0.5B and -1.5B: tied embeddings) */
    {"qwen2-tiny", LLM_ARCH_QWEN2, 0, 256, 2, 4, 2, 512, 2048, 1000000.f, true, 0},
    {"qwen2.5-0.5b", LLM_ARCH_QWEN2, 151936, 896, 24, 14, 2, 4864, 32768, 1000000.f, true, 0},
    {"qwen2.5-1.5b", LLM_ARCH_QWEN2, 151936, 1536, 28, 12, 2, 8960, 32768, 1000000.f, true, 0},
    /* Qwen3's published shapes (config.json of Qwen3-0.6B and -1.7B: heads of 128, tied embeddings);
     * qwen3-tiny has heads twice n_embd / n_head wide too */
    {"qwen3-tiny", LLM_ARCH_QWEN3, 0, 256, 2, 4, 2, 512, 2048, 1000000.f, true, 0, 128},
    {"qwen3-0.6b", LLM_ARCH_QWEN3, 151936, 1024, 28, 16, 8, 3072, 40960, 1000000.f, true, 0, 128},
    {"qwen3-1.7b", LLM_ARCH_QWEN3, 151936, 2048, 28, 16, 8, 6144, 40960, 1000000.f, true, 0, 128},
    /* Phi-3-mini's published shape (config.json of Phi-3-mini-4k-instruct: 32 heads of 96, FFN 8192,
     * vocab 32064, an output head of its own) */
    {"phi3-tiny", LLM_ARCH_PHI3, 32064, 256, 2, 4, 4, 512, 4096, 10000.f, false, 0},
    {"phi-3-mini", LLM_ARCH_PHI3, 32064, 3072, 32, 32, 32, 8192, 4096, 10000.f, false, 0},
    /* Gemma's published shapes (config.json of gemma-2-2b and gemma-3-1b-pt: heads of 256, tied
     * embeddings; the vocabulary is the file's, padded to 256000 / 262144 ids). The tiny ones have a
     * window shorter than the test prompts and both kinds of layer (pattern 2 and 3); gemma2-tiny's
     * soft-caps are low enough for its small scores and logits to reach them (Gemma 2's 50 and 30
     * would leave them linear) */
    {"gemma2-tiny", LLM_ARCH_GEMMA2, 0, 256, 4, 4, 2, 512, 2048, 10000.f, true, 0, 128, 8, 0, {0.5f, 3.0f}},
    {"gemma-2-2b",
     LLM_ARCH_GEMMA2,
     256000,
     2304,
     26,
     8,
     4,
     9216,
     8192,
     10000.f,
     true,
     0,
     256,
     4096,
     0,
     {50, 30}},
    {"gemma3-tiny", LLM_ARCH_GEMMA3, 0, 256, 3, 4, 1, 512, 2048, 1000000.f, true, 0, 128, 8, 3},
    /* gemma3-tiny with Gemma 3 4B's linear RoPE scaling (factor 8, on the global layers) */
    {"gemma3-tiny-linear",
     LLM_ARCH_GEMMA3,
     0,
     256,
     3,
     4,
     1,
     512,
     2048,
     1000000.f,
     true,
     0,
     128,
     8,
     3,
     {0, 0},
     8},
    {"gemma-3-1b", LLM_ARCH_GEMMA3, 262144, 1152, 26, 4, 1, 6912, 32768, 1000000.f, true, 0, 256, 512, 0},
    /* gemma-3-4b (config.json of gemma-3-4b-pt: 34 layers of 2560, 8 heads of 256 over 4 KV heads,
     * FFN 10240, window 1024, RoPE scaling linear 8 on the global layers) */
    {"gemma-3-4b",
     LLM_ARCH_GEMMA3,
     262144,
     2560,
     34,
     8,
     4,
     10240,
     131072,
     1000000.f,
     true,
     0,
     256,
     1024,
     0,
     {0, 0},
     8},
    {"gpt2-124m", LLM_ARCH_GPT2, 50257, 768, 12, 12, 12, 3072, 1024, 10000.f, true, 0},
    {"gpt2-tiny", LLM_ARCH_GPT2, 0, 256, 2, 4, 4, 512, 256, 10000.f, true, 0},
};

/* ggml "general.file_type" (llama_ftype) for a uniform weight type. */
static uint32_t
ftype_of(enum llm_type t)
{
    switch (t) {
    case LLM_TYPE_F32:
        return 0;
    case LLM_TYPE_F16:
        return 1;
    case LLM_TYPE_Q4_0:
        return 2;
    case LLM_TYPE_Q4_1:
        return 3;
    case LLM_TYPE_Q8_0:
        return 7;
    case LLM_TYPE_Q5_0:
        return 8;
    case LLM_TYPE_Q5_1:
        return 9;
    case LLM_TYPE_Q4_K:
        return 15;
    case LLM_TYPE_Q5_K:
        return 17;
    case LLM_TYPE_Q6_K:
        return 18;
    case LLM_TYPE_BF16:
        return 32;
    default:
        return 0;
    }
}

/* ==== Tensors to generate ==== */

struct gtensor {
    char name[64];
    uint32_t type;
    uint64_t ne0, ne1;
    float scale;  /* uniform in [-scale, scale] */
    float offset; /* added (norm weights ~ 1) */
    uint8_t *data;
    uint64_t row_B;
    const float *fixed; /* exact values (rope_freqs) instead of random */
};

struct gen_job {
    struct gtensor *ts;
    uint32_t n_ts;
    uint64_t seed;
    uint32_t next_item; /* atomic: next (tensor, row chunk) */
    uint32_t n_items;
    uint32_t *item_t, *item_r0;
    enum hcq_status st;
};

#define GEN_ROWS 64

static uint64_t
mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static void *
gen_worker(void *arg)
{
    struct gen_job *j = arg;
    float *buf = NULL;
    uint64_t buf_n = 0;
    for (;;) {
        uint32_t it = __atomic_fetch_add(&j->next_item, 1, __ATOMIC_RELAXED);
        if (it >= j->n_items)
            break;
        struct gtensor *t = &j->ts[j->item_t[it]];
        uint64_t r0 = j->item_r0[it], nr = t->ne1 - r0 < GEN_ROWS ? t->ne1 - r0 : GEN_ROWS;
        uint64_t n = nr * t->ne0;
        if (n > buf_n) {
            free(buf);
            buf = malloc(4 * n);
            buf_n = n;
            if (!buf) {
                j->st = HCQ_ERR_NOMEM;
                break;
            }
        }
        /* one RNG stream per (tensor, chunk): output independent of scheduling */
        uint64_t s = mix64(j->seed ^ mix64(((uint64_t)j->item_t[it] << 32) | r0));
        for (uint64_t i = 0; i < n; i++) {
            if (t->fixed) {
                buf[i] = t->fixed[i % t->ne0];
                continue;
            }
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            float u = (float)((s >> 40) * (1.0 / 8388608.0)) - 1.0f; /* [-1, 1) */
            buf[i] = t->offset + t->scale * u;
        }
        if (llm_quantize(t->type, buf, t->data + r0 * t->row_B, n))
            j->st = HCQ_ERR_INVALID;
    }
    free(buf);
    return NULL;
}

static void
add_t(struct gtensor *ts, uint32_t *n, const char *name, uint32_t type, uint64_t ne0, uint64_t ne1,
      float scale, float offset)
{
    struct gtensor *t = &ts[(*n)++];
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", name);
    t->type = type;
    t->ne0 = ne0;
    t->ne1 = ne1;
    t->scale = scale;
    t->offset = offset;
}

/* LLaMA-3.1 rope scaling as per-dimension divisors (the rope_freqs tensor): low frequencies
 * are slowed by `factor`, high ones kept, a smooth blend between (low_freq_factor 1,
 * high_freq_factor 4, original context 8192: the published Llama-3.1 configuration). */
static void
llama3_rope_freqs(float *f, uint32_t half, uint32_t hd, float base, float factor)
{
    const double lo_f = 1.0, hi_f = 4.0, old_ctx = 8192.0;
    const double lo_wl = old_ctx / lo_f, hi_wl = old_ctx / hi_f;
    for (uint32_t j = 0; j < half; j++) {
        double freq = pow(base, -2.0 * j / hd), wl = 2 * M_PI / freq;
        if (wl < hi_wl)
            f[j] = 1.0f;
        else if (wl > lo_wl)
            f[j] = factor;
        else {
            double smooth = (old_ctx / wl - lo_f) / (hi_f - lo_f);
            f[j] = (float)(1.0 / ((1 - smooth) / factor + smooth));
        }
    }
}

static int
cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A vocabulary cut to its first n tokens (small test models): token arrays truncated, and
 * only the merges whose parts and result are all kept (so BPE never produces an id >= n;
 * text the kept merges cannot cover falls back to byte tokens). */
static enum hcq_status
write_vocab_truncated(struct llm_gguf_writer *w, const struct llm_gguf *v, uint32_t n)
{
    enum hcq_status st = HCQ_OK;
    uint32_t et;
    uint64_t nm = 0;
    char **toks = calloc(n, sizeof *toks), **sorted = calloc(n, sizeof *sorted);
    const char **merges = NULL;
    char *buf = NULL;
    if (!toks || !sorted) {
        st = hcq_err(HCQ_ERR_NOMEM, "llm_gen_model: vocabulary");
        goto done;
    }
    for (uint32_t i = 0; i < n; i++) {
        struct llm_str s = llm_gguf_arr_str(v, "tokenizer.ggml.tokens", i);
        if (!(toks[i] = strndup(s.ptr, s.len))) {
            st = hcq_err(HCQ_ERR_NOMEM, "llm_gen_model: vocabulary");
            goto done;
        }
        sorted[i] = toks[i];
    }
    qsort(sorted, n, sizeof *sorted, cmp_str);
    if ((st = llm_gguf_writer_set_arr_str(w, "tokenizer.ggml.tokens", (const char *const *)toks, NULL, n)))
        goto done;
    const void *tt = llm_gguf_arr_data(v, "tokenizer.ggml.token_type");
    const void *sc = llm_gguf_arr_data(v, "tokenizer.ggml.scores");
    if (tt && (st = llm_gguf_writer_set_arr(w, "tokenizer.ggml.token_type", LLM_GGUF_INT32, tt, n)))
        goto done;
    if (sc && (st = llm_gguf_writer_set_arr(w, "tokenizer.ggml.scores", LLM_GGUF_FLOAT32, sc, n)))
        goto done;
    if (llm_gguf_get_arr(v, "tokenizer.ggml.merges", &et, &nm) || et != LLM_GGUF_STRING)
        goto done;
    merges = calloc(nm ? nm : 1, sizeof *merges);
    buf = malloc(4096);
    if (!merges || !buf) {
        st = hcq_err(HCQ_ERR_NOMEM, "llm_gen_model: merges");
        goto done;
    }
    uint64_t kept = 0;
    for (uint64_t i = 0; i < nm; i++) {
        struct llm_str m = llm_gguf_arr_str(v, "tokenizer.ggml.merges", i);
        const char *sp = memchr(m.ptr, ' ', m.len);
        if (!sp || m.len >= 2048)
            continue;
        size_t l1 = (size_t)(sp - m.ptr), l2 = m.len - l1 - 1;
        const char *key = buf;
        bool ok = true;
        for (int part = 0; part < 3 && ok; part++) {
            size_t o = 0;
            if (part != 1) {
                memcpy(buf, m.ptr, l1);
                o = l1;
            }
            if (part != 0) {
                memcpy(buf + o, sp + 1, l2);
                o += l2;
            }
            buf[o] = 0;
            ok = bsearch(&key, sorted, n, sizeof *sorted, cmp_str) != NULL;
        }
        if (ok)
            merges[kept++] = m.ptr;
    }
    /* merges point into the GGUF (not NUL-terminated): write them with their lengths */
    uint64_t *lens = calloc(kept ? kept : 1, sizeof *lens);
    if (!lens) {
        st = hcq_err(HCQ_ERR_NOMEM, "llm_gen_model: merges");
        goto done;
    }
    for (uint64_t i = 0, k = 0; i < nm && k < kept; i++) {
        struct llm_str m = llm_gguf_arr_str(v, "tokenizer.ggml.merges", i);
        if (m.ptr == merges[k])
            lens[k++] = m.len;
    }
    st = llm_gguf_writer_set_arr_str(w, "tokenizer.ggml.merges", merges, lens, kept);
    free(lens);
done:
    if (toks)
        for (uint32_t i = 0; i < n; i++)
            free(toks[i]);
    free(toks);
    free(sorted);
    free(merges);
    free(buf);
    return st;
}

/* Phi-3-mini's added tokens, ids 32000.. (its tokenizer.json): a Phi-3 file padded past a
 * 32000-token vocabulary names them so (llama.cpp looks "<|endoftext|>" up in a phi3 model). */
static const char *const phi3_added[] = {"<|endoftext|>",    "<|assistant|>",    "<|placeholder1|>",
                                         "<|placeholder2|>", "<|placeholder3|>", "<|placeholder4|>",
                                         "<|system|>",       "<|end|>",          "<|placeholder5|>",
                                         "<|placeholder6|>", "<|user|>"};

/* Vocabulary keys: copy tokenizer.* from the vocab file, padding to n_vocab (phi3: the padding
 * starts with Phi-3's added tokens). */
static enum hcq_status
write_vocab(struct llm_gguf_writer *w, const struct llm_gguf *v, uint32_t n_vocab, bool phi3)
{
    enum hcq_status st;
    uint32_t et;
    uint64_t nv;
    if ((st = llm_gguf_get_arr(v, "tokenizer.ggml.tokens", &et, &nv)))
        return st;
    for (uint64_t i = 0; i < llm_gguf_kv_count(v); i++) {
        struct llm_str k = llm_gguf_kv_key(v, i);
        if (k.len > 10 && !memcmp(k.ptr, "tokenizer.", 10) && (st = llm_gguf_writer_copy_kv(w, v, i)))
            return st;
    }
    if (nv > n_vocab)
        return write_vocab_truncated(w, v, n_vocab);
    if (nv == n_vocab)
        return HCQ_OK;
    const char **strs = calloc(n_vocab, sizeof *strs);
    uint64_t *lens = calloc(n_vocab, sizeof *lens);
    int32_t *types = calloc(n_vocab, sizeof *types);
    float *scores = calloc(n_vocab, sizeof *scores);
    char *names = malloc((size_t)(n_vocab - nv) * 40);
    if (!strs || !lens || !types || !scores || !names) {
        st = hcq_err(HCQ_ERR_NOMEM, "llm_gen_model: vocabulary of %u", n_vocab);
        goto done;
    }
    const void *tt = llm_gguf_arr_data(v, "tokenizer.ggml.token_type");
    const void *sc = llm_gguf_arr_data(v, "tokenizer.ggml.scores");
    for (uint64_t i = 0; i < n_vocab; i++) {
        if (i < nv) {
            struct llm_str s = llm_gguf_arr_str(v, "tokenizer.ggml.tokens", i);
            strs[i] = s.ptr;
            lens[i] = s.len;
            types[i] = LLM_TOK_NORMAL;
            if (tt)
                memcpy(&types[i], (const uint8_t *)tt + 4 * i, 4);
            if (sc)
                memcpy(&scores[i], (const uint8_t *)sc + 4 * i, 4);
        } else {
            char *nm = names + (i - nv) * 40;
            const uint64_t a = i - nv, n_added = sizeof phi3_added / sizeof phi3_added[0];
            lens[i] = phi3 && a < n_added ? (uint64_t)snprintf(nm, 40, "%s", phi3_added[a])
                                          : (uint64_t)snprintf(nm, 40, "<|reserved_special_token_%llu|>",
                                                               (unsigned long long)(phi3 ? a - n_added : a));
            strs[i] = nm;
            types[i] = LLM_TOK_CONTROL;
            scores[i] = -1e9f;
        }
    }
    if ((st = llm_gguf_writer_set_arr_str(w, "tokenizer.ggml.tokens", strs, lens, n_vocab)) ||
        (st = llm_gguf_writer_set_arr(w, "tokenizer.ggml.token_type", LLM_GGUF_INT32, types, n_vocab)))
        goto done;
    if (sc)
        st = llm_gguf_writer_set_arr(w, "tokenizer.ggml.scores", LLM_GGUF_FLOAT32, scores, n_vocab);
done:
    free(strs);
    free(lens);
    free(types);
    free(scores);
    free(names);
    return st;
}

static const char *
arch_name(enum llm_arch a)
{
    return a == LLM_ARCH_LLAMA    ? "llama"
           : a == LLM_ARCH_QWEN2  ? "qwen2"
           : a == LLM_ARCH_QWEN3  ? "qwen3"
           : a == LLM_ARCH_PHI3   ? "phi3"
           : a == LLM_ARCH_GEMMA2 ? "gemma2"
           : a == LLM_ARCH_GEMMA3 ? "gemma3"
                                  : "gpt2";
}

static enum hcq_status
write_hparams(struct llm_gguf_writer *w, const struct preset *pr, enum llm_type type)
{
    const char *a = arch_name(pr->arch);
    char k[96];
    enum hcq_status st;
#define SETU(suffix, val)                                                                                    \
    do {                                                                                                     \
        snprintf(k, sizeof k, "%s.%s", a, suffix);                                                           \
        if ((st = llm_gguf_writer_set_u32(w, k, (val))))                                                     \
            return st;                                                                                       \
    } while (0)
    if ((st = llm_gguf_writer_set_str(w, "general.architecture", a)) ||
        (st = llm_gguf_writer_set_str(w, "general.name", pr->name)) ||
        (st = llm_gguf_writer_set_u32(w, "general.file_type", ftype_of(type))))
        return st;
    SETU("context_length", pr->n_ctx);
    SETU("embedding_length", pr->n_embd);
    SETU("block_count", pr->n_layer);
    SETU("feed_forward_length", pr->n_ff);
    SETU("attention.head_count", pr->n_head);
    SETU("attention.head_count_kv", pr->n_head_kv);
    SETU("vocab_size", pr->n_vocab);
    if (pr->head_dim) {
        SETU("attention.key_length", pr->head_dim);
        SETU("attention.value_length", pr->head_dim);
    }
    if (pr->arch != LLM_ARCH_GPT2) {
        SETU("rope.dimension_count", pr->head_dim ? pr->head_dim : pr->n_embd / pr->n_head);
        snprintf(k, sizeof k, "%s.rope.freq_base", a);
        if ((st = llm_gguf_writer_set_f32(w, k, pr->rope_base)))
            return st;
    }
    if (pr->n_swa) { /* Gemma; the soft-caps are Gemma 2's (its converter writes both) */
        SETU("attention.sliding_window", pr->n_swa);
        if (pr->swa_period)
            SETU("attention.sliding_window_pattern", pr->swa_period);
    }
    if (pr->linear > 0) { /* as llama.cpp's converter writes Gemma 3's rope_scaling */
        snprintf(k, sizeof k, "%s.rope.scaling.type", a);
        if ((st = llm_gguf_writer_set_str(w, k, "linear")))
            return st;
        snprintf(k, sizeof k, "%s.rope.scaling.factor", a);
        if ((st = llm_gguf_writer_set_f32(w, k, pr->linear)))
            return st;
    }
    if (pr->arch == LLM_ARCH_GEMMA2) {
        snprintf(k, sizeof k, "%s.attn_logit_softcapping", a);
        if ((st = llm_gguf_writer_set_f32(w, k, pr->softcap[0])))
            return st;
        snprintf(k, sizeof k, "%s.final_logit_softcapping", a);
        if ((st = llm_gguf_writer_set_f32(w, k, pr->softcap[1])))
            return st;
    }
    snprintf(k, sizeof k, "%s.attention.%s", a,
             pr->arch != LLM_ARCH_GPT2 ? "layer_norm_rms_epsilon" : "layer_norm_epsilon");
    return llm_gguf_writer_set_f32(w, k, 1e-5f);
#undef SETU
}

/* Build the tensor list of the preset. */
static uint32_t
list_tensors(const struct preset *pr, enum llm_type type, struct gtensor *ts)
{
    uint32_t n = 0;
    uint64_t d = pr->n_embd, hd = pr->head_dim ? pr->head_dim : d / pr->n_head, kv = hd * pr->n_head_kv,
             qn = hd * pr->n_head, ff = pr->n_ff, V = pr->n_vocab;
    float sd = 1.0f / sqrtf((float)d), sf = 1.0f / sqrtf((float)ff);
    add_t(ts, &n, "token_embd.weight", type, d, V, 0.1f, 0);
    if (pr->arch == LLM_ARCH_GPT2)
        add_t(ts, &n, "position_embd.weight", LLM_TYPE_F32, d, pr->n_ctx, 0.5f * sd, 0);
    add_t(ts, &n, "output_norm.weight", LLM_TYPE_F32, d, 1, 0.1f, 1.0f);
    if (pr->arch == LLM_ARCH_GPT2)
        add_t(ts, &n, "output_norm.bias", LLM_TYPE_F32, d, 1, 0.1f, 0);
    if (!pr->tied)
        add_t(ts, &n, "output.weight", type, d, V, 1.7f * sd, 0);
    if (pr->rope_scale > 0)
        add_t(ts, &n, "rope_freqs.weight", LLM_TYPE_F32, hd / 2, 1, 0, 0);
    for (uint32_t l = 0; l < pr->n_layer; l++) {
        char nm[64];
#define T(suffix, ty, ne0, ne1, sc, off)                                                                     \
    do {                                                                                                     \
        snprintf(nm, sizeof nm, "blk.%u.%s", l, suffix);                                                     \
        add_t(ts, &n, nm, ty, ne0, ne1, sc, off);                                                            \
    } while (0)
        T("attn_norm.weight", LLM_TYPE_F32, d, 1, 0.1f, 1.0f);
        T("ffn_norm.weight", LLM_TYPE_F32, d, 1, 0.1f, 1.0f);
        if (pr->arch == LLM_ARCH_PHI3) { /* Q|K|V and gate|up fused */
            T("attn_qkv.weight", type, d, qn + 2 * kv, 1.7f * sd, 0);
            T("attn_output.weight", type, qn, d, 1.7f * sd, 0);
            T("ffn_up.weight", type, d, 2 * ff, 1.7f * sd, 0);
            T("ffn_down.weight", type, ff, d, 1.7f * sf, 0);
        } else if (pr->arch != LLM_ARCH_GPT2) {
            T("attn_q.weight", type, d, qn, 1.7f * sd, 0);
            T("attn_k.weight", type, d, kv, 1.7f * sd, 0);
            T("attn_v.weight", type, d, kv, 1.7f * sd, 0);
            if (pr->arch == LLM_ARCH_QWEN3 || pr->arch == LLM_ARCH_GEMMA3) { /* an RMSNorm per Q / K head */
                T("attn_q_norm.weight", LLM_TYPE_F32, hd, 1, 0.1f, 1.0f);
                T("attn_k_norm.weight", LLM_TYPE_F32, hd, 1, 0.1f, 1.0f);
            }
            if (pr->arch == LLM_ARCH_QWEN2) { /* Qwen2: biases on Q, K, V only */
                T("attn_q.bias", LLM_TYPE_F32, d, 1, 0.5f, 0);
                T("attn_k.bias", LLM_TYPE_F32, kv, 1, 0.5f, 0);
                T("attn_v.bias", LLM_TYPE_F32, kv, 1, 0.5f, 0);
            }
            T("attn_output.weight", type, qn, d, qn == d ? 1.7f * sd : 1.7f / sqrtf((float)qn), 0);
            T("ffn_gate.weight", type, d, ff, 1.7f * sd, 0);
            T("ffn_up.weight", type, d, ff, 1.7f * sd, 0);
            T("ffn_down.weight", type, ff, d, 1.7f * sf, 0);
            if (pr->arch == LLM_ARCH_GEMMA2 || pr->arch == LLM_ARCH_GEMMA3) { /* norms of the outputs */
                T("post_attention_norm.weight", LLM_TYPE_F32, d, 1, 0.1f, 1.0f);
                T("post_ffw_norm.weight", LLM_TYPE_F32, d, 1, 0.1f, 1.0f);
            }
        } else {
            T("attn_norm.bias", LLM_TYPE_F32, d, 1, 0.05f, 0);
            T("ffn_norm.bias", LLM_TYPE_F32, d, 1, 0.05f, 0);
            T("attn_qkv.weight", type, d, 3 * d, 1.7f * sd, 0);
            T("attn_qkv.bias", LLM_TYPE_F32, 3 * d, 1, 0.05f, 0);
            T("attn_output.weight", type, d, d, 1.7f * sd, 0);
            T("attn_output.bias", LLM_TYPE_F32, d, 1, 0.05f, 0);
            T("ffn_up.weight", type, d, ff, 1.7f * sd, 0);
            T("ffn_up.bias", LLM_TYPE_F32, ff, 1, 0.05f, 0);
            T("ffn_down.weight", type, ff, d, 1.7f * sf, 0);
            T("ffn_down.bias", LLM_TYPE_F32, d, 1, 0.05f, 0);
        }
#undef T
    }
    return n;
}

enum hcq_status
llm_gen_model(const struct llm_gen_params *p, const char *path)
{
    enum hcq_status st = HCQ_OK;
    const struct preset *base = NULL;
    for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++)
        if (!strcmp(presets[i].name, p->preset))
            base = &presets[i];
    if (!base)
        return hcq_err(HCQ_ERR_INVALID, "llm_gen_model: unknown preset '%s'", p->preset);
    struct preset pr = *base;
    if (p->arch && strcmp(p->arch, arch_name(pr.arch)))
        return hcq_err(HCQ_ERR_INVALID, "llm_gen_model: preset '%s' is not of arch '%s'", p->preset, p->arch);
    uint32_t vocab_n = 0;
    if (p->vocab) {
        uint32_t et;
        uint64_t nv;
        if ((st = llm_gguf_get_arr(p->vocab, "tokenizer.ggml.tokens", &et, &nv)))
            return st;
        vocab_n = (uint32_t)nv;
    }
    if (!pr.n_vocab)
        pr.n_vocab = vocab_n;
#define OVR(f)                                                                                               \
    if (p->f)                                                                                                \
    pr.f = p->f
    OVR(n_vocab);
    OVR(n_embd);
    OVR(n_layer);
    OVR(n_head);
    OVR(n_head_kv);
    OVR(n_ff);
    OVR(n_ctx);
#undef OVR
    /* a vocabulary larger than the model is cut only when asked for (p->n_vocab) */
    if (!p->vocab || !pr.n_vocab || (vocab_n > pr.n_vocab && !p->n_vocab) || pr.n_vocab < 256)
        return hcq_err(HCQ_ERR_INVALID,
                       "llm_gen_model: need a vocabulary (--vocab) of at most %u tokens (has %u)", pr.n_vocab,
                       vocab_n);
    uint32_t bv = llm_type_block_values(p->type);
    if (!bv || pr.n_embd % bv || pr.n_ff % bv || pr.n_embd % pr.n_head || pr.n_head % pr.n_head_kv)
        return hcq_err(HCQ_ERR_INVALID,
                       "llm_gen_model: %s needs widths that are multiples of %u (n_embd %u, n_ff %u)",
                       llm_type_name(p->type), bv, pr.n_embd, pr.n_ff);
    uint32_t max_t = 8 + 16 * pr.n_layer, n_ts;
    struct gtensor *ts = calloc(max_t, sizeof *ts);
    struct llm_gguf_writer *w = NULL;
    struct gen_job job = {0};
    float freqs[512];
    pthread_t th[64];
    uint32_t n_th = 0;
    if (!ts)
        return hcq_err(HCQ_ERR_NOMEM, "llm_gen_model: tensors");
    n_ts = list_tensors(&pr, p->type, ts);
    uint64_t total_items = 0;
    for (uint32_t i = 0; i < n_ts; i++) {
        struct gtensor *t = &ts[i];
        t->row_B = llm_type_row_bytes(t->type, t->ne0);
        if (!strcmp(t->name, "rope_freqs.weight")) {
            llama3_rope_freqs(freqs, (uint32_t)t->ne0, pr.n_embd / pr.n_head, pr.rope_base, pr.rope_scale);
            t->fixed = freqs;
        }
        if (!(t->data = malloc(t->row_B * t->ne1))) {
            st = hcq_err(HCQ_ERR_NOMEM, "llm_gen_model: %s (%llu B)", t->name,
                         (unsigned long long)(t->row_B * t->ne1));
            goto done;
        }
        total_items += (t->ne1 + GEN_ROWS - 1) / GEN_ROWS;
    }
    job.ts = ts;
    job.n_ts = n_ts;
    job.seed = p->seed;
    job.n_items = (uint32_t)total_items;
    job.item_t = malloc(total_items * 4);
    job.item_r0 = malloc(total_items * 4);
    if (!job.item_t || !job.item_r0) {
        st = hcq_err(HCQ_ERR_NOMEM, "llm_gen_model: work list");
        goto done;
    }
    for (uint32_t i = 0, k = 0; i < n_ts; i++)
        for (uint64_t r = 0; r < ts[i].ne1; r += GEN_ROWS, k++) {
            job.item_t[k] = i;
            job.item_r0[k] = (uint32_t)r;
        }
    n_th = p->threads ? p->threads : (uint32_t)sysconf(_SC_NPROCESSORS_ONLN);
    if (n_th < 1)
        n_th = 1;
    if (n_th > 64)
        n_th = 64;
    uint32_t started = 0;
    for (; started < n_th; started++)
        if (pthread_create(&th[started], NULL, gen_worker, &job))
            break;
    if (!started)
        gen_worker(&job);
    for (uint32_t i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    if (job.st) {
        st = hcq_err(job.st, "llm_gen_model: quantization failed");
        goto done;
    }
    if ((st = llm_gguf_writer_create(&w)) || (st = write_hparams(w, &pr, p->type)) ||
        (st = write_vocab(w, p->vocab, pr.n_vocab, pr.arch == LLM_ARCH_PHI3)))
        goto done;
    for (uint32_t i = 0; i < n_ts; i++) {
        uint64_t ne[2] = {ts[i].ne0, ts[i].ne1};
        if ((st = llm_gguf_writer_add_tensor(w, ts[i].name, ts[i].type, ts[i].ne1 == 1 ? 1 : 2, ne,
                                             ts[i].data)))
            goto done;
    }
    st = llm_gguf_writer_write_file(w, path);
done:
    llm_gguf_writer_destroy(w);
    for (uint32_t i = 0; i < n_ts; i++)
        free(ts[i].data);
    free(ts);
    free(job.item_t);
    free(job.item_r0);
    return st;
}
