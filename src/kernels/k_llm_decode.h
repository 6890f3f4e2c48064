/* SPDX-License-Identifier: MIT */
/*
 * k_llm_decode.h - parameters of the persistent decode kernel k_llm_decode_layers
 * (src/kernels/k_llm_decode.cu; CPU twin src/ops/ops_llm_decode.c; engine
 * src/llm/llm_model.c). Layer: kernels (param headers). One struct by value, sizes and
 * offsets _Static_assert'ed.
 *
 * One launch runs every layer of a LLaMA decode step (one token at position pos): per layer
 * five phases separated by grid-wide barriers,
 *   1. x' = RMSNorm(x) * attn_norm; Q|K|V = W x' (int8 activations, k_llm_matvec_q8's
 *      bodies); RoPE on Q and K pairs in the epilogue; K and V rows stored in the cache at pos,
 *      Q in q_va,
 *   2. split-K attention (k_llm_attn_decode's body, n_split ranges per KV head) -> att_va,
 *   3. x += W_o att,
 *   4. fa = silu(W_gate x'') * (W_up x''), x'' = RMSNorm(x) * ffn_norm,
 *   5. x += W_down fa.
 * The mat-vec phases are described by a table in device memory, tab_va:
 * struct k_llm_matvec_params [n_layer][K_LLM_DL_PHASES] (Q|K|V in mode K_LLM_MV_ROPE,
 * O in ACC, gate|up in SWIGLU, down in ACC), which the engine fills once at load.
 *
 * Why one launch: a decode step of a 1B model is ~100 dependent launches of a few
 * microseconds each; every launch boundary costs the GPU-side gap, the CTA ramp and the
 * prologue before the first weight byte arrives. Here a CTA issues a phase's first weight
 * loads before it waits at the barrier (weights do not depend on the previous phase).
 *
 * The grid must be resident at once (the engine launches one wave: CTAs that fit the GPU
 * together). Barrier: bar_va[0] counts arrivals (phase i waits for i * gridDim.x), bar_va[1]
 * counts exits (the last CTA out zeroes both for the next launch), bar_va[2] is the abort
 * flag. A CTA that waits longer than K_LLM_DL_TIMEOUT_NS (a grid that was not resident, a
 * fault elsewhere) sets it and *err_va = K_LLM_DL_ERR_TIMEOUT, and every CTA abandons the
 * step; the engine checks err_va after the step, zeroes the barrier words and falls back to
 * one launch per kernel.
 */
#ifndef K_LLM_DECODE_H
#define K_LLM_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "k_llm_matvec.h"

#if defined(__cplusplus) && !defined(_Static_assert)
#define _Static_assert static_assert
#endif

#define K_LLM_DL_PHASES 4 /* mat-vec table entries per layer: qkv, o, gate|up, down */
#define K_LLM_DL_TIMEOUT_NS 200000000ull
#define K_LLM_DL_ERR_TIMEOUT 1u

struct k_llm_decode_params {
    uint64_t tab_va;            /* struct k_llm_matvec_params [n_layer][K_LLM_DL_PHASES] */
    uint64_t kv_va;             /* f32 cache: layer l's K at kv_va + 2 l kv_layer_B, its V after it */
    uint64_t kv_layer_B;        /* bytes of one layer's K (= n_ctx * n_head_kv * hd * 4) */
    uint64_t q_va, att_va;      /* f32 [n_head * hd]: roped Q (the Q|K|V phase's y), attention out */
    uint64_t part_va, count_va; /* as k_llm_attn_decode_params */
    uint64_t freqs_va;          /* f32 [hd / 2] RoPE frequency factors, or 0 */
    uint64_t bar_va;            /* u32 [4] in device memory, zero between launches */
    uint64_t err_va;            /* u32, host-visible: 0, or K_LLM_DL_ERR_* */
    uint32_t n_layer, pos;
    uint32_t n_ctx, n_head;
    uint32_t n_head_kv, hd;
    uint32_t n_split;
    float base, scale;
    uint32_t flags;    /* K_LLM_DL_F_* */
    uint64_t trace_va; /* u64 [1 + 5 n_layer] host-visible, or 0: CTA 0's clock (ns) at the start
                        * and after every barrier (llm_model_profile_step's per-phase rows) */
};
/* Diagnostic (NVHCQ_PERSIST_EMPTY=1): barriers only, no phase work - what the barriers cost. */
#define K_LLM_DL_F_BARRIERS_ONLY 1u
_Static_assert(sizeof(struct k_llm_decode_params) == 128, "decode size");
_Static_assert(offsetof(struct k_llm_decode_params, kv_va) == 8 &&
                   offsetof(struct k_llm_decode_params, kv_layer_B) == 16 &&
                   offsetof(struct k_llm_decode_params, q_va) == 24 &&
                   offsetof(struct k_llm_decode_params, att_va) == 32 &&
                   offsetof(struct k_llm_decode_params, part_va) == 40 &&
                   offsetof(struct k_llm_decode_params, count_va) == 48 &&
                   offsetof(struct k_llm_decode_params, freqs_va) == 56 &&
                   offsetof(struct k_llm_decode_params, bar_va) == 64 &&
                   offsetof(struct k_llm_decode_params, err_va) == 72 &&
                   offsetof(struct k_llm_decode_params, n_layer) == 80 &&
                   offsetof(struct k_llm_decode_params, pos) == 84 &&
                   offsetof(struct k_llm_decode_params, n_ctx) == 88 &&
                   offsetof(struct k_llm_decode_params, n_head) == 92 &&
                   offsetof(struct k_llm_decode_params, n_head_kv) == 96 &&
                   offsetof(struct k_llm_decode_params, hd) == 100 &&
                   offsetof(struct k_llm_decode_params, n_split) == 104 &&
                   offsetof(struct k_llm_decode_params, base) == 108 &&
                   offsetof(struct k_llm_decode_params, scale) == 112 &&
                   offsetof(struct k_llm_decode_params, flags) == 116 &&
                   offsetof(struct k_llm_decode_params, trace_va) == 120,
               "decode offsets");

#endif /* K_LLM_DECODE_H */
