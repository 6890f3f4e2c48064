/* SPDX-License-Identifier: MIT */
/*
 * test_llm_attn_prefill.c - the prefill attention kernels (k_llm_attn_tile, _hd128: f32;
 * k_llm_attn_mma, _hd128: f16 tensor cores; k_llm_attn: the generic f32 kernel, one query per
 * CTA; k_llm_attn_rows, _hd128: one CTA per KV head and token; k_llm_attn_rows64: the same grid, head size
 * 64, warps streaming tiles on tensor cores) on every device that opens (cpu: their twin;
 * HCQ_TEST_DEVS, else cpu emu:gh100 cuda:0 rm:0) against a double-precision causal softmax
 * attention: head_dim 64 and 128, GQA groups of 1, 3, 4 and 8 (8: k_llm_attn_rows_g8 / _hd128_g8), batches of
 * 1, 33, 64, 100 and 130 tokens (partial blocks of queries) starting at position 0, after 37, 100, 190, 8190
 * and 16400 cached rows (several key tiles, a partial last one; k_llm_attn's chunks of 8192 positions), query
 * rows with a stride wider than the heads (as in the Q|K|V buffer). Outputs are poisoned (NaN) first and
 * every element is checked. Bounds (|q|, |k| <= 2, |V| <= 1): f32 kernel |out - ref| <= 2e-5 + 1e-6 (f32 dots
 * of <= 128 terms, __expf, sums of weights <= 1); f16 mma kernel 5e-3 (Q and P rounded to f16, a 10-bit
 * mantissa as TF32's before 2026-11-29; K and V are f16 in the cache: score errors of ~1e-3 at these
 * magnitudes, each moving the output by its weight times |v - out|).
 */
#include "attn_ref.h"
#include "harness.h"
#include "hcq.h"
#include "k_llm_params.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x13198A2E03707344ull;
static float
frand(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (float)((rng >> 11) * (1.0 / 9007199254740992.0)) * 2.0f - 1.0f;
}

TEST(attn_tile_vs_double)
{
    static const struct {
        uint32_t n_head, n_head_kv, hd;
    } shapes[] = {{8, 2, 64}, {6, 2, 128}, {4, 4, 64}, {3, 1, 128}, {16, 2, 64}, {8, 1, 128}};
    static const struct {
        uint32_t n_tok, pos0;
    } runs[] = {{1, 0}, {64, 0}, {100, 0}, {100, 37}, {33, 37}, {130, 100}, {64, 190}, {5, 8190}, {3, 16400}};
    /* qb: queries per CTA (0: the tiled kernels' own) */
    static const struct {
        const char *name[2]; /* head_dim 64, 128 */
        double tol;
        bool mma;
        uint32_t qb; /* k_llm_attn_rows: grid (n_head_kv, n_tok) instead */
        bool rows;
        bool hd64; /* head size 64 only, every group (k_llm_attn_rows64) */
    } kinds[] = {{{"k_llm_attn_tile", "k_llm_attn_tile_hd128"}, 2e-5 + 1e-6, false, 0},
                 {{"k_llm_attn_mma", "k_llm_attn_mma_hd128"}, 5e-3, true, 0},
                 /* the generic kernel (other head sizes, the unfused decode): scores in chunks
                  * of K_LLM_ATTN_CHUNK positions, so the last runs take two and three */
                 {{"k_llm_attn", "k_llm_attn"}, 2e-5 + 1e-6, false, 1},
                 /* a batch step's kernel (one block per KV head and token; chunks of 256 positions) */
                 {{"k_llm_attn_rows", "k_llm_attn_rows_hd128"}, 2e-5 + 1e-6, false, 1, true},
                 {{"k_llm_attn_rows_g8", "k_llm_attn_rows_hd128_g8"}, 2e-5 + 1e-6, false, 1, true},
                 /* head size 64: the warp-stream core on tensor cores (hi + lo f16 operands) */
                 {{"k_llm_attn_rows64", "k_llm_attn_rows64"}, 2e-5 + 1e-6, false, 1, true, true}};
    char devs[256];
    const char *env = getenv("HCQ_TEST_DEVS");
    snprintf(devs, sizeof devs, "cpu %s", env ? env : "emu:gh100 cuda:0 rm:0");
    int tried = 0;
    for (char *save = NULL, *dn = strtok_r(devs, " ,", &save); dn; dn = strtok_r(NULL, " ,", &save))
        for (size_t ki = 0; ki < sizeof kinds / sizeof kinds[0]; ki++) {
            struct hcq_device *dev = NULL;
            struct hcq_program *prog[2] = {NULL, NULL};
            struct hcq_queue *q = NULL;
            if (hcq_device_open(dn, &dev) != HCQ_OK) {
                printf("    %s: does not open here, skipped\n", dn);
                continue;
            }
            if (hcq_program_load(dev, kinds[ki].name[0], &prog[0]) != HCQ_OK ||
                hcq_program_load(dev, kinds[ki].name[1], &prog[1]) != HCQ_OK) {
                printf("    %s: no %s, skipped\n", dn, kinds[ki].name[0]);
                hcq_program_destroy(prog[0]);
                hcq_device_close(dev);
                continue;
            }
            CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
            double worst = 0;
            int fails = 0;
            for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
                /* groups of 8: the _g8 kernels only (the others write nothing for them) */
                const bool g8 = shapes[si].n_head / shapes[si].n_head_kv > 4,
                           g8_kind = strstr(kinds[ki].name[0], "_g8") != NULL;
                if (kinds[ki].hd64 ? shapes[si].hd != 64 : (g8 && !g8_kind) || (g8_kind && !g8 && si >= 1))
                    continue; /* (the _g8 kernels: a group of 4 too) */
                const uint32_t H = shapes[si].n_head, HK = shapes[si].n_head_kv, hd = shapes[si].hd,
                               kv = HK * hd;
                const uint32_t qs = H * hd + 2 * kv; /* row stride of Q|K|V */
                CHECK(hd <= ATTN_REF_HD_MAX);
                for (size_t ri = 0; ri < sizeof runs / sizeof runs[0]; ri++) {
                    if (kinds[ki].rows && runs[ri].pos0 > 8192)
                        continue; /* (the rows kernels' chunks of 256: 8190 positions make 32 already) */
                    /* a cache just long enough (odd lengths too): random K/V of n_ctx rows per run */
                    const uint32_t n = runs[ri].n_tok, pos0 = runs[ri].pos0, n_ctx = pos0 + n + ri % 2;
                    float *kc = malloc(4ull * n_ctx * kv), *vc = malloc(4ull * n_ctx * kv),
                          *qv = malloc(4ull * n * qs), *out = malloc(4ull * n * H * hd);
                    uint16_t *kh = malloc(2ull * n_ctx * kv), *vh = malloc(2ull * n_ctx * kv);
                    CHECK(kc && vc && qv && out && kh && vh);
                    for (size_t i = 0; i < (size_t)n_ctx * kv; i++)
                        kc[i] = 2.0f * frand(), vc[i] = frand();
                    for (size_t i = 0; i < (size_t)n * qs; i++)
                        qv[i] = 2.0f * frand();
                    for (size_t i = 0; i < (size_t)n * H * hd; i++)
                        out[i] = NAN;
                    struct hcq_buf *kb, *vb, *qb, *ob;
                    attn_ref_kv_round(kc, kh, (size_t)n_ctx * kv); /* the cache holds f16 */
                    attn_ref_kv_round(vc, vh, (size_t)n_ctx * kv);
                    CHECK_OK(hcq_buf_alloc(dev, 2ull * n_ctx * kv, HCQ_MEM_DEVICE, &kb));
                    CHECK_OK(hcq_buf_alloc(dev, 2ull * n_ctx * kv, HCQ_MEM_DEVICE, &vb));
                    CHECK_OK(hcq_buf_alloc(dev, 4ull * n * qs, HCQ_MEM_DEVICE, &qb));
                    CHECK_OK(hcq_buf_alloc(dev, 4ull * n * H * hd, HCQ_MEM_DEVICE, &ob));
                    CHECK_OK(hcq_buf_write(kb, 0, kh, 2ull * n_ctx * kv));
                    CHECK_OK(hcq_buf_write(vb, 0, vh, 2ull * n_ctx * kv));
                    CHECK_OK(hcq_buf_write(qb, 0, qv, 4ull * n * qs));
                    CHECK_OK(hcq_buf_write(ob, 0, out, 4ull * n * H * hd));
                    const float scale = 1.0f / sqrtf((float)hd);
                    struct k_llm_attn_params p = {
                        .q_va = hcq_buf_va(qb),
                        .kc_va = hcq_buf_va(kb),
                        .vc_va = hcq_buf_va(vb),
                        .out_va = hcq_buf_va(ob),
                        .n_tok = n,
                        .pos0 = pos0,
                        .n_head = H,
                        .n_head_kv = HK,
                        .hd = hd,
                        .q_stride = qs,
                        .scale = scale,
                        .n_ctx = n_ctx,
                    };
                    const uint32_t qb_n = kinds[ki].qb    ? kinds[ki].qb
                                          : kinds[ki].mma ? K_LLM_ATTN_MMA_QB
                                                          : K_LLM_ATTN_TILE_QB(hd);
                    uint32_t grid[3] = {kinds[ki].rows ? HK : H, (n + qb_n - 1) / qb_n, 1},
                             block[3] = {256, 1, 1};
                    CHECK_OK(hcq_queue_launch(q, prog[hd == 128], grid, block, &p, sizeof p));
                    CHECK_OK(hcq_queue_finish(q, 20ull * 1000 * 1000 * 1000));
                    CHECK_OK(hcq_buf_read(ob, 0, out, 4ull * n * H * hd));
                    double *w = malloc(8ull * (pos0 + n));
                    CHECK(w);
                    for (uint32_t i = 0; i < n; i++) {
                        const uint32_t np = pos0 + i + 1;
                        for (uint32_t h = 0; h < H; h++) {
                            double ref[ATTN_REF_HD_MAX];
                            attn_ref_head(qv + (size_t)i * qs + (size_t)h * hd, kc, vc, kv, h / (H / HK), hd,
                                          np, scale, w, ref);
                            for (uint32_t e = 0; e < hd; e++) {
                                const double r = ref[e];
                                const double got = out[((size_t)i * H + h) * hd + e], err = fabs(got - r);
                                if (!(err <= kinds[ki].tol) && fails++ < 3)
                                    CHECKF(0,
                                           "%s %s H %u HK %u hd %u n %u pos0 %u token %u head %u e %u: %.8g "
                                           "vs %.8g",
                                           dn, kinds[ki].name[0], H, HK, hd, n, pos0, i, h, e, got, r);
                                if (err > worst || err != err)
                                    worst = err != err ? INFINITY : err;
                            }
                        }
                    }
                    free(w);
                    hcq_buf_free(kb), hcq_buf_free(vb), hcq_buf_free(qb), hcq_buf_free(ob);
                    free(kc), free(vc), free(qv), free(out), free(kh), free(vh);
                }
            }
            printf("    %s %s: worst |out - ref| %.3g (|V| <= 1, bound %.3g)\n", dn, kinds[ki].name[0], worst,
                   kinds[ki].tol);
            CHECK(fails == 0);
            hcq_queue_destroy(q);
            hcq_program_destroy(prog[0]);
            hcq_program_destroy(prog[1]);
            hcq_device_close(dev);
            tried++;
        }
    CHECK(tried > 0);
done:;
}

int
main(int argc, char **argv)
{
    static const struct th_case cases[] = {TH_CASE(attn_tile_vs_double)};
    return th_run("llm_attn_prefill", NULL, cases, TH_COUNT(cases), argc - 1, argv + 1) ? 1 : 0;
}
