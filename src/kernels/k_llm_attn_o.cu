// SPDX-License-Identifier: MIT
/*
 * k_llm_attn_o.cu - decode attention and the O projection (+ residual) in one launch, for short
 * contexts. Layout and protocol: k_llm_attn_o.h; CPU twin src/ops/ops_llm_attn_o.c; tests:
 * tests/unit/test_llm_attn_decode.c (vs a double reference on every device) and
 * tests/unit/test_llm_e2e.c (decode logits with and without it).
 *
 * Why: a decode step's attention is ~2 us of latency-bound work and the O mat-vec after it
 * moves 4.5 MB (1B model) in ~3.4 us, of which ~1.6 us are bytes - the rest is the grid
 * boundary between them (completion, membar, the dependent's wait) and O's prologue
 * (bench/notes-decode.md session 15). Here CTA (g, r) loads its tasks of O's row block r over
 * KV head g's columns into registers BEFORE the PDL wait (weights never depend on the previous
 * launch), then computes g's attention (attn_decode_split2, one range, output into shared
 * memory), quantizes it to int8 blocks of 16 exactly as k_llm_matvec_q8's prologue does, and
 * dots: one boundary per layer less. The price: each of a KV head's rows / K_LLM_AO_ROWS CTAs
 * repeats its attention (K and V rows from L2), so the engine takes this path only up to
 * K_LLM_AO_MAXP positions.
 *
 * Tasks: O is a repacked q8 type (k_llm_quant.h), whose lanes own contiguous columns: 128 columns
 * of a row are 4 lanes of 32 values (Q8_0R, Q4_0R) or 2 of 64 (Q6_KR, Q5_KR, Q4_KR; ao_task). A
 * warp step covers (row, unit) items, a row's units in neighbouring lanes, reduced by shuffles;
 * k_llm_matvec_q8's q8_load / q8_dot read and dot the tasks (x' in logical order).
 */
#include "k_device.h"
#include "k_llm_attn_decode.cuh"
#include "k_llm_mvq.cuh"
#include "k_llm_attn_o.h"

#define AO_SMAX 4 /* warp steps whose tasks are loaded before the PDL wait */

/* Lanes (tasks) per 128-column unit of a row: 64-value tasks (the Q6_KR value map) or 32. */
template <uint32_t T>
__host__ __device__ constexpr uint32_t
ao_tpu()
{
    return T == K_LLM_T_Q6_KR || T == K_LLM_T_Q5_KR || T == K_LLM_T_Q4_KR ? 2 : 4;
}

/* Task of lane j (< ao_tpu) of 128-column unit u of a row: Q8_0R / Q4_0R lanes 4 (u % 8) + j of
 * pass u / 8; the Q6_KR map's block b = u / 2 holds its low half in lanes 4 (b % 8) + {0, 1}
 * and its high half in + {2, 3} (value 256b + 128h + l0 + .. of lane 4b + 2h + l0 / 16). */
template <uint32_t T>
__device__ __forceinline__ uint32_t
ao_task(uint32_t u, uint32_t j)
{
    return ao_tpu<T>() == 2 ? 32 * (u / 16) + 4 * ((u / 2) % 8) + 2 * (u % 2) + j : 32 * (u / 8) + 4 * (u % 8) + j;
}

template <uint32_t T>
__device__ __forceinline__ void
attn_o(const struct k_llm_attn_o_params &p)
{
    __shared__ __align__(16) struct q8_sm sm;
    __shared__ __align__(16) float so[K_LLM_AO_MAX_CU * 128]; /* the group's attention */
    __shared__ float spart[K_LLM_AO_ROWS];                     /* the group's partial per row */
    __shared__ bool last;
    /* a warp step: IPS (row, unit) items of TPU lanes each, a row's CU units side by side */
    constexpr uint32_t TPU = ao_tpu<T>(), IPS = WARP / TPU;
    const struct k_llm_attn_decode_params &a = p.ad;
    const uint32_t g = blockIdx.x, rb = blockIdx.y, tid = threadIdx.x, lane = tid % WARP, warp = tid / WARP;
    const uint32_t gs = a.n_head / a.n_head_kv, cols = gs * a.hd, CU = cols / 128, k = a.n_head * a.hd;
    const uint32_t steps = K_LLM_AO_ROWS * CU / NWARP / IPS, i0 = warp * (K_LLM_AO_ROWS * CU / NWARP) + lane / TPU;
    const uint64_t rbytes = k_llm_row_bytes(T, k);
    const uint8_t *w0 = (const uint8_t *)(uintptr_t)p.w_va + (uint64_t)rb * K_LLM_AO_ROWS * rbytes;
    struct q8_task r[AO_SMAX];
#pragma unroll
    for (uint32_t s = 0; s < AO_SMAX; s++) {
        const uint32_t i = i0 + s * IPS;
        if (s < steps)
            q8_load<T, true>(w0 + (i / CU) * rbytes, ao_task<T>(g * CU + i % CU, lane % TPU), r[s]);
    }
    k_dep_launch();
    k_dep_wait();
    const uint32_t n_pos = a.pos + 1;
    if (n_pos > K_LLM_AO_MAXP || a.pos >= a.n_ctx) /* the engine never launches it so (every CTA alike) */
        return;
    if (a.hd == 64)
        attn_decode_split2<64, false>(a, g, 0, 0, n_pos, true, so);
    else
        attn_decode_split2<128, false>(a, g, 0, 0, n_pos, true, so);
    for (uint32_t bi = tid; bi < cols / 16; bi += K_LLM_AD_THREADS)
        q8_store_block(sm, g * (cols / 16) + bi, so + 16 * bi);
    __syncthreads();
    for (uint32_t s0 = 0; s0 < steps; s0 += AO_SMAX) {
        if (s0) {
#pragma unroll
            for (uint32_t s = 0; s < AO_SMAX; s++) {
                const uint32_t i = i0 + (s0 + s) * IPS;
                if (s0 + s < steps)
                    q8_load<T, true>(w0 + (i / CU) * rbytes, ao_task<T>(g * CU + i % CU, lane % TPU), r[s]);
            }
        }
#pragma unroll
        for (uint32_t s = 0; s < AO_SMAX; s++) {
            const uint32_t i = i0 + (s0 + s) * IPS;
            if (s0 + s < steps) {
                float v = q8_dot<T, false>(r[s], ao_task<T>(g * CU + i % CU, lane % TPU), sm);
                for (uint32_t o = TPU * CU / 2; o > 0; o >>= 1) /* the row's lanes: TPU x CU <= 32 */
                    v += __shfl_xor_sync(0xffffffffu, v, o);
                if (lane % (TPU * CU) == 0)
                    spart[i / CU] = v;
            }
        }
    }
    __syncthreads();
    float *y = (float *)(uintptr_t)p.y_va;
    const uint32_t row0 = rb * K_LLM_AO_ROWS;
    if (!p.det) { /* one RED per row and KV head: no L2 round trip after the sums, no fixed order */
        if (tid < K_LLM_AO_ROWS)
            atomicAdd(y + row0 + tid, spart[tid]);
        return;
    }
    float *part = (float *)(uintptr_t)p.part_va;
    unsigned int *count = (unsigned int *)(uintptr_t)p.count_va + rb;
    if (tid < K_LLM_AO_ROWS)
        part[(size_t)g * p.rows + row0 + tid] = spart[tid];
    __threadfence();
    __syncthreads();
    if (tid == 0)
        last = atomicAdd(count, 1u) == a.n_head_kv - 1;
    __syncthreads();
    if (!last)
        return;
    __threadfence();
    if (tid < K_LLM_AO_ROWS) {
        float s = 0.0f;
        for (uint32_t j = 0; j < a.n_head_kv; j++)
            s += __ldcg(part + (size_t)j * p.rows + row0 + tid);
        y[row0 + tid] = __ldcg(y + row0 + tid) + s;
    }
    if (tid == 0)
        *count = 0; /* ready for the next launch */
}

/* One kernel per O type (a launch of another type traps: a caller's bug becomes a decoded device
 * fault, not wrong numbers). */
#define K_LLM_AO_KERNEL(NAME, T)                                                                                       \
    extern "C" __global__ void __launch_bounds__(K_LLM_AD_THREADS, 1) NAME(const struct k_llm_attn_o_params p)       \
    {                                                                                                                  \
        if (p.type != (T))                                                                                             \
            __trap();                                                                                                  \
        attn_o<(T)>(p);                                                                                                \
    }

K_LLM_AO_KERNEL(k_llm_attn_o_q8_0, K_LLM_T_Q8_0R)
K_LLM_AO_KERNEL(k_llm_attn_o_q4_0, K_LLM_T_Q4_0R)
K_LLM_AO_KERNEL(k_llm_attn_o_q6k, K_LLM_T_Q6_KR)
K_LLM_AO_KERNEL(k_llm_attn_o_q5k, K_LLM_T_Q5_KR)
K_LLM_AO_KERNEL(k_llm_attn_o_q4k, K_LLM_T_Q4_KR)
