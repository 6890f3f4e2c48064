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
 * src/ops/ops_llm_gemm.c (k_llm_gemm's sums). Tests: test_llm_dequant (both entries against
 * double, run twice), test_llm_batch.
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

/* The end of a block: its sums acc (fragment order: c0, c1 weight row lane / 4 of the warp's 16,
 * tokens 2 (lane % 4) + {0, 1}; c2, c3 eight rows down) into y, through the split-k reduction
 * when the k range was split. */
template <int FN>
static __device__ __forceinline__ void
k_sk_finish(const struct k_llm_gemm_sk_params &p, float (&acc)[FN][4])
{
    const struct k_llm_gemm_params &g = p.g;
    const uint32_t tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const uint32_t splits = p.splits, tile = blockIdx.x / splits, s = blockIdx.x - tile * splits;
    const uint32_t m0 = tile * SK_BM;
    if (splits > 1) {
        /* partials in fragment order: thread tid's FN x 4 floats at [block][j][tid] (float4s) */
        float4 *mine = (float4 *)p.part_va + (uint64_t)blockIdx.x * FN * K_LLM_GEMM_SK_THREADS;
#pragma unroll
        for (int j = 0; j < FN; j++)
            __stcg(&mine[j * K_LLM_GEMM_SK_THREADS + tid], make_float4(acc[j][0], acc[j][1], acc[j][2], acc[j][3]));
        if (!k_cta_arrive_last((uint32_t *)p.cnt_va + tile, splits))
            return;
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
    k_sk_finish<FN>(p, acc);
}

/* ==== k_llm_gemm_sk_q8_0: the weights as Q8_0R rows (k_llm_quant.h: groups of 1024 values, lo[32][16]
 * | hi[32][16] | d[32]), dequantized in registers straight into the mma's A fragments.
 * Why: a batch step read the f16 copy of Q8_0 weights, 2 bytes a value against the file's 1.06
 * (H200 1B Q8_0, 8 sequences: the matmuls 0.98 of a 1.36 ms step at 1.3-2.8 TB/s). A first form
 * that wrote the dequantized tile to shared memory for ldmatrix (a second barrier per stage, the
 * conversion not overlapped) ran slower than the f16 copy: gate 15.3 vs 12.1 us at 8 sequences.
 * A stage is 128 k values: of 64 rows the quants of 4 blocks (lo 64 B and hi 64 B, contiguous in
 * the group) and their 4 scales (8 B), and the tokens' 128 f16 values, two 64-wide halves.
 * The sum over k does not care in which order k is visited, so each 16-k mma step takes a
 * permuted set: in a 64-k half, thread (g = lane / 4, t = lane % 4) reads 16 quants of its rows
 * g, g + 8 at k 16t .. 16t+15 (one 16-byte load each: the lo or hi part of one block) and for
 * step s uses k 16t + 4s .. +3 as the fragment's k 2t, 2t+1, 2t+8, 2t+9; the tokens' fragment
 * takes the same k: 8 bytes of each token row at 16t + 4s (one 16-byte load serves two steps).
 * A value is q * d rounded once to f16 (the f16 copy's value, k_llm_dequant_f16): q to f16 as
 * (0x6400 | (q ^ 0x80)) - 1152 (exact), times d. So y equals k_llm_gemm_sk's over the f16 copy
 * up to the order of the f32 sums. Taken up to 32 tokens (llm_prefill.c: at 64 the f16 copy won).
 * H200 1B Q8_0 batch steps: 6211 / 20367 / 26709 tokens/s at 8 / 32 / 64 sequences against
 * 5671 / 19389 / 27231 over the f16 copy; ring stages sized to the token tile (5 / 4 / 3) lost. */
#define SK_QK 128                              /* k per stage */
#define SK_Q_RAW (SK_BM * SK_QK + SK_BM * 8)   /* quants, then scales */
#define SK_Q_STAGE (SK_Q_RAW + 64 * SK_QK * 2) /* + the tokens (laid out for NT 64) */
#define SK_Q_ST 3
static_assert(SK_Q_ST * SK_Q_STAGE == K_LLM_GEMM_SK_Q8_SHARED_B, "k_llm_gemm_params.h");

/* 8-byte global -> shared copy (cp.async.ca: cg copies only 16) */
static __device__ __forceinline__ void
k_sk_cp8(uint32_t dst, const void *src)
{
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8;\n" ::"r"(dst), "l"(src));
}

/* two int8 of w (bytes sel: 0x4140 the low two, 0x4342 the high two) as f16 q * d */
static __device__ __forceinline__ uint32_t
k_sk_q2(uint32_t w, uint32_t sel, __half2 d)
{
    uint32_t h = __byte_perm(w ^ 0x80808080u, 0x64646464u, sel);
    __half2 v = __hsub2(*(__half2 *)&h, __half2half2(__ushort_as_half(0x6480))); /* 1152 */
    v = __hmul2(v, d);
    return *(uint32_t *)&v;
}

/* Byte offset of quant chunk ch (0-3: lo of the stage's blocks, 4-7: hi) of row r: chunk XOR
 * 2 (r & 1), so that the chunks {2h, 2h+1, 4+2h, 5+2h} a phase reads of rows r and r + 1 (the
 * four t of two g) fall on disjoint banks. */
static __device__ __forceinline__ uint32_t
k_sk_qoff(uint32_t r, uint32_t ch)
{
    return r * 128 + ((ch ^ ((r & 1) << 1)) & 7) * 16;
}

static __device__ __forceinline__ void
k_sk_lds128(uint32_t (&v)[4], uint32_t addr)
{
    asm volatile("ld.shared.v4.b32 {%0,%1,%2,%3}, [%4];\n" : "=r"(v[0]), "=r"(v[1]), "=r"(v[2]), "=r"(v[3]) : "r"(addr));
}

template <int NT>
static __device__ __forceinline__ void
k_sk_q8_body(const struct k_llm_gemm_sk_params &p, uint8_t *sm)
{
    constexpr int FN = NT / 8;
    constexpr int B_CH = NT * (SK_QK / 8); /* 16-byte chunks of the tokens per stage */
    const struct k_llm_gemm_params &g = p.g;
    const uint32_t tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const uint32_t splits = p.splits, tile = blockIdx.x / splits, s = blockIdx.x - tile * splits;
    const uint32_t m0 = tile * SK_BM, k0 = s * p.k_chunk;
    const uint32_t k1 = k0 + p.k_chunk < g.k ? k0 + p.k_chunk : g.k;
    const uint32_t kt_count = k1 > k0 ? (k1 - k0) / SK_QK : 0;
    const uint8_t *W = (const uint8_t *)g.w_va;
    const uint16_t *X = (const uint16_t *)g.x_va;
    const uint64_t row_B = (uint64_t)(g.k / 1024) * 1088;
    const uint32_t sm0 = k_gm_smem(sm);

    auto load = [&](uint32_t kt, uint32_t st) {
        const uint32_t kb = k0 + kt * SK_QK, grp = kb / 1024, b0 = kb % 1024 / 32;
        const uint32_t sq = sm0 + st * SK_Q_STAGE, sb = sq + SK_Q_RAW;
#pragma unroll
        for (int i = 0; i < SK_BM * 8 / K_LLM_GEMM_SK_THREADS; i++) {
            const uint32_t c = tid + i * K_LLM_GEMM_SK_THREADS, r = c >> 3, ch = c & 7;
            const uint32_t gr = m0 + r < g.rows ? m0 + r : g.rows - 1; /* (rows past the end: unused) */
            const uint8_t *gp = W + gr * row_B + grp * 1088 + (ch < 4 ? 0 : 512) + (b0 + (ch & 3)) * 16;
            k_gm_cp16(sq + k_sk_qoff(r, ch), gp, 16);
        }
        if (tid < SK_BM) {
            const uint32_t gr = m0 + tid < g.rows ? m0 + tid : g.rows - 1;
            k_sk_cp8(sq + SK_BM * SK_QK + tid * 8, W + gr * row_B + grp * 1088 + 1024 + b0 * 2);
        }
        /* tokens: half h, row r, chunk ch */
#pragma unroll
        for (int i = 0; i < (B_CH + K_LLM_GEMM_SK_THREADS - 1) / K_LLM_GEMM_SK_THREADS; i++) {
            const uint32_t c = tid + i * K_LLM_GEMM_SK_THREADS;
            if (c >= (uint32_t)B_CH)
                break;
            const uint32_t h = c / (NT * 8), r = (c >> 3) % NT, ch = c & 7;
            const uint32_t gk = kb + h * 64 + ch * 8;
            const bool in = r < g.n;
            k_gm_cp16(sb + h * (NT * 128) + k_sk_off(r, ch), in ? X + (uint64_t)r * g.k + gk : X, in ? 16 : 0);
        }
    };

    float acc[FN][4];
#pragma unroll
    for (int j = 0; j < FN; j++)
        acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.0f;
#pragma unroll
    for (int st = 0; st < SK_Q_ST - 1; st++) {
        if ((uint32_t)st < kt_count)
            load(st, st);
        k_gm_commit();
    }
    const uint32_t gq = lane >> 2, tq = lane & 3, r0 = warp * 16 + gq; /* rows r0, r0 + 8 */
    for (uint32_t kt = 0; kt < kt_count; kt++) {
        k_gm_wait<SK_Q_ST - 2>();
        __syncthreads(); /* stage kt landed; every warp is past stage kt - 1 (its slot is free) */
        if (kt + SK_Q_ST - 1 < kt_count)
            load(kt + SK_Q_ST - 1, (kt + SK_Q_ST - 1) % SK_Q_ST);
        k_gm_commit();
        const uint32_t sq = sm0 + (kt % SK_Q_ST) * SK_Q_STAGE, sb = sq + SK_Q_RAW;
#pragma unroll
        for (int h = 0; h < 2; h++) {
            /* this thread's 16 quants of rows r0, r0 + 8: block 2h + tq / 2, its lo (tq even) or hi part */
            const uint32_t ch = (tq & 1) * 4 + 2 * h + (tq >> 1), blk = 2 * h + (tq >> 1);
            uint32_t qa[4], qb[4];
            k_sk_lds128(qa, sq + k_sk_qoff(r0, ch));
            k_sk_lds128(qb, sq + k_sk_qoff(r0 + 8, ch));
            uint16_t da, db;
            asm volatile("ld.shared.u16 %0, [%1];\n" : "=h"(da) : "r"(sq + SK_BM * SK_QK + r0 * 8 + blk * 2));
            asm volatile("ld.shared.u16 %0, [%1];\n" : "=h"(db) : "r"(sq + SK_BM * SK_QK + (r0 + 8) * 8 + blk * 2));
            const __half2 d2a = __half2half2(__ushort_as_half(da)), d2b = __half2half2(__ushort_as_half(db));
            const uint32_t sbh = sb + h * (NT * 128);
#pragma unroll
            for (int s2 = 0; s2 < 2; s2++) { /* steps 2 s2, 2 s2 + 1: the tokens' 16 bytes at k 16t + 8 s2 */
                uint32_t bt[FN][4];
#pragma unroll
                for (int j = 0; j < FN; j++)
                    k_sk_lds128(bt[j], sbh + k_sk_off(j * 8 + gq, 2 * tq + s2));
#pragma unroll
                for (int u = 0; u < 2; u++) {
                    const int st = 2 * s2 + u; /* quant word st: k 16t + 4 st .. +3 */
                    uint32_t af[4];
                    af[0] = k_sk_q2(qa[st], 0x4140, d2a);
                    af[1] = k_sk_q2(qb[st], 0x4140, d2b);
                    af[2] = k_sk_q2(qa[st], 0x4342, d2a);
                    af[3] = k_sk_q2(qb[st], 0x4342, d2b);
#pragma unroll
                    for (int j = 0; j < FN; j++)
                        k_gm_mma<false>(acc[j], af, bt[j][2 * u], bt[j][2 * u + 1]);
                }
            }
        }
    }
    k_gm_wait<0>();
    k_sk_finish<FN>(p, acc);
}

/* ==== k_llm_gemm_sk_q4_k: the same over Q4_KR rows (k_llm_quant.h: groups of 2048 values, qa[32][16]
 * | qb[32][16] | head[8][16]), n <= 32 tokens. A stage is one block (256 k) of 64 rows: its four
 * tasks' qa and qb (64 + 64 B, contiguous in the group) and its head (d, dmin, 12 scale bytes).
 * Thread t of a quad takes task t of the block (h = t / 2, l0 = 16 (t % 2)): its 32 bytes hold the
 * values 128h + l0 + 32c + 0..15 for sub-blocks c = 0..3 (qa low / high nibbles, qb low / high);
 * mma step (c, s) takes k 128h + l0 + 32c + 4s .. +3 of each thread, the tokens' fragment the
 * same 4 values (8 bytes of the token row; one 16-byte load serves two steps). A value is
 * q * ds - dm in one f16 fma, ds = d * sc and dm = dmin * m each rounded to f16: within an f16
 * step or two of the f16 copy's d * sc * q - dmin * m rounded once (the twin and test_llm_dequant
 * compute exactly this). */
#define SK_KK 256                           /* k per stage: one Q4_K block */
#define SK_K_RAW (SK_BM * 128 + SK_BM * 16) /* quants, then heads */
#define SK_K_STAGE (SK_K_RAW + 32 * SK_KK * 2)
#define SK_K_ST 3
static_assert(SK_K_ST * SK_K_STAGE == K_LLM_GEMM_SK_Q4K_SHARED_B, "k_llm_gemm_params.h");

/* quant chunk ch (0-3 qa of the block's tasks, 4-7 qb) of row r: chunk XOR 4 (r & 1), so a phase's
 * rows r, r + 1 (the quad's four chunks each) fall on disjoint banks */
static __device__ __forceinline__ uint32_t
k_sk_koff(uint32_t r, uint32_t ch)
{
    return r * 128 + ((ch ^ ((r & 1) << 2)) & 7) * 16;
}

/* four 4-bit q of w (nibbles already masked into bytes) times ds minus dm, as two f16 pairs */
static __device__ __forceinline__ void
k_sk_q4x4(uint32_t w, __half2 ds, __half2 ndm, uint32_t &lo, uint32_t &hi)
{
    const __half2 k1024 = __half2half2(__ushort_as_half(0x6400));
    uint32_t a = __byte_perm(w, 0x64646464u, 0x4140), b = __byte_perm(w, 0x64646464u, 0x4342);
    __half2 va = __hfma2(__hsub2(*(__half2 *)&a, k1024), ds, ndm);
    __half2 vb = __hfma2(__hsub2(*(__half2 *)&b, k1024), ds, ndm);
    lo = *(uint32_t *)&va, hi = *(uint32_t *)&vb;
}

template <int NT>
static __device__ __forceinline__ void
k_sk_q4k_body(const struct k_llm_gemm_sk_params &p, uint8_t *sm)
{
    constexpr int FN = NT / 8;
    constexpr int B_CH = NT * (SK_KK / 8);
    const struct k_llm_gemm_params &g = p.g;
    const uint32_t tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const uint32_t splits = p.splits, tile = blockIdx.x / splits, s = blockIdx.x - tile * splits;
    const uint32_t m0 = tile * SK_BM, k0 = s * p.k_chunk;
    const uint32_t k1 = k0 + p.k_chunk < g.k ? k0 + p.k_chunk : g.k;
    const uint32_t kt_count = k1 > k0 ? (k1 - k0) / SK_KK : 0;
    const uint8_t *W = (const uint8_t *)g.w_va;
    const uint16_t *X = (const uint16_t *)g.x_va;
    const uint64_t row_B = (uint64_t)(g.k / 2048) * 1152;
    const uint32_t sm0 = k_gm_smem(sm);

    auto load = [&](uint32_t kt, uint32_t st) {
        const uint32_t kb = k0 + kt * SK_KK, grp = kb / 2048, b = kb % 2048 / 256;
        const uint32_t sq = sm0 + st * SK_K_STAGE, sb = sq + SK_K_RAW;
#pragma unroll
        for (int i = 0; i < SK_BM * 9 / K_LLM_GEMM_SK_THREADS + 1; i++) {
            const uint32_t c = tid + i * K_LLM_GEMM_SK_THREADS, r = c / 9, ch = c % 9;
            if (c >= SK_BM * 9)
                break;
            const uint32_t gr = m0 + r < g.rows ? m0 + r : g.rows - 1; /* (rows past the end: unused) */
            const uint8_t *gq = W + gr * row_B + grp * 1152;
            if (ch < 8)
                k_gm_cp16(sq + k_sk_koff(r, ch), gq + (ch < 4 ? 0 : 512) + (4 * b + (ch & 3)) * 16, 16);
            else
                k_gm_cp16(sq + SK_BM * 128 + r * 16, gq + 1024 + 16 * b, 16);
        }
        /* tokens: quarter h (64 k), row r, chunk ch */
#pragma unroll
        for (int i = 0; i < (B_CH + K_LLM_GEMM_SK_THREADS - 1) / K_LLM_GEMM_SK_THREADS; i++) {
            const uint32_t c = tid + i * K_LLM_GEMM_SK_THREADS;
            if (c >= (uint32_t)B_CH)
                break;
            const uint32_t h = c / (NT * 8), r = (c >> 3) % NT, ch = c & 7;
            const uint32_t gk = kb + h * 64 + ch * 8;
            const bool in = r < g.n;
            k_gm_cp16(sb + h * (NT * 128) + k_sk_off(r, ch), in ? X + (uint64_t)r * g.k + gk : X, in ? 16 : 0);
        }
    };

    float acc[FN][4];
#pragma unroll
    for (int j = 0; j < FN; j++)
        acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.0f;
#pragma unroll
    for (int st = 0; st < SK_K_ST - 1; st++) {
        if ((uint32_t)st < kt_count)
            load(st, st);
        k_gm_commit();
    }
    const uint32_t gq = lane >> 2, tq = lane & 3, r0 = warp * 16 + gq; /* rows r0, r0 + 8 */
    const uint32_t hq = tq >> 1;
    for (uint32_t kt = 0; kt < kt_count; kt++) {
        k_gm_wait<SK_K_ST - 2>();
        __syncthreads(); /* stage kt landed; every warp is past stage kt - 1 (its slot is free) */
        if (kt + SK_K_ST - 1 < kt_count)
            load(kt + SK_K_ST - 1, (kt + SK_K_ST - 1) % SK_K_ST);
        k_gm_commit();
        const uint32_t sq = sm0 + (kt % SK_K_ST) * SK_K_STAGE, sb = sq + SK_K_RAW;
        uint32_t qa[2][4], qb[2][4];
        __half2 ds[2][4], ndm[2][4]; /* per row (r0, r0 + 8) and sub-block c */
#pragma unroll
        for (int rr = 0; rr < 2; rr++) {
            const uint32_t r = r0 + 8 * rr;
            uint32_t hd[4];
            k_sk_lds128(qa[rr], sq + k_sk_koff(r, tq));
            k_sk_lds128(qb[rr], sq + k_sk_koff(r, 4 + tq));
            k_sk_lds128(hd, sq + SK_BM * 128 + r * 16);
            uint32_t sc4, m4;
            k_llm_scale_min_k4_x4(hd[1], hd[2], hd[3], hq, &sc4, &m4);
            const float d = __half2float(__ushort_as_half((uint16_t)(hd[0] & 0xffff)));
            const float dmin = __half2float(__ushort_as_half((uint16_t)(hd[0] >> 16)));
#pragma unroll
            for (int c = 0; c < 4; c++) {
                ds[rr][c] = __half2half2(__float2half_rn(d * (float)((sc4 >> (8 * c)) & 0xff)));
                ndm[rr][c] = __half2half2(__hneg(__float2half_rn(dmin * (float)((m4 >> (8 * c)) & 0xff))));
            }
        }
#pragma unroll
        for (int c = 0; c < 4; c++) {
            /* the tokens' quarter 2h + c / 2, chunk 2 (t % 2) + 4 (c % 2) + s2 */
            const uint32_t sbq = sb + (2 * hq + (c >> 1)) * (NT * 128);
#pragma unroll
            for (int s2 = 0; s2 < 2; s2++) {
                uint32_t bt[FN][4];
#pragma unroll
                for (int j = 0; j < FN; j++)
                    k_sk_lds128(bt[j], sbq + k_sk_off(j * 8 + gq, 2 * (tq & 1) + 4 * (c & 1) + s2));
#pragma unroll
                for (int u = 0; u < 2; u++) {
                    const int sw = 2 * s2 + u; /* quant word: k 32c + 4 sw .. +3 of this task */
                    uint32_t af[4];
                    const uint32_t wa = (c < 2 ? qa[0][sw] : qb[0][sw]) >> (4 * (c & 1));
                    const uint32_t wb = (c < 2 ? qa[1][sw] : qb[1][sw]) >> (4 * (c & 1));
                    k_sk_q4x4(wa & 0x0F0F0F0Fu, ds[0][c], ndm[0][c], af[0], af[2]);
                    k_sk_q4x4(wb & 0x0F0F0F0Fu, ds[1][c], ndm[1][c], af[1], af[3]);
#pragma unroll
                    for (int j = 0; j < FN; j++)
                        k_gm_mma<false>(acc[j], af, bt[j][2 * u], bt[j][2 * u + 1]);
                }
            }
        }
    }
    k_gm_wait<0>();
    k_sk_finish<FN>(p, acc);
}

extern "C" __global__ void __launch_bounds__(K_LLM_GEMM_SK_THREADS)
k_llm_gemm_sk_q4_k(const struct k_llm_gemm_sk_params p)
{
    extern __shared__ __align__(128) uint8_t sm[];
    if (blockDim.x != K_LLM_GEMM_SK_THREADS || blockDim.y != 1 || blockDim.z != 1 || !p.splits || !p.k_chunk ||
        p.k_chunk % SK_KK || p.g.k % 2048 || p.g.n > 32 ||
        blockIdx.x >= p.splits * ((p.g.rows + SK_BM - 1) / SK_BM))
        return; /* uniform over the block */
    if (p.g.n <= 16)
        k_sk_q4k_body<16>(p, sm);
    else
        k_sk_q4k_body<32>(p, sm);
}

extern "C" __global__ void __launch_bounds__(K_LLM_GEMM_SK_THREADS)
k_llm_gemm_sk_q8_0(const struct k_llm_gemm_sk_params p)
{
    extern __shared__ __align__(128) uint8_t sm[];
    if (blockDim.x != K_LLM_GEMM_SK_THREADS || blockDim.y != 1 || blockDim.z != 1 || !p.splits || !p.k_chunk ||
        p.k_chunk % SK_QK || p.g.k % 1024 || p.g.n > 64 ||
        blockIdx.x >= p.splits * ((p.g.rows + SK_BM - 1) / SK_BM))
        return; /* uniform over the block */
    if (p.g.n <= 16)
        k_sk_q8_body<16>(p, sm);
    else if (p.g.n <= 32)
        k_sk_q8_body<32>(p, sm);
    else
        k_sk_q8_body<64>(p, sm);
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
