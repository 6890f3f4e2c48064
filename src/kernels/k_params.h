/* SPDX-License-Identifier: MIT */
/*
 * k_params.h - the parameter struct of every built-in kernel, shared by the CUDA source
 * (src/kernels/k_*.cu), the host launch helpers and the CPU twins (src/ops/ops_*.c).
 * Layer: kernels. Plain C, includes only <stdint.h>, also compiled as CUDA C++.
 *
 * Convention (docs/kernels.md, STYLE 2.7): kernel `k_x` is
 *     extern "C" __global__ void k_x(const struct k_x_params p)
 * and the struct is passed by value. The runtime writes the struct bytes verbatim into
 * constant bank 0 at the cubin's param base (docs/hw/rm.md §6.5), so the layout is ABI:
 * only uint64_t / uint32_t / float fields, naturally aligned, explicit padding, total a
 * multiple of 8, and every size and offset is checked below. Device addresses are
 * uint64_t `*_va` fields (GPU VAs; identity host pointers on the cpu backend).
 */
#ifndef K_PARAMS_H
#define K_PARAMS_H

#include <stdint.h>

#ifdef __cplusplus
#define K_STATIC_ASSERT static_assert
#else
#define K_STATIC_ASSERT _Static_assert
#endif
/* __builtin_offsetof instead of <stddef.h>: gcc, clang and nvcc all provide it. */
#define K_PARAMS_SIZE(k, size_B)                                                                             \
    K_STATIC_ASSERT(sizeof(struct k##_params) == (size_B), #k "_params: size changed (ABI)")
#define K_PARAMS_FIELD(k, field, offset_B)                                                                   \
    K_STATIC_ASSERT(__builtin_offsetof(struct k##_params, field) == (offset_B),                              \
                    #k "_params." #field ": offset changed (ABI)")

/* k_fill_u32: dst[i] = value for i < n */
struct k_fill_u32_params {
    uint64_t dst_va; /* u32[n] output */
    uint64_t n;      /* element count */
    uint32_t value;  /* pattern */
    uint32_t pad0;   /* 0 */
};
K_PARAMS_SIZE(k_fill_u32, 24);
K_PARAMS_FIELD(k_fill_u32, dst_va, 0);
K_PARAMS_FIELD(k_fill_u32, n, 8);
K_PARAMS_FIELD(k_fill_u32, value, 16);
K_PARAMS_FIELD(k_fill_u32, pad0, 20);

/* k_fill_f32: dst[i] = value for i < n */
struct k_fill_f32_params {
    uint64_t dst_va; /* f32[n] output */
    uint64_t n;      /* element count */
    float value;     /* value */
    uint32_t pad0;   /* 0 */
};
K_PARAMS_SIZE(k_fill_f32, 24);
K_PARAMS_FIELD(k_fill_f32, dst_va, 0);
K_PARAMS_FIELD(k_fill_f32, n, 8);
K_PARAMS_FIELD(k_fill_f32, value, 16);
K_PARAMS_FIELD(k_fill_f32, pad0, 20);

/* k_copy_bytes: dst[0..size_B) = src[0..size_B) (ranges must not overlap) */
struct k_copy_bytes_params {
    uint64_t dst_va; /* u8[size_B] output */
    uint64_t src_va; /* u8[size_B] input */
    uint64_t size_B; /* bytes */
};
K_PARAMS_SIZE(k_copy_bytes, 24);
K_PARAMS_FIELD(k_copy_bytes, dst_va, 0);
K_PARAMS_FIELD(k_copy_bytes, src_va, 8);
K_PARAMS_FIELD(k_copy_bytes, size_B, 16);

/* k_add_f32: c[i] = a[i] + b[i] */
struct k_add_f32_params {
    uint64_t c_va; /* f32[n] output */
    uint64_t a_va; /* f32[n] */
    uint64_t b_va; /* f32[n] */
    uint64_t n;    /* element count */
};
K_PARAMS_SIZE(k_add_f32, 32);
K_PARAMS_FIELD(k_add_f32, c_va, 0);
K_PARAMS_FIELD(k_add_f32, a_va, 8);
K_PARAMS_FIELD(k_add_f32, b_va, 16);
K_PARAMS_FIELD(k_add_f32, n, 24);

/* k_mul_f32: c[i] = a[i] * b[i] */
struct k_mul_f32_params {
    uint64_t c_va; /* f32[n] output */
    uint64_t a_va; /* f32[n] */
    uint64_t b_va; /* f32[n] */
    uint64_t n;    /* element count */
};
K_PARAMS_SIZE(k_mul_f32, 32);
K_PARAMS_FIELD(k_mul_f32, c_va, 0);
K_PARAMS_FIELD(k_mul_f32, a_va, 8);
K_PARAMS_FIELD(k_mul_f32, b_va, 16);
K_PARAMS_FIELD(k_mul_f32, n, 24);

/* k_exp_f32: y[i] = expf(x[i]) */
struct k_exp_f32_params {
    uint64_t y_va; /* f32[n] output */
    uint64_t x_va; /* f32[n] */
    uint64_t n;    /* element count */
};
K_PARAMS_SIZE(k_exp_f32, 24);
K_PARAMS_FIELD(k_exp_f32, y_va, 0);
K_PARAMS_FIELD(k_exp_f32, x_va, 8);
K_PARAMS_FIELD(k_exp_f32, n, 16);

/* k_relu_f32: y[i] = x[i] > 0 ? x[i] : 0 (NaN -> 0) */
struct k_relu_f32_params {
    uint64_t y_va; /* f32[n] output */
    uint64_t x_va; /* f32[n] */
    uint64_t n;    /* element count */
};
K_PARAMS_SIZE(k_relu_f32, 24);
K_PARAMS_FIELD(k_relu_f32, y_va, 0);
K_PARAMS_FIELD(k_relu_f32, x_va, 8);
K_PARAMS_FIELD(k_relu_f32, n, 16);

/* k_cast_f32_f16: y[i] = (f16)x[i], round to nearest even */
struct k_cast_f32_f16_params {
    uint64_t y_va; /* f16[n] output (binary16 bits) */
    uint64_t x_va; /* f32[n] */
    uint64_t n;    /* element count */
};
K_PARAMS_SIZE(k_cast_f32_f16, 24);
K_PARAMS_FIELD(k_cast_f32_f16, y_va, 0);
K_PARAMS_FIELD(k_cast_f32_f16, x_va, 8);
K_PARAMS_FIELD(k_cast_f32_f16, n, 16);

/* k_cast_f16_f32: y[i] = (f32)x[i], exact */
struct k_cast_f16_f32_params {
    uint64_t y_va; /* f32[n] output */
    uint64_t x_va; /* f16[n] (binary16 bits) */
    uint64_t n;    /* element count */
};
K_PARAMS_SIZE(k_cast_f16_f32, 24);
K_PARAMS_FIELD(k_cast_f16_f32, y_va, 0);
K_PARAMS_FIELD(k_cast_f16_f32, x_va, 8);
K_PARAMS_FIELD(k_cast_f16_f32, n, 16);

/* k_cast_f32_bf16: y[i] = (bf16)x[i], round to nearest even */
struct k_cast_f32_bf16_params {
    uint64_t y_va; /* bf16[n] output */
    uint64_t x_va; /* f32[n] */
    uint64_t n;    /* element count */
};
K_PARAMS_SIZE(k_cast_f32_bf16, 24);
K_PARAMS_FIELD(k_cast_f32_bf16, y_va, 0);
K_PARAMS_FIELD(k_cast_f32_bf16, x_va, 8);
K_PARAMS_FIELD(k_cast_f32_bf16, n, 16);

/* k_cast_bf16_f32: y[i] = (f32)x[i], exact */
struct k_cast_bf16_f32_params {
    uint64_t y_va; /* f32[n] output */
    uint64_t x_va; /* bf16[n] */
    uint64_t n;    /* element count */
};
K_PARAMS_SIZE(k_cast_bf16_f32, 24);
K_PARAMS_FIELD(k_cast_bf16_f32, y_va, 0);
K_PARAMS_FIELD(k_cast_bf16_f32, x_va, 8);
K_PARAMS_FIELD(k_cast_bf16_f32, n, 16);

/* k_sum_rows_f32: out[r] = sum_c x[r, c] (reduce axis 1) */
struct k_sum_rows_f32_params {
    uint64_t out_va; /* f32[rows] output */
    uint64_t x_va;   /* f32[rows, cols], row-major */
    uint32_t rows;
    uint32_t cols;
};
K_PARAMS_SIZE(k_sum_rows_f32, 24);
K_PARAMS_FIELD(k_sum_rows_f32, out_va, 0);
K_PARAMS_FIELD(k_sum_rows_f32, x_va, 8);
K_PARAMS_FIELD(k_sum_rows_f32, rows, 16);
K_PARAMS_FIELD(k_sum_rows_f32, cols, 20);

/* k_sum_cols_f32: out[c] = sum_r x[r, c] (reduce axis 0) */
struct k_sum_cols_f32_params {
    uint64_t out_va; /* f32[cols] output */
    uint64_t x_va;   /* f32[rows, cols], row-major */
    uint32_t rows;
    uint32_t cols;
};
K_PARAMS_SIZE(k_sum_cols_f32, 24);
K_PARAMS_FIELD(k_sum_cols_f32, out_va, 0);
K_PARAMS_FIELD(k_sum_cols_f32, x_va, 8);
K_PARAMS_FIELD(k_sum_cols_f32, rows, 16);
K_PARAMS_FIELD(k_sum_cols_f32, cols, 20);

/* k_matmul_f32: C = A . B */
struct k_matmul_f32_params {
    uint64_t c_va; /* f32[m, n] output, row-major */
    uint64_t a_va; /* f32[m, k], row-major */
    uint64_t b_va; /* f32[k, n], row-major */
    uint32_t m;
    uint32_t n;
    uint32_t k;
    uint32_t pad0; /* 0 */
};
K_PARAMS_SIZE(k_matmul_f32, 40);
K_PARAMS_FIELD(k_matmul_f32, c_va, 0);
K_PARAMS_FIELD(k_matmul_f32, a_va, 8);
K_PARAMS_FIELD(k_matmul_f32, b_va, 16);
K_PARAMS_FIELD(k_matmul_f32, m, 24);
K_PARAMS_FIELD(k_matmul_f32, n, 28);
K_PARAMS_FIELD(k_matmul_f32, k, 32);
K_PARAMS_FIELD(k_matmul_f32, pad0, 36);

/* k_matmul_f16: C = A . B, f16 inputs, f32 accumulation and output */
struct k_matmul_f16_params {
    uint64_t c_va; /* f32[m, n] output, row-major */
    uint64_t a_va; /* f16[m, k], row-major */
    uint64_t b_va; /* f16[k, n], row-major */
    uint32_t m;
    uint32_t n;
    uint32_t k;
    uint32_t pad0; /* 0 */
};
K_PARAMS_SIZE(k_matmul_f16, 40);
K_PARAMS_FIELD(k_matmul_f16, c_va, 0);
K_PARAMS_FIELD(k_matmul_f16, a_va, 8);
K_PARAMS_FIELD(k_matmul_f16, b_va, 16);
K_PARAMS_FIELD(k_matmul_f16, m, 24);
K_PARAMS_FIELD(k_matmul_f16, n, 28);
K_PARAMS_FIELD(k_matmul_f16, k, 32);
K_PARAMS_FIELD(k_matmul_f16, pad0, 36);

/* k_gemm_f16, k_gemm_bf16, k_gemm_f16_nt, k_gemm_bf16_nt (k_gemm_mma.cu): tensor-core
 * C = A . B (B[k, n]) or A . B^T (_nt: B[n, k]), f32 accumulation and output */
struct k_gemm_params {
    uint64_t c_va; /* f32[m, n] output, row-major */
    uint64_t a_va; /* f16/bf16[m, k], row-major */
    uint64_t b_va; /* f16/bf16[k, n] row-major, or [n, k] for the _nt kernels */
    uint32_t m;
    uint32_t n;
    uint32_t k;    /* multiple of 8 */
    uint32_t pad0; /* 0 */
};
K_PARAMS_SIZE(k_gemm, 40);
K_PARAMS_FIELD(k_gemm, c_va, 0);
K_PARAMS_FIELD(k_gemm, a_va, 8);
K_PARAMS_FIELD(k_gemm, b_va, 16);
K_PARAMS_FIELD(k_gemm, m, 24);
K_PARAMS_FIELD(k_gemm, n, 28);
K_PARAMS_FIELD(k_gemm, k, 32);
K_PARAMS_FIELD(k_gemm, pad0, 36);

/* k_gemm_wgmma_f16, _bf16, _f16_nt, _bf16_nt (k_gemm_wgmma.cu, sm_90a only): the same
 * contract and parameters (struct k_gemm_params); the launch shape is the kernel's own:
 * block (K_GEMM_WG_THREADS, 1, 1), one K_GEMM_WG_BM x K_GEMM_WG_BN tile of C per block and
 * step, K_GEMM_WG_SHARED_B bytes of dynamic shared memory (a ring of K_GEMM_WG_STAGES
 * stages of 128 x 64 A + 64 x 256 B f16 values, its mbarriers, 1 KiB of alignment slack). */
#define K_GEMM_WG_THREADS 384u
#define K_GEMM_WG_BM 128u
#define K_GEMM_WG_BN 256u
#define K_GEMM_WG_STAGES 4u
#define K_GEMM_WG_SHARED_B                                                                                   \
    (1024u + K_GEMM_WG_STAGES * (K_GEMM_WG_BM + K_GEMM_WG_BN) * 64u * 2u + 16u * K_GEMM_WG_STAGES)
/* k_gemm_wgmma_*_n128 (k_gemm_wgmma_n128.cu): the same kernels with 128 x 128 tiles, for
 * products whose 128 x 256 tiles would leave most SMs idle (ops_gemm_kernel_for) */
#define K_GEMM_WG128_BN 128u
#define K_GEMM_WG128_SHARED_B                                                                                \
    (1024u + K_GEMM_WG_STAGES * (K_GEMM_WG_BM + K_GEMM_WG128_BN) * 64u * 2u + 16u * K_GEMM_WG_STAGES)

/* k_gemm_wgmma_*_tma (k_gemm_wgmma_tma.cu, sm_90a): the wide k_gemm_wgmma kernels with A and B
 * copied global -> shared by the tensor memory accelerator instead of the producer's cp.async,
 * through two 128-byte tensor maps the launcher encodes (src/kernels/k_tmap.h): A f16/bf16 [m][k]
 * (dimensions k, m; box 64 x 128), B [n][k] for _nt (k, n; box 64 x 256) or [k][n] (n, k; box
 * 64 x 64, four copies per k-step), all with the 128-byte swizzle. The kernel takes the maps'
 * addresses in parameter space (__grid_constant__), so the struct is 64-byte aligned. */
#ifdef __cplusplus
#define K_ALIGN64 alignas(64)
#else
#define K_ALIGN64 _Alignas(64)
#endif
struct k_gemm_tma_params {
    K_ALIGN64 uint64_t tmap_a[16];
    K_ALIGN64 uint64_t tmap_b[16];
    struct k_gemm_params g; /* k_gemm's contract (m, n, k, pointers) */
};
K_PARAMS_SIZE(k_gemm_tma, 320);
K_PARAMS_FIELD(k_gemm_tma, tmap_b, 128);
K_PARAMS_FIELD(k_gemm_tma, g, 256);

/* k_empty: nothing (launch-latency benchmarks) */
struct k_empty_params {
    uint64_t unused; /* ignored */
};
K_PARAMS_SIZE(k_empty, 8);
K_PARAMS_FIELD(k_empty, unused, 0);

/* k_axpb_u64: x[i] = x[i] * mul + add (mod 2^64); order-sensitive, for queue tests */
struct k_axpb_u64_params {
    uint64_t x_va; /* u64[n] in/out */
    uint64_t n;    /* element count */
    uint64_t mul;
    uint64_t add;
};
K_PARAMS_SIZE(k_axpb_u64, 32);

/* k_dep_step (k_test.cu): one link of a chain of dependent launches (HCQ_LAUNCH_DEP_WAIT
 * tests). cell is u32[2][n_cta]: launch idx reads half idx % 2, written by launch idx - 1
 * (every CTA checks another CTA's cell == idx), then after delay_ns writes idx + 1 into its
 * own cell of the other half (the half launch idx - 1 read). */
struct k_dep_step_params {
    uint64_t cell_va;  /* u32[2 * n_cta] */
    uint64_t err_va;   /* u32: mismatches seen */
    uint32_t idx;      /* this launch's position in the chain */
    uint32_t delay_ns; /* busy time per CTA between the check and the write */
    uint32_t wait;     /* bit 0: griddepcontrol.wait first (launched with HCQ_LAUNCH_DEP_WAIT);
                        * bit 1: read the cell with a plain load (L1-cached) instead of a volatile one */
    uint32_t pad;
};
K_PARAMS_SIZE(k_dep_step, 32);

/* k_grid_mark (k_test.cu): thread 0 of every CTA whose flat block index b (x fastest) has
 * b % stride == 0, and of the last CTA, adds 1 to out[0] and raises out[1..3] to its
 * blockIdx.x/y/z; CTA (0,0,0) writes gridDim to out[4..6]. A launch of any size touches few
 * words, so the largest grids (2^31 - 1 CTAs) check the QMD's grid fields and the CTA
 * numbering on a GPU in a fraction of a second. */
struct k_grid_mark_params {
    uint64_t out_va; /* u32[8]: marked count, max x, max y, max z, grid x, y, z, unused */
    uint32_t stride; /* >= 1 */
    uint32_t pad;
};
K_PARAMS_SIZE(k_grid_mark, 16);

/* k_stack_u32 / k_stack_big_u32 (k_test.cu): out[i] = a hash of (seed, i) computed through a
 * local array of K_STACK_WORDS / K_STACK_BIG_WORDS words written and read at run-time indices,
 * so nvcc keeps it in local memory: ~1 KiB / ~4 KiB of stack per thread, far above the engine's
 * default headroom (local-memory tests; hash: k_stack_hash.h; twin: src/ops/ops_memory.c).
 * The two differ only in the array's size, so both take this one struct (as the k_gemm_*
 * kernels share struct k_gemm_params). */
#define K_STACK_WORDS 256u
#define K_STACK_BIG_WORDS 1024u
struct k_stack_params {
    uint64_t out_va; /* u32[n] output */
    uint64_t n;      /* element count */
    uint32_t seed;
    uint32_t pad; /* 0 */
};
K_PARAMS_SIZE(k_stack, 24);
K_PARAMS_FIELD(k_stack, seed, 16);

K_PARAMS_FIELD(k_axpb_u64, x_va, 0);
K_PARAMS_FIELD(k_axpb_u64, n, 8);
K_PARAMS_FIELD(k_axpb_u64, mul, 16);
K_PARAMS_FIELD(k_axpb_u64, add, 24);
#endif /* K_PARAMS_H */
