/* SPDX-License-Identifier: MIT */
/*
 * test_llm_gemma_kernels.c - what Gemma adds to the kernels, on every device that opens (cpu: the
 * twins; HCQ_TEST_DEVS, else cpu emu:gh100 cuda:0 rm:0) against double precision: k_llm_attn with
 * a sliding window (first key max(0, pos - window + 1)) and a soft-capped score (cap * tanh(s / cap)),
 * head_dim 256 and 128, GQA, one query and batches of 20, windows shorter than, equal to and longer
 * than the context, past a chunk of K_LLM_ATTN_CHUNK positions; k_llm_act's GeGLU, scale, soft-cap
 * and add modes, and SwiGLU / GeGLU over one [rows][gate | up] buffer into f16 only (a batch step's
 * fused gate|up matmul). Fresh random inputs, outputs poisoned (NaN) first, every element checked.
 * Bounds: attention as test_llm_attn_prefill's f32 kernel (|q|, |k| <= 2, |V| <= 1: 2e-5 + 1e-6,
 * dots of 256 terms: 4e-5); act: 2e-6 relative (absolute under 1: gelu(x) for x near -6 cancels);
 * its f16 output: f16's rounding, 2^-11 (4.9e-4).
 */
#include "attn_ref.h" /* attn_ref_kv_round: the f16 cache */
#include "harness.h"
#include "hcq.h"
#include "k_llm_params.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x452821E638D01377ull;
static float
frand(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (float)((rng >> 11) * (1.0 / 9007199254740992.0)) * 2.0f - 1.0f;
}

/* One query head over keys first..n-1, in double. */
static void
ref_head(const float *q, const float *kc, const float *vc, uint32_t kv, uint32_t g, uint32_t hd,
         uint32_t first, uint32_t n, double scale, double cap, double *w, double *out)
{
    double mx = -1e300, z = 0;
    for (uint32_t u = first; u < n; u++) {
        double d = 0;
        for (uint32_t e = 0; e < hd; e++)
            d += (double)q[e] * kc[(size_t)u * kv + g * hd + e];
        w[u] = cap > 0 ? cap * tanh(d * scale / cap) : d * scale;
        mx = fmax(mx, w[u]);
    }
    for (uint32_t u = first; u < n; u++)
        z += (w[u] = exp(w[u] - mx));
    for (uint32_t e = 0; e < hd; e++) {
        double r = 0;
        for (uint32_t u = first; u < n; u++)
            r += w[u] * vc[(size_t)u * kv + g * hd + e];
        out[e] = r / z;
    }
}

/* One launch of k_llm_attn and its check; returns the worst error (INFINITY on a NaN). */
static double
attn_case(struct th *t, struct hcq_device *dev, struct hcq_queue *q, struct hcq_program *prog, uint32_t H,
          uint32_t HK, uint32_t hd, uint32_t n, uint32_t pos0, uint32_t window, float cap)
{
    const uint32_t kv = HK * hd, qs = H * hd + 2 * kv, n_ctx = pos0 + n + 1;
    float *kc = malloc(4ull * n_ctx * kv), *vc = malloc(4ull * n_ctx * kv), *qv = malloc(4ull * n * qs),
          *out = malloc(4ull * n * H * hd);
    double *w = malloc(8ull * n_ctx), *ref = malloc(8ull * hd), worst = 0;
    uint16_t *kh = malloc(2ull * n_ctx * kv), *vh = malloc(2ull * n_ctx * kv);
    struct hcq_buf *b[4] = {NULL, NULL, NULL, NULL};
    if (!kc || !vc || !qv || !out || !w || !ref || !kh || !vh) {
        worst = INFINITY;
        goto out;
    }
    for (size_t i = 0; i < (size_t)n_ctx * kv; i++)
        kc[i] = 2.0f * frand(), vc[i] = frand();
    attn_ref_kv_round(kc, kh, (size_t)n_ctx * kv); /* the cache holds f16 (K_LLM_KV_B) */
    attn_ref_kv_round(vc, vh, (size_t)n_ctx * kv);
    for (size_t i = 0; i < (size_t)n * qs; i++)
        qv[i] = 2.0f * frand();
    for (size_t i = 0; i < (size_t)n * H * hd; i++)
        out[i] = NAN;
    const uint64_t sz[4] = {2ull * n_ctx * kv, 2ull * n_ctx * kv, 4ull * n * qs, 4ull * n * H * hd};
    const void *src[4] = {kh, vh, qv, out};
    for (int i = 0; i < 4; i++)
        if (hcq_buf_alloc(dev, sz[i], HCQ_MEM_DEVICE, &b[i]) || hcq_buf_write(b[i], 0, src[i], sz[i])) {
            worst = INFINITY;
            goto out;
        }
    const float scale = 1.0f / sqrtf((float)hd);
    struct k_llm_attn_params p = {
        .q_va = hcq_buf_va(b[2]),
        .kc_va = hcq_buf_va(b[0]),
        .vc_va = hcq_buf_va(b[1]),
        .out_va = hcq_buf_va(b[3]),
        .n_tok = n,
        .pos0 = pos0,
        .n_head = H,
        .n_head_kv = HK,
        .hd = hd,
        .q_stride = qs,
        .scale = scale,
        .n_ctx = n_ctx,
        .softcap = cap,
        .window = window,
    };
    uint32_t grid[3] = {H, n, 1}, block[3] = {256, 1, 1};
    if (hcq_queue_launch(q, prog, grid, block, &p, sizeof p) ||
        hcq_queue_finish(q, 20ull * 1000 * 1000 * 1000) || hcq_buf_read(b[3], 0, out, sz[3])) {
        th_fail(t, __FILE__, __LINE__, "launch: %s", th_last_error());
        worst = INFINITY;
        goto out;
    }
    for (uint32_t i = 0; i < n; i++) {
        const uint32_t np = pos0 + i + 1, first = window && np > window ? np - window : 0;
        for (uint32_t h = 0; h < H; h++) {
            ref_head(qv + (size_t)i * qs + (size_t)h * hd, kc, vc, kv, h / (H / HK), hd, first, np, scale,
                     cap, w, ref);
            for (uint32_t e = 0; e < hd; e++) {
                const double err = fabs(out[((size_t)i * H + h) * hd + e] - ref[e]);
                worst = err != err ? INFINITY : fmax(worst, err);
            }
        }
    }
out:
    for (int i = 0; i < 4; i++)
        hcq_buf_free(b[i]);
    free(kc), free(vc), free(qv), free(out), free(w), free(ref), free(kh), free(vh);
    return worst;
}

/* k_llm_act's mode on (x, b) in double (k_llm_params.h) */
static double
act_ref(uint32_t mode, double x, double b, double scale)
{
    switch (mode) {
    case K_LLM_ACT_SWIGLU:
        return x / (1 + exp(-x)) * b;
    case K_LLM_ACT_GELU:
    case K_LLM_ACT_GEGLU:
        return 0.5 * x * (1 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))) *
               (mode == K_LLM_ACT_GEGLU ? b : 1.0);
    case K_LLM_ACT_SCALE:
        return x * scale;
    case K_LLM_ACT_SOFTCAP:
        return scale * tanh(x / scale);
    default:
        return x + b;
    }
}

/* k_llm_act's Gemma modes over n elements; returns the worst relative error. */
static double
act_case(struct th *t, struct hcq_device *dev, struct hcq_queue *q, struct hcq_program *prog, uint32_t mode,
         float scale)
{
    const uint32_t n = 1000 + (uint32_t)(mode * 37);
    float *a = malloc(4ull * n), *b = malloc(4ull * n), *y = malloc(4ull * n);
    struct hcq_buf *ba = NULL, *bb = NULL, *by = NULL;
    double worst = 0;
    if (!a || !b || !y) {
        worst = INFINITY;
        goto out;
    }
    for (uint32_t j = 0; j < n; j++)
        a[j] = 6.0f * frand(), b[j] = 3.0f * frand(), y[j] = NAN;
    if (hcq_buf_alloc(dev, 4ull * n, HCQ_MEM_DEVICE, &ba) ||
        hcq_buf_alloc(dev, 4ull * n, HCQ_MEM_DEVICE, &bb) ||
        hcq_buf_alloc(dev, 4ull * n, HCQ_MEM_DEVICE, &by) || hcq_buf_write(ba, 0, a, 4ull * n) ||
        hcq_buf_write(bb, 0, b, 4ull * n) || hcq_buf_write(by, 0, y, 4ull * n)) {
        worst = INFINITY;
        goto out;
    }
    struct k_llm_act_params p = {.a_va = hcq_buf_va(ba),
                                 .b_va = hcq_buf_va(bb),
                                 .y_va = hcq_buf_va(by),
                                 .n = n,
                                 .mode = mode,
                                 .scale = scale};
    uint32_t grid[3] = {(n + K_LLM_BLOCK - 1) / K_LLM_BLOCK, 1, 1}, block[3] = {K_LLM_BLOCK, 1, 1};
    if (hcq_queue_launch(q, prog, grid, block, &p, sizeof p) ||
        hcq_queue_finish(q, 20ull * 1000 * 1000 * 1000) || hcq_buf_read(by, 0, y, 4ull * n)) {
        th_fail(t, __FILE__, __LINE__, "launch: %s", th_last_error());
        worst = INFINITY;
        goto out;
    }
    for (uint32_t j = 0; j < n; j++) {
        const double r = act_ref(mode, a[j], b[j], scale);
        const double err = fabs(y[j] - r) / fmax(fabs(r), 1.0); /* relative; absolute under 1 */
        worst = err != err ? INFINITY : fmax(worst, err);
    }
out:
    hcq_buf_free(ba), hcq_buf_free(bb), hcq_buf_free(by);
    free(a), free(b), free(y);
    return worst;
}

/* k_llm_act over the gate and up halves of one [rows][gate | up] buffer (ab_stride, as a batch
 * step's fused gate|up matmul leaves them), y16 only (y_va 0); returns the worst relative error
 * of y16 against double (bound: f16's rounding, 2^-11), INFINITY when any f32 value moved (the
 * input stays as it was: the kernel writes no f32 y). */
static double
act_strided_case(struct th *t, struct hcq_device *dev, struct hcq_queue *q, struct hcq_program *prog,
                 uint32_t mode)
{
    const uint32_t rows = 5, row = 300, stride = 2 * row + 4, n = rows * row, span = rows * stride;
    float *ab = malloc(4ull * span), *back = malloc(4ull * span);
    uint16_t *y16 = malloc(2ull * n);
    struct hcq_buf *bab = NULL, *by = NULL;
    double worst = 0;
    if (!ab || !back || !y16) {
        worst = INFINITY;
        goto out;
    }
    for (uint32_t j = 0; j < span; j++)
        ab[j] = 6.0f * frand();
    memset(y16, 0xFF, 2ull * n); /* NaN */
    if (hcq_buf_alloc(dev, 4ull * span, HCQ_MEM_DEVICE, &bab) ||
        hcq_buf_alloc(dev, 2ull * n, HCQ_MEM_DEVICE, &by) || hcq_buf_write(bab, 0, ab, 4ull * span) ||
        hcq_buf_write(by, 0, y16, 2ull * n)) {
        worst = INFINITY;
        goto out;
    }
    struct k_llm_act_params p = {.a_va = hcq_buf_va(bab),
                                 .b_va = hcq_buf_va(bab) + 4ull * row,
                                 .n = n,
                                 .mode = mode,
                                 .row = row,
                                 .y16_va = hcq_buf_va(by),
                                 .ab_stride = stride};
    uint32_t grid[3] = {(n + K_LLM_BLOCK - 1) / K_LLM_BLOCK, 1, 1}, block[3] = {K_LLM_BLOCK, 1, 1};
    if (hcq_queue_launch(q, prog, grid, block, &p, sizeof p) ||
        hcq_queue_finish(q, 20ull * 1000 * 1000 * 1000) || hcq_buf_read(by, 0, y16, 2ull * n) ||
        hcq_buf_read(bab, 0, back, 4ull * span)) {
        th_fail(t, __FILE__, __LINE__, "launch: %s", th_last_error());
        worst = INFINITY;
        goto out;
    }
    if (memcmp(ab, back, 4ull * span)) {
        worst = INFINITY;
        goto out;
    }
    for (uint32_t j = 0; j < n; j++) {
        const double r =
            act_ref(mode, ab[j / row * stride + j % row], ab[j / row * stride + row + j % row], 0);
        const double err = fabs(ops_half_f16_to_f32(y16[j]) - r) / fmax(fabs(r), 1.0);
        worst = err != err ? INFINITY : fmax(worst, err);
    }
out:
    hcq_buf_free(bab), hcq_buf_free(by);
    free(ab), free(back), free(y16);
    return worst;
}

TEST(window_softcap_act_vs_double)
{
    static const struct {
        uint32_t H, HK, hd, n, pos0, window;
        float cap;
    } cases[] = {
        {4, 2, 256, 1, 0, 8, 0.7f},    {4, 2, 256, 1, 30, 8, 0.7f},      {4, 2, 256, 20, 30, 8, 0.0f},
        {4, 2, 256, 20, 0, 8, 50.0f},  {8, 4, 256, 20, 3, 24, 0.0f},     {4, 1, 128, 20, 41, 9, 0.5f},
        {4, 1, 128, 1, 8300, 4096, 0}, {4, 1, 128, 3, 8300, 8200, 0.9f}, {4, 4, 256, 5, 9000, 0, 0.7f},
    };
    char devs[256];
    const char *env = getenv("HCQ_TEST_DEVS");
    snprintf(devs, sizeof devs, "cpu %s", env ? env : "emu:gh100 cuda:0 rm:0");
    int tried = 0;
    for (char *save = NULL, *dn = strtok_r(devs, " ,", &save); dn; dn = strtok_r(NULL, " ,", &save)) {
        struct hcq_device *dev = NULL;
        struct hcq_program *pa = NULL, *pact = NULL;
        struct hcq_queue *q = NULL;
        if (hcq_device_open(dn, &dev) != HCQ_OK) {
            printf("    %s: does not open here, skipped\n", dn);
            continue;
        }
        CHECK_OK(hcq_program_load(dev, "k_llm_attn", &pa));
        CHECK_OK(hcq_program_load(dev, "k_llm_act", &pact));
        CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
        double wa = 0, wact = 0, wact16 = 0;
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            const double tol = cases[c].hd > 128 ? 4e-5 : 2e-5 + 1e-6;
            const double e = attn_case(t, dev, q, pa, cases[c].H, cases[c].HK, cases[c].hd, cases[c].n,
                                       cases[c].pos0, cases[c].window, cases[c].cap);
            CHECKF(e <= tol, "%s k_llm_attn H %u HK %u hd %u n %u pos0 %u window %u cap %g: error %g", dn,
                   cases[c].H, cases[c].HK, cases[c].hd, cases[c].n, cases[c].pos0, cases[c].window,
                   (double)cases[c].cap, e);
            wa = fmax(wa, e);
        }
        static const struct {
            uint32_t mode;
            float scale;
        } acts[] = {
            {K_LLM_ACT_GEGLU, 0}, {K_LLM_ACT_SCALE, 48.0f}, {K_LLM_ACT_SOFTCAP, 3.0f}, {K_LLM_ACT_ADD, 0}};
        for (size_t k = 0; k < sizeof acts / sizeof acts[0]; k++) {
            const double e = act_case(t, dev, q, pact, acts[k].mode, acts[k].scale);
            CHECKF(e <= 2e-6, "%s k_llm_act mode %u: relative error %g", dn, acts[k].mode, e);
            wact = fmax(wact, e);
        }
        for (uint32_t mode = K_LLM_ACT_SWIGLU; mode <= K_LLM_ACT_GEGLU; mode += K_LLM_ACT_GEGLU) {
            const double e = act_strided_case(t, dev, q, pact, mode);
            CHECKF(e <= 4.9e-4, "%s k_llm_act mode %u over [gate | up] rows, y16 only: relative error %g", dn,
                   mode, e);
            wact16 = fmax(wact16, e);
        }
        printf(
            "    %s: k_llm_attn (window, soft-cap) worst %.3g; k_llm_act (Gemma modes) worst relative %.3g, "
            "strided gate | up to f16 %.3g\n",
            dn, wa, wact, wact16);
        hcq_queue_destroy(q);
        hcq_program_destroy(pa);
        hcq_program_destroy(pact);
        hcq_device_close(dev);
        tried++;
    }
    CHECK(tried > 0);
done:;
}

int
main(int argc, char **argv)
{
    static const struct th_case cases[] = {TH_CASE(window_softcap_act_vs_double)};
    return th_run("llm_gemma_kernels", NULL, cases, TH_COUNT(cases), argc - 1, argv + 1) ? 1 : 0;
}
