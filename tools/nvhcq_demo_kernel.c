/* SPDX-License-Identifier: MIT */
/*
 * nvhcq_demo_kernel.c - the kernel part of `nvhcq demo`: c = a + b and a 64x48x80 f32
 * matmul on the device, checked against double-precision host results on fresh
 * random inputs with a poisoned output. Returns 0 ok, 1 wrong, -1 failed to run.
 */
#include "hcq.h"
#include "ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int nvhcq_demo_kernel_check(struct hcq_device *dev);

static float
frand(void)
{
    return (float)rand() / (float)RAND_MAX * 2.0f - 1.0f;
}

int
nvhcq_demo_kernel_check(struct hcq_device *dev)
{
    enum { N = 100003, M = 64, NN = 48, K = 80 };
    int res = -1;
    struct hcq_program *add = NULL, *mm = NULL;
    struct hcq_queue *q = NULL;
    struct hcq_buf *a = NULL, *b = NULL, *c = NULL, *ma = NULL, *mb = NULL, *mc = NULL;
    float *ha = malloc(N * 4), *hb = malloc(N * 4), *hc = malloc(N * 4);
    float *hma = malloc(M * K * 4), *hmb = malloc(K * NN * 4), *hmc = malloc(M * NN * 4);
    if (!ha || !hb || !hc || !hma || !hmb || !hmc)
        goto done;
    for (int i = 0; i < N; i++) {
        ha[i] = frand();
        hb[i] = frand();
    }
    for (int i = 0; i < M * K; i++)
        hma[i] = frand();
    for (int i = 0; i < K * NN; i++)
        hmb[i] = frand();
    memset(hc, 0xFF, N * 4); /* NaN poison */
    memset(hmc, 0xFF, M * NN * 4);
    if (hcq_program_load(dev, "k_add_f32", &add) || hcq_program_load(dev, "k_matmul_f32", &mm) ||
        hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q) || hcq_buf_alloc(dev, N * 4, 0, &a) ||
        hcq_buf_alloc(dev, N * 4, 0, &b) || hcq_buf_alloc(dev, N * 4, 0, &c) ||
        hcq_buf_alloc(dev, M * K * 4, 0, &ma) || hcq_buf_alloc(dev, K * NN * 4, 0, &mb) ||
        hcq_buf_alloc(dev, M * NN * 4, 0, &mc))
        goto done;
    if (hcq_buf_write(a, 0, ha, N * 4) || hcq_buf_write(b, 0, hb, N * 4) || hcq_buf_write(c, 0, hc, N * 4) ||
        hcq_buf_write(ma, 0, hma, M * K * 4) || hcq_buf_write(mb, 0, hmb, K * NN * 4) ||
        hcq_buf_write(mc, 0, hmc, M * NN * 4))
        goto done;
    if (ops_launch_binary_f32(q, add, c, a, b, N) || ops_launch_matmul(q, mm, mc, ma, mb, M, NN, K) ||
        hcq_queue_finish(q, HCQ_TIMEOUT_DEFAULT_NS))
        goto done;
    if (hcq_buf_read(c, 0, hc, N * 4) || hcq_buf_read(mc, 0, hmc, M * NN * 4))
        goto done;
    res = 0;
    for (int i = 0; i < N; i++)
        if (!(fabs((double)hc[i] - ((double)ha[i] + (double)hb[i])) <= 1e-6))
            res = 1;
    for (int i = 0; i < M && res == 0; i++)
        for (int j = 0; j < NN; j++) {
            double ref = 0;
            for (int k = 0; k < K; k++)
                ref += (double)hma[i * K + k] * (double)hmb[k * NN + j];
            if (!(fabs((double)hmc[i * NN + j] - ref) <= 1e-4 * K))
                res = 1;
        }
done:
    hcq_buf_free(a);
    hcq_buf_free(b);
    hcq_buf_free(c);
    hcq_buf_free(ma);
    hcq_buf_free(mb);
    hcq_buf_free(mc);
    hcq_queue_destroy(q);
    hcq_program_destroy(add);
    hcq_program_destroy(mm);
    free(ha);
    free(hb);
    free(hc);
    free(hma);
    free(hmb);
    free(hmc);
    return res;
}
