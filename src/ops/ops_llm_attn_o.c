/* SPDX-License-Identifier: MIT */
/*
 * ops_llm_attn_o.c - CPU twin and descriptors of the decode attention fused with the O projection
 * (src/kernels/k_llm_attn_o.cu, parameters in k_llm_attn_o.h). Layer: ops.
 * The same math as k_llm_attn_decode's twin followed by k_llm_matvec_q8's in ACC mode: the
 * attention of every query head (ops_llm_attn_decode_ref), x' rounded through the kernel's int8
 * blocks of 16 (k_llm_mvq_block), each O row dotted in f32 per KV head's columns and the
 * n_head_kv partial sums added in group order before the residual add - the order of the
 * kernel's det 1 protocol (det 0 adds them in whatever order its atomics land: last bits may
 * differ). The kernel's partial buffer and counters are how it spreads the work, not part of the
 * result: the twin leaves them untouched.
 */
#include "ops_llm.h"
#include "k_llm_attn_o.h"

#include <stdlib.h>

static void
twin_attn_o(struct hcq_twin_launch *l)
{
    const struct k_llm_attn_o_params *p = l->params;
    const struct k_llm_attn_decode_params *a = &p->ad;
    if (!k_llm_attn_o_ok(a->n_head, a->n_head_kv, a->hd, p->rows) || a->pos >= a->n_ctx ||
        a->pos + 1 > K_LLM_AO_MAXP)
        return;
    const uint32_t k = a->n_head * a->hd, kv_dim = a->n_head_kv * a->hd, cols = k / a->n_head_kv;
    const uint64_t rb = ops_llm_row_bytes(p->type, k);
    if (!rb)
        return;
    const float *q = HCQ_TWIN_PTR(l, a->q_va, 4ull * k);
    const float *kc = HCQ_TWIN_PTR(l, a->kc_va, 4ull * a->n_ctx * kv_dim);
    const float *vc = HCQ_TWIN_PTR(l, a->vc_va, 4ull * a->n_ctx * kv_dim);
    const uint8_t *w = HCQ_TWIN_PTR(l, p->w_va, rb * p->rows);
    float *y = HCQ_TWIN_PTR(l, p->y_va, 4ull * p->rows);
    float *x = malloc(4ull * k), *row = malloc(4ull * k), *sc = malloc(4ull * (a->pos + 1));
    if (!q || !kc || !vc || !w || !y || !x || !row || !sc)
        goto done;
    ops_llm_attn_decode_ref(a, q, kc, vc, x, sc);
    ops_llm_mvq_round(x, k); /* x' through the int8 blocks (the kernel's rounding) */
    for (uint32_t r = 0; r < p->rows; r++) {
        ops_llm_dq_row(p->type, w + rb * r, k, row);
        float s = 0.0f;
        for (uint32_t g = 0; g < a->n_head_kv; g++) {
            float pg = 0.0f;
            for (uint32_t c = g * cols; c < (g + 1) * cols; c++)
                pg += row[c] * x[c];
            s += pg;
        }
        y[r] += s;
    }
done:
    free(x);
    free(row);
    free(sc);
}

const struct hcq_kernel_desc ops_llm_attn_o_kernels[] = {
    {"k_llm_attn_o_q8_0", "k_llm_attn_o", sizeof(struct k_llm_attn_o_params), twin_attn_o},
    {"k_llm_attn_o_q4_0", "k_llm_attn_o", sizeof(struct k_llm_attn_o_params), twin_attn_o},
    {"k_llm_attn_o_q6k", "k_llm_attn_o", sizeof(struct k_llm_attn_o_params), twin_attn_o},
    {"k_llm_attn_o_q5k", "k_llm_attn_o", sizeof(struct k_llm_attn_o_params), twin_attn_o},
    {"k_llm_attn_o_q4k", "k_llm_attn_o", sizeof(struct k_llm_attn_o_params), twin_attn_o},
    {0},
};
