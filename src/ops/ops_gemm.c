/* SPDX-License-Identifier: MIT */
/*
 * ops_gemm.c - CPU twins and descriptors of k_gemm_mma.cu: C f32[m, n] = A[m, k] . B
 * (B[k, n]) or A . B^T (_nt, B[n, k]), A and B f16 or bf16, row-major. Layer: ops.
 * Double accumulation, one rounding per output (the kernel accumulates in f32; the
 * difference is within the bound of k_gemm_mma.h). Like the kernel, a block other than
 * (OPS_GEMM_THREADS, 1, 1) writes nothing.
 */
#include "ops.h"
#include "ops_half.h"
#include "ops_twin.h"

#include <stdlib.h>

static void
twin_gemm(struct hcq_twin_launch *l, bool bf16, bool nt)
{
    OPS_TWIN_PARAMS(l, k_gemm, p);
    if (l->block[0] != OPS_GEMM_THREADS || l->block[1] != 1 || l->block[2] != 1 || !p.m || !p.n)
        return;
    float *c = ops_twin_array(l, p.c_va, (uint64_t)p.m * p.n, 4);
    if (!c)
        return;
    if (!p.k) { /* the kernel's k-loop runs no step: C = 0 */
        memset(c, 0, (uint64_t)p.m * p.n * sizeof *c);
        return;
    }
    const uint16_t *a = ops_twin_array(l, p.a_va, (uint64_t)p.m * p.k, 2);
    const uint16_t *b = a ? ops_twin_array(l, p.b_va, (uint64_t)p.k * p.n, 2) : NULL;
    if (!b)
        return;
    /* widen once; B transposed to [n][k] so both inner loops run along k */
    double *ad = malloc(((uint64_t)p.m * p.k + (uint64_t)p.k * p.n) * sizeof *ad);
    if (!ad) {
        l->fault = true; /* cannot run: report a fault at C rather than write garbage */
        l->fault_va = p.c_va;
        return;
    }
    double *bd = ad + (uint64_t)p.m * p.k;
    for (uint64_t i = 0; i < (uint64_t)p.m * p.k; i++)
        ad[i] = bf16 ? ops_half_bf16_to_f32(a[i]) : ops_half_f16_to_f32(a[i]);
    for (uint64_t j = 0; j < p.n; j++)
        for (uint64_t kk = 0; kk < p.k; kk++) {
            uint16_t h = nt ? b[j * p.k + kk] : b[kk * p.n + j];
            bd[j * p.k + kk] = bf16 ? ops_half_bf16_to_f32(h) : ops_half_f16_to_f32(h);
        }
    for (uint64_t i = 0; i < p.m; i++)
        for (uint64_t j = 0; j < p.n; j++) {
            double acc = 0.0;
            for (uint64_t kk = 0; kk < p.k; kk++)
                acc += ad[i * p.k + kk] * bd[j * p.k + kk];
            c[i * p.n + j] = (float)acc;
        }
    free(ad);
}

static void
twin_gemm_f16(struct hcq_twin_launch *l)
{
    twin_gemm(l, false, false);
}
static void
twin_gemm_bf16(struct hcq_twin_launch *l)
{
    twin_gemm(l, true, false);
}
static void
twin_gemm_f16_nt(struct hcq_twin_launch *l)
{
    twin_gemm(l, false, true);
}
static void
twin_gemm_bf16_nt(struct hcq_twin_launch *l)
{
    twin_gemm(l, true, true);
}

const struct hcq_kernel_desc ops_gemm_kernels[] = {
    {"k_gemm_f16", "k_gemm_mma", sizeof(struct k_gemm_params), twin_gemm_f16},
    {"k_gemm_bf16", "k_gemm_mma", sizeof(struct k_gemm_params), twin_gemm_bf16},
    {"k_gemm_f16_nt", "k_gemm_mma", sizeof(struct k_gemm_params), twin_gemm_f16_nt},
    {"k_gemm_bf16_nt", "k_gemm_mma", sizeof(struct k_gemm_params), twin_gemm_bf16_nt},
    {0},
};
