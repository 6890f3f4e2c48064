/* SPDX-License-Identifier: MIT */
/*
 * hcq_suite_conv.c - the HCQ suite's convolution, pooling and small-model tests:
 * k_conv2d_f32 (plain, strided, padded, grouped, depthwise, 1x1 without bias, zero
 * batch, and one Stable-Diffusion-sized layer: 320 -> 320 channels, 3x3, 64x64, on GPUs;
 * 64 channels at 32x32 elsewhere), k_pool2d_f32 (max and avg, unit and larger strides,
 * padding, NaN), and two models on the device against the `cpu` backend and a
 * double-precision host forward pass: cnn_forward (conv-relu-pool-conv-relu-pool-fc)
 * and deep_mlp_10_layers (256 -> ... -> 10, ten matmuls). Kernel outputs are checked
 * against double-precision references with the error bounds stated in k_conv.cu/k_pool.cu;
 * the twins against the same references.
 */
#include "hcq_suite.h"
#include "k_conv_params.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct conv_shape {
    uint32_t n, c, h, w, k, r, s, groups, sh, sw, ph, pw;
    bool bias;
};

static uint32_t
conv_out(uint32_t in, uint32_t k, uint32_t stride, uint32_t pad)
{
    return (in + 2 * pad - k) / stride + 1;
}

static void
mk_conv(void *params, const uint64_t *in_va, uint64_t out_va, const void *ctx)
{
    const struct conv_shape *s = ctx;
    struct k_conv2d_f32_params p = {
        .y_va = out_va,
        .x_va = in_va[0],
        .w_va = in_va[1],
        .bias_va = s->bias ? in_va[2] : 0,
        .n = s->n,
        .c = s->c,
        .h = s->h,
        .w = s->w,
        .k = s->k,
        .r = s->r,
        .s = s->s,
        .groups = s->groups,
        .p = conv_out(s->h, s->r, s->sh, s->ph),
        .q = conv_out(s->w, s->s, s->sw, s->pw),
        .stride_h = s->sh,
        .stride_w = s->sw,
        .pad_h = s->ph,
        .pad_w = s->pw,
    };
    memcpy(params, &p, sizeof p);
}

/* Double-precision output element i and its error bound (k_conv.cu). */
static void
conv_ref(const struct conv_shape *s, const float *x, const float *w, const float *bias, uint64_t i,
         double *ref, double *bound)
{
    uint32_t P = conv_out(s->h, s->r, s->sh, s->ph), Q = conv_out(s->w, s->s, s->sw, s->pw);
    uint32_t cg = s->c / s->groups, kg = s->k / s->groups;
    uint32_t oq = (uint32_t)(i % Q), op = (uint32_t)(i / Q % P), ok = (uint32_t)(i / Q / P % s->k);
    uint32_t on = (uint32_t)(i / Q / P / s->k), c0 = ok / kg * cg;
    double acc = bias ? bias[ok] : 0.0, mag = bias ? fabs(bias[ok]) : 0.0;
    for (uint32_t c = 0; c < cg; c++)
        for (uint32_t r = 0; r < s->r; r++)
            for (uint32_t q = 0; q < s->s; q++) {
                int64_t ih = (int64_t)op * s->sh - s->ph + r, iw = (int64_t)oq * s->sw - s->pw + q;
                if (ih < 0 || ih >= s->h || iw < 0 || iw >= s->w)
                    continue;
                double v = (double)x[(((uint64_t)on * s->c + c0 + c) * s->h + ih) * s->w + iw] *
                           w[(((uint64_t)ok * cg + c) * s->r + r) * s->s + q];
                acc += v;
                mag += fabs(v);
            }
    *ref = acc;
    *bound = (cg * s->r * s->s + 1) * ldexp(1.0, -23) * mag + 1e-30;
}

/* Run one convolution shape; `sample` > 0 checks that many random outputs (no twin). */
static bool
conv_case(struct th *t, struct hcq_device *dev, const struct conv_shape *s, uint32_t sample)
{
    bool ok = false;
    float *x = NULL, *w = NULL, *b = NULL, *yd = NULL, *yt = NULL;
    const uint32_t P = conv_out(s->h, s->r, s->sh, s->ph), Q = conv_out(s->w, s->s, s->sw, s->pw);
    const uint64_t nx = (uint64_t)s->n * s->c * s->h * s->w,
                   nw = (uint64_t)s->k * (s->c / s->groups) * s->r * s->s;
    const uint64_t ny = (uint64_t)s->n * s->k * P * Q;
    CHECK(x = malloc(nx * 4 + 4));
    CHECK(w = malloc(nw * 4 + 4));
    CHECK(b = malloc(s->k * 4 + 4));
    CHECK(yd = malloc(ny * 4 + 4));
    if (!sample)
        CHECK(yt = malloc(ny * 4 + 4));
    for (uint64_t i = 0; i < nx; i++)
        x[i] = th_randf(-1.0f, 1.0f);
    for (uint64_t i = 0; i < nw; i++)
        w[i] = th_randf(-1.0f, 1.0f);
    for (uint32_t i = 0; i < s->k; i++)
        b[i] = th_randf(-1.0f, 1.0f);
    uint64_t grid = (ny + 255) / 256;
    struct op_case c = {"k_conv2d_f32",
                        s->bias ? 3 : 2,
                        {x, w, b},
                        {nx * 4, nw * 4, s->k * 4},
                        ny * 4,
                        sizeof(struct k_conv2d_f32_params),
                        mk_conv,
                        s,
                        grid == 0      ? 1
                        : grid > 65535 ? 65535
                                       : (uint32_t)grid,
                        256};
    CHECK(suite_op_run(t, dev, &c, (uint8_t *)yd, (uint8_t *)yt));
    uint64_t checks = sample ? (ny ? sample : 0) : ny;
    for (uint64_t j = 0; j < checks; j++) {
        uint64_t i = sample ? th_rand() % ny : j;
        double ref, bound;
        conv_ref(s, x, w, s->bias ? b : NULL, i, &ref, &bound);
        CHECKF(
            fabs(yd[i] - ref) <= bound && (!yt || fabs(yt[i] - ref) <= bound),
            "conv %ux%ux%ux%u * %ux%ux%u (groups %u, stride %u,%u, pad %u,%u): y[%llu] = %.9g (twin %.9g), "
            "exact %.9g, bound %.3g",
            s->n, s->c, s->h, s->w, s->k, s->r, s->s, s->groups, s->sh, s->sw, s->ph, s->pw,
            (unsigned long long)i, (double)yd[i], yt ? (double)yt[i] : 0.0, ref, bound);
    }
    ok = true;
done:
    free(yt), free(yd), free(b), free(w), free(x);
    return ok;
}

TEST(kernel_conv2d_f32)
{
    struct hcq_device *dev = NULL;
    CHECK_OK(hcq_device_open(t->dev_spec, &dev));
    static const struct conv_shape shapes[] = {
        {2, 3, 11, 11, 4, 3, 3, 1, 1, 1, 1, 1, true},  /* plain 3x3, "same" padding */
        {1, 4, 17, 13, 6, 3, 5, 1, 2, 3, 0, 0, true},  /* strided, non-square */
        {1, 3, 9, 9, 5, 5, 5, 1, 1, 1, 2, 2, true},    /* padded 5x5 */
        {2, 8, 10, 10, 12, 3, 3, 4, 1, 1, 1, 1, true}, /* grouped */
        {1, 6, 12, 12, 6, 3, 3, 6, 2, 2, 1, 1, true},  /* depthwise, strided */
        {3, 7, 5, 5, 2, 1, 1, 1, 1, 1, 0, 0, false},   /* 1x1, no bias */
        {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, true},    /* one element */
        {0, 3, 8, 8, 4, 3, 3, 1, 1, 1, 1, 1, true},    /* zero batch: nothing written */
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        CHECK(conv_case(t, dev, &shapes[i], 0));
    /* Stable Diffusion's UNet runs 320-channel 3x3 convolutions on 64x64 latents: full size on GPUs
     * (3.8 GMAC; 4000 sampled outputs checked), a quarter-scale one elsewhere (checked in full). */
    if (suite_is_gpu(dev)) {
        const struct conv_shape big = {1, 320, 64, 64, 320, 3, 3, 1, 1, 1, 1, 1, true};
        CHECK(conv_case(t, dev, &big, 4000));
    } else {
        const struct conv_shape big = {1, 64, 32, 32, 64, 3, 3, 1, 1, 1, 1, 1, true};
        CHECK(conv_case(t, dev, &big, 2000));
    }
done:
    hcq_device_close(dev);
}

/* ==== pooling ==== */

struct pool_shape {
    uint32_t n, c, h, w, kh, kw, sh, sw, ph, pw, mode;
};

static void
mk_pool(void *params, const uint64_t *in_va, uint64_t out_va, const void *ctx)
{
    const struct pool_shape *s = ctx;
    struct k_pool2d_f32_params p = {
        .y_va = out_va,
        .x_va = in_va[0],
        .n = s->n,
        .c = s->c,
        .h = s->h,
        .w = s->w,
        .p = conv_out(s->h, s->kh, s->sh, s->ph),
        .q = conv_out(s->w, s->kw, s->sw, s->pw),
        .kh = s->kh,
        .kw = s->kw,
        .stride_h = s->sh,
        .stride_w = s->sw,
        .pad_h = s->ph,
        .pad_w = s->pw,
        .mode = s->mode,
    };
    memcpy(params, &p, sizeof p);
}

TEST(kernel_pool2d_f32)
{
    struct hcq_device *dev = NULL;
    float *x = NULL, *yd = NULL, *yt = NULL;
    static const struct pool_shape shapes[] = {
        {2, 3, 8, 8, 2, 2, 2, 2, 0, 0, 0},   {2, 3, 8, 8, 2, 2, 2, 2, 0, 0, 1},   /* 2x2/2 */
        {1, 4, 9, 7, 3, 3, 1, 1, 1, 1, 0},   {1, 4, 9, 7, 3, 3, 1, 1, 1, 1, 1},   /* unit stride, pad */
        {1, 2, 15, 15, 3, 3, 2, 2, 1, 1, 0}, {1, 2, 15, 15, 3, 3, 2, 2, 1, 1, 1}, /* 3x3/2 */
        {1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0},   {0, 2, 4, 4, 2, 2, 2, 2, 0, 0, 1},   /* one, zero elements */
    };
    CHECK_OK(hcq_device_open(t->dev_spec, &dev));
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
        const struct pool_shape *s = &shapes[si];
        const uint32_t P = conv_out(s->h, s->kh, s->sh, s->ph), Q = conv_out(s->w, s->kw, s->sw, s->pw);
        const uint64_t nx = (uint64_t)s->n * s->c * s->h * s->w, ny = (uint64_t)s->n * s->c * P * Q;
        CHECK(x = malloc(nx * 4 + 4));
        CHECK(yd = malloc(ny * 4 + 4));
        CHECK(yt = malloc(ny * 4 + 4));
        for (uint64_t i = 0; i < nx; i++)
            x[i] = th_rand() % 50 == 0 ? NAN : th_rand() % 10 == 0 ? -0.0f : th_randf(-10.0f, 10.0f);
        uint64_t grid = (ny + 255) / 256;
        struct op_case c = {"k_pool2d_f32",
                            1,
                            {x},
                            {nx * 4},
                            ny * 4,
                            sizeof(struct k_pool2d_f32_params),
                            mk_pool,
                            s,
                            grid == 0 ? 1 : (uint32_t)grid,
                            128};
        CHECK(suite_op_run(t, dev, &c, (uint8_t *)yd, (uint8_t *)yt));
        for (uint64_t i = 0; i < ny; i++) {
            uint32_t oq = (uint32_t)(i % Q), op = (uint32_t)(i / Q % P);
            const float *xp = x + i / Q / P * s->h * s->w;
            double mx = -INFINITY, sum = 0, mag = 0;
            uint32_t count = 0;
            bool nan = false;
            for (uint32_t r = 0; r < s->kh; r++)
                for (uint32_t q = 0; q < s->kw; q++) {
                    int64_t ih = (int64_t)op * s->sh - s->ph + r, iw = (int64_t)oq * s->sw - s->pw + q;
                    if (ih < 0 || ih >= s->h || iw < 0 || iw >= s->w)
                        continue;
                    float v = xp[ih * s->w + iw];
                    count++;
                    nan |= isnan(v);
                    if (v > mx)
                        mx = v;
                    sum += v;
                    mag += fabs(v);
                }
            if (s->mode == K_POOL_MAX) {
                bool okd = nan ? isnan(yd[i]) : yd[i] == mx, okt = nan ? isnan(yt[i]) : yt[i] == mx;
                CHECKF(okd && okt, "max pool shape %zu: y[%llu] = %g (twin %g), expected %g%s", si,
                       (unsigned long long)i, (double)yd[i], (double)yt[i], mx,
                       nan ? " (NaN in window)" : "");
            } else {
                double want = count ? sum / count : 0.0;
                double bound = count ? (count + 1) * ldexp(1.0, -23) * mag / count + 1e-30 : 0.0;
                bool okd = nan ? isnan(yd[i]) : fabs(yd[i] - want) <= bound;
                bool okt = nan ? isnan(yt[i]) : fabs(yt[i] - want) <= bound;
                CHECKF(okd && okt,
                       "avg pool shape %zu: y[%llu] = %.9g (twin %.9g), expected %.9g (bound %.3g)", si,
                       (unsigned long long)i, (double)yd[i], (double)yt[i], want, bound);
            }
        }
        free(x), free(yd), free(yt);
        x = yd = yt = NULL;
    }
done:
    free(x), free(yd), free(yt);
    hcq_device_close(dev);
}

/* ==== models ==== */

/* Launch k_conv2d_f32 on q (NCHW, "same"-padded 3x3, stride 1, bias). */
static enum hcq_status
launch_conv3(struct hcq_queue *q, struct hcq_program *prog, struct hcq_buf *y, struct hcq_buf *x,
             struct hcq_buf *w, struct hcq_buf *b, uint32_t n, uint32_t c, uint32_t hw, uint32_t k)
{
    struct k_conv2d_f32_params p = {.y_va = hcq_buf_va(y),
                                    .x_va = hcq_buf_va(x),
                                    .w_va = hcq_buf_va(w),
                                    .bias_va = hcq_buf_va(b),
                                    .n = n,
                                    .c = c,
                                    .h = hw,
                                    .w = hw,
                                    .k = k,
                                    .r = 3,
                                    .s = 3,
                                    .groups = 1,
                                    .p = hw,
                                    .q = hw,
                                    .stride_h = 1,
                                    .stride_w = 1,
                                    .pad_h = 1,
                                    .pad_w = 1};
    uint64_t total = (uint64_t)n * k * hw * hw;
    const uint32_t grid[3] = {(uint32_t)((total + 255) / 256), 1, 1}, block[3] = {256, 1, 1};
    return hcq_queue_launch(q, prog, grid, block, &p, sizeof p);
}

static enum hcq_status
launch_maxpool2(struct hcq_queue *q, struct hcq_program *prog, struct hcq_buf *y, struct hcq_buf *x,
                uint32_t n, uint32_t c, uint32_t hw)
{
    struct k_pool2d_f32_params p = {.y_va = hcq_buf_va(y),
                                    .x_va = hcq_buf_va(x),
                                    .n = n,
                                    .c = c,
                                    .h = hw,
                                    .w = hw,
                                    .p = hw / 2,
                                    .q = hw / 2,
                                    .kh = 2,
                                    .kw = 2,
                                    .stride_h = 2,
                                    .stride_w = 2,
                                    .mode = K_POOL_MAX};
    uint64_t total = (uint64_t)n * c * (hw / 2) * (hw / 2);
    const uint32_t grid[3] = {(uint32_t)((total + 255) / 256), 1, 1}, block[3] = {256, 1, 1};
    return hcq_queue_launch(q, prog, grid, block, &p, sizeof p);
}

/* cnn: x[4,1,28,28] -conv 1->8, relu, maxpool-> [4,8,14,14] -conv 8->16, relu, maxpool->
 * [4,16,7,7] = [4,784] -fc 784->10-> out[4,10]. Weights: host arrays in `wts` order
 * (w1 8x1x3x3, b1 8, w2 16x8x3x3, b2 16, wfc 784x10). */
enum { CNN_B = 4, CNN_OUT = 10, CNN_FC = 16 * 7 * 7 };

static enum hcq_status
cnn_run(const char *spec, const float *x, float *const wts[5], float *out)
{
    static const uint64_t wn[5] = {8 * 9, 8, 16 * 8 * 9, 16, CNN_FC * CNN_OUT};
    struct hcq_device *dev = NULL;
    struct hcq_queue *q = NULL;
    struct hcq_program *conv = NULL, *pool = NULL, *relu = NULL, *mm = NULL;
    struct hcq_buf *bx = NULL, *bw[5] = {0}, *a1 = NULL, *p1 = NULL, *a2 = NULL, *p2 = NULL, *bo = NULL;
    enum hcq_status st = hcq_device_open(spec, &dev);
    if (st == HCQ_OK)
        st = hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q);
    if (st == HCQ_OK)
        st = hcq_program_load(dev, "k_conv2d_f32", &conv);
    if (st == HCQ_OK)
        st = hcq_program_load(dev, "k_pool2d_f32", &pool);
    if (st == HCQ_OK)
        st = hcq_program_load(dev, "k_relu_f32", &relu);
    if (st == HCQ_OK)
        st = hcq_program_load(dev, "k_matmul_f32", &mm);
    if (st == HCQ_OK)
        st = suite_buf(dev, CNN_B * 28 * 28 * 4, HCQ_MEM_DEVICE, x, 0, &bx);
    for (int i = 0; i < 5 && st == HCQ_OK; i++)
        st = suite_buf(dev, wn[i] * 4, HCQ_MEM_DEVICE, wts[i], 0, &bw[i]);
    if (st == HCQ_OK)
        st = suite_buf(dev, CNN_B * 8 * 28 * 28 * 4, HCQ_MEM_DEVICE, NULL, SUITE_POISON, &a1);
    if (st == HCQ_OK)
        st = suite_buf(dev, CNN_B * 8 * 14 * 14 * 4, HCQ_MEM_DEVICE, NULL, SUITE_POISON, &p1);
    if (st == HCQ_OK)
        st = suite_buf(dev, CNN_B * 16 * 14 * 14 * 4, HCQ_MEM_DEVICE, NULL, SUITE_POISON, &a2);
    if (st == HCQ_OK)
        st = suite_buf(dev, CNN_B * CNN_FC * 4, HCQ_MEM_DEVICE, NULL, SUITE_POISON, &p2);
    if (st == HCQ_OK)
        st = suite_buf(dev, CNN_B * CNN_OUT * 4, HCQ_MEM_DEVICE, NULL, SUITE_POISON, &bo);
    /* one submission: the queue orders the layers */
    if (st == HCQ_OK)
        st = launch_conv3(q, conv, a1, bx, bw[0], bw[1], CNN_B, 1, 28, 8);
    if (st == HCQ_OK)
        st = ops_launch_unary(q, relu, a1, a1, CNN_B * 8 * 28 * 28);
    if (st == HCQ_OK)
        st = launch_maxpool2(q, pool, p1, a1, CNN_B, 8, 28);
    if (st == HCQ_OK)
        st = launch_conv3(q, conv, a2, p1, bw[2], bw[3], CNN_B, 8, 14, 16);
    if (st == HCQ_OK)
        st = ops_launch_unary(q, relu, a2, a2, CNN_B * 16 * 14 * 14);
    if (st == HCQ_OK)
        st = launch_maxpool2(q, pool, p2, a2, CNN_B, 16, 14);
    if (st == HCQ_OK)
        st = ops_launch_matmul(q, mm, bo, p2, bw[4], CNN_B, CNN_OUT, CNN_FC);
    if (st == HCQ_OK)
        st = hcq_queue_finish(q, SUITE_TIMEOUT_NS);
    if (st == HCQ_OK)
        st = hcq_buf_read(bo, 0, out, CNN_B * CNN_OUT * 4);
    hcq_buf_free(bo), hcq_buf_free(p2), hcq_buf_free(a2), hcq_buf_free(p1), hcq_buf_free(a1),
        hcq_buf_free(bx);
    for (int i = 0; i < 5; i++)
        hcq_buf_free(bw[i]);
    hcq_program_destroy(mm), hcq_program_destroy(relu), hcq_program_destroy(pool), hcq_program_destroy(conv);
    hcq_queue_destroy(q);
    hcq_device_close(dev);
    return st;
}

/* Double-precision forward pass of the cnn. */
static void
cnn_ref(const float *x, float *const wts[5], double *out)
{
    double *a1 = calloc(8 * 28 * 28, sizeof *a1), *p1 = calloc(8 * 14 * 14, sizeof *p1);
    double *a2 = calloc(16 * 14 * 14, sizeof *a2), *p2 = calloc(CNN_FC, sizeof *p2);
    if (!a1 || !p1 || !a2 || !p2)
        goto out;
    for (int b = 0; b < CNN_B; b++) {
        const float *xb = x + b * 28 * 28;
        for (int k = 0; k < 8; k++)
            for (int i = 0; i < 28; i++)
                for (int j = 0; j < 28; j++) {
                    double acc = wts[1][k];
                    for (int r = 0; r < 3; r++)
                        for (int s = 0; s < 3; s++) {
                            int ii = i + r - 1, jj = j + s - 1;
                            if (ii >= 0 && ii < 28 && jj >= 0 && jj < 28)
                                acc += (double)xb[ii * 28 + jj] * wts[0][k * 9 + r * 3 + s];
                        }
                    a1[(k * 28 + i) * 28 + j] = acc > 0 ? acc : 0;
                }
        for (int k = 0; k < 8; k++)
            for (int i = 0; i < 14; i++)
                for (int j = 0; j < 14; j++) {
                    double m = -INFINITY;
                    for (int r = 0; r < 2; r++)
                        for (int s = 0; s < 2; s++)
                            m = fmax(m, a1[(k * 28 + 2 * i + r) * 28 + 2 * j + s]);
                    p1[(k * 14 + i) * 14 + j] = m;
                }
        for (int k = 0; k < 16; k++)
            for (int i = 0; i < 14; i++)
                for (int j = 0; j < 14; j++) {
                    double acc = wts[3][k];
                    for (int c = 0; c < 8; c++)
                        for (int r = 0; r < 3; r++)
                            for (int s = 0; s < 3; s++) {
                                int ii = i + r - 1, jj = j + s - 1;
                                if (ii >= 0 && ii < 14 && jj >= 0 && jj < 14)
                                    acc +=
                                        p1[(c * 14 + ii) * 14 + jj] * wts[2][((k * 8 + c) * 3 + r) * 3 + s];
                            }
                    a2[(k * 14 + i) * 14 + j] = acc > 0 ? acc : 0;
                }
        for (int k = 0; k < 16; k++)
            for (int i = 0; i < 7; i++)
                for (int j = 0; j < 7; j++) {
                    double m = -INFINITY;
                    for (int r = 0; r < 2; r++)
                        for (int s = 0; s < 2; s++)
                            m = fmax(m, a2[(k * 14 + 2 * i + r) * 14 + 2 * j + s]);
                    p2[(k * 7 + i) * 7 + j] = m;
                }
        for (int o = 0; o < CNN_OUT; o++) {
            double acc = 0;
            for (int f = 0; f < CNN_FC; f++)
                acc += p2[f] * wts[4][f * CNN_OUT + o];
            out[b * CNN_OUT + o] = acc;
        }
    }
out:
    free(a1), free(p1), free(a2), free(p2);
}

/* |a - b| <= atol + rtol |b| with the field's float32 tolerance scaled to the output. */
static bool
close_to(double a, double b, double scale)
{
    return fabs(a - b) <= 1e-4 * scale + 1e-4 * fabs(b);
}

TEST(model_cnn_forward)
{
    static const uint64_t wn[5] = {8 * 9, 8, 16 * 8 * 9, 16, CNN_FC * CNN_OUT};
    static const float wscale[5] = {0.33f, 0.1f, 0.12f, 0.1f, 0.036f}; /* ~1/sqrt(fan-in) */
    float *x = NULL, *wts[5] = {0}, out_dev[CNN_B * CNN_OUT], out_cpu[CNN_B * CNN_OUT];
    double ref[CNN_B * CNN_OUT], scale = 0;
    CHECK(x = malloc(CNN_B * 28 * 28 * 4));
    for (int i = 0; i < CNN_B * 28 * 28; i++)
        x[i] = th_randf(0.0f, 1.0f);
    for (int l = 0; l < 5; l++) {
        CHECK(wts[l] = malloc(wn[l] * 4));
        for (uint64_t i = 0; i < wn[l]; i++)
            wts[l][i] = th_randf(-wscale[l], wscale[l]);
    }
    CHECK_OK(cnn_run(t->dev_spec, x, wts, out_dev));
    CHECK_OK(cnn_run("cpu", x, wts, out_cpu));
    cnn_ref(x, wts, ref);
    for (int i = 0; i < CNN_B * CNN_OUT; i++)
        scale = fmax(scale, fabs(ref[i]));
    for (int i = 0; i < CNN_B * CNN_OUT; i++)
        CHECKF(close_to(out_dev[i], out_cpu[i], scale) && close_to(out_cpu[i], ref[i], scale),
               "out[%d]: %s %.7g, cpu %.7g, double %.7g (scale %.3g)", i, t->dev_spec, (double)out_dev[i],
               (double)out_cpu[i], ref[i], scale);
done:
    for (int l = 0; l < 5; l++)
        free(wts[l]);
    free(x);
}

/* deep mlp: 10 layers, 256 -> 256 (x9, relu) -> 10, batch 32; one submission. */
enum { MLP_B = 32, MLP_D = 256, MLP_L = 10, MLP_OUT = 10 };

static enum hcq_status
mlp_run(const char *spec, const float *x, float *const *w, float *out)
{
    struct hcq_device *dev = NULL;
    struct hcq_queue *q = NULL;
    struct hcq_program *mm = NULL, *relu = NULL;
    struct hcq_buf *act[2] = {0}, *bw[MLP_L] = {0};
    enum hcq_status st = hcq_device_open(spec, &dev);
    if (st == HCQ_OK)
        st = hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q);
    if (st == HCQ_OK)
        st = hcq_program_load(dev, "k_matmul_f32", &mm);
    if (st == HCQ_OK)
        st = hcq_program_load(dev, "k_relu_f32", &relu);
    if (st == HCQ_OK)
        st = suite_buf(dev, MLP_B * MLP_D * 4, HCQ_MEM_DEVICE, x, 0, &act[0]);
    if (st == HCQ_OK)
        st = suite_buf(dev, MLP_B * MLP_D * 4, HCQ_MEM_DEVICE, NULL, SUITE_POISON, &act[1]);
    for (int l = 0; l < MLP_L && st == HCQ_OK; l++)
        st = suite_buf(dev, MLP_D * (l == MLP_L - 1 ? MLP_OUT : MLP_D) * 4, HCQ_MEM_DEVICE, w[l], 0, &bw[l]);
    for (int l = 0; l < MLP_L && st == HCQ_OK; l++) {
        uint32_t n = l == MLP_L - 1 ? MLP_OUT : MLP_D;
        st = ops_launch_matmul(q, mm, act[(l + 1) % 2], act[l % 2], bw[l], MLP_B, n, MLP_D);
        if (st == HCQ_OK && l != MLP_L - 1)
            st = ops_launch_unary(q, relu, act[(l + 1) % 2], act[(l + 1) % 2], (uint64_t)MLP_B * n);
    }
    if (st == HCQ_OK)
        st = hcq_queue_finish(q, SUITE_TIMEOUT_NS);
    if (st == HCQ_OK)
        st = hcq_buf_read(act[MLP_L % 2], 0, out, MLP_B * MLP_OUT * 4);
    for (int l = 0; l < MLP_L; l++)
        hcq_buf_free(bw[l]);
    hcq_buf_free(act[1]), hcq_buf_free(act[0]);
    hcq_program_destroy(relu), hcq_program_destroy(mm);
    hcq_queue_destroy(q);
    hcq_device_close(dev);
    return st;
}

TEST(model_deep_mlp_10_layers)
{
    float *x = NULL, *w[MLP_L] = {0}, *out_dev = NULL, *out_cpu = NULL;
    double *a = NULL, *b = NULL, scale = 0;
    CHECK(x = malloc(MLP_B * MLP_D * 4));
    CHECK(out_dev = malloc(MLP_B * MLP_OUT * 4));
    CHECK(out_cpu = malloc(MLP_B * MLP_OUT * 4));
    CHECK(a = malloc(MLP_B * MLP_D * sizeof *a));
    CHECK(b = malloc(MLP_B * MLP_D * sizeof *b));
    for (int i = 0; i < MLP_B * MLP_D; i++)
        x[i] = th_randf(-1.0f, 1.0f);
    for (int l = 0; l < MLP_L; l++) {
        int n = l == MLP_L - 1 ? MLP_OUT : MLP_D;
        CHECK(w[l] = malloc((size_t)MLP_D * n * 4));
        for (int i = 0; i < MLP_D * n; i++)
            w[l][i] = th_randf(-0.11f, 0.11f); /* ~ sqrt(3 / fan-in): activations stay O(1) */
    }
    CHECK_OK(mlp_run(t->dev_spec, x, w, out_dev));
    CHECK_OK(mlp_run("cpu", x, w, out_cpu));
    for (int i = 0; i < MLP_B * MLP_D; i++)
        a[i] = x[i];
    for (int l = 0; l < MLP_L; l++) {
        int n = l == MLP_L - 1 ? MLP_OUT : MLP_D;
        for (int r = 0; r < MLP_B; r++)
            for (int c = 0; c < n; c++) {
                double acc = 0;
                for (int k = 0; k < MLP_D; k++)
                    acc += a[r * MLP_D + k] * w[l][k * n + c];
                b[r * MLP_D + c] = (l != MLP_L - 1 && acc < 0) ? 0 : acc;
            }
        double *tmp = a;
        a = b;
        b = tmp;
    }
    for (int r = 0; r < MLP_B; r++)
        for (int c = 0; c < MLP_OUT; c++)
            scale = fmax(scale, fabs(a[r * MLP_D + c]));
    for (int r = 0; r < MLP_B; r++)
        for (int c = 0; c < MLP_OUT; c++) {
            int i = r * MLP_OUT + c;
            double ref = a[r * MLP_D + c];
            CHECKF(close_to(out_dev[i], out_cpu[i], scale) && close_to(out_cpu[i], ref, scale),
                   "out[%d][%d]: %s %.7g, cpu %.7g, double %.7g (scale %.3g)", r, c, t->dev_spec,
                   (double)out_dev[i], (double)out_cpu[i], ref, scale);
        }
done:
    for (int l = 0; l < MLP_L; l++)
        free(w[l]);
    free(b), free(a), free(out_cpu), free(out_dev), free(x);
}

const struct th_case suite_conv_cases[] = {
    TH_CASE(kernel_conv2d_f32),
    TH_CASE(kernel_pool2d_f32),
    TH_CASE(model_cnn_forward),
    TH_CASE(model_deep_mlp_10_layers),
};
const int suite_conv_case_count = TH_COUNT(suite_conv_cases);
