/* SPDX-License-Identifier: MIT */
/*
 * hcq_suite_kcheck.c - the kernel tests' machinery (hcq_suite_kcheck.h): each check runs one
 * kernel on the device under test with fresh random inputs plus special values, the output
 * poisoned and followed by a poisoned guard area that must survive, against a reference
 * computed in double precision (not by the twin); on any device other than `cpu` the same
 * inputs also run on `cpu` and the two outputs must agree. Tolerances: docs/kernels.md.
 */
#include "hcq_suite_kcheck.h"
#include "k_stack_hash.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The devices a test's checks run on (the device under test and cpu), opened at a test's first
 * check and closed when it ends (th_defer): one open per test, not per shape and backend - on
 * cuda each open and close is a context (the kernel tests on cuda:0 took > 2 s each when opened per check,
 * most of the HCQ suite's 153 s there). A check that fails closes its device, so a lost device
 * is never reused. Every check still gets its own queue, program and buffers. */
static struct {
    char spec[64];
    struct hcq_device *dev;
} kdevs[2];
static bool kdevs_deferred; /* kdevs_close is registered for the current test */

void
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

enum hcq_status
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
void
kdev_drop(struct hcq_device *dev)
{
    for (int i = 0; i < 2; i++)
        if (kdevs[i].dev == dev) {
            kdevs[i].dev = NULL;
            kdevs[i].spec[0] = 0;
        }
    hcq_device_close(dev);
}

bool
kdev_cached(const struct hcq_device *dev)
{
    return dev && (kdevs[0].dev == dev || kdevs[1].dev == dev);
}

/* Run r on device `spec`; out receives out_B + KGUARD_B bytes. */
bool
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

bool
is_nan16(uint16_t h, bool bf16)
{
    return bf16 ? (h & 0x7f80) == 0x7f80 && (h & 0x7f) : (h & 0x7c00) == 0x7c00 && (h & 0x3ff);
}

/* Element i of a and b agree for kind k (tolerance `tol` for KCMP_F32_TOL). */
bool
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

void
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
bool
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
bool
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
void
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

enum hcq_status
kl_fill_u32(struct hcq_queue *q, struct hcq_program *prog, struct hcq_buf *out, struct hcq_buf *const in[3],
            const struct kshape *s)
{
    (void)in;
    return ops_launch_fill_u32(q, prog, out, s->n, s->u32);
}

enum hcq_status
kl_fill_f32(struct hcq_queue *q, struct hcq_program *prog, struct hcq_buf *out, struct hcq_buf *const in[3],
            const struct kshape *s)
{
    (void)in;
    return ops_launch_fill_f32(q, prog, out, s->n, s->f32);
}

enum hcq_status
kl_copy(struct hcq_queue *q, struct hcq_program *prog, struct hcq_buf *out, struct hcq_buf *const in[3],
        const struct kshape *s)
{
    return ops_launch_copy_bytes(q, prog, out, s->dst_off_B, in[0], s->src_off_B, s->n);
}

enum hcq_status
kl_binary(struct hcq_queue *q, struct hcq_program *prog, struct hcq_buf *out, struct hcq_buf *const in[3],
          const struct kshape *s)
{
    return ops_launch_binary_f32(q, prog, out, in[0], in[1], s->n);
}

enum hcq_status
kl_unary(struct hcq_queue *q, struct hcq_program *prog, struct hcq_buf *out, struct hcq_buf *const in[3],
         const struct kshape *s)
{
    return ops_launch_unary(q, prog, out, in[0], s->n);
}

/* s->u32 is the axis. tiny_grid: 3 blocks of 96 threads (not a power of two). */
enum hcq_status
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
enum hcq_status
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
enum hcq_status
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

enum hcq_status
kl_axpb(struct hcq_queue *q, struct hcq_program *prog, struct hcq_buf *out, struct hcq_buf *const in[3],
        const struct kshape *s)
{
    (void)in;
    return ops_launch_axpb_u64(q, prog, out, s->n, s->u64a, s->u64b);
}

enum hcq_status
kl_stack(struct hcq_queue *q, struct hcq_program *prog, struct hcq_buf *out, struct hcq_buf *const in[3],
         const struct kshape *s)
{
    (void)in;
    return ops_launch_stack_u32(q, prog, out, s->n, s->u32);
}

enum hcq_status
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

float
f32_of(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* Special f32 values every element-wise test includes. */
const uint32_t f32_specials[F32_SPECIALS] = {
    0x00000000, 0x80000000, /* +-0 */
    0x7f800000, 0xff800000, /* +-Inf */
    0x7fc00000, 0xffc00001, /* NaN */
    0x00000001, 0x807fffff, /* subnormals */
    0x00800000, 0x7f7fffff, /* FLT_MIN, FLT_MAX */
    0x3f800000, 0xbf800000, /* +-1 */
};

/* n random f32 in [lo, hi), the specials spread over the first positions when `specials`. */
float *
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
double
f16_mag(uint16_t h)
{
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    if (e == 0)
        return ldexp(m, -24);
    if (h == 0x7c00)
        return 65536.0;
    return ldexp(1024 + m, e - 25);
}

double
f16_value(uint16_t h)
{
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v = e == 31 ? (m ? NAN : INFINITY) : f16_mag(h & 0x7fff);
    return (h & 0x8000) ? -v : v;
}

/* Nearest f16 by search over the ordered positive patterns, ties to the even one. */
uint16_t
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
double
bf16_mag(uint16_t t)
{
    return t == 0x7f80 ? ldexp(1.0, 128) : (double)f32_of((uint32_t)t << 16);
}

uint16_t
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
