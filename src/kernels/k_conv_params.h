/* SPDX-License-Identifier: MIT */
/*
 * k_conv_params.h - parameter structs of the convolution (k_conv.cu) and pooling
 * (k_pool.cu) kernels, with the conventions and ABI checks of k_params.h. Layer: kernels.
 * Tensors are NCHW f32, row-major, contiguous.
 */
#ifndef K_CONV_PARAMS_H
#define K_CONV_PARAMS_H

#include "k_params.h"

/* k_conv2d_f32: y[n, k, p, q] = bias[k] + sum_{c in group(k), r, s}
 *   x[n, c, p*stride_h - pad_h + r, q*stride_w - pad_w + s] * w[k, c - c0(k), r, s]
 * x f32[N, C, H, W], w f32[K, C / groups, R, S], bias f32[K] (bias_va 0: none),
 * y f32[N, K, P, Q] with P = (H + 2 pad_h - R) / stride_h + 1, Q likewise (caller's job);
 * out-of-image taps read zero. C and K are multiples of groups. */
struct k_conv2d_f32_params {
    uint64_t y_va;
    uint64_t x_va;
    uint64_t w_va;
    uint64_t bias_va;
    uint32_t n, c, h, w;
    uint32_t k, r, s, groups;
    uint32_t p, q, stride_h, stride_w;
    uint32_t pad_h, pad_w, pad0, pad1;
};
K_PARAMS_SIZE(k_conv2d_f32, 96);
K_PARAMS_FIELD(k_conv2d_f32, n, 32);
K_PARAMS_FIELD(k_conv2d_f32, pad_h, 80);

/* Pooling modes of k_pool2d_f32. MAX: NaN in the window gives NaN; a window with no
 * in-image element gives -Inf. AVG: the mean of the in-image elements of the window
 * (padding not counted); none: 0. */
enum k_pool_mode { K_POOL_MAX = 0, K_POOL_AVG = 1 };

/* k_pool2d_f32: y[n, c, p, q] over the window x[n, c, p*sh - ph + [0, kh), q*sw - pw + [0, kw)]
 * x f32[N, C, H, W], y f32[N, C, P, Q] (P, Q given by the caller). */
struct k_pool2d_f32_params {
    uint64_t y_va;
    uint64_t x_va;
    uint32_t n, c, h, w;
    uint32_t p, q, kh, kw;
    uint32_t stride_h, stride_w, pad_h, pad_w;
    uint32_t mode; /* enum k_pool_mode */
    uint32_t pad0;
};
K_PARAMS_SIZE(k_pool2d_f32, 72);
K_PARAMS_FIELD(k_pool2d_f32, mode, 64);

#endif /* K_CONV_PARAMS_H */
