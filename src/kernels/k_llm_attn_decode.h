/* SPDX-License-Identifier: MIT */
/*
 * k_llm_attn_decode.h - parameters of the split-K decode attention
 * (src/kernels/k_llm_attn_decode.cu; CPU twin src/ops/ops_llm_attn_decode.c). Layer:
 * kernels (param headers). One struct by value, sizes and offsets _Static_assert'ed.
 *
 * One token at position pos attends to cache rows 0..pos (causal, GQA): the positions are
 * cut into at most n_split ranges of L = max(K_LLM_AD_MIN_L, roundup8(ceil((pos + 1) /
 * n_split))) rows (one range: the CTA writes the output itself); CTA
 * (g, s) handles KV head g (all n_head / n_head_kv query heads that share it) over range s,
 * leaving a partial (max, sum, unnormalized output) per head in part_va; the last CTA of
 * head group g to finish (a counter per group, reset to 0 by that CTA) merges them into
 * out_va. grid (n_head_kv, n_split), K_LLM_AD_THREADS threads. hd 64 or 128, at most
 * K_LLM_AD_MAX_GS query heads per KV head (k_llm_attn_decode_ok); other shapes use k_llm_attn.
 */
#ifndef K_LLM_ATTN_DECODE_H
#define K_LLM_ATTN_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "k_llm_matvec.h" /* struct k_llm_pf */

#if defined(__cplusplus) && !defined(_Static_assert)
#define _Static_assert static_assert
#endif

#define K_LLM_AD_THREADS 256
#define K_LLM_AD_MAX_GS 8
#define K_LLM_AD_SPLITS 32 /* n_split the engine uses for k_llm_attn_decode and _long */
/* Past K_LLM_AD_FAR_POS positions the engine launches k_llm_attn_decode_far: the long path's
 * code with 3 CTAs per SM (80 registers) over K_LLM_AD_SPLITS_FAR ranges - 384 CTAs of a
 * 1B model's 8 KV heads fill H200's 396 slots. H200, 1B Q4_K_M tg64 (2026-11-29): 48 ranges at
 * 3 CTAs per SM won 5.1% at depth 32768 but lost 1.1% at 1024 and 0.5% at 4096 as the only
 * long kernel, hence a kernel (and decode graph) of its own. */
#define K_LLM_AD_SPLITS_FAR 48
#define K_LLM_AD_FAR_POS 8192u
#define K_LLM_AD_SPLITS_MAX K_LLM_AD_SPLITS_FAR /* the partials buffer's ranges */
/* positions the short-context (one CTA per query head) path holds: its score array */
#define K_LLM_AD_H2_MAXP 1024
/* stages of the long path's cp.async ring of K and V tiles (8 KiB each; attn_decode_tiles): 3, 4
 * and 5 measured the same (H200, 1B Q4_K_M at depth 32768); 3 leaves the most shared memory */
#define K_LLM_AD_TSTAGES 3
#define K_LLM_AD_MIN_L                                                                                       \
    8 /* fewest rows per range (one range: no merge); 64 measured slower at 64 positions (8 CTAs) */

struct k_llm_attn_decode_params {
    uint64_t q_va;         /* f32 [n_head * hd] */
    uint64_t kc_va, vc_va; /* f16 [n_ctx][n_head_kv * hd] (K_LLM_KV_B) */
    uint64_t out_va;       /* f32 [n_head * hd] */
    uint64_t part_va;      /* f32 [n_head][n_split][hd + 2] scratch */
    uint64_t count_va;     /* u32 [n_head_kv], zero between launches */
    uint32_t pos, n_ctx;
    uint32_t n_head, n_head_kv;
    uint32_t hd, n_split;
    float scale;
    uint32_t head_max;  /* n_pos <= head_max: one CTA per query head, no split (needs n_split >= group) */
    struct k_llm_pf pf; /* L2 prefetch hint (k_llm_matvec.h) */
};
_Static_assert(sizeof(struct k_llm_attn_decode_params) == 104, "attn_decode size");
_Static_assert(offsetof(struct k_llm_attn_decode_params, kc_va) == 8 &&
                   offsetof(struct k_llm_attn_decode_params, vc_va) == 16 &&
                   offsetof(struct k_llm_attn_decode_params, out_va) == 24 &&
                   offsetof(struct k_llm_attn_decode_params, part_va) == 32 &&
                   offsetof(struct k_llm_attn_decode_params, count_va) == 40 &&
                   offsetof(struct k_llm_attn_decode_params, pos) == 48 &&
                   offsetof(struct k_llm_attn_decode_params, n_ctx) == 52 &&
                   offsetof(struct k_llm_attn_decode_params, n_head) == 56 &&
                   offsetof(struct k_llm_attn_decode_params, n_head_kv) == 60 &&
                   offsetof(struct k_llm_attn_decode_params, hd) == 64 &&
                   offsetof(struct k_llm_attn_decode_params, n_split) == 68 &&
                   offsetof(struct k_llm_attn_decode_params, scale) == 72 &&
                   offsetof(struct k_llm_attn_decode_params, pf) == 80,
               "attn_decode offsets");

static inline int
k_llm_attn_decode_ok(uint32_t n_head, uint32_t n_head_kv, uint32_t hd)
{
    return n_head_kv && n_head % n_head_kv == 0 && n_head / n_head_kv <= K_LLM_AD_MAX_GS &&
           (hd == 64 || hd == 128);
}

/* Positions up to which a decode step takes the one-CTA-per-query-head path (H100 Q6_K tg64:
 * at depth 512 1223 vs 1185 tokens/s for the split path, at depth 960 1079 vs 1123). */
#define K_LLM_AD_HEAD_MAX 640u

/* Whether a step at position pos runs past the short-context path (head_max as in the
 * parameters): the engine then launches k_llm_attn_decode_long or, past K_LLM_AD_FAR_POS
 * positions, _far, each from a decode graph of its own (k_llm_ad_kind). */
static inline int
k_llm_ad_long(uint32_t pos, uint32_t head_max)
{
    return !(pos + 1 <= head_max && pos < K_LLM_AD_H2_MAXP);
}

/* The decode attention kernel a step at pos takes, the index of its decode graph: 0
 * k_llm_attn_decode, 1 k_llm_attn_decode_long, 2 k_llm_attn_decode_far (K_LLM_AD_KINDS). */
#define K_LLM_AD_KINDS 3
static inline uint32_t
k_llm_ad_kind(uint32_t pos, uint32_t head_max)
{
    return !k_llm_ad_long(pos, head_max) ? 0u : pos + 1 <= K_LLM_AD_FAR_POS ? 1u : 2u;
}

/* The ranges (n_split, the grid's y) the engine launches kernel kind with */
static inline uint32_t
k_llm_ad_kind_splits(uint32_t kind)
{
    return kind == 2 ? K_LLM_AD_SPLITS_FAR : K_LLM_AD_SPLITS;
}

/* The kernel (program name) of kind */
static inline const char *
k_llm_ad_kind_kernel(uint32_t kind)
{
    return kind == 0 ? "k_llm_attn_decode" : kind == 1 ? "k_llm_attn_decode_long" : "k_llm_attn_decode_far";
}

#endif /* K_LLM_ATTN_DECODE_H */
