/* SPDX-License-Identifier: MIT */
/*
 * test_ops.c - unit tests of src/ops without a device: the f16/bf16 conversions
 * against an independent reference (search for the nearest representable value in
 * double, ties to even), the kernel registry, and the twins' fault reporting.
 * Kernels on devices are covered by the HCQ suite (tests/hcq/hcq_suite_kernels.c).
 */
#include "harness.h"
#include "hcq_kernel.h"
#include "k_params.h"
#include "ops.h"
#include "ops_half.h"
#include "ops_tmap.h"

#include <math.h>
#include <string.h>

static float
f32_of(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* |f16 pattern h| (h < 0x8000) as a double, 0x7c00 read as 65536 (IEEE rounds as if the
 * exponent were unbounded, then overflows). */
static double
f16_mag(uint16_t h)
{
    int e = h >> 10, m = h & 0x3ff;
    if (e == 0)
        return ldexp(m, -24);
    return h == 0x7c00 ? 65536.0 : ldexp(1024 + m, e - 25);
}

static uint16_t
ref_f16(float x)
{
    uint16_t sign = signbit(x) ? 0x8000 : 0, lo = 0, hi = 0x7bff;
    double a = fabs((double)x);
    if (a >= 65536.0)
        return sign | 0x7c00;
    while (lo < hi) {
        uint16_t mid = (uint16_t)((lo + hi + 1) / 2);
        if (f16_mag(mid) <= a)
            lo = mid;
        else
            hi = (uint16_t)(mid - 1);
    }
    double d0 = a - f16_mag(lo), d1 = f16_mag((uint16_t)(lo + 1)) - a;
    return sign | ((d0 < d1 || (d0 == d1 && !(lo & 1))) ? lo : (uint16_t)(lo + 1));
}

static uint16_t
ref_bf16(float x)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000), t = (uint16_t)((u & 0x7fffffff) >> 16);
    if (t >= 0x7f80)
        return sign | 0x7f80;
    double a = fabs((double)x), lo = f32_of((uint32_t)t << 16);
    double hi = t + 1 == 0x7f80 ? ldexp(1.0, 128) : f32_of((uint32_t)(t + 1) << 16);
    double d0 = a - lo, d1 = hi - a;
    return sign | ((d0 < d1 || (d0 == d1 && !(t & 1))) ? t : (uint16_t)(t + 1));
}

/* Every f16 pattern widens exactly and narrows back to itself (NaN stays NaN). */
TEST(f16_round_trip_all)
{
    for (uint32_t h = 0; h < 65536; h++) {
        float f = ops_half_f16_to_f32((uint16_t)h);
        bool nan = ((h >> 10) & 0x1f) == 0x1f && (h & 0x3ff);
        if (nan) {
            CHECKF(isnan(f) && isnan(ops_half_f16_to_f32(ops_half_f32_to_f16(f))), "NaN 0x%04x lost", h);
            continue;
        }
        double want = f16_mag(h & 0x7fff) * ((h & 0x8000) ? -1 : 1);
        if ((h & 0x7fff) == 0x7c00)
            want = (h & 0x8000) ? -INFINITY : INFINITY;
        CHECKF((double)f == want, "f16 0x%04x -> %a (expected %a)", h, (double)f, want);
        CHECKF(ops_half_f32_to_f16(f) == h, "f16 0x%04x -> %a -> 0x%04x", h, (double)f,
               ops_half_f32_to_f16(f));
    }
done:;
}

/* 2^22 f32 patterns (a stride through all 2^32, offset by the seed) plus every tie. */
TEST(f32_to_f16_vs_reference)
{
    const uint32_t stride = 1021, start = (uint32_t)th_rand() % stride;
    for (uint64_t u = start; u <= 0xffffffffull; u += stride) {
        float x = f32_of((uint32_t)u);
        uint16_t got = ops_half_f32_to_f16(x);
        if (isnan(x)) {
            CHECKF(isnan(ops_half_f16_to_f32(got)), "NaN 0x%08x -> 0x%04x", (uint32_t)u, got);
            continue;
        }
        CHECKF(got == ref_f16(x), "%a -> 0x%04x (expected 0x%04x)", (double)x, got, ref_f16(x));
    }
    for (uint16_t h = 0; h < 0x7c00; h++) { /* halfway between h and h + 1, both signs */
        float x = (float)((f16_mag(h) + f16_mag((uint16_t)(h + 1))) / 2);
        CHECKF(ops_half_f32_to_f16(x) == ref_f16(x), "tie %a -> 0x%04x (expected 0x%04x)", (double)x,
               ops_half_f32_to_f16(x), ref_f16(x));
        CHECK(ops_half_f32_to_f16(-x) == ref_f16(-x));
    }
done:;
}

TEST(f32_to_bf16_vs_reference)
{
    const uint32_t stride = 1021, start = (uint32_t)th_rand() % stride;
    for (uint64_t u = start; u <= 0xffffffffull; u += stride) {
        float x = f32_of((uint32_t)u);
        uint16_t got = ops_half_f32_to_bf16(x);
        if (isnan(x)) {
            CHECKF(isnan(ops_half_bf16_to_f32(got)), "NaN 0x%08x -> 0x%04x", (uint32_t)u, got);
            continue;
        }
        CHECKF(got == ref_bf16(x), "%a -> 0x%04x (expected 0x%04x)", (double)x, got, ref_bf16(x));
        CHECK(ops_half_bf16_to_f32(got) == f32_of((uint32_t)got << 16));
    }
    for (uint32_t top = 0; top < 0x7f80; top++) { /* every tie */
        float x = f32_of(top << 16 | 0x8000);
        CHECKF(ops_half_f32_to_bf16(x) == ref_bf16(x), "tie %a -> 0x%04x (expected 0x%04x)", (double)x,
               ops_half_f32_to_bf16(x), ref_bf16(x));
    }
done:;
}

/* Registry: names unique and findable, descriptors complete, unknown names NULL.
 * Registering again changes nothing. */
TEST(registry)
{
    uint32_t n = 0, again = 0;
    for (; hcq_kernel_at(n); n++) {
        const struct hcq_kernel_desc *d = hcq_kernel_at(n);
        CHECKF(d->name && d->module && d->twin && d->params_B, "entry %u incomplete", n);
        CHECKF(hcq_kernel_find(d->name) == d, "%s: not found by name, or a duplicate", d->name);
    }
    CHECKF(n >= 17, "%u kernels (expected the 17 built-in ones at least)", n);
    CHECK(hcq_kernel_find("k_fill_u32")->params_B == sizeof(struct k_fill_u32_params));
    CHECK(hcq_kernel_find("k_no_such") == NULL && hcq_kernel_find(NULL) == NULL);
    ops_kernels_register();
    while (hcq_kernel_at(again))
        again++;
    CHECKF(again == n, "%u kernels after registering again (%u before)", again, n);
    CHECK(!hcq_kernel_register(NULL));
done:;
}

/* Host memory standing in for one buffer at a fake device address. */
struct fake_mem {
    uint64_t va, size_B;
    void *host;
};

static void *
fake_ptr(void *ctx, uint64_t va, uint64_t size_B)
{
    struct fake_mem *m = ctx;
    if (va < m->va || va - m->va > m->size_B || size_B > m->size_B - (va - m->va))
        return NULL;
    return (uint8_t *)m->host + (va - m->va);
}

/* A twin runs over its whole range, and reports (instead of touching) a bad range:
 * one element past the end, and a count whose byte size overflows 64 bits. */
TEST(twin_faults)
{
    uint32_t mem[64];
    struct fake_mem m = {0x100000, sizeof mem, mem};
    struct k_fill_u32_params p = {.dst_va = 0x100000, .n = 64, .value = 7};
    struct hcq_twin_launch l = {
        .params = &p, .grid = {1, 1, 1}, .block = {1, 1, 1}, .ptr = fake_ptr, .ctx = &m};
    const struct hcq_kernel_desc *d = hcq_kernel_find("k_fill_u32");
    CHECK(d);
    memset(mem, 0xAB, sizeof mem);
    d->twin(&l);
    CHECK(!l.fault);
    for (int i = 0; i < 64; i++)
        CHECK(mem[i] == 7);
    p.n = 65;
    p.value = 9;
    d->twin(&l);
    CHECK(l.fault && l.fault_va == 0x100000 && mem[0] == 7);
    l.fault = false;
    p.n = UINT64_MAX / 2;
    d->twin(&l);
    CHECK(l.fault && mem[0] == 7);
done:;
}

/* ==== Tensor maps (k_tmap.h, through ops_tmap_encode) against the CUDA driver's own encodings ==== */

/* cuTensorMapEncodeTiled's output on H100, driver 580, 2026-11-26: words 0-9 of each case, words 10-15 were
 * zero. */
static const struct {
    const char *name;
    uint64_t q[10];
} tmap_ref[] = {
    {"base",
     {0x00007f1234560000ull, 0x0000020000006310ull, 0x0000000000000000ull, 0x0000000000000000ull,
      0x000007ff00000fffull, 0x0000000000000000ull, 0x3f00000000000000ull, 0x000000000000007full,
      0x0000000000004000ull, 0x0000000000000400ull}},
    {"addr=1<<56",
     {0x0100000000000000ull, 0x0000020000006310ull, 0x0000000000000000ull, 0x0000000000000000ull,
      0x000007ff00000fffull, 0x0000000000000000ull, 0x3f00000000000000ull, 0x000000000000007full,
      0x0000000000004000ull, 0x0000000000000400ull}},
    {"dim0=2^32",
     {0x00007f1234560000ull, 0x0000020000006310ull, 0x0000000000000000ull, 0x0000000000000000ull,
      0x000007ffffffffffull, 0x0000000000000000ull, 0x3f00000000000000ull, 0x000000000000007full,
      0x0000000000004000ull, 0x0000000000000400ull}},
    {"dim1=65536",
     {0x00007f1234560000ull, 0x0000020000006310ull, 0x0000000000000000ull, 0x0000000000000000ull,
      0x0000ffff00000fffull, 0x0000000000000000ull, 0x3f00000000000000ull, 0x000000000000007full,
      0x0000000000004000ull, 0x0000000000000400ull}},
    {"stride=2^40-16",
     {0x00007f1234560000ull, 0xffffffff00006310ull, 0x0000000000000000ull, 0x0000000f00000000ull,
      0x000007ff00000fffull, 0x0000000000000000ull, 0x3f00000000000000ull, 0x000000000000007full,
      0x0000000000004000ull, 0x0000000000000400ull}},
    {"box0=8",
     {0x00007f1234560000ull, 0x0000020000006310ull, 0x0000000000000000ull, 0x0000000000000000ull,
      0x000007ff00000fffull, 0x0000000000000000ull, 0x0700000000000000ull, 0x000000000000007full,
      0x0000000000000800ull, 0x0000000000000400ull}},
    {"box1=255",
     {0x00007f1234560000ull, 0x0000020000006310ull, 0x0000000000000000ull, 0x0000000000000000ull,
      0x000007ff00000fffull, 0x0000000000000000ull, 0x3f00000000000000ull, 0x00000000000000feull,
      0x0000000000007f80ull, 0x0000000000000400ull}},
    {"estr0=2",
     {0x00007f1234560000ull, 0x0000020000006310ull, 0x0000000000000000ull, 0x0000000000000000ull,
      0x000007ff00000fffull, 0x0000000000000000ull, 0x3f00000100000000ull, 0x000000000000007full,
      0x0000000000002000ull, 0x0000000000000400ull}},
    {"estr1=3",
     {0x00007f1234560000ull, 0x0000020000006310ull, 0x0000000000000000ull, 0x0000000000000000ull,
      0x000007ff00000fffull, 0x0000000000000000ull, 0x3f00001000000000ull, 0x000000000000007full,
      0x0000000000001500ull, 0x0000000000000400ull}},
    {"dt=u8",
     {0x00007f1234560000ull, 0x0000020000006010ull, 0x0000000000000000ull, 0x0000000000000000ull,
      0x000007ff00000fffull, 0x0000000000000000ull, 0x3f00000000000000ull, 0x000000000000007full,
      0x0000000000002000ull, 0x0000000000000400ull}},
    {"dt=u16",
     {0x00007f1234560000ull, 0x0000020000006090ull, 0x0000000000000000ull, 0x0000000000000000ull,
      0x000007ff00000fffull, 0x0000000000000000ull, 0x3f00000000000000ull, 0x000000000000007full,
      0x0000000000004000ull, 0x0000000000000400ull}},
    {"dt=bf16",
     {0x00007f1234560000ull, 0x0000020000006510ull, 0x0000000000000000ull, 0x0000000000000000ull,
      0x000007ff00000fffull, 0x0000000000000000ull, 0x3f00000000000000ull, 0x000000000000007full,
      0x0000000000004000ull, 0x0000000000000400ull}},
    {"sw=none",
     {0x00007f1234560000ull, 0x0000020000000310ull, 0x0000000000000000ull, 0x0000000000000000ull,
      0x000007ff00000fffull, 0x0000000000000000ull, 0x3f00000000000000ull, 0x000000000000007full,
      0x0000000000004000ull, 0x0000000000000010ull}},
    {"sw=32",
     {0x00007f1234560000ull, 0x0000020000002310ull, 0x0000000000000000ull, 0x0000000000000000ull,
      0x000007ff00000fffull, 0x0000000000000000ull, 0x0f00000000000000ull, 0x000000000000007full,
      0x0000000000001000ull, 0x0000000000000100ull}},
    {"sw=64",
     {0x00007f1234560000ull, 0x0000020000004310ull, 0x0000000000000000ull, 0x0000000000000000ull,
      0x000007ff00000fffull, 0x0000000000000000ull, 0x1f00000000000000ull, 0x000000000000007full,
      0x0000000000002000ull, 0x0000000000000200ull}},
    {"l2=256",
     {0x00007f1234560000ull, 0x0000020000066310ull, 0x0000000000000000ull, 0x0000000000000000ull,
      0x000007ff00000fffull, 0x0000000000000000ull, 0x3f00000000000000ull, 0x000000000000007full,
      0x0000000000004000ull, 0x0000000000000400ull}},
    {"oob=nan",
     {0x00007f1234560000ull, 0x000002000000e310ull, 0x0000000000000000ull, 0x0000000000000000ull,
      0x000007ff00000fffull, 0x0000000000000000ull, 0x3f00000000000000ull, 0x000000000000007full,
      0x0000000000004000ull, 0x0000000000000400ull}},
    {"rank1",
     {0x00007f1234560000ull, 0x0000000000000300ull, 0x0000000000000000ull, 0x0000000000000000ull,
      0x0000000000000fffull, 0x0000000000000000ull, 0x3f00000000000000ull, 0x0000000000000000ull,
      0x0000000000000080ull, 0x0000000000000010ull}},
    {"rank3",
     {0x00007f1234560000ull, 0x0000020000006320ull, 0x0000000000100000ull, 0x0000000000000000ull,
      0x000007ff00000fffull, 0x0000000000000004ull, 0x3f00000000000000ull, 0x000000000000017full,
      0x0000000000008000ull, 0x0000000000000400ull}},
    {"rank5",
     {0x00007f1234560000ull, 0x0000020000006340ull, 0x0050000000100000ull, 0x0000000001e00000ull,
      0x000007ff00000fffull, 0x0000000500000004ull, 0x3f00100000000006ull, 0x000000000302017full,
      0x0000000000030000ull, 0x0000000000000400ull}},
    {"gemm-A 8192",
     {0x00007f1234560000ull, 0x0000040000006310ull, 0x0000000000000000ull, 0x0000000000000000ull,
      0x00001fff00001fffull, 0x0000000000000000ull, 0x3f00000000000000ull, 0x000000000000007full,
      0x0000000000004000ull, 0x0000000000000400ull}},
    {"gemm-B n256",
     {0x00007f1234560000ull, 0x0000020000006310ull, 0x0000000000000000ull, 0x0000000000000000ull,
      0x000007ff00000fffull, 0x0000000000000000ull, 0x3f00000000000000ull, 0x00000000000000ffull,
      0x0000000000008000ull, 0x0000000000000400ull}},
};

TEST(tmap_matches_cuda_driver)
{
    for (uint32_t i = 0; i < sizeof tmap_ref / sizeof tmap_ref[0]; i++) {
        /* tmap_scan.c's base case: f16 4096 x 2048, row stride 8192 B, box 64 x 128, 128 B swizzle */
        struct k_tmap_desc d = {.type = K_TMAP_F16,
                                .rank = 2,
                                .va = 0x7f1234560000ull,
                                .dim = {4096, 2048, 1, 1, 1},
                                .stride_B = {8192, 0, 0, 0},
                                .box = {64, 128, 1, 1, 1},
                                .elem_stride = {1, 1, 1, 1, 1},
                                .swizzle = K_TMAP_SWIZZLE_128B};
        switch (i) {
        case 1:
            d.va = 1ull << 56;
            break;
        case 2:
            d.dim[0] = 1ull << 32;
            break;
        case 3:
            d.dim[1] = 65536;
            break;
        case 4:
            d.stride_B[0] = (1ull << 40) - 16;
            break;
        case 5:
            d.box[0] = 8;
            break;
        case 6:
            d.box[1] = 255;
            break;
        case 7:
            d.elem_stride[0] = 2;
            break;
        case 8:
            d.elem_stride[1] = 3;
            break;
        case 9:
            d.type = K_TMAP_U8;
            break;
        case 10:
            d.type = K_TMAP_U16;
            break;
        case 11:
            d.type = K_TMAP_BF16;
            break;
        case 12:
            d.swizzle = K_TMAP_SWIZZLE_NONE;
            break;
        case 13:
            d.swizzle = K_TMAP_SWIZZLE_32B, d.box[0] = 16;
            break;
        case 14:
            d.swizzle = K_TMAP_SWIZZLE_64B, d.box[0] = 32;
            break;
        case 15:
            d.l2_promotion = 3;
            break;
        case 16:
            d.oob_nan = true;
            break;
        case 17:
            d.rank = 1, d.swizzle = K_TMAP_SWIZZLE_NONE;
            break;
        case 18:
            d.rank = 3, d.dim[2] = 5, d.stride_B[1] = 8192ull * 2048, d.box[2] = 2;
            break;
        case 19:
            d.rank = 5, d.dim[2] = 5, d.dim[3] = 6, d.dim[4] = 7, d.stride_B[1] = 8192ull * 2048,
            d.stride_B[2] = 8192ull * 2048 * 5, d.stride_B[3] = 8192ull * 2048 * 30, d.box[2] = 2,
            d.box[3] = 3, d.box[4] = 4, d.elem_stride[4] = 2;
            break;
        case 20:
            d.dim[0] = 8192, d.dim[1] = 8192, d.stride_B[0] = 16384;
            break;
        case 21:
            d.box[1] = 256;
            break;
        default:
            break;
        }
        uint64_t q[16];
        memset(q, 0xAB, sizeof q);
        CHECKF(ops_tmap_encode(&d, q) == HCQ_OK, "%s: %s", tmap_ref[i].name, hcq_last_error());
        for (uint32_t w = 0; w < 16; w++)
            CHECKF(q[w] == (w < 10 ? tmap_ref[i].q[w] : 0), "%s: word %u = 0x%016llx (the driver: 0x%016llx)",
                   tmap_ref[i].name, w, (unsigned long long)q[w],
                   (unsigned long long)(w < 10 ? tmap_ref[i].q[w] : 0));
    }
    /* what the driver refused in the same run: a misaligned address, a 256-byte row under the
     * 128-byte swizzle (f32 x 64); and what the encoder does not know */
    struct k_tmap_desc d = {.type = K_TMAP_F16,
                            .rank = 2,
                            .va = 0x7f1234560008ull,
                            .dim = {4096, 2048},
                            .stride_B = {8192},
                            .box = {64, 128},
                            .swizzle = K_TMAP_SWIZZLE_128B};
    uint64_t q[16];
    CHECK(ops_tmap_encode(&d, q) == HCQ_ERR_INVALID);
    d.va += 8, d.type = K_TMAP_F32;
    CHECK(ops_tmap_encode(&d, q) == HCQ_ERR_INVALID);
    d.type = K_TMAP_F16, d.box[1] = 257;
    CHECK(ops_tmap_encode(&d, q) == HCQ_ERR_INVALID);
    d.box[1] = 128, d.stride_B[0] = 8200;
    CHECK(ops_tmap_encode(&d, q) == HCQ_ERR_INVALID);
    d.stride_B[0] = 8192, d.rank = 3, d.dim[2] = 2, d.box[2] = 1, d.stride_B[1] = 1ull << 36;
    CHECK(ops_tmap_encode(&d, q) == HCQ_ERR_UNSUPPORTED);
    d.rank = 6;
    CHECK(ops_tmap_encode(&d, q) == HCQ_ERR_INVALID);
    /* the GEMM launcher's maps: a product with k = 0 (no k-step, C = 0) still gets valid maps
     * (size 1, stride 16), and real shapes their own dimensions */
    struct k_gemm_params gp = {.c_va = 0x10000, .a_va = 0x20000, .b_va = 0x40000, .m = 300, .n = 40, .k = 0};
    struct k_gemm_tma_params tp;
    for (int nt = 0; nt < 2; nt++) {
        CHECK_OK(ops_gemm_tma_params(&tp, &gp, nt, nt, K_GEMM_WG_BN));
        CHECK(tp.tmap_a[4] == (299ull << 32) && (tp.tmap_a[1] >> 32) == 1 && tp.g.k == 0);
    }
    gp.k = 72;
    CHECK_OK(ops_gemm_tma_params(&tp, &gp, false, true, K_GEMM_WG_BN));
    CHECK(tp.tmap_a[0] == 0x20000 && tp.tmap_a[4] == (71 | 299ull << 32) && (tp.tmap_a[1] >> 32) == 144 / 16);
    CHECK(tp.tmap_b[0] == 0x40000 && tp.tmap_b[4] == (71 | 39ull << 32) && (tp.tmap_b[7] & 0xFF) == 255);
    /* the 128 x 128 build's B box; a tile width no kernel has is refused */
    CHECK_OK(ops_gemm_tma_params(&tp, &gp, false, true, K_GEMM_WG128_BN));
    CHECK((tp.tmap_b[7] & 0xFF) == 127 && tp.tmap_b[8] == 64 * 128 * 2);
    CHECK(ops_gemm_tma_params(&tp, &gp, false, true, 192) == HCQ_ERR_INVALID);
done:;
}

int
main(int argc, char **argv)
{
    /* This program opens no device, so nothing links the registration in for it (src/ops
     * registers at load once linked: ops_registry.c); naming it does both. */
    ops_kernels_register();
    static const struct th_case cases[] = {
        TH_CASE(f16_round_trip_all),
        TH_CASE(f32_to_f16_vs_reference),
        TH_CASE(f32_to_bf16_vs_reference),
        TH_CASE(registry),
        TH_CASE(twin_faults),
        TH_CASE(tmap_matches_cuda_driver),
    };
    return th_run("ops", NULL, cases, TH_COUNT(cases), argc - 1, argv + 1) ? 1 : 0;
}
