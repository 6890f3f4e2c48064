/* SPDX-License-Identifier: MIT */
/*
 * k_llm_gemm_sk.cu - the tensor-core matmul of a few tokens (n <= 64: a batch decode step, a short
 * prefill): k_llm_gemm's contract, y (+)= x16 . w16^T + b, with the weight rows as the mma's M
 * side and the tokens as its N side, and the k range split over several blocks.
 *
 * Why: k_llm_gemm tiles 128 tokens x 64 rows, so at n <= 64 a 2048-row matrix is 32 blocks on
 * 132 SMs each streaming its whole k range: H200 1B batch step, 1-64 sequences, the down matrix
 * (2048 x 8192 f16) read at ~385 GB/s, Q|K|V and O at 340-515 GB/s. Here a block streams 64
 * weight rows x k_chunk values through a cp.async ring (dynamic shared memory) and the launcher
 * picks `splits` so that the grid is about two blocks per SM.
 *
 * Split k: every block of a tile writes its partial sums (f32, in its fragments' own order) to
 * part_va, then counts itself in cnt_va[tile]; the block that counts last sums the tile's
 * partials in split order 0, 1, .. (its own from registers at its place), so the result does
 * not depend on which block finishes when, and resets the counter for the next launch.
 * splits == 1 writes y directly. Params and preconditions: k_llm_gemm_params.h. Twin:
 * src/ops/ops_llm_gemm.c (k_llm_gemm's sums). Tests: hcq suite kernel_llm_gemm_sk
 * (tests/hcq/hcq_suite_kernels.c), test_llm_batch.
 * Error: k_llm_gemm's (f16 operands, f32 sums in another order).
 */
#define K_GM_BM 64
#define K_GM_BN 64
#define K_GM_WM 2
#define K_GM_WN 2
#define K_GM_STAGES 4
#include "k_gemm_mma.h"
#include "k_llm_gemm_params.h"

#define SK_BM 64  /* weight rows per block tile: 4 warps x 16 */
#define SK_BK 64  /* k per stage: 128-byte rows of 8 chunks */
#define SK_ST 4   /* stages */

static_assert(SK_BM == K_LLM_GEMM_SK_ROWS && 32 * (SK_BM / 16) == K_LLM_GEMM_SK_THREADS, "k_llm_gemm_params.h");
static_assert(SK_ST * (SK_BM + 64) * SK_BK * 2 == K_LLM_GEMM_SK_SHARED_B, "k_llm_gemm_params.h");

/* Byte offset of 16-byte chunk ch of row r in a tile of 128-byte rows: the chunk XOR row % 8, so
 * the 8 rows one ldmatrix phase reads hit 8 distinct bank groups. */
static __device__ __forceinline__ uint32_t
k_sk_off(uint32_t r, uint32_t ch)
{
    return r * 128 + ((ch ^ r) & 7) * 16;
}

template <int NT>
static __device__ __forceinline__ void
k_sk_body(const struct k_llm_gemm_sk_params &p, uint8_t *sm)
{
    constexpr int FN = NT / 8;                                      /* n8 mma tiles per warp */
    constexpr int A_B = SK_BM * SK_BK * 2, B_B = NT * SK_BK * 2;    /* bytes per stage */
    constexpr int STAGE_B = A_B + 64 * SK_BK * 2;                   /* (the ring is laid out for NT 64) */
    constexpr int A_CH = A_B / 16, B_CH = B_B / 16;
    static_assert(FN % 2 == 0, "two n8 tiles per ldmatrix.x4");
    const struct k_llm_gemm_params &g = p.g;
    const uint32_t tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const uint32_t splits = p.splits, tile = blockIdx.x / splits, s = blockIdx.x - tile * splits;
    const uint32_t m0 = tile * SK_BM, k0 = s * p.k_chunk;
    const uint32_t k1 = k0 + p.k_chunk < g.k ? k0 + p.k_chunk : g.k;
    const uint32_t kt_count = k1 > k0 ? (k1 - k0 + SK_BK - 1) / SK_BK : 0;
    const uint16_t *W = (const uint16_t *)g.w_va, *X = (const uint16_t *)g.x_va;
    const uint32_t sm0 = k_gm_smem(sm);

    auto load = [&](uint32_t kt, uint32_t st) {
        const uint32_t kb = k0 + kt * SK_BK;
        const uint32_t sa = sm0 + st * STAGE_B, sb = sa + A_B;
#pragma unroll
        for (int i = 0; i < (A_CH + K_LLM_GEMM_SK_THREADS - 1) / K_LLM_GEMM_SK_THREADS; i++) {
            const uint32_t c = tid + i * K_LLM_GEMM_SK_THREADS, r = c >> 3, ch = c & 7;
            const uint32_t gr = m0 + r, gk = kb + ch * 8;
            const bool in = gr < g.rows && gk < k1;
            k_gm_cp16(sa + k_sk_off(r, ch), in ? W + (uint64_t)gr * g.k + gk : W, in ? 16 : 0);
        }
#pragma unroll
        for (int i = 0; i < (B_CH + K_LLM_GEMM_SK_THREADS - 1) / K_LLM_GEMM_SK_THREADS; i++) {
            const uint32_t c = tid + i * K_LLM_GEMM_SK_THREADS, r = c >> 3, ch = c & 7;
            if (c >= (uint32_t)B_CH)
                break;
            const uint32_t gk = kb + ch * 8;
            const bool in = r < g.n && gk < k1;
            k_gm_cp16(sb + k_sk_off(r, ch), in ? X + (uint64_t)r * g.k + gk : X, in ? 16 : 0);
        }
    };

    float acc[FN][4];
#pragma unroll
    for (int j = 0; j < FN; j++)
        acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.0f;
#pragma unroll
    for (int st = 0; st < SK_ST - 1; st++) {
        if ((uint32_t)st < kt_count)
            load(st, st);
        k_gm_commit();
    }
    for (uint32_t kt = 0; kt < kt_count; kt++) {
        k_gm_wait<SK_ST - 2>();
        __syncthreads();
        if (kt + SK_ST - 1 < kt_count)
            load(kt + SK_ST - 1, (kt + SK_ST - 1) % SK_ST);
        k_gm_commit();
        const uint32_t sa = sm0 + (kt % SK_ST) * STAGE_B, sb = sa + A_B;
#pragma unroll
        for (int kk = 0; kk < SK_BK / 16; kk++) {
            uint32_t af[4];
            /* lanes 0-15: rows 0-15 at chunk 2kk; 16-31: chunk 2kk + 1 */
            k_gm_ldsm4(af, sa + k_sk_off(warp * 16 + (lane & 15), kk * 2 + (lane >> 4)));
#pragma unroll
            for (int j = 0; j < FN; j += 2) {
                uint32_t t[4]; /* (n0-7,k0-7) (n0-7,k8-15) (n8-15,k0-7) (n8-15,k8-15) */
                k_gm_ldsm4(t, sb + k_sk_off(j * 8 + (lane & 7) + ((lane >> 4) << 3), kk * 2 + ((lane >> 3) & 1)));
                k_gm_mma<false>(acc[j], af, t[0], t[1]);
                k_gm_mma<false>(acc[j + 1], af, t[2], t[3]);
            }
        }
    }
    k_gm_wait<0>();

    if (splits > 1) {
        /* partials in fragment order: thread tid's FN x 4 floats at [block][j][tid] (float4s) */
        float4 *mine = (float4 *)p.part_va + (uint64_t)blockIdx.x * FN * K_LLM_GEMM_SK_THREADS;
#pragma unroll
        for (int j = 0; j < FN; j++)
            __stcg(&mine[j * K_LLM_GEMM_SK_THREADS + tid], make_float4(acc[j][0], acc[j][1], acc[j][2], acc[j][3]));
        __threadfence();
        __syncthreads();
        __shared__ uint32_t last;
        if (tid == 0)
            last = atomicAdd((unsigned int *)p.cnt_va + tile, 1u) == splits - 1;
        __syncthreads();
        if (!last)
            return;
        __threadfence(); /* the other blocks' partials (their fence came before their count) */
        float sum[FN][4];
#pragma unroll
        for (int j = 0; j < FN; j++)
            sum[j][0] = sum[j][1] = sum[j][2] = sum[j][3] = 0.0f;
        const float4 *all = (const float4 *)p.part_va + (uint64_t)tile * splits * FN * K_LLM_GEMM_SK_THREADS;
        /* RB pieces' loads in flight at once (16 float4s), then added in piece order */
        constexpr int RB = 16 / FN;
        for (uint32_t q0 = 0; q0 < splits; q0 += RB) {
            float4 v[RB][FN];
#pragma unroll
            for (int u = 0; u < RB; u++)
#pragma unroll
                for (int j = 0; j < FN; j++)
                    v[u][j] = q0 + u < splits && q0 + u != s
                                  ? __ldcg(&all[((uint64_t)(q0 + u) * FN + j) * K_LLM_GEMM_SK_THREADS + tid])
                                  : make_float4(acc[j][0], acc[j][1], acc[j][2], acc[j][3]);
#pragma unroll
            for (int u = 0; u < RB; u++)
#pragma unroll
                for (int j = 0; j < FN; j++)
                    if (q0 + u < splits)
                        sum[j][0] += v[u][j].x, sum[j][1] += v[u][j].y, sum[j][2] += v[u][j].z,
                            sum[j][3] += v[u][j].w;
        }
#pragma unroll
        for (int j = 0; j < FN; j++)
            acc[j][0] = sum[j][0], acc[j][1] = sum[j][1], acc[j][2] = sum[j][2], acc[j][3] = sum[j][3];
        if (tid == 0)
            ((unsigned int *)p.cnt_va)[tile] = 0;
    }

    /* c0, c1: weight row lane / 4, tokens 2 (lane % 4) + {0, 1}; c2, c3: eight rows down.
     * Accumulating: every old value is loaded before any store (a load after each store, which the
     * compiler must assume may alias, made 32 L2 round trips in a row: the O and down matmuls of a
     * 64-sequence step took 21 and 33 us against 13 and 16 for Q|K|V and gate of their size). */
    float *Y = (float *)g.y_va;
    const float *bias = (const float *)g.b_va;
    const uint32_t rb = m0 + warp * 16 + (lane >> 2), ib = (lane & 3) * 2;
    const float b0 = bias && rb < g.rows ? bias[rb] : 0.0f, b1 = bias && rb + 8 < g.rows ? bias[rb + 8] : 0.0f;
#pragma unroll
    for (int j = 0; j < FN; j++)
#pragma unroll
        for (int c = 0; c < 4; c++) {
            const uint32_t r = rb + 8 * (c >> 1), i = j * 8 + ib + (c & 1);
            acc[j][c] += c < 2 ? b0 : b1;
            if (g.accumulate && r < g.rows && i < g.n)
                acc[j][c] = __ldcg(Y + (uint64_t)i * g.y_stride + r) + acc[j][c];
        }
#pragma unroll
    for (int j = 0; j < FN; j++)
#pragma unroll
        for (int c = 0; c < 4; c++) {
            const uint32_t r = rb + 8 * (c >> 1), i = j * 8 + ib + (c & 1);
            if (r < g.rows && i < g.n)
                Y[(uint64_t)i * g.y_stride + r] = acc[j][c];
        }
}

extern "C" __global__ void __launch_bounds__(K_LLM_GEMM_SK_THREADS)
k_llm_gemm_sk(const struct k_llm_gemm_sk_params p)
{
    extern __shared__ __align__(128) uint8_t sm[];
    if (blockDim.x != K_LLM_GEMM_SK_THREADS || blockDim.y != 1 || blockDim.z != 1 || !p.splits || !p.k_chunk ||
        p.k_chunk % SK_BK || p.g.n > 64 || blockIdx.x >= p.splits * ((p.g.rows + SK_BM - 1) / SK_BM))
        return; /* uniform over the block */
    if (p.g.n <= 16)
        k_sk_body<16>(p, sm);
    else if (p.g.n <= 32)
        k_sk_body<32>(p, sm);
    else
        k_sk_body<64>(p, sm);
}
