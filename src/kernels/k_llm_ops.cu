// SPDX-License-Identifier: MIT
/*
 * k_llm_ops.cu - the LLM engine's kernels: token embedding, RMS/Layer norm, quantized
 * mat-vec / mat-mat, RoPE + KV-cache store, causal attention (GQA), activations.
 * Layouts and launch geometry: k_llm_params.h (one struct per kernel, by value).
 * CPU twins (the reference in tests and the implementation on cpu/emu): src/ops/ops_llm.c.
 * Tests: tests/unit/test_llm_e2e.c: the twins against the independent double-precision
 * reference (src/llm/llm_ref.c) on cpu, these kernels against the twins' results on every
 * other device that opens (same greedy tokens, logits NMSE < 1e-6).
 * These first versions aim at correct, simple code (one warp per weight row, one value
 * decoded at a time); the fast decode path is a later issue.
 */
#include "k_llm_kv.cuh"
#include "k_llm_params.h"
#include "k_llm_quant.h"

#define WARP 32
#define MM_TOK 16 /* tokens per pass over a weight row (prefill) */

__device__ __forceinline__ float
warp_sum(float v)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__device__ __forceinline__ float
warp_max(float v)
{
    for (int o = 16; o > 0; o >>= 1)
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

/* Sum over the block (blockDim.x a multiple of 32, <= 1024); every thread gets the result. */
__device__ float
block_sum(float v)
{
    __shared__ float part[32];
    __shared__ float total;
    v = warp_sum(v);
    if ((threadIdx.x & 31) == 0)
        part[threadIdx.x >> 5] = v;
    __syncthreads();
    if (threadIdx.x < 32) {
        float s = threadIdx.x < (blockDim.x >> 5) ? part[threadIdx.x] : 0.0f;
        s = warp_sum(s);
        if (threadIdx.x == 0)
            total = s;
    }
    __syncthreads();
    float r = total;
    __syncthreads();
    return r;
}

__device__ float
block_max(float v)
{
    __shared__ float part[32];
    __shared__ float total;
    v = warp_max(v);
    if ((threadIdx.x & 31) == 0)
        part[threadIdx.x >> 5] = v;
    __syncthreads();
    if (threadIdx.x < 32) {
        float s = threadIdx.x < (blockDim.x >> 5) ? part[threadIdx.x] : -3.0e38f;
        s = warp_max(s);
        if (threadIdx.x == 0)
            total = s;
    }
    __syncthreads();
    float r = total;
    __syncthreads();
    return r;
}

static __device__ __forceinline__ uint64_t
row_bytes(uint32_t type, uint32_t n)
{
    return k_llm_row_bytes(type, n);
}

extern "C" __global__ void
k_llm_embed(const struct k_llm_embed_params p)
{
    uint32_t i = blockIdx.x;
    int32_t tok = p.tok_va ? ((const int32_t *)p.tok_va)[i] : (int32_t)p.tok_imm;
    uint32_t t = tok < 0 ? 0u : ((uint32_t)tok >= p.n_vocab ? p.n_vocab - 1 : (uint32_t)tok);
    const uint8_t *w = (const uint8_t *)p.w_va + row_bytes(p.type, p.d) * t;
    float *out = (float *)p.out_va + (size_t)i * p.d;
    uint32_t pos = p.pos0 + i;
    if (pos >= p.n_pos && p.n_pos)
        pos = p.n_pos - 1;
    const uint8_t *pw = p.pos_w_va ? (const uint8_t *)p.pos_w_va + row_bytes(p.pos_type, p.d) * pos : 0;
    /* a row over d / 256 CTAs (grid.y): each thread one value, one DRAM round trip - as one CTA
     * it took d / 256 dependent round trips (the dequant's loads are not unrolled across j):
     * the decode step's first launch, ~10 us on H100 with nothing to overlap it */
    for (uint32_t j = blockIdx.y * blockDim.x + threadIdx.x; j < p.d; j += gridDim.y * blockDim.x) {
        float v = k_llm_dq_at(p.type, w, j);
        if (pw)
            v += k_llm_dq_at(p.pos_type, pw, j);
        out[j] = v;
    }
}

extern "C" __global__ void
k_llm_norm(const struct k_llm_norm_params p)
{
    const float *x = (const float *)p.x_va + (size_t)blockIdx.x * p.d;
    float *y = (float *)p.y_va + (size_t)blockIdx.x * p.d;
    __half *y16 = p.y16_va ? (__half *)p.y16_va + (size_t)blockIdx.x * p.d : NULL;
    const float *w = (const float *)p.w_va;
    const float *b = (const float *)p.b_va;
    float mean = 0.0f;
    /* rows of up to 16 values a thread: x and the weights loaded once, all in flight before the
     * sum (the weights come from DRAM: a step streams the whole model through L2 between two
     * reads of them; three passes of dependent loads took ~6 us a launch, H200 batch step) */
    constexpr int NV = 16;
    if (p.d <= NV * blockDim.x) {
        float xv[NV], wv[NV];
#pragma unroll
        for (int u = 0; u < NV; u++) {
            const uint32_t j = threadIdx.x + u * blockDim.x;
            xv[u] = j < p.d ? x[j] : 0.0f;
            wv[u] = j < p.d ? w[j] : 0.0f;
        }
        if (p.mode == 1) {
            float s = 0.0f;
#pragma unroll
            for (int u = 0; u < NV; u++)
                s += xv[u];
            mean = block_sum(s) / (float)p.d;
        }
        float ss = 0.0f;
#pragma unroll
        for (int u = 0; u < NV; u++) {
            const uint32_t j = threadIdx.x + u * blockDim.x;
            const float v = j < p.d ? xv[u] - mean : 0.0f;
            ss += v * v;
        }
        const float inv = rsqrtf(block_sum(ss) / (float)p.d + p.eps);
#pragma unroll
        for (int u = 0; u < NV; u++) {
            const uint32_t j = threadIdx.x + u * blockDim.x;
            if (j < p.d) {
                const float v = (xv[u] - mean) * inv * wv[u], o = b ? v + b[j] : v;
                y[j] = o;
                if (y16)
                    y16[j] = __float2half_rn(o);
            }
        }
        return;
    }
    if (p.mode == 1) {
        float s = 0.0f;
        for (uint32_t j = threadIdx.x; j < p.d; j += blockDim.x)
            s += x[j];
        mean = block_sum(s) / (float)p.d;
    }
    float ss = 0.0f;
    for (uint32_t j = threadIdx.x; j < p.d; j += blockDim.x) {
        float v = x[j] - mean;
        ss += v * v;
    }
    float inv = rsqrtf(block_sum(ss) / (float)p.d + p.eps);
    for (uint32_t j = threadIdx.x; j < p.d; j += blockDim.x) {
        const float v = (x[j] - mean) * inv * w[j], o = b ? v + b[j] : v;
        y[j] = o;
        if (y16)
            y16[j] = __float2half_rn(o);
    }
}

/* Qwen3's RMSNorm of one Q or K head (blockIdx.x: Q heads, then K heads) of token blockIdx.y, in
 * place (k_llm_params.h). */
extern "C" __global__ void
k_llm_head_norm(const struct k_llm_head_norm_params p)
{
    const uint32_t h = blockIdx.x, i = blockIdx.y;
    if (h >= p.n_head + p.n_head_kv || i >= p.n_tok)
        return;
    float *x = (float *)p.x_va + (size_t)i * p.stride + (size_t)h * p.hd;
    const float *w = (const float *)(h < p.n_head ? p.wq_va : p.wk_va);
    float ss = 0.0f;
    for (uint32_t j = threadIdx.x; j < p.hd; j += blockDim.x)
        ss += x[j] * x[j];
    const float inv = rsqrtf(block_sum(ss) / (float)p.hd + p.eps);
    for (uint32_t j = threadIdx.x; j < p.hd; j += blockDim.x)
        x[j] = x[j] * inv * w[j];
}

/* One warp per row; each lane walks the row's values lane, lane + 32, ... and keeps one
 * partial sum per token (up to MM_TOK tokens per pass over the row). TYPE is a template
 * constant so the per-value decode switch folds away (the entry point stays a plain
 * extern "C" function taking the param struct, STYLE 2.7). */
template <uint32_t TYPE>
__device__ __forceinline__ void
matmul_row(const struct k_llm_matmul_params &p, uint32_t r, uint32_t lane)
{
    const uint8_t *w = (const uint8_t *)p.w_va + row_bytes(TYPE, p.k) * r;
    const float *x = (const float *)p.x_va;
    float *y = (float *)p.y_va;
    float bias = p.b_va ? ((const float *)p.b_va)[r] : 0.0f;
    for (uint32_t i0 = 0; i0 < p.n; i0 += MM_TOK) {
        float acc[MM_TOK];
#pragma unroll
        for (uint32_t t = 0; t < MM_TOK; t++)
            acc[t] = 0.0f;
        uint32_t nt = p.n - i0 < MM_TOK ? p.n - i0 : MM_TOK;
        for (uint32_t j = lane; j < p.k; j += WARP) {
            float wv = k_llm_dq_at(TYPE, w, j);
#pragma unroll
            for (uint32_t t = 0; t < MM_TOK; t++)
                if (t < nt)
                    acc[t] += wv * x[(size_t)(i0 + t) * p.x_stride + j];
        }
#pragma unroll
        for (uint32_t t = 0; t < MM_TOK; t++) {
            if (t >= nt)
                break;
            float s = warp_sum(acc[t]);
            if (lane == 0) {
                float *yo = &y[(size_t)(i0 + t) * p.y_stride + r];
                *yo = (p.accumulate ? *yo : 0.0f) + s + bias;
            }
        }
    }
}

/* Decode mat-vec: the whole block on one row, so even a 2048-row matrix keeps thousands
 * of warps in flight (one warp per row left too few to hide the load latency). */
template <uint32_t TYPE>
__device__ __forceinline__ void
matvec_block_row(const struct k_llm_matmul_params &p, uint32_t r)
{
    const uint8_t *w = (const uint8_t *)p.w_va + row_bytes(TYPE, p.k) * r;
    const float *x = (const float *)p.x_va;
    float acc = 0.0f;
#pragma unroll 4
    for (uint32_t j = threadIdx.x; j < p.k; j += blockDim.x)
        acc += k_llm_dq_at(TYPE, w, j) * x[j];
    float s = block_sum(acc);
    if (threadIdx.x == 0) {
        float *yo = (float *)p.y_va + r;
        *yo = (p.accumulate ? *yo : 0.0f) + s + (p.b_va ? ((const float *)p.b_va)[r] : 0.0f);
    }
}

template <uint32_t TYPE>
__device__ __forceinline__ void
matmul_dispatch(const struct k_llm_matmul_params &p)
{
    if (p.by_block) {
        if (blockIdx.x < p.rows)
            matvec_block_row<TYPE>(p, blockIdx.x);
        return;
    }
    uint32_t warp = threadIdx.x / WARP, lane = threadIdx.x % WARP;
    uint32_t r = blockIdx.x * K_LLM_MATMUL_ROWS + warp;
    if (r < p.rows)
        matmul_row<TYPE>(p, r, lane);
}

extern "C" __global__ void
k_llm_matmul(const struct k_llm_matmul_params p)
{
    switch (p.type) {
    case 0:
        matmul_dispatch<0>(p);
        break;
    case 1:
        matmul_dispatch<1>(p);
        break;
    case 2:
        matmul_dispatch<2>(p);
        break;
    case 3:
        matmul_dispatch<3>(p);
        break;
    case 6:
        matmul_dispatch<6>(p);
        break;
    case 7:
        matmul_dispatch<7>(p);
        break;
    case 8:
        matmul_dispatch<8>(p);
        break;
    case 12:
        matmul_dispatch<12>(p);
        break;
    case 13:
        matmul_dispatch<13>(p);
        break;
    case 14:
        matmul_dispatch<14>(p);
        break;
    case 30:
        matmul_dispatch<30>(p);
        break;
    case K_LLM_T_Q4_0R:
        matmul_dispatch<K_LLM_T_Q4_0R>(p);
        break;
    case K_LLM_T_Q8_0R:
        matmul_dispatch<K_LLM_T_Q8_0R>(p);
        break;
    case K_LLM_T_Q6_KR:
        matmul_dispatch<K_LLM_T_Q6_KR>(p);
        break;
    case K_LLM_T_Q5_KR:
        matmul_dispatch<K_LLM_T_Q5_KR>(p);
        break;
    case K_LLM_T_Q4_KR:
        matmul_dispatch<K_LLM_T_Q4_KR>(p);
        break;
    default:
        break;
    }
}

extern "C" __global__ void
k_llm_rope_kv(const struct k_llm_rope_kv_params p)
{
    /* CTA (i, y) of a (n_tok, Y) grid takes every Y-th slice of token i's work: the rotations
     * of Q and K pairs (a K pair goes to the cache as soon as it is rotated, so no barrier is
     * needed) and the V copy. Decode launches Y = several CTAs: one CTA alone spent ~5 us on
     * 1,280 pairs of powf + sincos. */
    const uint32_t i = blockIdx.x;
    const int32_t *tp = (const int32_t *)p.tok_va;
    const uint32_t pos = tp ? (uint32_t)tp[2 * i] : p.pos0 + i;
    const uint64_t slot0 = tp ? (uint64_t)(uint32_t)tp[2 * i + 1] * p.slot_stride : 0;
    if (pos >= p.n_ctx)
        return;
    float *q = (float *)p.q_va + (size_t)i * p.qkv_stride;
    float *k = (float *)p.k_va + (size_t)i * p.qkv_stride;
    const float *v = (const float *)p.v_va + (size_t)i * p.qkv_stride;
    const float *freqs = (const float *)p.freqs_va;
    uint32_t half = p.hd / 2, kv_dim = p.n_head_kv * p.hd;
    kv_t *kc = (kv_t *)p.kc_va + slot0 + (size_t)pos * kv_dim;
    kv_t *vc = (kv_t *)p.vc_va + slot0 + (size_t)pos * kv_dim;
    const uint32_t t0 = blockIdx.y * blockDim.x + threadIdx.x, step = gridDim.y * blockDim.x;
    uint32_t pairs = (p.n_head + p.n_head_kv) * half;
    for (uint32_t e = t0; e < pairs; e += step) {
        uint32_t head = e / half, j = e % half;
        bool is_k = head >= p.n_head;
        float *x = is_k ? k + (head - p.n_head) * p.hd : q + head * p.hd;
        float x0 = x[2 * j], x1 = x[2 * j + 1];
        if (p.rope) {
            float theta = (float)pos * powf(p.base, -2.0f * (float)j / (float)p.hd);
            if (freqs)
                theta /= freqs[j];
            if (p.pos_scale > 0.0f) /* (llama.cpp: freq_scale times the unscaled angle) */
                theta *= p.pos_scale;
            /* reduce to [-pi, pi] in double, then the fast sincos: no slow-path local
             * memory (stack) in this kernel, same value as the twin's sinf/cosf to ~1e-7 */
            double t = (double)theta;
            t -= 6.283185307179586 * rint(t * 0.15915494309189535);
            float c, s;
            __sincosf((float)t, &s, &c);
            float r0 = x0 * c - x1 * s, r1 = x0 * s + x1 * c;
            x0 = r0, x1 = r1;
            x[2 * j] = x0;
            x[2 * j + 1] = x1;
        }
        if (is_k) {
            uint32_t o = (head - p.n_head) * p.hd + 2 * j;
            kv_st2(kc + o, x0, x1);
        }
    }
    for (uint32_t e = t0; e < kv_dim; e += step)
        kv_st(vc + e, v[e]);
}

/* Causal attention of one query (blockIdx.y) and head (blockIdx.x) over positions 0..pos0 + i
 * (the last p.window of them where p.window is set; scores soft-capped where p.softcap is), in chunks of
 * K_LLM_ATTN_CHUNK positions: scores into shared memory, then the chunk's max rescales the running sum and
 * the P V accumulators (online softmax). A context of one chunk computes exactly what a single pass would
 * (the rescale factor of the first chunk is 0). */
extern "C" __global__ void
k_llm_attn(const struct k_llm_attn_params p)
{
    __shared__ float sc[K_LLM_ATTN_CHUNK];
    __shared__ float red[K_LLM_BLOCK];
    uint32_t h = blockIdx.x, i = blockIdx.y;
    const int32_t *tp = (const int32_t *)p.tok_va;
    uint32_t n_pos = (tp ? (uint32_t)tp[2 * i] : p.pos0 + i) + 1;
    const uint64_t slot0 = tp ? (uint64_t)(uint32_t)tp[2 * i + 1] * p.slot_stride : 0;
    if (n_pos > p.n_ctx)
        return;
    uint32_t g = h / (p.n_head / p.n_head_kv), kv_dim = p.n_head_kv * p.hd;
    const float *q = (const float *)p.q_va + (size_t)i * p.q_stride + h * p.hd;
    const kv_t *kc = (const kv_t *)p.kc_va + slot0 + g * p.hd;
    const kv_t *vc = (const kv_t *)p.vc_va + slot0 + g * p.hd;
    float *out = (float *)p.out_va + (size_t)i * p.n_head * p.hd + h * p.hd;
    uint32_t warp = threadIdx.x / WARP, lane = threadIdx.x % WARP, nw = blockDim.x / WARP;
    /* heads wider than the block: one thread per element, accumulating in out (each element
     * always by the same thread); else thread (part, e) sums positions part, part + parts, ...
     * of element e (4 at a time) and the parts are added in order at the end (with hd threads
     * alone, 64 of 256 walked all positions one dependent load after another) */
    const bool wide = p.hd > blockDim.x || blockDim.x > K_LLM_BLOCK;
    const uint32_t parts = wide ? 0 : blockDim.x / p.hd, part = wide ? 0 : threadIdx.x / p.hd,
                   e = wide ? 0 : threadIdx.x % p.hd;
    float m = -3.0e38f, z = 0.0f, acc = 0.0f;
    const uint32_t first = p.window && n_pos > p.window ? n_pos - p.window : 0;
    for (uint32_t c0 = first; c0 < n_pos; c0 += K_LLM_ATTN_CHUNK) {
        const uint32_t cn = min((uint32_t)K_LLM_ATTN_CHUNK, n_pos - c0);
        const kv_t *kt = kc + (size_t)c0 * kv_dim, *vt = vc + (size_t)c0 * kv_dim;
        /* scores: one warp per position, four positions per step (their loads and reductions
         * are independent: one at a time left the warps waiting on each row in turn) */
        for (uint32_t t0 = warp; t0 < cn; t0 += 4 * nw) {
            float s[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
            for (int u = 0; u < 4; u++) {
                uint32_t t = t0 + u * nw;
                if (t < cn)
                    for (uint32_t j = lane; j < p.hd; j += WARP)
                        s[u] += q[j] * kv_ld(kt + (size_t)t * kv_dim + j);
            }
#pragma unroll
            for (int u = 0; u < 4; u++) {
                float r = warp_sum(s[u]);
                uint32_t t = t0 + u * nw;
                if (lane == 0 && t < cn)
                    sc[t] = p.softcap > 0.0f ? p.softcap * tanhf(r * p.scale / p.softcap) : r * p.scale;
            }
        }
        __syncthreads();
        float mc = -3.0e38f;
        for (uint32_t t = threadIdx.x; t < cn; t += blockDim.x)
            mc = fmaxf(mc, sc[t]);
        const float mn = fmaxf(m, block_max(mc)), alpha = __expf(m - mn);
        float zc = 0.0f;
        for (uint32_t t = threadIdx.x; t < cn; t += blockDim.x) {
            float x = __expf(sc[t] - mn);
            sc[t] = x;
            zc += x;
        }
        z = z * alpha + block_sum(zc); /* (its barriers publish sc) */
        m = mn;
        if (wide) {
            for (uint32_t j = threadIdx.x; j < p.hd; j += blockDim.x) {
                float a = c0 > first ? out[j] * alpha : 0.0f;
                for (uint32_t t = 0; t < cn; t++)
                    a += sc[t] * kv_ld(vt + (size_t)t * kv_dim + j);
                out[j] = a;
            }
        } else if (part < parts) {
            float a4[4] = {0.0f, 0.0f, 0.0f, 0.0f};
            uint32_t t = part;
            for (; t + 3 * parts < cn; t += 4 * parts)
#pragma unroll
                for (int u = 0; u < 4; u++)
                    a4[u] += sc[t + u * parts] * kv_ld(vt + (size_t)(t + u * parts) * kv_dim + e);
            for (; t < cn; t += parts)
                a4[0] += sc[t] * kv_ld(vt + (size_t)t * kv_dim + e);
            acc = acc * alpha + ((a4[0] + a4[1]) + (a4[2] + a4[3]));
        }
        __syncthreads(); /* sc is rewritten by the next chunk */
    }
    const float inv = 1.0f / z;
    if (wide) {
        for (uint32_t j = threadIdx.x; j < p.hd; j += blockDim.x)
            out[j] *= inv;
        return;
    }
    red[threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.x < p.hd) {
        float r = 0.0f;
        for (uint32_t j = 0; j < parts; j++)
            r += red[j * p.hd + threadIdx.x];
        out[threadIdx.x] = r * inv;
    }
}

extern "C" __global__ void
k_llm_act(const struct k_llm_act_params p)
{
    uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= p.n)
        return;
    /* a and b of element j: row j / row, rows ab_stride apart */
    const uint32_t ab = p.ab_stride ? j / p.row * p.ab_stride + j % p.row : j;
    float a = ((const float *)p.a_va)[ab];
    float y;
    if (p.mode == K_LLM_ACT_SWIGLU) {
        y = a / (1.0f + __expf(-a)) * ((const float *)p.b_va)[ab];
    } else if (p.mode == K_LLM_ACT_GELU || p.mode == K_LLM_ACT_GEGLU) {
        /* GELU, tanh form: 0.5 a (1 + tanh(sqrt(2/pi) (a + 0.044715 a^3))) */
        y = 0.5f * a * (1.0f + tanhf(0.7978845608f * (a + 0.044715f * a * a * a)));
        if (p.mode == K_LLM_ACT_GEGLU)
            y *= ((const float *)p.b_va)[ab];
    } else if (p.mode == K_LLM_ACT_SCALE) {
        y = a * p.scale;
    } else if (p.mode == K_LLM_ACT_SOFTCAP) {
        y = p.scale * tanhf(a / p.scale);
    } else {
        y = a + ((const float *)p.b_va)[ab];
    }
    if (p.y_va)
        ((float *)p.y_va)[j] = y;
    if (p.y16_va)
        ((__half *)p.y16_va)[j] = __float2half_rn(y);
}
