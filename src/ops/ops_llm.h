/* SPDX-License-Identifier: MIT */
/*
 * ops_llm.h - the LLM engine's kernel descriptors (src/ops/ops_llm.c), for the registry
 * (ops_registry.c). Layer: ops.
 */
#ifndef OPS_LLM_H
#define OPS_LLM_H

#include "hcq_kernel.h"

#include <stdint.h>

extern const struct hcq_kernel_desc ops_llm_kernels[]; /* terminated by { 0 } */
extern const uint32_t ops_llm_kernel_count;
/* The prefill GEMM kernels (src/ops/ops_llm_gemm.c), terminated by { 0 }. */
extern const struct hcq_kernel_desc ops_llm_gemm_kernels[];

#endif /* OPS_LLM_H */
