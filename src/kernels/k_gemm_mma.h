/* SPDX-License-Identifier: MIT */
/*
 * k_gemm_mma.h - the tensor-core GEMM body shared by k_gemm_mma.cu (plain GEMMs) and
 * k_llm_gemm.cu (LLM prefill): C f32 = A . op(B) with A, B f16 or bf16, f32 accumulate,
 * mma.sync.m16n8k16 fed by ldmatrix from a cp.async ring of K_GM_STAGES shared-memory
 * stages. CUDA only. A translation unit may define K_GM_BM, K_GM_BN, K_GM_WM, K_GM_WN and
 * K_GM_STAGES (all five) before including this header to pick its tile; the default is
 * the one measured best at 4096^3 on H100.
 *
 * Tiling: a block of K_GM_THREADS threads computes a K_GM_BM x K_GM_BN tile of C; its
 * warps form a WM x WN grid, each warp a (BM/WM) x (BN/WN) sub-tile of 16x8 mma tiles.
 * Shared memory is static, (BM + BN) * BK * 2 bytes per stage; the configurations used
 * stay within the 48 KiB static limit, so neither launch path needs dynamic shared memory.
 * Rows of the A tile (and of the B tile when B is [n][k]) are 64 bytes (4 chunks of 16 B)
 * and the chunk index is XORed with (row / 2) % 4, so the 8 rows one ldmatrix phase reads
 * hit 8 distinct 16-byte bank groups; the [k][n] B tile has BN * 2-byte rows and its chunk
 * index is XORed with row % 8 for the same reason.
 *
 * Preconditions (checked by the launchers): k % 8 == 0; for B[k][n] also n % 8 == 0 (a
 * 16-byte chunk of a row is wholly inside or outside the matrix; chunks outside are
 * zero-filled by cp.async without a read); A and B 16-byte aligned, C (and bias) 8-byte
 * aligned; ceil(m/BM) * ceil(n/BN) < 2^32.
 * Block must be exactly (K_GM_THREADS, 1, 1), else the kernel returns without writing.
 * Tiles of C are numbered flat, grouped K_GM_GROUP tile-rows at a time so that blocks
 * running together share A rows and B columns in L2; blocks grid-stride over the tiles.
 * Error: products of f16/bf16 values are exact in f32; sums are f32 in an order of the
 * hardware's choosing: |err| <= k * 2^-23 * sum_k |a||b| (docs/kernels.md).
 */
#ifndef K_GEMM_MMA_H
#define K_GEMM_MMA_H

#include "k_device.h"

#ifndef K_GM_BM
#define K_GM_BM 128
#define K_GM_BN 128
#define K_GM_WM 2
#define K_GM_WN 2
#define K_GM_STAGES 3
#endif
#define K_GM_BK 32
#define K_GM_GROUP 8
#define K_GM_THREADS (32 * K_GM_WM * K_GM_WN)

/* ==== PTX wrappers ==== */

static __device__ __forceinline__ uint32_t
k_gm_smem(const void *p)
{
    return (uint32_t)__cvta_generic_to_shared(p);
}

/* 16-byte global -> shared copy; src_B = 0 writes zeros without reading (edges). */
static __device__ __forceinline__ void
k_gm_cp16(uint32_t dst, const void *src, uint32_t src_B)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_B));
}

static __device__ __forceinline__ void
k_gm_commit(void)
{
    asm volatile("cp.async.commit_group;\n" ::);
}

template <int N>
static __device__ __forceinline__ void
k_gm_wait(void)
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

static __device__ __forceinline__ void
k_gm_ldsm4(uint32_t r[4], uint32_t addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

static __device__ __forceinline__ void
k_gm_ldsm4_t(uint32_t r[4], uint32_t addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

template <bool BF16>
static __device__ __forceinline__ void
k_gm_mma(float c[4], const uint32_t a[4], uint32_t b0, uint32_t b1)
{
    if (BF16)
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                     "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    else
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                     "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/* Byte offset of 16-byte chunk `ch` of row `r` in a tile with 64-byte rows (see header). */
static __device__ __forceinline__ uint32_t
k_gm_off64(uint32_t r, uint32_t ch)
{
    return r * 64 + ((ch ^ (r >> 1)) & 3) * 16;
}

/* Same for the NN B tile: rows of BN * 2 bytes (BN / 8 chunks), chunk XOR row % 8. */
static __device__ __forceinline__ uint32_t
k_gm_offb(uint32_t r, uint32_t ch)
{
    return r * (K_GM_BN * 2) + (ch ^ (r & 7)) * 16;
}

/* ==== The kernel ==== */

/* The GEMM of one launch. C row r starts at C + r * ldc; bias (f32[n] or NULL) is added
 * to every row; accumulate != 0 adds the product to C instead of overwriting it. */
struct k_gm_args {
    uint64_t c_va, a_va, b_va, bias_va;
    uint32_t m, n, k, ldc, accumulate;
};

template <bool BF16, bool B_NK>
static __device__ __forceinline__ void
k_gm_body(const struct k_gm_args &p)
{
    constexpr int BM = K_GM_BM, BN = K_GM_BN, BK = K_GM_BK, ST = K_GM_STAGES;
    constexpr int WTM = BM / K_GM_WM, WTN = BN / K_GM_WN; /* warp tile */
    constexpr int FM = WTM / 16, FN = WTN / 8;            /* mma tiles per warp */
    constexpr int A_B = BM * BK * 2, B_B = BN * BK * 2;   /* bytes per stage */
    constexpr int A_CH = A_B / 16, B_CH = B_B / 16;       /* 16-byte chunks per stage */
    static_assert(FN % 2 == 0, "B fragments load two n8 tiles per ldmatrix.x4");
    static_assert(A_CH % K_GM_THREADS == 0 && B_CH % K_GM_THREADS == 0, "chunks per thread");
#ifdef K_GM_DYNAMIC /* tuning harness only: stage rings beyond the 48 KiB static limit */
    extern __shared__ __align__(128) uint8_t sm[];
#else
    __shared__ __align__(128) uint8_t sm[ST * (A_B + B_B)];
#endif

    if (blockDim.x != K_GM_THREADS || blockDim.y != 1 || blockDim.z != 1)
        return; /* uniform over the block: no thread reaches a barrier */
    const uint32_t m = p.m, n = p.n, k = p.k;
    const uint16_t *A = (const uint16_t *)p.a_va, *B = (const uint16_t *)p.b_va;
    float *C = (float *)p.c_va;
    const float *bias = (const float *)p.bias_va;
    const uint32_t ldc = p.ldc;
    const bool accum = p.accumulate != 0;
    const uint32_t tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const uint32_t wm = warp / K_GM_WN, wn = warp % K_GM_WN;
    const uint32_t tiles_m = (m + BM - 1) / BM, tiles_n = (n + BN - 1) / BN;
    const uint32_t tiles = tiles_m * tiles_n; /* < 2^32: launch precondition */
    const uint32_t kt_count = (k + BK - 1) / BK;
    const uint32_t sm0 = k_gm_smem(sm);

    for (uint32_t tile = (uint32_t)k_block_index(); tile < tiles; tile += (uint32_t)k_block_count()) {
        /* grouped raster: K_GM_GROUP tile-rows share the B columns they sweep */
        const uint32_t per_group = K_GM_GROUP * tiles_n, g = tile / per_group;
        const uint32_t first_m = g * K_GM_GROUP;
        const uint32_t gm = tiles_m - first_m < K_GM_GROUP ? tiles_m - first_m : K_GM_GROUP;
        const uint32_t in_g = tile - g * per_group;
        const uint32_t m0 = (first_m + in_g % gm) * BM, n0 = (in_g / gm) * BN;

        /* issue the cp.async copies of k-tile kt into stage s */
        auto load = [&](uint32_t kt, uint32_t s) {
            const uint32_t k0 = kt * BK;
            const uint32_t sa = sm0 + s * (A_B + B_B), sb = sa + A_B;
#pragma unroll
            for (int i = 0; i < A_CH / K_GM_THREADS; i++) {
                const uint32_t c = tid + i * K_GM_THREADS, r = c >> 2, ch = c & 3;
                const uint32_t gr = m0 + r, gk = k0 + ch * 8;
                const bool in = gr < m && gk < k;
                k_gm_cp16(sa + k_gm_off64(r, ch), in ? A + (uint64_t)gr * k + gk : A, in ? 16 : 0);
            }
#pragma unroll
            for (int i = 0; i < B_CH / K_GM_THREADS; i++) {
                const uint32_t c = tid + i * K_GM_THREADS;
                if (B_NK) { /* B[n][k]: the tile is BN rows of BK, like A */
                    const uint32_t r = c >> 2, ch = c & 3, gn = n0 + r, gk = k0 + ch * 8;
                    const bool in = gn < n && gk < k;
                    k_gm_cp16(sb + k_gm_off64(r, ch), in ? B + (uint64_t)gn * k + gk : B, in ? 16 : 0);
                } else { /* B[k][n]: BK rows of BN */
                    const uint32_t r = c / (BN / 8), ch = c % (BN / 8), gk = k0 + r, gn = n0 + ch * 8;
                    const bool in = gk < k && gn < n;
                    k_gm_cp16(sb + k_gm_offb(r, ch), in ? B + (uint64_t)gk * n + gn : B, in ? 16 : 0);
                }
            }
        };

        float acc[FM][FN][4];
#pragma unroll
        for (int i = 0; i < FM; i++)
#pragma unroll
            for (int j = 0; j < FN; j++)
                acc[i][j][0] = acc[i][j][1] = acc[i][j][2] = acc[i][j][3] = 0.0f;

#pragma unroll
        for (int s = 0; s < ST - 1; s++) {
            if ((uint32_t)s < kt_count)
                load(s, s);
            k_gm_commit(); /* always: the group count stays in step with the stages */
        }
        for (uint32_t kt = 0; kt < kt_count; kt++) {
            k_gm_wait<ST - 2>(); /* k-tile kt has landed (this thread's copies) */
            __syncthreads();     /* ... everyone's; and stage (kt-1) % ST is free */
            const uint32_t nk = kt + ST - 1;
            if (nk < kt_count)
                load(nk, nk % ST);
            k_gm_commit();
            const uint32_t sa = sm0 + (kt % ST) * (A_B + B_B), sb = sa + A_B;
#pragma unroll
            for (int kk = 0; kk < BK / 16; kk++) {
                uint32_t af[FM][4], bf[FN][2];
#pragma unroll
                for (int i = 0; i < FM; i++) {
                    /* lanes 0-15: rows 0-15 at k chunk 2kk; lanes 16-31: chunk 2kk+1 */
                    const uint32_t r = wm * WTM + i * 16 + (lane & 15), ch = kk * 2 + (lane >> 4);
                    k_gm_ldsm4(af[i], sa + k_gm_off64(r, ch));
                }
#pragma unroll
                for (int j = 0; j < FN; j += 2) {
                    uint32_t t[4];
                    if (B_NK) { /* matrices: (n0-7,k0-7) (n0-7,k8-15) (n8-15,k0-7) (n8-15,k8-15) */
                        const uint32_t r = wn * WTN + j * 8 + (lane & 7) + ((lane >> 4) << 3);
                        const uint32_t ch = kk * 2 + ((lane >> 3) & 1);
                        k_gm_ldsm4(t, sb + k_gm_off64(r, ch));
                    } else { /* k-major rows, transposed: (k0-7,n0-7) (k8-15,n0-7) (k0-7,n8-15) ... */
                        const uint32_t r = kk * 16 + (lane & 7) + (((lane >> 3) & 1) << 3);
                        const uint32_t ch = (wn * WTN + j * 8) / 8 + (lane >> 4);
                        k_gm_ldsm4_t(t, sb + k_gm_offb(r, ch));
                    }
                    bf[j][0] = t[0];
                    bf[j][1] = t[1];
                    bf[j + 1][0] = t[2];
                    bf[j + 1][1] = t[3];
                }
#pragma unroll
                for (int i = 0; i < FM; i++)
#pragma unroll
                    for (int j = 0; j < FN; j++)
                        k_gm_mma<BF16>(acc[i][j], af[i], bf[j][0], bf[j][1]);
            }
        }
        k_gm_wait<0>();
        __syncthreads(); /* the next tile's prologue overwrites stages still being read */

        /* accumulator layout: c0,c1 at (lane/4, 2*(lane%4) + {0,1}), c2,c3 eight rows down */
        const bool vec = !(ldc & 1) && !(n & 1); /* 8-byte aligned float2 (c is even) */
#pragma unroll
        for (int i = 0; i < FM; i++)
#pragma unroll
            for (int j = 0; j < FN; j++) {
                const uint32_t r0 = m0 + wm * WTM + i * 16 + (lane >> 2);
                const uint32_t c = n0 + wn * WTN + j * 8 + (lane & 3) * 2;
                if (c >= n)
                    continue;
                const bool pair = c + 1 < n;
                const float b0 = bias ? bias[c] : 0.0f, b1 = bias && pair ? bias[c + 1] : 0.0f;
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    const uint32_t r = r0 + 8 * h;
                    if (r >= m)
                        continue;
                    float *o = C + (uint64_t)r * ldc + c;
                    float v0 = acc[i][j][2 * h] + b0, v1 = acc[i][j][2 * h + 1] + b1;
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

#endif /* K_GEMM_MMA_H */
