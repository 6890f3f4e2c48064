/* SPDX-License-Identifier: MIT */
/*
 * hcq_suite_kernels.c - every kernel of the built-in library (src/kernels) on the device
 * under test, against a reference computed here in double precision (not by the twin),
 * on fresh random inputs plus special values, with the output buffer poisoned (NaN for
 * f32 outputs, 0xAB bytes otherwise) and followed by a poisoned guard area that must
 * survive. On any device other than `cpu` the same inputs also run on `cpu` (the twins)
 * and the two outputs are compared: the same kernel on two backends must agree.
 * Tolerances are documented in docs/kernels.md; exact means bit-exact (any NaN matches
 * any NaN, as the GPU canonicalises NaN payloads).
 */
#include "hcq_suite_kcheck.h"
#include "k_stack_hash.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ==== Tests: memory kernels ==== */

/* Two sizes: random, and one just past what the launcher's capped grid covers in one
 * pass (65535 blocks x 256 threads), so the grid-stride loop takes a second lap. */
TEST(kernel_fill_u32)
{
    uint32_t *want = NULL;
    for (int pass = 0; pass < 2 && !t->failed; pass++) {
        const uint64_t n = pass == 0 ? 1 + th_rand() % 300000 : 65535ull * 256 + 1 + th_rand() % 1000;
        const uint32_t v = (uint32_t)th_rand();
        CHECK(want = malloc(n * 4));
        for (uint64_t i = 0; i < n; i++)
            want[i] = v;
        struct krun r = {.kernel = "k_fill_u32",
                         .launch = kl_fill_u32,
                         .s = {.n = n, .u32 = v},
                         .out_B = n * 4,
                         .poison = SUITE_POISON};
        struct kref ref = {.kind = KCMP_BYTES, .count = n * 4, .exact = want};
        kernel_check(t, &r, &ref);
        free(want);
        want = NULL;
    }
done:
    free(want);
}

TEST(kernel_fill_f32)
{
    const uint64_t n = 1 + th_rand() % 300000;
    const float v = th_randf(-1e6f, 1e6f);
    float *want = malloc(n * 4);
    CHECK(want);
    for (uint64_t i = 0; i < n; i++)
        want[i] = v;
    struct krun r = {.kernel = "k_fill_f32",
                     .launch = kl_fill_f32,
                     .s = {.n = n, .f32 = v},
                     .out_B = n * 4,
                     .poison = 0xFF};
    struct kref ref = {.kind = KCMP_F32_EXACT, .count = n, .exact = want};
    kernel_check(t, &r, &ref);
done:
    free(want);
}

/* Three alignments: 16-byte (vector path), 4-byte (word path), odd (byte path). */
TEST(kernel_copy_bytes)
{
    static const uint64_t offs[3][2] = {{0, 32}, {4, 8}, {3, 1}};
    uint8_t *src = NULL, *want = NULL;
    for (int v = 0; v < 3; v++) {
        const uint64_t size_B = 1 + th_rand() % 200000, so = offs[v][0], dof = offs[v][1];
        CHECK(src = malloc(so + size_B));
        CHECK(want = malloc(dof + size_B));
        suite_rand_bytes(src, so + size_B);
        memset(want, SUITE_POISON, dof);
        memcpy(want + dof, src + so, size_B);
        struct krun r = {.kernel = "k_copy_bytes",
                         .launch = kl_copy,
                         .s = {.n = size_B, .src_off_B = so, .dst_off_B = dof},
                         .n_in = 1,
                         .in = {src},
                         .in_B = {so + size_B},
                         .out_B = dof + size_B,
                         .poison = SUITE_POISON};
        struct kref ref = {.kind = KCMP_BYTES, .count = dof + size_B, .exact = want};
        kernel_check(t, &r, &ref);
        free(src);
        free(want);
        src = want = NULL;
        if (t->failed)
            break;
    }
done:
    free(src);
    free(want);
}

TEST(kernel_axpb_u64)
{
    const uint64_t n = 1 + th_rand() % 100000, mul = th_rand(), add = th_rand();
    uint64_t *x = malloc(n * 8), *want = malloc(n * 8);
    CHECK(x && want);
    suite_rand_bytes(x, n * 8);
    for (uint64_t i = 0; i < n; i++)
        want[i] = x[i] * mul + add;
    struct krun r = {.kernel = "k_axpb_u64",
                     .launch = kl_axpb,
                     .s = {.n = n, .u64a = mul, .u64b = add},
                     .out_B = n * 8,
                     .out_init = x,
                     .poison = SUITE_POISON};
    struct kref ref = {.kind = KCMP_BYTES, .count = n * 8, .exact = want};
    kernel_check(t, &r, &ref);
done:
    free(want);
    free(x);
}

/* k_dep_step: a chain of 120 launches in queue order, every check and write as the twin
 * predicts (the chain with HCQ_LAUNCH_DEP_WAIT is the graph suite's dep_wait_chain). */
TEST(kernel_dep_step)
{
    struct hcq_device *dev = NULL;
    CHECK_OK(hcq_device_open(t->dev_spec, &dev));
    CHECK(dep_chain_run(t, dev, 0, false, false));
done:
    hcq_device_close(dev);
}

/* The field's large_grid_launch: the largest grids the API allows (x 2^31 - 1, y and z 65535)
 * and odd mixed shapes run every CTA with the right blockIdx and gridDim (k_grid_mark counts
 * every stride-th CTA and the last; its twin computes the counts in closed form), and one past
 * each limit, or 0, is refused with HCQ_ERR_INVALID before anything is recorded. */
TEST(kernel_grid_mark)
{
    static const uint32_t grids[][3] = {{0x7FFFFFFFu, 1, 1}, {1, 65535, 1}, {1, 1, 65535},   {65537, 3, 2},
                                        {7, 255, 33},        {1, 1, 1},     {257, 65535, 1}, {3, 2, 65535}};
    struct hcq_device *dev = NULL;
    struct hcq_queue *q = NULL;
    struct hcq_program *prog = NULL;
    struct hcq_buf *out = NULL;
    CHECK_OK(hcq_device_open(t->dev_spec, &dev));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    CHECK_OK(hcq_program_load(dev, "k_grid_mark", &prog));
    CHECK_OK(suite_buf(dev, 32, HCQ_MEM_DEVICE, NULL, 0, &out));
    for (size_t i = 0; i < sizeof grids / sizeof grids[0]; i++) {
        const uint32_t *g = grids[i];
        const uint64_t n = (uint64_t)g[0] * g[1] * g[2];
        /* about 2^15 marked CTAs per launch at most (atomics on one word) */
        const uint32_t stride = n > 32768 ? (uint32_t)(n / 32768) + 1 : 1;
        uint32_t o[8] = {0};
        CHECK_OK(hcq_buf_write(out, 0, o, sizeof o));
        struct k_grid_mark_params p = {.out_va = hcq_buf_va(out), .stride = stride};
        struct hcq_launch l = {.prog = prog,
                               .grid = {g[0], g[1], g[2]},
                               .block = {32, 1, 1},
                               .args = &p,
                               .args_B = sizeof p,
                               .grid_var = {HCQ_VAR_NONE, HCQ_VAR_NONE, HCQ_VAR_NONE}};
        CHECK_OK(hcq_queue_launch_ex(q, &l));
        CHECK_OK(hcq_queue_submit(q));
        CHECK_OK(hcq_queue_finish(q, SUITE_TIMEOUT_NS));
        CHECK_OK(hcq_buf_read(out, 0, o, sizeof o));
        const uint64_t want = (n + stride - 1) / stride + ((n - 1) % stride != 0);
        CHECKF(o[0] == want && o[1] == g[0] - 1 && o[2] == g[1] - 1 && o[3] == g[2] - 1 && o[4] == g[0] &&
                   o[5] == g[1] && o[6] == g[2],
               "grid %ux%ux%u (stride %u): %u CTAs marked (expected %llu), max blockIdx %u,%u,%u, gridDim "
               "%u,%u,%u",
               g[0], g[1], g[2], stride, o[0], (unsigned long long)want, o[1], o[2], o[3], o[4], o[5], o[6]);
    }
    static const uint32_t bad[][3] = {
        {0x80000000u, 1, 1}, {1, 65536, 1}, {1, 1, 65536}, {0, 1, 1}, {1, 0, 1}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct k_grid_mark_params p = {.out_va = hcq_buf_va(out), .stride = 1};
        struct hcq_launch l = {.prog = prog,
                               .grid = {bad[i][0], bad[i][1], bad[i][2]},
                               .block = {32, 1, 1},
                               .args = &p,
                               .args_B = sizeof p,
                               .grid_var = {HCQ_VAR_NONE, HCQ_VAR_NONE, HCQ_VAR_NONE}};
        CHECKF(hcq_queue_launch_ex(q, &l) == HCQ_ERR_INVALID, "grid %ux%ux%u was not refused", bad[i][0],
               bad[i][1], bad[i][2]);
    }
    /* the queue still works after the refusals */
    CHECK_OK(hcq_queue_finish(q, SUITE_TIMEOUT_NS));
done:
    hcq_buf_free(out);
    hcq_program_destroy(prog);
    hcq_queue_destroy(q);
    hcq_device_close(dev);
}

/* k_empty: ten launches of various shapes complete and write nothing. */
TEST(kernel_empty)
{
    uint8_t want[64];
    memset(want, SUITE_POISON, sizeof want);
    struct krun r = {.kernel = "k_empty", .launch = kl_empty, .out_B = sizeof want, .poison = SUITE_POISON};
    struct kref ref = {.kind = KCMP_BYTES, .count = sizeof want, .exact = want};
    kernel_check(t, &r, &ref);
}

/* k_stack_u32 / k_stack_big_u32's value for element i: the kernels' own arithmetic
 * (k_stack_hash.h), on a host array as large as the bigger kernel's. Shared rather than restated:
 * an exact integer hash, so what these tests check is the stack (local memory) the runtime gives
 * the kernels, not the hash. */
uint32_t
suite_stack_hash(uint32_t w, uint32_t seed, uint64_t i)
{
    uint32_t words[K_STACK_BIG_WORDS];
    return k_stack_hash(words, w, seed, i);
}

/* The kernels with a 1 KiB / 4 KiB stack (local memory far above the engine's default): exact.
 * The local-memory sharing between queues is tests/hcq/hcq_suite_lmem.c. */
static void
stack_test(struct th *t, const char *kernel, uint32_t words)
{
    const uint64_t n = 1 + th_rand() % 20000;
    const uint32_t seed = (uint32_t)th_rand();
    uint32_t *want = malloc(n * 4);
    CHECK(want);
    for (uint64_t i = 0; i < n; i++)
        want[i] = suite_stack_hash(words, seed, i);
    struct krun r = {.kernel = kernel,
                     .launch = kl_stack,
                     .s = {.n = n, .u32 = seed},
                     .out_B = n * 4,
                     .poison = SUITE_POISON};
    struct kref ref = {.kind = KCMP_BYTES, .count = n * 4, .exact = want};
    kernel_check(t, &r, &ref);
done:
    free(want);
}

TEST(kernel_stack_u32)
{
    stack_test(t, "k_stack_u32", K_STACK_WORDS);
}

TEST(kernel_stack_big_u32)
{
    stack_test(t, "k_stack_big_u32", K_STACK_BIG_WORDS);
}

/* ==== Tests: element-wise ==== */

/* c = a op b, exact: the double result of two floats' sum or product rounds to the
 * correctly rounded f32 (53 >= 2 * 24 + 2 bits, so no double-rounding error). */
static void
binary_test(struct th *t, const char *kernel, bool mul)
{
    const uint64_t n = 1 + th_rand() % 200000;
    float *a = rand_f32(n, -1e4f, 1e4f, true), *b = rand_f32(n, -1e4f, 1e4f, false), *want = malloc(n * 4);
    CHECK(a && b && want);
    for (uint64_t i = 0; i < n; i++)
        want[i] = (float)(mul ? (double)a[i] * b[i] : (double)a[i] + b[i]);
    struct krun r = {.kernel = kernel,
                     .launch = kl_binary,
                     .s = {.n = n},
                     .n_in = 2,
                     .in = {a, b},
                     .in_B = {n * 4, n * 4},
                     .out_B = n * 4,
                     .poison = 0xFF};
    struct kref ref = {.kind = KCMP_F32_EXACT, .count = n, .exact = want};
    kernel_check(t, &r, &ref);
done:
    free(want);
    free(b);
    free(a);
}

TEST(kernel_add_f32)
{
    binary_test(t, "k_add_f32", false);
}

TEST(kernel_mul_f32)
{
    binary_test(t, "k_mul_f32", true);
}

/* exp: within 4 ulp (2^-21 relative) of exp() in double; specials exact. */
TEST(kernel_exp_f32)
{
    const uint64_t n = 1 + th_rand() % 200000;
    float *x = rand_f32(n, -87.0f, 88.0f, true);
    double *want = malloc(n * sizeof *want), *tol = malloc(n * sizeof *tol);
    CHECK(x && want && tol);
    for (uint64_t i = 0; i < n; i++) {
        if (fabsf(x[i]) > 88.0f && !isinf(x[i]) && !isnan(x[i]))
            x[i] = 1.5f; /* FLT_MAX: the result would overflow to Inf, drop it */
        want[i] = exp((double)x[i]);
        tol[i] = ldexp(fabs(want[i]), -21);
    }
    struct krun r = {.kernel = "k_exp_f32",
                     .launch = kl_unary,
                     .s = {.n = n},
                     .n_in = 1,
                     .in = {x},
                     .in_B = {n * 4},
                     .out_B = n * 4,
                     .poison = 0xFF};
    struct kref ref = {.kind = KCMP_F32_TOL, .count = n, .ref = want, .tol = tol};
    kernel_check(t, &r, &ref);
done:
    free(tol);
    free(want);
    free(x);
}

TEST(kernel_relu_f32)
{
    const uint64_t n = 1 + th_rand() % 200000;
    float *x = rand_f32(n, -10.0f, 10.0f, true), *want = malloc(n * 4);
    CHECK(x && want);
    for (uint64_t i = 0; i < n; i++)
        want[i] = (x[i] > 0.0f) ? x[i] : 0.0f; /* NaN -> +0, -0 -> +0 */
    struct krun r = {.kernel = "k_relu_f32",
                     .launch = kl_unary,
                     .s = {.n = n},
                     .n_in = 1,
                     .in = {x},
                     .in_B = {n * 4},
                     .out_B = n * 4,
                     .poison = 0xFF};
    struct kref ref = {.kind = KCMP_F32_EXACT, .count = n, .exact = want};
    kernel_check(t, &r, &ref);
done:
    free(want);
    free(x);
}

/* f32 -> f16 / bf16: random values over every range of the target (normal, subnormal,
 * overflow), exact ties between neighbours, random bit patterns, specials. */
static float *
cast_inputs(uint64_t n, bool bf16)
{
    float *x = rand_f32(n, -1.0f, 1.0f, true);
    if (!x)
        return NULL;
    for (uint64_t i = TH_COUNT(f32_specials) * 8; i < n; i++) {
        switch (th_rand() % 4) {
        case 0: /* scaled across the exponent range */
            x[i] = ldexpf(th_randf(-1.0f, 1.0f), (int)(th_rand() % (bf16 ? 260 : 50)) - (bf16 ? 130 : 30));
            break;
        case 1: { /* a tie: exactly halfway between two neighbours */
            if (bf16) {
                uint32_t u = ((uint32_t)th_rand() & 0xffff0000u) | 0x8000u;
                x[i] = f32_of(u);
            } else {
                uint16_t h = (uint16_t)(th_rand() % 0x7bff);
                x[i] =
                    (float)((f16_mag(h) + f16_mag((uint16_t)(h + 1))) / 2) * ((th_rand() & 1) ? -1.0f : 1.0f);
            }
            break;
        }
        case 2: /* any bit pattern */
            x[i] = f32_of((uint32_t)th_rand());
            break;
        default:
            break;
        }
    }
    /* f16 edge cases: the tie that overflows to Inf, the tie that rounds to 0, the
     * smallest subnormal's neighbourhood */
    x[n - 1] = 65520.0f;
    x[n - 2] = ldexpf(1.0f, -25);
    x[n - 3] = ldexpf(3.0f, -26);
    return x;
}

static void
cast_narrow_test(struct th *t, bool bf16)
{
    const uint64_t n = 1000 + th_rand() % 100000;
    float *x = cast_inputs(n, bf16);
    uint16_t *want = malloc(n * 2);
    CHECK(x && want);
    for (uint64_t i = 0; i < n; i++)
        want[i] = bf16 ? ref_f32_to_bf16(x[i]) : ref_f32_to_f16(x[i]);
    struct krun r = {.kernel = bf16 ? "k_cast_f32_bf16" : "k_cast_f32_f16",
                     .launch = kl_unary,
                     .s = {.n = n},
                     .n_in = 1,
                     .in = {x},
                     .in_B = {n * 4},
                     .out_B = n * 2,
                     .poison = SUITE_POISON};
    struct kref ref = {.kind = bf16 ? KCMP_BF16_EXACT : KCMP_F16_EXACT, .count = n, .exact = want};
    kernel_check(t, &r, &ref);
done:
    free(want);
    free(x);
}

/* f16 / bf16 -> f32: every one of the 65536 patterns, exact. */
static void
cast_widen_test(struct th *t, bool bf16)
{
    const uint64_t n = 65536;
    uint16_t *x = malloc(n * 2);
    float *want = malloc(n * 4);
    CHECK(x && want);
    for (uint64_t i = 0; i < n; i++) {
        x[i] = (uint16_t)(i * 40503u); /* a permutation of all patterns (40503 is odd) */
        want[i] = bf16 ? f32_of((uint32_t)x[i] << 16) : (float)f16_value(x[i]);
    }
    struct krun r = {.kernel = bf16 ? "k_cast_bf16_f32" : "k_cast_f16_f32",
                     .launch = kl_unary,
                     .s = {.n = n},
                     .n_in = 1,
                     .in = {x},
                     .in_B = {n * 2},
                     .out_B = n * 4,
                     .poison = 0xFF};
    struct kref ref = {.kind = KCMP_F32_EXACT, .count = n, .exact = want};
    kernel_check(t, &r, &ref);
done:
    free(want);
    free(x);
}

TEST(kernel_cast_f32_f16)
{
    cast_narrow_test(t, false);
}

TEST(kernel_cast_f16_f32)
{
    cast_widen_test(t, false);
}

TEST(kernel_cast_f32_bf16)
{
    cast_narrow_test(t, true);
}

TEST(kernel_cast_bf16_f32)
{
    cast_widen_test(t, true);
}

/* ==== Tests: reductions and matmul ==== */

/* Sum along `axis` of x[rows, cols] in [-1, 1]. Tolerance per output:
 * (L + 10) * 2^-24 * sum|x|, L the additions one thread does in sequence (cols/32 for the
 * row kernel's strided partials, rows for the column kernel), +10 for the tree. */
static void
sum_test(struct th *t, int axis, bool tiny)
{
    const uint32_t rows = 1 + (uint32_t)(th_rand() % 300), cols = 1 + (uint32_t)(th_rand() % 3000);
    const uint64_t out_n = axis ? rows : cols;
    float *x = rand_f32((uint64_t)rows * cols, -1.0f, 1.0f, false);
    double *want = calloc(out_n, sizeof *want), *tol = calloc(out_n, sizeof *tol);
    CHECK(x && want && tol);
    for (uint64_t r = 0; r < rows; r++)
        for (uint64_t c = 0; c < cols; c++) {
            double v = x[r * cols + c];
            want[axis ? r : c] += v;
            tol[axis ? r : c] += fabs(v);
        }
    const double seq = axis ? (cols + 31) / 32 : rows;
    for (uint64_t i = 0; i < out_n; i++)
        tol[i] *= (seq + 10) * ldexp(1.0, -24);
    struct krun r = {.kernel = axis ? "k_sum_rows_f32" : "k_sum_cols_f32",
                     .launch = kl_sum,
                     .s = {.rows = rows, .cols = cols, .u32 = (uint32_t)axis, .tiny_grid = tiny},
                     .n_in = 1,
                     .in = {x},
                     .in_B = {(uint64_t)rows * cols * 4},
                     .out_B = out_n * 4,
                     .poison = 0xFF};
    struct kref ref = {.kind = KCMP_F32_TOL, .count = out_n, .ref = want, .tol = tol};
    kernel_check(t, &r, &ref);
done:
    free(tol);
    free(want);
    free(x);
}

TEST(kernel_sum_rows_f32)
{
    sum_test(t, 1, false);
    if (!t->failed)
        sum_test(t, 1, true);
}

TEST(kernel_sum_cols_f32)
{
    sum_test(t, 0, false);
    if (!t->failed)
        sum_test(t, 0, true);
}

/* C = A . B, shapes not multiples of the 16 tile. Tolerance per element:
 * (k + 2) * 2^-24 * sum_k |a||b| (f32 accumulation of k products). */
static void
matmul_test(struct th *t, bool f16, bool tiny)
{
    const uint32_t m = 1 + (uint32_t)(th_rand() % 150), n = 1 + (uint32_t)(th_rand() % 150),
                   k = 1 + (uint32_t)(th_rand() % 200);
    const uint64_t in_B = f16 ? 2 : 4;
    void *a = malloc((uint64_t)m * k * in_B), *b = malloc((uint64_t)k * n * in_B);
    double *ad = malloc((uint64_t)m * k * 8), *bd = malloc((uint64_t)k * n * 8);
    double *want = malloc((uint64_t)m * n * 8), *tol = malloc((uint64_t)m * n * 8);
    CHECK(a && b && ad && bd && want && tol);
    for (uint64_t i = 0; i < (uint64_t)m * k + (uint64_t)k * n; i++) {
        bool is_a = i < (uint64_t)m * k;
        uint64_t j = is_a ? i : i - (uint64_t)m * k;
        float v = th_randf(-2.0f, 2.0f);
        double *dst = is_a ? &ad[j] : &bd[j];
        if (f16) { /* any f16 value in range: its pattern from the value's top bits */
            uint16_t h = ref_f32_to_f16(v);
            ((uint16_t *)(is_a ? a : b))[j] = h;
            *dst = f16_value(h);
        } else {
            ((float *)(is_a ? a : b))[j] = v;
            *dst = v;
        }
    }
    for (uint64_t i = 0; i < m; i++)
        for (uint64_t j = 0; j < n; j++) {
            double acc = 0, mag = 0;
            for (uint64_t kk = 0; kk < k; kk++) {
                acc += ad[i * k + kk] * bd[kk * n + j];
                mag += fabs(ad[i * k + kk] * bd[kk * n + j]);
            }
            want[i * n + j] = acc;
            tol[i * n + j] = (k + 2) * ldexp(1.0, -24) * mag;
        }
    struct krun r = {.kernel = f16 ? "k_matmul_f16" : "k_matmul_f32",
                     .launch = kl_matmul,
                     .s = {.m = m, .nn = n, .k = k, .tiny_grid = tiny},
                     .n_in = 2,
                     .in = {a, b},
                     .in_B = {(uint64_t)m * k * in_B, (uint64_t)k * n * in_B},
                     .out_B = (uint64_t)m * n * 4,
                     .poison = 0xFF};
    struct kref ref = {.kind = KCMP_F32_TOL, .count = (uint64_t)m * n, .ref = want, .tol = tol};
    kernel_check(t, &r, &ref);
done:
    free(tol);
    free(want);
    free(bd);
    free(ad);
    free(b);
    free(a);
}

TEST(kernel_matmul_f32)
{
    matmul_test(t, false, false);
    if (!t->failed)
        matmul_test(t, false, true);
}

TEST(kernel_matmul_f16)
{
    matmul_test(t, true, false);
    if (!t->failed)
        matmul_test(t, true, true);
}

/* Tensor-core GEMM: C = A . B or A . B^T with f16/bf16 inputs, edges not multiples of
 * the tile (k, and n for the [k, n] forms, multiples of 8 as the kernels require).
 * Inputs in [-2, 2] rounded to the input type, reference in double. Tolerance per
 * element: the kernels' bound k * 2^-23 * sum_k |a||b| (k_gemm_mma.h), + 2^-24 relative
 * for the final rounding. wg: the k_gemm_wgmma_* kernels (block 384, 128x256 tiles), and
 * `big` shapes of 2-4 x 1-3 tiles with 8-16 k-steps (the 4-stage ring wraps, tiles
 * follow each other in one CTA with tiny_grid). */
static void
gemm_test(struct th *t, bool bf16, bool nt, bool tiny, int wg, bool big)
{
    const uint32_t m = big ? 257 + (uint32_t)(th_rand() % 100) : 1 + (uint32_t)(th_rand() % 300);
    const uint32_t k = big ? 8 * (64 + (uint32_t)(th_rand() % 32)) : 8 * (uint32_t)(th_rand() % 40);
    const uint32_t n = big  ? 8 * (33 + (uint32_t)(th_rand() % 24)) + (nt ? (uint32_t)(th_rand() % 8) : 0)
                       : nt ? 1 + (uint32_t)(th_rand() % 300)
                            : 8 * (1 + (uint32_t)(th_rand() % 40));
    uint16_t *a = malloc((uint64_t)m * k * 2 + 2), *b = malloc((uint64_t)k * n * 2 + 2);
    double *ad = malloc((uint64_t)m * k * 8 + 8), *bd = malloc((uint64_t)k * n * 8 + 8);
    double *want = malloc((uint64_t)m * n * 8), *tol = malloc((uint64_t)m * n * 8);
    CHECK(a && b && ad && bd && want && tol);
    for (uint64_t i = 0; i < (uint64_t)m * k; i++) {
        a[i] = bf16 ? ref_f32_to_bf16(th_randf(-2.0f, 2.0f)) : ref_f32_to_f16(th_randf(-2.0f, 2.0f));
        ad[i] = bf16 ? (double)f32_of((uint32_t)a[i] << 16) : f16_value(a[i]);
    }
    for (uint64_t i = 0; i < (uint64_t)k * n; i++) { /* bd is [k][n] whatever b's layout */
        b[i] = bf16 ? ref_f32_to_bf16(th_randf(-2.0f, 2.0f)) : ref_f32_to_f16(th_randf(-2.0f, 2.0f));
        double v = bf16 ? (double)f32_of((uint32_t)b[i] << 16) : f16_value(b[i]);
        uint64_t kk = nt ? i % k : i / n, j = nt ? i / k : i % n;
        bd[kk * n + j] = v;
    }
    for (uint64_t i = 0; i < m; i++)
        for (uint64_t j = 0; j < n; j++) {
            double acc = 0, mag = 0;
            for (uint64_t kk = 0; kk < k; kk++) {
                acc += ad[i * k + kk] * bd[kk * n + j];
                mag += fabs(ad[i * k + kk] * bd[kk * n + j]);
            }
            want[i * n + j] = acc;
            tol[i * n + j] = k * ldexp(1.0, -23) * mag + ldexp(fabs(acc), -24);
        }
    /* wg: 0 mma.sync, 1 wgmma 128 x 256 tiles, 2 wgmma 128 x 128 tiles, 3 wgmma fed by TMA, 4 its
     * 128 x 128 build */
    static const char *const names[5][2][2] = {
        {{"k_gemm_f16", "k_gemm_f16_nt"}, {"k_gemm_bf16", "k_gemm_bf16_nt"}},
        {{"k_gemm_wgmma_f16", "k_gemm_wgmma_f16_nt"}, {"k_gemm_wgmma_bf16", "k_gemm_wgmma_bf16_nt"}},
        {{"k_gemm_wgmma_f16_n128", "k_gemm_wgmma_f16_nt_n128"},
         {"k_gemm_wgmma_bf16_n128", "k_gemm_wgmma_bf16_nt_n128"}},
        {{"k_gemm_wgmma_f16_tma", "k_gemm_wgmma_f16_nt_tma"},
         {"k_gemm_wgmma_bf16_tma", "k_gemm_wgmma_bf16_nt_tma"}},
        {{"k_gemm_wgmma_f16_tma_n128", "k_gemm_wgmma_f16_nt_tma_n128"},
         {"k_gemm_wgmma_bf16_tma_n128", "k_gemm_wgmma_bf16_nt_tma_n128"}}};
    struct krun r = {
        .kernel = names[wg][bf16][nt],
        .launch = kl_gemm,
        .s = {.m = m, .nn = n, .k = k, .u32 = wg ? K_GEMM_WG_THREADS : OPS_GEMM_THREADS, .tiny_grid = tiny},
        .n_in = 2,
        .in = {a, b},
        .in_B = {(uint64_t)m * k * 2 + 2, (uint64_t)k * n * 2 + 2},
        .out_B = (uint64_t)m * n * 4,
        .poison = 0xFF};
    struct kref ref = {.kind = KCMP_F32_TOL, .count = (uint64_t)m * n, .ref = want, .tol = tol};
    kernel_check(t, &r, &ref);
done:
    free(tol);
    free(want);
    free(bd);
    free(ad);
    free(b);
    free(a);
}

TEST(kernel_gemm_f16)
{
    gemm_test(t, false, false, false, false, false);
    if (!t->failed)
        gemm_test(t, false, false, true, false, false);
}

TEST(kernel_gemm_bf16)
{
    gemm_test(t, true, false, false, false, false);
    if (!t->failed)
        gemm_test(t, true, false, true, false, false);
}

TEST(kernel_gemm_f16_nt)
{
    gemm_test(t, false, true, false, false, false);
    if (!t->failed)
        gemm_test(t, false, true, true, false, false);
}

TEST(kernel_gemm_bf16_nt)
{
    gemm_test(t, true, true, false, false, false);
    if (!t->failed)
        gemm_test(t, true, true, true, false, false);
}

/* The sm_90a kernels: on GPUs only where their cubin runs (sm_90); elsewhere (cpu, emu)
 * their twins, which checks the launcher's geometry and the twin's block. Small and big
 * shapes, own grid and a 3-CTA grid. */
static void
gemm_wgmma_test(struct th *t, bool bf16, bool nt, int wg)
{
    struct hcq_device *dev = NULL;
    struct hcq_device_info info;
    CHECK_OK(hcq_device_open(t->dev_spec, &dev));
    CHECK_OK(hcq_device_info(dev, &info));
    if (suite_is_gpu(dev) && strncmp(ops_gemm_kernel(&info, bf16, nt), "k_gemm_wgmma_", 13) != 0)
        SKIP("%s (%s) does not run the sm_90a wgmma kernels (no cubin for it)", t->dev_spec, info.arch);
    hcq_device_close(dev);
    dev = NULL;
    for (int i = 0; i < 4 && !t->failed; i++)
        gemm_test(t, bf16, nt, i & 1, wg, i >= 2);
done:
    hcq_device_close(dev);
}

TEST(kernel_gemm_wgmma_f16)
{
    gemm_wgmma_test(t, false, false, 1);
}

TEST(kernel_gemm_wgmma_bf16)
{
    gemm_wgmma_test(t, true, false, 1);
}

TEST(kernel_gemm_wgmma_f16_nt)
{
    gemm_wgmma_test(t, false, true, 1);
}

TEST(kernel_gemm_wgmma_bf16_nt)
{
    gemm_wgmma_test(t, true, true, 1);
}

/* the TMA-fed 128 x 128-tile build (k_gemm_wgmma_tma_n128.cu) */
TEST(kernel_gemm_wgmma_f16_tma_n128)
{
    gemm_wgmma_test(t, false, false, 4);
}

TEST(kernel_gemm_wgmma_bf16_tma_n128)
{
    gemm_wgmma_test(t, true, false, 4);
}

TEST(kernel_gemm_wgmma_f16_nt_tma_n128)
{
    gemm_wgmma_test(t, false, true, 4);
}

TEST(kernel_gemm_wgmma_bf16_nt_tma_n128)
{
    gemm_wgmma_test(t, true, true, 4);
}

/* the TMA-fed build of the wide kernels (k_gemm_wgmma_tma.cu; tensor maps from k_tmap.h) */
TEST(kernel_gemm_wgmma_f16_tma)
{
    gemm_wgmma_test(t, false, false, 3);
}

TEST(kernel_gemm_wgmma_bf16_tma)
{
    gemm_wgmma_test(t, true, false, 3);
}

TEST(kernel_gemm_wgmma_f16_nt_tma)
{
    gemm_wgmma_test(t, false, true, 3);
}

TEST(kernel_gemm_wgmma_bf16_nt_tma)
{
    gemm_wgmma_test(t, true, true, 3);
}

/* the 128 x 128-tile build of the same kernels (k_gemm_wgmma_n128.cu) */
TEST(kernel_gemm_wgmma_f16_n128)
{
    gemm_wgmma_test(t, false, false, 2);
}

TEST(kernel_gemm_wgmma_bf16_n128)
{
    gemm_wgmma_test(t, true, false, 2);
}

TEST(kernel_gemm_wgmma_f16_nt_n128)
{
    gemm_wgmma_test(t, false, true, 2);
}

TEST(kernel_gemm_wgmma_bf16_nt_n128)
{
    gemm_wgmma_test(t, true, true, 2);
}

/* The registry is consistent (unique names, twins, parameter sizes), every non-LLM
 * kernel has a kernel_<name> test in this file, and every kernel loads on the device
 * under test: natively (from its cubin) on GPU devices. */
TEST(kernel_table_complete)
{
    struct hcq_device *dev = NULL;
    struct hcq_program *prog = NULL;
    CHECK_OK(hcq_device_open(t->dev_spec, &dev));
    const bool gpu = suite_is_gpu(dev);
    for (uint32_t i = 0; hcq_kernel_at(i); i++) {
        const struct hcq_kernel_desc *d = hcq_kernel_at(i);
        CHECKF(d->module && d->twin && d->params_B > 0 && d->params_B % 8 == 0,
               "%s: descriptor incomplete (module %p, twin %p, params_B %u)", d->name,
               (const void *)d->module, (void *)(uintptr_t)d->twin, d->params_B);
        CHECKF(hcq_kernel_find(d->name) == d, "%s: duplicate name in the registry", d->name);
        if (strncmp(d->name, "k_llm_", 6) != 0) {
            char test[80];
            snprintf(test, sizeof test, "kernel_%s", d->name + 2);
            bool found = false;
            for (int j = 0; j < suite_kernel_case_count; j++)
                found |= !strcmp(suite_kernel_cases[j].name, test);
            for (int j = 0; j < suite_ops_case_count; j++)
                found |= !strcmp(suite_ops_cases[j].name, test);
            for (int j = 0; j < suite_conv_case_count; j++)
                found |= !strcmp(suite_conv_cases[j].name, test);
            CHECKF(found, "%s has no test %s in the HCQ suite's kernel tables", d->name, test);
        }
        struct hcq_device_info dinfo;
        CHECK_OK(hcq_device_info(dev, &dinfo));
        if (gpu && d->sm_only && d->sm_only != dinfo.sm_version)
            continue; /* arch-specific kernel (sm_90a wgmma): no code for this GPU by design */
        CHECK_OK(hcq_program_load(dev, d->name, &prog));
        struct hcq_program_info info;
        CHECK_OK(hcq_program_info(prog, &info));
        CHECKF(info.params_B == d->params_B, "%s: program params_B %u (descriptor %u)", d->name,
               info.params_B, d->params_B);
        CHECKF(!gpu || info.native, "%s runs as a CPU twin on GPU device %s (no cubin for its arch?)",
               d->name, t->dev_spec);
        hcq_program_destroy(prog);
        prog = NULL;
    }
    CHECK(hcq_kernel_find("k_no_such_kernel") == NULL);
done:
    hcq_program_destroy(prog);
    hcq_device_close(dev);
}

/* Every kernel of the library has a test here (checked by kernel_table_complete). */
const struct th_case suite_kernel_cases[] = {
    TH_CASE(kernel_fill_u32),
    TH_CASE(kernel_fill_f32),
    TH_CASE(kernel_copy_bytes),
    TH_CASE(kernel_axpb_u64),
    TH_CASE(kernel_dep_step),
    TH_CASE(kernel_empty),
    TH_CASE(kernel_grid_mark),
    TH_CASE(kernel_stack_u32),
    TH_CASE(kernel_stack_big_u32),
    TH_CASE(kernel_add_f32),
    TH_CASE(kernel_mul_f32),
    TH_CASE(kernel_exp_f32),
    TH_CASE(kernel_relu_f32),
    TH_CASE(kernel_cast_f32_f16),
    TH_CASE(kernel_cast_f16_f32),
    TH_CASE(kernel_cast_f32_bf16),
    TH_CASE(kernel_cast_bf16_f32),
    TH_CASE(kernel_sum_rows_f32),
    TH_CASE(kernel_sum_cols_f32),
    TH_CASE(kernel_matmul_f32),
    TH_CASE(kernel_matmul_f16),
    TH_CASE(kernel_gemm_f16),
    TH_CASE(kernel_gemm_bf16),
    TH_CASE(kernel_gemm_f16_nt),
    TH_CASE(kernel_gemm_bf16_nt),
    TH_CASE(kernel_gemm_wgmma_f16),
    TH_CASE(kernel_gemm_wgmma_bf16),
    TH_CASE(kernel_gemm_wgmma_f16_nt),
    TH_CASE(kernel_gemm_wgmma_bf16_nt),
    TH_CASE(kernel_gemm_wgmma_f16_tma),
    TH_CASE(kernel_gemm_wgmma_bf16_tma),
    TH_CASE(kernel_gemm_wgmma_f16_nt_tma),
    TH_CASE(kernel_gemm_wgmma_bf16_nt_tma),
    TH_CASE(kernel_gemm_wgmma_f16_tma_n128),
    TH_CASE(kernel_gemm_wgmma_bf16_tma_n128),
    TH_CASE(kernel_gemm_wgmma_f16_nt_tma_n128),
    TH_CASE(kernel_gemm_wgmma_bf16_nt_tma_n128),
    TH_CASE(kernel_gemm_wgmma_f16_n128),
    TH_CASE(kernel_gemm_wgmma_bf16_n128),
    TH_CASE(kernel_gemm_wgmma_f16_nt_n128),
    TH_CASE(kernel_gemm_wgmma_bf16_nt_n128),
    TH_CASE(kernel_table_complete),
};
const int suite_kernel_case_count = TH_COUNT(suite_kernel_cases);
