/* SPDX-License-Identifier: MIT */
/*
 * k_pool.cu - 2-D max and average pooling, NCHW f32, with stride and padding.
 *
 *   k_pool2d_f32   one thread per output element (grid-stride over N*C*P*Q).
 *                  MAX: NaN anywhere in the window propagates; exact.
 *                  AVG: sum in row-major window order, divided by the count of in-image
 *                  elements (padding excluded); |err| <= kh*kw * 2^-23 * mean|x| + 1 ulp.
 * Layouts and parameters: k_conv_params.h. CPU reference: twin in src/ops/ops_pool.c.
 * Test: tests/hcq/hcq_suite_conv.c.
 */
#include "k_device.h"
#include "k_conv_params.h"

extern "C" __global__ void
k_pool2d_f32(const struct k_pool2d_f32_params p)
{
    float *y = (float *)p.y_va;
    const float *x = (const float *)p.x_va;
    const uint64_t total = (uint64_t)p.n * p.c * p.p * p.q;
    for (uint64_t i = k_thread_index(); i < total; i += k_thread_count()) {
        uint32_t oq = (uint32_t)(i % p.q);
        uint64_t t = i / p.q;
        uint32_t op = (uint32_t)(t % p.p);
        uint64_t plane = t / p.p; /* n * C + c */
        const float *xp = x + plane * p.h * p.w;
        const int64_t ih0 = (int64_t)op * p.stride_h - p.pad_h, iw0 = (int64_t)oq * p.stride_w - p.pad_w;
        float acc = p.mode == K_POOL_MAX ? __int_as_float((int)0xff800000u) : 0.0f;
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
                    nan |= v != v;
                    acc = v > acc ? v : acc;
                } else {
                    acc += v;
                }
            }
        }
        if (p.mode == K_POOL_MAX)
            y[i] = nan ? __int_as_float(0x7fc00000) : acc;
        else
            y[i] = count ? acc / (float)count : 0.0f;
    }
}
