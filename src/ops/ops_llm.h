/* SPDX-License-Identifier: MIT */
/*
 * ops_llm.h - the LLM engine's kernel descriptors (src/ops/ops_llm.c), for the registry
 * (ops_registry.c). Layer: ops.
 */
#ifndef OPS_LLM_H
#define OPS_LLM_H

#include "hcq_kernel.h"

#include <stdint.h>

extern const struct hcq_kernel_desc ops_llm_kernels[]; /* terminated by { 0 } */
extern const uint32_t ops_llm_kernel_count;
/* The prefill GEMM kernels (src/ops/ops_llm_gemm.c), terminated by { 0 }. */
extern const struct hcq_kernel_desc ops_llm_gemm_kernels[];
/* The decode mat-vec (src/ops/ops_llm_matvec.c). */
extern const struct hcq_kernel_desc ops_llm_matvec_kernels[];
/* The split-K decode attention (src/ops/ops_llm_attn_decode.c). */
extern const struct hcq_kernel_desc ops_llm_attn_decode_kernels[];
/* The device sampler (src/ops/ops_llm_sample.c). */
extern const struct hcq_kernel_desc ops_llm_sample_kernels[];

/* Bytes of a row of n values of `type` (ggml numbering), 0 if unsupported. */
uint64_t ops_llm_row_bytes(uint32_t type, uint64_t n);
/* Dequantize a row of n values of `type` into y. */
void ops_llm_dq_row(uint32_t type, const uint8_t *row, uint32_t n, float *y);

/* The KV cache's element (K_LLM_KV_B, src/kernels/k_llm_kv.cuh): f16, rounded to nearest even.
 * kv_store: n floats into the cache; kv_widen: rows [0, n_rows) of one KV head (elements
 * [g * hd, (g + 1) * hd) of rows kv_dim apart) into dst [n_rows][hd] f32 (ops_llm.c). */
void ops_llm_kv_store(uint16_t *dst, const float *src, uint64_t n);
void ops_llm_kv_widen(float *dst, const uint16_t *cache, uint32_t n_rows, uint32_t kv_dim, uint32_t g,
                      uint32_t hd);

/* The decode attention of one token into out [n_head][hd] (the twins' one definition,
 * ops_llm_attn_decode.c); sc: scratch of pos + 1 floats, kw / vw: of (pos + 1) * hd. */
struct k_llm_attn_decode_params;
void ops_llm_attn_decode_ref(const struct k_llm_attn_decode_params *p, const float *q, const uint16_t *kc,
                             const uint16_t *vc, float *out, float *sc, float *kw, float *vw);
/* x[0..k) through k_llm_matvec_q8's int8 blocks of 16 (k_llm_mvq_block): each value becomes d * q,
 * the activations the q8 kernels dot (the twins' one definition, ops_llm_matvec.c). */
void ops_llm_mvq_round(float *x, uint32_t k);

#endif /* OPS_LLM_H */
