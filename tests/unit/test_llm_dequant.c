/* SPDX-License-Identifier: MIT */
/*
 * test_llm_dequant.c - k_llm_dequant_f16 (the prefill's weight expansion, k_llm_gemm.cu) on
 * every device that opens (cpu: its twin; HCQ_TEST_DEVS, else cpu emu:gh100 cuda:0 rm:0):
 * every value of random quantized matrices of each type it reads - the repacked
 * Q4_0R/Q8_0R/Q6_KR (rows of 2048/4096: the task path) and the file layouts (k 256: the
 * per-value path) - against the host's k_llm_dq_at rounded to f16, output poisoned first.
 * Bound: identical f16 bits, or one f16 step where the device may fuse a multiply-add
 * (Q4_K/Q5_K: d sc q - dmin m).
 */
#include "harness.h"
#include "hcq.h"
#include "k_llm_gemm_params.h"
#include "k_llm_quant.h"
#include "llm.h"
#include "llm_model_priv.h"
#include "ops_half.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0xD1B54A32D192ED03ull;
static float
frand(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (float)((rng >> 11) * (1.0 / 9007199254740992.0)) * 2.0f - 1.0f;
}

/* rows x k values of `type` quantized from random data, repacked where the type has a repacked
 * form for rows of k; *rtype the code the rows are in. NULL on failure. */
static uint8_t *
make_rows(uint32_t type, uint32_t rows, uint32_t k, uint32_t *rtype)
{
    uint64_t n = (uint64_t)rows * k, B = llm_type_row_bytes(type, k) * rows;
    float *src = malloc(4 * n);
    uint8_t *q = malloc(B), *r = NULL;
    if (!src || !q)
        goto fail;
    for (uint64_t i = 0; i < n; i++)
        src[i] = 3.0f * frand();
    if (llm_quantize(type, src, q, n) != HCQ_OK)
        goto fail;
    *rtype = k_llm_rp_of(type, k);
    if (*rtype != type) {
        if (!(r = malloc(B)))
            goto fail;
        llm_repack_rows(*rtype, q, r, rows, k);
        free(q);
        q = r;
    }
    free(src);
    return q;
fail:
    free(src);
    free(q);
    return NULL;
}

TEST(dequant_f16_every_value)
{
    static const uint32_t types[] = {LLM_TYPE_Q4_0, LLM_TYPE_Q8_0, LLM_TYPE_Q6_K,
                                     LLM_TYPE_Q4_K, LLM_TYPE_Q5_K, LLM_TYPE_F16};
    static const uint32_t ks[] = {256, 2048, 4096};
    const uint32_t rows = 37;
    char devs[256];
    const char *env = getenv("HCQ_TEST_DEVS");
    snprintf(devs, sizeof devs, "cpu %s", env ? env : "emu:gh100 cuda:0 rm:0");
    int tried = 0;
    for (char *save = NULL, *dn = strtok_r(devs, " ,", &save); dn; dn = strtok_r(NULL, " ,", &save)) {
        struct hcq_device *dev = NULL;
        struct hcq_program *prog = NULL;
        struct hcq_queue *q = NULL;
        if (hcq_device_open(dn, &dev) != HCQ_OK) {
            printf("    %s: does not open here, skipped\n", dn);
            continue;
        }
        CHECK_OK(hcq_program_load(dev, "k_llm_dequant_f16", &prog));
        CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
        int cases = 0, exact = 0, near = 0;
        for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
            for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++) {
                const uint32_t k = ks[ki];
                uint32_t rt = 0;
                uint8_t *w = make_rows(types[ti], rows, k, &rt);
                CHECK(w);
                const uint64_t rb = k_llm_row_bytes(rt, k), n = (uint64_t)rows * k;
                uint16_t *out = malloc(2 * n);
                CHECK(out);
                memset(out, 0xFF, 2 * n); /* NaN poison */
                struct hcq_buf *wb, *ob;
                CHECK_OK(hcq_buf_alloc(dev, rb * rows, HCQ_MEM_DEVICE, &wb));
                CHECK_OK(hcq_buf_alloc(dev, 2 * n, HCQ_MEM_DEVICE, &ob));
                CHECK_OK(hcq_buf_write(wb, 0, w, rb * rows));
                CHECK_OK(hcq_buf_write(ob, 0, out, 2 * n));
                struct k_llm_dequant_f16_params p = {
                    .w_va = hcq_buf_va(wb), .out_va = hcq_buf_va(ob), .type = rt, .k = k, .rows = rows};
                uint32_t grid[3] = {96, 1, 1}, block[3] = {K_LLM_GEMM_AUX_BLOCK, 1, 1};
                CHECK_OK(hcq_queue_launch(q, prog, grid, block, &p, sizeof p));
                CHECK_OK(hcq_queue_finish(q, 20ull * 1000 * 1000 * 1000));
                CHECK_OK(hcq_buf_read(ob, 0, out, 2 * n));
                const bool fused = types[ti] == LLM_TYPE_Q4_K || types[ti] == LLM_TYPE_Q5_K;
                int bad = 0;
                for (uint32_t r = 0; r < rows; r++)
                    for (uint32_t i = 0; i < k; i++) {
                        const uint16_t want = ops_half_f32_to_f16(k_llm_dq_at(rt, w + r * rb, i)),
                                       got = out[(size_t)r * k + i];
                        const int d = (int)got - (int)want;
                        if (d == 0) {
                            exact++;
                            continue;
                        }
                        if (fused && (d == 1 || d == -1) && (got & 0x7C00) != 0x7C00) {
                            near++;
                            continue;
                        }
                        if (bad++ < 3)
                            CHECKF(0, "%s type %#x k %u row %u value %u: f16 %#06x, want %#06x", dn, rt, k, r,
                                   i, got, want);
                    }
                CHECK(bad == 0);
                cases++;
                hcq_buf_free(wb), hcq_buf_free(ob);
                free(w), free(out);
            }
        }
        printf("    %s: %d matrices, %d values identical, %d one f16 step apart (fused multiply-add)\n", dn,
               cases, exact, near);
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
    static const struct th_case cases[] = {TH_CASE(dequant_f16_every_value)};
    return th_run("llm_dequant", NULL, cases, TH_COUNT(cases), argc - 1, argv + 1) ? 1 : 0;
}
