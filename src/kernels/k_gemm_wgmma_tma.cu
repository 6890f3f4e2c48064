/* SPDX-License-Identifier: MIT */
/*
 * k_gemm_wgmma_tma.cu - k_gemm_wgmma.cu's wide GEMMs (128 x 256 tiles) with the tensor memory
 * accelerator as the producer: k_gemm_wgmma_f16_tma, _bf16_tma, _f16_nt_tma, _bf16_nt_tma, and
 * the LLM prefill GEMM k_llm_gemm_wgmma_tma (k_llm_gemm_params.h; not run on a GPU yet). Why:
 * the cp.async producer (128 threads, 24 sixteen-byte copies each per k-step) keeps the main
 * loop at ~0.9 us per k-step where the tensor cores need ~0.55;
 * one thread issuing two to five TMA copies per k-step frees the load/store path the consumers'
 * wgmma reads share. The maps come from the launcher (src/kernels/k_tmap.h; k_params.h struct
 * k_gemm_tma_params). H100: 4096^3 709-736 TFLOP/s (98-99% of cuBLAS;
 * the cp.async producer 76-78%), 8192^3 695-772 (93-104%), 2048^3 600-613 (117-122%), 1024^3
 * equal to the 128 x 128-tile cp.async kernels (~150). Same contract, twins and preconditions
 * as k_gemm_wgmma.cu (this file compiles it again); ops_gemm_kernel picks them on sm_90 for
 * every size. sm_90a only (Makefile CU_SM90A_SRCS).
 */
#define K_GW_TMA 1
#define K_GW_SUFFIX _tma
#include "k_gemm_wgmma.cu"
