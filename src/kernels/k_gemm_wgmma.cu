/* SPDX-License-Identifier: MIT */
/*
 * k_gemm_wgmma.cu - Hopper tensor-core GEMMs (sm_90a only: wgmma and setmaxnreg exist on
 * no other target), C f32[m, n] = A[m, k] . op(B), f32 accumulation:
 *
 *   k_gemm_wgmma_f16      A f16[m, k],  B f16[k, n]   (C = A . B)
 *   k_gemm_wgmma_bf16     A bf16[m, k], B bf16[k, n]  (C = A . B)
 *   k_gemm_wgmma_f16_nt   A f16[m, k],  B f16[n, k]   (C = A . B^T)
 *   k_gemm_wgmma_bf16_nt  A bf16[m, k], B bf16[n, k]  (C = A . B^T)
 *
 *   k_llm_gemm_wgmma      the LLM prefill GEMM, k_llm_gemm's contract (k_llm_gemm_params.h):
 *                         y[i * y_stride + r] (+)= x_i . w_r + b[r], x f16[n][k], w f16[rows][k]
 *
 * Same contracts, parameters, preconditions and CPU twins as k_gemm_mma.cu / k_llm_gemm.cu,
 * whose kernels every other arch keeps (ops_gemm_kernel, llm_model.c pick). Row-major.
 *
 * Tile: a CTA computes 128 x 256 of C (K_GEMM_WG_BM x K_GEMM_WG_BN); k-steps of BK = 64.
 * Threads: 384 = three warpgroups. Warpgroup 0 is the producer: it copies the A (128 x 64)
 * and B (64 x 256) tiles of each k-step global -> shared with 16-byte cp.async into a ring
 * of K_GW_STAGES stages. Warpgroups 1 and 2 are the consumers: each owns 64 rows of the
 * tile and issues, per k-step, four wgmma.mma_async.m64n256k16 (f32 += f16/bf16 x
 * f16/bf16) reading both operands from shared memory through matrix descriptors; its
 * 64 x 256 f32 accumulator lives in registers (128 per thread). setmaxnreg.dec gives the
 * producer 40 registers (ptxas allocates that branch within 40: its row pointers are stepped,
 * not hoisted, so it does not spill); the consumers' .inc to 232 is free at one CTA per SM, but
 * ptxas compiles their branch within the entry cap of __launch_bounds__(384, 1) (168), which
 * is why a third consumer (512 threads, cap 128) cannot hold m64n256's 128 accumulators.
 *
 * Shared-memory layout (PTX ISA, "Shared Memory Matrix Layout", 128-byte swizzle): a tile
 * is stored in 1024-byte atoms of 8 rows x 128 bytes; 16-byte chunk c of row r lands at
 * chunk c ^ (r % 8) (the hardware applies the same XOR of address bits 4-6 with 7-9 when
 * wgmma reads, which is why every atom starts on a 1024-byte boundary). A and an [n][k] B
 * are K-major: a row is 64 k values (128 bytes), atoms follow each other every 1024 bytes
 * along m/n (descriptor SBO = 1024; LBO unused for swizzled K-major); the k16 step kk
 * starts 32 * kk bytes into the row. A [k][n] B is N-major (wgmma's transpose-B form): a
 * row is 64 n values at one k, a 64-column panel is 64 rows (8 KiB), panels follow each
 * other (LBO = 8192 in the PTX ISA's MN-major canonical layout ((T,8,m),(8,k)) :
 * ((1,T,LBO),(8T,SBO))), and groups of 8 k rows are SBO = 1024 apart.
 *
 * Pipeline: mbarriers per stage. full[s] (128 arrivals): each producer thread waits for
 * its own cp.async group of the k-step (cp.async.wait_group, one group of lag so copies
 * overlap), executes fence.proxy.async (cp.async writes through the generic proxy and
 * wgmma reads through the async proxy: PTX ISA memory model, proxy fences) and arrives.
 * empty[s] (8 arrivals, one per consumer warp): a consumer arrives once wgmma.wait_group
 * says the wgmmas that read the stage have completed. Phases alternate per pass over the
 * ring (parity waits). Tiles are grid-strided; the ring's counters run on across tiles,
 * so the producer loads the next tile while the consumers store this one.
 *
 * Dynamic shared memory: K_GEMM_WG_SHARED_B (4 stages x 48 KiB + barriers + 1 KiB to
 * align the ring); the kernel's descriptor asks every backend for it (hcq_kernel_desc
 * shared_dyn_B). Block must be exactly (384, 1, 1), else the kernel writes nothing.
 * Edges: rows, columns and k-chunks outside the matrices are zero-filled by cp.async
 * (src-size 0, no read) and stores are predicated, so any m, n work; k % 8 == 0 and, for
 * B[k][n], n % 8 == 0 (a 16-byte chunk lies wholly inside or outside); A, B 16-byte and C
 * 8-byte aligned (ops_launch_gemm checks all of it).
 *
 * Error: products of f16/bf16 are exact in f32, sums are f32 in the tensor core's order:
 * |err| <= k * 2^-23 * sum_k |a||b| per element, the bound of k_gemm_mma.h (on H100 the
 * tuning harness's random 4096^3 / 8192^3 products came out bit-identical to cuBLAS GemmEx
 * with f32 compute).
 * Speed (H100): 545-561 TFLOP/s at 4096^3 (76-78% of cuBLAS),
 * 522-566 at 8192^3 (67-76%), vs ~350 for k_gemm_mma.
 * CPU reference: twin_gemm in src/ops/ops_gemm.c (k_llm_gemm_wgmma: ops_llm_gemm.c). Tests:
 * tests/hcq/hcq_suite_kernels.c kernel_gemm_wgmma_*, tests/unit/test_llm_dequant.c
 * prefill_gemm_epilogue. Bench: `nvhcq bench gemm` / matmul (gemm_* rows on sm_90).
 */
#include "k_device.h"
#include "k_llm_gemm_params.h"
#include "k_params.h"

#ifndef K_GW_CONS   /* consumer warpgroups, 64 rows each (tuning harness: 3) */
#define K_GW_CONS 2 /* and setmaxnreg of the producer warpgroup and of each consumer */
#define K_GW_REG_PROD 40  /* (128 accumulators + addressing) */
#define K_GW_REG_CONS 232
#endif
#define K_GW_BM (64 * K_GW_CONS)
#ifndef K_GW_BN /* tuning harness: 192 (m64n192k16) */
#define K_GW_BN K_GEMM_WG_BN
#endif
#define K_GW_BK 64
#define K_GW_STAGES K_GEMM_WG_STAGES
#define K_GW_THREADS (128 * (K_GW_CONS + 1))
#define K_GW_SHARED_B (1024 + K_GW_STAGES * (K_GW_BM + K_GW_BN) * K_GW_BK * 2 + 2 * 8 * K_GW_STAGES)
#ifndef K_GW_GROUP
#define K_GW_GROUP 16 /* tile-rows per raster group (L2 reuse of B columns) */
#endif
#ifndef K_GW_TMA /* 1: the TMA producer (k_gemm_wgmma_tma.cu) */
#define K_GW_TMA 0
#endif
#ifndef K_GW_LAG
#define K_GW_LAG 1 /* cp.async groups a producer thread keeps in flight before arriving */
#endif

static_assert(K_GW_CONS != 2 || K_GW_BN != K_GEMM_WG_BN ||
                  (K_GEMM_WG_SHARED_B == K_GW_SHARED_B && K_GEMM_WG_BM == K_GW_BM &&
                   K_GEMM_WG_THREADS == K_GW_THREADS),
              "k_params.h's K_GEMM_WG_* do not match the kernel");
static_assert(K_GW_CONS != 2 || K_GW_BN != 128 || K_GEMM_WG128_SHARED_B == K_GW_SHARED_B,
              "k_params.h's K_GEMM_WG128_SHARED_B does not match the kernel");
/* Entry names: k_gemm_wgmma_n128.cu compiles this file again with 128-wide tiles and its
 * own names (K_GW_SUFFIX _n128), without the LLM entry (K_GW_NO_LLM). */
#ifndef K_GW_SUFFIX
#define K_GW_SUFFIX
#endif
#define K_GW_CAT2(a, b) a##b
#define K_GW_CAT(a, b) K_GW_CAT2(a, b)
#define K_GW_ENTRY(name) K_GW_CAT(name, K_GW_SUFFIX)
static_assert(K_GW_REG_PROD * 128 + K_GW_REG_CONS * 128 * K_GW_CONS <= 65536, "register file");

/* ==== PTX wrappers (PTX ISA: cp.async, mbarrier, fence.proxy, wgmma, setmaxnreg) ==== */

static __device__ __forceinline__ uint32_t
k_gw_smem(const void *p)
{
    return (uint32_t)__cvta_generic_to_shared(p);
}

/* 16-byte global -> shared copy; src_B = 0 writes zeros without reading (edges). */
static __device__ __forceinline__ void
k_gw_cp16(uint32_t dst, const void *src, uint32_t src_B)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_B) : "memory");
}

static __device__ __forceinline__ void
k_gw_mbar_init(uint32_t bar, uint32_t count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}

static __device__ __forceinline__ void
k_gw_mbar_arrive(uint32_t bar)
{
    asm volatile("{\n .reg .b64 st;\n mbarrier.arrive.shared::cta.b64 st, [%0];\n}\n" ::"r"(bar) : "memory");
}

/* Wait until the phase of parity `parity` has completed (try_wait suspends a while in
 * hardware before returning false, so the loop does not hammer the barrier). */
static __device__ __forceinline__ void
k_gw_mbar_wait(uint32_t bar, uint32_t parity)
{
    asm volatile("{\n"
                 " .reg .pred done;\n"
                 "wait_again:\n"
                 " mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
                 " @!done bra wait_again;\n"
                 "}\n" ::"r"(bar),
                 "r"(parity)
                 : "memory");
}

/* One arrival on `bar` that also expects `bytes` of asynchronous copies to complete on it
 * (PTX ISA: mbarrier.arrive.expect_tx, sm_90). */
static __device__ __forceinline__ void
k_gw_mbar_expect_tx(uint32_t bar, uint32_t bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}

/* TMA: the box at element coordinates (c0 innermost, c1) of the tensor map at `tmap` (a
 * parameter-space address) into shared memory at dst, completing its bytes on bar (PTX ISA:
 * cp.async.bulk.tensor, tile mode; elements outside the tensor arrive as zeros). */
static __device__ __forceinline__ void
k_gw_tma2d(uint32_t dst, const void *tmap, int32_t c0, int32_t c1, uint32_t bar)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, "
                 "%3}], [%4];\n" ::"r"(dst),
                 "l"(tmap), "r"(c0), "r"(c1), "r"(bar)
                 : "memory");
}

static __device__ __forceinline__ void
k_gw_fence_proxy_async(void)
{
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

template <int N>
static __device__ __forceinline__ void
k_gw_cp_wait(void)
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

static __device__ __forceinline__ void
k_gw_cp_commit(void)
{
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}

static __device__ __forceinline__ void
k_gw_wg_fence(void)
{
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}

static __device__ __forceinline__ void
k_gw_wg_commit(void)
{
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

template <int N>
static __device__ __forceinline__ void
k_gw_wg_wait(void)
{
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

/* Shared-memory matrix descriptor (PTX ISA, "Matrix Descriptor Format"): start address,
 * leading and stride byte offsets, each >> 4 in 14 bits; base offset 0 (atoms are
 * 1024-aligned); bits 62-63 = 1: 128-byte swizzle. */
static __device__ __forceinline__ uint64_t
k_gw_desc(uint32_t addr, uint32_t lbo_B, uint32_t sbo_B)
{
    return (uint64_t)((addr & 0x3FFFF) >> 4) | (uint64_t)((lbo_B & 0x3FFFF) >> 4) << 16 |
           (uint64_t)((sbo_B & 0x3FFFF) >> 4) << 32 | 1ull << 62;
}

/* The 128 accumulator operands of m64n256k16 (f32: N / 2 per thread). */
#define K_GW_D4(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3])
#define K_GW_D16(i) K_GW_D4(i), K_GW_D4(i + 4), K_GW_D4(i + 8), K_GW_D4(i + 12)
#define K_GW_D64(i) K_GW_D16(i), K_GW_D16(i + 16), K_GW_D16(i + 32), K_GW_D16(i + 48)
#define K_GW_REGS128                                                                                          \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"                                   \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"                         \
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"                         \
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63,"                         \
    "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79,"                         \
    "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95,"                         \
    "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111,"             \
    "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
/* d += A . B for one k16 step: scale-d = 1 (accumulate; the tile starts from zeros),
 * imm-scale-a/b = 1, imm-trans-a = 0 (A K-major), imm-trans-b = TB (1: B N-major). */
#define K_GW_MMA256(TY, TB)                                                                                   \
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %130, 0;\n"                                              \
                 " wgmma.mma_async.sync.aligned.m64n256k16.f32." TY "." TY " {" K_GW_REGS128 "}, %128, %129, " \
                 "p, 1, 1, 0, " TB ";\n}\n"                                                                   \
                 : K_GW_D64(0), K_GW_D64(64)                                                                  \
                 : "l"(da), "l"(db), "r"(1))

/* m64n128k16 (k_gemm_wgmma_n128.cu, K_GW_BN = 128): 64 accumulators. */
#define K_GW_REGS64 \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15," \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31," \
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47," \
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define K_GW_MMA128(TY, TB)                                                                                   \
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %66, 0;\n"                                              \
                 " wgmma.mma_async.sync.aligned.m64n128k16.f32." TY "." TY " {" K_GW_REGS64 "}, %64, %65, "   \
                 "p, 1, 1, 0, " TB ";\n}\n"                                                                  \
                 : K_GW_D64(0)                                                                                \
                 : "l"(da), "l"(db), "r"(1))

template <bool BF16, bool B_NK>
static __device__ __forceinline__ void
k_gw_mma(float (&d)[64], uint64_t da, uint64_t db)
{
    if (BF16 && B_NK)
        K_GW_MMA128("bf16", "0");
    else if (BF16)
        K_GW_MMA128("bf16", "1");
    else if (B_NK)
        K_GW_MMA128("f16", "0");
    else
        K_GW_MMA128("f16", "1");
}

/* m64n192k16 (tuning harness, K_GW_BN = 192): 96 accumulators. */
#define K_GW_REGS96 \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15," \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31," \
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47," \
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63," \
    "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79," \
    "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95"
#define K_GW_MMA192(TY, TB)                                                                                   \
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %98, 0;\n"                                               \
                 " wgmma.mma_async.sync.aligned.m64n192k16.f32." TY "." TY " {" K_GW_REGS96 "}, %96, %97, "   \
                 "p, 1, 1, 0, " TB ";\n}\n"                                                                   \
                 : K_GW_D64(0), K_GW_D16(64), K_GW_D16(80)                                                    \
                 : "l"(da), "l"(db), "r"(1))

template <bool BF16, bool B_NK>
static __device__ __forceinline__ void
k_gw_mma(float (&d)[96], uint64_t da, uint64_t db)
{
    if (BF16 && B_NK)
        K_GW_MMA192("bf16", "0");
    else if (BF16)
        K_GW_MMA192("bf16", "1");
    else if (B_NK)
        K_GW_MMA192("f16", "0");
    else
        K_GW_MMA192("f16", "1");
}

template <bool BF16, bool B_NK>
static __device__ __forceinline__ void
k_gw_mma(float (&d)[128], uint64_t da, uint64_t db)
{
    if (BF16 && B_NK)
        K_GW_MMA256("bf16", "0");
    else if (BF16)
        K_GW_MMA256("bf16", "1");
    else if (B_NK)
        K_GW_MMA256("f16", "0");
    else
        K_GW_MMA256("f16", "1");
}

/* ==== The kernel ==== */

/* One GEMM: C[r * ldc + c] = (accumulate ? C[..] : 0) + sum_j A[r][j] op(B)[j][c] + bias[c]
 * (bias f32[n] or 0), r < m, c < n. */
struct k_gw_args {
    uint64_t c_va, a_va, b_va, bias_va;
    uint32_t m, n, k, ldc, accumulate;
};

/* Origin of tile `tile` in C: tiles numbered in groups of K_GW_GROUP tile-rows, column by
 * column inside a group, so CTAs running together share B columns and A rows in L2. */
static __device__ __forceinline__ void
k_gw_tile(uint32_t tile, uint32_t tiles_m, uint32_t tiles_n, uint32_t &m0, uint32_t &n0)
{
    const uint32_t per_group = K_GW_GROUP * tiles_n, g = tile / per_group;
    const uint32_t first_m = g * K_GW_GROUP;
    const uint32_t gm = tiles_m - first_m < K_GW_GROUP ? tiles_m - first_m : K_GW_GROUP;
    const uint32_t in_g = tile - g * per_group;
    m0 = (first_m + in_g % gm) * K_GW_BM;
    n0 = (in_g / gm) * K_GW_BN;
}

/* Producer warpgroup: thread t (0..127) copies 8 A chunks and 16 B chunks per k-step. Its
 * rows are t / 8 + 16 i (A, [n][k] B) or k-rows t / 32 + 4 i ([k][n] B), so each copy is
 * one pointer step from the last: the producer runs in 40 registers (setmaxnreg). */
template <bool B_NK>
static __device__ __forceinline__ void
k_gw_produce(const struct k_gw_args &p, uint32_t sm0, uint32_t bars, uint32_t t)
{
    constexpr uint32_t BM = K_GW_BM, BN = K_GW_BN, BK = K_GW_BK, ST = K_GW_STAGES;
    constexpr uint32_t A_B = BM * BK * 2, STAGE_B = (BM + BN) * BK * 2;
    const uint32_t m = p.m, n = p.n, k = p.k;
    const uint16_t *A = (const uint16_t *)p.a_va, *B = (const uint16_t *)p.b_va;
    const uint32_t tiles_m = (m + BM - 1) / BM, tiles_n = (n + BN - 1) / BN, tiles = tiles_m * tiles_n;
    const uint32_t kt_count = (k + BK - 1) / BK;
    const uint32_t r0 = t >> 3, ch = t & 7;                     /* A, [n][k] B: row r0 + 16 i, chunk ch */
    const uint32_t kr0 = t >> 5, nc = t & 31;                   /* [k][n] B: k-row kr0 + 4 i, chunk nc */
    const uint32_t a_off = r0 * 128 + ((ch ^ (r0 & 7)) << 4);  /* + 2048 i */
    const uint32_t nn_off = (nc >> 3) * (BK * 128) + kr0 * 128; /* + 512 i, chunk (nc&7)^((kr0+4i)&7) */
    uint32_t it = 0; /* k-steps issued, over all tiles of this CTA */
    for (uint32_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        uint32_t m0, n0;
        k_gw_tile(tile, tiles_m, tiles_n, m0, n0);
        const int32_t a_rows = (int32_t)(m - m0) - (int32_t)r0; /* row r0 + 16 i exists iff 16 i < a_rows */
        const int32_t b_rows = (int32_t)(n - n0) - (int32_t)r0;
        const bool nn_col = n0 + nc * 8 < n;
        for (uint32_t kt = 0; kt < kt_count; kt++, it++) {
            const uint32_t s = it % ST, k0 = kt * BK;
            k_gw_mbar_wait(bars + 8 * (ST + s), ((it / ST) & 1) ^ 1); /* empty[s]: first pass free */
            const uint32_t sa = sm0 + s * STAGE_B, sb = sa + A_B;
            const bool k_in = k0 + ch * 8 < k;
            const uint16_t *pa = A + (uint64_t)(m0 + r0) * k + k0 + ch * 8;
#pragma unroll
            for (int32_t i = 0; i < (int32_t)BM / 16; i++, pa += (uint64_t)16 * k) {
                const bool in = k_in && 16 * i < a_rows;
                k_gw_cp16(sa + a_off + 2048 * i, in ? pa : A, in ? 16 : 0);
            }
            if (B_NK) { /* B[n][k]: 256 rows of 8 chunks, like A */
                const uint16_t *pb = B + (uint64_t)(n0 + r0) * k + k0 + ch * 8;
#pragma unroll
                for (int32_t i = 0; i < (int32_t)BN / 16; i++, pb += (uint64_t)16 * k) {
                    const bool in = k_in && 16 * i < b_rows;
                    k_gw_cp16(sb + a_off + 2048 * i, in ? pb : B, in ? 16 : 0);
                }
            } else if (BN != 256) { /* tuning harness: generic index arithmetic */
#pragma unroll
                for (uint32_t i = 0; i < BK * (BN / 8) / 128; i++) {
                    const uint32_t c = t + 128 * i, kr = c / (BN / 8), cc = c % (BN / 8);
                    const uint32_t gk = k0 + kr, gn = n0 + cc * 8;
                    const bool in = gk < k && gn < n;
                    const uint32_t off = (cc >> 3) * (BK * 128) + kr * 128 + (((cc & 7) ^ (kr & 7)) << 4);
                    k_gw_cp16(sb + off, in ? B + (uint64_t)gk * n + gn : B, in ? 16 : 0);
                }
            } else { /* B[k][n]: 64 k-rows of 32 chunks, stored as 4 panels of 64 columns */
                const uint16_t *pb = B + (uint64_t)(k0 + kr0) * n + n0 + nc * 8;
#pragma unroll
                for (uint32_t i = 0; i < BK / 4; i++, pb += (uint64_t)4 * n) {
                    const bool in = nn_col && k0 + kr0 + 4 * i < k;
                    const uint32_t off = nn_off + 512 * i + (((nc & 7) ^ ((kr0 + 4 * i) & 7)) << 4);
                    k_gw_cp16(sb + off, in ? pb : B, in ? 16 : 0);
                }
            }
            k_gw_cp_commit();
            if (it >= K_GW_LAG) { /* the copies of k-step it - LAG have landed: publish them */
                k_gw_cp_wait<K_GW_LAG>();
                k_gw_fence_proxy_async();
                k_gw_mbar_arrive(bars + 8 * ((it - K_GW_LAG) % ST));
            }
        }
    }
    k_gw_cp_wait<0>();
    k_gw_fence_proxy_async();
    for (uint32_t j = it > K_GW_LAG ? it - K_GW_LAG : 0; j < it; j++)
        k_gw_mbar_arrive(bars + 8 * (j % ST));
}

/* The TMA producer (K_GW_TMA builds): thread 0 of the producer warpgroup alone, per k-step
 * one arrival with the stage's byte count on full[s] and the copies that complete it - A's
 * 128 x 64 box, then B's 256 x 64 box ([n][k]) or four 64 x 64 panels ([k][n]); the copies
 * write the 128-byte-swizzled layout the consumers' descriptors read (the same XOR of chunk
 * and row as the cp.async producer). Edge boxes are zero-filled and still count in full. */
template <bool B_NK>
static __device__ __forceinline__ void
k_gw_produce_tma(const struct k_gw_args &p, const void *ta, const void *tb, uint32_t sm0, uint32_t bars, uint32_t t)
{
    constexpr uint32_t BM = K_GW_BM, BN = K_GW_BN, BK = K_GW_BK, ST = K_GW_STAGES;
    constexpr uint32_t A_B = BM * BK * 2, STAGE_B = (BM + BN) * BK * 2;
    if (t != 0)
        return;
    const uint32_t tiles_m = (p.m + BM - 1) / BM, tiles_n = (p.n + BN - 1) / BN, tiles = tiles_m * tiles_n;
    const uint32_t kt_count = (p.k + BK - 1) / BK;
    uint32_t it = 0;
    for (uint32_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        uint32_t m0, n0;
        k_gw_tile(tile, tiles_m, tiles_n, m0, n0);
        for (uint32_t kt = 0; kt < kt_count; kt++, it++) {
            const uint32_t s = it % ST, k0 = kt * BK, full = bars + 8 * s;
            k_gw_mbar_wait(bars + 8 * (ST + s), ((it / ST) & 1) ^ 1); /* empty[s]: first pass free */
            const uint32_t sa = sm0 + s * STAGE_B, sb = sa + A_B;
            k_gw_mbar_expect_tx(full, STAGE_B);
            k_gw_tma2d(sa, ta, (int32_t)k0, (int32_t)m0, full);
            if (B_NK) {
                k_gw_tma2d(sb, tb, (int32_t)k0, (int32_t)n0, full);
            } else {
#pragma unroll
                for (uint32_t q = 0; q < BN / 64; q++)
                    k_gw_tma2d(sb + q * (BK * 128), tb, (int32_t)(n0 + 64 * q), (int32_t)k0, full);
            }
        }
    }
}

/* Consumer warpgroup cw (0, 1): rows cw * 64 .. +63 of each tile. */
template <bool BF16, bool B_NK>
static __device__ __forceinline__ void
k_gw_consume(const struct k_gw_args &p, uint32_t sm0, uint32_t bars, uint32_t cw, uint32_t t)
{
    constexpr uint32_t BM = K_GW_BM, BN = K_GW_BN, BK = K_GW_BK, ST = K_GW_STAGES;
    constexpr uint32_t A_B = BM * BK * 2, STAGE_B = (BM + BN) * BK * 2;
    const uint32_t m = p.m, n = p.n, k = p.k;
    float *C = (float *)p.c_va;
    const float *bias = (const float *)p.bias_va;
    const uint32_t ldc = p.ldc;
    const bool accum = p.accumulate != 0;
    const uint32_t tiles_m = (m + BM - 1) / BM, tiles_n = (n + BN - 1) / BN, tiles = tiles_m * tiles_n;
    const uint32_t kt_count = (k + BK - 1) / BK;
    const uint32_t warp = t >> 5, lane = t & 31;
    const bool vec = !(ldc & 1); /* rows start 8-byte aligned (C is): float2 stores */
    uint32_t it = 0;
    float d[BN / 2];
    for (uint32_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        uint32_t m0, n0;
        k_gw_tile(tile, tiles_m, tiles_n, m0, n0);
#pragma unroll
        for (uint32_t i = 0; i < BN / 2; i++)
            d[i] = 0.0f;
        for (uint32_t kt = 0; kt < kt_count; kt++, it++) {
            const uint32_t s = it % ST;
            k_gw_mbar_wait(bars + 8 * s, (it / ST) & 1); /* full[s] */
            const uint32_t sa = sm0 + s * STAGE_B + cw * (64 * 128), sb = sm0 + s * STAGE_B + A_B;
            k_gw_wg_fence(); /* the accumulators were written by ordinary instructions */
#pragma unroll
            for (uint32_t kk = 0; kk < BK / 16; kk++) {
                const uint64_t da = k_gw_desc(sa + kk * 32, 16, 1024);
                const uint64_t db =
                    B_NK ? k_gw_desc(sb + kk * 32, 16, 1024) : k_gw_desc(sb + kk * 16 * 128, BK * 128, 1024);
                k_gw_mma<BF16, B_NK>(d, da, db);
            }
            k_gw_wg_commit();
            k_gw_wg_wait<1>(); /* the previous k-step's wgmmas are done: its stage is free */
            if (kt > 0 && lane == 0)
                k_gw_mbar_arrive(bars + 8 * (ST + (it - 1) % ST));
        }
        k_gw_wg_wait<0>();
        if (kt_count > 0 && lane == 0)
            k_gw_mbar_arrive(bars + 8 * (ST + (it - 1) % ST));

        /* accumulator layout (PTX ISA, wgmma D fragments): d[4j + 2h + e] holds row
         * 16 * warp + lane / 4 + 8 h, column 8 j + 2 (lane % 4) + e of the warpgroup's 64 x 256 */
        const uint32_t r0 = m0 + cw * 64 + warp * 16 + (lane >> 2);
#pragma unroll
        for (uint32_t j = 0; j < BN / 8; j++) {
            const uint32_t c = n0 + j * 8 + (lane & 3) * 2;
            if (c >= n)
                continue;
            const bool pair = c + 1 < n;
            const float b0 = bias ? bias[c] : 0.0f, b1 = bias && pair ? bias[c + 1] : 0.0f;
#pragma unroll
            for (uint32_t h = 0; h < 2; h++) {
                const uint32_t r = r0 + 8 * h;
                if (r >= m)
                    continue;
                float *o = C + (uint64_t)r * ldc + c;
                float v0 = d[4 * j + 2 * h] + b0, v1 = d[4 * j + 2 * h + 1] + b1;
                if (vec && pair) {
                    if (accum) {
                        const float2 old = *(const float2 *)o;
                        v0 += old.x;
                        v1 += old.y;
                    }
                    *(float2 *)o = make_float2(v0, v1);
                } else {
                    o[0] = accum ? o[0] + v0 : v0;
                    if (pair)
                        o[1] = accum ? o[1] + v1 : v1;
                }
            }
        }
    }
}

template <bool BF16, bool B_NK>
static __device__ __forceinline__ void
k_gw_body(const struct k_gw_args &p, const void *ta = nullptr, const void *tb = nullptr)
{
    constexpr uint32_t ST = K_GW_STAGES, STAGE_B = (K_GW_BM + K_GW_BN) * K_GW_BK * 2;
    extern __shared__ __align__(1024) uint8_t k_gw_dyn[];
    if (blockDim.x != K_GW_THREADS || blockDim.y != 1 || blockDim.z != 1)
        return; /* uniform over the block: no thread reaches a barrier */
    /* the swizzle atoms need 1024-byte alignment in the shared window (+1 KiB requested) */
    const uint32_t sm0 = (k_gw_smem(k_gw_dyn) + 1023) & ~1023u;
    const uint32_t bars = sm0 + ST * STAGE_B; /* full[ST], then empty[ST], 8 bytes each */
    const uint32_t tid = threadIdx.x, wg = tid >> 7;
    if (tid == 0) {
        for (uint32_t s = 0; s < ST; s++) {
            k_gw_mbar_init(bars + 8 * s, K_GW_TMA ? 1 : 128); /* full: the TMA thread / every producer thread */
            k_gw_mbar_init(bars + 8 * (ST + s), 4 * K_GW_CONS); /* empty: every consumer warp */
        }
    }
    __syncthreads(); /* barriers initialised before anyone uses them */
    if (wg == 0) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(K_GW_REG_PROD) : "memory");
        if (K_GW_TMA)
            k_gw_produce_tma<B_NK>(p, ta, tb, sm0, bars, tid);
        else
            k_gw_produce<B_NK>(p, sm0, bars, tid);
    } else {
        asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(K_GW_REG_CONS) : "memory");
        k_gw_consume<BF16, B_NK>(p, sm0, bars, wg - 1, tid & 127);
    }
}

static __device__ __forceinline__ struct k_gw_args
k_gw_from(const struct k_gemm_params &p)
{
    return k_gw_args{p.c_va, p.a_va, p.b_va, 0, p.m, p.n, p.k, p.n, 0};
}

#if K_GW_TMA
/* The TMA builds take the maps' parameter-space addresses: __grid_constant__ keeps the
 * parameter in place (no local copy). */
#define K_GW_DEF(name, BF, NK)                                                                                \
    extern "C" __global__ void __launch_bounds__(K_GW_THREADS, 1)                                             \
        K_GW_ENTRY(name)(const __grid_constant__ struct k_gemm_tma_params p)                                  \
    {                                                                                                         \
        k_gw_body<BF, NK>(k_gw_from(p.g), p.tmap_a, p.tmap_b);                                                \
    }
K_GW_DEF(k_gemm_wgmma_f16, false, false)
K_GW_DEF(k_gemm_wgmma_bf16, true, false)
K_GW_DEF(k_gemm_wgmma_f16_nt, false, true)
K_GW_DEF(k_gemm_wgmma_bf16_nt, true, true)
#else
extern "C" __global__ void __launch_bounds__(K_GW_THREADS, 1) K_GW_ENTRY(k_gemm_wgmma_f16)(const struct k_gemm_params p)
{
    k_gw_body<false, false>(k_gw_from(p));
}

extern "C" __global__ void __launch_bounds__(K_GW_THREADS, 1) K_GW_ENTRY(k_gemm_wgmma_bf16)(const struct k_gemm_params p)
{
    k_gw_body<true, false>(k_gw_from(p));
}

extern "C" __global__ void __launch_bounds__(K_GW_THREADS, 1) K_GW_ENTRY(k_gemm_wgmma_f16_nt)(const struct k_gemm_params p)
{
    k_gw_body<false, true>(k_gw_from(p));
}

extern "C" __global__ void __launch_bounds__(K_GW_THREADS, 1) K_GW_ENTRY(k_gemm_wgmma_bf16_nt)(const struct k_gemm_params p)
{
    k_gw_body<true, true>(k_gw_from(p));
}

#endif /* K_GW_TMA */

#ifndef K_GW_NO_LLM
/* The LLM prefill GEMM (k_llm_gemm's contract, k_llm_gemm_params.h) on this body: tokens are
 * A's rows (x f16[n][k]), the weight rows B's ([rows][k]: the NT form), y[i * y_stride + r]
 * (+)= x_i . w_r + b[r]. The TMA build's entry takes the two tensor maps first. */
#if K_GW_TMA
extern "C" __global__ void __launch_bounds__(K_GW_THREADS, 1)
    k_llm_gemm_wgmma_tma(const __grid_constant__ struct k_llm_gemm_tma_params p)
{
    k_gw_body<false, true>(
        k_gw_args{p.g.y_va, p.g.x_va, p.g.w_va, p.g.b_va, p.g.n, p.g.rows, p.g.k, p.g.y_stride, p.g.accumulate},
        p.tmap_x, p.tmap_w);
}
#else
extern "C" __global__ void __launch_bounds__(K_GW_THREADS, 1) k_llm_gemm_wgmma(const struct k_llm_gemm_params p)
{
    k_gw_body<false, true>(k_gw_args{p.y_va, p.x_va, p.w_va, p.b_va, p.n, p.rows, p.k, p.y_stride, p.accumulate});
}
#endif
#endif /* K_GW_NO_LLM */
