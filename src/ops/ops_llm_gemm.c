/* SPDX-License-Identifier: MIT */
/*
 * ops_llm_gemm.c - CPU twins and descriptors of the LLM prefill GEMM kernels
 * (src/kernels/k_llm_gemm.cu, and k_llm_gemm_wgmma in the sm_90a k_gemm_wgmma.cu). Layer: ops. Same f16
 * roundings as the kernels (weights and activations to f16, nearest even); the products are summed in double
 * and rounded once, where the kernel sums in f32 (within the bound in k_llm_gemm.cu).
 */
#include "ops_half.h"
#include "ops_llm.h"
#include "k_llm_gemm_params.h"

#include <stdlib.h>
#include <stddef.h>
#include <string.h>

static void
twin_dequant_f16(struct hcq_twin_launch *l)
{
    struct k_llm_dequant_f16_params p;
    memcpy(&p, l->params, sizeof p);
    uint64_t rb = k_llm_gemm_row_bytes(p.type, p.k);
    if (!rb || !p.rows || !p.k)
        return;
    const uint8_t *w = HCQ_TWIN_PTR(l, p.w_va, rb * p.rows);
    uint16_t *out = HCQ_TWIN_PTR(l, p.out_va, 2ull * p.rows * p.k);
    if (!w || !out)
        return;
    for (uint64_t r = 0; r < p.rows; r++)
        for (uint32_t j = 0; j < p.k; j++)
            out[r * p.k + j] = ops_half_f32_to_f16(k_llm_dq_at(p.type, w + r * rb, j));
}

static void
twin_cast_f16(struct hcq_twin_launch *l)
{
    struct k_llm_cast_f16_params p;
    memcpy(&p, l->params, sizeof p);
    if (!p.n || !p.k)
        return;
    const float *x = HCQ_TWIN_PTR(l, p.x_va, 4ull * ((uint64_t)(p.n - 1) * p.x_stride + p.k));
    uint16_t *out = HCQ_TWIN_PTR(l, p.out_va, 2ull * p.n * p.k);
    if (!x || !out)
        return;
    for (uint64_t i = 0; i < p.n; i++)
        for (uint32_t j = 0; j < p.k; j++)
            out[i * p.k + j] = ops_half_f32_to_f16(x[i * p.x_stride + j]);
}

/* Value j of a Q4_KR row as k_llm_gemm_sk_q4_k forms it: q * ds - dm in one f16 rounding, ds = d * sc
 * and dm = dmin * m each rounded to f16 first (the product and difference are exact in double) */
static uint16_t
q4_kr_f16_at(const uint8_t *row, uint32_t j)
{
    const uint8_t *g = row + 1152ull * (j / 2048);
    const uint32_t w = j % 2048, b = w / 256, sb = (w % 256) / 32, l = w % 32, c = sb % 4;
    const uint32_t L = 4 * b + 2 * (sb / 4) + l / 16;
    const uint8_t qb = g[(c < 2 ? 0 : 512) + 16 * L + l % 16];
    const int q = c % 2 ? qb >> 4 : qb & 0xF;
    const uint8_t *hd = g + 1024 + 16 * b;
    uint8_t sc, m;
    k_llm_scale_min_k4(hd + 4, (int)sb, &sc, &m);
    const double ds = ops_half_f16_to_f32(ops_half_f32_to_f16(k_llm_f16(k_llm_rd16(hd)) * (float)sc));
    const double dm = ops_half_f16_to_f32(ops_half_f32_to_f16(k_llm_f16(k_llm_rd16(hd + 2)) * (float)m));
    return ops_half_f32_to_f16((float)(q * ds - dm));
}

/* k_llm_gemm (block K_LLM_GEMM_THREADS) and k_llm_gemm_wgmma (K_GEMM_WG_THREADS): the same sums;
 * like the kernels, another block writes nothing. wtype: the weights' layout, f16 rows (0) or
 * K_LLM_T_Q8_0R rows (k_llm_gemm_sk_q8_0: each value q * d rounded to f16, as the kernel) or
 * K_LLM_T_Q4_KR rows (k_llm_gemm_sk_q4_k: q4_kr_f16_at). */
static void
twin_gemm_block(struct hcq_twin_launch *l, uint32_t threads, uint32_t params_off, uint32_t wtype)
{
    struct k_llm_gemm_params p;
    memcpy(&p, (const uint8_t *)l->params + params_off, sizeof p);
    if (l->block[0] != threads || l->block[1] != 1 || l->block[2] != 1 || !p.n || !p.rows)
        return;
    const uint16_t *x = HCQ_TWIN_PTR(l, p.x_va, 2ull * p.n * p.k);
    const uint64_t w_row_B = wtype ? k_llm_row_bytes(wtype, p.k) : 2ull * p.k;
    const uint8_t *w = HCQ_TWIN_PTR(l, p.w_va, w_row_B * p.rows);
    float *y = HCQ_TWIN_PTR(l, p.y_va, 4ull * ((uint64_t)(p.n - 1) * p.y_stride + p.rows));
    const float *b = p.b_va ? HCQ_TWIN_PTR(l, p.b_va, 4ull * p.rows) : NULL;
    if ((p.k && (!x || !w)) || !y || (p.b_va && !b))
        return;
    float *xf = malloc(4ull * ((uint64_t)p.n + 1) * (p.k ? p.k : 1));
    if (!xf) { /* cannot run: report a fault at y rather than write garbage */
        l->fault = true;
        l->fault_va = p.y_va;
        return;
    }
    float *wr = xf + (uint64_t)p.n * p.k;
    for (uint64_t i = 0; i < (uint64_t)p.n * p.k; i++)
        xf[i] = ops_half_f16_to_f32(x[i]);
    for (uint64_t r = 0; r < p.rows; r++) {
        const uint8_t *row = w + r * w_row_B;
        for (uint32_t j = 0; j < p.k; j++) {
            uint16_t h;
            if (wtype == K_LLM_T_Q4_KR)
                h = q4_kr_f16_at(row, j);
            else if (wtype)
                h = ops_half_f32_to_f16(k_llm_dq_at(wtype, row, j));
            else
                memcpy(&h, row + 2ull * j, 2);
            wr[j] = ops_half_f16_to_f32(h);
        }
        for (uint64_t i = 0; i < p.n; i++) {
            double s = 0;
            for (uint32_t j = 0; j < p.k; j++)
                s += (double)xf[i * p.k + j] * wr[j];
            float *yo = &y[i * p.y_stride + r];
            float v = (float)s + (b ? b[r] : 0.0f);
            *yo = p.accumulate ? *yo + v : v;
        }
    }
    free(xf);
}

static void
twin_gemm(struct hcq_twin_launch *l)
{
    twin_gemm_block(l, K_LLM_GEMM_THREADS, 0, 0);
}

static void
twin_gemm_wgmma(struct hcq_twin_launch *l)
{
    twin_gemm_block(l, K_GEMM_WG_THREADS, 0, 0);
}

/* k_llm_gemm_sk: the same sums whatever the split (its k_llm_gemm_params first) */
static void
twin_gemm_sk(struct hcq_twin_launch *l)
{
    twin_gemm_block(l, K_LLM_GEMM_SK_THREADS, offsetof(struct k_llm_gemm_sk_params, g), 0);
}

/* The k_llm_gemm_sk kernels over quantized rows of type wtype, under their own preconditions: k a
 * multiple of the rows' group, k_chunk of the kernel's stage, at most n_max tokens */
static void
twin_gemm_sk_quant(struct hcq_twin_launch *l, uint32_t group, uint32_t stage, uint32_t n_max, uint32_t wtype)
{
    struct k_llm_gemm_sk_params p;
    memcpy(&p, l->params, sizeof p);
    if (p.g.k % group || !p.k_chunk || p.k_chunk % stage || p.g.n > n_max)
        return;
    twin_gemm_block(l, K_LLM_GEMM_SK_THREADS, offsetof(struct k_llm_gemm_sk_params, g), wtype);
}

/* k_llm_gemm_sk_q8_0: the same over Q8_0R rows */
static void
twin_gemm_sk_q8_0(struct hcq_twin_launch *l)
{
    twin_gemm_sk_quant(l, 1024, 128, 64, K_LLM_T_Q8_0R);
}

/* k_llm_gemm_wgmma_tma: the same, its k_llm_gemm_params after the two tensor maps */
static void
twin_gemm_wgmma_tma(struct hcq_twin_launch *l)
{
    twin_gemm_block(l, K_GEMM_WG_THREADS, offsetof(struct k_llm_gemm_tma_params, g), 0);
}

/* k_llm_gemm_sk_q4_k: the same over Q4_KR rows */
static void
twin_gemm_sk_q4_k(struct hcq_twin_launch *l)
{
    twin_gemm_sk_quant(l, 2048, 256, 32, K_LLM_T_Q4_KR);
}

const struct hcq_kernel_desc ops_llm_gemm_kernels[] = {
    {"k_llm_dequant_f16", "k_llm_gemm", sizeof(struct k_llm_dequant_f16_params), twin_dequant_f16},
    {"k_llm_cast_f16", "k_llm_gemm", sizeof(struct k_llm_cast_f16_params), twin_cast_f16},
    {"k_llm_gemm", "k_llm_gemm", sizeof(struct k_llm_gemm_params), twin_gemm},
    {"k_llm_gemm_sk", "k_llm_gemm_sk", sizeof(struct k_llm_gemm_sk_params), twin_gemm_sk,
     K_LLM_GEMM_SK_SHARED_B},
    {"k_llm_gemm_sk_q8_0", "k_llm_gemm_sk", sizeof(struct k_llm_gemm_sk_params), twin_gemm_sk_q8_0,
     K_LLM_GEMM_SK_Q8_SHARED_B},
    {"k_llm_gemm_sk_q4_k", "k_llm_gemm_sk", sizeof(struct k_llm_gemm_sk_params), twin_gemm_sk_q4_k,
     K_LLM_GEMM_SK_Q4K_SHARED_B},
    /* sm_90a only (Makefile CU_SM90A_SRCS); its ring in dynamic shared memory */
    {"k_llm_gemm_wgmma", "k_gemm_wgmma", sizeof(struct k_llm_gemm_params), twin_gemm_wgmma,
     K_GEMM_WG_SHARED_B, 90},
    {"k_llm_gemm_wgmma_tma", "k_gemm_wgmma_tma", sizeof(struct k_llm_gemm_tma_params), twin_gemm_wgmma_tma,
     K_GEMM_WG_SHARED_B, 90},
    {0},
};
