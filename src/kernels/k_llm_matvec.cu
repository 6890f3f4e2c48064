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

/* ==== k_llm_matvec_q8: int8 activations, dp4a, weights straight into registers ====
 * Why: the staged kernel above spends ~5 instructions and a shared-memory round trip per
 * weight, so it is issue bound at 0.7-0.9 TB/s (bench/notes-decode.md). Here each lane reads
 * 16-byte pieces of the rows (lane-major repacked groups, k_llm_quant.h: every warp-wide
 * load one contiguous run) and turns 4 quants into one dp4a against 4 int8 activations. A
 * task is one lane's share of a row per pass (64 weights for Q6_KR, 32 for the others); a
 * unit is two rows (or a gate row and its up row) or, below K_LLM_MVQ_PAIR_ROWS rows, one.
 * The prologue (every CTA): x' = RMSNorm(x) * w as in the f32 kernel, then per block of 16
 * values d = max|x'| / 127 and q = rint(x' / d) into shared memory with (d, d * sum q).
 * Two bodies: the default streams a contiguous unit range per warp with the next pass in
 * flight; q8_matvec_split (variants) strides units over the grid and splits long rows. */

struct q8_sm {
    int8_t xq[K_LLM_MVQ_MAX_K];
    float2 xs[K_LLM_MVQ_MAX_K / 16]; /* (d, d * sum of the block's q) */
    float part[NW];
};

/* One task's raw bytes (see q8_load): a, b, c 16-byte pieces, s and d words. */
struct q8_task {
    uint4 a, b, c;
    uint32_t s, d;
};

__device__ __forceinline__ uint4
ldg16(const uint8_t *p)
{
    return __ldg((const uint4 *)p);
}

/* Values per task (one lane's share of a row per pass): 64 for Q6_KR, 32 for the others. */
template <uint32_t TYPE>
__device__ __forceinline__ uint32_t
q8_ts()
{
    return TYPE == K_LLM_T_Q6_KR ? 64 : 32;
}

/* Load task t of a row (t % 32 is the lane for the repacked types: every load below is a
 * contiguous run across the warp, k_llm_quant.h "lane-major" groups). */
template <uint32_t TYPE>
__device__ __forceinline__ void
q8_load(const uint8_t *row, uint32_t t, struct q8_task &r)
{
    const uint32_t L = t % 32;
    if (TYPE == K_LLM_T_Q6_KR) {
        const uint8_t *g = row + 1680 * (t / 32);
        r.a = ldg16(g + 16 * L);
        r.b = ldg16(g + 512 + 16 * L);
        r.c = ldg16(g + 1024 + 16 * L);
        r.s = __ldg((const unsigned int *)(g + 1536 + 4 * L));
        r.d = __ldg((const unsigned short *)(g + 1664 + 2 * (L / 4)));
    } else if (TYPE == 12 || TYPE == 13) {
        const uint32_t bs = TYPE == 12 ? 144 : 176;
        const uint8_t *b = row + bs * (t / 8);
        uint32_t pc = t % 8;
        r.c = ldg16(b);
        r.a = ldg16(b + (TYPE == 12 ? 16 : 48) + 16 * pc);
        if (TYPE == 13)
            r.b = ldg16(b + 16 + 16 * (pc % 2));
    } else if (TYPE == K_LLM_T_Q8_0R) {
        const uint8_t *g = row + 1088 * (t / 32);
        r.a = ldg16(g + 16 * L);
        r.b = ldg16(g + 512 + 16 * L);
        r.d = __ldg((const unsigned short *)(g + 1024 + 2 * L));
    } else { /* Q4_0R */
        const uint8_t *g = row + 576 * (t / 32);
        r.a = ldg16(g + 16 * L);
        r.d = __ldg((const unsigned short *)(g + 512 + 2 * L));
    }
}

__device__ __forceinline__ int
dot16(uint4 w, uint4 x)
{
    int s = __dp4a((int)w.x, (int)x.x, 0);
    s = __dp4a((int)w.y, (int)x.y, s);
    s = __dp4a((int)w.z, (int)x.z, s);
    return __dp4a((int)w.w, (int)x.w, s);
}

__device__ __forceinline__ uint4
lo4(uint4 q) /* low nibbles */
{
    return make_uint4(q.x & 0x0F0F0F0Fu, q.y & 0x0F0F0F0Fu, q.z & 0x0F0F0F0Fu, q.w & 0x0F0F0F0Fu);
}

__device__ __forceinline__ uint4
hi4(uint4 q) /* high nibbles */
{
    return make_uint4((q.x >> 4) & 0x0F0F0F0Fu, (q.y >> 4) & 0x0F0F0F0Fu, (q.z >> 4) & 0x0F0F0F0Fu,
                      (q.w >> 4) & 0x0F0F0F0Fu);
}

/* bit `sh` of every byte of h, moved to bit 4 */
__device__ __forceinline__ uint4
bit4(uint4 h, uint32_t sh)
{
    return make_uint4(((h.x >> sh) & 0x01010101u) << 4, ((h.y >> sh) & 0x01010101u) << 4,
                      ((h.z >> sh) & 0x01010101u) << 4, ((h.w >> sh) & 0x01010101u) << 4);
}

__device__ __forceinline__ uint4
or4(uint4 a, uint4 b)
{
    return make_uint4(a.x | b.x, a.y | b.y, a.z | b.z, a.w | b.w);
}

/* Byte i (0..3) of x, zero-extended (selector nibbles 1-3 pick a zero byte of the second operand). */
__device__ __forceinline__ uint32_t
byte_at(uint32_t x, uint32_t i)
{
    return __byte_perm(x, 0, 0x4440u | i);
}

/* The 16 int8 activations from value i (a multiple of 16) and their block's (d, d * sum). */
__device__ __forceinline__ uint4
xq16(const struct q8_sm &sm, uint32_t i)
{
    return *(const uint4 *)(sm.xq + i);
}

/* Q6_KR: one run of 16 values (quants | 2 high bits at 4-5 of each byte) against x' from i. */
__device__ __forceinline__ float
q6_run(uint4 q, uint32_t i, const struct q8_sm &sm, uint32_t sc_byte)
{
    int dq = dot16(q, xq16(sm, i));
    float2 x = sm.xs[i / 16];
    return (float)(int8_t)sc_byte * fmaf(x.x, (float)dq, -32.0f * x.y);
}

__device__ __forceinline__ uint4
q6_lo(uint4 ql, uint4 t1) /* low nibbles | qh bits (0,1) of t1 at 4-5 */
{
    return make_uint4((ql.x & 0x0F0F0F0Fu) | ((t1.x << 4) & 0x30303030u),
                      (ql.y & 0x0F0F0F0Fu) | ((t1.y << 4) & 0x30303030u),
                      (ql.z & 0x0F0F0F0Fu) | ((t1.z << 4) & 0x30303030u),
                      (ql.w & 0x0F0F0F0Fu) | ((t1.w << 4) & 0x30303030u));
}

__device__ __forceinline__ uint4
q6_hi(uint4 ql, uint4 t1) /* high nibbles | qh bits (4,5) of t1 */
{
    return make_uint4(((ql.x >> 4) & 0x0F0F0F0Fu) | (t1.x & 0x30303030u),
                      ((ql.y >> 4) & 0x0F0F0F0Fu) | (t1.y & 0x30303030u),
                      ((ql.z >> 4) & 0x0F0F0F0Fu) | (t1.z & 0x30303030u),
                      ((ql.w >> 4) & 0x0F0F0F0Fu) | (t1.w & 0x30303030u));
}

/* Dot of task t of a row with x'. */
template <uint32_t TYPE>
__device__ __forceinline__ float
q8_dot(const struct q8_task &r, uint32_t t, const struct q8_sm &sm)
{
    const uint32_t L = t % 32;
    if (TYPE == K_LLM_T_Q6_KR) {
        /* values 256b + 128h + l0 + {0: qa lo, 64: qa hi, 32: qb lo, 96: qb hi} + 0..15 */
        uint32_t b = L / 4, h = (L / 2) % 2, l0 = 16 * (L % 2);
        uint32_t i0 = 2048 * (t / 32) + 256 * b + 128 * h + l0;
        uint4 t1 = make_uint4(r.c.x >> 2, r.c.y >> 2, r.c.z >> 2, r.c.w >> 2);
        float v = q6_run(q6_lo(r.a, r.c), i0, sm, byte_at(r.s, 0)) + q6_run(q6_hi(r.a, r.c), i0 + 64, sm, byte_at(r.s, 1)) +
                  q6_run(q6_lo(r.b, t1), i0 + 32, sm, byte_at(r.s, 2)) + q6_run(q6_hi(r.b, t1), i0 + 96, sm, byte_at(r.s, 3));
        return k_llm_f16((uint16_t)r.d) * v;
    } else if (TYPE == 12 || TYPE == 13) {
        uint32_t pc = t % 8, j = pc / 2, l0 = 16 * (pc % 2);
        uint32_t i0 = 256 * (t / 8) + 64 * j + l0; /* low nibbles: sub-block 2j; high: 2j+1 at +32 */
        uint4 lo = lo4(r.a), hi = hi4(r.a);
        if (TYPE == 13) {
            lo = or4(lo, bit4(r.b, 2 * j));
            hi = or4(hi, bit4(r.b, 2 * j + 1));
        }
        int dl = dot16(lo, xq16(sm, i0)), dh = dot16(hi, xq16(sm, i0 + 32));
        float2 xl = sm.xs[i0 / 16], xh = sm.xs[i0 / 16 + 2];
        /* 6-bit scale/min of sub-blocks 2j, 2j+1 from scales[12] = head bytes 4..15 (c.y..c.w) */
        uint32_t s0 = 2 * j, s1 = 2 * j + 1, sc0, m0, sc1, m1;
        if (j < 2) {
            sc0 = byte_at(r.c.y, s0) & 63, m0 = byte_at(r.c.z, s0) & 63;
            sc1 = byte_at(r.c.y, s1) & 63, m1 = byte_at(r.c.z, s1) & 63;
        } else {
            uint32_t a0 = byte_at(r.c.w, s0 - 4), a1 = byte_at(r.c.w, s1 - 4);
            uint32_t b0 = byte_at(r.c.y, s0 - 4), b1 = byte_at(r.c.y, s1 - 4);
            uint32_t c0 = byte_at(r.c.z, s0 - 4), c1 = byte_at(r.c.z, s1 - 4);
            sc0 = (a0 & 0xF) | ((b0 >> 6) << 4), m0 = (a0 >> 4) | ((c0 >> 6) << 4);
            sc1 = (a1 & 0xF) | ((b1 >> 6) << 4), m1 = (a1 >> 4) | ((c1 >> 6) << 4);
        }
        float d = k_llm_f16((uint16_t)(r.c.x & 0xFFFF)), dmin = k_llm_f16((uint16_t)(r.c.x >> 16));
        return d * ((float)sc0 * xl.x * (float)dl + (float)sc1 * xh.x * (float)dh) -
               dmin * ((float)m0 * xl.y + (float)m1 * xh.y);
    } else if (TYPE == K_LLM_T_Q8_0R) {
        uint32_t i0 = 1024 * (t / 32) + 32 * L;
        int d0 = dot16(r.a, xq16(sm, i0)), d1 = dot16(r.b, xq16(sm, i0 + 16));
        float2 x0 = sm.xs[i0 / 16], x1 = sm.xs[i0 / 16 + 1];
        return k_llm_f16((uint16_t)r.d) * (x0.x * (float)d0 + x1.x * (float)d1);
    } else { /* Q4_0R: low nibbles values 0..15 of the block, high 16..31 */
        uint32_t i0 = 1024 * (t / 32) + 32 * L;
        int d0 = dot16(lo4(r.a), xq16(sm, i0)), d1 = dot16(hi4(r.a), xq16(sm, i0 + 16));
        float2 x0 = sm.xs[i0 / 16], x1 = sm.xs[i0 / 16 + 1];
        return k_llm_f16((uint16_t)r.d) *
               (fmaf(x0.x, (float)d0, -8.0f * x0.y) + fmaf(x1.x, (float)d1, -8.0f * x1.y));
    }
}

/* Slice ks (of W) of both rows of a unit: acc[0] row a, acc[1] row b (when has_b). U tasks
 * per lane and row per pass; all loads of a pass are issued before the first dot. */
template <uint32_t TYPE, int U>
__device__ __forceinline__ void
q8_unit(const uint8_t *ra, const uint8_t *rb, bool has_b, uint32_t k, uint32_t ks, uint32_t W, uint32_t lane,
        const struct q8_sm &sm, float *acc)
{
    const uint32_t nt = k / q8_ts<TYPE>(), t_beg = nt * ks / W, t_end = nt * (ks + 1) / W;
    for (uint32_t t0 = t_beg + lane; t0 < t_end; t0 += 32 * U) {
        struct q8_task r[2][U];
#pragma unroll
        for (int i = 0; i < U; i++)
            if (t0 + 32 * i < t_end)
                q8_load<TYPE>(ra, t0 + 32 * i, r[0][i]);
        if (has_b) {
#pragma unroll
            for (int i = 0; i < U; i++)
                if (t0 + 32 * i < t_end)
                    q8_load<TYPE>(rb, t0 + 32 * i, r[1][i]);
        }
#pragma unroll
        for (int i = 0; i < U; i++)
            if (t0 + 32 * i < t_end)
                acc[0] += q8_dot<TYPE>(r[0][i], t0 + 32 * i, sm);
        if (has_b) {
#pragma unroll
            for (int i = 0; i < U; i++)
                if (t0 + 32 * i < t_end)
                    acc[1] += q8_dot<TYPE>(r[1][i], t0 + 32 * i, sm);
        }
    }
}

/* Where unit u's rows are: a (and b) row pointers, first output row, type. */
struct q8_rows {
    const uint8_t *ra, *rb;
    uint32_t type, r, o; /* o: output index of row a (SWIGLU: r) */
    bool has_b;
};

__device__ __forceinline__ void
q8_rows_of(const struct k_llm_matvec_params &p, uint32_t u, struct q8_rows &w)
{
    /* constant segment indices: a dynamic index would copy the params to local memory */
    const uint32_t rows[K_LLM_MV_SEGS] = {p.seg[0].rows, p.seg[1].rows, p.seg[2].rows};
    const uint32_t rpu = k_llm_mvq_rpu(&p);
    uint32_t s = 0, yoff = 0;
    if (p.mode != K_LLM_MV_SWIGLU) {
#pragma unroll
        for (uint32_t j = 0; j + 1 < K_LLM_MV_SEGS; j++) {
            uint32_t nu = (rows[j] + rpu - 1) / rpu;
            if (s == j && j + 1 < p.n_seg && u >= nu) {
                u -= nu;
                yoff += rows[j];
                s = j + 1;
            }
        }
    }
    w.type = s == 0 ? p.seg[0].type : s == 1 ? p.seg[1].type : p.seg[2].type;
    uint64_t va = s == 0 ? p.seg[0].w_va : s == 1 ? p.seg[1].w_va : p.seg[2].w_va;
    uint32_t srows = s == 0 ? rows[0] : s == 1 ? rows[1] : rows[2];
    uint64_t rbytes = k_llm_row_bytes(w.type, p.k);
    if (p.mode == K_LLM_MV_SWIGLU) {
        w.r = w.o = u;
        w.ra = (const uint8_t *)(uintptr_t)(p.seg[0].w_va + w.r * rbytes);
        w.rb = (const uint8_t *)(uintptr_t)(p.seg[1].w_va + w.r * rbytes);
        w.has_b = true;
    } else {
        w.r = rpu * u;
        w.o = yoff + w.r;
        w.ra = (const uint8_t *)(uintptr_t)(va + w.r * rbytes);
        w.rb = w.ra + rbytes;
        w.has_b = rpu == 2 && w.r + 1 < srows;
    }
}

/* Prologue of every CTA: x' = RMSNorm(x) * w (when a norm weight is given), quantized per
 * block of 16 into sm (k_llm_mvq_block); ends with a CTA barrier. */
__device__ __forceinline__ void
q8_prologue(const struct k_llm_matvec_params &p, struct q8_sm &sm)
{
    const uint32_t t = threadIdx.x, lane = t % WARP, warp = t / WARP, k = p.k;
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
            sm.part[warp] = ss;
        __syncthreads();
        float tot = 0.0f;
#pragma unroll
        for (int w = 0; w < NW; w++)
            tot += sm.part[w];
        inv = rsqrtf(tot / (float)k + p.eps);
    }
    for (uint32_t bi = t; bi < k / 16; bi += K_LLM_MV_THREADS) {
        const float4 *xp = (const float4 *)(uintptr_t)(p.x_va + 64ull * bi);
        float v[16];
#pragma unroll
        for (int i = 0; i < 4; i++) {
            float4 a = __ldg(xp + i);
            v[4 * i] = a.x, v[4 * i + 1] = a.y, v[4 * i + 2] = a.z, v[4 * i + 3] = a.w;
        }
        if (p.norm_w_va) {
            const float4 *wp = (const float4 *)(uintptr_t)(p.norm_w_va + 64ull * bi);
#pragma unroll
            for (int i = 0; i < 4; i++) {
                float4 w = __ldg(wp + i);
                v[4 * i] = v[4 * i] * inv * w.x, v[4 * i + 1] = v[4 * i + 1] * inv * w.y;
                v[4 * i + 2] = v[4 * i + 2] * inv * w.z, v[4 * i + 3] = v[4 * i + 3] * inv * w.w;
            }
        }
        int8_t q[16];
        float d = k_llm_mvq_block(v, q);
        uint32_t w[4] = {0, 0, 0, 0};
        int sum = 0;
#pragma unroll
        for (int i = 0; i < 16; i++) {
            sum += q[i];
            w[i / 4] |= ((uint32_t)q[i] & 0xFFu) << (8 * (i % 4));
        }
        *(uint4 *)(sm.xq + 16 * bi) = make_uint4(w[0], w[1], w[2], w[3]);
        sm.xs[bi] = make_float2(d, d * (float)sum);
    }
    __syncthreads();
}

/* The kernel body; U: tasks per lane and row per pass. A unit's row length is split over
 * W = k_llm_mvq_split(k) warps of the CTA (long rows, e.g. the FFN down projection, would
 * otherwise leave too few warps per SM), whose sums are added in a fixed order. */
template <int U>
__device__ __forceinline__ void
q8_matvec_split(const struct k_llm_matvec_params &p)
{
    __shared__ __align__(16) struct q8_sm sm;
    __shared__ float red[NW][2];
    const uint32_t t = threadIdx.x, lane = t % WARP, warp = t / WARP, k = p.k;
    const uint32_t units = k_llm_mvq_units(&p), W = k_llm_mvq_split(k), upc = NW / W;
    if (blockIdx.x * upc >= units || k > K_LLM_MVQ_MAX_K || k % 256)
        return;

    const uint32_t us = warp / W, ks = warp % W;

    q8_prologue(p, sm);

    float *y = (float *)(uintptr_t)p.y_va;
    const float *bias = (const float *)(uintptr_t)p.b_va;
    /* CTA-uniform loop (the split's reduction synchronizes the CTA) */
    for (uint32_t u0 = blockIdx.x * upc; u0 < units; u0 += gridDim.x * upc) {
        const uint32_t u = u0 + us;
        struct q8_rows w;
        float acc[2] = {0.0f, 0.0f};
        if (u < units) {
            q8_rows_of(p, u, w);
            switch (w.type) {
            case 12: q8_unit<12, U>(w.ra, w.rb, w.has_b, k, ks, W, lane, sm, acc); break;
            case 13: q8_unit<13, U>(w.ra, w.rb, w.has_b, k, ks, W, lane, sm, acc); break;
            case K_LLM_T_Q4_0R: q8_unit<K_LLM_T_Q4_0R, U>(w.ra, w.rb, w.has_b, k, ks, W, lane, sm, acc); break;
            case K_LLM_T_Q8_0R: q8_unit<K_LLM_T_Q8_0R, U>(w.ra, w.rb, w.has_b, k, ks, W, lane, sm, acc); break;
            case K_LLM_T_Q6_KR: q8_unit<K_LLM_T_Q6_KR, U>(w.ra, w.rb, w.has_b, k, ks, W, lane, sm, acc); break;
            default: break;
            }
        }
        float a = mv_warp_sum(acc[0]), b = mv_warp_sum(acc[1]);
        if (W > 1) {
            if (lane == 0)
                red[warp][0] = a, red[warp][1] = b;
            __syncthreads();
            if (ks == 0) {
                a = b = 0.0f;
                for (uint32_t i = 0; i < W; i++)
                    a += red[warp + i][0], b += red[warp + i][1];
            }
            __syncthreads(); /* red is rewritten next round */
        }
        if (u >= units || ks != 0 || lane != 0)
            continue;
        if (p.mode == K_LLM_MV_SWIGLU) {
            y[w.o] = a / (1.0f + __expf(-a)) * b;
            continue;
        }
        y[w.o] = (p.mode == K_LLM_MV_ACC ? y[w.o] : 0.0f) + a + (bias ? bias[w.o] : 0.0f);
        if (w.has_b)
            y[w.o + 1] = (p.mode == K_LLM_MV_ACC ? y[w.o + 1] : 0.0f) + b + (bias ? bias[w.o + 1] : 0.0f);
    }
}

/* Tasks per row of a type (q8_ts); 0 for types the kernel does not read. */
__device__ __forceinline__ uint32_t
q8_nt(uint32_t type, uint32_t k)
{
    return type == K_LLM_T_Q6_KR ? k / 64 : k / 32;
}

/* One pass of a warp (task t = pass * 32 + lane of both rows of its unit): loads, and dot. */
__device__ __forceinline__ void
q8_load_pass(const struct q8_rows &w, uint32_t t, uint32_t nt, struct q8_task *r)
{
    if (t >= nt)
        return;
    switch (w.type) {
#define Q8_LOAD_CASE(T)                                                                                                \
    case T:                                                                                                            \
        q8_load<T>(w.ra, t, r[0]);                                                                                     \
        if (w.has_b)                                                                                                   \
            q8_load<T>(w.rb, t, r[1]);                                                                                 \
        break;
        Q8_LOAD_CASE(12)
        Q8_LOAD_CASE(13)
        Q8_LOAD_CASE(K_LLM_T_Q4_0R)
        Q8_LOAD_CASE(K_LLM_T_Q8_0R)
        Q8_LOAD_CASE(K_LLM_T_Q6_KR)
#undef Q8_LOAD_CASE
    default: break;
    }
}

__device__ __forceinline__ void
q8_dot_pass(const struct q8_rows &w, uint32_t t, uint32_t nt, const struct q8_task *r, const struct q8_sm &sm,
            float *acc)
{
    if (t >= nt)
        return;
    switch (w.type) {
#define Q8_DOT_CASE(T)                                                                                                 \
    case T:                                                                                                            \
        acc[0] += q8_dot<T>(r[0], t, sm);                                                                              \
        if (w.has_b)                                                                                                   \
            acc[1] += q8_dot<T>(r[1], t, sm);                                                                          \
        break;
        Q8_DOT_CASE(12)
        Q8_DOT_CASE(13)
        Q8_DOT_CASE(K_LLM_T_Q4_0R)
        Q8_DOT_CASE(K_LLM_T_Q8_0R)
        Q8_DOT_CASE(K_LLM_T_Q6_KR)
#undef Q8_DOT_CASE
    default: break;
    }
}

/* The streaming body: each warp takes a contiguous range of units (neighbouring rows) and
 * walks it as one sequence of passes, the next pass's loads issued before the current pass
 * is dotted, reduced and stored. Measured on H100 (bench/notes-decode.md): it needs both
 * this order and the lane-major layouts (every warp load one contiguous run) - with either
 * alone the output head streamed ~1.25 TB/s, with both ~2 TB/s on loads alone. */
__device__ __forceinline__ void
q8_matvec_stream(const struct k_llm_matvec_params &p)
{
    __shared__ __align__(16) struct q8_sm sm;
    const uint32_t lane = threadIdx.x % WARP, warp = threadIdx.x / WARP, k = p.k;
    const uint32_t units = k_llm_mvq_units(&p);
    if (k > K_LLM_MVQ_MAX_K || k % 256) /* (every CTA may own units: no early exit by index) */
        return;
    const uint64_t tw = (uint64_t)gridDim.x * NW, gw = (uint64_t)blockIdx.x * NW + warp;
    const uint32_t ub = (uint32_t)(units * gw / tw), ue = (uint32_t)(units * (gw + 1) / tw);
    struct q8_rows wc, wn;
    struct q8_task cur[2], nxt[2];
    uint32_t ntc = 0, ntn = 0;
    if (ub < ue) { /* the first pass's loads fly during the prologue */
        q8_rows_of(p, ub, wc);
        ntc = q8_nt(wc.type, k);
        q8_load_pass(wc, lane, ntc, cur);
    }
    q8_prologue(p, sm);
    float *y = (float *)(uintptr_t)p.y_va;
    const float *bias = (const float *)(uintptr_t)p.b_va;
    float acc[2] = {0.0f, 0.0f};
    uint32_t pass = 0;
    for (uint32_t u = ub; u < ue;) {
        const uint32_t P = (ntc + 31) / 32, np = pass + 1 == P ? 0 : pass + 1;
        const bool last = np == 0 && u + 1 == ue;
        if (!last) {
            if (np == 0) {
                q8_rows_of(p, u + 1, wn);
                ntn = q8_nt(wn.type, k);
            } else {
                wn = wc, ntn = ntc;
            }
            q8_load_pass(wn, np * 32 + lane, ntn, nxt);
        }
        q8_dot_pass(wc, pass * 32 + lane, ntc, cur, sm, acc);
        if (np == 0) { /* the unit is complete */
            float a = mv_warp_sum(acc[0]), b = mv_warp_sum(acc[1]);
            acc[0] = acc[1] = 0.0f;
            if (lane == 0) {
                if (p.mode == K_LLM_MV_SWIGLU) {
                    y[wc.o] = a / (1.0f + __expf(-a)) * b;
                } else {
                    y[wc.o] = (p.mode == K_LLM_MV_ACC ? y[wc.o] : 0.0f) + a + (bias ? bias[wc.o] : 0.0f);
                    if (wc.has_b)
                        y[wc.o + 1] =
                            (p.mode == K_LLM_MV_ACC ? y[wc.o + 1] : 0.0f) + b + (bias ? bias[wc.o + 1] : 0.0f);
                }
            }
            u++;
        }
        if (last)
            break;
        wc = wn, ntc = ntn;
        cur[0] = nxt[0], cur[1] = nxt[1];
        pass = np;
    }
}

/* The decode mat-vec with int8 activations (k_llm_matvec_q8) and, for A/B runs
 * (NVHCQ_MVQ=<suffix>), the earlier unit-per-warp body with units strided over the grid and
 * long rows split over warps (split: one task per lane and pass; u2: two); s3: the streaming
 * body capped at 80 registers (3 CTAs per SM; spills a little). */
extern "C" __global__ void __launch_bounds__(K_LLM_MV_THREADS, 2)
k_llm_matvec_q8(const struct k_llm_matvec_params p)
{
    q8_matvec_stream(p);
}

extern "C" __global__ void __launch_bounds__(K_LLM_MV_THREADS, 3)
k_llm_matvec_q8_s3(const struct k_llm_matvec_params p)
{
    q8_matvec_stream(p);
}

extern "C" __global__ void __launch_bounds__(K_LLM_MV_THREADS, 3)
k_llm_matvec_q8_split(const struct k_llm_matvec_params p)
{
    q8_matvec_split<1>(p);
}

extern "C" __global__ void __launch_bounds__(K_LLM_MV_THREADS, 2)
k_llm_matvec_q8_u2(const struct k_llm_matvec_params p)
{
    q8_matvec_split<2>(p);
}
