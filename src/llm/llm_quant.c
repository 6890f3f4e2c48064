/* SPDX-License-Identifier: MIT */
/*
 * llm_quant.c - tensor type table, f16/bf16 conversion, CPU dequantize (through the block
 * decoders shared with the kernels, k_llm_quant.h) and a reference quantizer for every
 * supported type. Layer: llm. Block layouts: docs/perf/anchors.md §2.4.
 *
 * The quantizers are simple and deterministic (round to nearest with the block's range;
 * for K formats the sub-block scales are themselves quantized to 6 or 8 bits); they aim
 * at correct, bounded error, not at llama.cpp's error-minimising searches.
 */
#include "llm.h"
#include "llm_model_priv.h"

#include "util_log.h"
#include "k_llm_quant.h"

#include <math.h>
#include <string.h>

struct type_row {
    const char *name;
    uint32_t block_values;
    uint32_t block_bytes;
};

/* ggml type ids (GGUF spec); sizes from anchors.md §2.4 / the block structs. */
static const struct type_row type_rows[LLM_TYPE_COUNT] = {
    [LLM_TYPE_F32] = {"f32", 1, 4},
    [LLM_TYPE_F16] = {"f16", 1, 2},
    [LLM_TYPE_BF16] = {"bf16", 1, 2},
    [LLM_TYPE_Q4_0] = {"q4_0", LLM_QK, sizeof(struct llm_block_q4_0)},
    [LLM_TYPE_Q4_1] = {"q4_1", LLM_QK, sizeof(struct llm_block_q4_1)},
    [LLM_TYPE_Q5_0] = {"q5_0", LLM_QK, sizeof(struct llm_block_q5_0)},
    [LLM_TYPE_Q5_1] = {"q5_1", LLM_QK, sizeof(struct llm_block_q5_1)},
    [LLM_TYPE_Q8_0] = {"q8_0", LLM_QK, sizeof(struct llm_block_q8_0)},
    [LLM_TYPE_Q4_K] = {"q4_k", LLM_QK_K, sizeof(struct llm_block_q4_k)},
    [LLM_TYPE_Q5_K] = {"q5_k", LLM_QK_K, sizeof(struct llm_block_q5_k)},
    [LLM_TYPE_Q6_K] = {"q6_k", LLM_QK_K, sizeof(struct llm_block_q6_k)},
};

const char *
llm_type_name(uint32_t type)
{
    return type < LLM_TYPE_COUNT ? type_rows[type].name : NULL;
}

bool
llm_type_from_name(const char *name, enum llm_type *type_out)
{
    for (uint32_t t = 0; t < LLM_TYPE_COUNT; t++) {
        if (type_rows[t].name && !strcasecmp(type_rows[t].name, name)) {
            *type_out = (enum llm_type)t;
            return true;
        }
    }
    return false;
}

uint32_t
llm_type_block_values(uint32_t type)
{
    return type < LLM_TYPE_COUNT ? type_rows[type].block_values : 0;
}

uint32_t
llm_type_block_bytes(uint32_t type)
{
    return type < LLM_TYPE_COUNT ? type_rows[type].block_bytes : 0;
}

uint64_t
llm_type_row_bytes(uint32_t type, uint64_t n)
{
    uint32_t bv = llm_type_block_values(type);
    if (!bv || n % bv)
        return 0;
    return n / bv * type_rows[type].block_bytes;
}

/* ==== f16 / bf16 ==== */

float
llm_f16_to_f32(uint16_t h)
{
    return k_llm_f16(h);
}

uint16_t
llm_f32_to_f16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t ax = x & 0x7FFFFFFFu;
    if (ax >= 0x7F800000u) /* inf / nan */
        return (uint16_t)(sign | 0x7C00u | (ax > 0x7F800000u ? 0x200u : 0));
    if (ax >= 0x477FF000u) /* rounds to >= 65520: overflow to inf */
        return (uint16_t)(sign | 0x7C00u);
    if (ax < 0x38800000u) { /* below the smallest normal: subnormal, round half even */
        float af;
        memcpy(&af, &ax, 4);
        float scaled = af * 16777216.0f; /* 2^24: units of the smallest subnormal */
        uint32_t q = (uint32_t)lrintf(scaled);
        return (uint16_t)(sign | q);
    }
    uint32_t mant = ax & 0x7FFFFFu;
    uint32_t exp = (ax >> 23) - 112u;
    uint32_t h = (exp << 10) | (mant >> 13);
    uint32_t rem = mant & 0x1FFFu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1)))
        h++; /* may carry into the exponent, which is correct */
    return (uint16_t)(sign | h);
}

float
llm_bf16_to_f32(uint16_t h)
{
    return k_llm_bf16(h);
}

uint16_t
llm_f32_to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7FFFFFFFu) > 0x7F800000u)
        return (uint16_t)((x >> 16) | 0x40u); /* quiet nan */
    x += 0x7FFFu + ((x >> 16) & 1);
    return (uint16_t)(x >> 16);
}

/* ==== Dequantize ==== */

enum hcq_status
llm_dequantize(uint32_t type, const void *src, float *dst, uint64_t n)
{
    uint32_t bv = llm_type_block_values(type);
    if (!bv || n % bv)
        return hcq_err(HCQ_ERR_INVALID, "llm_dequantize: type %u, %llu values", type, (unsigned long long)n);
    uint64_t nb = n / bv;
    const uint8_t *s = src;
    for (uint64_t i = 0; i < nb; i++) {
        float *y = dst + i * bv;
        switch (type) {
        case LLM_TYPE_F32:
            memcpy(y, s + 4 * i, 4);
            break;
        case LLM_TYPE_F16: {
            uint16_t h;
            memcpy(&h, s + 2 * i, 2);
            *y = k_llm_f16(h);
            break;
        }
        case LLM_TYPE_BF16: {
            uint16_t h;
            memcpy(&h, s + 2 * i, 2);
            *y = k_llm_bf16(h);
            break;
        }
        case LLM_TYPE_Q4_0:
            k_llm_dq_q4_0((const struct llm_block_q4_0 *)s + i, y);
            break;
        case LLM_TYPE_Q4_1:
            k_llm_dq_q4_1((const struct llm_block_q4_1 *)s + i, y);
            break;
        case LLM_TYPE_Q5_0:
            k_llm_dq_q5_0((const struct llm_block_q5_0 *)s + i, y);
            break;
        case LLM_TYPE_Q5_1:
            k_llm_dq_q5_1((const struct llm_block_q5_1 *)s + i, y);
            break;
        case LLM_TYPE_Q8_0:
            k_llm_dq_q8_0((const struct llm_block_q8_0 *)s + i, y);
            break;
        case LLM_TYPE_Q4_K:
            for (int c = 0; c < 4; c++)
                k_llm_dq_q4_k_chunk((const struct llm_block_q4_k *)s + i, c, y + 64 * c);
            break;
        case LLM_TYPE_Q5_K:
            for (int c = 0; c < 4; c++)
                k_llm_dq_q5_k_chunk((const struct llm_block_q5_k *)s + i, c, y + 64 * c);
            break;
        case LLM_TYPE_Q6_K:
            for (int h = 0; h < 2; h++)
                k_llm_dq_q6_k_half((const struct llm_block_q6_k *)s + i, h, y + 128 * h);
            break;
        default:
            return hcq_err(HCQ_ERR_UNSUPPORTED, "llm_dequantize: type %u", type);
        }
    }
    return HCQ_OK;
}

/* ==== Quantize: 32-value formats ==== */

/* The value of largest magnitude, with its sign. */
static float
signed_absmax(const float *x, int n)
{
    float m = 0;
    for (int i = 0; i < n; i++)
        if (fabsf(x[i]) > fabsf(m))
            m = x[i];
    return m;
}

static int
clampi(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* Symmetric formats: scale so the largest-magnitude value maps to -half (q4_0: -8, q5_0: -16). */
static void
quant_sym(const float *x, int half, uint16_t *d_out, int *q)
{
    float m = signed_absmax(x, LLM_QK);
    float d = m / (float)-half;
    uint16_t dh = llm_f32_to_f16(d);
    float dq = k_llm_f16(dh);
    float id = dq != 0 ? 1.0f / dq : 0;
    for (int j = 0; j < LLM_QK; j++)
        q[j] = clampi((int)lrintf(x[j] * id) + half, 0, 2 * half - 1);
    *d_out = dh;
}

/* Affine formats: q = (x - min) / d, levels = 15 or 31. */
static void
quant_affine(const float *x, int levels, uint16_t *d_out, uint16_t *m_out, int *q)
{
    float mn = x[0], mx = x[0];
    for (int j = 1; j < LLM_QK; j++) {
        mn = fminf(mn, x[j]);
        mx = fmaxf(mx, x[j]);
    }
    uint16_t dh = llm_f32_to_f16((mx - mn) / (float)levels), mh = llm_f32_to_f16(mn);
    float dq = k_llm_f16(dh), mq = k_llm_f16(mh);
    float id = dq != 0 ? 1.0f / dq : 0;
    for (int j = 0; j < LLM_QK; j++)
        q[j] = clampi((int)lrintf((x[j] - mq) * id), 0, levels);
    *d_out = dh;
    *m_out = mh;
}

static void
pack_nibbles(const int *q, uint8_t *qs)
{
    for (int j = 0; j < LLM_QK / 2; j++)
        qs[j] = (uint8_t)((q[j] & 0xF) | ((q[j + LLM_QK / 2] & 0xF) << 4));
}

static void
pack_qh(const int *q, uint8_t *qh)
{
    uint32_t h = 0;
    for (int j = 0; j < LLM_QK; j++)
        h |= (uint32_t)((q[j] >> 4) & 1) << j;
    for (int k = 0; k < 4; k++)
        qh[k] = (uint8_t)(h >> (8 * k));
}

static void
quant_block32(uint32_t type, const float *x, void *dst)
{
    int q[LLM_QK];
    switch (type) {
    case LLM_TYPE_Q4_0: {
        struct llm_block_q4_0 *b = dst;
        quant_sym(x, 8, &b->d, q);
        pack_nibbles(q, b->qs);
        break;
    }
    case LLM_TYPE_Q4_1: {
        struct llm_block_q4_1 *b = dst;
        quant_affine(x, 15, &b->d, &b->m, q);
        pack_nibbles(q, b->qs);
        break;
    }
    case LLM_TYPE_Q5_0: {
        struct llm_block_q5_0 *b = dst;
        quant_sym(x, 16, &b->d, q);
        pack_nibbles(q, b->qs);
        pack_qh(q, b->qh);
        break;
    }
    case LLM_TYPE_Q5_1: {
        struct llm_block_q5_1 *b = dst;
        quant_affine(x, 31, &b->d, &b->m, q);
        pack_nibbles(q, b->qs);
        pack_qh(q, b->qh);
        break;
    }
    case LLM_TYPE_Q8_0: {
        struct llm_block_q8_0 *b = dst;
        float amax = fabsf(signed_absmax(x, LLM_QK));
        b->d = llm_f32_to_f16(amax / 127.0f);
        float dq = k_llm_f16(b->d), id = dq != 0 ? 1.0f / dq : 0;
        for (int j = 0; j < LLM_QK; j++)
            b->qs[j] = (int8_t)clampi((int)lrintf(x[j] * id), -127, 127);
        break;
    }
    default:
        break;
    }
}

/* ==== Quantize: K formats ==== */

/* Q4_K/Q5_K: per-sub-block (32) affine scale/min, quantized to 6 bits under d/dmin. */
static void
quant_k_scales(const float *x, int levels, uint16_t *d_out, uint16_t *dmin_out, uint8_t scales[12],
               float *dsub, float *msub)
{
    float sc[8], mi[8], max_sc = 0, max_mi = 0;
    for (int j = 0; j < 8; j++) {
        float mn = 0, mx = 0; /* include 0 so mins stay >= 0 */
        for (int l = 0; l < 32; l++) {
            mn = fminf(mn, x[32 * j + l]);
            mx = fmaxf(mx, x[32 * j + l]);
        }
        sc[j] = (mx - mn) / (float)levels;
        mi[j] = -mn;
        max_sc = fmaxf(max_sc, sc[j]);
        max_mi = fmaxf(max_mi, mi[j]);
    }
    *d_out = llm_f32_to_f16(max_sc / 63.0f);
    *dmin_out = llm_f32_to_f16(max_mi / 63.0f);
    float d = k_llm_f16(*d_out), dmin = k_llm_f16(*dmin_out);
    uint8_t ls[8], lm[8];
    for (int j = 0; j < 8; j++) {
        /* round the scale up so the sub-block's range still fits in `levels` steps */
        ls[j] = (uint8_t)clampi(d > 0 ? (int)ceilf(sc[j] / d - 1e-4f) : 0, 0, 63);
        lm[j] = (uint8_t)clampi(dmin > 0 ? (int)lrintf(mi[j] / dmin) : 0, 0, 63);
    }
    memset(scales, 0, 12);
    for (int j = 0; j < 8; j++) {
        if (j < 4) {
            scales[j] |= ls[j] & 63;
            scales[j + 4] |= lm[j] & 63;
        } else {
            scales[j + 4] = (uint8_t)((ls[j] & 0xF) | ((lm[j] & 0xF) << 4));
            scales[j - 4] |= (uint8_t)((ls[j] >> 4) << 6);
            scales[j] |= (uint8_t)((lm[j] >> 4) << 6);
        }
    }
    for (int j = 0; j < 8; j++) {
        uint8_t s, m;
        k_llm_scale_min_k4(scales, j, &s, &m);
        dsub[j] = d * s;
        msub[j] = dmin * m;
    }
}

static void
quant_q4_k(const float *x, struct llm_block_q4_k *b)
{
    float ds[8], ms[8];
    quant_k_scales(x, 15, &b->d, &b->dmin, b->scales, ds, ms);
    for (int c = 0; c < 4; c++) {
        for (int l = 0; l < 32; l++) {
            int j0 = 2 * c, j1 = 2 * c + 1;
            int q0 = ds[j0] > 0 ? clampi((int)lrintf((x[64 * c + l] + ms[j0]) / ds[j0]), 0, 15) : 0;
            int q1 = ds[j1] > 0 ? clampi((int)lrintf((x[64 * c + 32 + l] + ms[j1]) / ds[j1]), 0, 15) : 0;
            b->qs[32 * c + l] = (uint8_t)(q0 | (q1 << 4));
        }
    }
}

static void
quant_q5_k(const float *x, struct llm_block_q5_k *b)
{
    float ds[8], ms[8];
    quant_k_scales(x, 31, &b->d, &b->dmin, b->scales, ds, ms);
    memset(b->qh, 0, sizeof b->qh);
    for (int c = 0; c < 4; c++) {
        for (int l = 0; l < 32; l++) {
            int j0 = 2 * c, j1 = 2 * c + 1;
            int q0 = ds[j0] > 0 ? clampi((int)lrintf((x[64 * c + l] + ms[j0]) / ds[j0]), 0, 31) : 0;
            int q1 = ds[j1] > 0 ? clampi((int)lrintf((x[64 * c + 32 + l] + ms[j1]) / ds[j1]), 0, 31) : 0;
            b->qs[32 * c + l] = (uint8_t)((q0 & 0xF) | ((q1 & 0xF) << 4));
            b->qh[l] |= (uint8_t)(((q0 >> 4) << (2 * c)) | ((q1 >> 4) << (2 * c + 1)));
        }
    }
}

static void
quant_q6_k(const float *x, struct llm_block_q6_k *b)
{
    float sc[16], max_abs = 0;
    for (int s = 0; s < 16; s++) {
        sc[s] = signed_absmax(x + 16 * s, 16) / -32.0f;
        max_abs = fmaxf(max_abs, fabsf(sc[s]));
    }
    b->d = llm_f32_to_f16(max_abs / 127.0f);
    float d = k_llm_f16(b->d);
    int q[LLM_QK_K];
    for (int s = 0; s < 16; s++) {
        b->scales[s] = (int8_t)clampi(d > 0 ? (int)lrintf(sc[s] / d) : 0, -127, 127);
        float ds = d * b->scales[s];
        for (int l = 0; l < 16; l++)
            q[16 * s + l] = ds != 0 ? clampi((int)lrintf(x[16 * s + l] / ds) + 32, 0, 63) : 32;
    }
    /* layout per 128-value half: ql[l] = v(l) | v(l+64) << 4, ql[l+32] = v(l+32) | v(l+96) << 4,
     * qh[l] = top bits of v(l), v(l+32), v(l+64), v(l+96) at bit 0, 2, 4, 6 (anchors.md §2.4) */
    for (int h = 0; h < 2; h++) {
        const int *v = q + 128 * h;
        uint8_t *ql = b->ql + 64 * h, *qh = b->qh + 32 * h;
        for (int l = 0; l < 32; l++) {
            ql[l] = (uint8_t)((v[l] & 0xF) | ((v[l + 64] & 0xF) << 4));
            ql[l + 32] = (uint8_t)((v[l + 32] & 0xF) | ((v[l + 96] & 0xF) << 4));
            qh[l] = (uint8_t)((v[l] >> 4) | ((v[l + 32] >> 4) << 2) | ((v[l + 64] >> 4) << 4) |
                              ((v[l + 96] >> 4) << 6));
        }
    }
}

enum hcq_status
llm_quantize(uint32_t type, const float *src, void *dst, uint64_t n)
{
    uint32_t bv = llm_type_block_values(type), bb = llm_type_block_bytes(type);
    if (!bv || n % bv)
        return hcq_err(HCQ_ERR_INVALID, "llm_quantize: type %u, %llu values", type, (unsigned long long)n);
    uint8_t *d = dst;
    for (uint64_t i = 0; i < n / bv; i++) {
        const float *x = src + i * bv;
        void *blk = d + i * bb;
        switch (type) {
        case LLM_TYPE_F32:
            memcpy(blk, x, 4);
            break;
        case LLM_TYPE_F16: {
            uint16_t h = llm_f32_to_f16(*x);
            memcpy(blk, &h, 2);
            break;
        }
        case LLM_TYPE_BF16: {
            uint16_t h = llm_f32_to_bf16(*x);
            memcpy(blk, &h, 2);
            break;
        }
        case LLM_TYPE_Q4_K:
            quant_q4_k(x, blk);
            break;
        case LLM_TYPE_Q5_K:
            quant_q5_k(x, blk);
            break;
        case LLM_TYPE_Q6_K:
            quant_q6_k(x, blk);
            break;
        default:
            quant_block32(type, x, blk);
            break;
        }
    }
    return HCQ_OK;
}

/* Rewrite `rows` rows of k values of ggml type (rtype & ~K_LLM_RP) into the repacked layout
 * rtype (k_llm_quant.h): same bytes per row, blocks split into their parts. */
void
llm_repack_rows(uint32_t rtype, const void *src, void *dst, uint64_t rows, uint32_t k)
{
    uint32_t bv = k_llm_rp_block_values(rtype);
    uint64_t bb = k_llm_row_bytes(rtype & ~K_LLM_RP, bv), rb = k_llm_row_bytes(rtype, k);
    for (uint64_t r = 0; r < rows; r++) {
        const uint8_t *s = (const uint8_t *)src + r * rb;
        uint8_t *d = (uint8_t *)dst + r * rb;
        for (uint32_t b = 0; b < k / bv; b++) {
            uint32_t ps[K_LLM_RP_MAX_PARTS], pd[K_LLM_RP_MAX_PARTS], pl[K_LLM_RP_MAX_PARTS];
            uint32_t np = k_llm_rp_parts(rtype, b, ps, pd, pl);
            for (uint32_t i = 0; i < np; i++)
                memcpy(d + pd[i], s + b * bb + ps[i], pl[i]);
        }
    }
}
