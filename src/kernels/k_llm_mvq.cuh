// SPDX-License-Identifier: MIT
/*
 * k_llm_mvq.cuh - device code of the int8-activation decode mat-vec (k_llm_matvec_q8), shared
 * by its kernels (src/kernels/k_llm_matvec.cu) and the persistent decode kernel
 * (src/kernels/k_llm_decode.cu), which runs the same bodies phase by phase. Parameters and
 * types: k_llm_matvec.h; repacked layouts: k_llm_quant.h.
 */
#ifndef K_LLM_MVQ_CUH
#define K_LLM_MVQ_CUH

#include "k_device.h"
#include "k_llm_matvec.h"
#include "k_llm_quant.h"
#include "k_llm_pf.cuh"

#ifndef WARP
#define WARP 32
#endif
#ifndef NW
#define NW (K_LLM_MV_THREADS / WARP)
#endif

/* Per-CTA timeline of a launch (A/B only, session 19): the marks compile to nothing unless the
 * including module defines K_LLM_MVQ_TL 1 first (k_llm_matvec_tl.cu, its own module, so no
 * default kernel changes). Why: every decode mat-vec launch pays a fixed ~2-3 us beside its bytes
 * (gate|up and Q|K|V move 2.3 and 1.2 TB/s where the output head moves 2.7, H100 Q8_0), and the
 * per-launch profile cannot say whether it is the wait, the prologue or the tail. The record of
 * CTA b is 16 u64 at pf.va[1] + 128 b (the engine sets it with pf.B[1] == 0, which
 * k_llm_pf_issue skips): [0] %globaltimer at entry, [1] after the PDL wait, [2] after the
 * prologue, [3] %smid, [4 + w] warp w done, [12] [13] [14] %clock64 at entry / wait / prologue,
 * [15] %clock64 when warp 0 is done (with [0] and [4], the SM clock rate). */
#ifndef K_LLM_MVQ_TL
#define K_LLM_MVQ_TL 0
#endif
enum { MVQ_TL_ENTRY = 0, MVQ_TL_WAIT = 1, MVQ_TL_PRO = 2, MVQ_TL_EXIT = 4 };

__device__ __forceinline__ void
mvq_tl(const struct k_llm_matvec_params &p, uint32_t what)
{
#if K_LLM_MVQ_TL && defined(__CUDA_ARCH__)
    const uint32_t t = threadIdx.x;
    if ((what == MVQ_TL_EXIT ? t % 32 : t) != 0 || !p.pf.va[1] || p.pf.B[1])
        return;
    uint64_t *r = (uint64_t *)(uintptr_t)p.pf.va[1] + 16ull * blockIdx.x;
    const uint64_t g = k_globaltimer();
    const uint64_t c = (uint64_t)clock64();
    if (what == MVQ_TL_EXIT) {
        r[4 + t / 32] = g;
        if (t == 0)
            r[15] = c;
        return;
    }
    r[what] = g;
    r[12 + what] = c;
    if (what == MVQ_TL_ENTRY) {
        uint32_t sm;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
        r[3] = sm;
    }
#else
    (void)p, (void)what;
#endif
}

__device__ __forceinline__ float
mvq_warp_sum(float v)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

/* ==== k_llm_matvec_q8: int8 activations, dp4a, weights straight into registers ====
 * Why: the staged kernel above spends ~5 instructions and a shared-memory round trip per
 * weight, so it is issue bound at 0.7-0.9 TB/s (bench/notes-decode.md). Here each lane reads
 * 16-byte pieces of the rows (lane-major repacked groups, k_llm_quant.h: every warp-wide
 * load one contiguous run) and turns 4 quants into one dp4a against 4 int8 activations. A
 * task is one lane's share of a row per pass (64 weights for Q6_KR, 32 for the others); a
 * unit is two rows (or a gate row and its up row) or, below K_LLM_MVQ_PAIR_ROWS rows, one.
 * The prologue (every CTA): x' = RMSNorm(x) * w as in the f32 kernel, then per block of 16
 * values d = max|x'| / 127 and q = rint(x' * (127 / max|x'|)) into shared memory with (d, d * sum q)
 * (kernels of one weight type place the blocks in conflict-free slots, k_llm_mvq_slot).
 * Two bodies: the default streams a contiguous unit range per warp with the next pass in
 * flight; q8_matvec_split (variants) strides units over the grid and splits long rows. */

struct q8_sm {
    int8_t xq[K_LLM_MVQ_MAX_K];
    float2 xs[K_LLM_MVQ_MAX_K / 16]; /* (d, d * sum of the block's q) */
    float part[NW];
};

/* One task's raw bytes (see q8_load): a, b, c, e 16-byte pieces, s and d words (each type keeps
 * what it loads; the others are never live). */
struct q8_task {
    uint4 a, b, c, e;
    uint32_t s, d;
};

__device__ __forceinline__ uint4
ldg16(const uint8_t *p)
{
    return __ldg((const uint4 *)p);
}

/* The same load with an L2 evict-first policy (k_llm_matvec_q8's weights): the weights stream
 * through L2 once per token (~1 GB) and evict everything else from it - the next launches'
 * code (ncu: the decode attention waits on instruction fetch), x, y and the KV cache. Weights
 * marked evict-first go first. PTX: createpolicy.fractional (sm_80+), ld...L2::cache_hint. */
__device__ __forceinline__ uint4
ldg16_ef(const uint8_t *p)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    uint64_t pol;
    asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
    uint4 v;
    asm("ld.global.nc.L1::no_allocate.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
        : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
        : "l"(p), "l"(pol));
    return v;
#else
    return ldg16(p);
#endif
}

template <bool EF>
__device__ __forceinline__ uint4
ldw16(const uint8_t *p)
{
    return EF ? ldg16_ef(p) : ldg16(p);
}

/* Values per task (one lane's share of a row per pass, k_llm_mvq_tasks), at compile time. */
template <uint32_t TYPE>
__device__ __forceinline__ uint32_t
q8_ts()
{
    return 2048 / k_llm_mvq_tasks(TYPE, 2048);
}

/* Load task t of a row (t % 32 is the lane for the repacked types: every load below is a
 * contiguous run across the warp, k_llm_quant.h "lane-major" groups). */
template <uint32_t TYPE, bool EF = false>
__device__ __forceinline__ void
q8_load(const uint8_t *row, uint32_t t, struct q8_task &r)
{
    const uint32_t L = t % 32;
    if (TYPE == K_LLM_T_Q6_KR) {
        const uint8_t *g = row + 1680 * (t / 32);
        r.a = ldw16<EF>(g + 16 * L);
        r.b = ldw16<EF>(g + 512 + 16 * L);
        r.c = ldw16<EF>(g + 1024 + 16 * L);
        r.s = __ldg((const unsigned int *)(g + 1536 + 4 * L));
        r.d = __ldg((const unsigned short *)(g + 1664 + 2 * (L / 4)));
    } else if (TYPE == K_LLM_T_Q5_KR) { /* qh and head: 2 and 4 lanes read the same 16 bytes */
        const uint8_t *g = row + 1408 * (t / 32);
        r.a = ldw16<EF>(g + 16 * L);
        r.b = ldw16<EF>(g + 512 + 16 * L);
        r.c = ldw16<EF>(g + 1024 + 16 * (2 * (L / 4) + L % 2));
        r.e = ldw16<EF>(g + 1280 + 16 * (L / 4));
    } else if (TYPE == K_LLM_T_Q4_KR) { /* Q5_KR without qh */
        const uint8_t *g = row + 1152 * (t / 32);
        r.a = ldw16<EF>(g + 16 * L);
        r.b = ldw16<EF>(g + 512 + 16 * L);
        r.e = ldw16<EF>(g + 1024 + 16 * (L / 4));
    } else if (TYPE == 12 || TYPE == 13) {
        const uint32_t bs = TYPE == 12 ? 144 : 176;
        const uint8_t *b = row + bs * (t / 8);
        uint32_t pc = t % 8;
        r.c = ldw16<EF>(b);
        r.a = ldw16<EF>(b + (TYPE == 12 ? 16 : 48) + 16 * pc);
        if (TYPE == 13)
            r.b = ldw16<EF>(b + 16 + 16 * (pc % 2));
    } else if (TYPE == K_LLM_T_Q4_0R2) { /* groups 2 (t / 32) and 2 (t / 32) + 1, lane L of each */
        const uint8_t *g = row + 1152 * (t / 32);
        r.a = ldw16<EF>(g + 16 * L);
        r.b = ldw16<EF>(g + 576 + 16 * L);
        r.d = (uint32_t)__ldg((const unsigned short *)(g + 512 + 2 * L)) |
              (uint32_t)__ldg((const unsigned short *)(g + 1088 + 2 * L)) << 16;
    } else if (TYPE == K_LLM_T_Q8_0R2) {
        const uint8_t *g = row + 2176 * (t / 32);
        r.a = ldw16<EF>(g + 16 * L);
        r.b = ldw16<EF>(g + 512 + 16 * L);
        r.c = ldw16<EF>(g + 1088 + 16 * L);
        r.e = ldw16<EF>(g + 1600 + 16 * L);
        r.d = (uint32_t)__ldg((const unsigned short *)(g + 1024 + 2 * L)) |
              (uint32_t)__ldg((const unsigned short *)(g + 2112 + 2 * L)) << 16;
    } else if (TYPE == K_LLM_T_Q8_0R) {
        const uint8_t *g = row + 1088 * (t / 32);
        r.a = ldw16<EF>(g + 16 * L);
        r.b = ldw16<EF>(g + 512 + 16 * L);
        r.d = __ldg((const unsigned short *)(g + 1024 + 2 * L));
    } else { /* Q4_0R */
        const uint8_t *g = row + 576 * (t / 32);
        r.a = ldw16<EF>(g + 16 * L);
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

/* Q5_K's quants with their fifth bit: low nibbles | bit 0 of each byte of hs at bit 4 (lo), high
 * nibbles | bit 1 of hs at bit 4 (hi); hs = the qh bytes shifted right by 2j (q8_dot).
 * One shift of qh per task instead of two shift-and-mask passes: 24 fewer instructions in
 * k_llm_matvec_q8_q5k, tg128 Q5_K_M +0.5-0.8% (H100 s94, session 14; same quants). */
__device__ __forceinline__ uint4
q5_lo(uint4 q, uint4 hs)
{
    return make_uint4((q.x & 0x0F0F0F0Fu) | ((hs.x << 4) & 0x10101010u), (q.y & 0x0F0F0F0Fu) | ((hs.y << 4) & 0x10101010u),
                      (q.z & 0x0F0F0F0Fu) | ((hs.z << 4) & 0x10101010u), (q.w & 0x0F0F0F0Fu) | ((hs.w << 4) & 0x10101010u));
}

__device__ __forceinline__ uint4
q5_hi(uint4 q, uint4 hs)
{
    return make_uint4(((q.x >> 4) & 0x0F0F0F0Fu) | ((hs.x << 3) & 0x10101010u),
                      ((q.y >> 4) & 0x0F0F0F0Fu) | ((hs.y << 3) & 0x10101010u),
                      ((q.z >> 4) & 0x0F0F0F0Fu) | ((hs.z << 3) & 0x10101010u),
                      ((q.w >> 4) & 0x0F0F0F0Fu) | ((hs.w << 3) & 0x10101010u));
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

/* Q6_KR: one run of 16 values (quants | 2 high bits at 4-5 of each byte) against x' block
 * slot s (k_llm_mvq_slot). */
__device__ __forceinline__ float
q6_run(uint4 q, uint32_t s, const struct q8_sm &sm, uint32_t sc_byte)
{
    int dq = dot16(q, xq16(sm, 16 * s));
    float2 x = sm.xs[s];
    return (float)(int8_t)sc_byte * fmaf(x.x, (float)dq, -32.0f * x.y);
}

/* ==== Where x' block bi lives in shared memory ====
 * Why: each lane of a task reads its own 16-byte runs of x' (xq) and their (d, d * sum)
 * (xs), and in the logical order those addresses fall on few banks: Q6_KR's lanes 0-7 read
 * blocks 0, 1, 8, 9, 16, 17, 24, 25 - bytes 0, 16, 128, ... - all in banks 0-7, a 4-way
 * conflict on every 16-byte load and on every xs load (the others 2-way); ncu counted the
 * short-scoreboard stall at ~2 of the ~10 cycles between a warp's instructions (session 6).
 * Kernels of one weight type store block bi at k_llm_mvq_slot (k_llm_matvec.h): a warp's load
 * of one run is then one contiguous 512 B (xq) / 256 B (xs). Launches of mixed types keep the
 * logical order. Same values, same sums in the same order: only their addresses move. */
/* The slot run c of task t reads: k_llm_mvq_run_slot's (SWZ), else bi, its block in logical order. */
template <uint32_t TYPE, bool SWZ>
__device__ __forceinline__ uint32_t
q8_xslot(uint32_t t, uint32_t c, uint32_t nb, uint32_t bi)
{
    return SWZ ? k_llm_mvq_run_slot(TYPE, t, c, nb) : bi;
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

/* Dot of task t of a row with x'. SWZ: x' is stored by k_llm_mvq_slot (nb = k / 16 blocks),
 * else in logical order. */
template <uint32_t TYPE, bool SWZ = false>
__device__ __forceinline__ float
q8_dot(const struct q8_task &r, uint32_t t, const struct q8_sm &sm, uint32_t nb = 0)
{
    const uint32_t L = t % 32;
    if (TYPE == K_LLM_T_Q6_KR) {
        /* values 256b + 128h + l0 + {0: qa lo, 64: qa hi, 32: qb lo, 96: qb hi} + 0..15 */
        uint32_t b = L / 4, h = (L / 2) % 2, l0 = 16 * (L % 2);
        uint32_t i0 = 2048 * (t / 32) + 256 * b + 128 * h + l0;
        const uint32_t s0 = q8_xslot<TYPE, SWZ>(t, 0, nb, i0 / 16), s1 = q8_xslot<TYPE, SWZ>(t, 1, nb, i0 / 16 + 4),
                       s2 = q8_xslot<TYPE, SWZ>(t, 2, nb, i0 / 16 + 2), s3 = q8_xslot<TYPE, SWZ>(t, 3, nb, i0 / 16 + 6);
        uint4 t1 = make_uint4(r.c.x >> 2, r.c.y >> 2, r.c.z >> 2, r.c.w >> 2);
        float v = q6_run(q6_lo(r.a, r.c), s0, sm, byte_at(r.s, 0)) + q6_run(q6_hi(r.a, r.c), s1, sm, byte_at(r.s, 1)) +
                  q6_run(q6_lo(r.b, t1), s2, sm, byte_at(r.s, 2)) + q6_run(q6_hi(r.b, t1), s3, sm, byte_at(r.s, 3));
        return k_llm_f16((uint16_t)r.d) * v;
    } else if (TYPE == K_LLM_T_Q5_KR || TYPE == K_LLM_T_Q4_KR) {
        /* values 256b + 128h + l0 + {0: qa lo, 32: qa hi, 64: qb lo, 96: qb hi} + 0..15, sub-blocks
         * 4h + 0..3 (k_llm_quant.h); the x' runs in Q6_KR's slot order {0, 64, 32, 96}; Q5_KR's
         * fifth bits from qh */
        const uint32_t b = L / 4, h = (L / 2) % 2, l0 = 16 * (L % 2);
        const uint32_t i0 = 2048 * (t / 32) + 256 * b + 128 * h + l0;
        const uint32_t s0 = q8_xslot<TYPE, SWZ>(t, 0, nb, i0 / 16), s1 = q8_xslot<TYPE, SWZ>(t, 1, nb, i0 / 16 + 4),
                       s2 = q8_xslot<TYPE, SWZ>(t, 2, nb, i0 / 16 + 2), s3 = q8_xslot<TYPE, SWZ>(t, 3, nb, i0 / 16 + 6);
        uint4 q0, q32, q64, q96;
        if (TYPE == K_LLM_T_Q5_KR) {
            const uint32_t sh = 4 * h; /* fifth bits of sub-blocks 4h.. at bit 0 of each byte */
            const uint4 h0 = make_uint4(r.c.x >> sh, r.c.y >> sh, r.c.z >> sh, r.c.w >> sh);
            const uint4 h2 = make_uint4(h0.x >> 2, h0.y >> 2, h0.z >> 2, h0.w >> 2);
            q0 = q5_lo(r.a, h0), q32 = q5_hi(r.a, h0), q64 = q5_lo(r.b, h2), q96 = q5_hi(r.b, h2);
        } else {
            q0 = lo4(r.a), q32 = hi4(r.a), q64 = lo4(r.b), q96 = hi4(r.b);
        }
        const int d0 = dot16(q0, xq16(sm, 16 * s0)), d32 = dot16(q32, xq16(sm, 16 * s2));
        const int d64 = dot16(q64, xq16(sm, 16 * s1)), d96 = dot16(q96, xq16(sm, 16 * s3));
        uint32_t SC, M; /* scale and min of sub-block 4h + c as byte c (the head's scales: e.y, e.z, e.w) */
        k_llm_scale_min_k4_x4(r.e.y, r.e.z, r.e.w, h, &SC, &M);
        const float2 x0 = sm.xs[s0], x32 = sm.xs[s2], x64 = sm.xs[s1], x96 = sm.xs[s3];
        const float d = k_llm_f16((uint16_t)(r.e.x & 0xFFFF)), dmin = k_llm_f16((uint16_t)(r.e.x >> 16));
        return d * ((float)byte_at(SC, 0) * x0.x * (float)d0 + (float)byte_at(SC, 1) * x32.x * (float)d32 +
                    (float)byte_at(SC, 2) * x64.x * (float)d64 + (float)byte_at(SC, 3) * x96.x * (float)d96) -
               dmin * ((float)byte_at(M, 0) * x0.y + (float)byte_at(M, 1) * x32.y + (float)byte_at(M, 2) * x64.y +
                       (float)byte_at(M, 3) * x96.y);
    } else if (TYPE == 12 || TYPE == 13) {
        uint32_t pc = t % 8, j = pc / 2, l0 = 16 * (pc % 2);
        uint32_t i0 = 256 * (t / 8) + 64 * j + l0; /* low nibbles: sub-block 2j; high: 2j+1 at +32 */
        uint4 lo, hi;
        if (TYPE == 13) { /* qh shifted once: bit 2j of each byte to bit 0 (lo), bit 2j + 1 to bit 1 (hi) */
            const uint4 h = make_uint4(r.b.x >> (2 * j), r.b.y >> (2 * j), r.b.z >> (2 * j), r.b.w >> (2 * j));
            lo = q5_lo(r.a, h);
            hi = q5_hi(r.a, h);
        } else {
            lo = lo4(r.a), hi = hi4(r.a);
        }
        const uint32_t sl = q8_xslot<TYPE, SWZ>(t, 0, nb, i0 / 16), sh = q8_xslot<TYPE, SWZ>(t, 1, nb, i0 / 16 + 2);
        int dl = dot16(lo, xq16(sm, 16 * sl)), dh = dot16(hi, xq16(sm, 16 * sh));
        float2 xl = sm.xs[sl], xh = sm.xs[sh];
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
        const uint32_t s0 = q8_xslot<TYPE, SWZ>(t, 0, nb, i0 / 16), s1 = q8_xslot<TYPE, SWZ>(t, 1, nb, i0 / 16 + 1);
        int d0 = dot16(r.a, xq16(sm, 16 * s0)), d1 = dot16(r.b, xq16(sm, 16 * s1));
        float2 x0 = sm.xs[s0], x1 = sm.xs[s1];
        return k_llm_f16((uint16_t)r.d) * (x0.x * (float)d0 + x1.x * (float)d1);
    } else { /* Q4_0R: low nibbles values 0..15 of the block, high 16..31 */
        uint32_t i0 = 1024 * (t / 32) + 32 * L;
        const uint32_t s0 = q8_xslot<TYPE, SWZ>(t, 0, nb, i0 / 16), s1 = q8_xslot<TYPE, SWZ>(t, 1, nb, i0 / 16 + 1);
        int d0 = dot16(lo4(r.a), xq16(sm, 16 * s0)), d1 = dot16(hi4(r.a), xq16(sm, 16 * s1));
        float2 x0 = sm.xs[s0], x1 = sm.xs[s1];
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

/* rpu_force: rows per unit when not the launch's own (k_llm_mvq_rpu; the split-pair body, q8_ks2) */
__device__ __forceinline__ void
q8_rows_of(const struct k_llm_matvec_params &p, uint32_t u, struct q8_rows &w, uint32_t rpu_force = 0)
{
    /* constant segment indices: a dynamic index would copy the params to local memory */
    const uint32_t rows[K_LLM_MV_SEGS] = {p.seg[0].rows, p.seg[1].rows, p.seg[2].rows};
    const uint32_t rpu = rpu_force ? rpu_force : k_llm_mvq_rpu(&p);
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
 * block of 16 into sm (k_llm_mvq_block); ends with a CTA barrier. CG: x is read through L2
 * (ld.global.cg) because another CTA of the same launch wrote it (the persistent decode
 * kernel, k_llm_decode.cu): the non-coherent path (__ldg) and L1 may hold an older copy. */
template <bool CG>
__device__ __forceinline__ float4
q8_ld_act(const float4 *p)
{
    /* __ldg: the texture path, which the rm latch acquire invalidates
     * (LATCH_ACQUIRE_INVALIDATE_TEXTURE_DATA_CACHE). The PTX keeps these loads after
     * griddepcontrol.wait (checked, session 6); a coherent ld.global variant changed nothing
     * in the open rm:0 e2e failures (bench/notes-decode.md session 6) and was not kept. */
    return CG ? __ldcg(p) : __ldg(p);
}

/* The 16 activations of block bi of x into v. */
template <bool CG>
__device__ __forceinline__ void
q8_ld_x16(const struct k_llm_matvec_params &p, uint32_t bi, float *v)
{
    const float4 *xp = (const float4 *)(uintptr_t)(p.x_va + 64ull * bi);
#pragma unroll
    for (int i = 0; i < 4; i++) {
        float4 a = q8_ld_act<CG>(xp + i);
        v[4 * i] = a.x, v[4 * i + 1] = a.y, v[4 * i + 2] = a.z, v[4 * i + 3] = a.w;
    }
}

/* k_llm_mvq_block's quants and scale with fewer instructions, the same values, in three steps
 * that q8_store_block (a block in one thread) and q8_store_half (a block in two lanes) share:
 * the max and the NaN/Inf flag as there (q8_amax_flag); the scale (q8_scale; a flagged block
 * gets d NaN and inv 0); one float-to-int conversion per value (cvt.rni.s32.f32 rounds half to
 * even as rintf, and turns NaN - v * 0 of an Inf - into 0, so a flagged block needs no select),
 * bytes packed by PRMT and the quants' sum by one dp4a per word (q8_pack4). */
template <int N>
__device__ __forceinline__ void
q8_amax_flag(const float *v, float &amax, float &z)
{
    amax = 0.0f, z = 0.0f;
#pragma unroll
    for (int i = 0; i < N; i++) {
        amax = fmaxf(amax, fabsf(v[i]));
        z += v[i] * 0.0f;
    }
}

__device__ __forceinline__ void
q8_scale(float amax, float z, float &d, float &inv)
{
    const bool bad = z != 0.0f;
    d = bad ? __int_as_float(0x7fc00000) : amax / 127.0f;
    inv = amax > 0.0f && !bad ? 127.0f / amax : 0.0f;
}

__device__ __forceinline__ uint32_t
q8_pack4(const float *v, float inv, int &sum)
{
    const int q0 = __float2int_rn(v[0] * inv), q1 = __float2int_rn(v[1] * inv), q2 = __float2int_rn(v[2] * inv),
              q3 = __float2int_rn(v[3] * inv);
    const uint32_t w = __byte_perm(__byte_perm(q0, q1, 0x0040), __byte_perm(q2, q3, 0x0040), 0x5410);
    sum = __dp4a((int)w, 0x01010101, sum);
    return w;
}

/* Block of x' (16 values v) into slot bi of sm (k_llm_mvq_slot): int8 quants (k_llm_mvq_block) and
 * (d, d * sum q). */
__device__ __forceinline__ void
q8_store_block(struct q8_sm &sm, uint32_t bi, const float *v)
{
    float amax, z, d, inv;
    q8_amax_flag<16>(v, amax, z);
    q8_scale(amax, z, d, inv);
    uint32_t w[4];
    int sum = 0;
#pragma unroll
    for (int j = 0; j < 4; j++)
        w[j] = q8_pack4(v + 4 * j, inv, sum);
    *(uint4 *)(sm.xq + 16 * bi) = make_uint4(w[0], w[1], w[2], w[3]);
    sm.xs[bi] = make_float2(d, d * (float)sum);
}

/* Half h of a block (8 values v) into slot bi, the other half in lane ^ 1 of the same warp (both
 * lanes of every pair of the warp call it): the same quants, scale and sum as q8_store_block -
 * max, flag and sum are exchanged with the partner lane (max exact, integer sum exact). */
__device__ __forceinline__ void
q8_store_half(struct q8_sm &sm, uint32_t bi, uint32_t h, const float *v)
{
    float amax, z, d, inv;
    q8_amax_flag<8>(v, amax, z);
    amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, 1));
    z += __shfl_xor_sync(0xffffffffu, z, 1);
    q8_scale(amax, z, d, inv);
    uint32_t w[2];
    int sum = 0;
#pragma unroll
    for (int j = 0; j < 2; j++)
        w[j] = q8_pack4(v + 4 * j, inv, sum);
    sum += __shfl_xor_sync(0xffffffffu, sum, 1);
    *(uint2 *)(sm.xq + 16 * bi + 8 * h) = make_uint2(w[0], w[1]);
    if (h == 0)
        sm.xs[bi] = make_float2(d, d * (float)sum);
}

template <bool CG = false, uint32_t SWZ_FT = 0>
__device__ __forceinline__ void
q8_prologue(const struct k_llm_matvec_params &p, struct q8_sm &sm)
{
    const uint32_t t = threadIdx.x, lane = t % WARP, warp = t / WARP, k = p.k;
    float inv = 1.0f;
    if (p.norm_w_va) {
        const float4 *x4 = (const float4 *)(uintptr_t)p.x_va;
        float ss = 0.0f;
        for (uint32_t j = t; j < k / 4; j += K_LLM_MV_THREADS) {
            float4 v = q8_ld_act<CG>(x4 + j);
            ss += v.x * v.x + v.y * v.y + v.z * v.z + v.w * v.w;
        }
        ss = mvq_warp_sum(ss);
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
        float v[16];
        q8_ld_x16<CG>(p, bi, v);
        if (p.norm_w_va) {
            const float4 *wp = (const float4 *)(uintptr_t)(p.norm_w_va + 64ull * bi);
#pragma unroll
            for (int i = 0; i < 4; i++) {
                float4 w = __ldg(wp + i);
                v[4 * i] = v[4 * i] * inv * w.x, v[4 * i + 1] = v[4 * i + 1] * inv * w.y;
                v[4 * i + 2] = v[4 * i + 2] * inv * w.z, v[4 * i + 3] = v[4 * i + 3] * inv * w.w;
            }
        }
        q8_store_block(sm, k_llm_mvq_slot(SWZ_FT, bi, k / 16), v);
    }
    __syncthreads();
}

/* The one-pass prologue (A/B, k_llm_matvec_q8_p1): each thread quantizes its blocks of
 * x * w (the norm weight, without the RMS factor) while summing x^2, so x is read once and the
 * CTA synchronizes once; returns the RMS factor inv, which the caller applies to each unit's
 * sums (they are linear in x': int8 rounding of v / d is the same for v * inv / (d * inv) up
 * to float ties, inside the tested flip bound). 1 without a norm weight. */
template <bool CG = false, uint32_t SWZ_FT = 0>
__device__ __forceinline__ float
q8_prologue1(const struct k_llm_matvec_params &p, struct q8_sm &sm)
{
    const uint32_t t = threadIdx.x, lane = t % WARP, warp = t / WARP, k = p.k;
    float ss = 0.0f;
    /* k <= 2048 (Q|K|V, O, gate|up and the output head of a 1B model): as many blocks as half
     * the threads, so two threads take a block, half each - the prologue after the PDL wait is
     * on every launch's critical path, and half the threads sat idle in it. nb is a multiple of
     * 16 (k % 256 == 0): a warp's lanes are all in or all out, as the shuffles need. */
    if (2 * (k / 16) <= K_LLM_MV_THREADS) {
        const uint32_t bi = t / 2, h = t % 2;
        if (bi < k / 16) {
            float v[8];
            const float4 *xp = (const float4 *)(uintptr_t)(p.x_va + 64ull * bi + 32ull * h);
#pragma unroll
            for (int i = 0; i < 2; i++) {
                float4 a = q8_ld_act<CG>(xp + i);
                v[4 * i] = a.x, v[4 * i + 1] = a.y, v[4 * i + 2] = a.z, v[4 * i + 3] = a.w;
            }
            if (p.norm_w_va) {
                const float4 *wp = (const float4 *)(uintptr_t)(p.norm_w_va + 64ull * bi + 32ull * h);
#pragma unroll
                for (int i = 0; i < 2; i++) {
                    float4 w = __ldg(wp + i);
                    ss += v[4 * i] * v[4 * i] + v[4 * i + 1] * v[4 * i + 1] + v[4 * i + 2] * v[4 * i + 2] +
                          v[4 * i + 3] * v[4 * i + 3];
                    v[4 * i] *= w.x, v[4 * i + 1] *= w.y, v[4 * i + 2] *= w.z, v[4 * i + 3] *= w.w;
                }
            }
            q8_store_half(sm, k_llm_mvq_slot(SWZ_FT, bi, k / 16), h, v);
        }
    } else {
        for (uint32_t bi = t; bi < k / 16; bi += K_LLM_MV_THREADS) {
            float v[16];
            q8_ld_x16<CG>(p, bi, v);
            if (p.norm_w_va) {
                const float4 *wp = (const float4 *)(uintptr_t)(p.norm_w_va + 64ull * bi);
#pragma unroll
                for (int i = 0; i < 4; i++) {
                    float4 w = __ldg(wp + i);
                    ss += v[4 * i] * v[4 * i] + v[4 * i + 1] * v[4 * i + 1] + v[4 * i + 2] * v[4 * i + 2] +
                          v[4 * i + 3] * v[4 * i + 3];
                    v[4 * i] *= w.x, v[4 * i + 1] *= w.y, v[4 * i + 2] *= w.z, v[4 * i + 3] *= w.w;
                }
            }
            q8_store_block(sm, k_llm_mvq_slot(SWZ_FT, bi, k / 16), v);
        }
    }
    if (p.norm_w_va) {
        ss = mvq_warp_sum(ss);
        if (lane == 0)
            sm.part[warp] = ss;
    }
    __syncthreads();
    if (!p.norm_w_va)
        return 1.0f;
    float tot = 0.0f;
#pragma unroll
    for (int w = 0; w < NW; w++)
        tot += sm.part[w];
    return rsqrtf(tot / (float)k + p.eps);
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
            case K_LLM_T_Q5_KR: q8_unit<K_LLM_T_Q5_KR, U>(w.ra, w.rb, w.has_b, k, ks, W, lane, sm, acc); break;
            case K_LLM_T_Q4_KR: q8_unit<K_LLM_T_Q4_KR, U>(w.ra, w.rb, w.has_b, k, ks, W, lane, sm, acc); break;
            default: break;
            }
        }
        float a = mvq_warp_sum(acc[0]), b = mvq_warp_sum(acc[1]);
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

/* Tasks per row of a type (q8_ts): k_llm_mvq_tasks. */
__device__ __forceinline__ uint32_t
q8_nt(uint32_t type, uint32_t k)
{
    return k_llm_mvq_tasks(type, k);
}

/* Task t of a unit's row a (and b) of type T into r[0] (r[1]) / dotted into acc[0] (acc[1]). */
template <uint32_t T, bool EF>
__device__ __forceinline__ void
q8_load_rows(const struct q8_rows &w, uint32_t t, struct q8_task *r)
{
    q8_load<T, EF>(w.ra, t, r[0]);
    if (w.has_b)
        q8_load<T, EF>(w.rb, t, r[1]);
}

/* Task t of the two-group codes (K_LLM_T_Q4_0R2 / Q8_0R2) as the two one-group tasks it holds,
 * added one after the other (the order of the one-group body). */
template <uint32_t T, bool SWZ>
__device__ __forceinline__ void
q8_dot_x2(const struct q8_task &r, uint32_t t, const struct q8_sm &sm, uint32_t nb, float &acc)
{
    constexpr uint32_t T1 = T == K_LLM_T_Q4_0R2 ? K_LLM_T_Q4_0R : K_LLM_T_Q8_0R;
    const uint32_t ta = 64 * (t / 32) + t % 32;
    struct q8_task h0, h1;
    h0.a = r.a, h0.b = r.b, h0.d = r.d & 0xFFFFu;
    h1.a = T == K_LLM_T_Q4_0R2 ? r.b : r.c, h1.b = r.e, h1.d = r.d >> 16;
    acc += q8_dot<T1, SWZ>(h0, ta, sm, nb);
    acc += q8_dot<T1, SWZ>(h1, ta + 32, sm, nb);
}

template <uint32_t T, bool SWZ>
__device__ __forceinline__ void
q8_dot_rows(const struct q8_rows &w, uint32_t t, const struct q8_task *r, const struct q8_sm &sm, uint32_t nb,
            float *acc)
{
    if (T == K_LLM_T_Q4_0R2 || T == K_LLM_T_Q8_0R2) {
        q8_dot_x2<T, SWZ>(r[0], t, sm, nb, acc[0]);
        if (w.has_b)
            q8_dot_x2<T, SWZ>(r[1], t, sm, nb, acc[1]);
        return;
    }
    acc[0] += q8_dot<T, SWZ>(r[0], t, sm, nb);
    if (w.has_b)
        acc[1] += q8_dot<T, SWZ>(r[1], t, sm, nb);
}

/* One pass of a warp (task t = pass * 32 + lane of both rows of its unit): loads, and dot. */
template <bool EF = false, uint32_t FT = 0, uint32_t FT2 = 0>
__device__ __forceinline__ void
q8_load_pass(const struct q8_rows &w, uint32_t t, uint32_t nt, struct q8_task *r)
{
    if (t >= nt)
        return;
    if (FT2 && w.type == FT2) { /* the second type of a two-type kernel (k_llm_matvec_q8_q4k_q6k) */
        q8_load_rows<FT2 ? FT2 : 12, EF>(w, t, r);
        return;
    }
    if (FT) { /* the launch's one type, known at compile time (k_llm_matvec_q8_<type>; the
               * `FT ? FT : 12` only keeps the never-taken FT = 0 instantiation valid) */
        q8_load_rows<FT ? FT : 12, EF>(w, t, r);
        return;
    }
    switch (w.type) {
#define Q8_LOAD_CASE(T)                                                                                                \
    case T: q8_load_rows<T, EF>(w, t, r); break;
        Q8_LOAD_CASE(12)
        Q8_LOAD_CASE(13)
        Q8_LOAD_CASE(K_LLM_T_Q4_0R)
        Q8_LOAD_CASE(K_LLM_T_Q8_0R)
        Q8_LOAD_CASE(K_LLM_T_Q6_KR)
        Q8_LOAD_CASE(K_LLM_T_Q5_KR)
        Q8_LOAD_CASE(K_LLM_T_Q4_KR)
#undef Q8_LOAD_CASE
    default: break;
    }
}

template <uint32_t FT = 0, bool SWZ = false, uint32_t FT2 = 0>
__device__ __forceinline__ void
q8_dot_pass(const struct q8_rows &w, uint32_t t, uint32_t nt, const struct q8_task *r, const struct q8_sm &sm,
            float *acc)
{
    if (t >= nt)
        return;
    if (FT2 && w.type == FT2) { /* x' in logical order in two-type kernels (SWZ false) */
        q8_dot_rows<FT2 ? FT2 : 12, false>(w, t, r, sm, 0, acc);
        return;
    }
    if (FT) {
        const uint32_t nb = nt * (q8_ts<FT ? FT : 12>() / 16); /* k / 16 */
        q8_dot_rows<FT ? FT : 12, SWZ>(w, t, r, sm, nb, acc);
        return;
    }
    switch (w.type) {
#define Q8_DOT_CASE(T)                                                                                                 \
    case T: q8_dot_rows<T, false>(w, t, r, sm, 0, acc); break;
        Q8_DOT_CASE(12)
        Q8_DOT_CASE(13)
        Q8_DOT_CASE(K_LLM_T_Q4_0R)
        Q8_DOT_CASE(K_LLM_T_Q8_0R)
        Q8_DOT_CASE(K_LLM_T_Q6_KR)
        Q8_DOT_CASE(K_LLM_T_Q5_KR)
        Q8_DOT_CASE(K_LLM_T_Q4_KR)
#undef Q8_DOT_CASE
    default: break;
    }
}

/* The streaming body: each warp takes a contiguous range of units (neighbouring rows) and
 * walks it as one sequence of passes, the next pass's loads issued before the current pass
 * is dotted, reduced and stored. Measured on H100 (bench/notes-decode.md): it needs both
 * this order and the lane-major layouts (every warp load one contiguous run) - with either
 * alone the output head streamed ~1.25 TB/s, with both ~2 TB/s on loads alone.
 * Split in two so the persistent decode kernel can issue a phase's first weight loads before
 * it waits for the previous phase (weights do not depend on it): q8_stream_begin takes the
 * warp's unit range and loads its first pass; q8_stream_run forms x' and walks the range,
 * handing each finished unit's sums to the epilogue `epi(w, a, b)` (lane 0). */
/* This warp's contiguous range [*ub, *ue) of the launch's units (every warp of the grid one
 * share; the streaming, long-row and shared-memory-ring bodies walk it). */
__device__ __forceinline__ void
q8_warp_units(const struct k_llm_matvec_params &p, uint32_t *ub, uint32_t *ue)
{
    const uint32_t units = k_llm_mvq_units(&p), warp = threadIdx.x / WARP;
    const uint64_t tw = (uint64_t)gridDim.x * NW, gw = (uint64_t)blockIdx.x * NW + warp;
    *ub = (uint32_t)(units * gw / tw), *ue = (uint32_t)(units * (gw + 1) / tw);
}

struct q8_stream {
    struct q8_rows wc;
    struct q8_task cur[2];
    uint32_t ntc, ub, ue;
};

template <bool EF = false, uint32_t FT = 0, uint32_t FT2 = 0>
__device__ __forceinline__ void
q8_stream_begin(const struct k_llm_matvec_params &p, struct q8_stream &st)
{
    const uint32_t lane = threadIdx.x % WARP;
    q8_warp_units(p, &st.ub, &st.ue);
    st.ntc = 0;
    if (st.ub < st.ue) {
        q8_rows_of(p, st.ub, st.wc);
        st.ntc = q8_nt(FT && !FT2 ? FT : st.wc.type, p.k);
        q8_load_pass<EF, FT, FT2>(st.wc, lane, st.ntc, st.cur);
    }
}

/* RoPE of the pair (a, b) at pair index j of a head: k_llm_rope_kv's formula and rounding
 * (theta reduced to [-pi, pi] in double, then the fast sincos). */
__device__ __forceinline__ void
k_llm_rope_pair(uint32_t pos, uint32_t j, uint32_t hd, float base, uint64_t freqs_va, float a, float b, float &r0,
                float &r1)
{
    float theta = (float)pos * powf(base, -2.0f * (float)j / (float)hd);
    if (freqs_va)
        theta /= __ldg((const float *)(uintptr_t)freqs_va + j);
    double t = (double)theta;
    t -= 6.283185307179586 * rint(t * 0.15915494309189535);
    float c, s;
    __sincosf((float)t, &s, &c);
    r0 = a * c - b * s;
    r1 = a * s + b * c;
}

/* The epilogue of k_llm_matvec_q8: SET, ACC (y += , read through L2 when CG), SWIGLU, or ROPE
 * (struct k_llm_mv_rope). */
template <bool CG>
struct q8_epi_std {
    const struct k_llm_matvec_params &p;
    __device__ __forceinline__ void
    operator()(const struct q8_rows &w, float a, float b) const
    {
        float *y = (float *)(uintptr_t)p.y_va;
        const float *bias = (const float *)(uintptr_t)p.b_va;
        if (p.mode == K_LLM_MV_SWIGLU) {
            y[w.o] = a / (1.0f + __expf(-a)) * b;
            return;
        }
        if (p.mode == K_LLM_MV_ROPE) {
            const struct k_llm_mv_rope &r = p.rope;
            const uint32_t o = w.o;
            if (o >= r.n_q + r.n_kv) {
                float *vc = (float *)(uintptr_t)r.vc_va + (size_t)r.pos * r.n_kv + (o - r.n_q - r.n_kv);
                vc[0] = a, vc[1] = b;
                return;
            }
            float r0, r1;
            k_llm_rope_pair(r.pos, (o % r.hd) / 2, r.hd, r.base, r.freqs_va, a, b, r0, r1);
            float *dst = o < r.n_q ? y + o : (float *)(uintptr_t)r.kc_va + (size_t)r.pos * r.n_kv + (o - r.n_q);
            dst[0] = r0, dst[1] = r1;
            return;
        }
        const bool acc = p.mode == K_LLM_MV_ACC;
        /* ACC without bias (O and down + residual): y += a as one reduction in L2 (atomicAdd with
         * its result unused compiles to RED) instead of load, add, store - no L2 round trip after
         * the sums. One writer per element: y + a rounds as before (RED.F32 flushes subnormals).
         * H100 s88 (session 13), tg128 alternating: Q8_0 +0.5%, Q5_K_M +0.7%, Q4_K_M +0.3%, Q6_K
         * and Q4_0 unchanged; Q8_0 down 9.33 -> 8.81 us, the Q|K|V after it 4.31 -> 4.95 (the
         * reductions finish before the grid completes). */
        if (acc && !bias) {
            atomicAdd(y + w.o, a);
            if (w.has_b)
                atomicAdd(y + w.o + 1, b);
            return;
        }
        y[w.o] = (acc ? (CG ? __ldcg(y + w.o) : y[w.o]) : 0.0f) + a + (bias ? bias[w.o] : 0.0f);
        if (w.has_b)
            y[w.o + 1] = (acc ? (CG ? __ldcg(y + w.o + 1) : y[w.o + 1]) : 0.0f) + b + (bias ? bias[w.o + 1] : 0.0f);
    }
};

/* WAIT2 (A/B, k_llm_matvec_q8_e2): the second pass's loads are issued too before the PDL wait,
 * which this function then makes (the caller must not). WP (A/B, session 19): the caller has
 * waited; the second pass's loads are issued before the prologue - the timeline (s139) put the
 * prologue at 1.2 us (Q|K|V, gate|up) to 1.9 us (down) per CTA, with one pass in flight. */
template <bool CG, class EPI, bool WAIT2 = false, bool P1 = false, bool EF = false, uint32_t FT = 0,
          bool SWZ = (FT != 0), uint32_t FT2 = 0, bool WP = false>
__device__ __forceinline__ void
q8_stream_run(const struct k_llm_matvec_params &p, struct q8_stream &st, struct q8_sm &sm, const EPI &epi)
{
    const uint32_t lane = threadIdx.x % WARP, k = p.k;
    struct q8_rows wn;
    struct q8_task nxt[2];
    uint32_t ntn = 0;
    bool loaded = false; /* the first iteration's next pass is already in flight */
    if (WAIT2 || WP) {
        if (st.ub < st.ue) {
            const uint32_t P = (st.ntc + 31) / 32, np = 1 == P ? 0 : 1;
            if (!(np == 0 && st.ub + 1 == st.ue)) {
                if (np == 0) {
                    q8_rows_of(p, st.ub + 1, wn);
                    ntn = q8_nt(FT && !FT2 ? FT : wn.type, k);
                } else {
                    wn = st.wc, ntn = st.ntc;
                }
                q8_load_pass<EF, FT, FT2>(wn, np * 32 + lane, ntn, nxt);
                loaded = true;
            }
        }
    }
    if (WAIT2) {
        k_dep_launch();
        k_dep_wait();
        mvq_tl(p, MVQ_TL_WAIT);
    }
    float inv = 1.0f;
    if (P1)
        inv = q8_prologue1<CG, SWZ ? FT : 0>(p, sm);
    else
        q8_prologue<CG, SWZ ? FT : 0>(p, sm);
    mvq_tl(p, MVQ_TL_PRO);
    float acc[2] = {0.0f, 0.0f};
    uint32_t pass = 0;
    for (uint32_t u = st.ub; u < st.ue;) {
        const uint32_t P = (st.ntc + 31) / 32, np = pass + 1 == P ? 0 : pass + 1;
        const bool last = np == 0 && u + 1 == st.ue;
        if (!last && !loaded) {
            if (np == 0) {
                q8_rows_of(p, u + 1, wn);
                ntn = q8_nt(FT && !FT2 ? FT : wn.type, k);
            } else {
                wn = st.wc, ntn = st.ntc;
            }
            q8_load_pass<EF, FT, FT2>(wn, np * 32 + lane, ntn, nxt);
        }
        loaded = false;
        q8_dot_pass<FT, SWZ, FT2>(st.wc, pass * 32 + lane, st.ntc, st.cur, sm, acc);
        if (np == 0) { /* the unit is complete */
            float a = mvq_warp_sum(acc[0]), b = mvq_warp_sum(acc[1]);
            acc[0] = acc[1] = 0.0f;
            if (lane == 0)
                epi(st.wc, P1 ? a * inv : a, P1 ? b * inv : b);
            u++;
        }
        if (last)
            break;
        st.wc = wn, st.ntc = ntn;
        st.cur[0] = nxt[0], st.cur[1] = nxt[1];
        pass = np;
    }
}

/* One row's task t into r (the long-row body keeps one row per slot). */
__device__ __forceinline__ void
q8_load_one(uint32_t type, const uint8_t *row, uint32_t t, uint32_t nt, struct q8_task &r)
{
    if (t >= nt)
        return;
    switch (type) {
    case 12: q8_load<12>(row, t, r); break;
    case 13: q8_load<13>(row, t, r); break;
    case K_LLM_T_Q4_0R: q8_load<K_LLM_T_Q4_0R>(row, t, r); break;
    case K_LLM_T_Q8_0R: q8_load<K_LLM_T_Q8_0R>(row, t, r); break;
    case K_LLM_T_Q6_KR: q8_load<K_LLM_T_Q6_KR>(row, t, r); break;
    case K_LLM_T_Q5_KR: q8_load<K_LLM_T_Q5_KR>(row, t, r); break;
    case K_LLM_T_Q4_KR: q8_load<K_LLM_T_Q4_KR>(row, t, r); break;
    default: break;
    }
}

__device__ __forceinline__ float
q8_dot_one(uint32_t type, uint32_t t, uint32_t nt, const struct q8_task &r, const struct q8_sm &sm)
{
    if (t >= nt)
        return 0.0f;
    switch (type) {
    case 12: return q8_dot<12>(r, t, sm);
    case 13: return q8_dot<13>(r, t, sm);
    case K_LLM_T_Q4_0R: return q8_dot<K_LLM_T_Q4_0R>(r, t, sm);
    case K_LLM_T_Q8_0R: return q8_dot<K_LLM_T_Q8_0R>(r, t, sm);
    case K_LLM_T_Q6_KR: return q8_dot<K_LLM_T_Q6_KR>(r, t, sm);
    case K_LLM_T_Q5_KR: return q8_dot<K_LLM_T_Q5_KR>(r, t, sm);
    case K_LLM_T_Q4_KR: return q8_dot<K_LLM_T_Q4_KR>(r, t, sm);
    default: return 0.0f;
    }
}

/* The long-row body (k_llm_matvec_q8_long; launches of one row per unit, not SWIGLU, whose
 * rows take several passes - the FFN down projection, k = n_ff): each warp keeps
 * K_LLM_MVQ_SLOTS passes of its row in flight, the first ones issued before the prologue, and
 * refills a slot as soon as it is dotted. Why: with ~1 row per warp the streaming body's one
 * pass ahead left a dependent DRAM round trip per pass (H100: down at 1.0 TB/s, 12.7 us of a
 * 53 us layer). Same sums in the same order per lane as the streaming body. Measured SLOWER
 * (down 16.0 vs 14.7 us): requesting every pass of every row at once floods DRAM; kept for
 * A/B only (NVHCQ_MVQ_LONG=1). */
#define K_LLM_MVQ_SLOTS 4
__device__ __forceinline__ void
q8_matvec_long(const struct k_llm_matvec_params &p, struct q8_sm &sm)
{
    const uint32_t lane = threadIdx.x % WARP, k = p.k;
    if (k > K_LLM_MVQ_MAX_K || k % 256)
        return;
    uint32_t ub, ue;
    q8_warp_units(p, &ub, &ue);
    struct q8_task s[K_LLM_MVQ_SLOTS];
    struct q8_rows w;
    uint32_t nt = 0, P = 0;
    if (ub < ue) {
        q8_rows_of(p, ub, w);
        nt = q8_nt(w.type, k), P = (nt + 31) / 32;
#pragma unroll
        for (uint32_t j = 0; j < K_LLM_MVQ_SLOTS; j++)
            if (j < P)
                q8_load_one(w.type, w.ra, j * 32 + lane, nt, s[j]);
    }
    q8_prologue<false>(p, sm);
    const q8_epi_std<false> epi{p};
    for (uint32_t u = ub; u < ue; u++) {
        if (u != ub) {
            q8_rows_of(p, u, w);
            nt = q8_nt(w.type, k), P = (nt + 31) / 32;
#pragma unroll
            for (uint32_t j = 0; j < K_LLM_MVQ_SLOTS; j++)
                if (j < P)
                    q8_load_one(w.type, w.ra, j * 32 + lane, nt, s[j]);
        }
        float acc = 0.0f;
        for (uint32_t p0 = 0; p0 < P; p0 += K_LLM_MVQ_SLOTS) {
#pragma unroll
            for (uint32_t j = 0; j < K_LLM_MVQ_SLOTS; j++) {
                const uint32_t ps = p0 + j;
                if (ps < P) {
                    acc += q8_dot_one(w.type, ps * 32 + lane, nt, s[j], sm);
                    if (ps + K_LLM_MVQ_SLOTS < P)
                        q8_load_one(w.type, w.ra, (ps + K_LLM_MVQ_SLOTS) * 32 + lane, nt, s[j]);
                }
            }
        }
        const float a = mvq_warp_sum(acc);
        if (lane == 0)
            epi(w, a, 0.0f);
    }
}

/* An L2 prefetch of every row of the warp's units (lane j: units ub + j, ub + j + 32, ...):
 * issued before griddepcontrol.wait, it streams this launch's weights while the previous
 * launch drains (A/B: k_llm_matvec_q8_pfs). */
__device__ __forceinline__ void
q8_prefetch_own(const struct k_llm_matvec_params &p, const struct q8_stream &st)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    const uint32_t lane = threadIdx.x % WARP;
    for (uint32_t u = st.ub + lane; u < st.ue; u += WARP) {
        struct q8_rows w;
        q8_rows_of(p, u, w);
        const uint32_t rb = (uint32_t)k_llm_row_bytes(w.type, p.k);
        if (rb % 16 || (uintptr_t)w.ra % 16)
            continue;
        asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(w.ra), "r"(rb) : "memory");
        if (w.has_b && (uintptr_t)w.rb % 16 == 0)
            asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(w.rb), "r"(rb) : "memory");
    }
#else
    (void)p, (void)st;
#endif
}

/* ==== Split pairs: Q8_0 / Q4_0 launches of one row per unit whose rows take 4 or more passes ====
 * Why: the FFN down projection (2048 rows of k 8192 in a 1B model) gives each warp about one
 * row, walked as 8 passes of one row with one pass ahead in flight: half the bytes in flight of
 * the gate|up launch (a gate and an up row per pass), and it streamed at 1.6 TB/s against
 * gate|up's 2.3 (H100 Q8_0, session 11). Here two warps of a CTA share a unit of two rows, each
 * warp takes half of the rows' passes (two rows per pass: twice the bytes per pass, half the
 * passes in a row), and the pair adds its two partial sums through shared memory in a fixed
 * order (warp 2i's sum + warp 2i+1's) behind a named barrier of the pair. The grid is the one
 * the launch was sized for (one warp per row = one pair per two rows). Sums in another order
 * than the one-warp bodies: last-bit differences from k_llm_matvec_q8 and the persistent kernel
 * on such launches (tests compare them with the double reference, test_llm_matvec). */
__device__ __forceinline__ bool
q8_ks2(const struct k_llm_matvec_params &p, uint32_t nt)
{
    return (p.mode == K_LLM_MV_SET || p.mode == K_LLM_MV_ACC) && k_llm_mvq_rpu(&p) == 1 && (nt + 31) / 32 >= 4;
}

/* units of two rows of the launch's segments */
__device__ __forceinline__ uint32_t
q8_ks2_units(const struct k_llm_matvec_params &p)
{
    uint32_t u = (p.seg[0].rows + 1) / 2;
    if (p.n_seg > 1)
        u += (p.seg[1].rows + 1) / 2;
    if (p.n_seg > 2)
        u += (p.seg[2].rows + 1) / 2;
    return u;
}

template <bool EF, uint32_t FT>
__device__ __forceinline__ void
q8_ks2_load(const struct q8_rows &w, uint32_t pass, uint32_t nt, struct q8_task *r)
{
    q8_load_pass<EF, FT>(w, pass * 32 + threadIdx.x % WARP, nt, r);
}

/* The pair body (P1 prologue, typed kernels): loads of the first pass are issued before the
 * PDL wait, as in q8_matvec_stream. */
template <bool CG, bool EF, uint32_t FT, bool SWZ, bool WP = false>
__device__ __forceinline__ void
q8_matvec_ks2(const struct k_llm_matvec_params &p, struct q8_sm &sm, uint32_t nt)
{
    __shared__ float red[2][NW][2];
    const uint32_t lane = threadIdx.x % WARP, warp = threadIdx.x / WARP, ks = warp % 2;
    const uint32_t P = (nt + 31) / 32, pb = ks ? P / 2 : 0, pe = ks ? P : P / 2;
    const uint32_t units = q8_ks2_units(p);
    const uint64_t tp = (uint64_t)gridDim.x * (NW / 2), gp = (uint64_t)blockIdx.x * (NW / 2) + warp / 2;
    const uint32_t ub = (uint32_t)(units * gp / tp), ue = (uint32_t)(units * (gp + 1) / tp);
    struct q8_rows wc, wn;
    struct q8_task cur[2], nxt[2];
    if (ub < ue) {
        q8_rows_of(p, ub, wc, 2);
        q8_ks2_load<EF, FT>(wc, pb, nt, cur);
    }
    k_llm_pf_issue(p.pf);
    k_dep_launch();
    k_dep_wait();
    mvq_tl(p, MVQ_TL_WAIT);
    bool loaded = false; /* WP: the first iteration's next pass requested before the prologue */
    if (WP && ub < ue) {
        const bool unit_end = pb + 1 == pe;
        if (!(unit_end && ub + 1 == ue)) {
            if (unit_end) {
                q8_rows_of(p, ub + 1, wn, 2);
                q8_ks2_load<EF, FT>(wn, pb, nt, nxt);
            } else {
                wn = wc;
                q8_ks2_load<EF, FT>(wn, pb + 1, nt, nxt);
            }
            loaded = true;
        }
    }
    const float inv = q8_prologue1<CG, SWZ ? FT : 0>(p, sm);
    mvq_tl(p, MVQ_TL_PRO);
    const q8_epi_std<CG> epi{p};
    float acc[2] = {0.0f, 0.0f};
    uint32_t pass = pb, par = 0;
    for (uint32_t u = ub; u < ue;) {
        const bool unit_end = pass + 1 == pe, last = unit_end && u + 1 == ue;
        if (!last && !loaded) {
            if (unit_end) {
                q8_rows_of(p, u + 1, wn, 2);
                q8_ks2_load<EF, FT>(wn, pb, nt, nxt);
            } else {
                wn = wc;
                q8_ks2_load<EF, FT>(wn, pass + 1, nt, nxt);
            }
        }
        loaded = false;
        q8_dot_pass<FT, SWZ>(wc, pass * 32 + lane, nt, cur, sm, acc);
        if (unit_end) {
            const float a = mvq_warp_sum(acc[0]), b = mvq_warp_sum(acc[1]);
            acc[0] = acc[1] = 0.0f;
            if (lane == 0)
                red[par][warp][0] = a, red[par][warp][1] = b;
            /* the pair's barrier (ids 1..NW/2; 0 is __syncthreads): red is double-buffered by
             * unit parity, so a warp can write the next unit's sum while its partner still reads */
            asm volatile("bar.sync %0, %1;" ::"r"(1 + warp / 2), "r"(2 * WARP) : "memory");
            if (ks == 0 && lane == 0)
                epi(wc, (red[par][warp][0] + red[par][warp + 1][0]) * inv,
                    (red[par][warp][1] + red[par][warp + 1][1]) * inv);
            par ^= 1;
            u++;
        }
        if (last)
            break;
        wc = wn;
        cur[0] = nxt[0], cur[1] = nxt[1];
        pass = unit_end ? pb : pass + 1;
    }
}

/* ==== Units handed out at run time: gate|up of Q8_0 / Q4_0 (session 19, A/B) ====
 * Why: the per-CTA timeline (k_llm_matvec_tl.cu; H100 Q8_0, s139) put gate|up's warps' ends
 * between 4.8 and 13.5 us after O's completion (median 9.9): its CTAs enter over ~5 us (half of
 * them only as O's CTAs exit) and SMs are served unevenly, so with fixed ranges DRAM has ever
 * fewer warps in flight for the last ~3.6 us of a 14.8 us launch. Every unit from one counter
 * (s140) ended the warps within 4 us of each other but at 17 us (tg128 Q8_0 -10%, Q4_0 -13%):
 * ~6,000 atomics on one address serialize. So: the first K_LLM_MVQ_DYN_STATIC_PCT % of the units in fixed contiguous ranges as
 * the streaming body (the first loaded before the PDL wait), the rest in K_LLM_MVQ_DYN_POOLS
 * pools, warp w taking from pool w % POOLS only, asking for the next unit while it dots the
 * current one. Counters at rope.kc_va (unused by SWIGLU launches): u32 [POOLS][2] = units taken,
 * warps done; zero between launches - the last warp of a pool zeroes its pair, and the next
 * launch that reads them (the next layer's gate|up) asks only after its PDL wait, by which time
 * this grid has completed. A unit's sums are one warp's in the streaming body's order:
 * bit-identical results. */
#define K_LLM_MVQ_DYN_STATIC_PCT 75
template <bool EF, uint32_t FT, bool SWZ>
__device__ __forceinline__ void
q8_matvec_dyn(const struct k_llm_matvec_params &p, struct q8_sm &sm)
{
    const uint32_t lane = threadIdx.x % WARP, warp = threadIdx.x / WARP, k = p.k;
    const uint32_t units = k_llm_mvq_units(&p), nwt = gridDim.x * NW, gw = blockIdx.x * NW + warp;
    uint32_t us = (uint32_t)((uint64_t)units * K_LLM_MVQ_DYN_STATIC_PCT / 100);
    us = us < nwt ? (units < nwt ? units : nwt) : us; /* at least one fixed unit per warp */
    const uint32_t sb = (uint32_t)((uint64_t)us * gw / nwt), se = (uint32_t)((uint64_t)us * (gw + 1) / nwt);
    const uint32_t pool = gw % K_LLM_MVQ_DYN_POOLS;
    const uint32_t pl = (units - us + K_LLM_MVQ_DYN_POOLS - 1) / K_LLM_MVQ_DYN_POOLS;
    const uint32_t pb = us + pool * pl, pe = pb + pl < units ? pb + pl : units;
    unsigned int *ctr = (unsigned int *)(uintptr_t)p.rope.kc_va + 2 * pool;
    const uint32_t nt = q8_nt(FT, k), P = (nt + 31) / 32;
    uint32_t u = sb < se ? sb : units;
    struct q8_rows wc, wn;
    struct q8_task cur[2], nxt[2];
    if (u < units) {
        q8_rows_of(p, u, wc);
        q8_load_pass<EF, FT>(wc, lane, nt, cur);
    }
    k_dep_launch();
    k_dep_wait();
    mvq_tl(p, MVQ_TL_WAIT);
    const float inv = q8_prologue1<false, SWZ ? FT : 0>(p, sm);
    mvq_tl(p, MVQ_TL_PRO);
    const q8_epi_std<false> epi{p};
    /* the unit after u: the next fixed one, else one from the pool (lane 0 asks; known by the
     * time u is complete) */
    uint32_t un = units;
    if (u < units)
        un = u + 1 < se ? u + 1 : (lane == 0 && pb < pe ? pb + atomicAdd(ctr, 1u) : units);
    float acc[2] = {0.0f, 0.0f};
    uint32_t pass = 0;
    while (u < units) {
        const bool unit_end = pass + 1 == P;
        uint32_t unn = units;
        if (unit_end) {
            un = __shfl_sync(0xffffffffu, un, 0);
            un = un < pe || un < se ? un : units;
        }
        if (!unit_end) {
            q8_load_pass<EF, FT>(wc, (pass + 1) * 32 + lane, nt, nxt);
        } else if (un < units) {
            q8_rows_of(p, un, wn);
            q8_load_pass<EF, FT>(wn, lane, nt, nxt);
            unn = un + 1 < se ? un + 1 : (lane == 0 && pb < pe ? pb + atomicAdd(ctr, 1u) : units);
        }
        q8_dot_pass<FT, SWZ>(wc, pass * 32 + lane, nt, cur, sm, acc);
        if (unit_end) {
            const float a = mvq_warp_sum(acc[0]), b = mvq_warp_sum(acc[1]);
            acc[0] = acc[1] = 0.0f;
            if (lane == 0)
                epi(wc, a * inv, b * inv);
            u = un;
            un = unn;
            pass = 0;
            wc = wn;
        } else {
            pass++;
        }
        cur[0] = nxt[0], cur[1] = nxt[1];
    }
    /* warps of this pool: gw = pool, pool + POOLS, ... below nwt */
    const uint32_t pw = (nwt - pool + K_LLM_MVQ_DYN_POOLS - 1) / K_LLM_MVQ_DYN_POOLS;
    if (lane == 0 && pb < pe && atomicAdd(ctr + 1, 1u) == pw - 1) { /* every warp of the pool is done asking */
        atomicExch(ctr, 0u);
        atomicExch(ctr + 1, 0u);
    }
}

template <bool CG = false, bool PF_OWN = false, bool WAIT2 = false, bool P1 = false, bool EF = false,
          uint32_t FT = 0, bool SWZ = (FT != 0), uint32_t FT2 = 0, bool WP = false>
__device__ __forceinline__ void
q8_matvec_stream(const struct k_llm_matvec_params &p, struct q8_sm &sm)
{
    if (p.k > K_LLM_MVQ_MAX_K || p.k % 256) /* (every CTA may own units: no early exit by index) */
        return;
    /* Q8_0 and Q4_0 only: on H100 the split pairs gave Q8_0 +2.4% tg128 and Q6_K / Q4_K -1.5% /
     * -1.7% (session 12, s75), Q4_0 +2.3% (its down projection 8.25 -> 6.84 us: 8 passes of 18 B
     * per lane, the most latency-bound launch of any type) and Q5_K -1.3%, Q4_K -0.5% again on
     * llama-quantize files (session 13, s89; before Q4_KR / Q5_KR, untried since). Q4_K and Q5_K
     * as in the file are not ready for this body: s89's test read NaN on k 8192 launches whose
     * segment starts mid-pair. */
    mvq_tl(p, MVQ_TL_ENTRY);
    if ((FT == K_LLM_T_Q8_0R || FT == K_LLM_T_Q4_0R || FT == K_LLM_T_Q4_0R2 || FT == K_LLM_T_Q8_0R2) && P1 && !PF_OWN && q8_ks2(p, q8_nt(FT ? FT : 12, p.k))) { /* uniform per launch; waits itself */
        q8_matvec_ks2<CG, EF, FT ? FT : 12, SWZ, WP>(p, sm, q8_nt(FT ? FT : 12, p.k));
        mvq_tl(p, MVQ_TL_EXIT);
        return;
    }
    struct q8_stream st;
    q8_stream_begin<EF, FT, FT2>(p, st); /* the first pass's loads fly during the prologue */
    if (PF_OWN)
        q8_prefetch_own(p, st);
    k_llm_pf_issue(p.pf);
    /* Launched with HCQ_LAUNCH_DEP_WAIT, this grid may start while its predecessor runs: the
     * weights (never written) are requested above, x and y only after the wait, whose latch
     * acquire invalidates this SM's L1 (QMD LATCH_ACQUIRE_INVALIDATE_SHADER_DATA_CACHE; the
     * chain test's plain-load rounds check it). CG = true reads them through L2 (A/B). */
    if (!WAIT2) {
        k_dep_launch();
        k_dep_wait();
        mvq_tl(p, MVQ_TL_WAIT);
    }
    q8_stream_run<CG, q8_epi_std<CG>, WAIT2, P1, EF, FT, SWZ, FT2, WP && !WAIT2>(p, st, sm, q8_epi_std<CG>{p});
    mvq_tl(p, MVQ_TL_EXIT);
}

/* A k_llm_matvec_q8 kernel compiled for weight type T (k_llm_matvec.cu: the default ones;
 * k_llm_matvec_ab.cu: within 85 registers, MIN_CTAS 3, and with x' in logical order, SWZ
 * false): the one-pass prologue, evict-first weights; a launch of another type traps - a
 * caller's bug becomes a decoded device fault, not wrong numbers. */
#define K_LLM_MVQ_TYPED_KERNEL(NAME, T, MIN_CTAS, SWZ, W2)                                                            \
    extern "C" __global__ void __launch_bounds__(K_LLM_MV_THREADS, MIN_CTAS)                                          \
        NAME(const struct k_llm_matvec_params p)                                                                       \
    {                                                                                                                  \
        __shared__ __align__(16) struct q8_sm sm;                                                                      \
        if (k_llm_mvq_uniform_type(&p) != (T))                                                                         \
            __trap();                                                                                                  \
        q8_matvec_stream<false, false, (W2), true, true, (T), (SWZ)>(p, sm);                                           \
    }

/* A k_llm_matvec_q8 kernel for launches whose segments are of type T or T2 (Q4_K_M's Q|K|V:
 * Q4_K Q and K with a Q6_K V), without the switch over every type per pass of k_llm_matvec_q8;
 * x' in logical order (each type's conflict-free slots differ, one copy serves both). A
 * launch with another type traps. */
#define K_LLM_MVQ_TYPED2_KERNEL(NAME, T, T2, MIN_CTAS, W2)                                                             \
    extern "C" __global__ void __launch_bounds__(K_LLM_MV_THREADS, MIN_CTAS)                                          \
        NAME(const struct k_llm_matvec_params p)                                                                       \
    {                                                                                                                  \
        __shared__ __align__(16) struct q8_sm sm;                                                                      \
        if (!k_llm_mvq_types_of(&p, (T), (T2)))                                                                        \
            __trap();                                                                                                  \
        q8_matvec_stream<false, false, (W2), true, true, (T), false, (T2)>(p, sm);                                     \
    }

/* Q4_0 / Q8_0 rows read two groups per task (T2: K_LLM_T_Q4_0R2 / Q8_0R2): twice the bytes per
 * lane and pass, half the passes. Rows of whole group pairs only (k % 2048 == 0; else a trap). */
#define K_LLM_MVQ_X2_KERNEL(NAME, T, T2)                                                                               \
    extern "C" __global__ void __launch_bounds__(K_LLM_MV_THREADS, 2) NAME(const struct k_llm_matvec_params p)        \
    {                                                                                                                  \
        __shared__ __align__(16) struct q8_sm sm;                                                                      \
        if (k_llm_mvq_uniform_type(&p) != (T) || p.k % 2048)                                                           \
            __trap();                                                                                                  \
        q8_matvec_stream<false, false, false, true, true, (T2), true>(p, sm);                                          \
    }

/* The two kinds above with the second pass requested between the PDL wait and the prologue (WP,
 * k_llm_matvec_ab.cu; A/B) */
#define K_LLM_MVQ_X2WP_KERNEL(NAME, T, T2)                                                                             \
    extern "C" __global__ void __launch_bounds__(K_LLM_MV_THREADS, 2) NAME(const struct k_llm_matvec_params p)        \
    {                                                                                                                  \
        __shared__ __align__(16) struct q8_sm sm;                                                                      \
        if (k_llm_mvq_uniform_type(&p) != (T) || p.k % 2048)                                                           \
            __trap();                                                                                                  \
        q8_matvec_stream<false, false, false, true, true, (T2), true, 0, true>(p, sm);                                 \
    }
#define K_LLM_MVQ_TYPEDWP_KERNEL(NAME, T)                                                                              \
    extern "C" __global__ void __launch_bounds__(K_LLM_MV_THREADS, 2) NAME(const struct k_llm_matvec_params p)        \
    {                                                                                                                  \
        __shared__ __align__(16) struct q8_sm sm;                                                                      \
        if (k_llm_mvq_uniform_type(&p) != (T))                                                                         \
            __trap();                                                                                                  \
        q8_matvec_stream<false, false, false, true, true, (T), true, 0, true>(p, sm);                                  \
    }

/* gate|up (SWIGLU) or the output head (SET) of Q4_0 / Q8_0 with units handed out at run time
 * (q8_matvec_dyn): the counters at rope.kc_va; any other launch traps. */
#define K_LLM_MVQ_X2D_KERNEL(NAME, T, T2)                                                                              \
    extern "C" __global__ void __launch_bounds__(K_LLM_MV_THREADS, 2) NAME(const struct k_llm_matvec_params p)        \
    {                                                                                                                  \
        __shared__ __align__(16) struct q8_sm sm;                                                                      \
        if (k_llm_mvq_uniform_type(&p) != (T) || p.k % 2048 ||                                                         \
            (p.mode != K_LLM_MV_SWIGLU && p.mode != K_LLM_MV_SET) || !p.rope.kc_va)                                    \
            __trap();                                                                                                  \
        mvq_tl(p, MVQ_TL_ENTRY);                                                                                       \
        q8_matvec_dyn<true, (T2), true>(p, sm);                                                                        \
        mvq_tl(p, MVQ_TL_EXIT);                                                                                        \
    }

#endif /* K_LLM_MVQ_CUH */
