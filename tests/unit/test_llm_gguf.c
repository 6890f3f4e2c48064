/* SPDX-License-Identifier: MIT */
/*
 * test_llm_gguf.c - GGUF writer -> reader round trips (every value type, arrays, tensors,
 * alignment), the real vocab files from llama.cpp re-written byte-identically, rejection
 * of malformed headers with the field named, and a deterministic fuzz smoke run: thousands
 * of mutations (bit flips, byte overwrites, random counts, truncations) of a valid file,
 * each parsed from an exactly-sized heap copy so ASan catches any out-of-bounds read.
 */
#include "harness.h"
#include "llm.h"

#include <stdlib.h>
#include <string.h>

/* A small valid GGUF image covering every value type and a few tensors. */
static enum hcq_status
make_image(void **img, size_t *n, float *f32_data, uint8_t *q8_data)
{
    struct llm_gguf_writer *w = NULL;
    enum hcq_status st = llm_gguf_writer_create(&w);
    if (st)
        return st;
    uint8_t u8 = 200;
    int8_t i8 = -100;
    uint16_t u16 = 60000;
    int16_t i16 = -30000;
    int64_t i64 = -5000000000ll;
    double f64 = 3.25;
    const char *strs[] = {"alpha", "", "g\xC3\xA4mma"};
    int32_t arr[5] = {1, -2, 3, -4, 5};
    uint64_t ne1[2] = {64, 3}, ne2[1] = {96};
    if ((st = llm_gguf_writer_set_val(w, "t.u8", LLM_GGUF_UINT8, &u8)) ||
        (st = llm_gguf_writer_set_val(w, "t.i8", LLM_GGUF_INT8, &i8)) ||
        (st = llm_gguf_writer_set_val(w, "t.u16", LLM_GGUF_UINT16, &u16)) ||
        (st = llm_gguf_writer_set_val(w, "t.i16", LLM_GGUF_INT16, &i16)) ||
        (st = llm_gguf_writer_set_u32(w, "t.u32", 4000000000u)) ||
        (st = llm_gguf_writer_set_i32(w, "t.i32", -7)) || (st = llm_gguf_writer_set_f32(w, "t.f32", 1.5f)) ||
        (st = llm_gguf_writer_set_bool(w, "t.bool", true)) ||
        (st = llm_gguf_writer_set_str(w, "t.str", "hello gguf")) ||
        (st = llm_gguf_writer_set_u64(w, "t.u64", 1ull << 40)) ||
        (st = llm_gguf_writer_set_val(w, "t.i64", LLM_GGUF_INT64, &i64)) ||
        (st = llm_gguf_writer_set_val(w, "t.f64", LLM_GGUF_FLOAT64, &f64)) ||
        (st = llm_gguf_writer_set_arr(w, "t.arr", LLM_GGUF_INT32, arr, 5)) ||
        (st = llm_gguf_writer_set_arr_str(w, "t.strs", strs, NULL, 3)) ||
        (st = llm_gguf_writer_add_tensor(w, "w.f32", LLM_TYPE_F32, 2, ne1, f32_data)) ||
        (st = llm_gguf_writer_add_tensor(w, "w.q8", LLM_TYPE_Q8_0, 1, ne2, q8_data)) ||
        (st = llm_gguf_writer_write_mem(w, img, n)))
        goto done;
done:
    llm_gguf_writer_destroy(w);
    return st;
}

TEST(roundtrip_all_types)
{
    void *img = NULL;
    size_t n = 0;
    struct llm_gguf *g = NULL;
    float f32[192];
    uint8_t q8[3 * 34];
    for (int i = 0; i < 192; i++)
        f32[i] = th_randf(-3, 3);
    for (int i = 0; i < (int)sizeof q8; i++)
        q8[i] = (uint8_t)th_rand();
    CHECK_OK(make_image(&img, &n, f32, q8));
    CHECK_OK(llm_gguf_parse(img, n, &g));
    CHECK(llm_gguf_version(g) == 3 && llm_gguf_alignment(g) == 32);
    uint32_t u;
    float f;
    bool b;
    struct llm_str s;
    CHECK_OK(llm_gguf_get_u32(g, "t.u8", &u));
    CHECK(u == 200);
    CHECK_OK(llm_gguf_get_u32(g, "t.u16", &u));
    CHECK(u == 60000);
    CHECK_OK(llm_gguf_get_u32(g, "t.u32", &u));
    CHECK(u == 4000000000u);
    CHECK(llm_gguf_get_u32(g, "t.i8", &u) == HCQ_ERR_FORMAT); /* negative: out of range */
    CHECK(llm_gguf_get_u32(g, "t.i64", &u) == HCQ_ERR_FORMAT);
    CHECK(llm_gguf_get_u32(g, "nope", &u) == HCQ_ERR_NOT_FOUND);
    CHECK_OK(llm_gguf_get_f32(g, "t.f32", &f));
    CHECK(f == 1.5f);
    CHECK_OK(llm_gguf_get_f32(g, "t.f64", &f));
    CHECK(f == 3.25f);
    CHECK_OK(llm_gguf_get_bool(g, "t.bool", &b));
    CHECK(b);
    CHECK_OK(llm_gguf_get_str(g, "t.str", &s));
    CHECK(s.len == 10 && !memcmp(s.ptr, "hello gguf", 10));
    CHECK(llm_gguf_get_str(g, "t.u32", &s) == HCQ_ERR_FORMAT);
    uint32_t et;
    uint64_t cnt;
    CHECK_OK(llm_gguf_get_arr(g, "t.arr", &et, &cnt));
    CHECK(et == LLM_GGUF_INT32 && cnt == 5);
    int32_t a4;
    memcpy(&a4, (const char *)llm_gguf_arr_data(g, "t.arr") + 12, 4);
    CHECK(a4 == -4);
    CHECK_OK(llm_gguf_get_arr(g, "t.strs", &et, &cnt));
    CHECK(et == LLM_GGUF_STRING && cnt == 3);
    s = llm_gguf_arr_str(g, "t.strs", 2);
    CHECK(s.len == 6 && !memcmp(s.ptr, "g\xC3\xA4mma", 6));
    CHECK(llm_gguf_arr_str(g, "t.strs", 1).len == 0);
    CHECK(llm_gguf_tensor_count(g) == 2);
    const struct llm_gguf_tensor *t1 = llm_gguf_tensor_find(g, "w.f32");
    const struct llm_gguf_tensor *t2 = llm_gguf_tensor_find(g, "w.q8");
    CHECK(t1 && t2 && !llm_gguf_tensor_find(g, "w.none"));
    CHECK(t1->n_dims == 2 && t1->ne[0] == 64 && t1->ne[1] == 3 && t1->ne[2] == 1 && t1->size_B == 768);
    CHECK(!memcmp(t1->data, f32, sizeof f32));
    CHECK(t2->type == LLM_TYPE_Q8_0 && t2->size_B == sizeof q8 && !memcmp(t2->data, q8, sizeof q8));
    CHECK((llm_gguf_data_offset(g) + t2->offset_B) % 32 == 0);
    /* version 2 has the same layout (64-bit counts): the reader accepts it too */
    llm_gguf_destroy(g);
    g = NULL;
    ((uint8_t *)img)[4] = 2;
    CHECK_OK(llm_gguf_parse(img, n, &g));
    CHECK(llm_gguf_version(g) == 2 && llm_gguf_tensor_count(g) == 2);
done:
    llm_gguf_destroy(g);
    free(img);
}

/* Re-write a real vocab file (llama.cpp's) through copy_kv: the kv section must match. */
TEST(rewrite_real_vocab)
{
    struct llm_gguf *g = NULL, *g2 = NULL;
    struct llm_gguf_writer *w = NULL;
    void *img = NULL;
    size_t n;
    CHECK_OK(llm_gguf_open("tests/data/tokenizers/ggml-vocab-llama-spm.gguf", &g));
    CHECK(llm_gguf_kv_count(g) > 5);
    CHECK_OK(llm_gguf_writer_create(&w));
    for (uint64_t i = 0; i < llm_gguf_kv_count(g); i++)
        CHECK_OK(llm_gguf_writer_copy_kv(w, g, i));
    CHECK_OK(llm_gguf_writer_write_mem(w, &img, &n));
    CHECK_OK(llm_gguf_parse(img, n, &g2));
    for (uint64_t i = 0; i < llm_gguf_kv_count(g); i++) {
        struct llm_str k = llm_gguf_kv_key(g, i);
        char key[128];
        snprintf(key, sizeof key, "%.*s", (int)k.len, k.ptr);
        int64_t j = llm_gguf_find(g2, key);
        CHECKF(j >= 0, "key %s lost", key);
        uint64_t s1, s2;
        const void *r1 = llm_gguf_kv_raw(g, i, &s1), *r2 = llm_gguf_kv_raw(g2, (uint64_t)j, &s2);
        CHECKF(s1 == s2 && !memcmp(r1, r2, s1), "key %s differs", key);
    }
done:
    llm_gguf_destroy(g2);
    llm_gguf_destroy(g);
    llm_gguf_writer_destroy(w);
    free(img);
}

static bool
parse_fails_with(struct th *t, const void *img, size_t n, const char *needle)
{
    struct llm_gguf *g = NULL;
    enum hcq_status st = llm_gguf_parse(img, n, &g);
    llm_gguf_destroy(g);
    if (st != HCQ_ERR_FORMAT || !strstr(hcq_last_error(), needle)) {
        th_fail(t, __FILE__, __LINE__, "expected FORMAT error naming '%s', got %d '%s'", needle, st,
                hcq_last_error());
        return false;
    }
    return true;
}

TEST(malformed_named)
{
    void *img = NULL;
    size_t n;
    float f32[192] = {0};
    uint8_t q8[102] = {0};
    uint8_t *c = NULL;
    CHECK_OK(make_image(&img, &n, f32, q8));
    c = malloc(n);
    CHECK(c);
    memcpy(c, img, n);
    c[0] = 'X';
    CHECK(parse_fails_with(t, c, n, "magic"));
    memcpy(c, img, n);
    c[4] = 7;
    CHECK(parse_fails_with(t, c, n, "version"));
    memcpy(c, img, n);
    memset(c + 16, 0xFF, 8); /* kv_count */
    CHECK(parse_fails_with(t, c, n, "kv_count"));
    memcpy(c, img, n);
    memset(c + 8, 0x7F, 8); /* tensor_count */
    CHECK(parse_fails_with(t, c, n, "tensor_count"));
    CHECK(parse_fails_with(t, img, 10, "tensor_count"));
    CHECK(parse_fails_with(t, img, n - 40, "beyond"));
    /* first key length: huge */
    memcpy(c, img, n);
    memset(c + 24, 0xEE, 8);
    CHECK(parse_fails_with(t, c, n, "kv key"));
done:
    free(c);
    free(img);
}

/* Parse a mutated image from an exact-size heap copy; on success, touch every byte the
 * parser handed out (keys, strings, tensor data). */
static enum hcq_status
parse_touch(const uint8_t *src, size_t n, uint64_t *sum)
{
    uint8_t *c = malloc(n ? n : 1);
    memcpy(c, src, n);
    struct llm_gguf *g = NULL;
    enum hcq_status st = llm_gguf_parse(c, n, &g);
    if (!st) {
        for (uint64_t i = 0; i < llm_gguf_kv_count(g); i++) {
            struct llm_str k = llm_gguf_kv_key(g, i);
            for (uint64_t j = 0; j < k.len; j++)
                *sum += (uint8_t)k.ptr[j];
            uint64_t rs;
            const uint8_t *r = llm_gguf_kv_raw(g, i, &rs);
            for (uint64_t j = 0; j < rs; j++)
                *sum += r[j];
        }
        struct llm_str s;
        if (!llm_gguf_get_str(g, "t.str", &s))
            for (uint64_t j = 0; j < s.len; j++)
                *sum += (uint8_t)s.ptr[j];
        for (uint64_t i = 0; i < 3; i++) {
            s = llm_gguf_arr_str(g, "t.strs", i);
            for (uint64_t j = 0; j < s.len; j++)
                *sum += (uint8_t)s.ptr[j];
        }
        for (uint64_t i = 0; i < llm_gguf_tensor_count(g); i++) {
            const struct llm_gguf_tensor *tt = llm_gguf_tensor_at(g, i);
            for (uint64_t j = 0; j < tt->size_B; j++)
                *sum += ((const uint8_t *)tt->data)[j];
        }
    }
    llm_gguf_destroy(g);
    free(c);
    return st;
}

TEST(fuzz_smoke)
{
    void *img = NULL;
    size_t n;
    float f32[192];
    uint8_t q8[102];
    uint8_t *m = NULL;
    for (int i = 0; i < 192; i++)
        f32[i] = (float)i;
    memset(q8, 3, sizeof q8);
    CHECK_OK(make_image(&img, &n, f32, q8));
    m = malloc(n);
    CHECK(m);
    uint64_t rng = 0x1234567ull, sum = 0;
    int ok = 0, bad = 0, other = 0;
    for (int it = 0; it < 6000; it++) {
        memcpy(m, img, n);
        size_t len = n;
        int kind = it % 5, muts = 1 + (int)((rng >> 7) % 4);
        for (int k = 0; k < muts; k++) {
            rng = rng * 6364136223846793005ull + 1442695040888963407ull;
            size_t at = (size_t)(rng >> 33) % n;
            switch (kind) {
            case 0:
                m[at] ^= (uint8_t)(1u << ((rng >> 20) & 7));
                break; /* bit flip */
            case 1:
                m[at] = (uint8_t)(rng >> 40);
                break; /* byte */
            case 2:
                if (at + 8 <= n)
                    memcpy(m + at, &rng, 8);
                break; /* random count */
            case 3:
                if (at + 8 <= n) {
                    uint64_t v = (rng >> 50);
                    memcpy(m + at, &v, 8);
                }
                break; /* small count */
            default:
                len = at;
                break; /* truncation */
            }
        }
        enum hcq_status st = parse_touch(m, len, &sum);
        if (st == HCQ_OK)
            ok++;
        else if (st == HCQ_ERR_FORMAT)
            bad++;
        else
            other++;
    }
    printf("    fuzz smoke: %d parsed, %d rejected, %d other (checksum %llu)\n", ok, bad, other,
           (unsigned long long)sum);
    CHECKF(other == 0, "%d mutations gave a status other than OK/FORMAT", other);
    CHECK(ok > 0 && bad > 0);
done:
    free(m);
    free(img);
}

int
main(int argc, char **argv)
{
    static const struct th_case cases[] = {
        TH_CASE(roundtrip_all_types),
        TH_CASE(rewrite_real_vocab),
        TH_CASE(malformed_named),
        TH_CASE(fuzz_smoke),
    };
    return th_run("llm_gguf", NULL, cases, TH_COUNT(cases), argc - 1, argv + 1) ? 1 : 0;
}
