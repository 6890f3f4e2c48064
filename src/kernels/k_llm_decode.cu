// SPDX-License-Identifier: MIT
/*
 * k_llm_decode.cu - the persistent decode kernel: every layer of a LLaMA decode step in one
 * launch (phases and barrier protocol: k_llm_decode.h). The phases run the same device code
 * as the per-kernel path - k_llm_matvec_q8's streaming body (k_llm_mvq.cuh) and the split-K
 * attention (k_llm_attn_decode.cuh) - so each phase's result is bit-identical to the launch
 * it replaces; what changes is that activations written inside the launch are read through
 * L2 (ld.global.cg: L1 is not coherent across SMs) and that each CTA issues the next
 * phase's first weight loads before it waits at the barrier. RoPE is applied in the Q|K|V
 * epilogue with k_llm_rope_kv's formula (same rounding). CPU twin: src/ops/ops_llm_decode.c;
 * tests: tests/unit/test_llm_e2e.c (persistent vs per-kernel vs the twins, every device).
 */
#include "k_llm_decode.h"
#include "k_llm_attn_decode.cuh"
#include "k_llm_mvq.cuh"

__device__ __forceinline__ unsigned long long
dl_time_ns(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__device__ __forceinline__ uint32_t
dl_ld_acquire(const uint32_t *p)
{
    uint32_t v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

/* Grid-wide barrier number `phase` (1, 2, ...): false when the step is abandoned (a timeout
 * here or in another CTA). The fence before the arrival publishes this CTA's writes; the
 * acquire load and the fence after the wait order the reads that follow. */
__device__ __forceinline__ bool
dl_barrier(const struct k_llm_decode_params &p, uint32_t phase)
{
    __shared__ uint32_t ok;
    uint32_t *bar = (uint32_t *)(uintptr_t)p.bar_va;
    volatile uint32_t *abort = bar + 2; /* device memory: cheap to poll */
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        atomicAdd(bar, 1u);
        const uint32_t target = phase * gridDim.x;
        uint32_t good = 1;
        unsigned long long t0 = 0;
        for (uint32_t i = 1; dl_ld_acquire(bar) < target; i++) {
            if (i % 1024)
                continue;
            /* every 1024 polls (~0.3 ms): another CTA gave up, or this one has waited too long */
            unsigned long long t = dl_time_ns();
            t0 = t0 ? t0 : t;
            if (*abort || t - t0 > K_LLM_DL_TIMEOUT_NS) {
                *abort = 1;
                *(volatile uint32_t *)(uintptr_t)p.err_va = K_LLM_DL_ERR_TIMEOUT;
                good = 0;
                break;
            }
        }
        __threadfence();
        ok = good;
        if (p.trace_va && blockIdx.x == 0)
            ((volatile unsigned long long *)(uintptr_t)p.trace_va)[phase] = dl_time_ns();
    }
    __syncthreads();
    return ok != 0;
}

/* The Q|K|V epilogue: rows (o, o + 1) are a RoPE pair of Q (-> q), of K (-> K cache at pos) or
 * two V values (-> V cache at pos). Rotation as k_llm_rope_kv computes it. */
struct dl_epi_rope {
    const struct k_llm_decode_params &p;
    float *kc, *vc; /* this layer's cache rows at pos */
    __device__ __forceinline__ void
    operator()(const struct q8_rows &w, float a, float b) const
    {
        const uint32_t nq = p.n_head * p.hd, nk = p.n_head_kv * p.hd, o = w.o;
        if (o >= nq + nk) {
            vc[o - nq - nk] = a;
            vc[o - nq - nk + 1] = b;
            return;
        }
        float r0, r1;
        k_llm_rope_pair(p.pos, (o % p.hd) / 2, p.hd, p.base, p.freqs_va, a, b, r0, r1);
        float *dst = o < nq ? (float *)(uintptr_t)p.q_va + o : kc + (o - nq);
        dst[0] = r0;
        dst[1] = r1;
    }
};

template <int E>
__device__ __forceinline__ bool
dl_layers(const struct k_llm_decode_params &p, struct q8_sm &sm)
{
    const struct k_llm_matvec_params *tab = (const struct k_llm_matvec_params *)(uintptr_t)p.tab_va;
    struct k_llm_attn_decode_params a;
    a.q_va = p.q_va, a.out_va = p.att_va, a.part_va = p.part_va, a.count_va = p.count_va;
    a.pos = p.pos, a.n_ctx = p.n_ctx, a.n_head = p.n_head, a.n_head_kv = p.n_head_kv;
    a.hd = p.hd, a.n_split = p.n_split, a.scale = p.scale, a.head_max = 0;
    const uint32_t kv_dim = p.n_head_kv * p.hd, items = p.n_head_kv * p.n_split;
    uint32_t phase = 0;
    if (p.trace_va && blockIdx.x == 0 && threadIdx.x == 0)
        ((volatile unsigned long long *)(uintptr_t)p.trace_va)[0] = dl_time_ns();
    if (p.flags & K_LLM_DL_F_BARRIERS_ONLY) {
        for (uint32_t l = 0; l < 5 * p.n_layer; l++)
            if (!dl_barrier(p, ++phase))
                return false;
        return true;
    }
    struct q8_stream st;
    q8_stream_begin(tab[0], st);
    for (uint32_t l = 0; l < p.n_layer; l++) {
        const struct k_llm_matvec_params *lt = tab + (size_t)l * K_LLM_DL_PHASES;
        const uint64_t kc_va = p.kv_va + 2ull * l * p.kv_layer_B, vc_va = kc_va + p.kv_layer_B;
        float *kc = (float *)(uintptr_t)kc_va + (size_t)p.pos * kv_dim;
        float *vc = (float *)(uintptr_t)vc_va + (size_t)p.pos * kv_dim;
        /* 1: norm + Q|K|V + RoPE + KV store */
        q8_stream_run<true, dl_epi_rope, false, true, true>(lt[0], st, sm, dl_epi_rope{p, kc, vc});
        if (!dl_barrier(p, ++phase))
            return false;
        /* 2: attention, (KV head, range) items over the grid */
        a.kc_va = kc_va, a.vc_va = vc_va;
        for (uint32_t it = blockIdx.x; it < items; it += gridDim.x) {
            attn_decode<E, true, 2, 2>(a, it % p.n_head_kv, it / p.n_head_kv);
            __syncthreads(); /* the item's shared memory is reused by the next */
        }
        q8_stream_begin(lt[1], st);
        if (!dl_barrier(p, ++phase))
            return false;
        /* 3: x += W_o att */
        q8_stream_run<true, q8_epi_std<true>, false, true, true>(lt[1], st, sm, q8_epi_std<true>{lt[1]});
        q8_stream_begin(lt[2], st);
        if (!dl_barrier(p, ++phase))
            return false;
        /* 4: fa = silu(gate x'') * up x'' */
        q8_stream_run<true, q8_epi_std<true>, false, true, true>(lt[2], st, sm, q8_epi_std<true>{lt[2]});
        q8_stream_begin(lt[3], st);
        if (!dl_barrier(p, ++phase))
            return false;
        /* 5: x += W_down fa */
        q8_stream_run<true, q8_epi_std<true>, false, true, true>(lt[3], st, sm, q8_epi_std<true>{lt[3]});
        if (l + 1 < p.n_layer)
            q8_stream_begin(lt[K_LLM_DL_PHASES], st);
        if (!dl_barrier(p, ++phase))
            return false;
    }
    return true;
}

template <int E>
__device__ __forceinline__ void
dl_kernel(const struct k_llm_decode_params &p)
{
    __shared__ __align__(16) struct q8_sm sm;
    if (p.pos >= p.n_ctx || !p.n_layer || p.hd != 32 * E)
        return;
    if (!dl_layers<E>(p, sm))
        return; /* abandoned: err_va says why; the engine zeroes the barrier words */
    /* the last CTA out zeroes the barrier words for the next launch (every other CTA has left
     * its last wait: it counted itself out after it) */
    if (threadIdx.x == 0) {
        uint32_t *bar = (uint32_t *)(uintptr_t)p.bar_va;
        if (atomicAdd(bar + 1, 1u) == gridDim.x - 1) {
            bar[0] = 0;
            bar[1] = 0;
            __threadfence();
        }
    }
}

/* One kernel per head size (each instance of the attention body has its own shared memory).
 * _1 variants (NVHCQ_PERSIST=1cta, A/B): one CTA per SM, no register cap below 255. */
extern "C" __global__ void __launch_bounds__(K_LLM_MV_THREADS, 2)
k_llm_decode_layers(const struct k_llm_decode_params p)
{
    dl_kernel<2>(p);
}

extern "C" __global__ void __launch_bounds__(K_LLM_MV_THREADS, 2)
k_llm_decode_layers_hd128(const struct k_llm_decode_params p)
{
    dl_kernel<4>(p);
}

extern "C" __global__ void __launch_bounds__(K_LLM_MV_THREADS, 1)
k_llm_decode_layers_1(const struct k_llm_decode_params p)
{
    dl_kernel<2>(p);
}

extern "C" __global__ void __launch_bounds__(K_LLM_MV_THREADS, 1)
k_llm_decode_layers_hd128_1(const struct k_llm_decode_params p)
{
    dl_kernel<4>(p);
}
