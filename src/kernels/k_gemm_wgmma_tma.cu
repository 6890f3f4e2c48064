/* SPDX-License-Identifier: MIT */
/*
 * k_gemm_wgmma_tma.cu - k_gemm_wgmma.cu's wide GEMMs (128 x 256 tiles) with the tensor memory
 * accelerator as the producer: k_gemm_wgmma_f16_tma, _bf16_tma, _f16_nt_tma, _bf16_nt_tma. Why:
 * the cp.async producer (128 threads, 24 sixteen-byte copies each per k-step) keeps the main
 * loop at ~0.9 us per k-step where the tensor cores need ~0.55 (bench/notes-gemm.md session 5);
 * one thread issuing two to five TMA copies per k-step frees the load/store path the consumers'
 * wgmma reads share. The maps come from the launcher (ops_tmap.h; k_params.h struct
 * k_gemm_tma_params). Same contract, twins and preconditions as k_gemm_wgmma.cu (this file
 * compiles it again); NVHCQ_GEMM=tma picks them (ops_gemm_kernel). sm_90a only (Makefile
 * CU_SM90A_SRCS).
 */
#define K_GW_TMA 1
#define K_GW_SUFFIX _tma
#define K_GW_NO_LLM 1
#include "k_gemm_wgmma.cu"
