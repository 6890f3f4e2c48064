/* SPDX-License-Identifier: MIT */
/*
 * gemm_tune.cu - developer harness (not built by make): times one tile configuration of
 * src/kernels/k_gemm_mma.cu beside cuBLAS through the CUDA runtime, and checks it against
 * cuBLAS (whole matrix) and a double-precision dot product (sampled entries).
 * Build one binary per configuration, e.g.
 *   nvcc -O3 -std=c++17 -arch=sm_90 -Isrc/kernels -DK_GM_BM=128 -DK_GM_BN=128 -DK_GM_WM=2 \
 *        -DK_GM_WN=4 -DK_GM_STAGES=3 bench/tune/gemm_tune.cu -lcublas -o /tmp/t
 * and run it; it prints one line per shape: TFLOP/s ours, cuBLAS, ratio, max error.
 */
#define K_GM_NO_ENTRIES
#include "k_gemm_mma.h"
#include "k_params.h"

#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <string.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <vector>

template <bool BF16, bool NK>
__global__ void __launch_bounds__(K_GM_THREADS) tune_k(const struct k_gemm_params p)
{
    k_gm_body<BF16, NK>(k_gm_args{ p.c_va, p.a_va, p.b_va, 0, p.m, p.n, p.k, p.n, 0 });
}

static uint16_t
to_half(float f, bool bf)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    if (bf)
        return (uint16_t)((u + 0x7FFF + ((u >> 16) & 1)) >> 16);
    /* inputs are in [-1, 1]: normal or zero f16, round to nearest even */
    __half h = __float2half_rn(f);
    uint16_t r;
    memcpy(&r, &h, 2);
    return r;
}

static float
from_half(uint16_t h, bool bf)
{
    if (bf) {
        uint32_t u = (uint32_t)h << 16;
        float f;
        memcpy(&f, &u, 4);
        return f;
    }
    __half x;
    memcpy(&x, &h, 2);
    return __half2float(x);
}

template <bool BF16, bool NK>
static void
run(cublasHandle_t hb, uint32_t m, uint32_t n, uint32_t k)
{
    size_t na = (size_t)m * k, nb = (size_t)k * n, nc = (size_t)m * n;
    std::vector<uint16_t> ha(na), hbm(nb);
    std::vector<float> fa(na), fb(nb), c1(nc), c2(nc);
    srand(m * 7 + n * 3 + k);
    for (size_t i = 0; i < na; i++) {
        ha[i] = to_half((float)rand() / RAND_MAX * 2 - 1, BF16);
        fa[i] = from_half(ha[i], BF16);
    }
    for (size_t i = 0; i < nb; i++) {
        hbm[i] = to_half((float)rand() / RAND_MAX * 2 - 1, BF16);
        fb[i] = from_half(hbm[i], BF16);
    }
    uint16_t *da, *db;
    float *dc, *dr;
    cudaMalloc(&da, na * 2);
    cudaMalloc(&db, nb * 2);
    cudaMalloc(&dc, nc * 4);
    cudaMalloc(&dr, nc * 4);
    cudaMemcpy(da, ha.data(), na * 2, cudaMemcpyHostToDevice);
    cudaMemcpy(db, hbm.data(), nb * 2, cudaMemcpyHostToDevice);
    cudaMemset(dc, 0xAB, nc * 4);
    struct k_gemm_params p = { (uint64_t)dc, (uint64_t)da, (uint64_t)db, m, n, k, 0 };
    uint32_t tiles = ((m + K_GM_BM - 1) / K_GM_BM) * ((n + K_GM_BN - 1) / K_GM_BN);
    uint32_t smem_B = 0;
#ifdef K_GM_DYNAMIC
    smem_B = K_GM_STAGES * (K_GM_BM + K_GM_BN) * K_GM_BK * 2;
    cudaFuncSetAttribute(tune_k<BF16, NK>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_B);
#endif
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    float alpha = 1, beta = 0;
    cudaDataType_t dt = BF16 ? CUDA_R_16BF : CUDA_R_16F;
    /* row-major C = A op(B) is column-major C^T = op(B)^T A^T */
    auto cub = [&]() {
        return cublasGemmEx(hb, NK ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, db, dt, NK ? k : n,
                            da, dt, k, &beta, dr, CUDA_R_32F, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    };
    double flop = 2.0 * m * n * k;
    int reps = flop > 1e11 ? 10 : 50;
    float t_ours = 1e30f, t_cub = 1e30f;
    for (int round = 0; round < 3; round++) {
        tune_k<BF16, NK><<<tiles, K_GM_THREADS, smem_B>>>(p);
        cudaEventRecord(e0);
        for (int i = 0; i < reps; i++)
            tune_k<BF16, NK><<<tiles, K_GM_THREADS, smem_B>>>(p);
        cudaEventRecord(e1);
        cudaEventSynchronize(e1);
        float ms;
        cudaEventElapsedTime(&ms, e0, e1);
        t_ours = fminf(t_ours, ms / reps);
        cub();
        cudaEventRecord(e0);
        for (int i = 0; i < reps; i++)
            cub();
        cudaEventRecord(e1);
        cudaEventSynchronize(e1);
        cudaEventElapsedTime(&ms, e0, e1);
        t_cub = fminf(t_cub, ms / reps);
    }
    cudaError_t err = cudaDeviceSynchronize();
    cudaMemcpy(c1.data(), dc, nc * 4, cudaMemcpyDeviceToHost);
    cudaMemcpy(c2.data(), dr, nc * 4, cudaMemcpyDeviceToHost);
    double maxd = 0;
    for (size_t i = 0; i < nc; i++) {
        double d = fabs((double)c1[i] - c2[i]);
        if (!(d <= maxd))
            maxd = isnan(d) ? INFINITY : d > maxd ? d : maxd;
    }
    /* sampled double references with the stated bound k * 2^-23 * sum |a b| */
    int bad = 0;
    double worst = 0;
    for (int s = 0; s < 256; s++) {
        uint32_t i = s < 4 ? (s & 1) * (m - 1) : rand() % m, j = s < 4 ? (s >> 1) * (n - 1) : rand() % n;
        double ref = 0, mag = 0;
        for (uint32_t kk = 0; kk < k; kk++) {
            double pr = (double)fa[(size_t)i * k + kk] * (NK ? fb[(size_t)j * k + kk] : fb[(size_t)kk * n + j]);
            ref += pr;
            mag += fabs(pr);
        }
        double e = fabs(c1[(size_t)i * n + j] - ref), bound = k * ldexp(1.0, -23) * mag;
        if (!(e <= bound))
            bad++;
        if (mag > 0 && e / mag > worst)
            worst = e / mag;
    }
    printf("%-5s %-2s %5ux%5ux%5u  ours %7.1f  cublas %7.1f TFLOP/s  ratio %5.1f%%  max|d-cublas| %.2e  "
           "worst err/sum|ab| %.2e  bound-fails %d  %s\n",
           BF16 ? "bf16" : "f16", NK ? "NT" : "NN", m, n, k, flop / t_ours / 1e9, flop / t_cub / 1e9,
           100.0 * t_cub / t_ours, maxd, worst, bad, cudaGetErrorString(err));
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
    cudaFree(dr);
}

int
main(int argc, char **argv)
{
    cublasHandle_t hb;
    cublasCreate(&hb);
    bool full = argc > 1;
    printf("config BM %d BN %d WM %d WN %d stages %d threads %d\n", K_GM_BM, K_GM_BN, K_GM_WM, K_GM_WN,
           K_GM_STAGES, K_GM_THREADS);
    run<false, false>(hb, 4096, 4096, 4096);
    run<false, false>(hb, 8192, 8192, 8192);
    if (full) {
        run<false, false>(hb, 1024, 1024, 1024);
        run<false, false>(hb, 1000, 1016, 1032); /* ragged edges */
        run<true, false>(hb, 4096, 4096, 4096);
        run<false, true>(hb, 4096, 4096, 4096);
        run<false, true>(hb, 512, 8192, 2048);  /* LLaMA-1B-like prefill: FFN up */
        run<false, true>(hb, 512, 2048, 8192);  /* FFN down */
        run<false, true>(hb, 77, 1001, 520);    /* ragged NT, odd n */
        run<true, true>(hb, 512, 2048, 2048);
    }
    cublasDestroy(hb);
    return 0;
}
