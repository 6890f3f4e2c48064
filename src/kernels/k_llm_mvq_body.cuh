// SPDX-License-Identifier: MIT
/*
 * k_llm_mvq_body.cuh - the bodies of the int8-activation decode mat-vec (k_llm_matvec_q8):
 * the streaming body (each warp a contiguous range of units, the next pass in flight), the
 * split-pair body for long one-row launches, and the macros that make kernels of them
 * (src/kernels/k_llm_matvec.cu). Included by k_llm_mvq.cuh after the task-level code it uses.
 */
#ifndef K_LLM_MVQ_BODY_CUH
#define K_LLM_MVQ_BODY_CUH

/* The streaming body: each warp takes a contiguous range of units (neighbouring rows) and
 * walks it as one sequence of passes, the next pass's loads issued before the current pass
 * is dotted, reduced and stored. Measured on H100: it needs both
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
            if (bias) /* Qwen2's Q|K|V bias, before the rotation */
                a += bias[o], b += bias[o + 1];
            if (o >= r.n_q + r.n_kv) {
                kv_st2((kv_t *)(uintptr_t)r.vc_va + (size_t)r.pos * r.n_kv + (o - r.n_q - r.n_kv), a, b);
                return;
            }
            float r0, r1;
            k_llm_rope_pair(r.pos, (o % r.hd) / 2, r.hd, r.base, r.freqs_va, a, b, r0, r1);
            if (o < r.n_q)
                y[o] = r0, y[o + 1] = r1;
            else
                kv_st2((kv_t *)(uintptr_t)r.kc_va + (size_t)r.pos * r.n_kv + (o - r.n_q), r0, r1);
            return;
        }
        const bool acc = p.mode == K_LLM_MV_ACC;
        /* ACC without bias (O and down + residual): y += a as one reduction in L2 (atomicAdd with
         * its result unused compiles to RED) instead of load, add, store - no L2 round trip after
         * the sums. One writer per element: y + a rounds as before (RED.F32 flushes subnormals).
         * H100, tg128 alternating: Q8_0 +0.5%, Q5_K_M +0.7%, Q4_K_M +0.3%, Q6_K
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
 * which this function then makes (the caller must not). WP (A/B): the caller has
 * waited; the second pass's loads are issued before the prologue - the timeline put the
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
    }
    float inv = 1.0f;
    if (P1)
        inv = q8_prologue1<CG, SWZ ? FT : 0>(p, sm);
    else
        q8_prologue<CG, SWZ ? FT : 0>(p, sm);
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
 * gate|up's 2.3 (H100 Q8_0). Here two warps of a CTA share a unit of two rows, each
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

template <bool CG = false, bool PF_OWN = false, bool WAIT2 = false, bool P1 = false, bool EF = false,
          uint32_t FT = 0, bool SWZ = (FT != 0), uint32_t FT2 = 0, bool WP = false>
__device__ __forceinline__ void
q8_matvec_stream(const struct k_llm_matvec_params &p, struct q8_sm &sm)
{
    if (p.k > K_LLM_MVQ_MAX_K || p.k % 256) /* (every CTA may own units: no early exit by index) */
        return;
    /* Q8_0 and Q4_0 only: on H100 the split pairs gave Q8_0 +2.4% tg128 and Q6_K / Q4_K -1.5% /
     * -1.7%, Q4_0 +2.3% (its down projection 8.25 -> 6.84 us: 8 passes of 18 B
     * per lane, the most latency-bound launch of any type) and Q5_K -1.3%, Q4_K -0.5% again on
     * llama-quantize files (before Q4_KR / Q5_KR, untried since). Q4_K and Q5_K
     * as in the file are not ready for this body: s89's test read NaN on k 8192 launches whose
     * segment starts mid-pair. */
    if ((FT == K_LLM_T_Q8_0R || FT == K_LLM_T_Q4_0R || FT == K_LLM_T_Q4_0R2 || FT == K_LLM_T_Q8_0R2) && P1 && !PF_OWN && q8_ks2(p, q8_nt(FT ? FT : 12, p.k))) { /* uniform per launch; waits itself */
        q8_matvec_ks2<CG, EF, FT ? FT : 12, SWZ, WP>(p, sm, q8_nt(FT ? FT : 12, p.k));
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
    }
    q8_stream_run<CG, q8_epi_std<CG>, WAIT2, P1, EF, FT, SWZ, FT2, WP && !WAIT2>(p, st, sm, q8_epi_std<CG>{p});
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

#endif /* K_LLM_MVQ_BODY_CUH */
