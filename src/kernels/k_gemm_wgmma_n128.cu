/* SPDX-License-Identifier: MIT */
/*
 * k_gemm_wgmma_n128.cu - k_gemm_wgmma.cu's GEMMs with 128 x 128 tiles (m64n128k16, 64
 * accumulators per consumer thread): k_gemm_wgmma_f16_n128, _bf16_n128, _f16_nt_n128,
 * _bf16_nt_n128. Why: a 1024^3 product is 32 tiles of 128 x 256, a quarter of an H100/H200's
 * SMs (H200: 119 TFLOP/s, 43% of cuBLAS); 128 x 128 tiles double
 * the CTAs. Same contract, twins and preconditions as k_gemm_wgmma.cu (this file compiles it
 * again); ops_gemm_kernel_for picks these where the wide tiles would fill fewer than half of
 * the SMs. sm_90a only (Makefile CU_SM90A_SRCS).
 */
#define K_GW_BN 128
#define K_GW_SUFFIX _n128
#define K_GW_NO_LLM 1
#include "k_gemm_wgmma.cu"
