/* SPDX-License-Identifier: MIT */
/*
 * k_llm_params.h - parameter structs of the LLM kernels (src/kernels/k_llm_ops.cu), shared
 * by the .cu, their CPU twins (src/ops/ops_llm.c) and the engine (src/llm/llm_model.c).
 * Layer: kernels (param headers). One struct per kernel, passed by value (STYLE 2.7); the
 * loader copies it into the constant bank byte for byte, so every size and field offset is
 * _Static_assert'ed. Device addresses are u64 VAs; shapes are in elements, row-major.
 * Tensor types use the ggml numbering of include/llm.h (enum llm_type).
 */
#ifndef K_LLM_PARAMS_H
#define K_LLM_PARAMS_H

#include <stddef.h>
#include <stdint.h>

#if defined(__cplusplus) && !defined(_Static_assert)
#define _Static_assert static_assert /* nvcc compiles this header as C++ */
#endif

/* Positions k_llm_attn scores at a time (its scores live in shared memory; longer contexts
 * take several chunks, joined by an online softmax). */
#define K_LLM_ATTN_CHUNK 8192
/* Threads per block the engine launches each kernel with (the kernels assume it). */
#define K_LLM_BLOCK 256
/* Rows per block of the mat-vec kernel: one warp per row. */
#define K_LLM_MATMUL_ROWS 8

/* k_llm_embed: out[i][0..d) = dequant(W[tok_i]) (+ dequant(P[pos0 + i]) when pos_w_va).
 * tok_i = tok_va ? tokens[i] : tok_imm (a decode step patches tok_imm). grid (n_tok, c): CTA (i, y)
 * writes values y * K_LLM_BLOCK + t, t + c * K_LLM_BLOCK, ... of token i; the engine takes
 * c = K_LLM_EMBED_CTAS(d). */
#define K_LLM_EMBED_CTAS(d) (((d) + K_LLM_BLOCK - 1) / K_LLM_BLOCK)
struct k_llm_embed_params {
    uint64_t w_va;     /* [n_vocab][d] of `type` */
    uint64_t pos_w_va; /* [n_ctx][d] of `pos_type`, or 0 */
    uint64_t tok_va;   /* int32 [n_tok], or 0 */
    uint64_t out_va;   /* f32 [n_tok][d] */
    uint32_t type, pos_type;
    uint32_t d, n_tok;
    uint32_t pos0, tok_imm;
    uint32_t n_vocab, n_pos; /* rows of W and P (ids are clamped) */
};
_Static_assert(sizeof(struct k_llm_embed_params) == 64, "embed size");
_Static_assert(offsetof(struct k_llm_embed_params, pos_w_va) == 8 &&
                   offsetof(struct k_llm_embed_params, tok_va) == 16 &&
                   offsetof(struct k_llm_embed_params, out_va) == 24 &&
                   offsetof(struct k_llm_embed_params, type) == 32 &&
                   offsetof(struct k_llm_embed_params, pos_type) == 36 &&
                   offsetof(struct k_llm_embed_params, d) == 40 &&
                   offsetof(struct k_llm_embed_params, n_tok) == 44 &&
                   offsetof(struct k_llm_embed_params, pos0) == 48 &&
                   offsetof(struct k_llm_embed_params, tok_imm) == 52 &&
                   offsetof(struct k_llm_embed_params, n_vocab) == 56 &&
                   offsetof(struct k_llm_embed_params, n_pos) == 60,
               "embed offsets");

/* k_llm_norm: y[i] = norm(x[i]) * w (+ b). mode 0: RMSNorm x / sqrt(mean(x^2) + eps);
 * mode 1: LayerNorm (x - mean) / sqrt(var + eps). w, b f32 [d]. grid (n). */
struct k_llm_norm_params {
    uint64_t x_va, y_va; /* f32 [n][d] */
    uint64_t w_va, b_va; /* b_va 0: no bias */
    uint32_t d, n;
    uint32_t mode;
    float eps;
    uint64_t y16_va; /* also y rounded to f16 [n][d] (nearest even), the tensor-core matmuls' input; 0: not */
};
_Static_assert(sizeof(struct k_llm_norm_params) == 56, "norm size");
_Static_assert(
    offsetof(struct k_llm_norm_params, y_va) == 8 && offsetof(struct k_llm_norm_params, w_va) == 16 &&
        offsetof(struct k_llm_norm_params, b_va) == 24 && offsetof(struct k_llm_norm_params, d) == 32 &&
        offsetof(struct k_llm_norm_params, n) == 36 && offsetof(struct k_llm_norm_params, mode) == 40 &&
        offsetof(struct k_llm_norm_params, eps) == 44 && offsetof(struct k_llm_norm_params, y16_va) == 48,
    "norm offsets");

/* k_llm_head_norm (Qwen3): in place, x' = x / sqrt(mean(x^2) + eps) * w over each Q head (weight
 * wq) and K head (wk) of n_tok rows of the Q|K|V buffer: row i's Q heads at x + i * stride, its K
 * heads right after them. grid (n_head + n_head_kv, n_tok), one CTA per head. */
struct k_llm_head_norm_params {
    uint64_t x_va;         /* f32 rows of `stride` floats */
    uint64_t wq_va, wk_va; /* f32 [hd] each */
    uint32_t n_tok, n_head, n_head_kv, hd;
    uint32_t stride;
    float eps;
};
_Static_assert(sizeof(struct k_llm_head_norm_params) == 48, "head norm size");
_Static_assert(offsetof(struct k_llm_head_norm_params, wq_va) == 8 &&
                   offsetof(struct k_llm_head_norm_params, wk_va) == 16 &&
                   offsetof(struct k_llm_head_norm_params, n_tok) == 24 &&
                   offsetof(struct k_llm_head_norm_params, hd) == 36 &&
                   offsetof(struct k_llm_head_norm_params, stride) == 40 &&
                   offsetof(struct k_llm_head_norm_params, eps) == 44,
               "head norm offsets");

/* k_llm_matmul: y[i][r] = (accumulate ? y[i][r] : 0) + sum_j W[r][j] x[i][j] (+ b[r]),
 * W [rows][k] of `type` (rows of llm_type_row_bytes), x f32 rows of x_stride, y of y_stride.
 * by_block 0: grid (ceil(rows / K_LLM_MATMUL_ROWS)), one warp per row, any n;
 * by_block 1 (n must be 1, the decode mat-vec): grid (rows), one block per row. */
struct k_llm_matmul_params {
    uint64_t w_va, x_va, y_va, b_va;
    uint32_t type, k;
    uint32_t rows, n;
    uint32_t x_stride, y_stride;
    uint32_t accumulate, by_block;
};
_Static_assert(sizeof(struct k_llm_matmul_params) == 64, "matmul size");
_Static_assert(offsetof(struct k_llm_matmul_params, x_va) == 8 &&
                   offsetof(struct k_llm_matmul_params, y_va) == 16 &&
                   offsetof(struct k_llm_matmul_params, b_va) == 24 &&
                   offsetof(struct k_llm_matmul_params, type) == 32 &&
                   offsetof(struct k_llm_matmul_params, k) == 36 &&
                   offsetof(struct k_llm_matmul_params, rows) == 40 &&
                   offsetof(struct k_llm_matmul_params, n) == 44 &&
                   offsetof(struct k_llm_matmul_params, x_stride) == 48 &&
                   offsetof(struct k_llm_matmul_params, y_stride) == 52 &&
                   offsetof(struct k_llm_matmul_params, accumulate) == 56 &&
                   offsetof(struct k_llm_matmul_params, by_block) == 60,
               "matmul offsets");

/* The KV cache's element: IEEE half, rounded to nearest even from f32 (src/kernels/k_llm_kv.cuh,
 * the twins' ops_llm_kv_* in src/ops/ops_llm.h). A cache row of kv_dim elements is
 * K_LLM_KV_B * kv_dim bytes. */
#define K_LLM_KV_B 2u

/* k_llm_rope_kv: for token i at position p = pos0 + i: rotate q (n_head heads) in place and
 * k (n_head_kv heads) with RoPE (rope 1: adjacent pairs (2j, 2j+1), angle p * base^(-2j/hd)
 * / freqs[j]; rope 0: none), then store k and v into the layer's cache rows p.
 * q/k/v rows are qkv_stride floats apart. grid (n_tok).
 * Batched decode (src/llm/llm_batch.c): with tok_va, token i has its own position and cache slot,
 * int32 {p, slot} at tok_va + 8 i (pos0 unused), its rows at kc/vc + slot * slot_stride elements. */
struct k_llm_rope_kv_params {
    uint64_t q_va, k_va, v_va;
    uint64_t kc_va, vc_va; /* f16 [n_ctx][n_head_kv * hd] (K_LLM_KV_B) */
    uint64_t freqs_va;     /* f32 [hd / 2] or 0 */
    uint32_t n_tok, pos0;
    uint32_t n_head, n_head_kv;
    uint32_t hd, qkv_stride;
    uint32_t rope;
    float base;
    uint32_t n_ctx;
    float pos_scale;      /* linear RoPE scaling: angles times this (Gemma 3's global layers); 0: 1 */
    uint64_t tok_va;      /* int32 {pos, slot}[n_tok], or 0: positions pos0.., slot 0 */
    uint64_t slot_stride; /* cache elements from one slot to the next */
};
_Static_assert(sizeof(struct k_llm_rope_kv_params) == 104, "rope_kv size");
_Static_assert(offsetof(struct k_llm_rope_kv_params, k_va) == 8 &&
                   offsetof(struct k_llm_rope_kv_params, v_va) == 16 &&
                   offsetof(struct k_llm_rope_kv_params, kc_va) == 24 &&
                   offsetof(struct k_llm_rope_kv_params, vc_va) == 32 &&
                   offsetof(struct k_llm_rope_kv_params, freqs_va) == 40 &&
                   offsetof(struct k_llm_rope_kv_params, n_tok) == 48 &&
                   offsetof(struct k_llm_rope_kv_params, pos0) == 52 &&
                   offsetof(struct k_llm_rope_kv_params, n_head) == 56 &&
                   offsetof(struct k_llm_rope_kv_params, n_head_kv) == 60 &&
                   offsetof(struct k_llm_rope_kv_params, hd) == 64 &&
                   offsetof(struct k_llm_rope_kv_params, qkv_stride) == 68 &&
                   offsetof(struct k_llm_rope_kv_params, rope) == 72 &&
                   offsetof(struct k_llm_rope_kv_params, base) == 76 &&
                   offsetof(struct k_llm_rope_kv_params, n_ctx) == 80 &&
                   offsetof(struct k_llm_rope_kv_params, tok_va) == 88 &&
                   offsetof(struct k_llm_rope_kv_params, slot_stride) == 96,
               "rope_kv offsets");

/* k_llm_attn: out[i][h*hd + e] = sum_t softmax_t(scale * q_i,h . K[t][g]) V[t][g][e] over
 * t = 0 .. pos0 + i (causal), g = h / (n_head / n_head_kv) (GQA). grid (n_head, n_tok).
 * With tok_va (k_llm_attn only; the tiled kernels take consecutive positions), token i attends
 * rows 0 .. p_i of its own slot, as in k_llm_rope_kv. */
struct k_llm_attn_params {
    uint64_t q_va, kc_va, vc_va, out_va; /* q rows of q_stride; out f32 [n_tok][n_head * hd] */
    uint32_t n_tok, pos0;
    uint32_t n_head, n_head_kv;
    uint32_t hd, q_stride;
    float scale;
    uint32_t n_ctx;
    float softcap;        /* k_llm_attn only (Gemma 2): scores = softcap * tanh(scores / softcap); 0: none */
    uint32_t window;      /* k_llm_attn only (Gemma): keys pos - window + 1 .. pos; 0: all */
    uint64_t tok_va;      /* int32 {pos, slot}[n_tok], or 0 */
    uint64_t slot_stride; /* cache elements from one slot to the next */
};
_Static_assert(sizeof(struct k_llm_attn_params) == 88, "attn size");
_Static_assert(
    offsetof(struct k_llm_attn_params, kc_va) == 8 && offsetof(struct k_llm_attn_params, vc_va) == 16 &&
        offsetof(struct k_llm_attn_params, out_va) == 24 && offsetof(struct k_llm_attn_params, n_tok) == 32 &&
        offsetof(struct k_llm_attn_params, pos0) == 36 && offsetof(struct k_llm_attn_params, n_head) == 40 &&
        offsetof(struct k_llm_attn_params, n_head_kv) == 44 && offsetof(struct k_llm_attn_params, hd) == 48 &&
        offsetof(struct k_llm_attn_params, q_stride) == 52 &&
        offsetof(struct k_llm_attn_params, scale) == 56 && offsetof(struct k_llm_attn_params, n_ctx) == 60 &&
        offsetof(struct k_llm_attn_params, softcap) == 64 &&
        offsetof(struct k_llm_attn_params, window) == 68 &&
        offsetof(struct k_llm_attn_params, tok_va) == 72 &&
        offsetof(struct k_llm_attn_params, slot_stride) == 80,
    "attn offsets");

/* k_llm_attn_tile (head_dim 64) / k_llm_attn_tile_hd128 (src/kernels/k_llm_attn_prefill.cu):
 * the same launch contract, grid (n_head, ceil(n_tok / K_LLM_ATTN_TILE_QB(hd))), 256 threads. */
#define K_LLM_ATTN_TILE_QB(hd) ((hd) == 64 ? 64u : 32u)

/* k_llm_attn_mma (head_dim 64) / k_llm_attn_mma_hd128 (k_llm_attn_prefill.cu, f16 tensor
 * cores): the same parameters, grid (n_head, ceil(n_tok / K_LLM_ATTN_MMA_QB)), 256 threads,
 * and dynamic shared memory for two stages of K and V tiles (64 keys of 72 cache elements for
 * head_dim 64: 36,864 B; 32 keys of 136 for 128: 34,816 B). */
#define K_LLM_ATTN_MMA_QB 64u
#define K_LLM_ATTN_MMA_SHARED_B(hd) ((hd) == 64 ? 4u * 64u * 72u * K_LLM_KV_B : 4u * 32u * 136u * K_LLM_KV_B)

/* k_llm_act: mode 0 (SwiGLU): y = silu(a) * b; mode 1 (GELU, tanh form): y = gelu(a); the modes
 * Gemma adds: 2 (GeGLU): y = gelu(a) * b; 3: y = a * scale (the embedding); 4: y = scale *
 * tanh(a / scale) (the logits' soft-cap); 5: y = a + b (a post norm's residual add). n elements
 * of y (and y16), rows of `row` elements; a and b rows ab_stride elements apart (0: row - the
 * gate and up halves of one [n][gate | up] matmul output have 2 row); y_va 0: y16 only (y would
 * overwrite a strided a in place). grid (ceil(n / K_LLM_BLOCK)). */
enum { K_LLM_ACT_SWIGLU, K_LLM_ACT_GELU, K_LLM_ACT_GEGLU, K_LLM_ACT_SCALE, K_LLM_ACT_SOFTCAP, K_LLM_ACT_ADD };
struct k_llm_act_params {
    uint64_t a_va, b_va, y_va;
    uint32_t n, mode;
    float scale;
    uint32_t row;    /* elements per row (0: one row of n) */
    uint64_t y16_va; /* also y rounded to f16 (nearest even), the next matmul's input; 0: not */
    uint32_t ab_stride, pad;
};
_Static_assert(sizeof(struct k_llm_act_params) == 56, "act size");
_Static_assert(
    offsetof(struct k_llm_act_params, b_va) == 8 && offsetof(struct k_llm_act_params, y_va) == 16 &&
        offsetof(struct k_llm_act_params, n) == 24 && offsetof(struct k_llm_act_params, mode) == 28 &&
        offsetof(struct k_llm_act_params, scale) == 32 && offsetof(struct k_llm_act_params, row) == 36 &&
        offsetof(struct k_llm_act_params, y16_va) == 40 && offsetof(struct k_llm_act_params, ab_stride) == 48,
    "act offsets");

#endif /* K_LLM_PARAMS_H */
