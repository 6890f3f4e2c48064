/* SPDX-License-Identifier: MIT */
/*
 * ops.h - host-side launchers of the built-in kernels (src/kernels/k_*.cu): each checks
 * the shapes against the buffers (STYLE 2.3: launchers check preconditions), picks the
 * launch geometry and records one launch on a compute queue. Layer: ops, used by tests,
 * benchmarks and the CLI. Parameter structs: k_params.h; semantics: docs/kernels.md.
 *
 * Every launcher takes the program of the kernel it launches (hcq_program_load(dev,
 * "k_fill_u32", &prog)) and checks its name, so a wrong program is HCQ_ERR_INVALID, not
 * a wrong result. Buffers must hold the whole operand (offset 0); a count or shape that
 * does not fit is HCQ_ERR_INVALID with a message naming the operand. An empty operation
 * (n == 0) records nothing and returns HCQ_OK. Only recorded: hcq_queue_submit() sends.
 *
 * Geometry: the kernels grid-stride over a flat launch (k_device.h), so any grid
 * covers any n; the launchers use OPS_BLOCK threads and at most OPS_GRID_MAX blocks.
 */
#ifndef OPS_H
#define OPS_H

#include "hcq.h"

#define OPS_BLOCK 256u        /* threads per block of the flat kernels */
#define OPS_GRID_MAX 65535u   /* blocks per launch cap; the kernels loop over the rest */
#define OPS_MM_TILE 16u       /* k_matmul.cu: block is (16, 16, 1), one 16x16 tile of C per block */
#define OPS_GEMM_THREADS 128u /* k_gemm_mma.cu: block is (128, 1, 1) */
#define OPS_GEMM_TILE 128u    /* k_gemm_mma.cu: one 128x128 tile of C per block */

/* Register the built-in kernels' descriptors with core (hcq_kernel_register). Runs by
 * itself at program load (ops_registry.c); calling it again changes nothing. */
void ops_kernels_register(void);

/* Run built-in kernel `name`'s CPU twin over a flat launch of n items on host memory (the
 * parameter struct holds host addresses as its VAs): the reference of tests and benchmarks.
 * False when there is no such kernel or twin, or the twin reported a fault. */
bool ops_twin_run_host(const char *name, const void *params, uint64_t n);

/* Flat geometry for n work items: block (OPS_BLOCK,1,1), grid (ceil(n/OPS_BLOCK) capped, 1, 1);
 * n == 0 gives grid 1. */
void ops_geometry_flat(uint64_t n, uint32_t grid_out[3], uint32_t block_out[3]);

/* dst u32[n] = value. */
HCQ_MUST_CHECK enum hcq_status ops_launch_fill_u32(struct hcq_queue *q, struct hcq_program *prog,
                                                   struct hcq_buf *dst, uint64_t n, uint32_t value);
/* dst f32[n] = value. */
HCQ_MUST_CHECK enum hcq_status ops_launch_fill_f32(struct hcq_queue *q, struct hcq_program *prog,
                                                   struct hcq_buf *dst, uint64_t n, float value);
/* dst[dst_off_B ..+size_B) = src[src_off_B ..+size_B) by a kernel (not the copy engine);
 * ranges in bounds and, within one buffer, not overlapping. */
HCQ_MUST_CHECK enum hcq_status ops_launch_copy_bytes(struct hcq_queue *q, struct hcq_program *prog,
                                                     struct hcq_buf *dst, uint64_t dst_off_B,
                                                     struct hcq_buf *src, uint64_t src_off_B,
                                                     uint64_t size_B);
/* c f32[n] = a + b or a * b, for prog k_add_f32 or k_mul_f32. */
HCQ_MUST_CHECK enum hcq_status ops_launch_binary_f32(struct hcq_queue *q, struct hcq_program *prog,
                                                     struct hcq_buf *c, struct hcq_buf *a, struct hcq_buf *b,
                                                     uint64_t n);
/* y[n] = f(x[n]) for prog k_exp_f32, k_relu_f32, k_cast_f32_f16, k_cast_f16_f32,
 * k_cast_f32_bf16, k_cast_bf16_f32 (element sizes follow from the kernel). */
HCQ_MUST_CHECK enum hcq_status ops_launch_unary(struct hcq_queue *q, struct hcq_program *prog,
                                                struct hcq_buf *y, struct hcq_buf *x, uint64_t n);
/* x is f32[rows, cols] row-major; axis 1 (prog k_sum_rows_f32): out f32[rows] = row sums;
 * axis 0 (prog k_sum_cols_f32): out f32[cols] = column sums. */
HCQ_MUST_CHECK enum hcq_status ops_launch_sum_f32(struct hcq_queue *q, struct hcq_program *prog,
                                                  struct hcq_buf *out, struct hcq_buf *x, uint32_t rows,
                                                  uint32_t cols, int axis);
/* c f32[m, n] = a[m, k] . b[k, n], row-major; a, b f32 (prog k_matmul_f32) or f16
 * (prog k_matmul_f16). Requires ceil(m/16) * ceil(n/16) < 2^32. */
HCQ_MUST_CHECK enum hcq_status ops_launch_matmul(struct hcq_queue *q, struct hcq_program *prog,
                                                 struct hcq_buf *c, struct hcq_buf *a, struct hcq_buf *b,
                                                 uint32_t m, uint32_t n, uint32_t k);
/* Tensor cores: c f32[m, n] = a[m, k] . b[k, n] (prog k_gemm_f16, k_gemm_bf16 or their
 * k_gemm_wgmma_* twins on sm_90) or a[m, k] . b[n, k]^T (prog k_gemm_f16_nt,
 * k_gemm_bf16_nt, k_gemm_wgmma_*_nt), f16/bf16 inputs, f32
 * accumulation. Requires k % 8 == 0 and, for the [k, n] forms, n % 8 == 0 (16-byte rows
 * chunks); error bound k * 2^-23 * sum|a b| per element (k_gemm_mma.h). */
HCQ_MUST_CHECK enum hcq_status ops_launch_gemm(struct hcq_queue *q, struct hcq_program *prog,
                                               struct hcq_buf *c, struct hcq_buf *a, struct hcq_buf *b,
                                               uint32_t m, uint32_t n, uint32_t k);
/* The parameters of the TMA builds (k_gemm_wgmma_*_tma, *_tma_n128; ops_launch_gemm takes them
 * too): p and the two tensor maps of its A and B (bf16 or f16; nt: B is [n][k]; bn: the
 * kernel's tile width, K_GEMM_WG_BN or K_GEMM_WG128_BN - B's box for nt). */
struct k_gemm_params;
struct k_gemm_tma_params;
HCQ_MUST_CHECK enum hcq_status ops_gemm_tma_params(struct k_gemm_tma_params *tp,
                                                   const struct k_gemm_params *p, bool bf16, bool nt,
                                                   uint32_t bn);
/* The GEMM kernel ops_launch_gemm should run on a device: k_gemm_wgmma_* (Hopper wgmma,
 * k_gemm_wgmma.cu) on sm_90 when the library holds its sm_90a cubin, else k_gemm_* (mma.sync,
 * every arch and the host backends). Same contract and bound either way. */
const char *ops_gemm_kernel(const struct hcq_device_info *info, bool bf16, bool nt);
/* The same for an m x n product: on sm_90 the 128 x 128-tile build (k_gemm_wgmma_*_n128) where
 * 128 x 256 tiles would fill fewer than half of the SMs. */
const char *ops_gemm_kernel_for(const struct hcq_device_info *info, bool bf16, bool nt, uint32_t m,
                                uint32_t n);
/* x u64[n] = x * mul + add (mod 2^64). */
HCQ_MUST_CHECK enum hcq_status ops_launch_axpb_u64(struct hcq_queue *q, struct hcq_program *prog,
                                                   struct hcq_buf *x, uint64_t n, uint64_t mul, uint64_t add);
/* out u32[n] = k_stack_u32's (or k_stack_big_u32's: prog names which) hash of (seed, i):
 * kernels with a 1 KiB / 4 KiB stack, for local-memory tests. */
HCQ_MUST_CHECK enum hcq_status ops_launch_stack_u32(struct hcq_queue *q, struct hcq_program *prog,
                                                    struct hcq_buf *out, uint64_t n, uint32_t seed);
/* k_empty with the given grid x size (>= 1) and block x size (1..1024). */
HCQ_MUST_CHECK enum hcq_status ops_launch_empty(struct hcq_queue *q, struct hcq_program *prog,
                                                uint32_t grid_x, uint32_t block_x);

#endif /* OPS_H */
