/* SPDX-License-Identifier: MIT */
/*
 * test_llm_attn_decode.c - the split-K decode attention (k_llm_attn_decode) on every device
 * that opens (cpu: its twin; HCQ_TEST_DEVS, else cpu emu:gh100 cuda:0 rm:0) against a
 * double-precision softmax attention, for head_dim 64 and 128, GQA groups of 1, 3 and 4, at
 * positions from 0 (one row) to past n_split * 8 rows (every split used, uneven last
 * range), and the short-context path (one CTA per query head, head_max) at every other
 * position. The launches run back to back on one queue, so each also checks that the
 * previous one left its counters at zero. Outputs are poisoned (NaN) first.
 * The cache is f16 (K_LLM_KV_B): K and V are drawn in f32, rounded to f16 for the device, and the
 * reference reads the rounded values.
 * The three kernels run: k_llm_attn_decode (online-softmax split path), k_llm_attn_decode_long
 * (ranges in tiles of 32 (hd 64) or 16 (hd 128) rows through a cp.async ring: ranges of one
 * tile, several, and a partial last tile) and k_llm_attn_decode_far (the same code at 3 CTAs
 * per SM over K_LLM_AD_SPLITS_FAR ranges), each with the ranges the engine gives it, at every
 * position; GQA groups up to 8 (K_LLM_AD_MAX_GS).
 * Bound: |out - ref| <= 2e-5 * max|V| + 1e-6 (f32 dot products of <= 128 terms, __expf,
 * sums of <= 9001 weights <= 1).
 */
#include "attn_ref.h"
#include "harness.h"
#include "hcq.h"
#include "k_llm_attn_decode.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x243F6A8885A308D3ull;
static float
frand(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (float)((rng >> 11) * (1.0 / 9007199254740992.0)) * 2.0f - 1.0f;
}

TEST(attn_decode_vs_double)
{
    static const struct {
        uint32_t n_head, n_head_kv, hd;
    } shapes[] = {{8, 2, 64}, {6, 2, 128}, {4, 4, 64}, {16, 2, 64}, {8, 1, 128}};
    /* 4000 .. 8191: ranges of 128 .. 256 positions; 8500 .. 20000: longer ranges, past the 8192
     * positions the engine once stopped at (k_llm_attn_decode: the online-softmax split path;
     * k_llm_attn_decode_long: the tile ring at every position) */
    static const uint32_t positions[] = {0,    5,    63,   256,  1000, 2047, 127,   130,
                                         4000, 4095, 6000, 8191, 8500, 9000, 16383, 20000};
    /* per k_llm_ad_kind: its kernel (k_llm_ad_kind_kernel), with the ranges the engine launches it
     * with (k_llm_ad_kind_splits) */
    const uint32_t n_ctx = 20480;
    char devs[256];
    const char *env = getenv("HCQ_TEST_DEVS");
    snprintf(devs, sizeof devs, "cpu %s", env ? env : "emu:gh100 cuda:0 rm:0");
    int tried = 0;
    for (char *save = NULL, *dn = strtok_r(devs, " ,", &save); dn; dn = strtok_r(NULL, " ,", &save))
        for (uint32_t ki = 0; ki < K_LLM_AD_KINDS; ki++) {
            struct hcq_device *dev = NULL;
            struct hcq_program *prog = NULL;
            struct hcq_queue *q = NULL;
            if (hcq_device_open(dn, &dev) != HCQ_OK) {
                printf("    %s: does not open here, skipped\n", dn);
                continue;
            }
            if (hcq_program_load(dev, k_llm_ad_kind_kernel(ki), &prog) != HCQ_OK) {
                printf("    %s: no %s, skipped\n", dn, k_llm_ad_kind_kernel(ki));
                hcq_device_close(dev);
                continue;
            }
            CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
            double worst = 0;
            for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
                uint32_t H = shapes[si].n_head, HK = shapes[si].n_head_kv, hd = shapes[si].hd, kv = HK * hd;
                CHECK(hd <= ATTN_REF_HD_MAX);
                size_t np = sizeof positions / sizeof positions[0];
                float *kc = malloc(4ull * n_ctx * kv), *vc = malloc(4ull * n_ctx * kv),
                      *qv = malloc(4ull * H * hd * np);
                float *out = malloc(4ull * H * hd * np);
                uint16_t *kh = malloc(2ull * n_ctx * kv), *vh = malloc(2ull * n_ctx * kv);
                CHECK(kc && vc && qv && out && kh && vh);
                for (size_t i = 0; i < (size_t)n_ctx * kv; i++)
                    kc[i] = 2.0f * frand(), vc[i] = frand();
                attn_ref_kv_round(kc, kh, (size_t)n_ctx * kv);
                attn_ref_kv_round(vc, vh, (size_t)n_ctx * kv);
                for (size_t i = 0; i < (size_t)H * hd * np; i++)
                    qv[i] = 2.0f * frand(), out[i] = NAN;
                const uint32_t n_split = k_llm_ad_kind_splits(ki);
                uint64_t part_B = 4ull * H * n_split * (hd + 2);
                struct hcq_buf *kb, *vb, *qb, *ob, *pb;
                CHECK_OK(hcq_buf_alloc(dev, 2ull * n_ctx * kv, HCQ_MEM_DEVICE, &kb));
                CHECK_OK(hcq_buf_alloc(dev, 2ull * n_ctx * kv, HCQ_MEM_DEVICE, &vb));
                CHECK_OK(hcq_buf_alloc(dev, 4ull * H * hd * np, HCQ_MEM_DEVICE, &qb));
                CHECK_OK(hcq_buf_alloc(dev, 4ull * H * hd * np, HCQ_MEM_DEVICE, &ob));
                CHECK_OK(hcq_buf_alloc(dev, part_B + 4ull * HK, HCQ_MEM_DEVICE, &pb));
                uint32_t zero[8] = {0};
                CHECK_OK(hcq_buf_write(pb, part_B, zero, 4ull * HK));
                CHECK_OK(hcq_buf_write(kb, 0, kh, 2ull * n_ctx * kv));
                CHECK_OK(hcq_buf_write(vb, 0, vh, 2ull * n_ctx * kv));
                CHECK_OK(hcq_buf_write(qb, 0, qv, 4ull * H * hd * np));
                CHECK_OK(hcq_buf_write(ob, 0, out, 4ull * H * hd * np));
                float scale = 1.0f / sqrtf((float)hd);
                /* odd outputs: the split path; even: one CTA per query head (head_max) */
                for (size_t pi = 0; pi < np; pi++) {
                    struct k_llm_attn_decode_params p = {
                        .q_va = hcq_buf_va(qb) + 4ull * H * hd * pi,
                        .kc_va = hcq_buf_va(kb),
                        .vc_va = hcq_buf_va(vb),
                        .out_va = hcq_buf_va(ob) + 4ull * H * hd * pi,
                        .part_va = hcq_buf_va(pb),
                        .count_va = hcq_buf_va(pb) + part_B,
                        .pos = positions[pi],
                        .n_ctx = n_ctx,
                        .n_head = H,
                        .n_head_kv = HK,
                        .hd = hd,
                        .n_split = n_split,
                        .scale = scale,
                        .head_max = pi % 2 ? 0 : 4096,
                    };
                    uint32_t grid[3] = {HK, n_split, 1}, block[3] = {K_LLM_AD_THREADS, 1, 1};
                    CHECK_OK(hcq_queue_launch(q, prog, grid, block, &p, sizeof p));
                }
                CHECK_OK(hcq_queue_finish(q, 20ull * 1000 * 1000 * 1000));
                CHECK_OK(hcq_buf_read(ob, 0, out, 4ull * H * hd * np));
                int fails = 0;
                for (size_t pi = 0; pi < np; pi++) {
                    uint32_t n = positions[pi] + 1;
                    double *w = malloc(8ull * n);
                    CHECK(w);
                    for (uint32_t h = 0; h < H; h++) {
                        double ref[ATTN_REF_HD_MAX];
                        attn_ref_head(qv + (size_t)H * hd * pi + (size_t)h * hd, kc, vc, kv, h / (H / HK), hd,
                                      n, scale, w, ref);
                        for (uint32_t e = 0; e < hd; e++) {
                            const double r = ref[e];
                            double got = out[(size_t)H * hd * pi + (size_t)h * hd + e], err = fabs(got - r);
                            if (!(err <= 2e-5 + 1e-6) && fails++ < 3)
                                CHECKF(0, "%s %s H %u HK %u hd %u pos %u head %u e %u: %.8g vs %.8g", dn,
                                       k_llm_ad_kind_kernel(ki), H, HK, hd, positions[pi], h, e, got, r);
                            if (err > worst)
                                worst = err;
                        }
                    }
                    free(w);
                }
                hcq_buf_free(kb), hcq_buf_free(vb), hcq_buf_free(qb), hcq_buf_free(ob), hcq_buf_free(pb);
                free(kc), free(vc), free(qv), free(out), free(kh), free(vh);
            }
            printf("    %s %s: worst |out - ref| %.3g (|V| <= 1)\n", dn, k_llm_ad_kind_kernel(ki), worst);
            hcq_queue_destroy(q);
            hcq_program_destroy(prog);
            hcq_device_close(dev);
            tried++;
        }
    CHECK(tried > 0);
done:;
}

int
main(int argc, char **argv)
{
    static const struct th_case cases[] = {TH_CASE(attn_decode_vs_double)};
    return th_run("llm_attn_decode", NULL, cases, TH_COUNT(cases), argc - 1, argv + 1) ? 1 : 0;
}
