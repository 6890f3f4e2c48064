/* SPDX-License-Identifier: MIT */
/*
 * ops_conv.c - CPU twin and descriptor of k_conv.cu (direct NCHW 2-D convolution with
 * stride, padding, groups): the kernel's loop in the same (c, r, s) order with f32
 * accumulation; the GPU may fuse multiply-adds, hence the bound in k_conv.cu. Layer: ops.
 */
#include "ops_twin.h"
#include "k_conv_params.h"

static void
twin_conv2d_f32(struct hcq_twin_launch *l)
{
    OPS_TWIN_PARAMS(l, k_conv2d_f32, p);
    const uint64_t total = (uint64_t)p.n * p.k * p.p * p.q;
    if (!total || !p.groups || p.c % p.groups || p.k % p.groups)
        return;
    const uint32_t cg = p.c / p.groups, kg = p.k / p.groups;
    float *y = ops_twin_array(l, p.y_va, total, 4);
    const float *x = y ? ops_twin_array(l, p.x_va, (uint64_t)p.n * p.c * p.h * p.w, 4) : NULL;
    const float *w = x ? ops_twin_array(l, p.w_va, (uint64_t)p.k * cg * p.r * p.s, 4) : NULL;
    const float *bias = NULL;
    if (!w || (p.bias_va && !(bias = ops_twin_array(l, p.bias_va, p.k, 4))))
        return;
    for (uint64_t i = 0; i < total; i++) {
        uint32_t oq = (uint32_t)(i % p.q);
        uint64_t t = i / p.q;
        uint32_t op = (uint32_t)(t % p.p);
        t /= p.p;
        uint32_t ok = (uint32_t)(t % p.k), on = (uint32_t)(t / p.k), c0 = (ok / kg) * cg;
        float acc = bias ? bias[ok] : 0.0f;
        const int64_t ih0 = (int64_t)op * p.stride_h - p.pad_h, iw0 = (int64_t)oq * p.stride_w - p.pad_w;
        for (uint32_t c = 0; c < cg; c++) {
            const float *xc = x + ((uint64_t)on * p.c + c0 + c) * p.h * p.w;
            const float *wc = w + ((uint64_t)ok * cg + c) * p.r * p.s;
            for (uint32_t r = 0; r < p.r; r++) {
                int64_t ih = ih0 + r;
                if (ih < 0 || ih >= p.h)
                    continue;
                for (uint32_t s = 0; s < p.s; s++) {
                    int64_t iw = iw0 + s;
                    if (iw >= 0 && iw < p.w)
                        acc += xc[ih * p.w + iw] * wc[r * p.s + s];
                }
            }
        }
        y[i] = acc;
    }
}

const struct hcq_kernel_desc ops_conv_kernels[] = {
    OPS_KERNEL(k_conv2d_f32, "k_conv", twin_conv2d_f32),
    {0},
};
