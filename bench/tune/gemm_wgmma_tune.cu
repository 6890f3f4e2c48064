/* SPDX-License-Identifier: MIT */
/*
 * gemm_wgmma_tune.cu - developer harness (not built by make): times the k_gemm_wgmma.cu
 * kernels beside cuBLAS through the CUDA runtime and checks them against cuBLAS (whole
 * matrix) and double-precision dot products (sampled entries, bound k 2^-23 sum |a b|).
 * Variants: compile-time -DK_GW_GROUP=N -DK_GW_LAG=N, -DK_GW_CONS=3 -DK_GW_REG_PROD=N
 * -DK_GW_REG_CONS=N (192 x 256 tiles, 512 threads); run-time argument "persist" launches
 * min(tiles, SMs) CTAs that grid-stride over the tiles (default: one CTA per tile).
 *   nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Isrc/kernels \
 *        bench/tune/gemm_wgmma_tune.cu -lcublas -o /tmp/t && /tmp/t [persist]
 * One line per shape: TFLOP/s ours, cuBLAS, ratio, errors.
 */
#include "../../src/kernels/k_gemm_wgmma.cu"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>
#include <vector>

static uint16_t
to_half(float f, bool bf)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    if (bf)
        return (uint16_t)((u + 0x7FFF + ((u >> 16) & 1)) >> 16);
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

static void
run(cublasHandle_t hb, bool bf, bool nk, uint32_t m, uint32_t n, uint32_t k, bool persist, int sms)
{
    void (*kern)(const struct k_gemm_params) = bf ? (nk ? k_gemm_wgmma_bf16_nt : k_gemm_wgmma_bf16)
                                                  : (nk ? k_gemm_wgmma_f16_nt : k_gemm_wgmma_f16);
    size_t na = (size_t)m * k, nb = (size_t)k * n, nc = (size_t)m * n;
    std::vector<uint16_t> ha(na), hbm(nb);
    std::vector<float> fa(na), fb(nb), c1(nc), c2(nc);
    srand(m * 7 + n * 3 + k);
    for (size_t i = 0; i < na; i++) {
        ha[i] = to_half((float)rand() / RAND_MAX * 2 - 1, bf);
        fa[i] = from_half(ha[i], bf);
    }
    for (size_t i = 0; i < nb; i++) {
        hbm[i] = to_half((float)rand() / RAND_MAX * 2 - 1, bf);
        fb[i] = from_half(hbm[i], bf);
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
    struct k_gemm_params p = {(uint64_t)dc, (uint64_t)da, (uint64_t)db, m, n, k, 0};
    uint32_t tiles = ((m + K_GW_BM - 1) / K_GW_BM) * ((n + K_GW_BN - 1) / K_GW_BN);
    uint32_t grid = persist && tiles > (uint32_t)sms ? (uint32_t)sms : tiles;
    cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, K_GW_SHARED_B);
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    float alpha = 1, beta = 0;
    cudaDataType_t dt = bf ? CUDA_R_16BF : CUDA_R_16F;
    auto cub = [&]() {
        return cublasGemmEx(hb, nk ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, db, dt, nk ? k : n,
                            da, dt, k, &beta, dr, CUDA_R_32F, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    };
    double flop = 2.0 * m * n * k;
    int reps = flop > 1e11 ? 10 : 50;
    std::vector<float> to, tc;
    for (int round = 0; round < 5; round++) {
        float ms;
        kern<<<grid, K_GW_THREADS, K_GW_SHARED_B>>>(p);
        cudaEventRecord(e0);
        for (int i = 0; i < reps; i++)
            kern<<<grid, K_GW_THREADS, K_GW_SHARED_B>>>(p);
        cudaEventRecord(e1);
        cudaEventSynchronize(e1);
        cudaEventElapsedTime(&ms, e0, e1);
        to.push_back(ms / reps);
        cub();
        cudaEventRecord(e0);
        for (int i = 0; i < reps; i++)
            cub();
        cudaEventRecord(e1);
        cudaEventSynchronize(e1);
        cudaEventElapsedTime(&ms, e0, e1);
        tc.push_back(ms / reps);
    }
    std::sort(to.begin(), to.end());
    std::sort(tc.begin(), tc.end());
    float t_ours = to[to.size() / 2], t_cub = tc[tc.size() / 2]; /* medians */
    cudaError_t err = cudaDeviceSynchronize();
    cudaMemcpy(c1.data(), dc, nc * 4, cudaMemcpyDeviceToHost);
    cudaMemcpy(c2.data(), dr, nc * 4, cudaMemcpyDeviceToHost);
    double maxd = 0;
    for (size_t i = 0; i < nc; i++) {
        double d = fabs((double)c1[i] - c2[i]);
        if (!(d <= maxd))
            maxd = isnan(d) ? INFINITY : d > maxd ? d : maxd;
    }
    int bad = 0;
    for (int s = 0; s < 128; s++) {
        uint32_t i = s < 4 ? (s & 1) * (m - 1) : rand() % m, j = s < 4 ? (s >> 1) * (n - 1) : rand() % n;
        double ref = 0, mag = 0;
        for (uint32_t kk = 0; kk < k; kk++) {
            double pr = (double)fa[(size_t)i * k + kk] * (nk ? fb[(size_t)j * k + kk] : fb[(size_t)kk * n + j]);
            ref += pr;
            mag += fabs(pr);
        }
        if (!(fabs(c1[(size_t)i * n + j] - ref) <= k * ldexp(1.0, -23) * mag))
            bad++;
    }
    printf("C%d N%d G%-2d L%d %-7s %-4s %-2s %5ux%5ux%5u  ours %6.1f  cublas %6.1f  %5.1f%%  max|d-cublas| %.1e  "
           "bound-fails %d  %s\n",
           K_GW_CONS, K_GW_BN, K_GW_GROUP, K_GW_LAG, persist ? "persist" : "tiles", bf ? "bf16" : "f16", nk ? "NT" : "NN", m, n, k,
           flop / t_ours / 1e9, flop / t_cub / 1e9, 100.0 * t_cub / t_ours, maxd, bad, cudaGetErrorString(err));
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
    bool persist = argc > 1 && !strcmp(argv[1], "persist");
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    run(hb, false, false, 4096, 4096, 4096, persist, sms);
    run(hb, true, true, 4096, 4096, 4096, persist, sms);
    run(hb, false, false, 8192, 8192, 8192, persist, sms);
    if (argc > 2) {
        run(hb, false, true, 1024, 1024, 1024, persist, sms);
        run(hb, true, false, 1000, 1016, 1032, persist, sms); /* ragged edges */
        run(hb, false, true, 512, 2048, 8192, persist, sms);  /* FFN down */
    }
    cublasDestroy(hb);
    return 0;
}
