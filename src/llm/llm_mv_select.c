/* SPDX-License-Identifier: MIT */
/*
 * llm_mv_select.c - which decode mat-vec kernel reads a launch's tensors (llm_mv_prog, the per-type
 * q8 kernels by llm_mvq_typed_prog) and its parameter block (llm_mv_params). Split out of
 * llm_model.c, which records the launches. Layer: llm.
 */
#include "llm_model_int.h"
#include "k_llm_matvec.h"
#include "k_llm_quant.h"

#include <string.h>

/* The repacked q8 types with a kernel of their own, in PROG_MVQ_Q4K.. / PROG_AO_Q4K.. order. */
static const uint32_t mvq_types[5] = {K_LLM_T_Q4_KR, K_LLM_T_Q5_KR, K_LLM_T_Q4_0R, K_LLM_T_Q8_0R,
                                      K_LLM_T_Q6_KR};

/* Which decode mat-vec reads all n tensors w (rows of k): PROG_MATVEC_Q8, PROG_MVH_F16 /
 * PROG_MVH_BF16 (every tensor of that one type), PROG_MATVEC, or -1 (none: the model takes the
 * unfused path). */
int
llm_mv_prog(const struct llm_model *m, const struct dtensor *const *w, uint32_t n, uint32_t k)
{
    bool q8 = true, f32 = true, h = true;
    for (uint32_t i = 0; i < n; i++) {
        if (!w[i]->va || w[i]->ne0 != k)
            return -1;
        q8 = q8 && k_llm_mvq_type_ok(w[i]->type, k);
        f32 = f32 && k_llm_mv_type_ok(w[i]->type, k);
        h = h && k_llm_mvh_type_ok(w[i]->type, k) && w[i]->type == w[0]->type;
    }
    if (h && !m->mv_f32)
        return w[0]->type == 1 ? PROG_MVH_F16 : PROG_MVH_BF16;
    if (f32 && (m->mv_f32 || !q8))
        return PROG_MATVEC;
    return q8 ? PROG_MATVEC_Q8 : -1;
}

/* Whether a decode mat-vec program takes the q8 kernels' units, grid and epilogues (RoPE
 * included): k_llm_matvec_q8 and k_llm_matvec_h_*. */
bool
llm_mv_units(int prog)
{
    return prog == PROG_MATVEC_Q8 || prog == PROG_MVH_F16 || prog == PROG_MVH_BF16;
}

/* The per-type q8 mat-vec for a launch whose segments all have one type it is compiled for,
 * the two-type ones for Q4_K or Q5_K with Q6_K segments, else PROG_MATVEC_Q8. */
int
llm_mvq_typed_prog(const struct llm_model *m, const struct k_llm_matvec_params *p)
{
    const uint32_t t = k_llm_mvq_uniform_type(p);
    int i = -1;
    for (int j = 0; t && j < 5; j++)
        if (mvq_types[j] == t)
            i = j;
    if (!t && k_llm_mvq_types_of(p, K_LLM_T_Q4_KR, K_LLM_T_Q6_KR)) /* mixed: Q4_K and Q6_K only */
        i = 5;
    if (!t && k_llm_mvq_types_of(p, K_LLM_T_Q5_KR, K_LLM_T_Q6_KR)) /* mixed: Q5_K and Q6_K only */
        i = 6;
    if (i < 0)
        return PROG_MATVEC_Q8;
    /* Q4_0 / Q8_0 (i 2, 3): two groups per task (rows of whole group pairs) for every launch
     * (K_LLM_MVQ_X2 says why) */
    if ((i == 2 || i == 3) && p->k % 2048 == 0 && m->prog[PROG_MVQ_Q4_0X2 + (i - 2)])
        return PROG_MVQ_Q4_0X2 + (i - 2);
    if ((K_LLM_MVQ_W2 >> i & 1u) && k_llm_mvq_rows(p) < K_LLM_MVQ_PAIR_ROWS &&
        m->prog[PROG_MVQ_Q4K + i + PROG_MVQ_W2])
        return PROG_MVQ_Q4K + i + PROG_MVQ_W2;
    return m->prog[PROG_MVQ_Q4K + i] ? PROG_MVQ_Q4K + i : PROG_MATVEC_Q8;
}

uint64_t
llm_dt_bytes(const struct dtensor *w)
{
    return k_llm_row_bytes(w->type, w->ne0) * w->ne1;
}

void
llm_mv_params(const struct llm_model *m, struct k_llm_matvec_params *p, const struct dtensor *const *w,
              uint32_t n_w, uint64_t x_va, uint64_t y_va, const struct dtensor *norm, const struct dtensor *b,
              uint32_t mode)
{
    memset(p, 0, sizeof *p);
    p->x_va = x_va;
    p->y_va = y_va;
    p->norm_w_va = norm ? norm->va : 0;
    p->b_va = b && b->va ? b->va : 0;
    p->k = w[0]->ne0;
    p->n_seg = n_w;
    p->mode = mode;
    p->eps = m->hp.norm_eps;
    for (uint32_t i = 0; i < n_w; i++)
        p->seg[i] = (struct k_llm_mv_seg){w[i]->va, w[i]->type, w[i]->ne1};
}
