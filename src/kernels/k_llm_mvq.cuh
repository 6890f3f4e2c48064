// SPDX-License-Identifier: MIT
/*
 * k_llm_mvq.cuh - device code of the int8-activation decode mat-vec (k_llm_matvec_q8): a task's
 * loads and dot, x' in shared memory, the prologue. The bodies and the kernel macros that use
 * them: k_llm_mvq_body.cuh (included at the end); the kernels: src/kernels/k_llm_matvec.cu.
 * Parameters and types: k_llm_matvec.h; repacked layouts: k_llm_quant.h.
 */
#ifndef K_LLM_MVQ_CUH
#define K_LLM_MVQ_CUH

#include "k_device.h"
#include "k_llm_kv.cuh"
#include "k_llm_matvec.h"
#include "k_llm_quant.h"
#include "k_llm_pf.cuh"

#ifndef WARP
#define WARP 32
#endif
#ifndef NW
#define NW (K_LLM_MV_THREADS / WARP)
#endif

__device__ __forceinline__ float
mvq_warp_sum(float v)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

/* ==== k_llm_matvec_q8: int8 activations, dp4a, weights straight into registers ====
 * Why: the staged kernel above spends ~5 instructions and a shared-memory round trip per
 * weight, so it is issue bound at 0.7-0.9 TB/s. Here each lane reads
 * 16-byte pieces of the rows (lane-major repacked groups, k_llm_quant.h: every warp-wide
 * load one contiguous run) and turns 4 quants into one dp4a against 4 int8 activations. A
 * task is one lane's share of a row per pass (64 weights for Q6_KR, 32 for the others); a
 * unit is two rows (or a gate row and its up row) or, below K_LLM_MVQ_PAIR_ROWS rows, one.
 * The prologue (every CTA): x' = RMSNorm(x) * w as in the f32 kernel, then per block of 16
 * values d = max|x'| / 127 and q = rint(x' * (127 / max|x'|)) into shared memory with (d, d * sum q)
 * (kernels of one weight type place the blocks in conflict-free slots, k_llm_mvq_slot).
 * The bodies (k_llm_mvq_body.cuh) stream a contiguous unit range per warp with the next pass in
 * flight. */

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
 * k_llm_matvec_q8_q5k, tg128 Q5_K_M +0.5-0.8% (H100; same quants). */
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
 * short-scoreboard stall at ~2 of the ~10 cycles between a warp's instructions.
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
     * griddepcontrol.wait (checked); a coherent ld.global variant changed nothing
     * in the open rm:0 e2e failures and was not kept. */
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

#include "k_llm_mvq_body.cuh"

#endif /* K_LLM_MVQ_CUH */
