/* SPDX-License-Identifier: MIT */
/*
 * ops_llm_attn_decode.c - CPU twin and descriptor of the split-K decode attention
 * (src/kernels/k_llm_attn_decode.cu, parameters in k_llm_attn_decode.h). Layer: ops.
 * The twin computes the attention of the one token directly (softmax over positions
 * 0..pos in f32, like k_llm_attn's twin); the split into ranges and the partials are how
 * the kernel spreads the work, not part of the result, so the twin leaves part_va and the
 * counters (zero) untouched.
 */
#include "ops_llm.h"
#include "k_llm_attn_decode.h"
#include "k_llm_params.h" /* K_LLM_KV_B */

#include <math.h>
#include <stdlib.h>

/* The attention of one token into out [n_head][hd]; sc: n_pos floats. */
void
ops_llm_attn_decode_ref(const struct k_llm_attn_decode_params *p, const float *q, const uint16_t *kc,
                        const uint16_t *vc, float *out, float *sc, float *kw, float *vw)
{
    uint32_t kv_dim = p->n_head_kv * p->hd, n_pos = p->pos + 1, group = p->n_head / p->n_head_kv;
    for (uint32_t h = 0; h < p->n_head; h++) {
        const float *qh = q + (size_t)h * p->hd;
        uint32_t g = h / group;
        if (h % group == 0) { /* this KV head's rows, widened once for its query heads */
            ops_llm_kv_widen(kw, kc, n_pos, kv_dim, g, p->hd);
            ops_llm_kv_widen(vw, vc, n_pos, kv_dim, g, p->hd);
        }
        float m = -3.0e38f;
        for (uint32_t t = 0; t < n_pos; t++) {
            const float *kt = kw + (size_t)t * p->hd;
            float s = 0;
            for (uint32_t e = 0; e < p->hd; e++)
                s += qh[e] * kt[e];
            sc[t] = s * p->scale;
            m = fmaxf(m, sc[t]);
        }
        float z = 0;
        for (uint32_t t = 0; t < n_pos; t++) {
            sc[t] = expf(sc[t] - m);
            z += sc[t];
        }
        for (uint32_t e = 0; e < p->hd; e++) {
            float acc = 0;
            for (uint32_t t = 0; t < n_pos; t++)
                acc += sc[t] * vw[(size_t)t * p->hd + e];
            out[(size_t)h * p->hd + e] = acc / z;
        }
    }
}

static void
twin_attn_decode(struct hcq_twin_launch *l)
{
    const struct k_llm_attn_decode_params *p = l->params;
    if (!k_llm_attn_decode_ok(p->n_head, p->n_head_kv, p->hd) || p->pos >= p->n_ctx)
        return;
    uint32_t kv_dim = p->n_head_kv * p->hd, n_pos = p->pos + 1;
    const float *q = HCQ_TWIN_PTR(l, p->q_va, 4ull * p->n_head * p->hd);
    const uint16_t *kc = HCQ_TWIN_PTR(l, p->kc_va, (uint64_t)K_LLM_KV_B * p->n_ctx * kv_dim);
    const uint16_t *vc = HCQ_TWIN_PTR(l, p->vc_va, (uint64_t)K_LLM_KV_B * p->n_ctx * kv_dim);
    float *out = HCQ_TWIN_PTR(l, p->out_va, 4ull * p->n_head * p->hd);
    float *sc = malloc(4ull * n_pos), *kw = malloc(4ull * n_pos * p->hd), *vw = malloc(4ull * n_pos * p->hd);
    if (q && kc && vc && out && sc && kw && vw)
        ops_llm_attn_decode_ref(p, q, kc, vc, out, sc, kw, vw);
    free(sc), free(kw), free(vw);
}

const struct hcq_kernel_desc ops_llm_attn_decode_kernels[] = {
    {"k_llm_attn_decode", "k_llm_attn_decode", sizeof(struct k_llm_attn_decode_params), twin_attn_decode},
    {"k_llm_attn_decode_long", "k_llm_attn_decode", sizeof(struct k_llm_attn_decode_params),
     twin_attn_decode},
    {"k_llm_attn_decode_far", "k_llm_attn_decode", sizeof(struct k_llm_attn_decode_params), twin_attn_decode},
    {0},
};
