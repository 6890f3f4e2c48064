// SPDX-License-Identifier: MIT
/*
 * k_llm_matvec_tl.cu - the decode mat-vec kernels the engine runs by default for Q8_0, Q4_0 and
 * Q6_K, compiled again with the per-CTA timeline marks on (K_LLM_MVQ_TL, k_llm_mvq.cuh mvq_tl):
 * A/B and diagnosis only. NVHCQ_MVQ_TL=1 makes the engine load them (llm_model.c) and, in a
 * profiled decode step (`llm-bench --profile`), point each launch's pf.va[1] at a record buffer;
 * the profile then adds rows that place each CTA's entry, PDL wait, prologue and warps' ends
 * against the previous launch's completion. Outside a profiled step pf.va[1] is 0 and the marks
 * return at once. Same parameters and sums as k_llm_matvec.cu's kernels (k_llm_matvec.h; the
 * same CPU twin, src/ops/ops_llm_matvec.c; tests/unit/test_llm_matvec.c runs them). A module of
 * its own: the marks change the code of every body they are compiled into.
 */
#define K_LLM_MVQ_TL 1
#include "k_llm_mvq.cuh"

K_LLM_MVQ_X2_KERNEL(k_llm_matvec_q8_q4_0x2_tl, K_LLM_T_Q4_0R, K_LLM_T_Q4_0R2)
K_LLM_MVQ_X2_KERNEL(k_llm_matvec_q8_q8_0x2_tl, K_LLM_T_Q8_0R, K_LLM_T_Q8_0R2)
K_LLM_MVQ_X2D_KERNEL(k_llm_matvec_q8_q4_0x2d_tl, K_LLM_T_Q4_0R, K_LLM_T_Q4_0R2)
K_LLM_MVQ_X2D_KERNEL(k_llm_matvec_q8_q8_0x2d_tl, K_LLM_T_Q8_0R, K_LLM_T_Q8_0R2)
K_LLM_MVQ_TYPED_KERNEL(k_llm_matvec_q8_q6k_tl, K_LLM_T_Q6_KR, 2, true, false)
K_LLM_MVQ_TYPED_KERNEL(k_llm_matvec_q8_q6k_w2_tl, K_LLM_T_Q6_KR, 2, true, true)
