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
#include "hcq_suite.h"
#include "k_stack_hash.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define KGUARD_B 256 /* poisoned bytes after every output */

/* ==== Running one kernel on one device ==== */

struct kshape {
    uint64_t n;                    /* elements (flat kernels), bytes (copy) */
    uint64_t src_off_B, dst_off_B; /* copy */
    uint32_t rows, cols;           /* sums */
    uint32_t m, nn, k;             /* matmul: C[m, nn] = A[m, k] . B[k, nn] */
    uint32_t u32;
    float f32;
    uint64_t u64a, u64b;
    bool tiny_grid; /* launch with a small odd grid (grid-stride paths) */
};

typedef enum hcq_status (*klaunch_fn)(struct hcq_queue *q, struct hcq_program *prog, struct hcq_buf *out,
                                      struct hcq_buf *const in[3], const struct kshape *s);

struct krun {
    const char *kernel;
    klaunch_fn launch;
    struct kshape s;
    int n_in;
    const void *in[3];
    uint64_t in_B[3];
    uint64_t out_B;       /* checked output bytes; KGUARD_B more are allocated */
    const void *out_init; /* initial output contents (axpb), or NULL: poisoned */
    uint8_t poison;
};

/* The devices a test's checks run on (the device under test and cpu), opened at a test's first
 * check and closed when it ends (th_defer): one open per test, not per shape and backend - on
 * cuda each open and close is a context (session 14: the kernel tests on cuda:0 took > 2 s each,
 * most of the HCQ suite's 153 s there). A check that fails closes its device, so a lost device
 * is never reused. Every check still gets its own queue, program and buffers. */
static struct {
    char spec[64];
    struct hcq_device *dev;
} kdevs[2];
static bool kdevs_deferred; /* kdevs_close is registered for the current test */

static void
kdevs_close(struct th *t)
{
    (void)t;
    kdevs_deferred = false;
    for (int i = 0; i < 2; i++) {
        hcq_device_close(kdevs[i].dev);
        kdevs[i].dev = NULL;
        kdevs[i].spec[0] = 0;
    }
}

static enum hcq_status
kdev_get(struct th *t, const char *spec, struct hcq_device **dev)
{
    int slot = -1;
    for (int i = 0; i < 2; i++) {
        if (kdevs[i].dev && !strcmp(kdevs[i].spec, spec)) {
            *dev = kdevs[i].dev;
            return HCQ_OK;
        }
        if (!kdevs[i].dev && slot < 0)
            slot = i;
    }
    if (slot < 0 || strlen(spec) >= sizeof kdevs[0].spec)
        return hcq_device_open(spec, dev); /* not cached: the caller closes it */
    if (!kdevs_deferred && !(kdevs_deferred = th_defer(t, kdevs_close)))
        return hcq_device_open(spec, dev);
    enum hcq_status st = hcq_device_open(spec, dev);
    if (st == HCQ_OK) {
        strcpy(kdevs[slot].spec, spec);
        kdevs[slot].dev = *dev;
    }
    return st;
}

/* Drop dev: from the cache (a failed check's device) or, when it was never cached, close it. */
static void
kdev_drop(struct hcq_device *dev)
{
    for (int i = 0; i < 2; i++)
        if (kdevs[i].dev == dev) {
            kdevs[i].dev = NULL;
            kdevs[i].spec[0] = 0;
        }
    hcq_device_close(dev);
}

static bool
kdev_cached(const struct hcq_device *dev)
{
    return dev && (kdevs[0].dev == dev || kdevs[1].dev == dev);
}

/* Run r on device `spec`; out receives out_B + KGUARD_B bytes. */
static bool
krun_on(struct th *t, const char *spec, const struct krun *r, uint8_t *out)
{
    bool ok = false;
    struct hcq_device *dev = NULL;
    struct hcq_queue *q = NULL;
    struct hcq_program *prog = NULL;
    struct hcq_buf *in[3] = {0}, *ob = NULL;
    uint8_t *init = NULL;
    CHECK_OK(kdev_get(t, spec, &dev));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    CHECK_OK(hcq_program_load(dev, r->kernel, &prog));
    for (int i = 0; i < r->n_in; i++)
        CHECK_OK(suite_buf(dev, r->in_B[i], HCQ_MEM_DEVICE, r->in[i], 0, &in[i]));
    CHECK(init = malloc(r->out_B + KGUARD_B));
    memset(init, r->poison, r->out_B + KGUARD_B);
    if (r->out_init)
        memcpy(init, r->out_init, r->out_B);
    CHECK_OK(suite_buf(dev, r->out_B + KGUARD_B, HCQ_MEM_DEVICE, init, 0, &ob));
    CHECK_OK(r->launch(q, prog, ob, in, &r->s));
    CHECK_OK(hcq_queue_finish(q, SUITE_TIMEOUT_NS));
    CHECK_OK(hcq_buf_read(ob, 0, out, r->out_B + KGUARD_B));
    for (uint64_t i = r->out_B; i < r->out_B + KGUARD_B; i++)
        CHECKF(out[i] == r->poison, "%s on %s wrote past its output: guard byte %llu = 0x%02x", r->kernel,
               spec, (unsigned long long)(i - r->out_B), out[i]);
    ok = true;
done:
    hcq_buf_free(ob);
    for (int i = 0; i < 3; i++)
        hcq_buf_free(in[i]);
    free(init);
    hcq_program_destroy(prog);
    hcq_queue_destroy(q);
    if (!ok || !kdev_cached(dev))
        kdev_drop(dev);
    return ok;
}

/* ==== Comparing ==== */

enum kcmp_kind { KCMP_BYTES, KCMP_F32_EXACT, KCMP_F16_EXACT, KCMP_BF16_EXACT, KCMP_F32_TOL };

struct kref {
    enum kcmp_kind kind;
    uint64_t count;    /* elements (bytes for KCMP_BYTES) */
    const void *exact; /* expected output (exact kinds) */
    const double *ref; /* KCMP_F32_TOL: reference values (NaN, +-Inf must match) */
    const double *tol; /* KCMP_F32_TOL: allowed |out - ref| per element */
};

static bool
is_nan16(uint16_t h, bool bf16)
{
    return bf16 ? (h & 0x7f80) == 0x7f80 && (h & 0x7f) : (h & 0x7c00) == 0x7c00 && (h & 0x3ff);
}

/* Element i of a and b agree for kind k (tolerance `tol` for KCMP_F32_TOL). */
static bool
kcmp_elem(enum kcmp_kind k, const void *a, const void *b, uint64_t i, double tol)
{
    switch (k) {
    case KCMP_BYTES:
        return ((const uint8_t *)a)[i] == ((const uint8_t *)b)[i];
    case KCMP_F16_EXACT:
    case KCMP_BF16_EXACT: {
        uint16_t x = ((const uint16_t *)a)[i], y = ((const uint16_t *)b)[i];
        bool bf = k == KCMP_BF16_EXACT;
        return x == y || (is_nan16(x, bf) && is_nan16(y, bf));
    }
    case KCMP_F32_EXACT: {
        float x = ((const float *)a)[i], y = ((const float *)b)[i];
        return !memcmp(&x, &y, 4) || (isnan(x) && isnan(y));
    }
    case KCMP_F32_TOL: {
        double x = ((const float *)a)[i], y = ((const float *)b)[i];
        if (isnan(x) || isnan(y) || isinf(x) || isinf(y))
            return (isnan(x) && isnan(y)) || x == y;
        return fabs(x - y) <= tol;
    }
    }
    return false;
}

static void
kcmp_show(enum kcmp_kind k, const void *p, uint64_t i, char *buf, size_t buf_B)
{
    switch (k) {
    case KCMP_BYTES:
        snprintf(buf, buf_B, "0x%02x", ((const uint8_t *)p)[i]);
        break;
    case KCMP_F16_EXACT:
    case KCMP_BF16_EXACT:
        snprintf(buf, buf_B, "0x%04x", ((const uint16_t *)p)[i]);
        break;
    default:
        snprintf(buf, buf_B, "%.9g (%a)", (double)((const float *)p)[i], (double)((const float *)p)[i]);
    }
}

/* out against the reference; on a mismatch fail naming the first bad element. */
static bool
kref_check(struct th *t, const char *what, const struct kref *r, const uint8_t *out)
{
    uint64_t bad = 0, first = 0;
    for (uint64_t i = 0; i < r->count; i++) {
        bool ok;
        if (r->kind == KCMP_F32_TOL) {
            double want = r->ref[i], o = ((const float *)out)[i];
            if (isnan(want))
                ok = isnan(o);
            else if (isinf(want))
                ok = o == want;
            else /* NaN and Inf outputs fail here */
                ok = fabs(o - want) <= r->tol[i];
        } else {
            ok = kcmp_elem(r->kind, out, r->exact, i, 0);
        }
        if (!ok && bad++ == 0)
            first = i;
    }
    if (!bad)
        return true;
    char got[64], want[80];
    kcmp_show(r->kind, out, first, got, sizeof got);
    if (r->kind == KCMP_F32_TOL)
        snprintf(want, sizeof want, "%.9g +- %.3g", r->ref[first], r->tol[first]);
    else
        kcmp_show(r->kind, r->exact, first, want, sizeof want);
    th_fail(t, __FILE__, __LINE__, "%s: %llu of %llu elements wrong; first [%llu] = %s (expected %s)", what,
            (unsigned long long)bad, (unsigned long long)r->count, (unsigned long long)first, got, want);
    return false;
}

/* Two backends' outputs: exact kinds bit-exact, KCMP_F32_TOL within twice the tolerance. */
static bool
kcross_check(struct th *t, const char *spec, const struct kref *r, const uint8_t *dev_out,
             const uint8_t *cpu_out)
{
    for (uint64_t i = 0; i < r->count; i++) {
        double tol = r->kind == KCMP_F32_TOL ? 2 * r->tol[i] : 0;
        if (!kcmp_elem(r->kind, dev_out, cpu_out, i, tol)) {
            char a[64], b[64];
            kcmp_show(r->kind, dev_out, i, a, sizeof a);
            kcmp_show(r->kind, cpu_out, i, b, sizeof b);
            th_fail(t, __FILE__, __LINE__, "%s and cpu disagree at [%llu]: %s vs %s", spec,
                    (unsigned long long)i, a, b);
            return false;
        }
    }
    return true;
}

/* Run r on the device under test, check against ref; on non-cpu devices also on cpu. */
static void
kernel_check(struct th *t, const struct krun *r, const struct kref *ref)
{
    uint8_t *out = NULL, *cpu_out = NULL;
    char what[96];
    if (!(out = malloc(r->out_B + KGUARD_B)) || !(cpu_out = malloc(r->out_B + KGUARD_B))) {
        th_fail(t, __FILE__, __LINE__, "out of host memory");
        goto done;
    }
    snprintf(what, sizeof what, "%s on %s", r->kernel, t->dev_spec);
    if (!krun_on(t, t->dev_spec, r, out) || !kref_check(t, what, ref, out))
        goto done;
    if (strncmp(t->dev_spec, "cpu", 3) != 0) {
        snprintf(what, sizeof what, "%s on cpu", r->kernel);
        if (!krun_on(t, "cpu", r, cpu_out) || !kref_check(t, what, ref, cpu_out))
            goto done;
        kcross_check(t, t->dev_spec, ref, out, cpu_out);
    }
done:
    free(cpu_out);
    free(out);
}

/* ==== Launchers (the ops.h helpers, or a deliberately odd geometry) ==== */

static enum hcq_status
kl_fill_u32(struct hcq_queue *q, struct hcq_program *prog, struct hcq_buf *out, struct hcq_buf *const in[3],
            const struct kshape *s)
{
    (void)in;
    return ops_launch_fill_u32(q, prog, out, s->n, s->u32);
}

static enum hcq_status
kl_fill_f32(struct hcq_queue *q, struct hcq_program *prog, struct hcq_buf *out, struct hcq_buf *const in[3],
            const struct kshape *s)
{
    (void)in;
    return ops_launch_fill_f32(q, prog, out, s->n, s->f32);
}

static enum hcq_status
kl_copy(struct hcq_queue *q, struct hcq_program *prog, struct hcq_buf *out, struct hcq_buf *const in[3],
        const struct kshape *s)
{
    return ops_launch_copy_bytes(q, prog, out, s->dst_off_B, in[0], s->src_off_B, s->n);
}

static enum hcq_status
kl_binary(struct hcq_queue *q, struct hcq_program *prog, struct hcq_buf *out, struct hcq_buf *const in[3],
          const struct kshape *s)
{
    return ops_launch_binary_f32(q, prog, out, in[0], in[1], s->n);
}

static enum hcq_status
kl_unary(struct hcq_queue *q, struct hcq_program *prog, struct hcq_buf *out, struct hcq_buf *const in[3],
         const struct kshape *s)
{
    return ops_launch_unary(q, prog, out, in[0], s->n);
}

/* s->u32 is the axis. tiny_grid: 3 blocks of 96 threads (not a power of two). */
static enum hcq_status
kl_sum(struct hcq_queue *q, struct hcq_program *prog, struct hcq_buf *out, struct hcq_buf *const in[3],
       const struct kshape *s)
{
    if (!s->tiny_grid)
        return ops_launch_sum_f32(q, prog, out, in[0], s->rows, s->cols, (int)s->u32);
    struct k_sum_rows_f32_params p = {
        .out_va = hcq_buf_va(out), .x_va = hcq_buf_va(in[0]), .rows = s->rows, .cols = s->cols};
    const uint32_t grid[3] = {3, 1, 1}, block[3] = {96, 1, 1};
    return hcq_queue_launch(q, prog, grid, block, &p, sizeof p);
}

/* tiny_grid: a 3x2 grid of 16x16 blocks walks all tiles. */
static enum hcq_status
kl_matmul(struct hcq_queue *q, struct hcq_program *prog, struct hcq_buf *out, struct hcq_buf *const in[3],
          const struct kshape *s)
{
    if (!s->tiny_grid)
        return ops_launch_matmul(q, prog, out, in[0], in[1], s->m, s->nn, s->k);
    struct k_matmul_f32_params p = {.c_va = hcq_buf_va(out),
                                    .a_va = hcq_buf_va(in[0]),
                                    .b_va = hcq_buf_va(in[1]),
                                    .m = s->m,
                                    .n = s->nn,
                                    .k = s->k};
    const uint32_t grid[3] = {3, 2, 1}, block[3] = {16, 16, 1};
    return hcq_queue_launch(q, prog, grid, block, &p, sizeof p);
}

/* tiny_grid: 3 blocks (of s->u32 threads: the kernel's block) walk every tile of C. */
static enum hcq_status
kl_gemm(struct hcq_queue *q, struct hcq_program *prog, struct hcq_buf *out, struct hcq_buf *const in[3],
        const struct kshape *s)
{
    if (!s->tiny_grid)
        return ops_launch_gemm(q, prog, out, in[0], in[1], s->m, s->nn, s->k);
    struct k_gemm_params p = {.c_va = hcq_buf_va(out),
                              .a_va = hcq_buf_va(in[0]),
                              .b_va = hcq_buf_va(in[1]),
                              .m = s->m,
                              .n = s->nn,
                              .k = s->k};
    const uint32_t grid[3] = {3, 1, 1}, block[3] = {s->u32, 1, 1};
    struct hcq_program_info pi;
    enum hcq_status st = hcq_program_info(prog, &pi);
    if (st != HCQ_OK || !strstr(pi.name, "_tma"))
        return st != HCQ_OK ? st : hcq_queue_launch(q, prog, grid, block, &p, sizeof p);
    struct k_gemm_tma_params tp;
    if ((st = ops_gemm_tma_params(&tp, &p, strstr(pi.name, "bf16") != NULL, strstr(pi.name, "_nt") != NULL,
                                  strstr(pi.name, "n128") ? K_GEMM_WG128_BN : K_GEMM_WG_BN)) != HCQ_OK)
        return st;
    return hcq_queue_launch(q, prog, grid, block, &tp, sizeof tp);
}

static enum hcq_status
kl_axpb(struct hcq_queue *q, struct hcq_program *prog, struct hcq_buf *out, struct hcq_buf *const in[3],
        const struct kshape *s)
{
    (void)in;
    return ops_launch_axpb_u64(q, prog, out, s->n, s->u64a, s->u64b);
}

static enum hcq_status
kl_stack(struct hcq_queue *q, struct hcq_program *prog, struct hcq_buf *out, struct hcq_buf *const in[3],
         const struct kshape *s)
{
    (void)in;
    return ops_launch_stack_u32(q, prog, out, s->n, s->u32);
}

static enum hcq_status
kl_empty(struct hcq_queue *q, struct hcq_program *prog, struct hcq_buf *out, struct hcq_buf *const in[3],
         const struct kshape *s)
{
    (void)out;
    (void)in;
    (void)s;
    for (uint32_t i = 0; i < 10; i++) {
        enum hcq_status st = ops_launch_empty(q, prog, 1 + i * 7, 32 * (i + 1));
        if (st != HCQ_OK)
            return st;
    }
    return HCQ_OK;
}

/* ==== Inputs ==== */

static float
f32_of(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* Special f32 values every element-wise test includes. */
static const uint32_t f32_specials[] = {
    0x00000000, 0x80000000, /* +-0 */
    0x7f800000, 0xff800000, /* +-Inf */
    0x7fc00000, 0xffc00001, /* NaN */
    0x00000001, 0x807fffff, /* subnormals */
    0x00800000, 0x7f7fffff, /* FLT_MIN, FLT_MAX */
    0x3f800000, 0xbf800000, /* +-1 */
};

/* n random f32 in [lo, hi), the specials spread over the first positions when `specials`. */
static float *
rand_f32(uint64_t n, float lo, float hi, bool specials)
{
    float *x = malloc(n * 4 + 4);
    if (!x)
        return NULL;
    for (uint64_t i = 0; i < n; i++)
        x[i] = th_randf(lo, hi);
    if (specials)
        for (uint64_t i = 0; i < n && i < TH_COUNT(f32_specials); i++)
            x[(i * 7919) % n] = f32_of(f32_specials[i]);
    return x;
}

/* ==== Independent references for the conversions ==== */

/* |value| of f16 pattern h < 0x8000, with 0x7c00 read as 65536 (the value IEEE rounding
 * compares against before it overflows to Inf). */
static double
f16_mag(uint16_t h)
{
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    if (e == 0)
        return ldexp(m, -24);
    if (h == 0x7c00)
        return 65536.0;
    return ldexp(1024 + m, e - 25);
}

static double
f16_value(uint16_t h)
{
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v = e == 31 ? (m ? NAN : INFINITY) : f16_mag(h & 0x7fff);
    return (h & 0x8000) ? -v : v;
}

/* Nearest f16 by search over the ordered positive patterns, ties to the even one. */
static uint16_t
ref_f32_to_f16(float x)
{
    if (isnan(x))
        return 0x7e00;
    uint16_t sign = signbit(x) ? 0x8000 : 0;
    double a = fabs((double)x);
    if (a >= 65536.0)
        return sign | 0x7c00;
    uint16_t lo = 0, hi = 0x7bff; /* largest h with f16_mag(h) <= a */
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

/* bf16 magnitude pattern t < 0x8000 as a value, 0x7f80 read as 2^128. */
static double
bf16_mag(uint16_t t)
{
    return t == 0x7f80 ? ldexp(1.0, 128) : (double)f32_of((uint32_t)t << 16);
}

static uint16_t
ref_f32_to_bf16(float x)
{
    if (isnan(x))
        return 0x7fc0;
    uint32_t u;
    memcpy(&u, &x, 4);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000), t = (uint16_t)((u & 0x7fffffff) >> 16);
    if (t >= 0x7f80)
        return sign | 0x7f80; /* Inf stays Inf */
    double a = fabs((double)x), d0 = a - bf16_mag(t), d1 = bf16_mag((uint16_t)(t + 1)) - a;
    return sign | ((d0 < d1 || (d0 == d1 && !(t & 1))) ? t : (uint16_t)(t + 1));
}

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
        SKIP("%s (%s) does not run the sm_90a wgmma kernels (no cubin for it, or NVHCQ_GEMM=mma)",
             t->dev_spec, info.arch);
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
