/* SPDX-License-Identifier: MIT */
/*
 * bench_matmul.c - square matrix products C[n,n] = A[n,n] . B[n,n], row-major, with the
 * library's kernels: matmul_f32 / matmul_f16 rows (k_matmul_*, CUDA cores, f32 out) and
 * gemm_f16 / gemm_bf16 rows (the library's tensor-core GEMM, ops_gemm_kernel: k_gemm_wgmma_*
 * on sm_90, k_gemm_* mma.sync elsewhere; f32 accumulate and out; where wgmma runs, the
 * mma.sync kernel follows as gemm_f16_mma / gemm_bf16_mma, the before row), n = 256 .. 8192;
 * TFLOP/s = 2 n^3 / time. Group `gemm` (opt-in): the tensor-core rows alone, n = 1024 ..
 * 8192. On a cuda device cuBLAS (dlopen("libcublas.so"),
 * cublasSgemm_v2 / cublasGemmEx with f32 compute and f32 C) runs the same inputs as the
 * anchor row of matmul_f32, gemm_f16 and gemm_bf16, backend "cublas".
 * Napkin bounds: H100 SXM ~67 TFLOP/s FP32 (non-tensor), ~990 TFLOP/s dense FP16 tensor
 * core (~800 measured bf16 in KINDS.md); the library's kernel is a 16x16-tile CUDA-core
 * kernel, so expect a few TFLOP/s f32 and no tensor cores for f16: the cuBLAS row shows
 * the distance. Small n (256) is launch-bound: 33.5 MFLOP takes ~1 us at 30 TFLOP/s.
 * Verification: C is poisoned; after timing, 64 random entries and the four corners are
 * compared with a double-precision dot product, within the worst-case f32 summation bound
 * k * 2^-23 * sum |a_ik b_kj| (a wrong tile or index misses it by orders of magnitude).
 */
#include "bench.h"
#include "ops.h"
#include "ops_half.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIMEOUT_NS (30ull * 1000 * 1000 * 1000)

struct mm {
    struct bench_ctx *ctx;
    struct bench_dev *d;
    bool f16; /* 16-bit inputs (f16, or bf16 when bf16) */
    bool bf16;
    bool mma;          /* a tensor-core kernel (kname) instead of k_matmul_* */
    const char *kname; /* mma: k_gemm_* or k_gemm_wgmma_* */
    uint32_t n;
    const float *a, *b;      /* f32 values (for f16: already rounded to f16) */
    const uint16_t *ah, *bh; /* f16 bits (f16 runs) */
    float *got;              /* read-back of C */
    struct hcq_buf *ba, *bb, *bc;
    struct hcq_program *prog, *fill;
};

/* ==== Verification ==== */

static bool
check_entry(const struct mm *m, uint32_t i, uint32_t j, double *err_out)
{
    double ref = 0, mag = 0;
    for (uint32_t k = 0; k < m->n; k++) {
        double p = (double)m->a[(size_t)i * m->n + k] * m->b[(size_t)k * m->n + j];
        ref += p;
        mag += fabs(p);
    }
    double got = m->got[(size_t)i * m->n + j];
    *err_out = fabs(got - ref);
    return *err_out <= m->n * 1.2e-7 * mag + 1e-6;
}

static bool
verify(const struct mm *m, char *why, size_t why_B)
{
    uint32_t last = m->n - 1;
    uint32_t pts[68][2] = {{0, 0}, {0, last}, {last, 0}, {last, last}};
    for (int p = 4; p < 68; p++) {
        pts[p][0] = (uint32_t)(rand() % m->n);
        pts[p][1] = (uint32_t)(rand() % m->n);
    }
    for (int p = 0; p < 68; p++) {
        double err;
        if (!check_entry(m, pts[p][0], pts[p][1], &err)) {
            snprintf(why, why_B, "C[%u][%u] = %g is off by %g", pts[p][0], pts[p][1],
                     m->got[(size_t)pts[p][0] * m->n + pts[p][1]], err);
            return false;
        }
    }
    return true;
}

/* ==== The library's kernels ==== */

static enum hcq_status
rec_mm(struct bench_dev *d, struct hcq_queue *q, void *arg)
{
    struct mm *m = arg;
    (void)d;
    if (m->mma)
        return ops_launch_gemm(q, m->prog, m->bc, m->ba, m->bb, m->n, m->n, m->n);
    return ops_launch_matmul(q, m->prog, m->bc, m->ba, m->bb, m->n, m->n, m->n);
}

/* Row name: matmul_* for the CUDA-core k_matmul kernels, gemm_* for the library's
 * tensor-core GEMM (ops_gemm_kernel) and the cuBLAS anchors, gemm_*_mma for the mma.sync
 * kernel where the library runs wgmma. */
static const char *
row_name(const struct mm *m, bool tensor)
{
    bool before = tensor && m->kname &&
                  strcmp(m->kname, ops_gemm_kernel_for(&m->d->info, m->bf16, false, m->n, m->n)) != 0;
    if (!m->f16)
        return "matmul_f32";
    if (m->bf16)
        return before ? "gemm_bf16_mma" : "gemm_bf16";
    return tensor ? (before ? "gemm_f16_mma" : "gemm_f16") : "matmul_f16";
}

static void
run_kernel(struct mm *m)
{
    char params[48];
    snprintf(params, sizeof params, "%ux%ux%u", m->n, m->n, m->n);
    struct bench_result r = bench_result_init("matmul", row_name(m, m->mma), m->d, params, "TFLOP/s", true);
    uint64_t nn = (uint64_t)m->n * m->n;
    size_t in_B = nn * (m->f16 ? 2 : 4);
    double flop = 2.0 * m->n * (double)nn, one = 0, *t = NULL;
    const char *kname = m->mma ? m->kname : m->f16 ? "k_matmul_f16" : "k_matmul_f32";
    const bool wg = m->mma && !strncmp(kname, "k_gemm_wgmma_", 13);
    uint32_t batch = 1, reps;
    char why[128];
    enum hcq_status st = hcq_program_load(m->d->dev, kname, &m->prog);
    if (st == HCQ_OK)
        st = hcq_program_load(m->d->dev, "k_fill_u32", &m->fill);
    if (st == HCQ_OK)
        st = hcq_buf_alloc(m->d->dev, in_B, HCQ_MEM_DEVICE, &m->ba);
    if (st == HCQ_OK)
        st = hcq_buf_alloc(m->d->dev, in_B, HCQ_MEM_DEVICE, &m->bb);
    if (st == HCQ_OK)
        st = hcq_buf_alloc(m->d->dev, nn * 4, HCQ_MEM_DEVICE, &m->bc);
    if (st == HCQ_OK)
        st = hcq_buf_write(m->ba, 0, m->f16 ? (const void *)m->ah : (const void *)m->a, in_B);
    if (st == HCQ_OK)
        st = hcq_buf_write(m->bb, 0, m->f16 ? (const void *)m->bh : (const void *)m->b, in_B);
    if (st == HCQ_OK)
        st = ops_launch_fill_u32(m->d->q, m->fill, m->bc, nn, 0xABABABABu);
    if (st == HCQ_OK)
        st = hcq_queue_finish(m->d->q, TIMEOUT_NS);
    if (st == HCQ_OK)
        st = bench_batch(m->d, m->d->q, rec_mm, m, 200e3, 50, &batch, &one);
    reps = bench_reps(m->ctx, one * batch, m->n >= 4096 ? 0.6 : 0.25, 3, 50);
    if (st == HCQ_OK && !(t = calloc(reps, sizeof *t)))
        st = HCQ_ERR_NOMEM;
    if (st == HCQ_OK)
        st = bench_time(m->d, m->d->q, rec_mm, m, batch, reps, t);
    if (st == HCQ_OK)
        st = hcq_buf_read(m->bc, 0, m->got, nn * 4);
    if (st != HCQ_OK) {
        bench_add_status(m->ctx, &r, BENCH_ERROR, "%s", hcq_last_error());
    } else if (!verify(m, why, sizeof why)) {
        bench_add_status(m->ctx, &r, BENCH_FAIL, "%s", why);
    } else {
        bench_stats(&r, t, reps, flop / 1e3);
        r.verdict = BENCH_VERIFIED;
        snprintf(r.note, sizeof r.note, "%s%s%s",
                 !m->mma || m->d->slow             ? ""
                 : wg && strstr(m->kname, "_n128") ? "wgmma 128x128 tiles, "
                 : wg                              ? "wgmma, "
                                                   : "mma.sync, ",
                 m->d->timed_on_device ? "device time" : "host time", batch > 1 ? ", batched" : "");
        bench_add(m->ctx, &r);
    }
    free(t);
    hcq_buf_free(m->ba);
    hcq_buf_free(m->bb);
    hcq_buf_free(m->bc);
    hcq_program_destroy(m->prog);
    hcq_program_destroy(m->fill);
    m->ba = m->bb = m->bc = NULL;
    m->prog = m->fill = NULL;
}

/* ==== cuBLAS anchor ==== */

/* Values from the cuBLAS documentation (cublasOperation_t, cudaDataType,
 * cublasComputeType_t, cublasGemmAlgo_t). */
#define CUBLAS_OP_N 0
#define CUDA_R_32F 0
#define CUDA_R_16F 2
#define CUDA_R_16BF 14
#define CUBLAS_COMPUTE_32F 68
#define CUBLAS_GEMM_DEFAULT (-1)

struct cublas {
    void *lib, *cuda;
    void *handle;
    int (*create)(void **h);
    int (*destroy)(void *h);
    int (*sgemm)(void *h, int ta, int tb, int m, int n, int k, const float *alpha, const void *a, int lda,
                 const void *b, int ldb, const float *beta, void *c, int ldc);
    int (*gemm_ex)(void *h, int ta, int tb, int m, int n, int k, const void *alpha, const void *a, int at,
                   int lda, const void *b, int bt, int ldb, const void *beta, void *c, int ct, int ldc,
                   int compute, int algo);
    int (*stream_query)(void *stream); /* libcuda cuStreamQuery: the legacy stream cuBLAS uses */
};

static bool
cublas_open(struct cublas *c)
{
    static const char *const names[] = {"libcublas.so", "libcublas.so.13", "libcublas.so.12",
                                        "/usr/local/cuda/lib64/libcublas.so"};
    memset(c, 0, sizeof *c);
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !c->lib; i++)
        c->lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    c->cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!c->lib || !c->cuda)
        goto fail;
    *(void **)&c->create = dlsym(c->lib, "cublasCreate_v2");
    *(void **)&c->destroy = dlsym(c->lib, "cublasDestroy_v2");
    *(void **)&c->sgemm = dlsym(c->lib, "cublasSgemm_v2");
    *(void **)&c->gemm_ex = dlsym(c->lib, "cublasGemmEx");
    *(void **)&c->stream_query = dlsym(c->cuda, "cuStreamQuery");
    if (!c->create || !c->destroy || !c->sgemm || !c->gemm_ex || !c->stream_query ||
        c->create(&c->handle) != 0)
        goto fail;
    return true;
fail:
    if (c->lib)
        dlclose(c->lib);
    if (c->cuda)
        dlclose(c->cuda);
    memset(c, 0, sizeof *c);
    return false;
}

static void
cublas_close(struct cublas *c)
{
    if (c->handle)
        c->destroy(c->handle);
    if (c->lib)
        dlclose(c->lib);
    if (c->cuda)
        dlclose(c->cuda);
    memset(c, 0, sizeof *c);
}

/* Bounded wait for the legacy stream (cuStreamQuery(NULL) == CUDA_SUCCESS). */
static bool
cublas_sync(struct cublas *c)
{
    uint64_t t0 = hcq_time_ns();
    for (;;) {
        int r = c->stream_query(NULL);
        if (r == 0)
            return true;
        if (r != 600 /* CUDA_ERROR_NOT_READY */ || hcq_time_ns() - t0 > TIMEOUT_NS)
            return false;
    }
}

/* Row-major C = A.B is column-major C^T = B^T.A^T: pass B first, all leading dims n. */
static int
cublas_gemm(struct cublas *c, const struct mm *m)
{
    float one = 1.0f, zero = 0.0f;
    int n = (int)m->n;
    void *a = (void *)(uintptr_t)hcq_buf_va(m->ba), *b = (void *)(uintptr_t)hcq_buf_va(m->bb);
    void *cc = (void *)(uintptr_t)hcq_buf_va(m->bc);
    if (!m->f16)
        return c->sgemm(c->handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, b, n, a, n, &zero, cc, n);
    int t = m->bf16 ? CUDA_R_16BF : CUDA_R_16F;
    return c->gemm_ex(c->handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, b, t, n, a, t, n, &zero, cc,
                      CUDA_R_32F, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
}

static void
run_cublas(struct mm *m, struct cublas *cb)
{
    char params[48];
    snprintf(params, sizeof params, "%ux%ux%u", m->n, m->n, m->n);
    struct bench_result r = bench_result_init("matmul", row_name(m, true), m->d, params, "TFLOP/s", true);
    snprintf(r.backend, sizeof r.backend, "cublas");
    uint64_t nn = (uint64_t)m->n * m->n;
    size_t in_B = nn * (m->f16 ? 2 : 4);
    double flop = 2.0 * m->n * (double)nn;
    uint32_t reps = m->ctx->quick ? 3 : 20;
    double *t = calloc(reps, sizeof *t);
    char why[128];
    enum hcq_status st = t ? hcq_program_load(m->d->dev, "k_fill_u32", &m->fill) : HCQ_ERR_NOMEM;
    if (st == HCQ_OK)
        st = hcq_buf_alloc(m->d->dev, in_B, HCQ_MEM_DEVICE, &m->ba);
    if (st == HCQ_OK)
        st = hcq_buf_alloc(m->d->dev, in_B, HCQ_MEM_DEVICE, &m->bb);
    if (st == HCQ_OK)
        st = hcq_buf_alloc(m->d->dev, nn * 4, HCQ_MEM_DEVICE, &m->bc);
    if (st == HCQ_OK)
        st = hcq_buf_write(m->ba, 0, m->f16 ? (const void *)m->ah : (const void *)m->a, in_B);
    if (st == HCQ_OK)
        st = hcq_buf_write(m->bb, 0, m->f16 ? (const void *)m->bh : (const void *)m->b, in_B);
    if (st == HCQ_OK)
        st = ops_launch_fill_u32(m->d->q, m->fill, m->bc, nn, 0xABABABABu);
    if (st == HCQ_OK)
        st = hcq_queue_finish(m->d->q, TIMEOUT_NS);
    int rc = 0;
    bool synced = true;
    /* Host time per call over a batch long enough to hide the call overhead. */
    uint32_t batch = m->n <= 1024 ? 20 : 2;
    for (uint32_t i = 0; i < reps + 1 && st == HCQ_OK && !rc && synced; i++) {
        uint64_t t0 = hcq_time_ns();
        for (uint32_t b = 0; b < batch && !rc; b++)
            rc = cublas_gemm(cb, m);
        synced = cublas_sync(cb);
        if (i)
            t[i - 1] = (double)(hcq_time_ns() - t0) / batch;
    }
    if (st == HCQ_OK)
        st = hcq_buf_read(m->bc, 0, m->got, nn * 4);
    if (st != HCQ_OK || rc || !synced) {
        bench_add_status(m->ctx, &r, BENCH_ERROR, "%s",
                         st != HCQ_OK ? hcq_last_error() : "cuBLAS call failed");
    } else if (!verify(m, why, sizeof why)) {
        bench_add_status(m->ctx, &r, BENCH_FAIL, "%s", why);
    } else {
        bench_stats(&r, t, reps, flop / 1e3);
        r.verdict = BENCH_VERIFIED;
        snprintf(r.note, sizeof r.note, "anchor: cuBLAS, f32 compute, host time / %u calls", batch);
        bench_add(m->ctx, &r);
    }
    free(t);
    hcq_buf_free(m->ba);
    hcq_buf_free(m->bb);
    hcq_buf_free(m->bc);
    hcq_program_destroy(m->fill);
    m->ba = m->bb = m->bc = NULL;
    m->fill = NULL;
}

/* One size, one input type, one device: the kernel rows, then the cuBLAS anchor. */
static void
run_device(struct bench_ctx *ctx, struct bench_dev *d, const struct mm *tmpl, bool tensor_only,
           struct cublas *cb, bool have_cublas)
{
    const bool f16 = tmpl->f16, bf16 = tmpl->bf16;
    const uint32_t n = tmpl->n;
    /* kernels: f32 -> k_matmul_f32; f16 -> k_matmul_f16 and the GEMM; bf16 -> the GEMM */
    for (int mma = bf16 || tensor_only; mma <= f16; mma++) {
        /* the library's GEMM, then (where that is wgmma) the mma.sync kernel it replaced */
        const char *pick = ops_gemm_kernel_for(&d->info, bf16, false, n, n);
        const char *const knames[2] = {pick, bf16 ? "k_gemm_bf16" : "k_gemm_f16"};
        for (int kv = 0; kv < (mma && strcmp(knames[0], knames[1]) ? 2 : 1); kv++) {
            struct mm m = *tmpl;
            m.d = d;
            m.mma = mma;
            m.kname = mma ? knames[kv] : NULL;
            if (m.d->dead)
                continue;
            /* host-run devices (twins, double accumulation) get small sizes; the
             * CUDA-core kernel stops at 4096 on GPUs (8192^3 takes ~0.15 s a call) */
            bool cap = m.d->slow && n > (m.d->info.emulated ? 128u : 512u);
            if (cap) {
                char params[48];
                snprintf(params, sizeof params, "%ux%ux%u", n, n, n);
                struct bench_result r =
                    bench_result_init("matmul", row_name(&m, mma), m.d, params, "TFLOP/s", true);
                bench_add_status(ctx, &r, BENCH_SKIPPED, "size capped on host-run devices");
                continue;
            }
            run_kernel(&m);
        }
        struct mm m = *tmpl;
        m.d = d;
        m.mma = mma;
        if (have_cublas && !strcmp(d->info.backend, "cuda") && !d->dead && (mma || !f16))
            run_cublas(&m, cb);
    }
}

static void
matmul_sizes(struct bench_ctx *ctx, const uint32_t *sizes, int count, bool tensor_only)
{
    struct cublas cb;
    bool have_cublas = false;
    for (int i = 0; i < ctx->dev_count; i++)
        if (!strcmp(ctx->devs[i].info.backend, "cuda") && !have_cublas)
            have_cublas = cublas_open(&cb);
    for (int s = 0; s < count; s++) {
        uint32_t n = sizes[s];
        size_t nn = (size_t)n * n;
        float *a = malloc(nn * 4), *b = malloc(nn * 4), *got = malloc(nn * 4);
        uint16_t *ah = malloc(nn * 2), *bh = malloc(nn * 2);
        if (!a || !b || !got || !ah || !bh) {
            free(a), free(b), free(got), free(ah), free(bh);
            break;
        }
        for (int ty = tensor_only ? 1 : 0; ty < 3; ty++) { /* f32, f16, bf16 */
            const bool f16 = ty > 0, bf16 = ty == 2;
            bench_rand_f32(a, nn, -1.0f, 1.0f);
            bench_rand_f32(b, nn, -1.0f, 1.0f);
            if (f16) { /* round the inputs so the reference sees what the kernel sees */
                for (size_t i = 0; i < nn; i++) {
                    ah[i] = bf16 ? ops_half_f32_to_bf16(a[i]) : ops_half_f32_to_f16(a[i]);
                    bh[i] = bf16 ? ops_half_f32_to_bf16(b[i]) : ops_half_f32_to_f16(b[i]);
                    a[i] = bf16 ? ops_half_bf16_to_f32(ah[i]) : ops_half_f16_to_f32(ah[i]);
                    b[i] = bf16 ? ops_half_bf16_to_f32(bh[i]) : ops_half_f16_to_f32(bh[i]);
                }
            }
            const struct mm tmpl = {
                .ctx = ctx, .f16 = f16, .bf16 = bf16, .n = n, .a = a, .b = b, .ah = ah, .bh = bh, .got = got};
            for (int i = 0; i < ctx->dev_count; i++)
                run_device(ctx, &ctx->devs[i], &tmpl, tensor_only, &cb, have_cublas);
        }
        free(a), free(b), free(got), free(ah), free(bh);
    }
    if (have_cublas)
        cublas_close(&cb);
}

void
bench_matmul(struct bench_ctx *ctx)
{
    static const uint32_t full[] = {256, 512, 1024, 2048, 4096, 8192};
    static const uint32_t quick[] = {64, 128};
    matmul_sizes(ctx, ctx->quick ? quick : full, ctx->quick ? 2 : 6, false);
    bench_qgemm(ctx);
}

void
bench_gemm(struct bench_ctx *ctx)
{
    static const uint32_t full[] = {1024, 2048, 4096, 8192};
    static const uint32_t quick[] = {64, 128};
    matmul_sizes(ctx, ctx->quick ? quick : full, ctx->quick ? 2 : 4, true);
}
