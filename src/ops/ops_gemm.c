/* SPDX-License-Identifier: MIT */
/*
 * ops_gemm.c - CPU twins and descriptors of k_gemm_mma.cu and k_gemm_wgmma.cu (sm_90a):
 * C f32[m, n] = A[m, k] . B (B[k, n]) or A . B^T (_nt, B[n, k]), A and B f16 or bf16,
 * row-major; and ops_gemm_kernel(), which picks the kernel a device runs. Layer: ops.
 * Double accumulation, one rounding per output (the kernels accumulate in f32; the
 * difference is within the bound of k_gemm_mma.h). Like the kernels, a block other than
 * (OPS_GEMM_THREADS, 1, 1) (k_gemm_*) or (K_GEMM_WG_THREADS, 1, 1) (k_gemm_wgmma_*)
 * writes nothing.
 */
#include "ops.h"
#include "ops_half.h"
#include "ops_twin.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* params_off: where struct k_gemm_params starts in the launch's parameters (256 in the TMA
 * kernels' struct k_gemm_tma_params, after the two tensor maps). */
static void
twin_gemm_at(struct hcq_twin_launch *l, bool bf16, bool nt, uint32_t threads, uint32_t params_off)
{
    struct k_gemm_params p;
    memcpy(&p, (const uint8_t *)l->params + params_off, sizeof p);
    if (l->block[0] != threads || l->block[1] != 1 || l->block[2] != 1 || !p.m || !p.n)
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
twin_gemm(struct hcq_twin_launch *l, bool bf16, bool nt, uint32_t threads)
{
    twin_gemm_at(l, bf16, nt, threads, 0);
}

static void
twin_gemm_tma_f16(struct hcq_twin_launch *l)
{
    twin_gemm_at(l, false, false, K_GEMM_WG_THREADS, offsetof(struct k_gemm_tma_params, g));
}
static void
twin_gemm_tma_bf16(struct hcq_twin_launch *l)
{
    twin_gemm_at(l, true, false, K_GEMM_WG_THREADS, offsetof(struct k_gemm_tma_params, g));
}
static void
twin_gemm_tma_f16_nt(struct hcq_twin_launch *l)
{
    twin_gemm_at(l, false, true, K_GEMM_WG_THREADS, offsetof(struct k_gemm_tma_params, g));
}
static void
twin_gemm_tma_bf16_nt(struct hcq_twin_launch *l)
{
    twin_gemm_at(l, true, true, K_GEMM_WG_THREADS, offsetof(struct k_gemm_tma_params, g));
}

static void
twin_gemm_f16(struct hcq_twin_launch *l)
{
    twin_gemm(l, false, false, OPS_GEMM_THREADS);
}
static void
twin_gemm_bf16(struct hcq_twin_launch *l)
{
    twin_gemm(l, true, false, OPS_GEMM_THREADS);
}
static void
twin_gemm_f16_nt(struct hcq_twin_launch *l)
{
    twin_gemm(l, false, true, OPS_GEMM_THREADS);
}
static void
twin_gemm_bf16_nt(struct hcq_twin_launch *l)
{
    twin_gemm(l, true, true, OPS_GEMM_THREADS);
}
static void
twin_gemm_wgmma_f16(struct hcq_twin_launch *l)
{
    twin_gemm(l, false, false, K_GEMM_WG_THREADS);
}
static void
twin_gemm_wgmma_bf16(struct hcq_twin_launch *l)
{
    twin_gemm(l, true, false, K_GEMM_WG_THREADS);
}
static void
twin_gemm_wgmma_f16_nt(struct hcq_twin_launch *l)
{
    twin_gemm(l, false, true, K_GEMM_WG_THREADS);
}
static void
twin_gemm_wgmma_bf16_nt(struct hcq_twin_launch *l)
{
    twin_gemm(l, true, true, K_GEMM_WG_THREADS);
}

/* The wgmma kernels: one sm_90a cubin (Makefile), their ring in dynamic shared memory. */
#define OPS_GEMM_WG(name, twin)                                                                              \
    {                                                                                                        \
        name, "k_gemm_wgmma", sizeof(struct k_gemm_params), twin, K_GEMM_WG_SHARED_B, 90                     \
    }
/* The 128 x 128-tile build (k_gemm_wgmma_n128.cu): same twins. */
#define OPS_GEMM_WG128(name, twin)                                                                           \
    {                                                                                                        \
        name, "k_gemm_wgmma_n128", sizeof(struct k_gemm_params), twin, K_GEMM_WG128_SHARED_B, 90             \
    }

/* The TMA build (k_gemm_wgmma_tma.cu): its parameters carry the two tensor maps first. */
#define OPS_GEMM_WGT(name, twin)                                                                             \
    {                                                                                                        \
        name, "k_gemm_wgmma_tma", sizeof(struct k_gemm_tma_params), twin, K_GEMM_WG_SHARED_B, 90             \
    }

/* Its 128 x 128-tile build (k_gemm_wgmma_tma_n128.cu). */
#define OPS_GEMM_WGT128(name, twin)                                                                          \
    {                                                                                                        \
        name, "k_gemm_wgmma_tma_n128", sizeof(struct k_gemm_tma_params), twin, K_GEMM_WG128_SHARED_B, 90     \
    }

const struct hcq_kernel_desc ops_gemm_kernels[] = {
    {"k_gemm_f16", "k_gemm_mma", sizeof(struct k_gemm_params), twin_gemm_f16},
    {"k_gemm_bf16", "k_gemm_mma", sizeof(struct k_gemm_params), twin_gemm_bf16},
    {"k_gemm_f16_nt", "k_gemm_mma", sizeof(struct k_gemm_params), twin_gemm_f16_nt},
    {"k_gemm_bf16_nt", "k_gemm_mma", sizeof(struct k_gemm_params), twin_gemm_bf16_nt},
    OPS_GEMM_WG("k_gemm_wgmma_f16", twin_gemm_wgmma_f16),
    OPS_GEMM_WG("k_gemm_wgmma_bf16", twin_gemm_wgmma_bf16),
    OPS_GEMM_WG("k_gemm_wgmma_f16_nt", twin_gemm_wgmma_f16_nt),
    OPS_GEMM_WG("k_gemm_wgmma_bf16_nt", twin_gemm_wgmma_bf16_nt),
    OPS_GEMM_WG128("k_gemm_wgmma_f16_n128", twin_gemm_wgmma_f16),
    OPS_GEMM_WG128("k_gemm_wgmma_bf16_n128", twin_gemm_wgmma_bf16),
    OPS_GEMM_WG128("k_gemm_wgmma_f16_nt_n128", twin_gemm_wgmma_f16_nt),
    OPS_GEMM_WG128("k_gemm_wgmma_bf16_nt_n128", twin_gemm_wgmma_bf16_nt),
    OPS_GEMM_WGT("k_gemm_wgmma_f16_tma", twin_gemm_tma_f16),
    OPS_GEMM_WGT("k_gemm_wgmma_bf16_tma", twin_gemm_tma_bf16),
    OPS_GEMM_WGT("k_gemm_wgmma_f16_nt_tma", twin_gemm_tma_f16_nt),
    OPS_GEMM_WGT("k_gemm_wgmma_bf16_nt_tma", twin_gemm_tma_bf16_nt),
    OPS_GEMM_WGT128("k_gemm_wgmma_f16_tma_n128", twin_gemm_tma_f16),
    OPS_GEMM_WGT128("k_gemm_wgmma_bf16_tma_n128", twin_gemm_tma_bf16),
    OPS_GEMM_WGT128("k_gemm_wgmma_f16_nt_tma_n128", twin_gemm_tma_f16_nt),
    OPS_GEMM_WGT128("k_gemm_wgmma_bf16_nt_tma_n128", twin_gemm_tma_bf16_nt),
    {0},
};

const char *
ops_gemm_kernel(const struct hcq_device_info *info, bool bf16, bool nt)
{
    static const char *const names[2][2][2] = {
        {{"k_gemm_f16", "k_gemm_f16_nt"}, {"k_gemm_bf16", "k_gemm_bf16_nt"}},
        {{"k_gemm_wgmma_f16", "k_gemm_wgmma_f16_nt"}, {"k_gemm_wgmma_bf16", "k_gemm_wgmma_bf16_nt"}},
    };
    /* wgmma where its cubin runs: sm_90 devices of a build with 90 in CUARCH (a GPU without
     * the cubin, every other arch and the host backends take k_gemm_mma). */
    bool wg = info && info->sm_version == 90 && hcq_cubin_find("k_gemm_wgmma", 90);
    /* The same kernels fed by the tensor memory accelerator where their cubin exists (H100:
     * 4096^3 709-736 vs 555-563 TFLOP/s with the cp.async producer, 98-99% of cuBLAS; 8192^3
     * 695-772, 93-104%). */
    static const char *const tma[2][2] = {{"k_gemm_wgmma_f16_tma", "k_gemm_wgmma_f16_nt_tma"},
                                          {"k_gemm_wgmma_bf16_tma", "k_gemm_wgmma_bf16_nt_tma"}};
    if (wg && hcq_cubin_find("k_gemm_wgmma_tma", 90))
        return tma[bf16][nt];
    return names[wg][bf16][nt];
}

const char *
ops_gemm_kernel_for(const struct hcq_device_info *info, bool bf16, bool nt, uint32_t m, uint32_t n)
{
    static const char *const n128[2][2] = {{"k_gemm_wgmma_f16_n128", "k_gemm_wgmma_f16_nt_n128"},
                                           {"k_gemm_wgmma_bf16_n128", "k_gemm_wgmma_bf16_nt_n128"}};
    const char *wide = ops_gemm_kernel(info, bf16, nt);
    /* the 128 x 128 tiles where 128 x 256 ones would fill fewer than half the SMs (1024^3: 32
     * tiles on 132 SMs) */
    uint64_t tiles =
        (uint64_t)((m + K_GEMM_WG_BM - 1) / K_GEMM_WG_BM) * ((n + K_GEMM_WG_BN - 1) / K_GEMM_WG_BN);
    /* The TMA kernels: their 128 x 128 build there too (H100 rm:0: 1024^3 f16 / bf16 263.6 /
     * 268.0 TFLOP/s vs 150.6 / 150.9 with the 32 wide tiles; cuBLAS 199-263 in the same call). */
    if (!strncmp(wide, "k_gemm_wgmma_", 13) && strstr(wide, "_tma")) {
        static const char *const tma128[2][2] = {
            {"k_gemm_wgmma_f16_tma_n128", "k_gemm_wgmma_f16_nt_tma_n128"},
            {"k_gemm_wgmma_bf16_tma_n128", "k_gemm_wgmma_bf16_nt_tma_n128"}};
        if (info->sm_count && 2 * tiles < info->sm_count && hcq_cubin_find("k_gemm_wgmma_tma_n128", 90))
            return tma128[bf16][nt];
        return wide;
    }
    if (strncmp(wide, "k_gemm_wgmma_", 13) || !info->sm_count || 2 * tiles >= info->sm_count ||
        !hcq_cubin_find("k_gemm_wgmma_n128", 90))
        return wide;
    return n128[bf16][nt];
}
