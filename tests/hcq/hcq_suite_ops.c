/* SPDX-License-Identifier: MIT */
/*
 * hcq_suite_ops.c - the HCQ suite's tests of the selection/comparison/integer kernels
 * (k_select.cu) and the max/min reductions (k_minmax.cu) on the device under test. Every
 * case runs the kernel on the device AND its CPU twin on host copies, and checks both
 * against a reference computed here (double precision or exact integer arithmetic), on
 * fresh random inputs mixed with special values (NaN, +-Inf, +-0, equal operands), with
 * zero-element and one-element sizes, the output poisoned and a poisoned guard after it.
 */
#include "hcq_suite.h"
#include "k_select_params.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define OGUARD_B 256

/* Runs c on dev into out_dev and its twin into out_twin (out_B bytes each). */
bool
suite_op_run(struct th *t, struct hcq_device *dev, const struct op_case *c, uint8_t *out_dev,
             uint8_t *out_twin)
{
    bool ok = false;
    struct hcq_queue *q = NULL;
    struct hcq_program *prog = NULL;
    struct hcq_buf *in[4] = {0}, *out = NULL;
    uint8_t *got = NULL, *host_in[4] = {0}, params[128];
    uint64_t in_va[4] = {0};
    CHECK(c->params_B <= sizeof params);
    CHECK(got = malloc(c->out_B + OGUARD_B));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    CHECK_OK(hcq_program_load(dev, c->kernel, &prog));
    for (int k = 0; k < c->nin; k++) {
        /* zero-size inputs still get a buffer: a kernel of n = 0 must not touch it */
        uint64_t b = c->in_B[k] ? c->in_B[k] : 16;
        CHECK_OK(hcq_buf_alloc(dev, b, HCQ_MEM_DEVICE, &in[k]));
        if (c->in_B[k])
            CHECK_OK(hcq_buf_write(in[k], 0, c->in[k], c->in_B[k]));
        in_va[k] = hcq_buf_va(in[k]);
    }
    CHECK_OK(suite_buf(dev, c->out_B + OGUARD_B, HCQ_MEM_DEVICE, NULL, SUITE_POISON, &out));
    c->mk(params, in_va, hcq_buf_va(out), c->ctx);
    const uint32_t grid[3] = {c->grid, 1, 1}, block[3] = {c->block, 1, 1};
    CHECK_OK(hcq_queue_launch(q, prog, grid, block, params, c->params_B));
    CHECK_OK(hcq_queue_finish(q, SUITE_TIMEOUT_NS));
    CHECK_OK(hcq_buf_read(out, 0, got, c->out_B + OGUARD_B));
    for (uint64_t i = c->out_B; i < c->out_B + OGUARD_B; i++)
        CHECKF(got[i] == SUITE_POISON, "%s wrote past its output (guard byte %llu = 0x%02x)", c->kernel,
               (unsigned long long)(i - c->out_B), got[i]);
    memcpy(out_dev, got, c->out_B);
    /* the twin, on host copies at the same addresses */
    struct suite_mirror m = {0};
    for (int k = 0; k < c->nin; k++) {
        CHECK(host_in[k] = malloc(c->in_B[k] ? c->in_B[k] : 16));
        if (c->in_B[k])
            memcpy(host_in[k], c->in[k], c->in_B[k]);
        suite_mirror_add(&m, in_va[k], c->in_B[k] ? c->in_B[k] : 16, host_in[k]);
    }
    if (!out_twin) { /* the caller checks the device against its own reference only */
        ok = true;
        goto done;
    }
    memset(out_twin, SUITE_POISON, c->out_B);
    suite_mirror_add(&m, hcq_buf_va(out), c->out_B, out_twin);
    CHECKF(suite_twin_run(c->kernel, params, grid, block, &m), "%s: twin missing or faulted", c->kernel);
    ok = true;
done:
    for (int k = 0; k < 4; k++) {
        free(host_in[k]);
        hcq_buf_free(in[k]);
    }
    hcq_buf_free(out);
    hcq_program_destroy(prog);
    hcq_queue_destroy(q);
    free(got);
    return ok;
}

static uint32_t
flat_grid(uint64_t n)
{
    uint64_t g = (n + 255) / 256;
    return g == 0 ? 1 : g > 65535 ? 65535 : (uint32_t)g;
}

/* Sizes every elementwise op runs: zero, one, and a random non-power-of-two. */
static uint64_t
op_size(int i)
{
    return i == 0 ? 0 : i == 1 ? 1 : 1 + th_rand() % 70000;
}

/* f32 inputs: random magnitudes over many binades, with specials mixed in. */
static void
rand_f32_special(float *v, uint64_t n)
{
    static const float special[] = {0.0f, -0.0f, 1.0f, -1.0f, INFINITY, -INFINITY,
                                    NAN,  0.5f,  2.0f, -2.0f, 3.0f};
    for (uint64_t i = 0; i < n; i++) {
        if (th_rand() % 8 == 0)
            v[i] = special[th_rand() % (sizeof special / sizeof special[0])];
        else
            v[i] = ldexpf(th_randf(-1.0f, 1.0f), (int)(th_rand() % 20) - 10);
    }
}

static bool
f32_same(float a, float b)
{
    return (isnan(a) && isnan(b)) || !memcmp(&a, &b, 4);
}

/* ulp distance of two finite floats (ordered integer representation). */
static uint64_t
f32_ulps(float a, float b)
{
    int32_t ia, ib;
    memcpy(&ia, &a, 4);
    memcpy(&ib, &b, 4);
    int64_t oa = ia < 0 ? (int64_t)INT32_MIN - ia : ia, ob = ib < 0 ? (int64_t)INT32_MIN - ib : ib;
    return (uint64_t)(oa > ob ? oa - ob : ob - oa);
}

/* ==== where ==== */

static void
mk_where(void *params, const uint64_t *in_va, uint64_t out_va, const void *ctx)
{
    struct k_where_f32_params p = {
        .y_va = out_va, .c_va = in_va[0], .a_va = in_va[1], .b_va = in_va[2], .n = *(const uint64_t *)ctx};
    memcpy(params, &p, sizeof p);
}

TEST(kernel_where_f32)
{
    struct hcq_device *dev = NULL;
    uint8_t *cnd = NULL;
    float *a = NULL, *b = NULL, *yd = NULL, *yt = NULL;
    CHECK_OK(hcq_device_open(t->dev_spec, &dev));
    for (int s = 0; s < 3; s++) {
        uint64_t n = op_size(s);
        CHECK(cnd = malloc(n + 1));
        CHECK(a = malloc(n * 4 + 4));
        CHECK(b = malloc(n * 4 + 4));
        CHECK(yd = malloc(n * 4 + 4));
        CHECK(yt = malloc(n * 4 + 4));
        for (uint64_t i = 0; i < n; i++)
            cnd[i] = th_rand() % 2 ? 0 : (uint8_t)(1 + th_rand() % 255); /* any non-zero byte is true */
        rand_f32_special(a, n);
        rand_f32_special(b, n);
        struct op_case c = {"k_where_f32", 3,
                            {cnd, a, b},   {n, n * 4, n * 4},
                            n * 4,         sizeof(struct k_where_f32_params),
                            mk_where,      &n,
                            flat_grid(n),  256};
        CHECK(suite_op_run(t, dev, &c, (uint8_t *)yd, (uint8_t *)yt));
        for (uint64_t i = 0; i < n; i++) {
            float want = cnd[i] ? a[i] : b[i];
            CHECKF(!memcmp(&yd[i], &want, 4) && !memcmp(&yt[i], &want, 4),
                   "n=%llu: y[%llu] = %a (twin %a), expected %a (c=%u)", (unsigned long long)n,
                   (unsigned long long)i, (double)yd[i], (double)yt[i], (double)want, cnd[i]);
        }
        free(cnd), free(a), free(b), free(yd), free(yt);
        cnd = NULL, a = b = yd = yt = NULL;
    }
done:
    free(cnd), free(a), free(b), free(yd), free(yt);
    hcq_device_close(dev);
}

/* ==== comparisons ==== */

struct cmp_ctx {
    uint64_t n;
    uint32_t op;
};

static void
mk_cmp(void *params, const uint64_t *in_va, uint64_t out_va, const void *ctx)
{
    const struct cmp_ctx *x = ctx;
    struct k_cmp_f32_params p = {
        .out_va = out_va, .a_va = in_va[0], .b_va = in_va[1], .n = x->n, .op = x->op};
    memcpy(params, &p, sizeof p);
}

TEST(kernel_cmp_f32)
{
    struct hcq_device *dev = NULL;
    float *a = NULL, *b = NULL;
    uint8_t *od = NULL, *ot = NULL;
    CHECK_OK(hcq_device_open(t->dev_spec, &dev));
    for (uint32_t op = K_CMP_LT; op <= K_CMP_GE; op++) {
        for (int s = 0; s < 3; s++) {
            uint64_t n = op_size(s);
            CHECK(a = malloc(n * 4 + 4));
            CHECK(b = malloc(n * 4 + 4));
            CHECK(od = malloc(n + 1));
            CHECK(ot = malloc(n + 1));
            rand_f32_special(a, n);
            rand_f32_special(b, n);
            for (uint64_t i = 0; i < n; i += 3) /* equal operands, and +0 against -0 */
                b[i] = (i % 2) ? a[i] : (a[i] == 0.0f ? -a[i] : a[i]);
            struct cmp_ctx x = {n, op};
            struct op_case c = {
                "k_cmp_f32",  2,  {a, b}, {n * 4, n * 4}, n, sizeof(struct k_cmp_f32_params), mk_cmp, &x,
                flat_grid(n), 128};
            CHECK(suite_op_run(t, dev, &c, od, ot));
            for (uint64_t i = 0; i < n; i++) {
                double p = a[i], q = b[i];
                bool w = op == K_CMP_LT   ? p < q
                         : op == K_CMP_LE ? p <= q
                         : op == K_CMP_EQ ? p == q
                         : op == K_CMP_NE ? !(p == q)
                         : op == K_CMP_GT ? p > q
                                          : p >= q;
                CHECKF(od[i] == w && ot[i] == w, "op %u, n=%llu: %a vs %a -> %u (twin %u), expected %d", op,
                       (unsigned long long)n, p, q, od[i], ot[i], w);
            }
            free(a), free(b), free(od), free(ot);
            a = b = NULL, od = ot = NULL;
        }
    }
done:
    free(a), free(b), free(od), free(ot);
    hcq_device_close(dev);
}

/* ==== pow ==== */

static void
mk_pow(void *params, const uint64_t *in_va, uint64_t out_va, const void *ctx)
{
    struct k_pow_f32_params p = {
        .y_va = out_va, .a_va = in_va[0], .b_va = in_va[1], .n = *(const uint64_t *)ctx};
    memcpy(params, &p, sizeof p);
}

/* pow of f32 within 8 ulp of the double-precision result (CUDA powf <= 4 ulp, libm <= 1);
 * NaN, infinities and zeros exactly (same class and sign). */
static bool
pow_ok(float got, float a, float b)
{
    double r = pow((double)a, (double)b);
    float want = (float)r;
    if (isnan(want) || isnan(got))
        return isnan(want) && isnan(got);
    if (isinf(want) || want == 0.0f || isinf(got) || got == 0.0f) {
        if (f32_same(got, want))
            return true;
        /* the double result rounded to f32 may overflow/underflow where powf just does not */
        return !isinf(got) && !isinf(want) ? fabs((double)got - r) <= 8 * ldexp(1.0, -149)
                                           : fabs(r) > 3.4e38 && fabs((double)got) > 3.39e38;
    }
    return f32_ulps(got, want) <= 8 || fabs((double)got - r) <= 8 * ldexp(1.0, -149);
}

TEST(kernel_pow_f32)
{
    struct hcq_device *dev = NULL;
    float *a = NULL, *b = NULL, *yd = NULL, *yt = NULL;
    CHECK_OK(hcq_device_open(t->dev_spec, &dev));
    for (int s = 0; s < 3; s++) {
        uint64_t n = op_size(s);
        CHECK(a = malloc(n * 4 + 4));
        CHECK(b = malloc(n * 4 + 4));
        CHECK(yd = malloc(n * 4 + 4));
        CHECK(yt = malloc(n * 4 + 4));
        rand_f32_special(a, n);
        for (uint64_t i = 0; i < n; i++) {
            uint64_t r = th_rand() % 4;
            /* integer exponents (negative bases stay real), small reals, and specials */
            b[i] = r == 0 ? (float)((int)(th_rand() % 21) - 10) : r == 1 ? th_randf(-4.0f, 4.0f) : 0;
            if (r >= 2)
                rand_f32_special(&b[i], 1);
            if (r >= 2 && fabsf(b[i]) > 16.0f && isfinite(b[i]))
                b[i] = ldexpf(b[i], -4);
        }
        struct op_case c = {
            "k_pow_f32",  2,  {a, b}, {n * 4, n * 4}, n * 4, sizeof(struct k_pow_f32_params), mk_pow, &n,
            flat_grid(n), 256};
        CHECK(suite_op_run(t, dev, &c, (uint8_t *)yd, (uint8_t *)yt));
        for (uint64_t i = 0; i < n; i++)
            CHECKF(pow_ok(yd[i], a[i], b[i]) && pow_ok(yt[i], a[i], b[i]),
                   "n=%llu: pow(%a, %a) = %a (twin %a), double %a", (unsigned long long)n, (double)a[i],
                   (double)b[i], (double)yd[i], (double)yt[i], pow((double)a[i], (double)b[i]));
        free(a), free(b), free(yd), free(yt);
        a = b = yd = yt = NULL;
    }
done:
    free(a), free(b), free(yd), free(yt);
    hcq_device_close(dev);
}

/* ==== int32 pow, add; integer casts ==== */

static void
mk_i32_binary(void *params, const uint64_t *in_va, uint64_t out_va, const void *ctx)
{
    /* k_pow_i32 and k_add_i32 share the layout (out, a, b, n) */
    struct k_add_i32_params p = {
        .c_va = out_va, .a_va = in_va[0], .b_va = in_va[1], .n = *(const uint64_t *)ctx};
    memcpy(params, &p, sizeof p);
}

static int32_t
ref_pow_i32(int32_t a, int32_t e)
{
    if (e < 0)
        return a == 1 ? 1 : a == -1 ? ((e & 1) ? -1 : 1) : 0;
    uint32_t r = 1;
    for (int32_t k = 0; k < e && k < 64; k++) /* exponents in the test are < 64 */
        r *= (uint32_t)a;
    return (int32_t)r;
}

static void
i32_binary_test(struct th *t, struct hcq_device *dev, const char *kernel, bool is_pow)
{
    int32_t *a = NULL, *b = NULL, *yd = NULL, *yt = NULL;
    for (int s = 0; s < 3; s++) {
        uint64_t n = op_size(s);
        CHECK(a = malloc(n * 4 + 4));
        CHECK(b = malloc(n * 4 + 4));
        CHECK(yd = malloc(n * 4 + 4));
        CHECK(yt = malloc(n * 4 + 4));
        for (uint64_t i = 0; i < n; i++) {
            if (is_pow) {
                static const int32_t bases[] = {0, 1, -1, 2, -2, 3, 7, -13, 65536, INT32_MIN, INT32_MAX};
                a[i] = th_rand() % 2 ? bases[th_rand() % 11] : (int32_t)(th_rand() % 41) - 20;
                b[i] = (int32_t)(th_rand() % 40) - 5;
            } else {
                a[i] = (int32_t)th_rand();
                b[i] = th_rand() % 4 ? (int32_t)th_rand() : INT32_MAX; /* overflow wraps */
            }
        }
        struct op_case c = {kernel,        2,
                            {a, b},        {n * 4, n * 4},
                            n * 4,         sizeof(struct k_add_i32_params),
                            mk_i32_binary, &n,
                            flat_grid(n),  256};
        CHECK(suite_op_run(t, dev, &c, (uint8_t *)yd, (uint8_t *)yt));
        for (uint64_t i = 0; i < n; i++) {
            int32_t want = is_pow ? ref_pow_i32(a[i], b[i]) : (int32_t)((uint32_t)a[i] + (uint32_t)b[i]);
            CHECKF(yd[i] == want && yt[i] == want, "%s n=%llu: (%d, %d) -> %d (twin %d), expected %d", kernel,
                   (unsigned long long)n, a[i], b[i], yd[i], yt[i], want);
        }
        free(a), free(b), free(yd), free(yt);
        a = b = yd = yt = NULL;
    }
done:
    free(a), free(b), free(yd), free(yt);
}

TEST(kernel_pow_i32)
{
    struct hcq_device *dev = NULL;
    CHECK_OK(hcq_device_open(t->dev_spec, &dev));
    i32_binary_test(t, dev, "k_pow_i32", true);
done:
    hcq_device_close(dev);
}

TEST(kernel_add_i32)
{
    struct hcq_device *dev = NULL;
    CHECK_OK(hcq_device_open(t->dev_spec, &dev));
    i32_binary_test(t, dev, "k_add_i32", false);
done:
    hcq_device_close(dev);
}

static void
mk_cast(void *params, const uint64_t *in_va, uint64_t out_va, const void *ctx)
{
    /* the three casts share the layout (y, x, n) */
    struct k_cast_i8_f32_params p = {.y_va = out_va, .x_va = in_va[0], .n = *(const uint64_t *)ctx};
    memcpy(params, &p, sizeof p);
}

/* kind 0: int8, 1: uint8, 2: int32 */
static void
cast_test(struct th *t, struct hcq_device *dev, const char *kernel, int kind)
{
    uint8_t *x = NULL;
    float *yd = NULL, *yt = NULL;
    const uint64_t elem = kind == 2 ? 4 : 1;
    for (int s = 0; s < 3; s++) {
        uint64_t n = op_size(s);
        CHECK(x = malloc(n * elem + 4));
        CHECK(yd = malloc(n * 4 + 4));
        CHECK(yt = malloc(n * 4 + 4));
        suite_rand_bytes(x, n * elem);
        if (kind == 2 && n > 4) { /* the extremes and a value that must round (2^24 + 1) */
            const int32_t ex[3] = {INT32_MIN, INT32_MAX, (1 << 24) + 1};
            memcpy(x, ex, sizeof ex);
        }
        struct op_case c = {kernel,  1,  {x},          {n * elem}, n * 4, sizeof(struct k_cast_i8_f32_params),
                            mk_cast, &n, flat_grid(n), 256};
        CHECK(suite_op_run(t, dev, &c, (uint8_t *)yd, (uint8_t *)yt));
        for (uint64_t i = 0; i < n; i++) {
            double v;
            if (kind == 0)
                v = (int8_t)x[i];
            else if (kind == 1)
                v = x[i];
            else {
                int32_t w;
                memcpy(&w, x + i * 4, 4);
                v = w;
            }
            float want = (float)v; /* double -> float: round to nearest even, like cvt.rn */
            CHECKF(!memcmp(&yd[i], &want, 4) && !memcmp(&yt[i], &want, 4),
                   "%s n=%llu: x[%llu] = %.0f -> %a (twin %a)", kernel, (unsigned long long)n,
                   (unsigned long long)i, v, (double)yd[i], (double)yt[i]);
        }
        free(x), free(yd), free(yt);
        x = NULL, yd = yt = NULL;
    }
done:
    free(x), free(yd), free(yt);
}

TEST(kernel_cast_i8_f32)
{
    struct hcq_device *dev = NULL;
    CHECK_OK(hcq_device_open(t->dev_spec, &dev));
    cast_test(t, dev, "k_cast_i8_f32", 0);
done:
    hcq_device_close(dev);
}

TEST(kernel_cast_u8_f32)
{
    struct hcq_device *dev = NULL;
    CHECK_OK(hcq_device_open(t->dev_spec, &dev));
    cast_test(t, dev, "k_cast_u8_f32", 1);
done:
    hcq_device_close(dev);
}

TEST(kernel_cast_i32_f32)
{
    struct hcq_device *dev = NULL;
    CHECK_OK(hcq_device_open(t->dev_spec, &dev));
    cast_test(t, dev, "k_cast_i32_f32", 2);
done:
    hcq_device_close(dev);
}

/* ==== max / min along rows ==== */

struct rows_ctx {
    uint64_t rows, cols;
};

static void
mk_rows(void *params, const uint64_t *in_va, uint64_t out_va, const void *ctx)
{
    const struct rows_ctx *x = ctx;
    struct k_max_rows_f32_params p = {.out_va = out_va, .x_va = in_va[0], .rows = x->rows, .cols = x->cols};
    memcpy(params, &p, sizeof p);
}

/* Reference: NaN if any; else the extreme by value with +0 above -0; empty: -+Inf. */
static float
ref_row(const float *x, uint64_t cols, bool is_min)
{
    double best = is_min ? INFINITY : -INFINITY;
    bool any_nan = false, saw_pos0 = false, saw_neg0 = false;
    for (uint64_t c = 0; c < cols; c++) {
        if (isnan(x[c]))
            any_nan = true;
        else if (is_min ? x[c] < best : x[c] > best)
            best = x[c];
        if (x[c] == 0.0f && signbit(x[c]))
            saw_neg0 = true;
        else if (x[c] == 0.0f)
            saw_pos0 = true;
    }
    if (any_nan)
        return NAN;
    if (best == 0.0)
        return is_min ? (saw_neg0 ? -0.0f : 0.0f) : (saw_pos0 ? 0.0f : -0.0f);
    return (float)best;
}

static void
rows_test(struct th *t, struct hcq_device *dev, const char *kernel, bool is_min)
{
    static const uint64_t shapes[][2] = {{0, 5}, {3, 0}, {1, 1}, {7, 13}, {127, 127}, {3, 70001}, {1000, 33}};
    static const uint32_t blocks[] = {32, 96, 256, 1024};
    float *x = NULL, *od = NULL, *ot = NULL;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        uint64_t rows = shapes[s][0], cols = shapes[s][1];
        CHECK(x = malloc(rows * cols * 4 + 4));
        CHECK(od = malloc(rows * 4 + 4));
        CHECK(ot = malloc(rows * 4 + 4));
        for (uint64_t r = 0; r < rows; r++) {
            float *row = x + r * cols;
            switch (r % 4) {
            case 0:
                rand_f32_special(row, cols);
                break; /* NaN likely in long rows */
            case 1:
                for (uint64_t c = 0; c < cols; c++) /* no NaN, negatives only */
                    row[c] = -ldexpf(th_randf(0.0f, 1.0f), (int)(th_rand() % 20));
                break;
            case 2:
                for (uint64_t c = 0; c < cols; c++) /* signed zeros only */
                    row[c] = th_rand() % 2 ? 0.0f : -0.0f;
                break;
            default:
                for (uint64_t c = 0; c < cols; c++)
                    row[c] = th_randf(-1e3f, 1e3f);
                if (cols)
                    row[th_rand() % cols] = is_min ? -INFINITY : INFINITY;
            }
        }
        struct rows_ctx rc = {rows, cols};
        uint32_t grid = rows == 0 ? 1 : rows > 65535 ? 65535 : (uint32_t)rows;
        struct op_case c = {
            kernel,  1,   {x},  {rows * cols * 4},    rows * 4, sizeof(struct k_max_rows_f32_params),
            mk_rows, &rc, grid, blocks[th_rand() % 4]};
        CHECK(suite_op_run(t, dev, &c, (uint8_t *)od, (uint8_t *)ot));
        for (uint64_t r = 0; r < rows; r++) {
            float want = ref_row(x + r * cols, cols, is_min);
            CHECKF(f32_same(od[r], want) && f32_same(ot[r], want),
                   "%s %llux%llu block %u: row %llu = %a (twin %a), expected %a", kernel,
                   (unsigned long long)rows, (unsigned long long)cols, c.block, (unsigned long long)r,
                   (double)od[r], (double)ot[r], (double)want);
        }
        free(x), free(od), free(ot);
        x = od = ot = NULL;
    }
done:
    free(x), free(od), free(ot);
}

TEST(kernel_max_rows_f32)
{
    struct hcq_device *dev = NULL;
    CHECK_OK(hcq_device_open(t->dev_spec, &dev));
    rows_test(t, dev, "k_max_rows_f32", false);
done:
    hcq_device_close(dev);
}

TEST(kernel_min_rows_f32)
{
    struct hcq_device *dev = NULL;
    CHECK_OK(hcq_device_open(t->dev_spec, &dev));
    rows_test(t, dev, "k_min_rows_f32", true);
done:
    hcq_device_close(dev);
}

const struct th_case suite_ops_cases[] = {
    TH_CASE(kernel_where_f32),    TH_CASE(kernel_cmp_f32),      TH_CASE(kernel_pow_f32),
    TH_CASE(kernel_pow_i32),      TH_CASE(kernel_add_i32),      TH_CASE(kernel_cast_i8_f32),
    TH_CASE(kernel_cast_u8_f32),  TH_CASE(kernel_cast_i32_f32), TH_CASE(kernel_max_rows_f32),
    TH_CASE(kernel_min_rows_f32),
};
const int suite_ops_case_count = TH_COUNT(suite_ops_cases);
