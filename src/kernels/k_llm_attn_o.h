/* SPDX-License-Identifier: MIT */
/*
 * k_llm_attn_o.h - parameters of the decode attention fused with the O projection
 * (src/kernels/k_llm_attn_o.cu; CPU twin src/ops/ops_llm_attn_o.c). Layer: kernels (param
 * headers). One struct by value, sizes and offsets _Static_assert'ed.
 *
 * One token at position pos (n_pos = pos + 1 <= K_LLM_AO_MAXP): y += O . attn(q, K, V), where
 * attn is k_llm_attn_decode's (GQA, causal) and O [rows][n_head * hd] is a repacked q8 type
 * (K_LLM_T_Q8_0R, Q4_0R, Q6_KR, Q5_KR, Q4_KR). grid (n_head_kv, rows / K_LLM_AO_ROWS),
 * K_LLM_AD_THREADS threads: CTA (g, r) computes the attention of KV head g's query heads (each
 * of the row blocks of g again: short contexts only), quantizes that slice of O's input to int8
 * blocks of 16 as k_llm_matvec_q8's prologue does, and dots it with O's rows r * K_LLM_AO_ROWS..
 * over the slice's columns. Each output row thus gets n_head_kv partial sums:
 *   det 0: each CTA adds its partials into y with RED (f32 atomic adds in no fixed order: the
 *          result may differ in the last bits from run to run);
 *   det 1: each CTA stores its partials in part_va [n_head_kv][rows]; the last CTA of row block r
 *          (a counter per row block, count_va, reset to 0 by that CTA) adds them to y in group
 *          order 0, 1, .. - the same bits every run.
 */
#ifndef K_LLM_ATTN_O_H
#define K_LLM_ATTN_O_H

#include <stddef.h>
#include <stdint.h>

#include "k_llm_attn_decode.h"

#if defined(__cplusplus) && !defined(_Static_assert)
#define _Static_assert static_assert
#endif

#define K_LLM_AO_ROWS 128 /* O rows per CTA */
#define K_LLM_AO_MAXP 256 /* most positions (attn_decode_split2's one-range score array) */
#define K_LLM_AO_MAX_CU 8 /* most 128-column units of O per KV head (group size x hd <= 1024) */

struct k_llm_attn_o_params {
    struct k_llm_attn_decode_params ad; /* q, caches, pos, n_ctx, heads, hd, scale (out_va, part_va,
                                           count_va, n_split, head_max and pf unused) */
    uint64_t w_va;                      /* O, rows of n_head * hd values of `type` */
    uint64_t y_va;                      /* f32 [rows]: y += O . attention (the residual stream) */
    uint64_t part_va;                   /* det 1: f32 [n_head_kv][rows] scratch */
    uint64_t count_va;                  /* det 1: u32 [rows / K_LLM_AO_ROWS], zero between launches */
    uint32_t type, rows;
    uint32_t det, pad;
};
_Static_assert(sizeof(struct k_llm_attn_o_params) == 152, "attn_o size");
_Static_assert(offsetof(struct k_llm_attn_o_params, w_va) == 104 &&
                   offsetof(struct k_llm_attn_o_params, y_va) == 112 &&
                   offsetof(struct k_llm_attn_o_params, part_va) == 120 &&
                   offsetof(struct k_llm_attn_o_params, count_va) == 128 &&
                   offsetof(struct k_llm_attn_o_params, type) == 136 &&
                   offsetof(struct k_llm_attn_o_params, rows) == 140 &&
                   offsetof(struct k_llm_attn_o_params, det) == 144,
               "attn_o offsets");

/* Whether the fused launch takes this shape: k_llm_attn_decode's heads, a KV head's columns of O
 * in 1, 2, 4 or 8 units of 128 (a row's units are reduced across lanes), rows in whole row
 * blocks, k within the q8 mat-vec's limit. The O type and its row layout are the caller's to
 * check (a repacked q8 type: the engine's ao_init). */
static inline int
k_llm_attn_o_ok(uint32_t n_head, uint32_t n_head_kv, uint32_t hd, uint32_t rows)
{
    if (!k_llm_attn_decode_ok(n_head, n_head_kv, hd))
        return 0;
    const uint32_t cols = n_head / n_head_kv * hd, cu = cols / 128;
    return cols % 128 == 0 && cu <= K_LLM_AO_MAX_CU && (cu & (cu - 1)) == 0 && rows &&
           rows % K_LLM_AO_ROWS == 0 && n_head * hd <= 16384;
}

#endif /* K_LLM_ATTN_O_H */
