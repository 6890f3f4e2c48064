/* SPDX-License-Identifier: MIT */
/*
 * k_llm_gemm.cu - LLM prefill matmuls on tensor cores (n > 1 tokens):
 *
 *   k_llm_dequant_f16  a quantized weight matrix -> f16 rows (scratch)
 *   k_llm_cast_f16     f32 activations (strided rows) -> dense f16 rows (scratch)
 *   k_llm_gemm         y (+)= x16 . w16^T + b, the k_gemm_mma.h body with B = [rows][k]
 *
 * The model runs the three in a row per weight (llm_model.c, matmul_prefill): the weight
 * is expanded once per prefill batch and then read by the tensor cores as f16, so the
 * dequantization cost is shared by all n tokens of the batch. Tile: 128 tokens x 64
 * output rows, 2 x 2 warps, 4 stages (48 KiB): measured better than 128 x 128 for the
 * m = 512 shapes of small models, whose larger-tile grids leave SMs idle (notes-gemm.md).
 * Params: k_llm_gemm_params.h. Twins: src/ops/ops_llm_gemm.c. Tests: hcq suite
 * kernel_llm_gemm (tests/hcq/hcq_suite_kernels.c) and test_llm_e2e.
 * Error: f16 rounding of weights and activations (relative 2^-11 each), then f32
 * accumulation: |err| <= (2^-10 + k * 2^-23) * sum_j |x_j w_j| (+ rounding of the add).
 */
#define K_GM_BM 128
#define K_GM_BN 64
#define K_GM_WM 2
#define K_GM_WN 2
#define K_GM_STAGES 4
#include "k_gemm_mma.h"
#include "k_llm_gemm_params.h"
#include "k_llm_matvec.h"
#include "k_llm_quant.h"

static_assert(K_GM_THREADS == K_LLM_GEMM_THREADS && K_GM_BM == K_LLM_GEMM_TILE_M && K_GM_BN == K_LLM_GEMM_TILE_N,
              "k_llm_gemm_params.h constants");

static __device__ __forceinline__ uint32_t
k_lg_pack(float a, float b)
{
    uint32_t r;
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(b), "f"(a)); /* a in the low half */
    return r;
}

/* ==== Fast dequantization: one "task" (32 or 64 values, 16-byte loads) per thread ====
 * Why: the per-value reader (k_llm_dq_at) spends tens of instructions and byte loads per
 * value; at pp512 on H100 k_llm_dequant_f16 took 25% of prefill at ~0.95 TB/s. The task
 * shapes are the decode mat-vec's (k_llm_mvq.cuh): for the repacked types every warp load is
 * one contiguous run. Values are computed with the same expressions as k_llm_dq_at, then
 * rounded to f16 (test_llm_dequant.c compares every value). */
static __device__ __forceinline__ uint4
k_lg_ld16(const uint8_t *p)
{
    return __ldg((const uint4 *)p);
}

static __device__ __forceinline__ uint32_t
k_lg_byte(uint4 v, int i)
{
    const uint32_t w = i < 4 ? v.x : i < 8 ? v.y : i < 12 ? v.z : v.w;
    return (w >> (8 * (i % 4))) & 0xFFu;
}

/* 16 values (q - off) * ds, q the 16 bytes of v masked/shifted by the caller, to dst. */
static __device__ __forceinline__ void
k_lg_run16(uint4 q, int off, float ds, uint16_t *dst)
{
    uint32_t o[8];
#pragma unroll
    for (int i = 0; i < 8; i++)
        o[i] = k_lg_pack(ds * (float)((int)k_lg_byte(q, 2 * i) - off), ds * (float)((int)k_lg_byte(q, 2 * i + 1) - off));
    ((uint4 *)dst)[0] = make_uint4(o[0], o[1], o[2], o[3]);
    ((uint4 *)dst)[1] = make_uint4(o[4], o[5], o[6], o[7]);
}

static __device__ __forceinline__ uint4
k_lg_and(uint4 v, uint32_t m)
{
    return make_uint4(v.x & m, v.y & m, v.z & m, v.w & m);
}

static __device__ __forceinline__ uint4
k_lg_shr(uint4 v, uint32_t s)
{
    return make_uint4(v.x >> s, v.y >> s, v.z >> s, v.w >> s);
}

static __device__ __forceinline__ uint4
k_lg_or(uint4 a, uint4 b)
{
    return make_uint4(a.x | b.x, a.y | b.y, a.z | b.z, a.w | b.w);
}

/* 16 K-quant values (d sc) q - (dmin m), q the 16 bytes of v masked/shifted by the caller, to dst
 * (k_llm_dq_rp_at's expression for Q4_KR / Q5_KR). */
static __device__ __forceinline__ void
k_lg_run16_km(uint4 q, float dsc, float dmm, uint16_t *dst)
{
    uint32_t o[8];
#pragma unroll
    for (int i = 0; i < 8; i++)
        o[i] = k_lg_pack(dsc * (float)(int)k_lg_byte(q, 2 * i) - dmm, dsc * (float)(int)k_lg_byte(q, 2 * i + 1) - dmm);
    ((uint4 *)dst)[0] = make_uint4(o[0], o[1], o[2], o[3]);
    ((uint4 *)dst)[1] = make_uint4(o[4], o[5], o[6], o[7]);
}

/* Task t of a row (values per task: 64 for the Q6_KR value map - Q6_KR, Q5_KR, Q4_KR - 32 for
 * the others, k_llm_mvq_tasks) into out (the row's f16). */
template <uint32_t T>
static __device__ __forceinline__ void
k_lg_dq_task(const uint8_t *row, uint32_t t, uint16_t *out)
{
    if (T == K_LLM_T_Q6_KR) {
        const uint8_t *g = row + 1680 * (size_t)(t / 32);
        const uint32_t L = t % 32, b = L / 4, h = (L / 2) % 2, l0 = 16 * (L % 2);
        const uint4 qa = k_lg_ld16(g + 16 * L), qb = k_lg_ld16(g + 512 + 16 * L), qh = k_lg_ld16(g + 1024 + 16 * L);
        const uint32_t sc = __ldg((const unsigned int *)(g + 1536 + 4 * L));
        const float d = k_llm_f16(__ldg((const unsigned short *)(g + 1664 + 2 * b)));
        uint16_t *o = out + 2048 * (size_t)(t / 32) + 256 * b + 128 * h + l0;
        /* value = d * sc * (q - 32), q = 4 bits of ql | 2 bits of qh << 4 (k_llm_dq_rp_at) */
        k_lg_run16(k_lg_or(k_lg_and(qa, 0x0F0F0F0Fu), k_lg_and(make_uint4(qh.x << 4, qh.y << 4, qh.z << 4, qh.w << 4), 0x30303030u)),
                   32, d * (float)(int8_t)(sc & 0xFF), o);
        k_lg_run16(k_lg_or(k_lg_and(qb, 0x0F0F0F0Fu), k_lg_and(make_uint4(qh.x << 2, qh.y << 2, qh.z << 2, qh.w << 2), 0x30303030u)),
                   32, d * (float)(int8_t)((sc >> 16) & 0xFF), o + 32);
        k_lg_run16(k_lg_or(k_lg_and(k_lg_shr(qa, 4), 0x0F0F0F0Fu), k_lg_and(qh, 0x30303030u)), 32,
                   d * (float)(int8_t)((sc >> 8) & 0xFF), o + 64);
        k_lg_run16(k_lg_or(k_lg_and(k_lg_shr(qb, 4), 0x0F0F0F0Fu), k_lg_and(k_lg_shr(qh, 2), 0x30303030u)), 32,
                   d * (float)(int8_t)(sc >> 24), o + 96);
    } else if (T == K_LLM_T_Q5_KR || T == K_LLM_T_Q4_KR) {
        /* values 256b + 128h + l0 + {0: qa lo, 32: qa hi, 64: qb lo, 96: qb hi}, sub-blocks 4h + c
         * (k_llm_quant.h); Q5_KR's fifth bit c of (qh >> 4h) */
        const bool q5 = T == K_LLM_T_Q5_KR;
        const uint8_t *g = row + (q5 ? 1408 : 1152) * (size_t)(t / 32);
        const uint32_t L = t % 32, b = L / 4, h = (L / 2) % 2, l0 = 16 * (L % 2);
        const uint4 qa = k_lg_ld16(g + 16 * L), qb = k_lg_ld16(g + 512 + 16 * L);
        const uint4 hd = k_lg_ld16(g + (q5 ? 1280 : 1024) + 16 * b);
        uint4 h0 = make_uint4(0, 0, 0, 0);
        if (q5)
            h0 = k_lg_shr(k_lg_ld16(g + 1024 + 16 * (2 * b + L % 2)), 4 * h);
        const uint4 q[4] = {k_lg_and(qa, 0x0F0F0F0Fu), k_lg_and(k_lg_shr(qa, 4), 0x0F0F0F0Fu), k_lg_and(qb, 0x0F0F0F0Fu),
                            k_lg_and(k_lg_shr(qb, 4), 0x0F0F0F0Fu)};
        uint32_t SC, M; /* scale and min of sub-block 4h + c as byte c (the head's scales: hd.y, hd.z, hd.w) */
        k_llm_scale_min_k4_x4(hd.y, hd.z, hd.w, h, &SC, &M);
        const float d = k_llm_f16((uint16_t)(hd.x & 0xFFFF)), dmin = k_llm_f16((uint16_t)(hd.x >> 16));
        uint16_t *o = out + 2048 * (size_t)(t / 32) + 256 * b + 128 * h + l0;
#pragma unroll
        for (int c = 0; c < 4; c++) {
            const uint32_t sc = (SC >> (8 * c)) & 0xFFu, m = (M >> (8 * c)) & 0xFFu;
            uint4 qc = q[c];
            if (q5)
                qc = k_lg_or(qc, k_lg_and(k_lg_shr(make_uint4(h0.x << 4, h0.y << 4, h0.z << 4, h0.w << 4), c), 0x10101010u));
            k_lg_run16_km(qc, d * (float)sc, dmin * (float)m, o + 32 * c);
        }
    } else if (T == K_LLM_T_Q8_0R) {
        const uint8_t *g = row + 1088 * (size_t)(t / 32);
        const uint32_t L = t % 32;
        const uint4 lo = k_lg_ld16(g + 16 * L), hi = k_lg_ld16(g + 512 + 16 * L);
        const float d = k_llm_f16(__ldg((const unsigned short *)(g + 1024 + 2 * L)));
        uint16_t *o = out + 1024 * (size_t)(t / 32) + 32 * L;
        /* signed bytes: (b ^ 0x80) - 128 */
        k_lg_run16(make_uint4(lo.x ^ 0x80808080u, lo.y ^ 0x80808080u, lo.z ^ 0x80808080u, lo.w ^ 0x80808080u), 128, d, o);
        k_lg_run16(make_uint4(hi.x ^ 0x80808080u, hi.y ^ 0x80808080u, hi.z ^ 0x80808080u, hi.w ^ 0x80808080u), 128, d, o + 16);
    } else if (T == K_LLM_T_Q4_0R) {
        const uint8_t *g = row + 576 * (size_t)(t / 32);
        const uint32_t L = t % 32;
        const uint4 qs = k_lg_ld16(g + 16 * L);
        const float d = k_llm_f16(__ldg((const unsigned short *)(g + 512 + 2 * L)));
        uint16_t *o = out + 1024 * (size_t)(t / 32) + 32 * L;
        k_lg_run16(k_lg_and(qs, 0x0F0F0F0Fu), 8, d, o);
        k_lg_run16(k_lg_and(k_lg_shr(qs, 4), 0x0F0F0F0Fu), 8, d, o + 16);
    }
}

template <uint32_t T>
static __device__ __forceinline__ void
k_lg_dequant_fast(const struct k_llm_dequant_f16_params &p)
{
    /* tasks per row as the decode mat-vec counts them: k_lg_dq_task's values per task */
    const uint32_t tpr = k_llm_mvq_tasks(T, p.k), total = tpr * p.rows;
    const uint64_t rb = k_llm_gemm_row_bytes(p.type, p.k);
    for (uint32_t t = (uint32_t)k_thread_index(); t < total; t += (uint32_t)k_thread_count()) {
        const uint32_t r = t / tpr, tt = t - r * tpr;
        k_lg_dq_task<T>((const uint8_t *)p.w_va + rb * r, tt, (uint16_t *)p.out_va + (uint64_t)r * p.k);
    }
}

extern "C" __global__ void
k_llm_dequant_f16(const struct k_llm_dequant_f16_params p)
{
    /* the repacked types take the task path (k is whole groups there by construction) */
    if (p.type == K_LLM_T_Q6_KR && p.k % 2048 == 0)
        return k_lg_dequant_fast<K_LLM_T_Q6_KR>(p);
    if (p.type == K_LLM_T_Q5_KR && p.k % 2048 == 0)
        return k_lg_dequant_fast<K_LLM_T_Q5_KR>(p);
    if (p.type == K_LLM_T_Q4_KR && p.k % 2048 == 0)
        return k_lg_dequant_fast<K_LLM_T_Q4_KR>(p);
    if (p.type == K_LLM_T_Q8_0R && p.k % 1024 == 0)
        return k_lg_dequant_fast<K_LLM_T_Q8_0R>(p);
    if (p.type == K_LLM_T_Q4_0R && p.k % 1024 == 0)
        return k_lg_dequant_fast<K_LLM_T_Q4_0R>(p);
    const uint32_t per_row = p.k / 8;
    const uint32_t total = per_row * p.rows; /* < 2^32: launcher precondition */
    const uint64_t rb = k_llm_gemm_row_bytes(p.type, p.k);
    if (!rb)
        return;
    /* 32-bit index arithmetic: a 64-bit division is a called subroutine */
    for (uint32_t t = (uint32_t)k_thread_index(); t < total; t += (uint32_t)k_thread_count()) {
        const uint32_t r = t / per_row, j = (t - r * per_row) * 8;
        const uint8_t *row = (const uint8_t *)p.w_va + rb * r;
        float v[8];
#pragma unroll
        for (int e = 0; e < 8; e++)
            v[e] = k_llm_dq_at(p.type, row, j + e);
        uint4 o = make_uint4(k_lg_pack(v[0], v[1]), k_lg_pack(v[2], v[3]), k_lg_pack(v[4], v[5]),
                             k_lg_pack(v[6], v[7]));
        *(uint4 *)((uint16_t *)p.out_va + (uint64_t)r * p.k + j) = o;
    }
}

extern "C" __global__ void
k_llm_cast_f16(const struct k_llm_cast_f16_params p)
{
    const uint32_t per_row = p.k / 8;
    const uint32_t total = per_row * p.n; /* < 2^32: launcher precondition */
    for (uint32_t t = (uint32_t)k_thread_index(); t < total; t += (uint32_t)k_thread_count()) {
        const uint32_t i = t / per_row, j = (t - i * per_row) * 8;
        const float4 *x = (const float4 *)((const float *)p.x_va + (uint64_t)i * p.x_stride + j);
        const float4 a = x[0], b = x[1];
        uint4 o = make_uint4(k_lg_pack(a.x, a.y), k_lg_pack(a.z, a.w), k_lg_pack(b.x, b.y), k_lg_pack(b.z, b.w));
        *(uint4 *)((uint16_t *)p.out_va + (uint64_t)i * p.k + j) = o;
    }
}

extern "C" __global__ void __launch_bounds__(K_GM_THREADS)
k_llm_gemm(const struct k_llm_gemm_params p)
{
    k_gm_body<false, true>(k_gm_args{ p.y_va, p.x_va, p.w_va, p.b_va, p.n, p.rows, p.k, p.y_stride, p.accumulate });
}
