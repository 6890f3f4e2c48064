/* SPDX-License-Identifier: MIT */
/*
 * llm_gguf_write.c - GGUF version 3 writer: key/values are kept serialised (type + value
 * bytes), tensors by reference; the file is laid out as the spec requires (infos, padding
 * to general.alignment = 32, each tensor at an aligned offset of the data section).
 * Layer: llm. Format facts: the GGUF specification (ggml docs/gguf.md).
 */
#include "llm_gguf_priv.h"

#include "util_log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GGUF_WRITE_ALIGN 32u

struct wkv {
    char *key;
    uint32_t type;
    uint8_t *val;
    uint64_t val_B;
};

struct wtensor {
    char *name;
    uint32_t type;
    uint32_t n_dims;
    uint64_t ne[LLM_GGUF_MAX_DIMS];
    const void *data;
    uint64_t size_B;
    uint64_t offset_B;
};

struct llm_gguf_writer {
    struct wkv *kvs;
    uint64_t kv_n, kv_cap;
    struct wtensor *ts;
    uint64_t t_n, t_cap;
};

/* growable byte buffer */
struct bb {
    uint8_t *p;
    uint64_t n, cap;
    bool oom;
};

static void
bb_put(struct bb *b, const void *src, uint64_t n)
{
    if (b->oom)
        return;
    if (b->n + n > b->cap) {
        uint64_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n)
            cap *= 2;
        uint8_t *p = realloc(b->p, cap);
        if (!p) {
            b->oom = true;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, src, n);
    b->n += n;
}

static void
bb_u32(struct bb *b, uint32_t v)
{
    bb_put(b, &v, 4);
}
static void
bb_u64(struct bb *b, uint64_t v)
{
    bb_put(b, &v, 8);
}
static void
bb_str(struct bb *b, const char *s, uint64_t n)
{
    bb_u64(b, n);
    bb_put(b, s, n);
}

enum hcq_status
llm_gguf_writer_create(struct llm_gguf_writer **w_out)
{
    *w_out = calloc(1, sizeof **w_out);
    return *w_out ? HCQ_OK : hcq_err(HCQ_ERR_NOMEM, "llm_gguf_writer_create");
}

void
llm_gguf_writer_destroy(struct llm_gguf_writer *w)
{
    if (!w)
        return;
    for (uint64_t i = 0; i < w->kv_n; i++) {
        free(w->kvs[i].key);
        free(w->kvs[i].val);
    }
    for (uint64_t i = 0; i < w->t_n; i++)
        free(w->ts[i].name);
    free(w->kvs);
    free(w->ts);
    free(w);
}

/* Take ownership of val (a malloc'ed buffer); replaces an existing key. */
static enum hcq_status
set_raw(struct llm_gguf_writer *w, const char *key, uint32_t type, struct bb *val)
{
    if (val->oom)
        return hcq_err(HCQ_ERR_NOMEM, "llm_gguf_writer: value of '%s'", key);
    for (uint64_t i = 0; i < w->kv_n; i++) {
        if (!strcmp(w->kvs[i].key, key)) {
            free(w->kvs[i].val);
            w->kvs[i].type = type;
            w->kvs[i].val = val->p;
            w->kvs[i].val_B = val->n;
            return HCQ_OK;
        }
    }
    if (w->kv_n == w->kv_cap) {
        uint64_t cap = w->kv_cap ? w->kv_cap * 2 : 32;
        struct wkv *k = realloc(w->kvs, cap * sizeof *k);
        if (!k) {
            free(val->p);
            return hcq_err(HCQ_ERR_NOMEM, "llm_gguf_writer: %llu keys", (unsigned long long)cap);
        }
        w->kvs = k;
        w->kv_cap = cap;
    }
    char *kd = strdup(key);
    if (!kd) {
        free(val->p);
        return hcq_err(HCQ_ERR_NOMEM, "llm_gguf_writer: key");
    }
    w->kvs[w->kv_n++] = (struct wkv){kd, type, val->p, val->n};
    return HCQ_OK;
}

static enum hcq_status
set_scalar(struct llm_gguf_writer *w, const char *key, uint32_t type, const void *v, uint32_t n)
{
    struct bb b = {0};
    bb_put(&b, v, n);
    return set_raw(w, key, type, &b);
}

enum hcq_status
llm_gguf_writer_set_u32(struct llm_gguf_writer *w, const char *key, uint32_t v)
{
    return set_scalar(w, key, LLM_GGUF_UINT32, &v, 4);
}

enum hcq_status
llm_gguf_writer_set_i32(struct llm_gguf_writer *w, const char *key, int32_t v)
{
    return set_scalar(w, key, LLM_GGUF_INT32, &v, 4);
}

enum hcq_status
llm_gguf_writer_set_u64(struct llm_gguf_writer *w, const char *key, uint64_t v)
{
    return set_scalar(w, key, LLM_GGUF_UINT64, &v, 8);
}

enum hcq_status
llm_gguf_writer_set_f32(struct llm_gguf_writer *w, const char *key, float v)
{
    return set_scalar(w, key, LLM_GGUF_FLOAT32, &v, 4);
}

enum hcq_status
llm_gguf_writer_set_bool(struct llm_gguf_writer *w, const char *key, bool v)
{
    uint8_t b = v;
    return set_scalar(w, key, LLM_GGUF_BOOL, &b, 1);
}

enum hcq_status
llm_gguf_writer_set_str(struct llm_gguf_writer *w, const char *key, const char *v)
{
    struct bb b = {0};
    bb_str(&b, v, strlen(v));
    return set_raw(w, key, LLM_GGUF_STRING, &b);
}

static uint32_t
scalar_size(uint32_t t)
{
    static const uint8_t sz[LLM_GGUF_VTYPE_COUNT] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
    return t < LLM_GGUF_VTYPE_COUNT ? sz[t] : 0;
}

enum hcq_status
llm_gguf_writer_set_val(struct llm_gguf_writer *w, const char *key, uint32_t vtype, const void *v)
{
    uint32_t es = scalar_size(vtype);
    if (!es)
        return hcq_err(HCQ_ERR_INVALID, "llm_gguf_writer_set_val: '%s': type %u is not a scalar", key, vtype);
    return set_scalar(w, key, vtype, v, es);
}

enum hcq_status
llm_gguf_writer_set_arr(struct llm_gguf_writer *w, const char *key, uint32_t elem_type, const void *elems,
                        uint64_t count)
{
    uint32_t es = scalar_size(elem_type);
    if (!es)
        return hcq_err(HCQ_ERR_INVALID, "llm_gguf_writer_set_arr: '%s': element type %u is not numeric", key,
                       elem_type);
    struct bb b = {0};
    bb_u32(&b, elem_type);
    bb_u64(&b, count);
    bb_put(&b, elems, count * es);
    return set_raw(w, key, LLM_GGUF_ARRAY, &b);
}

enum hcq_status
llm_gguf_writer_set_arr_str(struct llm_gguf_writer *w, const char *key, const char *const *strs,
                            const uint64_t *lens, uint64_t count)
{
    struct bb b = {0};
    bb_u32(&b, LLM_GGUF_STRING);
    bb_u64(&b, count);
    for (uint64_t i = 0; i < count; i++)
        bb_str(&b, strs[i], lens ? lens[i] : strlen(strs[i]));
    return set_raw(w, key, LLM_GGUF_ARRAY, &b);
}

enum hcq_status
llm_gguf_writer_copy_kv(struct llm_gguf_writer *w, const struct llm_gguf *g, uint64_t i)
{
    if (i >= g->kv_count)
        return hcq_err(HCQ_ERR_INVALID, "llm_gguf_writer_copy_kv: index %llu (expected < %llu)",
                       (unsigned long long)i, (unsigned long long)g->kv_count);
    const struct llm_gguf_kv *kv = &g->kvs[i];
    char *key = malloc(kv->key.len + 1);
    if (!key)
        return hcq_err(HCQ_ERR_NOMEM, "llm_gguf_writer_copy_kv");
    memcpy(key, kv->key.ptr, kv->key.len);
    key[kv->key.len] = 0;
    struct bb b = {0};
    bb_put(&b, kv->raw, kv->raw_size);
    enum hcq_status st = set_raw(w, key, kv->type, &b);
    free(key);
    return st;
}

enum hcq_status
llm_gguf_writer_add_tensor(struct llm_gguf_writer *w, const char *name, uint32_t type, uint32_t n_dims,
                           const uint64_t *ne, const void *data)
{
    if (n_dims == 0 || n_dims > LLM_GGUF_MAX_DIMS || !llm_type_block_values(type))
        return hcq_err(HCQ_ERR_INVALID, "llm_gguf_writer_add_tensor: '%s': n_dims %u type %u", name, n_dims,
                       type);
    uint64_t rows = 1;
    for (uint32_t d = 1; d < n_dims; d++)
        rows *= ne[d];
    uint64_t row_B = llm_type_row_bytes(type, ne[0]);
    if (!row_B)
        return hcq_err(HCQ_ERR_INVALID, "llm_gguf_writer_add_tensor: '%s': ne[0] %llu not a multiple of %u",
                       name, (unsigned long long)ne[0], llm_type_block_values(type));
    if (w->t_n == w->t_cap) {
        uint64_t cap = w->t_cap ? w->t_cap * 2 : 64;
        struct wtensor *t = realloc(w->ts, cap * sizeof *t);
        if (!t)
            return hcq_err(HCQ_ERR_NOMEM, "llm_gguf_writer_add_tensor");
        w->ts = t;
        w->t_cap = cap;
    }
    struct wtensor *t = &w->ts[w->t_n];
    memset(t, 0, sizeof *t);
    if (!(t->name = strdup(name)))
        return hcq_err(HCQ_ERR_NOMEM, "llm_gguf_writer_add_tensor");
    t->type = type;
    t->n_dims = n_dims;
    for (uint32_t d = 0; d < n_dims; d++)
        t->ne[d] = ne[d];
    t->data = data;
    t->size_B = row_B * rows;
    w->t_n++;
    return HCQ_OK;
}

/* Header + kvs + tensor infos + padding; assigns tensor offsets; *data_B_out = data section. */
static enum hcq_status
build_header(struct llm_gguf_writer *w, struct bb *h, uint64_t *data_B_out)
{
    enum hcq_status st = llm_gguf_writer_set_u32(w, "general.alignment", GGUF_WRITE_ALIGN);
    if (st)
        return st;
    uint64_t off = 0;
    for (uint64_t i = 0; i < w->t_n; i++) {
        w->ts[i].offset_B = off;
        off += (w->ts[i].size_B + GGUF_WRITE_ALIGN - 1) / GGUF_WRITE_ALIGN * GGUF_WRITE_ALIGN;
    }
    *data_B_out = off;
    bb_u32(h, 0x46554747u); /* "GGUF" */
    bb_u32(h, 3);
    bb_u64(h, w->t_n);
    bb_u64(h, w->kv_n);
    for (uint64_t i = 0; i < w->kv_n; i++) {
        bb_str(h, w->kvs[i].key, strlen(w->kvs[i].key));
        bb_u32(h, w->kvs[i].type);
        bb_put(h, w->kvs[i].val, w->kvs[i].val_B);
    }
    for (uint64_t i = 0; i < w->t_n; i++) {
        const struct wtensor *t = &w->ts[i];
        bb_str(h, t->name, strlen(t->name));
        bb_u32(h, t->n_dims);
        for (uint32_t d = 0; d < t->n_dims; d++)
            bb_u64(h, t->ne[d]);
        bb_u32(h, t->type);
        bb_u64(h, t->offset_B);
    }
    static const uint8_t zeros[GGUF_WRITE_ALIGN];
    bb_put(h, zeros, (GGUF_WRITE_ALIGN - h->n % GGUF_WRITE_ALIGN) % GGUF_WRITE_ALIGN);
    if (h->oom)
        return hcq_err(HCQ_ERR_NOMEM, "llm_gguf_writer: header");
    return HCQ_OK;
}

enum hcq_status
llm_gguf_writer_write_mem(struct llm_gguf_writer *w, void **data_out, size_t *size_out)
{
    struct bb h = {0};
    uint64_t data_B;
    enum hcq_status st = build_header(w, &h, &data_B);
    if (st)
        goto fail;
    uint64_t hdr_B = h.n;
    uint8_t *img = calloc(1, hdr_B + data_B);
    if (!img) {
        st =
            hcq_err(HCQ_ERR_NOMEM, "llm_gguf_writer_write_mem: %llu B", (unsigned long long)(hdr_B + data_B));
        goto fail;
    }
    memcpy(img, h.p, hdr_B);
    for (uint64_t i = 0; i < w->t_n; i++)
        memcpy(img + hdr_B + w->ts[i].offset_B, w->ts[i].data, w->ts[i].size_B);
    *data_out = img;
    *size_out = hdr_B + data_B;
fail:
    free(h.p);
    return st;
}

enum hcq_status
llm_gguf_writer_write_file(struct llm_gguf_writer *w, const char *path)
{
    struct bb h = {0};
    uint64_t data_B;
    static const uint8_t zeros[GGUF_WRITE_ALIGN];
    enum hcq_status st = build_header(w, &h, &data_B);
    if (st)
        goto fail_hdr;
    FILE *f = fopen(path, "wb");
    if (!f) {
        st = hcq_err(HCQ_ERR_IO, "cannot create %s: %s", path, strerror(errno));
        goto fail_hdr;
    }
    bool ok = fwrite(h.p, 1, h.n, f) == h.n;
    for (uint64_t i = 0; ok && i < w->t_n; i++) {
        const struct wtensor *t = &w->ts[i];
        uint64_t pad = (GGUF_WRITE_ALIGN - t->size_B % GGUF_WRITE_ALIGN) % GGUF_WRITE_ALIGN;
        ok = fwrite(t->data, 1, t->size_B, f) == t->size_B && fwrite(zeros, 1, pad, f) == pad;
    }
    int err = ok ? 0 : errno;
    if (fclose(f) && !err)
        err = errno ? errno : EIO;
    if (!ok || err)
        st = hcq_err(HCQ_ERR_IO, "writing %s failed: %s", path, strerror(err ? err : EIO));
fail_hdr:
    free(h.p);
    return st;
}
