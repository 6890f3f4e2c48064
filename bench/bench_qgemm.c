/* SPDX-License-Identifier: MIT */
/*
 * bench_qgemm.c - the LLM prefill matmul, part of the matmul group: y f32[m, rows] =
 * x f32[m, k] . dequant(W)[rows, k]^T for quantized weights (Q4_K, Q6_K, Q8_0) at the
 * LLaMA-3.2-1B FFN-up shape (m = 512 tokens, k = 2048, rows = 8192); TFLOP/s = 2 m k rows
 * / time. Rows:
 *   qgemm_<type>     the tensor-core path llm_model.c takes for prefill: k_llm_dequant_f16
 *                    (W -> f16 scratch) + k_llm_cast_f16 (x -> f16) + k_llm_gemm, timed
 *                    together (three launches)
 *   qmatvec_<type>   the one-warp-per-row k_llm_matmul on the same inputs (the previous
 *                    prefill path)
 *   qgemm_f16w       anchor on cuda devices: cuBLAS GemmEx on the already dequantized f16
 *                    W and f16 x (f32 out): the GEMM alone, no dequantization
 * Verification: 64 random entries and the corners against a double dot product of x and
 * the host-dequantized W, within (2^-10 + k 2^-23) sum |x w| (f16 operand rounding, then
 * f32 accumulation; k_llm_gemm.cu) + 1e-6.
 */
#include "bench.h"
#include "k_llm_gemm_params.h"
#include "k_llm_params.h"
#include "llm.h"
#include "ops_half.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define QG_M 512u
#define QG_K 2048u
#define QG_ROWS 8192u

struct qg {
    struct bench_dev *d;
    uint32_t type, m, k, rows;
    bool old; /* k_llm_matmul instead of the tensor-core path */
    struct hcq_program *deq, *cast, *gemm, *mv;
    struct hcq_buf *w, *x, *y, *w16, *x16;
};

static enum hcq_status
launch1(struct hcq_queue *q, struct hcq_program *p, uint32_t grid, uint32_t block, const void *a,
        uint32_t a_B)
{
    const uint32_t g[3] = {grid, 1, 1}, b[3] = {block, 1, 1};
    return hcq_queue_launch(q, p, g, b, a, a_B);
}

static enum hcq_status
rec_qg(struct bench_dev *d, struct hcq_queue *q, void *arg)
{
    struct qg *g = arg;
    (void)d;
    if (g->old) {
        struct k_llm_matmul_params p = {.w_va = hcq_buf_va(g->w),
                                        .x_va = hcq_buf_va(g->x),
                                        .y_va = hcq_buf_va(g->y),
                                        .type = g->type,
                                        .k = g->k,
                                        .rows = g->rows,
                                        .n = g->m,
                                        .x_stride = g->k,
                                        .y_stride = g->rows};
        return launch1(q, g->mv, (g->rows + K_LLM_MATMUL_ROWS - 1) / K_LLM_MATMUL_ROWS, K_LLM_BLOCK, &p,
                       sizeof p);
    }
    struct k_llm_dequant_f16_params dp = {
        .w_va = hcq_buf_va(g->w), .out_va = hcq_buf_va(g->w16), .type = g->type, .k = g->k, .rows = g->rows};
    struct k_llm_cast_f16_params cp = {
        .x_va = hcq_buf_va(g->x), .out_va = hcq_buf_va(g->x16), .n = g->m, .k = g->k, .x_stride = g->k};
    struct k_llm_gemm_params gp = {.x_va = hcq_buf_va(g->x16),
                                   .w_va = hcq_buf_va(g->w16),
                                   .y_va = hcq_buf_va(g->y),
                                   .k = g->k,
                                   .rows = g->rows,
                                   .n = g->m,
                                   .y_stride = g->rows};
    uint32_t wt =
        (uint32_t)(((uint64_t)g->rows * g->k / 8 + K_LLM_GEMM_AUX_BLOCK - 1) / K_LLM_GEMM_AUX_BLOCK);
    uint32_t xt = (uint32_t)(((uint64_t)g->m * g->k / 8 + K_LLM_GEMM_AUX_BLOCK - 1) / K_LLM_GEMM_AUX_BLOCK);
    uint32_t tiles = ((g->m + K_LLM_GEMM_TILE_M - 1) / K_LLM_GEMM_TILE_M) *
                     ((g->rows + K_LLM_GEMM_TILE_N - 1) / K_LLM_GEMM_TILE_N);
    enum hcq_status st = launch1(q, g->deq, wt > 65535 ? 65535 : wt, K_LLM_GEMM_AUX_BLOCK, &dp, sizeof dp);
    if (st == HCQ_OK)
        st = launch1(q, g->cast, xt > 65535 ? 65535 : xt, K_LLM_GEMM_AUX_BLOCK, &cp, sizeof cp);
    if (st == HCQ_OK)
        st = launch1(q, g->gemm, tiles, K_LLM_GEMM_THREADS, &gp, sizeof gp);
    return st;
}

/* 68 entries of y against double dot products over the host-dequantized weights. */
static bool
qg_verify(const struct qg *g, const float *x, const float *wd, const float *y, char *why, size_t why_B)
{
    for (int p = 0; p < 68; p++) {
        uint32_t i = p < 4 ? (p & 1) * (g->m - 1) : (uint32_t)(rand() % g->m);
        uint32_t r = p < 4 ? (p >> 1) * (g->rows - 1) : (uint32_t)(rand() % g->rows);
        double ref = 0, mag = 0;
        for (uint32_t j = 0; j < g->k; j++) {
            double t = (double)x[(size_t)i * g->k + j] * wd[(size_t)r * g->k + j];
            ref += t;
            mag += fabs(t);
        }
        double err = fabs(y[(size_t)i * g->rows + r] - ref);
        if (!(err <= (ldexp(1.0, -10) + g->k * ldexp(1.0, -23)) * mag + 1e-6)) {
            snprintf(why, why_B, "y[%u][%u] = %g is off by %g", i, r, (double)y[(size_t)i * g->rows + r],
                     err);
            return false;
        }
    }
    return true;
}

/* ==== cuBLAS anchor (f16 W and x already on the device) ==== */

struct qg_cublas {
    void *lib, *cuda, *handle;
    int (*create)(void **h);
    int (*destroy)(void *h);
    int (*gemm_ex)(void *h, int ta, int tb, int m, int n, int k, const void *alpha, const void *a, int at,
                   int lda, const void *b, int bt, int ldb, const void *beta, void *c, int ct, int ldc,
                   int compute, int algo);
    int (*stream_query)(void *stream);
};

static bool
qg_cublas_open(struct qg_cublas *c)
{
    static const char *const names[] = {"libcublas.so", "libcublas.so.13", "libcublas.so.12",
                                        "/usr/local/cuda/lib64/libcublas.so"};
    memset(c, 0, sizeof *c);
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !c->lib; i++)
        c->lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    c->cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (c->lib && c->cuda) {
        *(void **)&c->create = dlsym(c->lib, "cublasCreate_v2");
        *(void **)&c->destroy = dlsym(c->lib, "cublasDestroy_v2");
        *(void **)&c->gemm_ex = dlsym(c->lib, "cublasGemmEx");
        *(void **)&c->stream_query = dlsym(c->cuda, "cuStreamQuery");
        if (c->create && c->destroy && c->gemm_ex && c->stream_query && c->create(&c->handle) == 0)
            return true;
    }
    if (c->lib)
        dlclose(c->lib);
    if (c->cuda)
        dlclose(c->cuda);
    memset(c, 0, sizeof *c);
    return false;
}

static void
qg_cublas_close(struct qg_cublas *c)
{
    if (c->handle)
        c->destroy(c->handle);
    dlclose(c->lib);
    dlclose(c->cuda);
}

/* y^T[rows][m] column-major = W (op T: [k][rows] column-major is W[rows][k] row-major) . x^T */
static void
qg_run_cublas(struct bench_ctx *ctx, struct qg *g, struct qg_cublas *cb, const float *x, const float *wd,
              float *y, const char *params)
{
    struct bench_result r = bench_result_init("matmul", "qgemm_f16w", g->d, params, "TFLOP/s", true);
    snprintf(r.backend, sizeof r.backend, "cublas");
    const uint32_t reps = ctx->quick ? 3 : 20, batch = 5;
    double *t = calloc(reps, sizeof *t), flop = 2.0 * g->m * (double)g->k * g->rows;
    float one = 1.0f, zero = 0.0f;
    int rc = 0;
    bool synced = true;
    char why[128];
    for (uint32_t i = 0; t && i < reps + 1 && !rc && synced; i++) {
        uint64_t t0 = hcq_time_ns();
        for (uint32_t b = 0; b < batch && !rc; b++)
            rc = cb->gemm_ex(cb->handle, 1 /* T */, 0 /* N */, (int)g->rows, (int)g->m, (int)g->k, &one,
                             (void *)(uintptr_t)hcq_buf_va(g->w16), 2 /* CUDA_R_16F */, (int)g->k,
                             (void *)(uintptr_t)hcq_buf_va(g->x16), 2, (int)g->k, &zero,
                             (void *)(uintptr_t)hcq_buf_va(g->y), 0 /* CUDA_R_32F */, (int)g->rows,
                             68 /* CUBLAS_COMPUTE_32F */, -1 /* CUBLAS_GEMM_DEFAULT */);
        uint64_t w0 = hcq_time_ns();
        while (!rc && synced) {
            int q = cb->stream_query(NULL);
            if (q == 0)
                break;
            synced = q == 600 && hcq_time_ns() - w0 < 30ull * 1000 * 1000 * 1000;
        }
        if (i)
            t[i - 1] = (double)(hcq_time_ns() - t0) / batch;
    }
    enum hcq_status st = t ? hcq_buf_read(g->y, 0, y, 4ull * g->m * g->rows) : HCQ_ERR_NOMEM;
    if (st != HCQ_OK || rc || !synced)
        bench_add_status(ctx, &r, BENCH_ERROR, "%s", st != HCQ_OK ? hcq_last_error() : "cuBLAS call failed");
    else if (!qg_verify(g, x, wd, y, why, sizeof why))
        bench_add_status(ctx, &r, BENCH_FAIL, "%s", why);
    else {
        bench_stats(&r, t, reps, flop / 1e3);
        r.verdict = BENCH_VERIFIED;
        snprintf(r.note, sizeof r.note, "anchor: cuBLAS on pre-dequantized f16 W, host time / %u calls",
                 batch);
        bench_add(ctx, &r);
    }
    free(t);
}

static void
qg_run(struct bench_ctx *ctx, struct qg *g, const float *x, const float *wd, float *y, const char *name,
       const char *params)
{
    struct bench_result r = bench_result_init("matmul", name, g->d, params, "TFLOP/s", true);
    double flop = 2.0 * g->m * (double)g->k * g->rows, one = 0, *t = NULL;
    uint32_t batch = 1, reps;
    char why[128];
    enum hcq_status st = hcq_queue_finish(g->d->q, 30ull * 1000 * 1000 * 1000);
    if (st == HCQ_OK)
        st = bench_batch(g->d, g->d->q, rec_qg, g, 200e3, 20, &batch, &one);
    reps = bench_reps(ctx, one * batch, 0.3, 3, 30);
    if (st == HCQ_OK && !(t = calloc(reps, sizeof *t)))
        st = HCQ_ERR_NOMEM;
    if (st == HCQ_OK)
        st = bench_time(g->d, g->d->q, rec_qg, g, batch, reps, t);
    if (st == HCQ_OK)
        st = hcq_buf_read(g->y, 0, y, 4ull * g->m * g->rows);
    if (st != HCQ_OK)
        bench_add_status(ctx, &r, BENCH_ERROR, "%s", hcq_last_error());
    else if (!qg_verify(g, x, wd, y, why, sizeof why))
        bench_add_status(ctx, &r, BENCH_FAIL, "%s", why);
    else {
        bench_stats(&r, t, reps, flop / 1e3);
        r.verdict = BENCH_VERIFIED;
        snprintf(r.note, sizeof r.note, "%s",
                 g->old ? "k_llm_matmul (one warp per row)"
                        : "dequant->f16 + cast + mma.sync GEMM, 3 launches");
        bench_add(ctx, &r);
    }
    free(t);
}

void
bench_qgemm(struct bench_ctx *ctx)
{
    static const uint32_t types[] = {LLM_TYPE_Q4_K, LLM_TYPE_Q6_K, LLM_TYPE_Q8_0};
    const uint32_t m = ctx->quick ? 16 : QG_M, k = ctx->quick ? 256 : QG_K, rows = ctx->quick ? 64 : QG_ROWS;
    float *x = malloc(4ull * m * k), *w = malloc(4ull * rows * k), *wd = malloc(4ull * rows * k);
    float *y = malloc(4ull * m * rows);
    uint16_t *h16 = malloc(2ull * (m > rows ? m : rows) * k);
    void *wq = malloc(llm_type_row_bytes(LLM_TYPE_F32, k) * rows); /* >= any quantized size */
    struct qg_cublas cb;
    bool have_cublas = false;
    for (int i = 0; i < ctx->dev_count && !have_cublas; i++)
        if (!strcmp(ctx->devs[i].info.backend, "cuda"))
            have_cublas = qg_cublas_open(&cb);
    char params[64];
    snprintf(params, sizeof params, "%ux%ux%u", m, rows, k);
    for (size_t ti = 0; x && w && wd && y && h16 && wq && ti < sizeof types / sizeof types[0]; ti++) {
        const uint32_t type = types[ti];
        const uint64_t wq_B = llm_type_row_bytes(type, k) * rows;
        bench_rand_f32(x, (size_t)m * k, -1.0f, 1.0f);
        bench_rand_f32(w, (size_t)rows * k, -1.0f, 1.0f);
        if (llm_quantize(type, w, wq, (uint64_t)rows * k) || llm_dequantize(type, wq, wd, (uint64_t)rows * k))
            break;
        char name[32], oname[32];
        snprintf(name, sizeof name, "qgemm_%s", llm_type_name(type));
        snprintf(oname, sizeof oname, "qmatvec_%s", llm_type_name(type));
        for (int i = 0; i < ctx->dev_count; i++) {
            struct qg g = {.d = &ctx->devs[i], .type = type, .m = m, .k = k, .rows = rows};
            if (g.d->dead)
                continue;
            if (g.d->slow && !ctx->quick) {
                struct bench_result r = bench_result_init("matmul", name, g.d, params, "TFLOP/s", true);
                bench_add_status(ctx, &r, BENCH_SKIPPED, "size capped on host-run devices");
                continue;
            }
            struct hcq_device *dev = g.d->dev;
            enum hcq_status st = hcq_program_load(dev, "k_llm_dequant_f16", &g.deq);
            if (!st)
                st = hcq_program_load(dev, "k_llm_cast_f16", &g.cast);
            if (!st)
                st = hcq_program_load(dev, "k_llm_gemm", &g.gemm);
            if (!st)
                st = hcq_program_load(dev, "k_llm_matmul", &g.mv);
            if (!st)
                st = hcq_buf_alloc(dev, wq_B, HCQ_MEM_DEVICE, &g.w);
            if (!st)
                st = hcq_buf_alloc(dev, 4ull * m * k, HCQ_MEM_DEVICE, &g.x);
            if (!st)
                st = hcq_buf_alloc(dev, 4ull * m * rows, HCQ_MEM_DEVICE, &g.y);
            if (!st)
                st = hcq_buf_alloc(dev, 2ull * rows * k, HCQ_MEM_DEVICE, &g.w16);
            if (!st)
                st = hcq_buf_alloc(dev, 2ull * m * k, HCQ_MEM_DEVICE, &g.x16);
            if (!st)
                st = hcq_buf_write(g.w, 0, wq, wq_B);
            if (!st)
                st = hcq_buf_write(g.x, 0, x, 4ull * m * k);
            if (st) {
                struct bench_result r = bench_result_init("matmul", name, g.d, params, "TFLOP/s", true);
                bench_add_status(ctx, &r, BENCH_ERROR, "%s", hcq_last_error());
            } else {
                qg_run(ctx, &g, x, wd, y, name, params);
                g.old = true;
                qg_run(ctx, &g, x, wd, y, oname, params);
                if (have_cublas && !strcmp(g.d->info.backend, "cuda") && !g.d->dead) {
                    /* the anchor reads the same dequantized f16 W and f16 x as the GEMM */
                    for (size_t j = 0; j < (size_t)rows * k; j++)
                        h16[j] = ops_half_f32_to_f16(wd[j]);
                    if (hcq_buf_write(g.w16, 0, h16, 2ull * rows * k) == HCQ_OK) {
                        for (size_t j = 0; j < (size_t)m * k; j++)
                            h16[j] = ops_half_f32_to_f16(x[j]);
                        if (hcq_buf_write(g.x16, 0, h16, 2ull * m * k) == HCQ_OK)
                            qg_run_cublas(ctx, &g, &cb, x, wd, y, params);
                    }
                }
            }
            hcq_buf_free(g.w), hcq_buf_free(g.x), hcq_buf_free(g.y), hcq_buf_free(g.w16), hcq_buf_free(g.x16);
            hcq_program_destroy(g.deq), hcq_program_destroy(g.cast), hcq_program_destroy(g.gemm);
            hcq_program_destroy(g.mv);
        }
    }
    if (have_cublas)
        qg_cublas_close(&cb);
    free(x), free(w), free(wd), free(y), free(h16), free(wq);
}
