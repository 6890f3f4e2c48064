/* SPDX-License-Identifier: MIT */
/*
 * test_llm_attn_o.c - the decode attention fused with the O projection (k_llm_attn_o_*,
 * k_llm_attn_o.h) on every device that opens (cpu: its twin; HCQ_TEST_DEVS, else cpu emu:gh100
 * cuda:0 rm:0) against a double-precision reference: softmax attention of random q, K, V in
 * double, x' = its int8 blocks of 16 (k_llm_mvq_block's formula in double), y = y0 + O x' over
 * O's dequantized rows. Every repacked O type (Q8_0R, Q4_0R, Q6_KR, Q5_KR, Q4_KR from
 * llm_repack_rows), KV heads of 1, 2, 4 and 8 units of 128 columns (the 1B model's shape among
 * them), positions 0 .. 255, both ways of adding the partial sums (det 0: RED, det 1: fixed
 * order through the partial buffer; its launches run back to back on one queue, so each also
 * checks that the previous one left the counters at zero). The partial buffer is poisoned (NaN).
 * Bound per output: 1e-5 * (sum_j |w_j x'_j| + |ref|) + 1e-6 (f32 sums of <= 8192 terms in
 * another order), plus |w_j| d_j for every activation j whose int8 rounding is a near tie (the
 * kernel's f32 attention may round it the other way: within 2e-5 |V| of the double value, the
 * bound test_llm_attn_decode.c holds the attention to). det 1 also runs twice: the same bits.
 */
#include "attn_ref.h"
#include "harness.h"
#include "hcq.h"
#include "k_llm_attn_o.h"
#include "k_llm_quant.h"
#include "llm.h"
#include "llm_model_priv.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x5851F42D4C957F2Dull;
static float
frand(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (float)((rng >> 11) * (1.0 / 9007199254740992.0)) * 2.0f - 1.0f;
}

struct shape {
    uint32_t n_head, n_head_kv, hd, rows;
};

static const char *
kernel_of(enum llm_type t)
{
    switch (t) {
    case LLM_TYPE_Q8_0:
        return "k_llm_attn_o_q8_0";
    case LLM_TYPE_Q4_0:
        return "k_llm_attn_o_q4_0";
    case LLM_TYPE_Q6_K:
        return "k_llm_attn_o_q6k";
    case LLM_TYPE_Q5_K:
        return "k_llm_attn_o_q5k";
    default:
        return "k_llm_attn_o_q4k";
    }
}

/* The reference of one launch: ref[rows], bound[rows] (see the header). */
static void
reference(const struct shape *s, const float *q, const float *kc, const float *vc, uint32_t pos,
          const float *deq, const float *y0, double *ref, double *bound)
{
    const uint32_t k = s->n_head * s->hd, kv = s->n_head_kv * s->hd, n = pos + 1,
                   gs = s->n_head / s->n_head_kv;
    double *att = malloc(8ull * k), *w = malloc(8ull * n), *xq = malloc(8ull * k), *amb = calloc(k, 8);
    if (!att || !w || !xq || !amb)
        goto done;
    const double scale = 1.0 / sqrt((double)s->hd);
    for (uint32_t h = 0; h < s->n_head; h++) /* the kernel takes the scale as a float */
        attn_ref_head(q + h * s->hd, kc, vc, kv, h / gs, s->hd, n, (float)scale, w, att + h * s->hd);
    /* x': d = max|v| / 127, q = rint(v / d); a value within the attention's error (2e-5, |V| <= 1) of
     * a rounding tie may take the other integer on the device: |w_j| d_j joins the bound */
    for (uint32_t b = 0; b < k; b += 16) {
        double amax = 0;
        for (uint32_t j = b; j < b + 16; j++)
            amax = fmax(amax, fabs(att[j]));
        const double d = amax / 127.0;
        for (uint32_t j = b; j < b + 16; j++) {
            const double v = d > 0 ? att[j] / d : 0, f = v - floor(v);
            xq[j] = d * rint(v);
            amb[j] = d > 0 && fabs(f - 0.5) < (2e-5 + 1e-6) / d + 1e-4 ? d : 0;
        }
    }
    for (uint32_t r = 0; r < s->rows; r++) {
        double acc = 0, mag = 0, fl = 0;
        for (uint32_t j = 0; j < k; j++) {
            const double wj = deq[(size_t)r * k + j];
            acc += wj * xq[j];
            mag += fabs(wj * xq[j]);
            fl += fabs(wj) * amb[j];
        }
        ref[r] = y0[r] + acc;
        bound[r] = 1e-5 * (mag + fabs(ref[r])) + 1e-6 + fl;
    }
done:
    free(att), free(w), free(xq), free(amb);
}

/* Every position and det mode of one shape and type on dev; returns failures. */
static int
run_shape(struct th *t, const char *dn, struct hcq_device *dev, struct hcq_queue *q, const struct shape *s,
          enum llm_type type, double *worst)
{
    static const uint32_t positions[] = {0, 1, 63, 200, 255};
    const uint32_t n_ctx = 256, k = s->n_head * s->hd, kv = s->n_head_kv * s->hd,
                   rb = s->rows / K_LLM_AO_ROWS;
    int fails = 0;
    struct hcq_program *prog = NULL;
    struct hcq_buf *kb = NULL, *vb = NULL, *qb = NULL, *wb = NULL, *yb = NULL, *pb = NULL;
    float *src = malloc(4ull * s->rows * k), *deq = malloc(4ull * s->rows * k);
    float *kc = malloc(4ull * n_ctx * kv), *vc = malloc(4ull * n_ctx * kv), *qv = malloc(4ull * k);
    float *y0 = malloc(4ull * s->rows), *y = malloc(4ull * s->rows), *y2 = malloc(4ull * s->rows),
          *nanb = malloc(4ull * s->n_head_kv * s->rows);
    double *ref = malloc(8ull * s->rows), *bound = malloc(8ull * s->rows);
    const uint64_t fb = llm_type_row_bytes(type, k) * s->rows;
    uint8_t *qw = malloc(fb), *rw = malloc(fb);
    CHECK(src && deq && kc && vc && qv && y0 && y && y2 && nanb && ref && bound && qw && rw);
    const uint32_t rt = k_llm_rp_of((uint32_t)type, k);
    CHECK(rt != (uint32_t)type && k_llm_attn_o_ok(s->n_head, s->n_head_kv, s->hd, s->rows));
    CHECK_OK(hcq_program_load(dev, kernel_of(type), &prog));
    for (uint64_t i = 0; i < (uint64_t)s->rows * k; i++)
        src[i] = frand();
    CHECK_OK(llm_quantize(type, src, qw, (uint64_t)s->rows * k));
    CHECK_OK(llm_dequantize(type, qw, deq, (uint64_t)s->rows * k));
    llm_repack_rows(rt, qw, rw, s->rows, k);
    for (size_t i = 0; i < (size_t)n_ctx * kv; i++)
        kc[i] = 2.0f * frand(), vc[i] = frand();
    for (uint32_t r = 0; r < s->rows; r++)
        y0[r] = frand();
    for (size_t i = 0; i < (size_t)s->n_head_kv * s->rows; i++)
        nanb[i] = NAN;
    CHECK_OK(hcq_buf_alloc(dev, 4ull * n_ctx * kv, HCQ_MEM_DEVICE, &kb));
    CHECK_OK(hcq_buf_alloc(dev, 4ull * n_ctx * kv, HCQ_MEM_DEVICE, &vb));
    CHECK_OK(hcq_buf_alloc(dev, 4ull * k, HCQ_MEM_DEVICE, &qb));
    CHECK_OK(hcq_buf_alloc(dev, fb, HCQ_MEM_DEVICE, &wb));
    CHECK_OK(hcq_buf_alloc(dev, 4ull * s->rows, HCQ_MEM_DEVICE, &yb));
    const uint64_t part_B = 4ull * s->n_head_kv * s->rows;
    CHECK_OK(hcq_buf_alloc(dev, part_B + 4ull * rb, HCQ_MEM_DEVICE, &pb));
    uint32_t zero[16] = {0};
    CHECK_OK(hcq_buf_write(pb, 0, nanb, part_B));
    CHECK_OK(hcq_buf_write(pb, part_B, zero, 4ull * rb));
    CHECK_OK(hcq_buf_write(kb, 0, kc, 4ull * n_ctx * kv));
    CHECK_OK(hcq_buf_write(vb, 0, vc, 4ull * n_ctx * kv));
    CHECK_OK(hcq_buf_write(wb, 0, rw, fb));
    for (size_t pi = 0; pi < sizeof positions / sizeof positions[0]; pi++) {
        const uint32_t pos = positions[pi];
        for (uint32_t i = 0; i < k; i++)
            qv[i] = 2.0f * frand();
        CHECK_OK(hcq_buf_write(qb, 0, qv, 4ull * k));
        reference(s, qv, kc, vc, pos, deq, y0, ref, bound);
        for (uint32_t det = 0; det < 2; det++) {
            struct k_llm_attn_o_params p = {
                .ad =
                    {
                        .q_va = hcq_buf_va(qb),
                        .kc_va = hcq_buf_va(kb),
                        .vc_va = hcq_buf_va(vb),
                        .pos = pos,
                        .n_ctx = n_ctx,
                        .n_head = s->n_head,
                        .n_head_kv = s->n_head_kv,
                        .hd = s->hd,
                        .n_split = 1,
                        .scale = 1.0f / sqrtf((float)s->hd),
                    },
                .w_va = hcq_buf_va(wb),
                .y_va = hcq_buf_va(yb),
                .part_va = hcq_buf_va(pb),
                .count_va = hcq_buf_va(pb) + part_B,
                .type = rt,
                .rows = s->rows,
                .det = det,
            };
            const uint32_t grid[3] = {s->n_head_kv, rb, 1}, block[3] = {K_LLM_AD_THREADS, 1, 1};
            for (int run = 0; run < (det ? 2 : 1); run++) {
                CHECK_OK(hcq_buf_write(yb, 0, y0, 4ull * s->rows));
                CHECK_OK(hcq_queue_launch(q, prog, grid, block, &p, sizeof p));
                CHECK_OK(hcq_queue_finish(q, 20ull * 1000 * 1000 * 1000));
                CHECK_OK(hcq_buf_read(yb, 0, run ? y2 : y, 4ull * s->rows));
            }
            for (uint32_t r = 0; r < s->rows; r++) {
                const double e = fabs(y[r] - ref[r]);
                if (!(e <= bound[r])) {
                    if (fails++ < 3)
                        CHECKF(0,
                               "%s %s H %u HK %u hd %u pos %u det %u row %u: %.9g vs ref %.9g (bound %.3g)",
                               dn, llm_type_name(type), s->n_head, s->n_head_kv, s->hd, pos, det, r, y[r],
                               ref[r], bound[r]);
                } else if (bound[r] > 0 && e / bound[r] > *worst) {
                    *worst = e / bound[r];
                }
                if (det && memcmp(&y[r], &y2[r], 4) && fails++ < 3)
                    CHECKF(0, "%s %s pos %u row %u: det 1 gave %.9g then %.9g", dn, llm_type_name(type), pos,
                           r, y[r], y2[r]);
            }
        }
    }
done:
    hcq_buf_free(kb), hcq_buf_free(vb), hcq_buf_free(qb), hcq_buf_free(wb), hcq_buf_free(yb),
        hcq_buf_free(pb);
    hcq_program_destroy(prog);
    free(src), free(deq), free(kc), free(vc), free(qv), free(y0), free(y), free(y2), free(nanb), free(ref),
        free(bound), free(qw), free(rw);
    return fails;
}

TEST(attn_o_vs_double)
{
    /* units of 128 columns per KV head: 2 (LLaMA-3.2-1B's attention: 32 heads, 8 KV heads of
     * 64), 1, 4 (hd 128, groups of 4: LLaMA-3.1-8B's), 8 (groups of 8 of hd 128) */
    static const struct shape shapes[] = {
        {32, 8, 64, 2048}, {32, 16, 64, 256}, {32, 8, 128, 256}, {64, 8, 128, 128}};
    static const enum llm_type types[] = {LLM_TYPE_Q8_0, LLM_TYPE_Q4_0, LLM_TYPE_Q6_K, LLM_TYPE_Q5_K,
                                          LLM_TYPE_Q4_K};
    char devs[256];
    const char *env = getenv("HCQ_TEST_DEVS");
    snprintf(devs, sizeof devs, "cpu %s", env ? env : "emu:gh100 cuda:0 rm:0");
    int tried = 0;
    for (char *save = NULL, *dn = strtok_r(devs, " ,", &save); dn; dn = strtok_r(NULL, " ,", &save)) {
        struct hcq_device *dev = NULL;
        struct hcq_queue *q = NULL;
        if (hcq_device_open(dn, &dev) != HCQ_OK) {
            printf("    %s: does not open here, skipped\n", dn);
            continue;
        }
        double worst = 0;
        int fails = 0;
        if (hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q) == HCQ_OK)
            for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
                for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++)
                    fails += run_shape(t, dn, dev, q, &shapes[si], types[ti], &worst);
        else
            CHECKF(0, "%s: no queue", dn);
        printf(
            "    %s: 4 shapes x 5 types x 5 positions x det 0/1, %d outside the bound, worst error %.3g of "
            "its bound\n",
            dn, fails, worst);
        hcq_queue_destroy(q);
        hcq_device_close(dev);
        tried++;
    }
    CHECK(tried > 0);
done:;
}

int
main(int argc, char **argv)
{
    static const struct th_case cases[] = {TH_CASE(attn_o_vs_double)};
    return th_run("llm_attn_o", NULL, cases, TH_COUNT(cases), argc - 1, argv + 1) ? 1 : 0;
}
