/* SPDX-License-Identifier: MIT */
/*
 * k_gemm_wgmma_tma_n128.cu - the TMA-fed GEMMs (k_gemm_wgmma_tma.cu) with 128 x 128 tiles
 * (m64n128k16): k_gemm_wgmma_f16_tma_n128, _bf16_tma_n128, _f16_nt_tma_n128, _bf16_nt_tma_n128.
 * Why: where 128 x 256 tiles fill under half the SMs (1024^3: 32 tiles on 132 SMs) the cp.async
 * build had k_gemm_wgmma_n128.cu; this is its TMA twin (B's box 64 x 128, or two 64 x 64
 * panels). Same parameters as the TMA build (struct k_gemm_tma_params, the launcher encodes B's
 * box for 128 columns). The default where the wide tiles would fill under half the SMs (ops_gemm_kernel_for;
 * H100 1024^3: 264-268 TFLOP/s vs 151 wide).
 * sm_90a only (Makefile CU_SM90A_SRCS).
 */
#define K_GW_BN 128
#define K_GW_TMA 1
#define K_GW_SUFFIX _tma_n128
#define K_GW_NO_LLM 1
#include "k_gemm_wgmma.cu"
