/* SPDX-License-Identifier: MIT */
/*
 * test_llm_valid.c - model files that cannot hurt the machine: one mutated file per
 * validation rule (tensor overlap and order, duplicate tensor names and keys, hyper-parameter
 * ranges, tokenizer arrays, non-regular files, allocation bounded by the file) and the exact
 * message each gives; NaN logits detected by llm_logits_check and by `nvhcq run` (exit 1).
 * Base file: the generator's tiny llama (q8_0, seed 7) with the GPT-2 vocabulary cut to
 * 2048 tokens, mutated in memory.
 */
#include "harness.h"
#include "hcq.h"
#include "llm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define VOCAB "tests/data/tokenizers/ggml-vocab-gpt-2.gguf"

static char *
read_file(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *p = malloc(sz > 0 ? (size_t)sz : 1);
    if (p && fread(p, 1, (size_t)sz, f) != (size_t)sz) {
        free(p);
        p = NULL;
    }
    fclose(f);
    *n = (size_t)sz;
    return p;
}

/* Generate a tiny llama into path and read it back (n_ctx: its context_length; 0: the preset's). */
static char *
gen_tiny_ctx(const char *path, uint32_t n_layer, uint32_t n_embd, uint32_t n_head, uint32_t n_head_kv,
             uint32_t n_ff, uint32_t n_ctx, size_t *n)
{
    struct llm_gguf *v = NULL;
    if (llm_gguf_open(VOCAB, &v))
        return NULL;
    struct llm_gen_params gp = {.preset = "tiny",
                                .type = LLM_TYPE_Q8_0,
                                .vocab = v,
                                .seed = 7,
                                .threads = 2,
                                .n_vocab = 2048,
                                .n_layer = n_layer,
                                .n_embd = n_embd,
                                .n_head = n_head,
                                .n_head_kv = n_head_kv,
                                .n_ff = n_ff,
                                .n_ctx = n_ctx};
    enum hcq_status st = llm_gen_model(&gp, path);
    llm_gguf_destroy(v);
    return st ? NULL : read_file(path, n);
}

static char *
gen_tiny(const char *path, uint32_t n_layer, uint32_t n_embd, uint32_t n_head, uint32_t n_head_kv,
         uint32_t n_ff, size_t *n)
{
    return gen_tiny_ctx(path, n_layer, n_embd, n_head, n_head_kv, n_ff, 0, n);
}

static char base_path[128];
static char *base;
static size_t base_n;

static bool
need_base(void)
{
    if (!base) {
        snprintf(base_path, sizeof base_path, "/tmp/nvhcq_test_valid_%d.gguf", (int)getpid());
        base = gen_tiny(base_path, 0, 0, 0, 0, 0, &base_n);
    }
    return base != NULL;
}

/* Parse, then load on cpu; returns the first failure. */
static enum hcq_status
load(const void *img, size_t n, uint32_t n_ctx)
{
    struct llm_gguf *g = NULL;
    struct llm_model *m = NULL;
    enum hcq_status st = llm_gguf_parse(img, n, &g);
    if (!st) {
        struct llm_model_params mp;
        llm_model_params_default(&mp);
        mp.gemm_min_batch = LLM_GEMM_MIN_BATCH_REF; /* the f32 per-op prefill the bounds here assume */
        mp.dev_spec = "cpu";
        mp.n_ctx = n_ctx;
        st = llm_model_load_gguf(g, &mp, &m);
    }
    llm_model_destroy(m);
    llm_gguf_destroy(g);
    return st;
}

/* The load fails with `want` and exactly the message `msg` (hcq_last_error() reads
 * "STATUS: msg [file:line function]"). */
static bool
fails_with(struct th *t, int line, const void *img, size_t n, uint32_t n_ctx, enum hcq_status want,
           const char *msg)
{
    enum hcq_status st = load(img, n, n_ctx);
    const char *e = hcq_last_error(), *sn = hcq_status_str(want);
    size_t sl = strlen(sn), ml = strlen(msg);
    bool same = st == want && !strncmp(e, sn, sl) && !strncmp(e + sl, ": ", 2) &&
                !strncmp(e + sl + 2, msg, ml) && !strncmp(e + sl + 2 + ml, " [", 2);
    if (!same) {
        th_fail(t, __FILE__, line, "expected %s '%s'\n      got %s '%s'", hcq_status_str(want), msg,
                hcq_status_str(st), e);
        return false;
    }
    return true;
}
#define FAILS(img, n, want, msg) CHECK(fails_with(t, __LINE__, (img), (n), 0, (want), (msg)))

/* Offset in base of tensor `name`'s info field "offset" (u64 after name, n_dims, ne, type). */
static size_t
info_offset_field(const struct llm_gguf *g, const char *name)
{
    const struct llm_gguf_tensor *tt = llm_gguf_tensor_find(g, name);
    return (size_t)((const char *)tt->name.ptr - base) + tt->name.len + 4 + 8 * tt->n_dims + 4;
}

static int64_t
tensor_index(const struct llm_gguf *g, const char *name)
{
    for (uint64_t i = 0; i < llm_gguf_tensor_count(g); i++)
        if (llm_gguf_tensor_at(g, i) == llm_gguf_tensor_find(g, name))
            return (int64_t)i;
    return -1;
}

TEST(base_loads)
{
    CHECK(need_base());
    CHECK_OK(load(base, base_n, 0));
done:;
}

/* Two tensors sharing bytes (the "2 GB of weights from a 9 MB file" attack), and a tensor
 * placed before the one listed ahead of it. */
TEST(tensors_overlap_or_out_of_order)
{
    struct llm_gguf *g = NULL;
    char *c = NULL, msg[512];
    CHECK(need_base());
    CHECK_OK(llm_gguf_parse(base, base_n, &g));
    c = malloc(base_n);
    CHECK(c);
    int64_t j = tensor_index(g, "blk.1.attn_q.weight");
    CHECK(j >= 2);
    const struct llm_gguf_tensor *tj = llm_gguf_tensor_at(g, (uint64_t)j),
                                 *tp = llm_gguf_tensor_at(g, (uint64_t)j - 1);
    /* overlap: blk.1.attn_q.weight at the offset of the tensor before it */
    memcpy(c, base, base_n);
    memcpy(c + info_offset_field(g, "blk.1.attn_q.weight"), &tp->offset_B, 8);
    snprintf(msg, sizeof msg,
             "llm_gguf_parse: tensor 'blk.1.attn_q.weight' at [%llu, %llu) overlaps tensor '%.*s' at "
             "[%llu, %llu)",
             (unsigned long long)tp->offset_B, (unsigned long long)(tp->offset_B + tj->size_B),
             (int)tp->name.len, tp->name.ptr, (unsigned long long)tp->offset_B,
             (unsigned long long)(tp->offset_B + tp->size_B));
    FAILS(c, base_n, HCQ_ERR_FORMAT, msg);
    /* every layer's blk.N.attn_q.weight pointing at blk.0's */
    memcpy(c, base, base_n);
    uint64_t off0 = llm_gguf_tensor_find(g, "blk.0.attn_q.weight")->offset_B;
    memcpy(c + info_offset_field(g, "blk.1.attn_q.weight"), &off0, 8);
    snprintf(msg, sizeof msg,
             "llm_gguf_parse: tensor 'blk.1.attn_q.weight' at offset %llu lies before tensor '%.*s' at "
             "offset %llu (tensors must be stored in the order of their infos)",
             (unsigned long long)off0, (int)tp->name.len, tp->name.ptr, (unsigned long long)tp->offset_B);
    FAILS(c, base_n, HCQ_ERR_FORMAT, msg);
done:
    free(c);
    llm_gguf_destroy(g);
}

TEST(duplicate_names_and_keys)
{
    struct llm_gguf *g = NULL;
    char *c = NULL;
    CHECK(need_base());
    CHECK_OK(llm_gguf_parse(base, base_n, &g));
    c = malloc(base_n);
    CHECK(c);
    /* rename blk.1.attn_q.weight to blk.0.attn_q.weight (same length) */
    memcpy(c, base, base_n);
    const struct llm_gguf_tensor *tq = llm_gguf_tensor_find(g, "blk.1.attn_q.weight");
    c[(const char *)tq->name.ptr - base + 4] = '0';
    FAILS(c, base_n, HCQ_ERR_FORMAT, "llm_gguf_parse: duplicate tensor name 'blk.0.attn_q.weight'");
    /* rename key llama.context_length to general.architecture (both 20 bytes) */
    memcpy(c, base, base_n);
    int64_t k = llm_gguf_find(g, "llama.context_length");
    CHECK(k >= 0);
    memcpy(c + ((const char *)llm_gguf_kv_key(g, (uint64_t)k).ptr - base), "general.architecture", 20);
    FAILS(c, base_n, HCQ_ERR_FORMAT, "llm_gguf_parse: duplicate key 'general.architecture'");
done:
    free(c);
    llm_gguf_destroy(g);
}

/* The base file with one key/value changed (or added), written again. */
enum kv_kind { KV_U32, KV_F32, KV_ARR_F32, KV_ARR_I32, KV_STR };

/* the string of a KV_STR rewrite */
static const char *kv_str;

static enum hcq_status
rewrite(const struct llm_gguf *g, const char *key, enum kv_kind kind, double val, uint64_t count, void **img,
        size_t *n)
{
    struct llm_gguf_writer *w = NULL;
    enum hcq_status st = llm_gguf_writer_create(&w);
    for (uint64_t i = 0; i < llm_gguf_kv_count(g) && !st; i++)
        st = llm_gguf_writer_copy_kv(w, g, i);
    if (!st) {
        if (kind == KV_U32) {
            st = llm_gguf_writer_set_u32(w, key, (uint32_t)val);
        } else if (kind == KV_F32) {
            st = llm_gguf_writer_set_f32(w, key, (float)val);
        } else if (kind == KV_STR) {
            st = llm_gguf_writer_set_str(w, key, kv_str);
        } else {
            void *a = calloc(count ? count : 1, 4);
            for (uint64_t i = 0; a && i < count; i++) {
                if (kind == KV_ARR_F32)
                    ((float *)a)[i] = (float)val;
                else
                    ((int32_t *)a)[i] = i == 5 ? (int32_t)val : 1;
            }
            st = a ? llm_gguf_writer_set_arr(w, key, kind == KV_ARR_F32 ? LLM_GGUF_FLOAT32 : LLM_GGUF_INT32,
                                             a, count)
                   : HCQ_ERR_NOMEM;
            free(a);
        }
    }
    for (uint64_t i = 0; i < llm_gguf_tensor_count(g) && !st; i++) {
        const struct llm_gguf_tensor *tt = llm_gguf_tensor_at(g, i);
        char name[128];
        snprintf(name, sizeof name, "%.*s", (int)tt->name.len, tt->name.ptr);
        st = llm_gguf_writer_add_tensor(w, name, tt->type, tt->n_dims, tt->ne, tt->data);
    }
    if (!st)
        st = llm_gguf_writer_write_mem(w, img, n);
    llm_gguf_writer_destroy(w);
    return st;
}

static bool
kv_fails_with(struct th *t, int line, const struct llm_gguf *g, const char *key, enum kv_kind kind,
              double val, uint64_t count, enum hcq_status want, const char *msg)
{
    void *img = NULL;
    size_t n = 0;
    if (rewrite(g, key, kind, val, count, &img, &n)) {
        th_fail(t, __FILE__, line, "rewrite %s: %s", key, hcq_last_error());
        return false;
    }
    bool ok = fails_with(t, line, img, n, 0, want, msg);
    free(img);
    return ok;
}
#define KV_FAILS(key, kind, val, count, msg)                                                                 \
    CHECK(kv_fails_with(t, __LINE__, g, (key), (kind), (val), (count), HCQ_ERR_FORMAT, (msg)))
/* what a file asks for that the engine does not implement */
#define KV_UNSUPPORTED(key, kind, val, msg)                                                                  \
    CHECK(kv_fails_with(t, __LINE__, g, (key), (kind), (val), 0, HCQ_ERR_UNSUPPORTED, (msg)))

TEST(hparams_checked)
{
    struct llm_gguf *g = NULL;
    CHECK(need_base());
    CHECK_OK(llm_gguf_parse(base, base_n, &g));
    KV_FAILS("llama.rope.freq_base", KV_F32, NAN, 0,
             "llm_hparams_read: llama.rope.freq_base = nan (expected a finite value in (0, 1e+10])");
    KV_FAILS("llama.rope.freq_base", KV_F32, INFINITY, 0,
             "llm_hparams_read: llama.rope.freq_base = inf (expected a finite value in (0, 1e+10])");
    KV_FAILS(
        "llama.attention.layer_norm_rms_epsilon", KV_F32, -1.0, 0,
        "llm_hparams_read: llama.attention.layer_norm_rms_epsilon = -1 (expected a finite value in (0, 1])");
    KV_FAILS(
        "llama.attention.layer_norm_rms_epsilon", KV_F32, 0.0, 0,
        "llm_hparams_read: llama.attention.layer_norm_rms_epsilon = 0 (expected a finite value in (0, 1])");
    KV_FAILS("llama.context_length", KV_U32, 0, 0,
             "llm_hparams_read: llama.context_length = 0 (expected 1..16777216)");
    KV_FAILS("llama.embedding_length", KV_U32, 100000, 0,
             "llm_hparams_read: llama.embedding_length = 100000 (expected 1..65536)");
    KV_FAILS("llama.attention.head_count", KV_U32, 0, 0,
             "llm_hparams_read: llama.attention.head_count = 0 (expected 1..1024)");
    KV_FAILS("llama.attention.head_count_kv", KV_U32, 5000, 0,
             "llm_hparams_read: llama.attention.head_count_kv = 5000 (expected 1..1024)");
    KV_FAILS("llama.block_count", KV_U32, 100000, 0,
             "llm_hparams_read: llama.block_count = 100000 (expected 1..256)");
    KV_FAILS("llama.feed_forward_length", KV_U32, 0, 0,
             "llm_hparams_read: llama.feed_forward_length = 0 (expected 1..1048576)");
    /* heads of key_length: every per-head tensor must then match (rope_freqs is checked first) */
    KV_FAILS("llama.attention.key_length", KV_U32, 128, 0,
             "llm_model: tensor 'rope_freqs.weight' is [32 x 1] (expected [64 x 1])");
    KV_UNSUPPORTED(
        "llama.attention.value_length", KV_U32, 32,
        "llm_hparams_read: llama.attention.value_length = 32: values of another width than the keys "
        "(64) are not implemented");
    kv_str = "yarn";
    KV_UNSUPPORTED("llama.rope.scaling.type", KV_STR, 0,
                   "llm_hparams_read: llama.rope.scaling.type = 'yarn' is not implemented");
    /* Gemma 3 4B's linear factor 8 */
    KV_UNSUPPORTED(
        "llama.rope.scaling.factor", KV_F32, 8.0,
        "llm_hparams_read: llama.rope.scaling.factor = 8 (RoPE scaling) is not implemented for llama");
    kv_str = "mamba";
    KV_UNSUPPORTED(
        "general.architecture", KV_STR, 0,
        "llm_hparams_read: architecture 'mamba' (supported: llama, qwen2, qwen3, phi3, gemma2, gemma3, "
        "gpt2)");
done:
    llm_gguf_destroy(g);
}

TEST(tokenizer_arrays_checked)
{
    struct llm_gguf *g = NULL, *spm = NULL;
    struct llm_gguf_writer *w = NULL;
    struct llm_tok *tok = NULL;
    void *img = NULL;
    size_t n;
    CHECK(need_base());
    CHECK_OK(llm_gguf_parse(base, base_n, &g));
    KV_FAILS(
        "tokenizer.ggml.scores", KV_ARR_F32, 0.0, 2047,
        "llm_tok_create: tokenizer.ggml.scores has 2047 elements of type 6 (expected 2048 of type 6, one per "
        "token)");
    KV_FAILS("tokenizer.ggml.scores", KV_ARR_F32, NAN, 2048,
             "llm_tok_create: tokenizer.ggml.scores[0] is not finite");
    KV_FAILS("tokenizer.ggml.token_type", KV_ARR_I32, 1, 2049,
             "llm_tok_create: tokenizer.ggml.token_type has 2049 elements of type 5 (expected 2048 of type "
             "5, one per "
             "token)");
    KV_FAILS("tokenizer.ggml.token_type", KV_ARR_I32, 9, 2048,
             "llm_tok_create: tokenizer.ggml.token_type[5] = 9 (expected 0..6)");
    /* a SentencePiece vocabulary without scores cannot merge */
    CHECK_OK(llm_gguf_open("tests/data/tokenizers/ggml-vocab-llama-spm.gguf", &spm));
    CHECK_OK(llm_gguf_writer_create(&w));
    for (uint64_t i = 0; i < llm_gguf_kv_count(spm); i++) {
        struct llm_str k = llm_gguf_kv_key(spm, i);
        if (!(k.len == 21 && !memcmp(k.ptr, "tokenizer.ggml.scores", 21)))
            CHECK_OK(llm_gguf_writer_copy_kv(w, spm, i));
    }
    CHECK_OK(llm_gguf_writer_write_mem(w, &img, &n));
    llm_gguf_destroy(spm);
    spm = NULL;
    CHECK_OK(llm_gguf_parse(img, n, &spm));
    CHECK(llm_tok_create(spm, &tok) == HCQ_ERR_FORMAT);
    CHECKF(strstr(hcq_last_error(),
                  "llm_tok_create: tokenizer.ggml.scores missing (a SentencePiece vocabulary needs it)"),
           "%s", hcq_last_error());
done:
    llm_tok_destroy(tok);
    llm_gguf_writer_destroy(w);
    llm_gguf_destroy(spm);
    llm_gguf_destroy(g);
    free(img);
}

/* A FIFO (open() would block without a writer) and a directory are refused before open. */
TEST(non_regular_files_refused)
{
    char fifo[128];
    struct llm_gguf *g = NULL;
    snprintf(fifo, sizeof fifo, "/tmp/nvhcq_test_fifo_%d", (int)getpid());
    unlink(fifo);
    CHECK(mkfifo(fifo, 0600) == 0);
    CHECK(llm_gguf_open(fifo, &g) == HCQ_ERR_IO && !g);
    char want[256];
    snprintf(want, sizeof want, "%s: is a FIFO, not a GGUF file", fifo);
    CHECKF(strstr(hcq_last_error(), want), "%s", hcq_last_error());
    CHECK(llm_gguf_open("/tmp", &g) == HCQ_ERR_IO);
    CHECK(strstr(hcq_last_error(), "/tmp: is a directory, not a GGUF file"));
done:
    unlink(fifo);
}

/* 256 layers of a 64-wide model (6 MB of tensors) trained for 8192 tokens: its default context
 * (4096 tokens, a 134 MB KV cache) is refused before anything is allocated; a context the caller
 * names loads. */
TEST(allocation_bounded_by_file)
{
    char path[128], msg[512];
    size_t n = 0;
    snprintf(path, sizeof path, "/tmp/nvhcq_test_valid_deep_%d.gguf", (int)getpid());
    char *img = gen_tiny_ctx(path, 256, 64, 4, 1, 64, 8192, &n);
    CHECK(img);
    struct llm_gguf *g = NULL;
    CHECK_OK(llm_gguf_parse(img, n, &g));
    uint64_t tb = 0;
    for (uint64_t i = 0; i < llm_gguf_tensor_count(g); i++)
        tb += llm_gguf_tensor_at(g, i)->size_B;
    llm_gguf_destroy(g);
    uint64_t state = 8ull * 256 * 4096 * 16 + 4ull * 64 * (4 * 64 + 2 * 16 + 2 * 64) + 4ull * 2048;
    snprintf(msg, sizeof msg,
             "llm_model_load: KV cache and activations for 4096 tokens need %llu B, more than 64 MiB "
             "+ 8x the file's %llu B of tensors (use a shorter context)",
             (unsigned long long)state, (unsigned long long)tb);
    CHECK(fails_with(t, __LINE__, img, n, 0, HCQ_ERR_FORMAT, msg));
    CHECK_OK(load(img, n, 512));
    CHECK_OK(load(img, n, 8192));
done:
    free(img);
    unlink(path);
}

/* Device memory: llm_model_mem_need adds up the parts (weights as in the file, the f32 KV cache
 * of n_ctx tokens); on an emulated GPU with less video memory free than that the load is refused
 * before anything of the model is allocated, with HCQ_ERR_NOMEM and a message naming the parts and
 * what is free; with a little more than that free it loads. The free memory after the device opens
 * is read on the same emulated GPU (emu:gh100,vram_mb=N), so the sizes follow the engine's own use. */
TEST(device_memory_checked_before_allocation)
{
    struct llm_model *m = NULL;
    struct llm_gguf *g = NULL;
    struct hcq_device *dev = NULL;
    struct llm_model_params mp;
    struct llm_mem_need need;
    CHECK(need_base());
    CHECK_OK(llm_gguf_parse(base, base_n, &g));
    llm_model_params_default(&mp);
    mp.gemm_min_batch = LLM_GEMM_MIN_BATCH_REF; /* the f32 per-op prefill the bounds here assume */
    mp.dev_spec = "cpu";
    mp.n_ctx = 256;
    CHECK_OK(llm_model_load_gguf(g, &mp, &m));
    llm_model_mem_need(m, &need);
    const struct llm_hparams *hp = llm_model_hparams(m);
    uint64_t tb = 0;
    for (uint64_t i = 0; i < llm_gguf_tensor_count(g); i++)
        tb += llm_gguf_tensor_at(g, i)->size_B;
    CHECK(need.weights_B == tb &&
          need.kv_B == 2ull * 2 * hp->n_layer * 256 * hp->n_head_kv * hp->head_dim && /* K and V, f16 */
          need.act_B > 0 && need.total_B == need.weights_B + need.kv_B + need.act_B + need.scratch_B);
    llm_model_destroy(m);
    m = NULL;
    /* what the engine itself takes of a 256 MiB part once the device and a compute queue are open */
    struct hcq_mem_stats ms;
    struct hcq_queue *q = NULL;
    CHECK_OK(hcq_device_open("emu:gh100,vram_mb=256", &dev));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    CHECK_OK(hcq_device_mem_stats(dev, &ms));
    hcq_queue_destroy(q);
    hcq_device_close(dev);
    dev = NULL;
    CHECK(ms.driver_free_B > 0 && ms.driver_free_B < (256ull << 20));
    const uint64_t used = (256ull << 20) - ms.driver_free_B;
    char spec[64];
    snprintf(spec, sizeof spec, "emu:gh100,vram_mb=%llu",
             (unsigned long long)((used + need.total_B) >> 20) - 1);
    mp.dev_spec = spec;
    enum hcq_status st = llm_model_load_gguf(g, &mp, &m);
    CHECKF(st == HCQ_ERR_NOMEM && strstr(hcq_last_error(), "llm_model_load: needs ") &&
               strstr(hcq_last_error(), "KV cache") && strstr(hcq_last_error(), "for 256 tokens") &&
               strstr(hcq_last_error(), "GiB free: use a shorter context (-c) or a smaller file"),
           "%s on %s: %s", hcq_status_str(st), spec, hcq_last_error());
    snprintf(spec, sizeof spec, "emu:gh100,vram_mb=%llu",
             (unsigned long long)((used + need.total_B) >> 20) + 64);
    CHECKF(llm_model_load_gguf(g, &mp, &m) == HCQ_OK, "%s: %s", spec, hcq_last_error());
done:
    llm_model_destroy(m);
    hcq_device_close(dev);
    llm_gguf_destroy(g);
}

/* NaN in a weight: the library call names it; `nvhcq run` stops with exit status 1. */
TEST(nan_logits_detected)
{
    struct llm_gguf *g = NULL;
    struct llm_model *m = NULL;
    char *c = NULL, path[160], cmd[512];
    CHECK(need_base());
    float bad[4] = {1, 2, INFINITY, 3};
    CHECK(llm_logits_check(bad, 4) == HCQ_ERR_FORMAT);
    CHECK(strstr(hcq_last_error(),
                 "llm_logits_check: logit 2 of 4 is +Inf: the model computes non-finite values "
                 "(broken weights or hyper-parameters)"));
    CHECK_OK(llm_gguf_parse(base, base_n, &g));
    const struct llm_gguf_tensor *on = llm_gguf_tensor_find(g, "output_norm.weight");
    CHECK(on && on->type == LLM_TYPE_F32);
    c = malloc(base_n);
    CHECK(c);
    memcpy(c, base, base_n);
    float nan_ = NAN;
    memcpy(c + ((const char *)on->data - base), &nan_, 4);
    llm_gguf_destroy(g);
    g = NULL;
    CHECK_OK(llm_gguf_parse(c, base_n, &g));
    struct llm_model_params mp;
    llm_model_params_default(&mp);
    mp.gemm_min_batch = LLM_GEMM_MIN_BATCH_REF; /* the f32 per-op prefill the bounds here assume */
    mp.dev_spec = "cpu";
    mp.n_ctx = 64;
    CHECK_OK(llm_model_load_gguf(g, &mp, &m));
    int32_t tok = 1;
    CHECK_OK(llm_model_eval(m, &tok, 1, 0));
    CHECK(llm_logits_check(llm_model_logits(m), 2048) == HCQ_ERR_FORMAT);
    CHECKF(strstr(hcq_last_error(), "llm_logits_check: logit 0 of 2048 is NaN"), "%s", hcq_last_error());
    /* the CLI (when built beside the tests) */
    const char *build = getenv("BUILD") ? getenv("BUILD") : "build";
    char cli[128];
    snprintf(cli, sizeof cli, "%s/nvhcq", build);
    if (access(cli, X_OK)) {
        printf("    (no %s: CLI exit status not checked)\n", cli);
        goto done;
    }
    snprintf(path, sizeof path, "/tmp/nvhcq_test_valid_nan_%d.gguf", (int)getpid());
    FILE *f = fopen(path, "wb");
    CHECK(f);
    CHECK(fwrite(c, 1, base_n, f) == base_n);
    fclose(f);
    snprintf(cmd, sizeof cmd, "%s run -m %s -p Hello -n 4 --dev cpu >/dev/null 2>%s.err", cli, path, path);
    int rc = system(cmd);
    snprintf(cmd, sizeof cmd, "%s.err", path);
    size_t en = 0;
    char *err = read_file(cmd, &en);
    CHECKF(rc != -1 && WIFEXITED(rc) && WEXITSTATUS(rc) == 1, "nvhcq run exit status %d", rc);
    CHECKF(err && memmem(err, en, "logits_check: logit 0 of 2048 is NaN", 36), "stderr: %.*s", (int)en,
           err ? err : "");
    free(err);
    unlink(cmd);
    unlink(path);
done:
    llm_model_destroy(m);
    llm_gguf_destroy(g);
    free(c);
}

int
main(int argc, char **argv)
{
    static const struct th_case cases[] = {
        TH_CASE(base_loads),
        TH_CASE(tensors_overlap_or_out_of_order),
        TH_CASE(duplicate_names_and_keys),
        TH_CASE(hparams_checked),
        TH_CASE(tokenizer_arrays_checked),
        TH_CASE(non_regular_files_refused),
        TH_CASE(allocation_bounded_by_file),
        TH_CASE(device_memory_checked_before_allocation),
        TH_CASE(nan_logits_detected),
    };
    int rc = th_run("llm_valid", NULL, cases, TH_COUNT(cases), argc - 1, argv + 1) ? 1 : 0;
    if (base_path[0])
        unlink(base_path);
    free(base);
    return rc;
}
