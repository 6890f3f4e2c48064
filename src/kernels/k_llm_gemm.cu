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

extern "C" __global__ void
k_llm_dequant_f16(const struct k_llm_dequant_f16_params p)
{
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
