/* SPDX-License-Identifier: MIT */
/*
 * test_llm_quant.c - quant formats: f16/bf16 conversion against exact cases, quantize ->
 * dequantize round trips of fresh random data for every type with a per-type bound on the
 * normalised RMS error (and max error vs the block range), and hand-built blocks decoded
 * against the layout rules of docs/perf/anchors.md §2.4 written out independently here.
 */
#include "harness.h"
#include "k_llm_quant.h"
#include "llm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

TEST(f16_exact)
{
    CHECK(llm_f32_to_f16(1.0f) == 0x3C00 && llm_f16_to_f32(0x3C00) == 1.0f);
    CHECK(llm_f32_to_f16(-2.0f) == 0xC000);
    CHECK(llm_f32_to_f16(65504.0f) == 0x7BFF && llm_f32_to_f16(70000.0f) == 0x7C00);
    CHECK(llm_f16_to_f32(0x0001) == ldexpf(1, -24)); /* smallest subnormal */
    CHECK(llm_f32_to_f16(ldexpf(1, -24)) == 0x0001);
    CHECK(llm_f32_to_f16(ldexpf(1, -14)) == 0x0400);            /* smallest normal */
    CHECK(llm_f32_to_f16(1.0f + ldexpf(1, -11)) == 0x3C00);     /* tie -> even */
    CHECK(llm_f32_to_f16(1.0f + 3 * ldexpf(1, -11)) == 0x3C02); /* tie -> even (up) */
    CHECK(isnan(llm_f16_to_f32(llm_f32_to_f16(NAN))));
    CHECK(llm_f32_to_bf16(1.0f) == 0x3F80 && llm_bf16_to_f32(0x3F80) == 1.0f);
    /* every f16 bit pattern that is finite round-trips */
    for (uint32_t h = 0; h < 0x10000; h++) {
        if ((h & 0x7C00) == 0x7C00)
            continue;
        float f = llm_f16_to_f32((uint16_t)h);
        uint16_t back = llm_f32_to_f16(f);
        CHECKF(back == h || (f == 0 && (back & 0x7FFF) == 0), "f16 0x%04x -> %g -> 0x%04x", h, f, back);
    }
done:;
}

struct qcase {
    enum llm_type type;
    double nrmse_max; /* RMS error / RMS of the data */
};

TEST(roundtrip_all_types)
{
    static const struct qcase cases[] = {
        {LLM_TYPE_F32, 0},      {LLM_TYPE_F16, 4e-4},   {LLM_TYPE_BF16, 3e-3},  {LLM_TYPE_Q8_0, 0.006},
        {LLM_TYPE_Q4_0, 0.09},  {LLM_TYPE_Q4_1, 0.085}, {LLM_TYPE_Q5_0, 0.045}, {LLM_TYPE_Q5_1, 0.042},
        {LLM_TYPE_Q4_K, 0.085}, {LLM_TYPE_Q5_K, 0.045}, {LLM_TYPE_Q6_K, 0.022},
    };
    const uint64_t n = 256 * 64;
    float *x = malloc(n * 4), *y = malloc(n * 4);
    uint8_t *q = malloc(n * 4);
    CHECK(x && y && q);
    for (uint64_t i = 0; i < n; i++) /* mixed scales per block, some blocks offset */
        x[i] = th_randf(-1, 1) * (float)(1 + (i / 256) % 7) + ((i / 512) % 3 == 0 ? 0.5f : 0);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        enum llm_type ty = cases[c].type;
        uint64_t bytes = llm_type_row_bytes(ty, n);
        CHECK(bytes > 0);
        memset(q, 0xA5, n * 4);
        for (uint64_t i = 0; i < n; i++)
            y[i] = NAN; /* poisoned output */
        CHECK_OK(llm_quantize(ty, x, q, n));
        CHECK_OK(llm_dequantize(ty, q, y, n));
        double se = 0, sx = 0;
        for (uint64_t i = 0; i < n; i++) {
            CHECKF(isfinite(y[i]), "%s: value %llu not finite", llm_type_name(ty), (unsigned long long)i);
            se += ((double)y[i] - x[i]) * ((double)y[i] - x[i]);
            sx += (double)x[i] * x[i];
        }
        double nrmse = sqrt(se / sx);
        printf("    %-5s %6.3f bits/value  nrmse %.5f (bound %.3f)\n", llm_type_name(ty), 8.0 * bytes / n,
               nrmse, cases[c].nrmse_max);
        CHECKF(nrmse <= cases[c].nrmse_max, "%s nrmse %g > %g", llm_type_name(ty), nrmse, cases[c].nrmse_max);
    }
    CHECK(llm_quantize(LLM_TYPE_Q4_K, x, q, 100) == HCQ_ERR_INVALID);
    CHECK(llm_dequantize(LLM_TYPE_Q2_K, q, y, 256) == HCQ_ERR_INVALID);
done:
    free(x);
    free(y);
    free(q);
}

/* Independent decode of one Q6_K block from the anchors.md §2.4 wording. */
TEST(q6_k_layout)
{
    struct llm_block_q6_k b;
    for (size_t i = 0; i < sizeof b; i++)
        ((uint8_t *)&b)[i] = (uint8_t)th_rand();
    b.d = llm_f32_to_f16(0.01f);
    float y[256];
    CHECK_OK(llm_dequantize(LLM_TYPE_Q6_K, &b, y, 256));
    for (int half = 0; half < 2; half++) {
        for (int v = 0; v < 128; v++) {
            int l = v % 32, grp = v / 32; /* values l, l+32, l+64, l+96 */
            int lo = grp == 0   ? b.ql[64 * half + l] & 15
                     : grp == 1 ? b.ql[64 * half + l + 32] & 15
                     : grp == 2 ? b.ql[64 * half + l] >> 4
                                : b.ql[64 * half + l + 32] >> 4;
            int hi = (b.qh[32 * half + l] >> (2 * grp)) & 3;
            int sc = b.scales[8 * half + l / 16 + 2 * grp];
            float want = 0.01f * 0.0f + llm_f16_to_f32(b.d) * (float)sc * (float)((lo | (hi << 4)) - 32);
            CHECKF(y[128 * half + v] == want, "value %d: %g vs %g", 128 * half + v, y[128 * half + v], want);
        }
    }
done:;
}

/* Independent decode of one Q4_K block: scale/min packing for j < 4 and j >= 4. */
TEST(q4_k_layout)
{
    struct llm_block_q4_k b;
    for (size_t i = 0; i < sizeof b; i++)
        ((uint8_t *)&b)[i] = (uint8_t)th_rand();
    b.d = llm_f32_to_f16(0.5f);
    b.dmin = llm_f32_to_f16(0.25f);
    float y[256];
    CHECK_OK(llm_dequantize(LLM_TYPE_Q4_K, &b, y, 256));
    for (int v = 0; v < 256; v++) {
        int chunk = v / 64, within = v % 64, j = 2 * chunk + within / 32, l = within % 32;
        int sc, m;
        if (j < 4) {
            sc = b.scales[j] & 63;
            m = b.scales[j + 4] & 63;
        } else {
            sc = (b.scales[j + 4] & 15) | ((b.scales[j - 4] >> 6) << 4);
            m = (b.scales[j + 4] >> 4) | ((b.scales[j] >> 6) << 4);
        }
        int qv = within < 32 ? b.qs[32 * chunk + l] & 15 : b.qs[32 * chunk + l] >> 4;
        float want = 0.5f * (float)sc * (float)qv - 0.25f * (float)m;
        CHECKF(fabsf(y[v] - want) <= 1e-6f * fabsf(want) + 1e-6f, "value %d: %g vs %g", v, y[v], want);
    }
done:;
}

int
main(int argc, char **argv)
{
    static const struct th_case cases[] = {
        TH_CASE(f16_exact),
        TH_CASE(roundtrip_all_types),
        TH_CASE(q6_k_layout),
        TH_CASE(q4_k_layout),
    };
    return th_run("llm_quant", NULL, cases, TH_COUNT(cases), argc - 1, argv + 1) ? 1 : 0;
}
