// SPDX-License-Identifier: MIT
/*
 * k_llm_mvh.cu - the decode mat-vec for 16-bit float weights (F16, BF16): y = W x' with f32
 * activations, the launch contract of k_llm_matvec (k_llm_matvec.h: several tensors per launch,
 * RMSNorm prologue, modes SET / ACC / SWIGLU / ROPE). One kernel per weight type:
 * k_llm_matvec_h_f16, k_llm_matvec_h_bf16. CPU twin: src/ops/ops_llm_matvec.c (twin_matvec_h).
 * Tests: tests/unit/test_llm_matvec.c (every mode vs a double-precision dot) and
 * tests/unit/test_llm_e2e.c (F16 and BF16 models, every device vs the twins).
 *
 * Why this shape: a 16-bit weight is 2 bytes against ~1 for Q8_0, so decode is a pure weight
 * stream and the kernel's job is to keep enough bytes in flight. Each lane reads 16-byte pieces
 * (8 values) of a row straight into registers, K_LLM_MVH_U pieces per row and pass, every
 * warp-wide load one contiguous 512 B run; a warp walks a contiguous range of units (one or two
 * rows, the q8 kernels' units: k_llm_mvq_units) with the next pass's loads issued before the
 * current pass is dotted (k_llm_mvq_body.cuh's streaming order, which the q8 kernels needed
 * to stream at bandwidth). The weights of the first pass are requested before the PDL wait.
 * x' (f32) sits in shared memory split in two arrays (values 8c..8c+3 and 8c+4..8c+7 of piece
 * c), so a warp's 16-byte loads of x' are contiguous: no bank conflicts. The conversion to f32
 * is one instruction per value (BF16: a shift or a mask; F16: the exact half to float
 * conversion), then one FMA: ~2 instructions per weight byte, far below the SM's issue rate at
 * DRAM speed. The RMS factor is applied to each row's sum (the one-pass prologue of the q8
 * kernels: x is read once, one CTA barrier).
 * k a multiple of 8 up to K_LLM_MVH_MAX_K (x' in static shared memory); longer rows take
 * k_llm_matvec_wide.
 */
#include "k_llm_mvq.cuh"

#define MVH_U K_LLM_MVH_U

struct mvh_sm {
    float4 xa[K_LLM_MVH_MAX_K / 8]; /* x'[8c .. 8c + 3] */
    float4 xb[K_LLM_MVH_MAX_K / 8]; /* x'[8c + 4 .. 8c + 7] */
    float part[NW];
};

/* x' = x * w (the norm weight, without the RMS factor) into sm; returns the RMS factor (1
 * without a norm weight). Piece c is thread c % 256's. */
__device__ __forceinline__ float
mvh_prologue(const struct k_llm_matvec_params &p, struct mvh_sm &sm)
{
    const uint32_t t = threadIdx.x, lane = t % WARP, warp = t / WARP, nc = p.k / 8;
    const float4 *x4 = (const float4 *)(uintptr_t)p.x_va, *w4 = (const float4 *)(uintptr_t)p.norm_w_va;
    float ss = 0.0f;
    for (uint32_t c = t; c < nc; c += K_LLM_MV_THREADS) {
        float4 a = __ldg(x4 + 2 * c), b = __ldg(x4 + 2 * c + 1);
        if (p.norm_w_va) {
            const float4 wa = __ldg(w4 + 2 * c), wb = __ldg(w4 + 2 * c + 1);
            ss +=
                a.x * a.x + a.y * a.y + a.z * a.z + a.w * a.w + b.x * b.x + b.y * b.y + b.z * b.z + b.w * b.w;
            a = make_float4(a.x * wa.x, a.y * wa.y, a.z * wa.z, a.w * wa.w);
            b = make_float4(b.x * wb.x, b.y * wb.y, b.z * wb.z, b.w * wb.w);
        }
        sm.xa[c] = a;
        sm.xb[c] = b;
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
    return rsqrtf(tot / (float)p.k + p.eps);
}

/* Dot of 8 weights (one 16-byte piece) with x' values a (first 4) and b (last 4). */
template <uint32_t T>
__device__ __forceinline__ float
mvh_dot8(uint4 w, float4 a, float4 b, float s)
{
    if (T == 30) { /* BF16: the upper 16 bits of an f32 */
        s = fmaf(__uint_as_float(w.x << 16), a.x, s);
        s = fmaf(__uint_as_float(w.x & 0xFFFF0000u), a.y, s);
        s = fmaf(__uint_as_float(w.y << 16), a.z, s);
        s = fmaf(__uint_as_float(w.y & 0xFFFF0000u), a.w, s);
        s = fmaf(__uint_as_float(w.z << 16), b.x, s);
        s = fmaf(__uint_as_float(w.z & 0xFFFF0000u), b.y, s);
        s = fmaf(__uint_as_float(w.w << 16), b.z, s);
        return fmaf(__uint_as_float(w.w & 0xFFFF0000u), b.w, s);
    } else { /* F16 */
        const float2 v0 = __half22float2(*(const __half2 *)&w.x), v1 = __half22float2(*(const __half2 *)&w.y);
        const float2 v2 = __half22float2(*(const __half2 *)&w.z), v3 = __half22float2(*(const __half2 *)&w.w);
        s = fmaf(v0.x, a.x, s);
        s = fmaf(v0.y, a.y, s);
        s = fmaf(v1.x, a.z, s);
        s = fmaf(v1.y, a.w, s);
        s = fmaf(v2.x, b.x, s);
        s = fmaf(v2.y, b.y, s);
        s = fmaf(v3.x, b.z, s);
        return fmaf(v3.y, b.w, s);
    }
}

/* Pass `pass` of a unit: piece pass * 32 * U + 32 * i + lane of row a (and b) for i < U (each lane
 * checks its piece: k is a multiple of 8, not of 256). */
__device__ __forceinline__ void
mvh_load(const struct q8_rows &w, uint32_t pass, uint32_t nc, uint4 (*r)[MVH_U])
{
    const uint32_t lane = threadIdx.x % WARP;
#pragma unroll
    for (int i = 0; i < MVH_U; i++) {
        const uint32_t c = pass * 32 * MVH_U + 32 * i + lane;
        if (c < nc) {
            r[0][i] = ldg16_ef(w.ra + 16ull * c);
            if (w.has_b)
                r[1][i] = ldg16_ef(w.rb + 16ull * c);
        }
    }
}

template <uint32_t T>
__device__ __forceinline__ void
mvh_dot(const struct q8_rows &w, uint32_t pass, uint32_t nc, const uint4 (*r)[MVH_U], const struct mvh_sm &sm,
        float *acc)
{
    const uint32_t lane = threadIdx.x % WARP;
#pragma unroll
    for (int i = 0; i < MVH_U; i++) {
        const uint32_t c = pass * 32 * MVH_U + 32 * i + lane;
        if (c < nc) {
            const float4 a = sm.xa[c], b = sm.xb[c];
            acc[0] = mvh_dot8<T>(r[0][i], a, b, acc[0]);
            if (w.has_b)
                acc[1] = mvh_dot8<T>(r[1][i], a, b, acc[1]);
        }
    }
}

template <uint32_t T>
__device__ __forceinline__ void
mvh_stream(const struct k_llm_matvec_params &p, struct mvh_sm &sm)
{
    if (p.k > K_LLM_MVH_MAX_K || p.k % 8) /* (every CTA may own units: no early exit by index) */
        return;
    const uint32_t lane = threadIdx.x % WARP, nc = p.k / 8, P = (nc + 32 * MVH_U - 1) / (32 * MVH_U);
    uint32_t ub, ue;
    q8_warp_units(p, &ub, &ue);
    struct q8_rows wc, wn;
    uint4 cur[2][MVH_U], nxt[2][MVH_U];
    if (ub < ue) {
        q8_rows_of(p, ub, wc);
        mvh_load(wc, 0, nc, cur);
    }
    /* launched with HCQ_LAUNCH_DEP_WAIT: the weights (never written) are requested above, x and
     * y only after the wait */
    k_dep_launch();
    k_dep_wait();
    const float inv = mvh_prologue(p, sm);
    const q8_epi_std<false> epi{p};
    float acc[2] = {0.0f, 0.0f};
    uint32_t pass = 0;
    for (uint32_t u = ub; u < ue;) {
        const uint32_t np = pass + 1 == P ? 0 : pass + 1;
        const bool last = np == 0 && u + 1 == ue;
        if (!last) { /* the next pass's loads fly while this one is dotted */
            if (np == 0)
                q8_rows_of(p, u + 1, wn);
            else
                wn = wc;
            mvh_load(wn, np, nc, nxt);
        }
        mvh_dot<T>(wc, pass, nc, cur, sm, acc);
        if (np == 0) { /* the unit is complete */
            const float a = mvq_warp_sum(acc[0]), b = mvq_warp_sum(acc[1]);
            acc[0] = acc[1] = 0.0f;
            if (lane == 0)
                epi(wc, a * inv, b * inv);
            u++;
        }
        if (last)
            break;
        wc = wn;
#pragma unroll
        for (int i = 0; i < MVH_U; i++)
            cur[0][i] = nxt[0][i], cur[1][i] = nxt[1][i];
        pass = np;
    }
}

/* A launch whose segments are not all of the kernel's type traps: a caller's bug becomes a
 * decoded device fault, not wrong numbers. */
#define K_LLM_MVH_KERNEL(NAME, T)                                                                            \
    extern "C" __global__ void __launch_bounds__(K_LLM_MV_THREADS, 2)                                        \
        NAME(const struct k_llm_matvec_params p)                                                             \
    {                                                                                                        \
        __shared__ __align__(16) struct mvh_sm sm;                                                           \
        if (k_llm_mvq_uniform_type(&p) != (T))                                                               \
            __trap();                                                                                        \
        mvh_stream<(T)>(p, sm);                                                                              \
    }

K_LLM_MVH_KERNEL(k_llm_matvec_h_f16, 1)
K_LLM_MVH_KERNEL(k_llm_matvec_h_bf16, 30)
