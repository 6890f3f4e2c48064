/* SPDX-License-Identifier: MIT */
/*
 * k_conv.cu - direct 2-D convolution, NCHW f32, with stride, zero padding and groups.
 *
 *   k_conv2d_f32   one thread per output element (grid-stride over N*K*P*Q), f32
 *                  accumulation in (c, r, s) order, bias added first.
 *
 * A first, simple kernel (no shared-memory tiling, no tensor cores): correctness and
 * coverage first; speed is a later issue. Error bound against exact arithmetic (the test
 * checks it): |err| <= (C/groups * R * S + 1) * 2^-23 * (|bias| + sum |x * w|) (f32
 * rounding per step, FMA or not).
 * Layouts and parameters: k_conv_params.h. CPU reference: twin in src/ops/ops_conv.c.
 * Test: tests/hcq/hcq_suite_conv.c.
 */
#include "k_device.h"
#include "k_conv_params.h"

extern "C" __global__ void
k_conv2d_f32(const struct k_conv2d_f32_params p)
{
    float *y = (float *)p.y_va;
    const float *x = (const float *)p.x_va, *w = (const float *)p.w_va, *bias = (const float *)p.bias_va;
    const uint32_t cg = p.c / p.groups, kg = p.k / p.groups;
    const uint64_t total = (uint64_t)p.n * p.k * p.p * p.q;
    for (uint64_t i = k_thread_index(); i < total; i += k_thread_count()) {
        uint32_t oq = (uint32_t)(i % p.q);
        uint64_t t = i / p.q;
        uint32_t op = (uint32_t)(t % p.p);
        t /= p.p;
        uint32_t ok = (uint32_t)(t % p.k);
        uint32_t on = (uint32_t)(t / p.k);
        uint32_t c0 = (ok / kg) * cg;
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
                    if (iw < 0 || iw >= p.w)
                        continue;
                    acc += xc[ih * p.w + iw] * wc[r * p.s + s];
                }
            }
        }
        y[i] = acc;
    }
}
