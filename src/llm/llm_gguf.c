/* SPDX-License-Identifier: MIT */
/*
 * llm_gguf.c - GGUF reader (versions 2 and 3) over a memory image or an mmap'ed file.
 * Layer: llm. Format facts: the GGUF specification (ggml docs/gguf.md): little-endian,
 * magic "GGUF", u32 version, u64 tensor_count, u64 kv_count, kv pairs, tensor infos,
 * padding to general.alignment (default 32), data. Every count, length, offset, shape
 * and type is checked against the bytes that remain before it is used (STYLE 2.7).
 */
#include "llm_gguf_priv.h"

#include "util_log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* GGUF spec: "GGUF" read as a little-endian u32. */
#define GGUF_MAGIC 0x46554747u
#define GGUF_DEFAULT_ALIGNMENT 32u
/* Sanity caps (not in the spec): keep allocations proportional to the file. */
#define GGUF_MAX_DIM_VALUE (1ull << 40)

/* ==== Cursor ==== */

struct cur {
    const uint8_t *p;
    size_t size;
    size_t off;
};

static enum hcq_status
cur_need(struct cur *c, uint64_t n, const char *field)
{
    if (n > c->size - c->off)
        return hcq_err(HCQ_ERR_FORMAT, "llm_gguf_parse: %s at offset %zu: needs %llu bytes, %zu left", field,
                       c->off, (unsigned long long)n, c->size - c->off);
    return HCQ_OK;
}

static enum hcq_status
cur_u32(struct cur *c, uint32_t *v, const char *field)
{
    enum hcq_status st = cur_need(c, 4, field);
    if (st)
        return st;
    memcpy(v, c->p + c->off, 4);
    c->off += 4;
    return HCQ_OK;
}

static enum hcq_status
cur_u64(struct cur *c, uint64_t *v, const char *field)
{
    enum hcq_status st = cur_need(c, 8, field);
    if (st)
        return st;
    memcpy(v, c->p + c->off, 8);
    c->off += 8;
    return HCQ_OK;
}

static enum hcq_status
cur_str(struct cur *c, struct llm_str *s, const char *field)
{
    uint64_t len;
    enum hcq_status st = cur_u64(c, &len, field);
    if (st)
        return st;
    if ((st = cur_need(c, len, field)))
        return st;
    s->ptr = (const char *)(c->p + c->off);
    s->len = len;
    c->off += len;
    return HCQ_OK;
}

/* Size of a scalar value type; 0 for STRING/ARRAY/unknown. */
static uint32_t
vtype_size(uint32_t t)
{
    switch (t) {
    case LLM_GGUF_UINT8:
    case LLM_GGUF_INT8:
    case LLM_GGUF_BOOL:
        return 1;
    case LLM_GGUF_UINT16:
    case LLM_GGUF_INT16:
        return 2;
    case LLM_GGUF_UINT32:
    case LLM_GGUF_INT32:
    case LLM_GGUF_FLOAT32:
        return 4;
    case LLM_GGUF_UINT64:
    case LLM_GGUF_INT64:
    case LLM_GGUF_FLOAT64:
        return 8;
    default:
        return 0;
    }
}

/* Skip (validate) a value of type t; depth bounds nested arrays. */
static enum hcq_status
skip_value(struct cur *c, uint32_t t, int depth, const char *key)
{
    enum hcq_status st;
    if (t == LLM_GGUF_STRING) {
        struct llm_str s;
        return cur_str(c, &s, "string value");
    }
    if (t == LLM_GGUF_ARRAY) {
        uint32_t et;
        uint64_t n;
        if (depth > 4)
            return hcq_err(HCQ_ERR_FORMAT, "llm_gguf_parse: key '%s': arrays nested deeper than 4", key);
        if ((st = cur_u32(c, &et, "array element type")) || (st = cur_u64(c, &n, "array count")))
            return st;
        if (et >= LLM_GGUF_VTYPE_COUNT)
            return hcq_err(HCQ_ERR_FORMAT, "llm_gguf_parse: key '%s': array element type %u (expected < %u)",
                           key, et, LLM_GGUF_VTYPE_COUNT);
        uint32_t es = vtype_size(et);
        if (es) {
            if (n > (c->size - c->off) / es)
                return hcq_err(HCQ_ERR_FORMAT,
                               "llm_gguf_parse: key '%s': array count %llu x %u B exceeds the %zu B left",
                               key, (unsigned long long)n, es, c->size - c->off);
            c->off += n * es;
            return HCQ_OK;
        }
        /* strings / arrays: each element takes at least 8 bytes, so n is bounded first */
        if (n > (c->size - c->off) / 8)
            return hcq_err(HCQ_ERR_FORMAT,
                           "llm_gguf_parse: key '%s': array count %llu exceeds the %zu B left", key,
                           (unsigned long long)n, c->size - c->off);
        for (uint64_t i = 0; i < n; i++)
            if ((st = skip_value(c, et, depth + 1, key)))
                return st;
        return HCQ_OK;
    }
    uint32_t sz = vtype_size(t);
    if (!sz)
        return hcq_err(HCQ_ERR_FORMAT, "llm_gguf_parse: key '%s': value type %u (expected < %u)", key, t,
                       LLM_GGUF_VTYPE_COUNT);
    if ((st = cur_need(c, sz, "scalar value")))
        return st;
    c->off += sz;
    return HCQ_OK;
}

/* ==== Parse ==== */

static bool
str_eq(struct llm_str s, const char *z)
{
    size_t n = strlen(z);
    return s.len == n && memcmp(s.ptr, z, n) == 0;
}

static enum hcq_status
parse_kvs(struct llm_gguf *g, struct cur *c)
{
    enum hcq_status st;
    for (uint64_t i = 0; i < g->kv_count; i++) {
        struct llm_gguf_kv *kv = &g->kvs[i];
        if ((st = cur_str(c, &kv->key, "kv key")) || (st = cur_u32(c, &kv->type, "kv type")))
            return st;
        char key[64];
        snprintf(key, sizeof key, "%.*s", (int)(kv->key.len < 60 ? kv->key.len : 60), kv->key.ptr);
        kv->raw = c->p + c->off;
        if (kv->type == LLM_GGUF_ARRAY) {
            struct cur peek = *c;
            if ((st = cur_u32(&peek, &kv->arr_type, "array element type")) ||
                (st = cur_u64(&peek, &kv->arr_count, "array count")))
                return st;
            kv->arr_data = c->p + peek.off;
        }
        size_t start = c->off;
        if ((st = skip_value(c, kv->type, 0, key)))
            return st;
        kv->raw_size = c->off - start;
        /* String arrays: index the elements once (validated by skip_value above). */
        if (kv->type == LLM_GGUF_ARRAY && kv->arr_type == LLM_GGUF_STRING && kv->arr_count) {
            kv->strs = malloc(kv->arr_count * sizeof *kv->strs);
            if (!kv->strs)
                return hcq_err(HCQ_ERR_NOMEM, "llm_gguf_parse: key '%s': %llu strings", key,
                               (unsigned long long)kv->arr_count);
            struct cur sc = {c->p, c->size, (size_t)((const uint8_t *)kv->arr_data - c->p)};
            for (uint64_t j = 0; j < kv->arr_count; j++)
                if ((st = cur_str(&sc, &kv->strs[j], "array string")))
                    return st;
        }
    }
    return HCQ_OK;
}

static enum hcq_status
parse_tensor_infos(struct llm_gguf *g, struct cur *c)
{
    enum hcq_status st;
    for (uint64_t i = 0; i < g->tensor_count; i++) {
        struct llm_gguf_tensor *t = &g->tensors[i];
        if ((st = cur_str(c, &t->name, "tensor name")) || (st = cur_u32(c, &t->n_dims, "tensor n_dims")))
            return st;
        if (t->n_dims == 0 || t->n_dims > LLM_GGUF_MAX_DIMS)
            return hcq_err(HCQ_ERR_FORMAT, "llm_gguf_parse: tensor %llu n_dims %u (expected 1..%u)",
                           (unsigned long long)i, t->n_dims, LLM_GGUF_MAX_DIMS);
        uint64_t nel = 1;
        for (uint32_t d = 0; d < LLM_GGUF_MAX_DIMS; d++) {
            t->ne[d] = 1;
            if (d < t->n_dims && (st = cur_u64(c, &t->ne[d], "tensor ne")))
                return st;
            if (t->ne[d] == 0 || t->ne[d] > GGUF_MAX_DIM_VALUE || nel > GGUF_MAX_DIM_VALUE / t->ne[d])
                return hcq_err(
                    HCQ_ERR_FORMAT, "llm_gguf_parse: tensor '%.*s' ne[%u] = %llu: empty or too large",
                    (int)(t->name.len > 64 ? 64 : t->name.len), t->name.ptr, d, (unsigned long long)t->ne[d]);
            nel *= t->ne[d];
        }
        if ((st = cur_u32(c, &t->type, "tensor type")) || (st = cur_u64(c, &t->offset_B, "tensor offset")))
            return st;
        uint32_t bv = llm_type_block_values(t->type);
        if (!bv)
            return hcq_err(HCQ_ERR_FORMAT, "llm_gguf_parse: tensor '%.*s' type %u: unknown or unsupported",
                           (int)(t->name.len > 64 ? 64 : t->name.len), t->name.ptr, t->type);
        if (t->ne[0] % bv)
            return hcq_err(HCQ_ERR_FORMAT,
                           "llm_gguf_parse: tensor '%.*s' ne[0] = %llu: not a multiple of %u (%s)",
                           (int)(t->name.len > 64 ? 64 : t->name.len), t->name.ptr,
                           (unsigned long long)t->ne[0], bv, llm_type_name(t->type));
        t->size_B = nel / bv * llm_type_block_bytes(t->type);
    }
    return HCQ_OK;
}

static int
cmp_str(const void *a, const void *b)
{
    const struct llm_str *x = a, *y = b;
    if (x->len != y->len)
        return x->len < y->len ? -1 : 1;
    return memcmp(x->ptr, y->ptr, x->len);
}

/* Names must be unique (GGUF spec; llama.cpp refuses duplicates too): a reader that takes
 * the first of two keys and one that takes the last would see different models. Sorting a
 * copy keeps this O(n log n) for files with millions of entries. */
static enum hcq_status
check_unique(const struct llm_str *names, size_t stride, uint64_t n, const char *what)
{
    if (n < 2)
        return HCQ_OK;
    struct llm_str *v = malloc(n * sizeof *v);
    if (!v)
        return hcq_err(HCQ_ERR_NOMEM, "llm_gguf_parse: %llu %ss", (unsigned long long)n, what);
    for (uint64_t i = 0; i < n; i++)
        v[i] = *(const struct llm_str *)((const char *)names + i * stride);
    qsort(v, n, sizeof *v, cmp_str);
    enum hcq_status st = HCQ_OK;
    for (uint64_t i = 1; i < n && !st; i++)
        if (!cmp_str(&v[i - 1], &v[i]))
            st = hcq_err(HCQ_ERR_FORMAT, "llm_gguf_parse: duplicate %s '%.*s'", what,
                         (int)(v[i].len > 64 ? 64 : v[i].len), v[i].ptr);
    free(v);
    return st;
}

#define TNAME(t) (int)((t)->name.len > 64 ? 64 : (t)->name.len), (t)->name.ptr

static enum hcq_status
place_tensors(struct llm_gguf *g, size_t size)
{
    uint64_t data_B = size - g->data_off;
    const struct llm_gguf_tensor *prev = NULL;
    for (uint64_t i = 0; i < g->tensor_count; i++) {
        struct llm_gguf_tensor *t = &g->tensors[i];
        if (t->offset_B % g->alignment)
            return hcq_err(HCQ_ERR_FORMAT, "llm_gguf_parse: tensor '%.*s' offset %llu: not a multiple of %u",
                           (int)(t->name.len > 64 ? 64 : t->name.len), t->name.ptr,
                           (unsigned long long)t->offset_B, g->alignment);
        if (t->offset_B > data_B || t->size_B > data_B - t->offset_B)
            return hcq_err(
                HCQ_ERR_FORMAT, "llm_gguf_parse: tensor '%.*s' [%llu, +%llu) beyond the %llu B data section",
                (int)(t->name.len > 64 ? 64 : t->name.len), t->name.ptr, (unsigned long long)t->offset_B,
                (unsigned long long)t->size_B, (unsigned long long)data_B);
        /* In the order of their infos, without overlap (llama.cpp requires exactly this
         * layout): every byte of data belongs to at most one tensor, so what a loader
         * allocates for weights is bounded by the file's size. */
        if (prev && t->offset_B < prev->offset_B + prev->size_B) {
            if (t->offset_B + t->size_B > prev->offset_B)
                return hcq_err(
                    HCQ_ERR_FORMAT,
                    "llm_gguf_parse: tensor '%.*s' at [%llu, %llu) overlaps tensor '%.*s' at [%llu, %llu)",
                    TNAME(t), (unsigned long long)t->offset_B, (unsigned long long)(t->offset_B + t->size_B),
                    TNAME(prev), (unsigned long long)prev->offset_B,
                    (unsigned long long)(prev->offset_B + prev->size_B));
            return hcq_err(
                HCQ_ERR_FORMAT,
                "llm_gguf_parse: tensor '%.*s' at offset %llu lies before tensor '%.*s' at offset %llu "
                "(tensors must be stored in the order of their infos)",
                TNAME(t), (unsigned long long)t->offset_B, TNAME(prev), (unsigned long long)prev->offset_B);
        }
        t->data = g->base + g->data_off + t->offset_B;
        prev = t;
    }
    return HCQ_OK;
}

enum hcq_status
llm_gguf_parse(const void *data, size_t size, struct llm_gguf **gguf_out)
{
    enum hcq_status st;
    struct cur c = {data, size, 0};
    uint32_t magic;
    *gguf_out = NULL;
    if (!data && size)
        return hcq_err(HCQ_ERR_INVALID, "llm_gguf_parse: NULL data");
    struct llm_gguf *g = calloc(1, sizeof *g);
    if (!g)
        return hcq_err(HCQ_ERR_NOMEM, "llm_gguf_parse: header");
    g->base = data;
    g->size = size;
    if ((st = cur_u32(&c, &magic, "magic")))
        goto fail;
    if (magic != GGUF_MAGIC) {
        st = hcq_err(HCQ_ERR_FORMAT, "llm_gguf_parse: magic 0x%08x (expected 0x%08x \"GGUF\")", magic,
                     GGUF_MAGIC);
        goto fail;
    }
    if ((st = cur_u32(&c, &g->version, "version")))
        goto fail;
    if (g->version != 2 && g->version != 3) {
        st = hcq_err(HCQ_ERR_FORMAT, "llm_gguf_parse: version %u (expected 2 or 3)", g->version);
        goto fail;
    }
    if ((st = cur_u64(&c, &g->tensor_count, "tensor_count")) || (st = cur_u64(&c, &g->kv_count, "kv_count")))
        goto fail;
    /* each kv needs >= 12 bytes, each tensor info >= 24: bound counts before allocating */
    if (g->kv_count > (size - c.off) / 12) {
        st = hcq_err(HCQ_ERR_FORMAT, "llm_gguf_parse: kv_count %llu cannot fit in %zu bytes",
                     (unsigned long long)g->kv_count, size - c.off);
        goto fail;
    }
    if (g->tensor_count > (size - c.off) / 24) {
        st = hcq_err(HCQ_ERR_FORMAT, "llm_gguf_parse: tensor_count %llu cannot fit in %zu bytes",
                     (unsigned long long)g->tensor_count, size - c.off);
        goto fail;
    }
    g->kvs = calloc(g->kv_count ? g->kv_count : 1, sizeof *g->kvs);
    g->tensors = calloc(g->tensor_count ? g->tensor_count : 1, sizeof *g->tensors);
    if (!g->kvs || !g->tensors) {
        st = hcq_err(HCQ_ERR_NOMEM, "llm_gguf_parse: %llu kvs, %llu tensors", (unsigned long long)g->kv_count,
                     (unsigned long long)g->tensor_count);
        goto fail;
    }
    if ((st = parse_kvs(g, &c)) || (st = check_unique(&g->kvs[0].key, sizeof *g->kvs, g->kv_count, "key")))
        goto fail;
    g->alignment = GGUF_DEFAULT_ALIGNMENT;
    int64_t ai = llm_gguf_find(g, "general.alignment");
    if (ai >= 0) {
        const struct llm_gguf_kv *kv = &g->kvs[ai];
        uint32_t a = 0;
        if (kv->type != LLM_GGUF_UINT32) {
            st = hcq_err(HCQ_ERR_FORMAT, "llm_gguf_parse: general.alignment type %u (expected %u UINT32)",
                         kv->type, LLM_GGUF_UINT32);
            goto fail;
        }
        memcpy(&a, kv->raw, 4);
        if (a == 0 || (a & (a - 1)) || a > (1u << 20)) {
            st = hcq_err(HCQ_ERR_FORMAT, "llm_gguf_parse: general.alignment %u (expected a power of two)", a);
            goto fail;
        }
        g->alignment = a;
    }
    if ((st = parse_tensor_infos(g, &c)) ||
        (st = check_unique(&g->tensors[0].name, sizeof *g->tensors, g->tensor_count, "tensor name")))
        goto fail;
    uint64_t doff = (c.off + g->alignment - 1) / g->alignment * g->alignment;
    if (g->tensor_count && doff > size) {
        st = hcq_err(HCQ_ERR_FORMAT, "llm_gguf_parse: data section at %llu beyond file size %zu",
                     (unsigned long long)doff, size);
        goto fail;
    }
    g->data_off = doff > size ? size : doff;
    if ((st = place_tensors(g, size)))
        goto fail;
    *gguf_out = g;
    return HCQ_OK;
fail:
    llm_gguf_destroy(g);
    return st;
}

enum hcq_status
llm_gguf_open(const char *path, struct llm_gguf **gguf_out)
{
    enum hcq_status st;
    struct stat sb;
    *gguf_out = NULL;
    /* Only regular files: stat first, since open() of a FIFO without a writer blocks and mmap of
     * a directory fails with a message that does not say what is wrong; O_NONBLOCK and fstat()
     * after open close the race with a path replaced in between. */
    if (stat(path, &sb))
        return hcq_err(HCQ_ERR_IO, "%s: %s", path, strerror(errno));
    if (!S_ISREG(sb.st_mode)) {
        const char *what = S_ISDIR(sb.st_mode)    ? "is a directory"
                           : S_ISFIFO(sb.st_mode) ? "is a FIFO"
                                                  : "is not a regular file";
        return hcq_err(HCQ_ERR_IO, "%s: %s, not a GGUF file", path, what);
    }
    if (sb.st_size <= 0)
        return hcq_err(HCQ_ERR_FORMAT, "%s: empty file, not a GGUF file", path);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return hcq_err(HCQ_ERR_IO, "%s: %s", path, strerror(errno));
    if (fstat(fd, &sb) || !S_ISREG(sb.st_mode) || sb.st_size <= 0) { /* replaced since the stat */
        st = hcq_err(HCQ_ERR_IO, "%s: changed while opening", path);
        goto fail_fd;
    }
    void *map = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
        st = hcq_err(HCQ_ERR_IO, "%s: mmap of %lld B failed: %s", path, (long long)sb.st_size,
                     strerror(errno));
        goto fail_fd;
    }
    if ((st = llm_gguf_parse(map, (size_t)sb.st_size, gguf_out)))
        goto fail_map;
    (*gguf_out)->map = map;
    (*gguf_out)->map_size = (size_t)sb.st_size;
    close(fd);
    return HCQ_OK;
fail_map:
    munmap(map, (size_t)sb.st_size);
fail_fd:
    close(fd);
    return st;
}

void
llm_gguf_destroy(struct llm_gguf *g)
{
    if (!g)
        return;
    if (g->kvs)
        for (uint64_t i = 0; i < g->kv_count; i++)
            free(g->kvs[i].strs);
    free(g->kvs);
    free(g->tensors);
    if (g->map)
        munmap(g->map, g->map_size);
    free(g);
}

/* ==== Accessors ==== */

uint32_t
llm_gguf_version(const struct llm_gguf *g)
{
    return g->version;
}
uint32_t
llm_gguf_alignment(const struct llm_gguf *g)
{
    return g->alignment;
}
uint64_t
llm_gguf_data_offset(const struct llm_gguf *g)
{
    return g->data_off;
}
uint64_t
llm_gguf_kv_count(const struct llm_gguf *g)
{
    return g->kv_count;
}
struct llm_str
llm_gguf_kv_key(const struct llm_gguf *g, uint64_t i)
{
    return g->kvs[i].key;
}
uint32_t
llm_gguf_kv_type(const struct llm_gguf *g, uint64_t i)
{
    return g->kvs[i].type;
}
uint64_t
llm_gguf_tensor_count(const struct llm_gguf *g)
{
    return g->tensor_count;
}

const struct llm_gguf_tensor *
llm_gguf_tensor_at(const struct llm_gguf *g, uint64_t i)
{
    return i < g->tensor_count ? &g->tensors[i] : NULL;
}

int64_t
llm_gguf_find(const struct llm_gguf *g, const char *key)
{
    for (uint64_t i = 0; i < g->kv_count; i++)
        if (str_eq(g->kvs[i].key, key))
            return (int64_t)i;
    return -1;
}

const struct llm_gguf_tensor *
llm_gguf_tensor_find(const struct llm_gguf *g, const char *name)
{
    for (uint64_t i = 0; i < g->tensor_count; i++)
        if (str_eq(g->tensors[i].name, name))
            return &g->tensors[i];
    return NULL;
}

const void *
llm_gguf_kv_raw(const struct llm_gguf *g, uint64_t i, uint64_t *size_out)
{
    *size_out = g->kvs[i].raw_size;
    return g->kvs[i].raw;
}

static enum hcq_status
find_kv(const struct llm_gguf *g, const char *key, const struct llm_gguf_kv **kv_out)
{
    int64_t i = llm_gguf_find(g, key);
    if (i < 0)
        return hcq_err_quiet(HCQ_ERR_NOT_FOUND, "llm_gguf: key '%s' not found", key);
    *kv_out = &g->kvs[i];
    return HCQ_OK;
}

/* Any integer scalar as int64 range-checked into [lo, hi]. */
static enum hcq_status
kv_int(const struct llm_gguf_kv *kv, const char *key, int64_t lo, int64_t hi, int64_t *out)
{
    const uint8_t *r = kv->raw;
    int64_t v = 0;
    switch (kv->type) {
    case LLM_GGUF_UINT8:
        v = r[0];
        break;
    case LLM_GGUF_INT8:
        v = (int8_t)r[0];
        break;
    case LLM_GGUF_UINT16: {
        uint16_t x;
        memcpy(&x, r, 2);
        v = x;
        break;
    }
    case LLM_GGUF_INT16: {
        int16_t x;
        memcpy(&x, r, 2);
        v = x;
        break;
    }
    case LLM_GGUF_UINT32: {
        uint32_t x;
        memcpy(&x, r, 4);
        v = x;
        break;
    }
    case LLM_GGUF_INT32: {
        int32_t x;
        memcpy(&x, r, 4);
        v = x;
        break;
    }
    case LLM_GGUF_UINT64: {
        uint64_t x;
        memcpy(&x, r, 8);
        if (x > INT64_MAX)
            return hcq_err(HCQ_ERR_FORMAT, "llm_gguf: key '%s' = %llu: out of range", key,
                           (unsigned long long)x);
        v = (int64_t)x;
        break;
    }
    case LLM_GGUF_INT64:
        memcpy(&v, r, 8);
        break;
    default:
        return hcq_err(HCQ_ERR_FORMAT, "llm_gguf: key '%s' has type %u (expected an integer)", key, kv->type);
    }
    if (v < lo || v > hi)
        return hcq_err(HCQ_ERR_FORMAT, "llm_gguf: key '%s' = %lld: out of range [%lld, %lld]", key,
                       (long long)v, (long long)lo, (long long)hi);
    *out = v;
    return HCQ_OK;
}

enum hcq_status
llm_gguf_get_u32(const struct llm_gguf *g, const char *key, uint32_t *out)
{
    const struct llm_gguf_kv *kv = NULL;
    int64_t v = 0;
    enum hcq_status st = find_kv(g, key, &kv);
    if (st || (st = kv_int(kv, key, 0, UINT32_MAX, &v)))
        return st;
    *out = (uint32_t)v;
    return HCQ_OK;
}

enum hcq_status
llm_gguf_get_f32(const struct llm_gguf *g, const char *key, float *out)
{
    const struct llm_gguf_kv *kv = NULL;
    enum hcq_status st = find_kv(g, key, &kv);
    if (st)
        return st;
    if (kv->type == LLM_GGUF_FLOAT32) {
        memcpy(out, kv->raw, 4);
    } else if (kv->type == LLM_GGUF_FLOAT64) {
        double d;
        memcpy(&d, kv->raw, 8);
        *out = (float)d;
    } else {
        return hcq_err(HCQ_ERR_FORMAT, "llm_gguf: key '%s' has type %u (expected FLOAT32)", key, kv->type);
    }
    return HCQ_OK;
}

enum hcq_status
llm_gguf_get_bool(const struct llm_gguf *g, const char *key, bool *out)
{
    const struct llm_gguf_kv *kv = NULL;
    enum hcq_status st = find_kv(g, key, &kv);
    if (st)
        return st;
    if (kv->type != LLM_GGUF_BOOL)
        return hcq_err(HCQ_ERR_FORMAT, "llm_gguf: key '%s' has type %u (expected BOOL)", key, kv->type);
    *out = ((const uint8_t *)kv->raw)[0] != 0;
    return HCQ_OK;
}

enum hcq_status
llm_gguf_get_str(const struct llm_gguf *g, const char *key, struct llm_str *out)
{
    const struct llm_gguf_kv *kv = NULL;
    enum hcq_status st = find_kv(g, key, &kv);
    if (st)
        return st;
    if (kv->type != LLM_GGUF_STRING)
        return hcq_err(HCQ_ERR_FORMAT, "llm_gguf: key '%s' has type %u (expected STRING)", key, kv->type);
    uint64_t len;
    memcpy(&len, kv->raw, 8);
    out->ptr = (const char *)kv->raw + 8;
    out->len = len;
    return HCQ_OK;
}

enum hcq_status
llm_gguf_get_arr(const struct llm_gguf *g, const char *key, uint32_t *elem_type_out, uint64_t *count_out)
{
    const struct llm_gguf_kv *kv = NULL;
    enum hcq_status st = find_kv(g, key, &kv);
    if (st)
        return st;
    if (kv->type != LLM_GGUF_ARRAY)
        return hcq_err(HCQ_ERR_FORMAT, "llm_gguf: key '%s' has type %u (expected ARRAY)", key, kv->type);
    *elem_type_out = kv->arr_type;
    *count_out = kv->arr_count;
    return HCQ_OK;
}

struct llm_str
llm_gguf_arr_str(const struct llm_gguf *g, const char *key, uint64_t i)
{
    struct llm_str none = {"", 0};
    int64_t k = llm_gguf_find(g, key);
    if (k < 0 || !g->kvs[k].strs || i >= g->kvs[k].arr_count)
        return none;
    return g->kvs[k].strs[i];
}

const void *
llm_gguf_arr_data(const struct llm_gguf *g, const char *key)
{
    int64_t k = llm_gguf_find(g, key);
    if (k < 0 || g->kvs[k].type != LLM_GGUF_ARRAY)
        return NULL;
    return g->kvs[k].arr_data;
}
