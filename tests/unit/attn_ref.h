/* SPDX-License-Identifier: MIT */
/*
 * attn_ref.h - the double-precision softmax attention that the attention kernels' tests
 * (test_llm_attn_decode.c, test_llm_attn_prefill.c) hold the kernels
 * to: one query head over the first n rows of a K/V cache held as f32 values, and the rounding
 * of such values to the cache's f16 elements. Static inline: header only, like the other
 * tests/unit helpers.
 */
#ifndef ATTN_REF_H
#define ATTN_REF_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "ops_half.h"

#define ATTN_REF_HD_MAX 128 /* the largest head_dim the kernels take */

/* The device cache holds f16 (K_LLM_KV_B): x[i] rounded to it into h[i], and x[i] replaced by the
 * value h[i] holds, so the reference sees what the kernels read. */
static inline void
attn_ref_kv_round(float *x, uint16_t *h, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        h[i] = ops_half_f32_to_f16(x[i]);
        x[i] = ops_half_f16_to_f32(h[i]);
    }
}

/* out[e] = sum_u softmax_u(q . k_u * scale) v_u[e] for e < hd, in double: q is the query
 * head (hd floats); kc and vc hold rows of kv floats, the KV head's slice at g * hd; w is
 * scratch for n scores. */
static inline void
attn_ref_head(const float *q, const float *kc, const float *vc, uint32_t kv, uint32_t g, uint32_t hd,
              uint32_t n, float scale, double *w, double *out)
{
    double mx = -1e300, z = 0;
    for (uint32_t u = 0; u < n; u++) {
        double d = 0;
        for (uint32_t e = 0; e < hd; e++)
            d += (double)q[e] * kc[(size_t)u * kv + g * hd + e];
        w[u] = d * scale;
        mx = fmax(mx, w[u]);
    }
    for (uint32_t u = 0; u < n; u++)
        z += (w[u] = exp(w[u] - mx));
    for (uint32_t e = 0; e < hd; e++) {
        double r = 0;
        for (uint32_t u = 0; u < n; u++)
            r += w[u] * vc[(size_t)u * kv + g * hd + e];
        out[e] = r / z;
    }
}

#endif /* ATTN_REF_H */
