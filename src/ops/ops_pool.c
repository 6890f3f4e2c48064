/* SPDX-License-Identifier: MIT */
/*
 * ops_pool.c - CPU twin and descriptor of k_pool.cu (2-D max/avg pooling, NCHW): the
 * kernel's loop in the same order, so max is bit-exact and avg differs at most by the
 * kernel's division rounding. Layer: ops.
 */
#include "ops_twin.h"
#include "k_conv_params.h"

#include <math.h>

static void
twin_pool2d_f32(struct hcq_twin_launch *l)
{
    OPS_TWIN_PARAMS(l, k_pool2d_f32, p);
    const uint64_t total = (uint64_t)p.n * p.c * p.p * p.q;
    if (!total)
        return;
    float *y = ops_twin_array(l, p.y_va, total, 4);
    const float *x = y ? ops_twin_array(l, p.x_va, (uint64_t)p.n * p.c * p.h * p.w, 4) : NULL;
    if (!x)
        return;
    for (uint64_t i = 0; i < total; i++) {
        uint32_t oq = (uint32_t)(i % p.q);
        uint64_t t = i / p.q;
        uint32_t op = (uint32_t)(t % p.p);
        const float *xp = x + (t / p.p) * p.h * p.w;
        const int64_t ih0 = (int64_t)op * p.stride_h - p.pad_h, iw0 = (int64_t)oq * p.stride_w - p.pad_w;
        float acc = p.mode == K_POOL_MAX ? -INFINITY : 0.0f;
        uint32_t count = 0;
        bool nan = false;
        for (uint32_t r = 0; r < p.kh; r++) {
            int64_t ih = ih0 + r;
            if (ih < 0 || ih >= p.h)
                continue;
            for (uint32_t s = 0; s < p.kw; s++) {
                int64_t iw = iw0 + s;
                if (iw < 0 || iw >= p.w)
                    continue;
                float v = xp[ih * p.w + iw];
                count++;
                if (p.mode == K_POOL_MAX) {
                    nan |= isnan(v);
                    acc = v > acc ? v : acc;
                } else {
                    acc += v;
                }
            }
        }
        if (p.mode == K_POOL_MAX)
            y[i] = nan ? NAN : acc;
        else
            y[i] = count ? acc / (float)count : 0.0f;
    }
}

const struct hcq_kernel_desc ops_pool_kernels[] = {
    OPS_KERNEL(k_pool2d_f32, "k_pool", twin_pool2d_f32),
    {0},
};
