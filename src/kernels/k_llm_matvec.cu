// SPDX-License-Identifier: MIT
/*
 * k_llm_matvec.cu - the decode mat-vec (one token): y = W x' for quantized W, with the
 * RMSNorm of x folded into the prologue, several weight tensors per launch (Q|K|V), the
 * residual add (ACC) and gate/up/SiLU (SWIGLU) fused. Two families share the contract:
 * k_llm_matvec / _wide (f32 activations, the file's layout; described first) and
 * k_llm_matvec_q8 (int8 activations, repacked rows; the default decode path, second half of
 * the file). Parameters and the supported types: k_llm_matvec.h. CPU twin:
 * src/ops/ops_llm_matvec.c. Tests: tests/unit/test_llm_e2e.c (end to end, every device vs
 * the twins) and tests/unit/test_llm_matvec.c (every entry vs a double-precision dot on
 * random rows of every type and mode, plus the int8 error bound).
 *
 * Why the f32 kernel's shape (decode is a pure weight stream: every weight byte is read once per token):
 *  - one CTA (256 threads) stages a tile of K_LLM_MV_ROWS rows x one chunk of k (<= 1088 B
 *    per row) from global memory with aligned 16-byte loads into shared memory; the next
 *    chunk's loads are issued before the current one is decoded, so each thread keeps
 *    ~3 x 16 B in flight and a CTA ~9 KB (5 CTAs per SM by shared memory);
 *  - quant blocks of 34 (Q8_0), 18 (Q4_0) or 210 (Q6_K) bytes are only 2-byte aligned, so
 *    16-byte global loads are only possible on the raw byte stream; the decode then reads
 *    shared memory with 4-byte loads and byte_perm (ld8 below);
 *  - a thread decodes 8 consecutive values of one row per step (one scale, 8 quants) and
 *    reuses its 8 activations (registers) for every row of the tile it owns;
 *  - x' (normalized activations, f32) is formed from x (a few KB, L1/L2 resident) as each
 *    thread reads its 8 values; only the norm's scale is a prologue (one pass over x per
 *    CTA; CTAs loop over tiles, grid about 4 per SM, so it is paid a few hundred times);
 *  - shared memory is only the stage (~9 KB), so several CTAs share an SM even where the
 *    launch path sizes the carve-out for one CTA.
 */
#include "k_llm_matvec.h"
#include "k_llm_quant.h"

#define WARP 32
#define NW (K_LLM_MV_THREADS / WARP)
#define R K_LLM_MV_ROWS
/* Two variants differ in the stage: SB bytes per row and chunk (k_llm_matvec 1104,
 * k_llm_matvec_wide 2192: twice the bytes in flight per CTA, 8 rows per thread). */
#define STAGE_W(SB) ((SB) / 16) /* 16-byte words per staged row */
#define LOADS(SB) ((R * STAGE_W(SB) + K_LLM_MV_THREADS - 1) / K_LLM_MV_THREADS)

_Static_assert(K_LLM_MV_STAGE_B % 16 == 0 && K_LLM_MV_STAGE_WIDE_B % 16 == 0, "stage rows are 16-byte aligned");
_Static_assert(K_LLM_MV_THREADS == 256 && R == 8, "the reduction assumes 8 warps x 8 rows");

__device__ __forceinline__ float
mv_warp_sum(float v)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

/* 8 bytes at a 2-byte aligned shared-memory address: three aligned words and byte_perm
 * (the staged row has 16 bytes of slack, so the third word is always inside it). */
__device__ __forceinline__ uint2
ld8(const uint8_t *p)
{
    /* pointer arithmetic, not an integer round trip: the compiler keeps the shared address
     * space (LDS) instead of generic loads */
    uint32_t mis = (uint32_t)(uintptr_t)p & 3u;
    const uint32_t *w = (const uint32_t *)(p - mis);
    uint32_t sel = (mis & 2) ? 0x5432u : 0x3210u;
    uint32_t w0 = w[0], w1 = w[1], w2 = w[2];
    return make_uint2(__byte_perm(w0, w1, sel), __byte_perm(w1, w2, sel));
}

__device__ __forceinline__ float
ldh(const uint8_t *p) /* f16 at a 2-byte aligned address */
{
    return k_llm_f16(*(const uint16_t *)p);
}

/* Byte i (0..3) of word w as a float plus 2^23 (8388608): PRMT puts the byte under the
 * exponent of 2^23, one instruction instead of extract + I2F. */
__device__ __forceinline__ float
bf(uint32_t w, int i)
{
    return __int_as_float((int)__byte_perm(w, 0x4B000000u, 0x7650u | (uint32_t)i));
}

/* sum_i (byte_i(q) - off) * x[i] over the 8 bytes of q (off folded into the 2^23 bias). */
__device__ __forceinline__ float
dot_bytes(uint2 q, const float *x, float off)
{
    const float c = 8388608.0f + off;
    float s = 0.0f;
#pragma unroll
    for (int i = 0; i < 4; i++)
        s = fmaf(bf(q.x, i) - c, x[i], s);
#pragma unroll
    for (int i = 0; i < 4; i++)
        s = fmaf(bf(q.y, i) - c, x[4 + i], s);
    return s;
}

/* Dot of 8 consecutive weights (values v0..v0+7 of the staged chunk `row`) with x[0..8);
 * sx = x[0] + ... + x[7] (for the K formats' minimum term). Quants are unpacked 4 per
 * 32-bit word (shift + mask), then bf(). */
template <uint32_t TYPE>
__device__ __forceinline__ float
dot8(const uint8_t *row, uint32_t v0, const float *x, float sx)
{
    if (TYPE == 8) { /* Q8_0: signed bytes, ^0x80 makes them byte + 128 */
        const uint8_t *b = row + 34 * (v0 >> 5);
        uint2 q = ld8(b + 2 + (v0 & 31));
        q.x ^= 0x80808080u, q.y ^= 0x80808080u;
        return ldh(b) * dot_bytes(q, x, 128.0f);
    } else if (TYPE == 2) { /* Q4_0 */
        const uint8_t *b = row + 18 * (v0 >> 5);
        uint32_t j = v0 & 31, sh = (j >> 4) * 4;
        uint2 q = ld8(b + 2 + (j & 15));
        q.x = (q.x >> sh) & 0x0F0F0F0Fu, q.y = (q.y >> sh) & 0x0F0F0F0Fu;
        return ldh(b) * dot_bytes(q, x, 8.0f);
    } else if (TYPE == 12 || TYPE == 13) { /* Q4_K, Q5_K */
        const uint32_t bs = TYPE == 12 ? 144 : 176;
        const uint8_t *b = row + bs * (v0 >> 8);
        uint32_t w = v0 & 255, sub = w >> 5, c = sub >> 1, l0 = w & 31, sh = (sub & 1) * 4;
        uint8_t sc, m;
        k_llm_scale_min_k4(b + 4, (int)sub, &sc, &m);
        uint2 q = ld8(b + (TYPE == 12 ? 16 : 48) + 32 * c + l0);
        q.x = (q.x >> sh) & 0x0F0F0F0Fu, q.y = (q.y >> sh) & 0x0F0F0F0Fu;
        if (TYPE == 13) {
            uint2 h = ld8(b + 16 + l0);
            q.x |= ((h.x >> sub) & 0x01010101u) << 4, q.y |= ((h.y >> sub) & 0x01010101u) << 4;
        }
        return ldh(b) * (float)sc * dot_bytes(q, x, 0.0f) - ldh(b + 2) * (float)m * sx;
    } else if (TYPE == 14) { /* Q6_K */
        const uint8_t *b = row + 210 * (v0 >> 8);
        uint32_t w = v0 & 255, h = w >> 7, grp = (w >> 5) & 3, l0 = w & 31;
        uint2 ql = ld8(b + 64 * h + 32 * (grp & 1) + l0);
        uint2 qh = ld8(b + 128 + 32 * h + l0);
        uint32_t shl = (grp >> 1) * 4, shh = 2 * grp;
        uint2 q;
        q.x = ((ql.x >> shl) & 0x0F0F0F0Fu) | (((qh.x >> shh) & 0x03030303u) << 4);
        q.y = ((ql.y >> shl) & 0x0F0F0F0Fu) | (((qh.y >> shh) & 0x03030303u) << 4);
        return ldh(b + 208) * (float)(int8_t)b[192 + 8 * h + (l0 >> 4) + 2 * grp] * dot_bytes(q, x, 32.0f);
    } else if (TYPE == 30) { /* BF16: the upper 16 bits of an f32 */
        uint2 a = ld8(row + 2 * v0), c = ld8(row + 2 * v0 + 8);
        uint32_t u[4] = { a.x, a.y, c.x, c.y };
        float s = 0.0f;
#pragma unroll
        for (int i = 0; i < 8; i++)
            s = fmaf(__uint_as_float(i & 1 ? u[i >> 1] & 0xFFFF0000u : u[i >> 1] << 16), x[i], s);
        return s;
    } else { /* F16 */
        uint2 a = ld8(row + 2 * v0), c = ld8(row + 2 * v0 + 8);
        uint32_t u[4] = { a.x, a.y, c.x, c.y };
        float s = 0.0f;
#pragma unroll
        for (int i = 0; i < 8; i++)
            s = fmaf(k_llm_f16((uint16_t)(u[i >> 1] >> (16 * (i & 1)))), x[i], s);
        return s;
    }
}

/* Where tile T's rows come from. Slot i (0..R) is row row0 + i of segment seg (SET/ACC) or,
 * for SWIGLU, gate row row0 + i (i < R/2) / up row row0 + i - R/2. */
struct mv_tile {
    uint64_t w_va[2];
    uint32_t type, rb, row0, nrows, yoff;
};

__device__ __forceinline__ void
tile_info(const struct k_llm_matvec_params &p, uint32_t T, struct mv_tile &ti)
{
    if (p.mode == K_LLM_MV_SWIGLU) {
        ti.type = p.seg[0].type;
        ti.w_va[0] = p.seg[0].w_va;
        ti.w_va[1] = p.seg[1].w_va;
        ti.row0 = T * (R / 2);
        ti.nrows = min(R / 2, p.seg[0].rows - ti.row0);
        ti.yoff = ti.row0;
    } else {
        /* segments by constant index (a dynamic index would copy the params to local memory) */
        uint32_t yoff = 0, rows[K_LLM_MV_SEGS] = { p.seg[0].rows, p.seg[1].rows, p.seg[2].rows };
        uint32_t s = 0;
#pragma unroll
        for (uint32_t j = 0; j + 1 < K_LLM_MV_SEGS; j++) {
            uint32_t nt = (rows[j] + R - 1) / R;
            if (s == j && j + 1 < p.n_seg && T >= nt) {
                T -= nt;
                yoff += rows[j];
                s = j + 1;
            }
        }
        ti.type = s == 0 ? p.seg[0].type : s == 1 ? p.seg[1].type : p.seg[2].type;
        ti.w_va[0] = ti.w_va[1] = s == 0 ? p.seg[0].w_va : s == 1 ? p.seg[1].w_va : p.seg[2].w_va;
        uint32_t srows = s == 0 ? rows[0] : s == 1 ? rows[1] : rows[2];
        ti.row0 = T * R;
        ti.nrows = min(R, srows - ti.row0);
        ti.yoff = yoff + ti.row0;
    }
    ti.rb = p.k / 256 * k_llm_mv_b256(ti.type);
}

/* Global address of slot i's chunk (values c0..) and whether the slot holds a row. */
__device__ __forceinline__ uint64_t
slot_src(const struct k_llm_matvec_params &p, const struct mv_tile &ti, uint32_t i, uint32_t c0, bool &valid)
{
    bool sw = p.mode == K_LLM_MV_SWIGLU;
    uint32_t r = sw ? (i & (R / 2 - 1)) : i;
    valid = r < ti.nrows && (sw || i < R);
    uint64_t base = sw && i >= R / 2 ? ti.w_va[1] : ti.w_va[0]; /* no dynamic index: stays in registers */
    return base + (uint64_t)(ti.row0 + r) * ti.rb + (uint64_t)(c0 / 256) * k_llm_mv_b256(ti.type);
}

/* Issue this thread's 16-byte loads of one (tile, chunk) stage into registers. */
template <uint32_t SB>
__device__ __forceinline__ void
stage_load(const struct k_llm_matvec_params &p, uint32_t T, uint32_t c, uint4 *reg)
{
    struct mv_tile ti;
    tile_info(p, T, ti);
    uint32_t kc_all = k_llm_mv_chunk(ti.type, SB != K_LLM_MV_STAGE_B), c0 = c * kc_all;
    uint32_t kc = min(kc_all, p.k - c0), cb = kc / 256 * k_llm_mv_b256(ti.type);
#pragma unroll
    for (int u = 0; u < LOADS(SB); u++) {
        uint32_t q = threadIdx.x + u * K_LLM_MV_THREADS, i = q / STAGE_W(SB), wd = q % STAGE_W(SB);
        reg[u] = make_uint4(0, 0, 0, 0);
        if (i >= R)
            continue;
        bool valid;
        uint64_t src = slot_src(p, ti, i, c0, valid);
        uint64_t a0 = src & ~15ull;
        uint32_t nw = (uint32_t)((src - a0 + cb + 15) / 16);
        if (valid && wd < nw)
            reg[u] = __ldg((const uint4 *)(uintptr_t)(a0 + 16ull * wd));
    }
}

template <uint32_t SB>
__device__ __forceinline__ void
stage_store(uint8_t *stage, const uint4 *reg)
{
#pragma unroll
    for (int u = 0; u < LOADS(SB); u++) {
        uint32_t q = threadIdx.x + u * K_LLM_MV_THREADS;
        if (q < R * STAGE_W(SB))
            *(uint4 *)(stage + 16 * q) = reg[u];
    }
}

/* Decode one staged chunk: thread t owns 8 values (micro-piece m) of every slot of its
 * row group g; acc[i] collects slot i. Its 8 activations come from global memory (L1/L2:
 * x is a few KB read by every CTA), normalized on the fly (x * inv * norm_w). */
template <uint32_t TYPE, uint32_t SB>
__device__ __forceinline__ void
chunk_dot(const struct k_llm_matvec_params &p, const struct mv_tile &ti, uint32_t c0, uint32_t kc, float inv,
          const uint8_t *stage, float *acc)
{
    uint32_t M = kc / 8, G = K_LLM_MV_THREADS / M, m = threadIdx.x % M, g = threadIdx.x / M;
    if (g >= G)
        return;
    const float4 *xp = (const float4 *)(uintptr_t)(p.x_va + 4ull * (c0 + 8 * m));
    float4 xa = __ldg(xp), xb = __ldg(xp + 1);
    if (p.norm_w_va) {
        const float4 *wp = (const float4 *)(uintptr_t)(p.norm_w_va + 4ull * (c0 + 8 * m));
        float4 wa = __ldg(wp), wb = __ldg(wp + 1);
        xa = make_float4(xa.x * inv * wa.x, xa.y * inv * wa.y, xa.z * inv * wa.z, xa.w * inv * wa.w);
        xb = make_float4(xb.x * inv * wb.x, xb.y * inv * wb.y, xb.z * inv * wb.z, xb.w * inv * wb.w);
    }
    float x[8] = { xa.x, xa.y, xa.z, xa.w, xb.x, xb.y, xb.z, xb.w };
    float sx = (TYPE == 12 || TYPE == 13) ? ((x[0] + x[1]) + (x[2] + x[3])) + ((x[4] + x[5]) + (x[6] + x[7])) : 0.0f;
    /* low address bits of each slot's chunk (32-bit math: only the offset in 16 matters) */
    const bool sw = p.mode == K_LLM_MV_SWIGLU;
    const uint32_t coff = c0 / 256 * k_llm_mv_b256(TYPE), lo0 = (uint32_t)ti.w_va[0] + ti.row0 * ti.rb + coff;
    const uint32_t lo1 = (uint32_t)ti.w_va[1] + ti.row0 * ti.rb + coff;
#pragma unroll
    for (uint32_t i = 0; i < R; i++) {
        if (i % G != g)
            continue;
        uint32_t r = sw ? (i & (R / 2 - 1)) : i;
        if (r >= ti.nrows)
            continue;
        uint32_t lo = (sw && i >= R / 2 ? lo1 : lo0) + r * ti.rb;
        const uint8_t *row = stage + i * SB + (lo & 15);
        acc[i] += dot8<TYPE>(row, 8 * m, x, sx);
    }
}

template <uint32_t SB>
__device__ __forceinline__ void
matvec(const struct k_llm_matvec_params &p)
{
    __shared__ __align__(16) uint8_t stage[R * SB];
    __shared__ float red[NW][R];
    __shared__ float part[NW];
    const uint32_t t = threadIdx.x, lane = t % WARP, warp = t / WARP, k = p.k;
    const uint32_t tiles = k_llm_mv_tiles(&p);
    if (blockIdx.x >= tiles || k > K_LLM_MV_MAX_K || k % 256)
        return;

    /* prologue: the RMSNorm scale of x (x' = x * inv * w is formed as x is read) */
    float inv = 1.0f;
    if (p.norm_w_va) {
        const float4 *x4 = (const float4 *)(uintptr_t)p.x_va;
        float ss = 0.0f;
        for (uint32_t j = t; j < k / 4; j += K_LLM_MV_THREADS) {
            float4 v = __ldg(x4 + j);
            ss += v.x * v.x + v.y * v.y + v.z * v.z + v.w * v.w;
        }
        ss = mv_warp_sum(ss);
        if (lane == 0)
            part[warp] = ss;
        __syncthreads();
        float tot = 0.0f;
#pragma unroll
        for (int w = 0; w < NW; w++)
            tot += part[w];
        inv = rsqrtf(tot / (float)k + p.eps);
    }

    uint4 reg[LOADS(SB)];
    stage_load<SB>(p, blockIdx.x, 0, reg);
    for (uint32_t T = blockIdx.x; T < tiles; T += gridDim.x) {
        struct mv_tile ti;
        tile_info(p, T, ti);
        const uint32_t kc_all = k_llm_mv_chunk(ti.type, SB != K_LLM_MV_STAGE_B), nc = (k + kc_all - 1) / kc_all;
        float acc[R];
#pragma unroll
        for (int i = 0; i < R; i++)
            acc[i] = 0.0f;
        for (uint32_t c = 0; c < nc; c++) {
            __syncthreads(); /* the previous chunk is decoded */
            stage_store<SB>(stage, reg);
            __syncthreads();
            /* the next stage's loads fly while this one is decoded */
            if (c + 1 < nc)
                stage_load<SB>(p, T, c + 1, reg);
            else if (T + gridDim.x < tiles)
                stage_load<SB>(p, T + gridDim.x, 0, reg);
            uint32_t c0 = c * kc_all, kc = min(kc_all, k - c0);
            switch (ti.type) {
            case 1: chunk_dot<1, SB>(p, ti, c0, kc, inv, stage, acc); break;
            case 2: chunk_dot<2, SB>(p, ti, c0, kc, inv, stage, acc); break;
            case 8: chunk_dot<8, SB>(p, ti, c0, kc, inv, stage, acc); break;
            case 12: chunk_dot<12, SB>(p, ti, c0, kc, inv, stage, acc); break;
            case 13: chunk_dot<13, SB>(p, ti, c0, kc, inv, stage, acc); break;
            case 14: chunk_dot<14, SB>(p, ti, c0, kc, inv, stage, acc); break;
            case 30: chunk_dot<30, SB>(p, ti, c0, kc, inv, stage, acc); break;
            default: break;
            }
        }
        /* reduce: each warp's lanes, then the 8 warps (slots a warp does not own hold 0) */
#pragma unroll
        for (int i = 0; i < R; i++) {
            float v = mv_warp_sum(acc[i]);
            if (lane == 0)
                red[warp][i] = v;
        }
        __syncthreads();
        if (t < R) {
            float s = 0.0f;
#pragma unroll
            for (int w = 0; w < NW; w++)
                s += red[w][t];
            red[0][t] = s; /* thread t reads and writes only column t */
        }
        __syncthreads();
        if (p.mode == K_LLM_MV_SWIGLU) {
            if (t < R / 2 && t < ti.nrows) {
                float gt = red[0][t], up = red[0][t + R / 2];
                ((float *)(uintptr_t)p.y_va)[ti.yoff + t] = gt / (1.0f + __expf(-gt)) * up;
            }
        } else if (t < ti.nrows) {
            float *y = (float *)(uintptr_t)p.y_va + ti.yoff + t;
            float s = red[0][t] + (p.b_va ? ((const float *)(uintptr_t)p.b_va)[ti.yoff + t] : 0.0f);
            *y = (p.mode == K_LLM_MV_ACC ? *y : 0.0f) + s;
        }
    }
}

extern "C" __global__ void __launch_bounds__(K_LLM_MV_THREADS, 4)
k_llm_matvec(const struct k_llm_matvec_params p)
{
    matvec<K_LLM_MV_STAGE_B>(p);
}

extern "C" __global__ void __launch_bounds__(K_LLM_MV_THREADS, 3)
k_llm_matvec_wide(const struct k_llm_matvec_params p)
{
    matvec<K_LLM_MV_STAGE_WIDE_B>(p);
}

#include "k_llm_mvq.cuh"

/* The decode mat-vec with int8 activations (k_llm_matvec_q8). Weights load with an L2
 * evict-first policy (ldg16_ef): tg128 rm:0 on H100 +2% Q6_K, +1.3% Q4_K_M, +3.6% Q8_0 against
 * plain loads. The one-pass prologue (x read once, one CTA barrier, the RMS factor applied to
 * the sums; q8_prologue1): +0.8-1.5% against the two-pass one. */
extern "C" __global__ void __launch_bounds__(K_LLM_MV_THREADS, 2)
k_llm_matvec_q8(const struct k_llm_matvec_params p)
{
    __shared__ __align__(16) struct q8_sm sm;
    q8_matvec_stream<false, false, false, true, true>(p, sm);
}

/* The same body compiled for one weight type: no type switch per pass, and each
 * kernel gets its own registers and code. The engine launches k_llm_matvec_q8_<type> for a
 * launch whose segments all have that type (llm_model.c mvq_typed_prog), k_llm_matvec_q8 for
 * mixed ones (Q4_K_M's Q|K|V). Same sums in the same order as k_llm_matvec_q8. Measured with
 * the per-type copies inside one kernel first (H200 tg128 rm:0): Q6_K 1529 vs 1491, Q4_K 1595
 * vs 1563, Q4_0 1698 vs 1650, but Q8_0 1464 vs 1504 - one kernel holding every copy also cost
 * the types left on the switching body 3%, hence a kernel per type. A launch of another type
 * traps: a caller's bug becomes a decoded device fault, not wrong numbers. */
#define K_LLM_MVQ_TYPED(NAME, T) K_LLM_MVQ_TYPED_KERNEL(NAME, T, 2, true, false)
K_LLM_MVQ_TYPED(k_llm_matvec_q8_q4k, K_LLM_T_Q4_KR)
K_LLM_MVQ_TYPED(k_llm_matvec_q8_q5k, K_LLM_T_Q5_KR)
K_LLM_MVQ_TYPED(k_llm_matvec_q8_q4_0, K_LLM_T_Q4_0R)
K_LLM_MVQ_TYPED(k_llm_matvec_q8_q8_0, K_LLM_T_Q8_0R)
K_LLM_MVQ_TYPED(k_llm_matvec_q8_q6k, K_LLM_T_Q6_KR)
/* Two types: Q4_K_M's Q|K|V, Q4_K with a Q6_K V, had only the switching body:
 * 5.3 us per layer on H100, against 4.5 for Q8_0's typed Q|K|V of twice the bytes. */
K_LLM_MVQ_TYPED2_KERNEL(k_llm_matvec_q8_q4k_q6k, K_LLM_T_Q4_KR, K_LLM_T_Q6_KR, 2, false)
/* Q5_K_M's Q|K|V in the same way: Q5_K Q and K with a Q6_K V. The Q5_K kernels read
 * Q5_KR (rows of whole 2048-value groups, k_llm_quant.h); other Q5_K rows take
 * k_llm_matvec_q8. */
K_LLM_MVQ_TYPED2_KERNEL(k_llm_matvec_q8_q5k_q6k, K_LLM_T_Q5_KR, K_LLM_T_Q6_KR, 2, false)

/* The same with the second pass's weights requested before the PDL wait too (WAIT2):
 * a launch whose warps walk one or two passes (Q|K|V, O) otherwise starts its second
 * pass's DRAM round trip only after the prologue (H100 Q8_0: Q|K|V 4.61 -> 3.99 us, O 3.63 ->
 * 3.46); in the long streams (gate|up, output head) the extra registers and early requests
 * cost more (Q4_K gate|up 11.2 -> 13.4 us). The engine takes them for launches below
 * K_LLM_MVQ_PAIR_ROWS rows (llm_model.c mvq_typed_prog). */
#define K_LLM_MVQ_TYPED_W2(NAME, T) K_LLM_MVQ_TYPED_KERNEL(NAME, T, 2, true, true)
K_LLM_MVQ_TYPED_W2(k_llm_matvec_q8_q4k_w2, K_LLM_T_Q4_KR)
K_LLM_MVQ_TYPED_W2(k_llm_matvec_q8_q5k_w2, K_LLM_T_Q5_KR)
K_LLM_MVQ_TYPED_W2(k_llm_matvec_q8_q4_0_w2, K_LLM_T_Q4_0R)
K_LLM_MVQ_TYPED_W2(k_llm_matvec_q8_q8_0_w2, K_LLM_T_Q8_0R)
K_LLM_MVQ_TYPED_W2(k_llm_matvec_q8_q6k_w2, K_LLM_T_Q6_KR)
K_LLM_MVQ_TYPED2_KERNEL(k_llm_matvec_q8_q4k_q6k_w2, K_LLM_T_Q4_KR, K_LLM_T_Q6_KR, 2, true)
K_LLM_MVQ_TYPED2_KERNEL(k_llm_matvec_q8_q5k_q6k_w2, K_LLM_T_Q5_KR, K_LLM_T_Q6_KR, 2, true)

/* Two groups per task: which launches take them is llm_model_int.h's
 * K_LLM_MVQ_W2 comment (measured per launch kind: every Q8_0 and Q4_0 launch). A
 * kernel holding both bodies for every Q4_0 launch (the _w2 variant too) lost 4-5%. */
K_LLM_MVQ_X2_KERNEL(k_llm_matvec_q8_q4_0x2, K_LLM_T_Q4_0R, K_LLM_T_Q4_0R2)
K_LLM_MVQ_X2_KERNEL(k_llm_matvec_q8_q8_0x2, K_LLM_T_Q8_0R, K_LLM_T_Q8_0R2)
