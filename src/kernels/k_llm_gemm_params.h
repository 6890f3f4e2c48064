/* SPDX-License-Identifier: MIT */
/*
 * k_llm_gemm_params.h - parameter structs of the LLM prefill GEMM kernels
 * (src/kernels/k_llm_gemm.cu), shared with their twins (src/ops/ops_llm_gemm.c) and the
 * model (src/llm/llm_model.c). Layout rules: k_params.h (ABI, checked below).
 */
#ifndef K_LLM_GEMM_PARAMS_H
#define K_LLM_GEMM_PARAMS_H

#include "k_llm_quant.h"
#include "k_params.h"

/* Bytes of a row of k values of ggml type `type` (the types k_llm_dq_at decodes), 0 for
 * others; k a multiple of the type's block. Shared by k_llm_dequant_f16 and its twin. */
K_LLM_FN uint64_t
k_llm_gemm_row_bytes(uint32_t type, uint32_t k)
{
    return k_llm_row_bytes(type, k);
}

/* k_llm_dequant_f16: out f16[rows][k] = the rows of weight w (ggml type `type`, any type
 * k_llm_dq_at decodes), rounded to f16 (nearest even; beyond f16 range: inf).
 * k % 8 == 0, rows * k / 8 < 2^32. Any grid and block; one thread per 8 values. */
struct k_llm_dequant_f16_params {
    uint64_t w_va;   /* rows of `type`, each k values */
    uint64_t out_va; /* f16[rows][k], 16-byte aligned */
    uint32_t type, k;
    uint32_t rows, pad0;
};
K_PARAMS_SIZE(k_llm_dequant_f16, 32);
K_PARAMS_FIELD(k_llm_dequant_f16, w_va, 0);
K_PARAMS_FIELD(k_llm_dequant_f16, out_va, 8);
K_PARAMS_FIELD(k_llm_dequant_f16, type, 16);
K_PARAMS_FIELD(k_llm_dequant_f16, k, 20);
K_PARAMS_FIELD(k_llm_dequant_f16, rows, 24);
K_PARAMS_FIELD(k_llm_dequant_f16, pad0, 28);

/* k_llm_cast_f16: out f16[n][k] (dense) = x[i * x_stride + j] (f32) rounded to f16.
 * k % 8 == 0, n * k / 8 < 2^32, x 16-byte aligned, x_stride % 4 == 0. Any grid and block;
 * one thread per 8 values. */
struct k_llm_cast_f16_params {
    uint64_t x_va;
    uint64_t out_va;
    uint32_t n, k;
    uint32_t x_stride, pad0;
};
K_PARAMS_SIZE(k_llm_cast_f16, 32);
K_PARAMS_FIELD(k_llm_cast_f16, x_va, 0);
K_PARAMS_FIELD(k_llm_cast_f16, out_va, 8);
K_PARAMS_FIELD(k_llm_cast_f16, n, 16);
K_PARAMS_FIELD(k_llm_cast_f16, k, 20);
K_PARAMS_FIELD(k_llm_cast_f16, x_stride, 24);
K_PARAMS_FIELD(k_llm_cast_f16, pad0, 28);

/* k_llm_gemm: for token i < n and output row r < rows:
 *   y[i * y_stride + r] = (accumulate ? y[..] : 0) + sum_j x[i][j] * w[r][j] + (b ? b[r] : 0)
 * x f16[n][k], w f16[rows][k] (dense, 16-byte aligned), y f32 (8-byte aligned, y_stride
 * even), b f32[rows] or 0; k % 8 == 0. Block (K_LLM_GEMM_THREADS, 1, 1), grid any
 * (the helper uses one block per 128 x 64 tile of y). f32 accumulation (k_gemm_mma.h). */
struct k_llm_gemm_params {
    uint64_t x_va, w_va, y_va, b_va;
    uint32_t k, rows;
    uint32_t n, y_stride;
    uint32_t accumulate, pad0;
};
K_PARAMS_SIZE(k_llm_gemm, 56);
K_PARAMS_FIELD(k_llm_gemm, x_va, 0);
K_PARAMS_FIELD(k_llm_gemm, w_va, 8);
K_PARAMS_FIELD(k_llm_gemm, y_va, 16);
K_PARAMS_FIELD(k_llm_gemm, b_va, 24);
K_PARAMS_FIELD(k_llm_gemm, k, 32);
K_PARAMS_FIELD(k_llm_gemm, rows, 36);
K_PARAMS_FIELD(k_llm_gemm, n, 40);
K_PARAMS_FIELD(k_llm_gemm, y_stride, 44);
K_PARAMS_FIELD(k_llm_gemm, accumulate, 48);
K_PARAMS_FIELD(k_llm_gemm, pad0, 52);

/* k_llm_gemm_wgmma_tma (k_gemm_wgmma_tma.cu, sm_90a): k_llm_gemm_wgmma's contract (g) with x and
 * w read by the tensor memory accelerator through two tensor maps (src/kernels/k_tmap.h): x as
 * (k, n) in boxes of 64 x 128, w as (k, rows) in boxes of 64 x 256, f16, 128-byte swizzle; the
 * kernel takes their parameter-space addresses (__grid_constant__), so the struct is 64-byte
 * aligned (k_params.h K_ALIGN64). */
struct k_llm_gemm_tma_params {
    K_ALIGN64 uint64_t tmap_x[16];
    K_ALIGN64 uint64_t tmap_w[16];
    struct k_llm_gemm_params g;
};
K_PARAMS_SIZE(k_llm_gemm_tma, 320);
K_PARAMS_FIELD(k_llm_gemm_tma, tmap_w, 128);
K_PARAMS_FIELD(k_llm_gemm_tma, g, 256);

/* k_llm_gemm_sk (k_llm_gemm_sk.cu): k_llm_gemm's contract (g) for n <= 64 tokens, the k range cut
 * into pieces of k_chunk values (a multiple of 64), one block per (tile of K_LLM_GEMM_SK_ROWS
 * output rows, piece): grid exactly splits x ceil(rows / K_LLM_GEMM_SK_ROWS) with
 * splits = ceil(k / k_chunk), block (K_LLM_GEMM_SK_THREADS, 1, 1), K_LLM_GEMM_SK_SHARED_B of
 * dynamic shared memory. splits > 1: part_va holds K_LLM_GEMM_SK_PART_B(n) bytes per block
 * (16-byte aligned) and cnt_va one zero uint32 per tile, which the kernel leaves zero again;
 * launches using the same part/cnt must not overlap. A block whose block or grid differs from
 * this writes nothing. */
struct k_llm_gemm_sk_params {
    struct k_llm_gemm_params g;
    uint64_t part_va, cnt_va;
    uint32_t splits, k_chunk;
};
K_PARAMS_SIZE(k_llm_gemm_sk, 80);
K_PARAMS_FIELD(k_llm_gemm_sk, g, 0);
K_PARAMS_FIELD(k_llm_gemm_sk, part_va, 56);
K_PARAMS_FIELD(k_llm_gemm_sk, cnt_va, 64);
K_PARAMS_FIELD(k_llm_gemm_sk, splits, 72);
K_PARAMS_FIELD(k_llm_gemm_sk, k_chunk, 76);
#define K_LLM_GEMM_SK_ROWS 64u
#define K_LLM_GEMM_SK_THREADS 128u
#define K_LLM_GEMM_SK_SHARED_B (4u * (64u + 64u) * 64u * 2u)
/* k_llm_gemm_sk_q8_0: the same contract with w_va Q8_0R rows (k_llm_quant.h; k % 1024 == 0,
 * k_chunk a multiple of 128); 3 stages of 64 rows x 128 quants + scales + 64 x 128 f16 tokens */
#define K_LLM_GEMM_SK_Q8_SHARED_B (3u * (64u * 128u + 64u * 8u + 64u * 128u * 2u))
/* k_llm_gemm_sk_q4_k: the same with w_va Q4_KR rows (k % 2048 == 0, k_chunk a multiple of 256,
 * n <= 32); 3 stages of 64 rows x (128 B of quants + a 16-byte head) + 32 x 256 f16 tokens */
#define K_LLM_GEMM_SK_Q4K_SHARED_B (3u * (64u * 128u + 64u * 16u + 32u * 256u * 2u))
/* partial sums of one block: 64 rows x the tokens rounded up to 16, 32 or 64, f32 */
#define K_LLM_GEMM_SK_PART_B(n) (64u * 4u * ((n) <= 16 ? 16u : (n) <= 32 ? 32u : 64u))

#define K_LLM_GEMM_THREADS 128u   /* k_llm_gemm block: 2 x 2 warps */
#define K_LLM_GEMM_TILE_M 128u    /* tokens per block tile */
#define K_LLM_GEMM_TILE_N 64u     /* output rows per block tile */
#define K_LLM_GEMM_AUX_BLOCK 256u /* k_llm_dequant_f16 / k_llm_cast_f16 block */

#endif /* K_LLM_GEMM_PARAMS_H */
