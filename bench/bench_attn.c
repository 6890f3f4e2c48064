/* SPDX-License-Identifier: MIT */
/*
 * bench_attn.c - the decode attention alone (group "attn"): one token attends to a filled f16
 * KV cache of a LLaMA-3.2-1B layer (32 query heads, 8 KV heads, head size 64) at several depths,
 * with the kernel and range count the engine picks for that position (k_llm_ad_kind:
 * k_llm_attn_decode up to K_LLM_AD_HEAD_MAX positions, then _long, past K_LLM_AD_FAR_POS _far).
 * GB/s = the cache bytes one launch reads (K and V rows 0..pos: 2 (pos + 1) kv_dim 2 B) / its
 * time. Rows: attn_decode at d<depth>.
 * Why a group of its own: `llm-bench --profile` shows the attention's share of a step, but not
 * the kernel against its bytes at a depth in isolation. As in a decode step, consecutive
 * launches read different layers' caches (NL copies, rotated, together over 192 MiB: more than
 * an H100's or H200's L2), so the bytes come from DRAM, not from the last launch's L2.
 * Verification: layer 0's output against a double softmax attention over the f16-rounded cache,
 * |out - ref| <= 2e-5 max|V| + 1e-6 (test_llm_attn_decode's bound). The cuda row runs the same
 * cubin through the CUDA driver: a runtime comparison, not another kernel.
 */
#include "bench.h"
#include "k_llm_attn_decode.h"
#include "ops_half.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AT_H 32u
#define AT_HK 8u
#define AT_HD 64u
#define AT_KV_DIM (AT_HK * AT_HD)
#define AT_ROTATE_B (192ull << 20) /* the rotated caches together */
#define AT_MAX_LAYERS 64u

struct at {
    struct bench_dev *d;
    uint32_t pos, n_ctx, kind, nl, next;
    struct hcq_program *prog;
    struct hcq_buf *kv, *q, *out, *part;
    uint64_t layer_B; /* one layer's K (then V) cache: n_ctx x kv_dim f16 */
};

static enum hcq_status
rec_at(struct bench_dev *d, struct hcq_queue *q, void *arg)
{
    struct at *a = arg;
    (void)d;
    const uint64_t kc = hcq_buf_va(a->kv) + 2 * a->layer_B * a->next, part = hcq_buf_va(a->part);
    a->next = (a->next + 1) % a->nl;
    const struct k_llm_attn_decode_params p = {
        .q_va = hcq_buf_va(a->q),
        .kc_va = kc,
        .vc_va = kc + a->layer_B,
        .out_va = hcq_buf_va(a->out),
        .part_va = part,
        .count_va = part + 4ull * AT_H * K_LLM_AD_SPLITS_MAX * (AT_HD + 2),
        .pos = a->pos,
        .n_ctx = a->n_ctx,
        .n_head = AT_H,
        .n_head_kv = AT_HK,
        .hd = AT_HD,
        .n_split = k_llm_ad_kind_splits(a->kind),
        .scale = 1.0f / sqrtf((float)AT_HD),
        .head_max = K_LLM_AD_HEAD_MAX,
    };
    const uint32_t g[3] = {AT_HK, p.n_split, 1}, b[3] = {K_LLM_AD_THREADS, 1, 1};
    return hcq_queue_launch(q, a->prog, g, b, &p, sizeof p);
}

/* The output of a launch on layer 0 (a->next must be 0) against double precision. */
static bool
at_verify(const struct at *a, const float *q, const uint16_t *kc, const uint16_t *vc, const float *out,
          char *why, size_t why_B)
{
    const uint32_t n = a->pos + 1, group = AT_H / AT_HK;
    const double scale = 1.0 / sqrt((double)AT_HD);
    double *s = malloc(sizeof *s * n), vmax = 0;
    if (!s) {
        snprintf(why, why_B, "out of host memory");
        return false;
    }
    for (size_t i = 0; i < (size_t)n * AT_KV_DIM; i++)
        vmax = fmax(vmax, fabs(ops_half_f16_to_f32(vc[i])));
    bool ok = true;
    for (uint32_t h = 0; h < AT_H && ok; h++) {
        const uint32_t g = h / group;
        double mx = -INFINITY, sum = 0;
        for (uint32_t t = 0; t < n; t++) {
            double dot = 0;
            for (uint32_t e = 0; e < AT_HD; e++)
                dot +=
                    (double)q[h * AT_HD + e] * ops_half_f16_to_f32(kc[(size_t)t * AT_KV_DIM + g * AT_HD + e]);
            s[t] = dot * scale;
            mx = fmax(mx, s[t]);
        }
        for (uint32_t t = 0; t < n; t++)
            sum += s[t] = exp(s[t] - mx);
        for (uint32_t e = 0; e < AT_HD && ok; e++) {
            double ref = 0;
            for (uint32_t t = 0; t < n; t++)
                ref += s[t] * ops_half_f16_to_f32(vc[(size_t)t * AT_KV_DIM + g * AT_HD + e]);
            ref /= sum;
            const double err = fabs(out[h * AT_HD + e] - ref);
            if (!(err <= 2e-5 * vmax + 1e-6)) {
                snprintf(why, why_B, "head %u element %u: %.8g vs %.8g", h, e, (double)out[h * AT_HD + e],
                         ref);
                ok = false;
            }
        }
    }
    free(s);
    return ok;
}

static void
at_run(struct bench_ctx *ctx, struct at *a, const float *q, const uint16_t *kc, const uint16_t *vc,
       const char *params)
{
    struct bench_result r = bench_result_init("attn", "attn_decode", a->d, params, "GB/s", true);
    const double bytes = 2.0 * (a->pos + 1) * AT_KV_DIM * 2;
    float *out = malloc(4ull * AT_H * AT_HD);
    double one = 0, *t = NULL;
    uint32_t batch = 1, reps = 0;
    char why[160];
    enum hcq_status st = out ? HCQ_OK : HCQ_ERR_NOMEM;
    /* the check first: one launch on layer 0, into a poisoned output */
    a->next = 0;
    if (st == HCQ_OK) {
        memset(out, 0xAB, 4ull * AT_H * AT_HD);
        st = hcq_buf_write(a->out, 0, out, 4ull * AT_H * AT_HD);
    }
    if (st == HCQ_OK)
        st = rec_at(a->d, a->d->q, a);
    if (st == HCQ_OK)
        st = hcq_queue_finish(a->d->q, 30ull * 1000 * 1000 * 1000);
    if (st == HCQ_OK)
        st = hcq_buf_read(a->out, 0, out, 4ull * AT_H * AT_HD);
    if (st != HCQ_OK) {
        bench_add_status(ctx, &r, BENCH_ERROR, "%s", hcq_last_error());
        goto done;
    }
    if (!at_verify(a, q, kc, vc, out, why, sizeof why)) {
        bench_add_status(ctx, &r, BENCH_FAIL, "%s", why);
        goto done;
    }
    st = bench_batch(a->d, a->d->q, rec_at, a, 200e3, 64, &batch, &one);
    reps = bench_reps(ctx, one * batch, 0.3, 3, 40);
    if (st == HCQ_OK && !(t = calloc(reps, sizeof *t)))
        st = HCQ_ERR_NOMEM;
    if (st == HCQ_OK)
        st = bench_time(a->d, a->d->q, rec_at, a, batch, reps, t);
    if (st != HCQ_OK) {
        bench_add_status(ctx, &r, BENCH_ERROR, "%s", hcq_last_error());
        goto done;
    }
    bench_stats(&r, t, reps, bytes);
    r.verdict = BENCH_VERIFIED;
    snprintf(r.note, sizeof r.note, "%s, %u ranges, %u layers rotated", k_llm_ad_kind_kernel(a->kind),
             k_llm_ad_kind_splits(a->kind), a->nl);
    bench_add(ctx, &r);
done:
    free(t);
    free(out);
}

void
bench_attn(struct bench_ctx *ctx)
{
    static const uint32_t full[] = {1024, 4096, 32768, 131072}, quick[] = {100, 1000, 9000};
    const uint32_t *depths = ctx->quick ? quick : full;
    const size_t n_depths = ctx->quick ? sizeof quick / sizeof quick[0] : sizeof full / sizeof full[0];
    for (size_t di = 0; di < n_depths; di++) {
        const uint32_t pos = depths[di], n_ctx = pos + 1;
        const uint64_t layer_B = 2ull * n_ctx * AT_KV_DIM;
        char params[64];
        snprintf(params, sizeof params, "d%u", pos);
        float *q = malloc(4ull * AT_H * AT_HD), *tmp = malloc(4ull * n_ctx * AT_KV_DIM);
        uint16_t *kc = malloc(layer_B), *vc = malloc(layer_B);
        if (!q || !tmp || !kc || !vc) {
            free(q), free(tmp), free(kc), free(vc);
            return;
        }
        bench_rand_f32(q, (size_t)AT_H * AT_HD, -1.0f, 1.0f);
        bench_rand_f32(tmp, (size_t)n_ctx * AT_KV_DIM, -1.0f, 1.0f);
        for (size_t i = 0; i < (size_t)n_ctx * AT_KV_DIM; i++)
            kc[i] = ops_half_f32_to_f16(tmp[i]);
        bench_rand_f32(tmp, (size_t)n_ctx * AT_KV_DIM, -1.0f, 1.0f);
        for (size_t i = 0; i < (size_t)n_ctx * AT_KV_DIM; i++)
            vc[i] = ops_half_f32_to_f16(tmp[i]);
        free(tmp);
        for (int i = 0; i < ctx->dev_count; i++) {
            struct at a = {.d = &ctx->devs[i], .pos = pos, .n_ctx = n_ctx, .layer_B = layer_B};
            a.kind = k_llm_ad_kind(pos, K_LLM_AD_HEAD_MAX);
            /* host-run devices: one copy (their "time" is not a GPU's); GPUs: past their L2 */
            uint64_t nl = a.d->slow ? 1 : (AT_ROTATE_B + 2 * layer_B - 1) / (2 * layer_B);
            a.nl = (uint32_t)(nl < 1 ? 1 : nl > AT_MAX_LAYERS ? AT_MAX_LAYERS : nl);
            if (a.d->dead)
                continue;
            if (a.d->slow && !ctx->quick && pos > 4096) {
                struct bench_result r = bench_result_init("attn", "attn_decode", a.d, params, "GB/s", true);
                bench_add_status(ctx, &r, BENCH_SKIPPED, "size capped on host-run devices");
                continue;
            }
            struct hcq_device *dev = a.d->dev;
            enum hcq_status st = hcq_program_load(dev, k_llm_ad_kind_kernel(a.kind), &a.prog);
            if (!st)
                st = hcq_buf_alloc(dev, 2 * layer_B * a.nl, HCQ_MEM_DEVICE, &a.kv);
            if (!st)
                st = hcq_buf_alloc(dev, 4ull * AT_H * AT_HD, HCQ_MEM_DEVICE, &a.q);
            if (!st)
                st = hcq_buf_alloc(dev, 4ull * AT_H * AT_HD, HCQ_MEM_DEVICE, &a.out);
            if (!st) /* partials, then the counters (zero between launches) */
                st = hcq_buf_alloc(dev, 4ull * AT_H * K_LLM_AD_SPLITS_MAX * (AT_HD + 2) + 4ull * AT_HK,
                                   HCQ_MEM_DEVICE, &a.part);
            if (!st) {
                uint32_t zero[AT_HK] = {0};
                st =
                    hcq_buf_write(a.part, 4ull * AT_H * K_LLM_AD_SPLITS_MAX * (AT_HD + 2), zero, sizeof zero);
            }
            if (!st)
                st = hcq_buf_write(a.q, 0, q, 4ull * AT_H * AT_HD);
            for (uint32_t l = 0; l < a.nl && !st; l++) {
                st = hcq_buf_write(a.kv, 2 * layer_B * l, kc, layer_B);
                if (!st)
                    st = hcq_buf_write(a.kv, 2 * layer_B * l + layer_B, vc, layer_B);
            }
            if (st) {
                struct bench_result r = bench_result_init("attn", "attn_decode", a.d, params, "GB/s", true);
                bench_add_status(ctx, &r, BENCH_ERROR, "%s", hcq_last_error());
            } else {
                at_run(ctx, &a, q, kc, vc, params);
            }
            hcq_buf_free(a.kv), hcq_buf_free(a.q), hcq_buf_free(a.out), hcq_buf_free(a.part);
            hcq_program_destroy(a.prog);
        }
        free(q), free(kc), free(vc);
    }
}
