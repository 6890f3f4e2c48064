/* SPDX-License-Identifier: MIT */
/*
 * bench_elementwise.c - streaming kernels, the memory-bound half of every model.
 *   add, mul  c = a + b, a * b (f32)        12 bytes per element
 *   exp, relu y = expf(x), max(x, 0) (f32)   8 bytes per element
 *   cast      y = f16(x)                     6 bytes per element
 * at 1M, 10M and 100M elements. GB/s = bytes read + written / time; "% of D2D" relates it
 * to the same device's measured D2D bandwidth (bench_copy.c: the better of the copy engine
 * and the copy kernel at the largest size), the practical ceiling.
 * Napkin bound: 100M adds move 1.2 GB; at ~3 TB/s (H100 HBM3, measured D2D) that is
 * ~0.4 ms; 1M elements (12 MB, inside the 50 MB L2) are launch-bound (~5-10 us).
 * Verification: the output is poisoned, then compared with the kernel's CPU twin run on
 * the same inputs (add, mul, relu, cast must match bit for bit; exp within 4 ulp-ish
 * relative 1e-6 * 4, the twin using libm's expf and CUDA's expf being within 2 ulp each).
 */
#include "bench.h"
#include "k_params.h"
#include "ops.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIMEOUT_NS (20ull * 1000 * 1000 * 1000)

struct ew_op {
    const char *name;
    const char *kernel;
    bool binary;
    uint32_t out_B; /* bytes per output element */
    double tol;     /* relative tolerance vs the twin (0: identical bits) */
};

static const struct ew_op ops_table[] = {
    {"add", "k_add_f32", true, 4, 0},
    {"mul", "k_mul_f32", true, 4, 0},
    {"exp", "k_exp_f32", false, 4, 4e-6},
    {"relu", "k_relu_f32", false, 4, 0},
    {"cast_f32_f16", "k_cast_f32_f16", false, 2, 0},
};

struct ew {
    struct bench_ctx *ctx;
    struct bench_dev *d;
    const struct ew_op *op;
    uint64_t n;
    const float *a, *b; /* inputs */
    const void *ref;    /* twin output */
    void *got;          /* read-back */
    struct hcq_buf *ba, *bb, *bc;
    struct hcq_program *prog, *fill;
};

/* Reference output of op on a (and b): the twin, through its parameter struct. */
static bool
reference(const struct ew_op *op, const float *a, const float *b, void *out, uint64_t n)
{
    if (op->binary) {
        struct k_add_f32_params p = {(uintptr_t)out, (uintptr_t)a, (uintptr_t)b, n};
        _Static_assert(sizeof(struct k_add_f32_params) == sizeof(struct k_mul_f32_params), "same layout");
        return ops_twin_run_host(op->kernel, &p, n);
    }
    struct k_exp_f32_params p = {(uintptr_t)out, (uintptr_t)a, n}; /* y, x, n: same for the unary kernels */
    return ops_twin_run_host(op->kernel, &p, n);
}

static enum hcq_status
rec_ew(struct bench_dev *d, struct hcq_queue *q, void *arg)
{
    struct ew *e = arg;
    (void)d;
    if (e->op->binary)
        return ops_launch_binary_f32(q, e->prog, e->bc, e->ba, e->bb, e->n);
    return ops_launch_unary(q, e->prog, e->bc, e->ba, e->n);
}

static bool
outputs_match(const struct ew *e, uint64_t *bad_out)
{
    if (e->op->tol == 0) {
        if (!memcmp(e->got, e->ref, e->n * e->op->out_B))
            return true;
        for (uint64_t i = 0; i < e->n; i++)
            if (memcmp((const uint8_t *)e->got + i * e->op->out_B, (const uint8_t *)e->ref + i * e->op->out_B,
                       e->op->out_B)) {
                *bad_out = i;
                return false;
            }
        return true;
    }
    const float *g = e->got, *r = e->ref;
    for (uint64_t i = 0; i < e->n; i++)
        if (!(fabs((double)g[i] - r[i]) <= e->op->tol * fabs((double)r[i]) + 1e-30)) {
            *bad_out = i;
            return false;
        }
    return true;
}

static void
run_one(struct ew *e)
{
    char params[32];
    bench_fmt_count(params, sizeof params, e->n);
    struct bench_result r = bench_result_init("elementwise", e->op->name, e->d, params, "GB/s", true);
    uint64_t bytes = e->n * (e->op->binary ? 8 : 4) + e->n * e->op->out_B;
    uint32_t batch = 1, reps;
    double one = 0, *t = NULL;
    enum hcq_status st = ops_launch_fill_u32(e->d->q, e->fill, e->bc, e->n * e->op->out_B / 4, 0xABABABABu);
    if (st == HCQ_OK)
        st = hcq_queue_finish(e->d->q, TIMEOUT_NS);
    if (st == HCQ_OK)
        st = bench_batch(e->d, e->d->q, rec_ew, e, 200e3, 100, &batch, &one);
    reps = bench_reps(e->ctx, one * batch, 0.2, 5, 100);
    if (st == HCQ_OK && !(t = calloc(reps, sizeof *t)))
        st = HCQ_ERR_NOMEM;
    if (st == HCQ_OK)
        st = bench_time(e->d, e->d->q, rec_ew, e, batch, reps, t);
    if (st == HCQ_OK)
        st = hcq_buf_read(e->bc, 0, e->got, e->n * e->op->out_B);
    uint64_t bad = 0;
    if (st != HCQ_OK) {
        bench_add_status(e->ctx, &r, BENCH_ERROR, "%s", hcq_last_error());
    } else if (!outputs_match(e, &bad)) {
        bench_add_status(e->ctx, &r, BENCH_FAIL, "element %llu differs from the CPU twin",
                         (unsigned long long)bad);
    } else {
        bench_stats(&r, t, reps, (double)bytes);
        r.verdict = BENCH_VERIFIED;
        if (e->d->d2d_GBps > 0)
            r.extra = 100.0 * r.median / e->d->d2d_GBps;
        snprintf(r.note, sizeof r.note, "%s%s%s", e->d->timed_on_device ? "device time" : "host time",
                 batch > 1 ? ", batched" : "", "");
        if (r.extra >= 0) {
            size_t len = strlen(r.note);
            snprintf(r.note + len, sizeof r.note - len, ", %.0f%% of D2D", r.extra);
        }
        bench_add(e->ctx, &r);
    }
    free(t);
}

/* Copy-engine D2D of 256 MiB, for "% of D2D" when the copy group did not run. */
static void
measure_d2d(struct bench_dev *d)
{
    struct hcq_buf *x = NULL, *y = NULL;
    const uint64_t size = 256ull << 20;
    if (hcq_buf_alloc(d->dev, size, HCQ_MEM_DEVICE, &x) == HCQ_OK &&
        hcq_buf_alloc(d->dev, size, HCQ_MEM_DEVICE, &y) == HCQ_OK) {
        uint64_t best = UINT64_MAX;
        for (int i = 0; i < 4; i++) {
            if (hcq_queue_timestamp(d->cq, d->ts_a) != HCQ_OK ||
                hcq_queue_copy(d->cq, y, 0, x, 0, size) != HCQ_OK ||
                hcq_queue_timestamp(d->cq, d->ts_b) != HCQ_OK ||
                hcq_queue_finish(d->cq, TIMEOUT_NS) != HCQ_OK)
                break;
            uint64_t dt = bench_ts_delta(d->ts_a, d->ts_b);
            if (i && dt && dt < best)
                best = dt;
        }
        if (best != UINT64_MAX)
            d->d2d_GBps = 2.0 * size / best;
    }
    hcq_buf_free(x);
    hcq_buf_free(y);
}

void
bench_elementwise(struct bench_ctx *ctx)
{
    static const uint64_t full[] = {1000000, 10000000, 100000000};
    static const uint64_t quick[] = {65536, 1000000};
    const uint64_t *sizes = ctx->quick ? quick : full;
    int count = ctx->quick ? 2 : 3;
    for (int i = 0; i < ctx->dev_count; i++)
        if (ctx->devs[i].timed_on_device && ctx->devs[i].d2d_GBps == 0 && !ctx->quick)
            measure_d2d(&ctx->devs[i]);
    for (int s = 0; s < count; s++) {
        uint64_t n = sizes[s];
        float *a = malloc(n * 4), *b = malloc(n * 4);
        void *ref = malloc(n * 4), *got = malloc(n * 4);
        if (!a || !b || !ref || !got) {
            fprintf(stderr, "bench: elementwise: no host memory for n = %llu\n", (unsigned long long)n);
            free(a), free(b), free(ref), free(got);
            break;
        }
        for (size_t o = 0; o < sizeof ops_table / sizeof ops_table[0]; o++) {
            const struct ew_op *op = &ops_table[o];
            bench_rand_f32(a, n, op->binary ? -2.0f : -4.0f, op->binary ? 2.0f : 4.0f); /* fresh per op */
            bench_rand_f32(b, n, -2.0f, 2.0f);
            bool have_ref = reference(op, a, b, ref, n);
            for (int i = 0; i < ctx->dev_count; i++) {
                struct ew e = {
                    .ctx = ctx, .d = &ctx->devs[i], .op = op, .n = n, .a = a, .b = b, .ref = ref, .got = got};
                if (e.d->dead)
                    continue;
                char params[32];
                struct bench_result r = bench_result_init(
                    "elementwise", op->name, e.d, bench_fmt_count(params, sizeof params, n), "GB/s", true);
                if (!have_ref) {
                    bench_add_status(ctx, &r, BENCH_ERROR, "no CPU twin for %s", op->kernel);
                    continue;
                }
                if (e.d->slow && n > (e.d->info.emulated ? 1000000u : 10000000u)) {
                    bench_add_status(ctx, &r, BENCH_SKIPPED, "size capped on host-run devices");
                    continue;
                }
                enum hcq_status st = hcq_program_load(e.d->dev, op->kernel, &e.prog);
                if (st == HCQ_OK)
                    st = hcq_program_load(e.d->dev, "k_fill_u32", &e.fill);
                if (st == HCQ_OK)
                    st = hcq_buf_alloc(e.d->dev, n * 4, HCQ_MEM_DEVICE, &e.ba);
                if (st == HCQ_OK && op->binary)
                    st = hcq_buf_alloc(e.d->dev, n * 4, HCQ_MEM_DEVICE, &e.bb);
                if (st == HCQ_OK)
                    st = hcq_buf_alloc(e.d->dev, n * 4, HCQ_MEM_DEVICE, &e.bc);
                if (st == HCQ_OK)
                    st = hcq_buf_write(e.ba, 0, a, n * 4);
                if (st == HCQ_OK && op->binary)
                    st = hcq_buf_write(e.bb, 0, b, n * 4);
                if (st != HCQ_OK)
                    bench_add_status(ctx, &r, BENCH_ERROR, "%s", hcq_last_error());
                else
                    run_one(&e);
                hcq_buf_free(e.ba);
                hcq_buf_free(e.bb);
                hcq_buf_free(e.bc);
                hcq_program_destroy(e.prog);
                hcq_program_destroy(e.fill);
            }
        }
        free(a), free(b), free(ref), free(got);
    }
}
