/* SPDX-License-Identifier: MIT */
/*
 * bench_mlp.c - a whole small model: the 784-256-128-10 MNIST MLP, f32,
 *   h1 = relu(x W1 + b1), h2 = relu(h1 W2 + b2), y = h2 W3 + b3
 * at batch 1 and 256, as 8 launches (3 k_matmul_f32, 3 k_add_f32 with the bias
 * pre-broadcast to [batch, out], 2 k_relu_f32), timed per forward pass:
 *   mlp_stream  the 8 launches recorded and submitted each pass
 *   mlp_graph   the same 8 launches recorded once as a graph, replayed each pass
 * Napkin bound: batch 1 moves 0.9 MB of weights (~0.3 us at 3 TB/s) and does 0.2 MFLOP,
 * so it is pure launch overhead: 8 x the per-kernel cost of bench latency (~8 x 4 us on a
 * CUDA stream, ~8 x 1 us as a graph). Batch 256 is 119 MFLOP: ~10-30 us with the
 * library's CUDA-core matmul.
 * Verification: y is poisoned, then compared with a double-precision host forward pass
 * (|err| <= 1e-3 (1 + |ref|)).
 */
#include "bench.h"
#include "ops.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIMEOUT_NS (20ull * 1000 * 1000 * 1000)

static const uint32_t dims[4] = {784, 256, 128, 10};

struct mlp_host {
    uint32_t batch;
    float *x, *w[3], *bias[3]; /* bias pre-broadcast: [batch, dims[l+1]] */
    double *ref;               /* [batch, 10] */
};

struct mlp_dev {
    struct bench_ctx *ctx;
    struct bench_dev *d;
    const struct mlp_host *h;
    struct hcq_program *mm, *add, *relu, *fill;
    struct hcq_buf *x, *w[3], *b[3], *m[3], *a[3], *r[2];
};

static void
host_forward(struct mlp_host *h)
{
    uint32_t B = h->batch;
    double *in = malloc((size_t)B * dims[0] * sizeof *in), *out = NULL;
    if (!in)
        return;
    for (size_t i = 0; i < (size_t)B * dims[0]; i++)
        in[i] = h->x[i];
    for (int l = 0; l < 3; l++) {
        uint32_t K = dims[l], N = dims[l + 1];
        out = malloc((size_t)B * N * sizeof *out);
        if (!out)
            break;
        for (uint32_t b = 0; b < B; b++)
            for (uint32_t n = 0; n < N; n++) {
                double s = h->bias[l][(size_t)b * N + n];
                for (uint32_t k = 0; k < K; k++)
                    s += in[(size_t)b * K + k] * h->w[l][(size_t)k * N + n];
                out[(size_t)b * N + n] = l < 2 && s < 0 ? 0 : s;
            }
        free(in);
        in = out;
    }
    if (out)
        memcpy(h->ref, out, (size_t)B * dims[3] * sizeof *out);
    free(in);
}

/* The 8 launches of one forward pass on q. */
static enum hcq_status
rec_forward(struct bench_dev *bd, struct hcq_queue *q, void *arg)
{
    struct mlp_dev *m = arg;
    uint32_t B = m->h->batch;
    enum hcq_status st = HCQ_OK;
    (void)bd;
    struct hcq_buf *in = m->x;
    for (int l = 0; l < 3 && st == HCQ_OK; l++) {
        uint32_t N = dims[l + 1];
        st = ops_launch_matmul(q, m->mm, m->m[l], in, m->w[l], B, N, dims[l]);
        if (st == HCQ_OK)
            st = ops_launch_binary_f32(q, m->add, m->a[l], m->m[l], m->b[l], (uint64_t)B * N);
        if (st == HCQ_OK && l < 2)
            st = ops_launch_unary(q, m->relu, m->r[l], m->a[l], (uint64_t)B * N);
        in = l < 2 ? m->r[l] : NULL;
    }
    return st;
}

static enum hcq_status
setup(struct mlp_dev *m)
{
    uint32_t B = m->h->batch;
    struct hcq_device *dev = m->d->dev;
    enum hcq_status st = hcq_program_load(dev, "k_matmul_f32", &m->mm);
    if (st == HCQ_OK)
        st = hcq_program_load(dev, "k_add_f32", &m->add);
    if (st == HCQ_OK)
        st = hcq_program_load(dev, "k_relu_f32", &m->relu);
    if (st == HCQ_OK)
        st = hcq_program_load(dev, "k_fill_u32", &m->fill);
    if (st == HCQ_OK && (st = hcq_buf_alloc(dev, (uint64_t)B * dims[0] * 4, 0, &m->x)) == HCQ_OK)
        st = hcq_buf_write(m->x, 0, m->h->x, (uint64_t)B * dims[0] * 4);
    for (int l = 0; l < 3 && st == HCQ_OK; l++) {
        uint64_t wB = (uint64_t)dims[l] * dims[l + 1] * 4, oB = (uint64_t)B * dims[l + 1] * 4;
        if ((st = hcq_buf_alloc(dev, wB, 0, &m->w[l])) != HCQ_OK ||
            (st = hcq_buf_write(m->w[l], 0, m->h->w[l], wB)) != HCQ_OK ||
            (st = hcq_buf_alloc(dev, oB, 0, &m->b[l])) != HCQ_OK ||
            (st = hcq_buf_write(m->b[l], 0, m->h->bias[l], oB)) != HCQ_OK ||
            (st = hcq_buf_alloc(dev, oB, 0, &m->m[l])) != HCQ_OK ||
            (st = hcq_buf_alloc(dev, oB, 0, &m->a[l])) != HCQ_OK)
            break;
        if (l < 2)
            st = hcq_buf_alloc(dev, oB, 0, &m->r[l]);
    }
    return st;
}

static void
teardown(struct mlp_dev *m)
{
    hcq_buf_free(m->x);
    for (int l = 0; l < 3; l++) {
        hcq_buf_free(m->w[l]);
        hcq_buf_free(m->b[l]);
        hcq_buf_free(m->m[l]);
        hcq_buf_free(m->a[l]);
        if (l < 2)
            hcq_buf_free(m->r[l]);
    }
    hcq_program_destroy(m->mm);
    hcq_program_destroy(m->add);
    hcq_program_destroy(m->relu);
    hcq_program_destroy(m->fill);
}

static enum hcq_status
rec_graph(struct bench_dev *bd, struct hcq_queue *q, void *arg)
{
    (void)bd;
    (void)q;
    return hcq_graph_replay(arg);
}

static enum hcq_status
check_output(struct mlp_dev *m, bool *ok, char *why, size_t why_B)
{
    uint32_t n = m->h->batch * dims[3];
    float *y = malloc(n * 4);
    if (!y)
        return HCQ_ERR_NOMEM;
    enum hcq_status st = hcq_buf_read(m->a[2], 0, y, n * 4);
    *ok = st == HCQ_OK;
    for (uint32_t i = 0; i < n && *ok; i++)
        if (!(fabs(y[i] - m->h->ref[i]) <= 1e-3 * (1 + fabs(m->h->ref[i])))) {
            snprintf(why, why_B, "y[%u] = %g, expected %g", i, y[i], m->h->ref[i]);
            *ok = false;
        }
    free(y);
    return st;
}

static void
run_variant(struct mlp_dev *m, bool graph)
{
    char params[32];
    snprintf(params, sizeof params, "batch %u", m->h->batch);
    struct bench_result r =
        bench_result_init("mlp", graph ? "mlp_graph" : "mlp_stream", m->d, params, "us", false);
    uint32_t reps = m->ctx->quick ? 5 : m->d->slow ? 20 : 200;
    double *t = calloc(reps, sizeof *t);
    struct hcq_graph *g = NULL;
    char why[128] = "";
    bool ok = false;
    enum hcq_status st =
        t ? ops_launch_fill_u32(m->d->q, m->fill, m->a[2], (uint64_t)m->h->batch * dims[3], 0xABABABABu)
          : HCQ_ERR_NOMEM;
    if (st == HCQ_OK)
        st = hcq_queue_finish(m->d->q, TIMEOUT_NS);
    if (st == HCQ_OK && graph && (st = hcq_graph_begin(m->d->q)) == HCQ_OK) {
        enum hcq_status rs = rec_forward(m->d, m->d->q, m);
        st = hcq_graph_end(m->d->q, &g);
        if (rs != HCQ_OK)
            st = rs;
    }
    if (st == HCQ_OK)
        st = bench_time(m->d, m->d->q, graph ? rec_graph : rec_forward, graph ? (void *)g : (void *)m, 1,
                        reps, t);
    if (st == HCQ_OK)
        st = check_output(m, &ok, why, sizeof why);
    if (st != HCQ_OK) {
        bench_add_status(m->ctx, &r, BENCH_ERROR, "%s", hcq_last_error());
    } else if (!ok) {
        bench_add_status(m->ctx, &r, BENCH_FAIL, "%s", why);
    } else {
        bench_stats(&r, t, reps, 0);
        r.verdict = BENCH_VERIFIED;
        snprintf(r.note, sizeof r.note, "%s per forward pass (8 launches)",
                 m->d->timed_on_device ? "device time" : "host time");
        bench_add(m->ctx, &r);
    }
    hcq_graph_destroy(g);
    free(t);
}

void
bench_mlp(struct bench_ctx *ctx)
{
    static const uint32_t batches[2] = {1, 256};
    for (int bi = 0; bi < 2; bi++) {
        struct mlp_host h = {.batch = batches[bi]};
        uint32_t B = h.batch;
        bool mem = (h.x = malloc((size_t)B * dims[0] * 4)) && (h.ref = malloc((size_t)B * dims[3] * 8));
        for (int l = 0; l < 3 && mem; l++)
            mem = (h.w[l] = malloc((size_t)dims[l] * dims[l + 1] * 4)) &&
                  (h.bias[l] = malloc((size_t)B * dims[l + 1] * 4));
        if (mem) {
            bench_rand_f32(h.x, (size_t)B * dims[0], 0.0f, 1.0f); /* pixel-like inputs */
            for (int l = 0; l < 3; l++) {
                float s = 1.0f / sqrtf((float)dims[l]);
                bench_rand_f32(h.w[l], (size_t)dims[l] * dims[l + 1], -s, s);
                bench_rand_f32(h.bias[l], dims[l + 1], -0.1f, 0.1f);
                for (uint32_t b = 1; b < B; b++) /* the same bias for every row */
                    memcpy(h.bias[l] + (size_t)b * dims[l + 1], h.bias[l], dims[l + 1] * 4);
            }
            host_forward(&h);
            for (int i = 0; i < ctx->dev_count; i++) {
                struct mlp_dev m = {.ctx = ctx, .d = &ctx->devs[i], .h = &h};
                if (m.d->dead)
                    continue;
                if (setup(&m) != HCQ_OK) {
                    char params[32];
                    snprintf(params, sizeof params, "batch %u", B);
                    struct bench_result r = bench_result_init("mlp", "setup", m.d, params, "us", false);
                    bench_add_status(ctx, &r, BENCH_ERROR, "%s", hcq_last_error());
                } else {
                    run_variant(&m, false);
                    if (!m.d->dead)
                        run_variant(&m, true);
                }
                teardown(&m);
            }
        }
        free(h.x);
        free(h.ref);
        for (int l = 0; l < 3; l++) {
            free(h.w[l]);
            free(h.bias[l]);
        }
    }
}
