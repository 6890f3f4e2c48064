/* SPDX-License-Identifier: MIT */
/*
 * ops_matmul.c - CPU twins and descriptors of k_matmul.cu: C f32[m, n] = A[m, k] . B[k, n],
 * row-major; A and B f32 or f16. Layer: ops. Double accumulation, one rounding per output.
 * Like the kernel, a block other than (16, 16, 1) writes nothing.
 */
#include "ops_half.h"
#include "ops_twin.h"

#include <stdlib.h>

#define OPS_MM_TILE 16 /* k_matmul.cu K_MM_TILE */

/* Translate C, A, B; false on fault, on an empty C, or on a block the kernel refuses. */
static bool
twin_mm_arrays(struct hcq_twin_launch *l, uint64_t c_va, uint64_t a_va, uint64_t b_va, uint64_t m, uint64_t n,
               uint64_t k, uint64_t in_B, float **c, const void **a, const void **b)
{
    if (l->block[0] != OPS_MM_TILE || l->block[1] != OPS_MM_TILE || l->block[2] != 1)
        return false;
    if (!m || !n)
        return false;
    *c = ops_twin_array(l, c_va, m * n, 4);
    if (!*c)
        return false;
    if (!k) { /* the kernel writes 0 (its k-loop runs no step) */
        *a = *b = NULL;
        return true;
    }
    *a = ops_twin_array(l, a_va, m * k, in_B);
    if (!*a)
        return false;
    *b = ops_twin_array(l, b_va, k * n, in_B);
    return *b != NULL;
}

/* C = A . B with A, B already widened to double. */
static void
twin_mm_double(float *c, const double *a, const double *b, uint64_t m, uint64_t n, uint64_t k)
{
    for (uint64_t i = 0; i < m; i++)
        for (uint64_t j = 0; j < n; j++) {
            double acc = 0.0;
            for (uint64_t kk = 0; kk < k; kk++)
                acc += a[i * k + kk] * b[kk * n + j];
            c[i * n + j] = (float)acc;
        }
}

/* Widen both inputs (f32 or f16 bits) to double, multiply, store. Without memory for
 * the copies the twin cannot run: it reports a fault at C rather than writing garbage. */
static void
twin_mm(struct hcq_twin_launch *l, float *c, const void *a, const void *b, uint64_t m, uint64_t n, uint64_t k,
        bool f16, uint64_t c_va)
{
    if (!k) { /* the kernel's k-loop runs no step: C = 0 */
        memset(c, 0, m * n * sizeof *c);
        return;
    }
    double *ad = malloc((m * k + k * n) * sizeof *ad);
    if (!ad) {
        l->fault = true;
        l->fault_va = c_va;
        return;
    }
    double *bd = ad + m * k;
    for (uint64_t i = 0; i < m * k; i++)
        ad[i] = f16 ? ops_half_f16_to_f32(((const uint16_t *)a)[i]) : ((const float *)a)[i];
    for (uint64_t i = 0; i < k * n; i++)
        bd[i] = f16 ? ops_half_f16_to_f32(((const uint16_t *)b)[i]) : ((const float *)b)[i];
    twin_mm_double(c, ad, bd, m, n, k);
    free(ad);
}

static void
twin_matmul_f32(struct hcq_twin_launch *l)
{
    OPS_TWIN_PARAMS(l, k_matmul_f32, p);
    float *c;
    const void *a, *b;
    if (!twin_mm_arrays(l, p.c_va, p.a_va, p.b_va, p.m, p.n, p.k, 4, &c, &a, &b))
        return;
    twin_mm(l, c, a, b, p.m, p.n, p.k, false, p.c_va);
}

static void
twin_matmul_f16(struct hcq_twin_launch *l)
{
    OPS_TWIN_PARAMS(l, k_matmul_f16, p);
    float *c;
    const void *a, *b;
    if (!twin_mm_arrays(l, p.c_va, p.a_va, p.b_va, p.m, p.n, p.k, 2, &c, &a, &b))
        return;
    twin_mm(l, c, a, b, p.m, p.n, p.k, true, p.c_va);
}

const struct hcq_kernel_desc ops_matmul_kernels[] = {
    OPS_KERNEL(k_matmul_f32, "k_matmul", twin_matmul_f32),
    OPS_KERNEL(k_matmul_f16, "k_matmul", twin_matmul_f16),
    {0},
};
