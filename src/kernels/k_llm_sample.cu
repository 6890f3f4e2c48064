// SPDX-License-Identifier: MIT
/*
 * k_llm_sample.cu - the device sampler: from the logits of a step in device memory to the
 * chosen token id in device memory (greedy, temperature, top-k, top-p, min-p, repetition /
 * presence / frequency penalties, counter-based RNG). Protocol, bound and layouts:
 * k_llm_sample.h; CPU twin: src/ops/ops_llm_sample.c; tests: tests/unit/test_llm_sample.c.
 *
 * k_llm_sample_part spreads the vocabulary over one CTA per slice (~1024 ids): the penalties,
 * the slice argmax, the slice's softmax sum and its top K_LLM_SMP_C keys (each warp keeps a
 * sorted top 32 in its lanes' registers, merging in 32 keys at a time with shuffles, and skips
 * the keys that cannot enter it; the warps' lists merged in a tree). k_llm_sample_pick (one
 * CTA) merges the slices' lists in registers the same way into the top K_LLM_SMP_TOPK keys:
 * with top-k <= K_LLM_SMP_TOPK held there (the usual case) it walks them; else it sorts all
 * n_slice * K_LLM_SMP_C candidates (a bitonic sort in shared memory) and walks the sorted
 * prefix in passes of K_LLM_SMP_CHUNK keys (a block-wide scan in double per pass). Why the
 * registers: the two bitonic sorts in shared memory took 24 + 54 us of a 491 us decode step
 * (H200, 128k vocabulary, top-k 40), each pass a barrier of the whole CTA. Rounding is kept to the host sampler's: the penalty
 * arithmetic with explicit _rn intrinsics (no contraction into fma), IEEE division, expf.
 */
#include "k_device.h"
#include "k_llm_sample.h"

#define PT K_LLM_SMP_PART_THREADS
#define KT K_LLM_SMP_PICK_THREADS
#define NONE 0xffffffffu

static __device__ __forceinline__ float
smp_pen(const struct k_llm_sample_params &p, float l, uint32_t c)
{
    if (!c)
        return l;
    if (p.repeat_penalty != 1.0f)
        l = l > 0 ? __fdiv_rn(l, p.repeat_penalty) : __fmul_rn(l, p.repeat_penalty);
    return __fsub_rn(l, __fadd_rn(__fmul_rn((float)c, p.frequency_penalty), p.presence_penalty));
}

static __device__ __forceinline__ float
smp_e(uint64_t key, float mx, float temp)
{
    return expf(__fdiv_rn(__fsub_rn(k_llm_smp_key_x(key), mx), temp));
}

/* Bitonic sort of x[0..n) descending (n a power of two), by the whole block. k0 > 2: the runs of
 * k0 / 2 are sorted already, descending and ascending in turn (each run of k0 is bitonic). */
static __device__ void
bitonic_desc(uint64_t *x, uint32_t n, uint32_t k0)
{
    for (uint32_t k = k0; k <= n; k <<= 1)
        for (uint32_t j = k >> 1; j > 0; j >>= 1) {
            for (uint32_t i = threadIdx.x; i < n; i += blockDim.x) {
                uint32_t ixj = i ^ j;
                if (ixj > i) {
                    uint64_t a = x[i], b = x[ixj];
                    if ((i & k) == 0 ? a < b : a > b)
                        x[i] = b, x[ixj] = a;
                }
            }
            __syncthreads();
        }
}

/* A warp's 32 keys (one a lane) sorted descending across the lanes (bitonic, shuffles only). */
static __device__ __forceinline__ uint64_t
warp_sort32_desc(uint64_t v, uint32_t lane)
{
#pragma unroll
    for (uint32_t k = 2; k <= 32; k <<= 1)
#pragma unroll
        for (uint32_t j = k >> 1; j > 0; j >>= 1) {
            const uint64_t o = __shfl_xor_sync(0xffffffffu, v, j);
            v = ((lane & j) == 0) == ((lane & k) == 0) ? (v > o ? v : o) : (v < o ? v : o);
        }
    return v;
}

/* A bitonic sequence over the lanes sorted descending. */
static __device__ __forceinline__ uint64_t
warp_merge32_desc(uint64_t v, uint32_t lane)
{
#pragma unroll
    for (uint32_t j = 16; j > 0; j >>= 1) {
        const uint64_t o = __shfl_xor_sync(0xffffffffu, v, j);
        v = (lane & j) == 0 ? (v > o ? v : o) : (v < o ? v : o);
    }
    return v;
}

/* The top 32 of two descending lists a and b (one key a lane each), descending: max(a[i],
 * b[31 - i]) holds them as a bitonic sequence. */
static __device__ __forceinline__ uint64_t
warp_top32(uint64_t a, uint64_t b, uint32_t lane)
{
    const uint64_t r = __shfl_sync(0xffffffffu, b, 31 - lane);
    return warp_merge32_desc(a > r ? a : r, lane);
}

/* A bitonic sequence of 64 keys (element e = 32 r + lane in v[r]) sorted descending. */
static __device__ __forceinline__ void
warp_merge64_desc(uint64_t v[2], uint32_t lane)
{
    const uint64_t hi = v[0] > v[1] ? v[0] : v[1], lo = v[0] > v[1] ? v[1] : v[0];
    v[0] = warp_merge32_desc(hi, lane);
    v[1] = warp_merge32_desc(lo, lane);
}

/* Two descending lists of 32 (one key a lane) as one descending list of 64 in v. */
static __device__ __forceinline__ void
warp_join32(uint64_t a, uint64_t b, uint64_t v[2], uint32_t lane)
{
    v[0] = a;
    v[1] = __shfl_sync(0xffffffffu, b, 31 - lane); /* a descending then b ascending: bitonic */
    warp_merge64_desc(v, lane);
}

/* The top 64 of two descending lists of 64 (a, b as in warp_merge64_desc), descending, in a. */
static __device__ __forceinline__ void
warp_top64(uint64_t a[2], const uint64_t b[2], uint32_t lane)
{
    const uint64_t r0 = __shfl_sync(0xffffffffu, b[1], 31 - lane), r1 = __shfl_sync(0xffffffffu, b[0], 31 - lane);
    a[0] = a[0] > r0 ? a[0] : r0;
    a[1] = a[1] > r1 ? a[1] : r1;
    warp_merge64_desc(a, lane);
}

/* Sum over the block of KT threads (every thread gets it). */
static __device__ double
block_sum_d(double v, double *sh)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    if ((threadIdx.x & 31) == 0)
        sh[threadIdx.x >> 5] = v;
    __syncthreads();
    double s = 0;
    for (uint32_t w = 0; w < blockDim.x >> 5; w++)
        s += sh[w];
    __syncthreads();
    return s;
}

/* Exclusive prefix over the block of v (thread order); *total: the block's sum. */
static __device__ double
block_scan_d(double v, double *sh, double *total)
{
    const uint32_t lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = blockDim.x >> 5;
    double x = v;
    for (int o = 1; o < 32; o <<= 1) {
        double y = __shfl_up_sync(0xffffffffu, x, o);
        if (lane >= (uint32_t)o)
            x += y;
    }
    if (lane == 31)
        sh[w] = x;
    __syncthreads();
    double before = 0, all = 0;
    for (uint32_t i = 0; i < nw; i++) {
        if (i < w)
            before += sh[i];
        all += sh[i];
    }
    __syncthreads();
    *total = all;
    return before + x - v;
}

static __device__ uint32_t
block_min_u(uint32_t v, uint32_t *sh)
{
    if (threadIdx.x == 0)
        *sh = NONE;
    __syncthreads();
    if (v != NONE)
        atomicMin(sh, v);
    __syncthreads();
    uint32_t r = *sh;
    __syncthreads();
    return r;
}

/* Slice s of one row (k_llm_sample_part, k_llm_sample_part_rows). */
static __device__ __forceinline__ void
sample_part(const struct k_llm_sample_params &p, uint32_t s)
{
    __shared__ uint64_t keys[K_LLM_SMP_SLICE_MAX];
    __shared__ uint64_t top[PT / 32][32];
    __shared__ unsigned long long s_best;
    __shared__ uint32_t s_bad;
    __shared__ double s_z[PT / 32];
    const uint32_t t = threadIdx.x, lane = t & 31, w = t >> 5;
    const uint32_t L = (p.n_vocab + p.n_slice - 1) / p.n_slice;
    const uint32_t i0 = s * L, i1 = i0 + L < p.n_vocab ? i0 + L : p.n_vocab, n = i1 > i0 ? i1 - i0 : 0;
    if (s >= p.n_slice || L > K_LLM_SMP_SLICE_MAX)
        return;
    /* HCQ_LAUNCH_DEP_WAIT: the logits come from the launch before; the pick may be scheduled now */
    k_dep_launch();
    k_dep_wait();
    const float *lg = (const float *)p.logits_va;
    const uint32_t *cnt = (const uint32_t *)p.state_va + K_LLM_SMP_ST_RING + p.last_n;
    struct k_llm_smp_part *o = (struct k_llm_smp_part *)p.part_va + s;
    const uint32_t nr = (n + PT - 1) / PT * PT; /* whole rounds of the warps (key 0 past n) */
    if (t == 0)
        s_best = 0, s_bad = NONE;
    __syncthreads();
    uint64_t best = 0;
    uint32_t bad = NONE;
    for (uint32_t i = t; i < nr; i += PT) {
        uint64_t k = 0;
        if (i < n) {
            float x = lg[i0 + i];
            if (!isfinite(x))
                bad = min(bad, i0 + i);
            else
                k = k_llm_smp_key(smp_pen(p, x, cnt[i0 + i]), i0 + i);
        }
        keys[i] = k;
        best = k > best ? k : best;
    }
    if (bad != NONE)
        atomicMin(&s_bad, bad);
    atomicMax(&s_best, (unsigned long long)best);
    __syncthreads();
    if (!n || s_bad != NONE) {
        if (t == 0)
            o->bad = s_bad, o->arg = NONE, o->m = -INFINITY, o->z = 0, o->n_c = 0, o->more = 0;
        return;
    }
    const float m = k_llm_smp_key_x(s_best);
    if (p.temp <= 0) {
        if (t == 0)
            o->bad = NONE, o->arg = k_llm_smp_key_id(s_best), o->m = m, o->z = 0, o->n_c = 0, o->more = 0;
        return;
    }
    double z = 0;
    for (uint32_t i = t; i < n; i += PT)
        z += smp_e(keys[i], m, p.temp);
    for (int off = 16; off > 0; off >>= 1)
        z += __shfl_xor_sync(0xffffffffu, z, off);
    if (lane == 0)
        s_z[w] = z;
    /* each warp's top 32 of its rounds (32 consecutive keys a round), in its lanes: a round none
     * of whose keys beats the list's last is skipped (most of them, past the first few) */
    uint64_t run = 0;
    for (uint32_t b = 32 * w; b < nr; b += PT) {
        const uint64_t v = keys[b + lane];
        if (!__any_sync(0xffffffffu, v > __shfl_sync(0xffffffffu, run, 31)))
            continue;
        run = warp_top32(run, warp_sort32_desc(v, lane), lane);
    }
    top[w][lane] = run;
    __syncthreads();
    for (uint32_t h = PT / 64; h > 0; h >>= 1) { /* the warps' lists: a tree of merges */
        if (w < h)
            top[w][lane] = warp_top32(top[w][lane], top[w + h][lane], lane);
        __syncthreads();
    }
    const uint32_t n_c = n < K_LLM_SMP_C ? n : K_LLM_SMP_C;
    if (t == 0) {
        double zs = 0;
        for (uint32_t v = 0; v < PT / 32; v++)
            zs += s_z[v];
        o->bad = NONE, o->arg = k_llm_smp_key_id(s_best), o->m = m, o->z = zs, o->n_c = n_c;
        o->more = n > K_LLM_SMP_C;
    }
    if (t < n_c)
        o->key[t] = top[0][t];
}

extern "C" __global__ void
__launch_bounds__(PT) k_llm_sample_part(const struct k_llm_sample_params p)
{
    sample_part(p, blockIdx.x);
}

/* One row's parameters from the array (read before the dependency wait: the host wrote them). */
static __device__ __forceinline__ bool
row_params(const struct k_llm_sample_rows_params &r, struct k_llm_sample_params *p)
{
    if (blockIdx.y >= r.n_rows)
        return false;
    *p = ((const struct k_llm_sample_params *)r.rows_va)[blockIdx.y];
    return true;
}

extern "C" __global__ void
__launch_bounds__(PT) k_llm_sample_part_rows(const struct k_llm_sample_rows_params r)
{
    struct k_llm_sample_params p;
    if (row_params(r, &p))
        sample_part(p, blockIdx.x);
}

/* The walk (ops_llm_sample.c's smp_walk, pass by pass over chunks of 4 keys per thread):
 * the id, or -1 when the answer lies past the prefix keys[0..ne). */
static __device__ int64_t
smp_walk(const struct k_llm_sample_params &p, const uint64_t *keys, uint32_t ne, double z_all, double u,
         double *sh, uint32_t *shu)
{
    const uint32_t n = p.n_vocab, t = threadIdx.x;
    uint32_t k = p.top_k && p.top_k < n ? p.top_k : n;
    if (k < n && k > ne)
        return -1;
    const uint32_t kp = k < ne ? k : ne;
    const float mx = k_llm_smp_key_x(keys[0]), T = p.temp;
    double z = z_all;
    if (k <= ne) {
        double v = 0;
        for (uint32_t i = t; i < k; i += KT)
            v += smp_e(keys[i], mx, T);
        z = block_sum_d(v, sh);
    }
#define P_OF(i) ((float)(smp_e(keys[i], mx, T) / z))
    if (p.top_p < 1.0f) {
        double carry = 0;
        uint32_t cut = NONE;
        for (uint32_t c0 = 0; c0 < kp && cut == NONE; c0 += K_LLM_SMP_CHUNK) {
            const uint32_t b = c0 + 4 * t;
            float q[4];
            double v = 0, tot;
            for (int j = 0; j < 4; j++)
                q[j] = b + j < kp ? P_OF(b + j) : 0.0f, v += q[j];
            double acc = carry + block_scan_d(v, sh, &tot);
            uint32_t mine = NONE;
            for (int j = 0; j < 4 && b + j < kp; j++)
                if ((acc += q[j]) >= p.top_p) {
                    mine = b + j;
                    break;
                }
            cut = block_min_u(mine, shu);
            carry += tot;
        }
        if (cut != NONE)
            k = cut + 1;
        else if (k > ne)
            return -1;
    }
    if (p.min_p > 0) {
        const float thr = __fmul_rn(p.min_p, P_OF(0));
        const uint32_t lim = k < ne ? k : ne;
        uint32_t mine = NONE;
        for (uint32_t i = 1 + t; i < lim; i += KT)
            if (P_OF(i) < thr) {
                mine = i;
                break;
            }
        uint32_t kk = block_min_u(mine, shu);
        if (kk != NONE)
            k = kk;
        else if (k > ne)
            return -1;
    }
    const uint32_t kw = k < ne ? k : ne;
    double v = 0;
    for (uint32_t i = t; i < kw; i += KT)
        v += P_OF(i);
    double mass = block_sum_d(v, sh);
    if (k > ne) {
        v = 0;
        for (uint32_t i = t; i < ne; i += KT)
            v += smp_e(keys[i], mx, T);
        mass += (z - block_sum_d(v, sh)) / z;
    }
    const double r = u * mass;
    double carry = 0;
    uint32_t pick = NONE;
    for (uint32_t c0 = 0; c0 < kw && pick == NONE; c0 += K_LLM_SMP_CHUNK) {
        const uint32_t b = c0 + 4 * t;
        float q[4];
        double vv = 0, tot;
        for (int j = 0; j < 4; j++)
            q[j] = b + j < kw ? P_OF(b + j) : 0.0f, vv += q[j];
        double acc = carry + block_scan_d(vv, sh, &tot);
        uint32_t mine = NONE;
        for (int j = 0; j < 4 && b + j < kw; j++)
            if (r < (acc += q[j])) {
                mine = b + j;
                break;
            }
        pick = block_min_u(mine, shu);
        carry += tot;
    }
#undef P_OF
    if (pick != NONE)
        return k_llm_smp_key_id(keys[pick]);
    return k <= ne ? (int64_t)k_llm_smp_key_id(keys[kw - 1]) : -1;
}

/* Sum over a warp, as block_sum_d adds one warp's values (the same tree, so the same double). */
static __device__ __forceinline__ double
warp_sum_d(double v)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

/* The first index below kv (4 a lane, lanes 0..15) where the running sum of q passes the target
 * (ge: acc >= target, else target < acc), as smp_walk's pass over one chunk: the lanes' sums
 * scanned as block_scan_d scans them within warp 0, an index at or past kv never taken (there a
 * lane's acc is the scan's sum, not the sequential one); NONE: not reached. */
static __device__ __forceinline__ uint32_t
warp_scan_cut(const float q[4], double target, bool ge, uint32_t lane, uint32_t kv)
{
    double v = 0;
    for (int j = 0; j < 4; j++)
        v += q[j];
    double x = v;
    for (int o = 1; o < 32; o <<= 1) {
        const double y = __shfl_up_sync(0xffffffffu, x, o);
        if (lane >= (uint32_t)o)
            x += y;
    }
    double acc = x - v;
    uint32_t mine = NONE;
    for (uint32_t j = 0; j < 4 && mine == NONE && 4 * lane + j < kv; j++) {
        acc += q[j];
        if (ge ? acc >= target : target < acc)
            mine = 4 * lane + j;
    }
    for (int o = 16; o > 0; o >>= 1)
        mine = min(mine, __shfl_xor_sync(0xffffffffu, mine, o));
    return mine;
}

/* smp_walk for the top-k path by warp 0 alone: k = top-k <= K_LLM_SMP_TOPK keys, all of them in
 * the exact prefix, so it never returns -1. Every sum is the one smp_walk makes over the same
 * keys (the values sit where the block's threads 0..63 hold them), so it picks the same id;
 * why: the block's walk, ~15 barriers of 1024 threads, was 20 us of the pick (H200). */
static __device__ int64_t
smp_walk_topk(const struct k_llm_sample_params &p, const uint64_t *keys, double u)
{
    const uint32_t lane = threadIdx.x & 31;
    uint32_t k = p.top_k;
    const float mx = k_llm_smp_key_x(keys[0]), T = p.temp;
    const double z = warp_sum_d(lane < k ? smp_e(keys[lane], mx, T) : 0.0) +
                     warp_sum_d(32 + lane < k ? smp_e(keys[32 + lane], mx, T) : 0.0);
#define P_OF(i) ((float)(smp_e(keys[i], mx, T) / z))
    float q[4];
    if (p.top_p < 1.0f) {
        for (int j = 0; j < 4; j++)
            q[j] = 4 * lane + j < k ? P_OF(4 * lane + j) : 0.0f;
        const uint32_t cut = warp_scan_cut(q, p.top_p, true, lane, k);
        if (cut != NONE)
            k = cut + 1;
    }
    if (p.min_p > 0) {
        const float thr = __fmul_rn(p.min_p, P_OF(0));
        uint32_t mine = NONE;
        for (uint32_t i = 1 + lane; i < k && mine == NONE; i += 32)
            if (P_OF(i) < thr)
                mine = i;
        for (int o = 16; o > 0; o >>= 1)
            mine = min(mine, __shfl_xor_sync(0xffffffffu, mine, o));
        if (mine != NONE)
            k = mine;
    }
    const double mass = warp_sum_d(lane < k ? (double)P_OF(lane) : 0.0) +
                        warp_sum_d(32 + lane < k ? (double)P_OF(32 + lane) : 0.0);
    for (int j = 0; j < 4; j++)
        q[j] = 4 * lane + j < k ? P_OF(4 * lane + j) : 0.0f;
    const uint32_t pick = warp_scan_cut(q, u * mass, false, lane, k);
#undef P_OF
    return k_llm_smp_key_id(keys[pick != NONE ? pick : k - 1]);
}

/* The exact path's selection (smp_exact), in the pick's shared memory: a radix descent over the
 * keys, 8 bits a level from the top, each level a histogram of the keys that share the digits
 * chosen so far. */
struct smp_sel {
    double hm[256];   /* mass per digit */
    uint32_t hc[256]; /* keys per digit */
    unsigned long long key, kmin;
    double acc;
    uint32_t found;
};
enum { SEL_COUNT, SEL_MASS_GE, SEL_MASS_GT };

/* Id i's penalised key (0 past the vocabulary). */
static __device__ __forceinline__ uint64_t
smp_key_of(const struct k_llm_sample_params &p, const float *lg, const uint32_t *cnt, uint32_t i)
{
    return i < p.n_vocab ? k_llm_smp_key(smp_pen(p, lg[i], cnt[i]), i) : 0;
}

/* Among the keys >= lo in descending order, the first key at which the running count reaches
 * target (SEL_COUNT: the target-th key) or the running probability mass (float (e / z) each,
 * as the walk's P_OF) reaches it (SEL_MASS_GE: acc >= target; SEL_MASS_GT: target < acc);
 * 0 when the total falls short (rounding). The masses of a level add in another order than the
 * sorted walk's (a draw within ~1e-16 of a boundary may go the other way). */
static __device__ uint64_t
smp_select(const struct k_llm_sample_params &p, const float *lg, const uint32_t *cnt, float mx, double z,
           uint64_t lo, double target, int mode, struct smp_sel *s)
{
    const uint32_t t = threadIdx.x, lane = t & 31;
    uint64_t prefix = 0;
    double above = 0; /* count or mass of the keys >= lo above the prefix's */
    for (int shift = 56; shift >= 0; shift -= 8) {
        for (uint32_t b = t; b < 256; b += KT)
            s->hm[b] = 0, s->hc[b] = 0;
        __syncthreads();
        const uint64_t hi = shift == 56 ? 0 : ~0ull << (shift + 8);
        for (uint32_t i = t; i < p.n_vocab; i += KT) {
            const uint64_t key = smp_key_of(p, lg, cnt, i);
            if (key < lo || (key & hi) != prefix)
                continue;
            const uint32_t d = (uint32_t)(key >> shift) & 255;
            if (mode == SEL_COUNT)
                atomicAdd(&s->hc[d], 1u);
            else
                atomicAdd(&s->hm[d], (double)(float)(smp_e(key, mx, p.temp) / z));
        }
        __syncthreads();
        if (t < 32) { /* lane l: digits 255 - 8 l down to 248 - 8 l */
            double v[8], sum = 0;
            for (int j = 0; j < 8; j++) {
                const uint32_t b = 255 - 8 * lane - j;
                v[j] = mode == SEL_COUNT ? (double)s->hc[b] : s->hm[b];
                sum += v[j];
            }
            double x = sum;
            for (int o = 1; o < 32; o <<= 1) {
                const double y = __shfl_up_sync(0xffffffffu, x, o);
                if (lane >= (uint32_t)o)
                    x += y;
            }
            double acc = above + (x - sum);
            int dj = -1;
            for (int j = 0; j < 8 && dj < 0; j++) {
                const double nx = acc + v[j];
                if (mode == SEL_MASS_GT ? target < nx : nx >= target)
                    dj = j;
                else
                    acc = nx;
            }
            const uint32_t ball = __ballot_sync(0xffffffffu, dj >= 0);
            if (ball) {
                const int src = __ffs(ball) - 1;
                dj = __shfl_sync(0xffffffffu, dj, src);
                acc = __shfl_sync(0xffffffffu, acc, src);
                if (lane == 0)
                    s->key = prefix | (uint64_t)(255 - 8 * src - dj) << shift, s->acc = acc, s->found = 1;
            } else if (lane == 0) {
                s->found = 0;
            }
        }
        __syncthreads();
        const bool found = s->found;
        prefix = s->key, above = s->acc;
        __syncthreads(); /* (s is cleared for the next level) */
        if (!found)
            return 0;
    }
    return prefix;
}

/* The smallest key >= lo whose probability is >= thr (thr 0: the smallest key >= lo). */
static __device__ uint64_t
smp_min_key(const struct k_llm_sample_params &p, const float *lg, const uint32_t *cnt, float mx, double z,
            uint64_t lo, float thr, struct smp_sel *s)
{
    if (threadIdx.x == 0)
        s->kmin = ~0ull;
    __syncthreads();
    unsigned long long mine = ~0ull;
    for (uint32_t i = threadIdx.x; i < p.n_vocab; i += KT) {
        const uint64_t key = smp_key_of(p, lg, cnt, i);
        if (key >= lo && key < mine && (thr <= 0 || (float)(smp_e(key, mx, p.temp) / z) >= thr))
            mine = key;
    }
    atomicMin(&s->kmin, mine);
    __syncthreads();
    const uint64_t r = s->kmin;
    __syncthreads();
    return r;
}

/* The exact path: the walk over every id in sorted order without sorting them. Each cut the
 * walk makes is a key: top-k's k-th key (a count selection), top-p's cut (a mass selection),
 * min-p's last key at or above min_p x the top probability, then the draw (a mass selection
 * below u x the mass kept); the keys >= the cut are the walk's prefix. top: the largest key.
 * Why: the bitonic sort of all n keys in global memory by this one CTA took ~1 ms at 128k ids
 * (serve at temperature 0.8 on a flat distribution: 711 tokens/s against 2374 greedy, H200). */
static __device__ int64_t
smp_exact(const struct k_llm_sample_params &p, const uint32_t *st, uint64_t top, double u, double *sh,
          struct smp_sel *s)
{
    const float *lg = (const float *)p.logits_va;
    const uint32_t *cnt = st + K_LLM_SMP_ST_RING + p.last_n, n = p.n_vocab;
    const float mx = k_llm_smp_key_x(top), T = p.temp;
    uint64_t lo = 0;
    if (p.top_k && p.top_k < n)
        lo = smp_select(p, lg, cnt, mx, 1.0, 0, (double)p.top_k, SEL_COUNT, s);
    double v = 0;
    for (uint32_t i = threadIdx.x; i < n; i += KT) {
        const uint64_t key = smp_key_of(p, lg, cnt, i);
        if (key && key >= lo)
            v += smp_e(key, mx, T);
    }
    const double z = block_sum_d(v, sh);
    if (p.top_p < 1.0f) {
        const uint64_t c = smp_select(p, lg, cnt, mx, z, lo, p.top_p, SEL_MASS_GE, s);
        lo = c ? c : lo;
    }
    if (p.min_p > 0)
        lo = smp_min_key(p, lg, cnt, mx, z, lo, __fmul_rn(p.min_p, (float)(smp_e(top, mx, T) / z)), s);
    v = 0;
    for (uint32_t i = threadIdx.x; i < n; i += KT) {
        const uint64_t key = smp_key_of(p, lg, cnt, i);
        if (key && key >= lo)
            v += (float)(smp_e(key, mx, T) / z);
    }
    const double mass = block_sum_d(v, sh);
    uint64_t pk = smp_select(p, lg, cnt, mx, z, lo, u * mass, SEL_MASS_GT, s);
    if (!pk) /* the draw past the sum (rounding): the walk's last id */
        pk = smp_min_key(p, lg, cnt, mx, z, lo ? lo : 1, 0, s);
    return k_llm_smp_key_id(pk);
}

/* One row's pick (k_llm_sample_pick, k_llm_sample_pick_rows). */
static __device__ __forceinline__ void
sample_pick(const struct k_llm_sample_params &p)
{
    __shared__ uint64_t keys[K_LLM_SMP_SLICES * K_LLM_SMP_C];
    __shared__ double sh[32];
    __shared__ uint32_t shu;
    __shared__ unsigned long long s_best, s_bound;
    __shared__ uint32_t s_bad, s_ne;
    const uint32_t t = threadIdx.x;
    uint32_t *st = (uint32_t *)p.state_va;
    uint32_t *out = (uint32_t *)p.out_va;
    const struct k_llm_smp_part *part = (const struct k_llm_smp_part *)p.part_va;
    k_dep_wait(); /* HCQ_LAUNCH_DEP_WAIT: the partials come from k_llm_sample_part */
    if (!p.n_slice || p.n_slice > K_LLM_SMP_SLICES || !p.n_vocab)
        return;
    if (t == 0)
        s_best = 0, s_bound = 0, s_bad = NONE, s_ne = 0;
    __syncthreads();
    if (t < p.n_slice) {
        const struct k_llm_smp_part *q = &part[t];
        if (q->bad != NONE)
            atomicMin(&s_bad, q->bad);
        if (q->arg != NONE)
            atomicMax(&s_best, (unsigned long long)k_llm_smp_key(q->m, q->arg));
        if (q->more)
            atomicMax(&s_bound, (unsigned long long)q->key[K_LLM_SMP_C - 1]);
    }
    __syncthreads();
    if (s_bad != NONE) {
        if (t == 0) {
            st[K_LLM_SMP_ST_ID] = s_bad, st[K_LLM_SMP_ST_STATUS] = K_LLM_SMP_S_NONFINITE;
            if (out)
                out[0] = s_bad, out[1] = K_LLM_SMP_S_NONFINITE;
        }
        return;
    }
    uint32_t id, status = 0;
    if (p.temp <= 0) {
        id = k_llm_smp_key_id(s_best);
    } else {
        const float mx = k_llm_smp_key_x(s_best);
        double zv = 0;
        if (t < p.n_slice && part[t].n_c)
            zv = part[t].z * exp((double)(part[t].m - mx) / p.temp);
        const double z_all = block_sum_d(zv, sh);
        const uint64_t draws = ((uint64_t)st[K_LLM_SMP_ST_DRAWS + 1] << 32 | st[K_LLM_SMP_ST_DRAWS]) + 1;
        const double u = k_llm_smp_uniform(p.seed, draws);
        int64_t r = -1;
        if (!(p.flags & K_LLM_SMP_EXACT) && p.top_k && p.top_k <= K_LLM_SMP_TOPK && p.top_k < p.n_vocab) {
            /* the top 64 candidates, merged in registers: each warp the lists of 4 slices, then a
             * tree over the warps' lists (keys[64 w..]); they are the global prefix down to the
             * bound, so top-k <= the keys >= bound among them is the whole walk */
            const uint32_t lane = t & 31, w = t >> 5;
            auto cand = [&](uint32_t sl) -> uint64_t {
                return sl < p.n_slice && lane < part[sl].n_c ? part[sl].key[lane] : 0;
            };
            uint64_t a[2], b[2];
            warp_join32(cand(4 * w), cand(4 * w + 1), a, lane);
            warp_join32(cand(4 * w + 2), cand(4 * w + 3), b, lane);
            warp_top64(a, b, lane);
            keys[64 * w + lane] = a[0], keys[64 * w + 32 + lane] = a[1];
            __syncthreads();
            for (uint32_t h = KT / 64; h > 0; h >>= 1) {
                if (w < h) {
                    b[0] = keys[64 * (w + h) + lane], b[1] = keys[64 * (w + h) + 32 + lane];
                    warp_top64(a, b, lane);
                    keys[64 * w + lane] = a[0], keys[64 * w + 32 + lane] = a[1];
                }
                __syncthreads();
            }
            if (t == 0) {
                uint32_t e = 0;
                while (e < K_LLM_SMP_TOPK && keys[e] && keys[e] >= s_bound)
                    e++;
                s_ne = e;
            }
            __syncthreads();
            if (p.top_k <= s_ne) { /* warp 0 walks; the others only leave (thread 0 writes) */
                r = w == 0 ? smp_walk_topk(p, keys, u) : 0;
                status |= K_LLM_SMP_S_TOPK;
            }
            __syncthreads(); /* (keys is refilled below when the walk needs more) */
        }
        if (r < 0 && !(p.flags & K_LLM_SMP_EXACT)) {
            /* every candidate sorted: odd slices reversed, so every run of 2 K_LLM_SMP_C is
             * bitonic and the sort starts there */
            const uint32_t nu = k_llm_smp_sort_n(p.n_slice * K_LLM_SMP_C);
            for (uint32_t i = t; i < nu; i += KT) {
                uint32_t sl = i / K_LLM_SMP_C, j = i % K_LLM_SMP_C;
                j = sl & 1 ? K_LLM_SMP_C - 1 - j : j;
                keys[i] = sl < p.n_slice && j < part[sl].n_c ? part[sl].key[j] : 0;
            }
            if (t == 0)
                s_ne = 0;
            __syncthreads();
            bitonic_desc(keys, nu, nu < 2 * K_LLM_SMP_C ? 2 : 2 * K_LLM_SMP_C);
            /* ne: the keys >= bound (a prefix, as they are sorted) */
            uint32_t mine = 0;
            for (uint32_t i = t; i < nu; i += KT)
                if (keys[i] && keys[i] >= s_bound && (i + 1 == nu || !keys[i + 1] || keys[i + 1] < s_bound))
                    mine = i + 1;
            if (mine)
                atomicMax(&s_ne, mine);
            __syncthreads();
            r = smp_walk(p, keys, s_ne, z_all, u, sh, &shu);
        }
        if (r < 0) {
            __syncthreads(); /* (the candidates' keys are done with: the selection's bins go there) */
            r = smp_exact(p, st, s_best, u, sh, (struct smp_sel *)keys);
            status |= K_LLM_SMP_S_EXACT;
        }
        id = (uint32_t)r;
    }
    if (t != 0)
        return;
    /* accept the token: window and counts, draw counter (ops_llm_sample.c's smp_accept) */
    st[K_LLM_SMP_ST_ID] = id;
    if (p.temp > 0) {
        uint64_t d = ((uint64_t)st[K_LLM_SMP_ST_DRAWS + 1] << 32 | st[K_LLM_SMP_ST_DRAWS]) + 1;
        st[K_LLM_SMP_ST_DRAWS] = (uint32_t)d;
        st[K_LLM_SMP_ST_DRAWS + 1] = (uint32_t)(d >> 32);
    }
    if (p.last_n) {
        uint32_t *ring = st + K_LLM_SMP_ST_RING, *cnt = ring + p.last_n;
        uint32_t hn = st[K_LLM_SMP_ST_HIST_N], hp = st[K_LLM_SMP_ST_HIST_POS] % p.last_n;
        if (hn >= p.last_n && ring[hp] < p.n_vocab && cnt[ring[hp]])
            cnt[ring[hp]]--;
        ring[hp] = id;
        cnt[id]++;
        st[K_LLM_SMP_ST_HIST_POS] = (hp + 1) % p.last_n;
        st[K_LLM_SMP_ST_HIST_N] = hn < p.last_n ? hn + 1 : p.last_n;
    }
    st[K_LLM_SMP_ST_STATUS] = status;
    if (out)
        out[0] = id, out[1] = status;
}

extern "C" __global__ void
__launch_bounds__(KT) k_llm_sample_pick(const struct k_llm_sample_params p)
{
    sample_pick(p);
}

extern "C" __global__ void
__launch_bounds__(KT) k_llm_sample_pick_rows(const struct k_llm_sample_rows_params r)
{
    struct k_llm_sample_params p;
    if (row_params(r, &p))
        sample_pick(p);
}

/* One CTA per row: each thread the best (value, then lowest id) and the first non-finite id of
 * its ids, then a shared-memory tree of both (k_llm_sample.h). A thread reads groups of 4 ids
 * (16-byte loads where the row is 16-byte aligned), 8 groups in flight: one value at a time, each
 * load waiting on the last, a 128k-vocabulary row took 57 us (H200). */
extern "C" __global__ void __launch_bounds__(PT)
k_llm_sample_argmax_rows(const struct k_llm_argmax_params p)
{
    __shared__ float sv[PT];
    __shared__ uint32_t si[PT], sb[PT];
    const uint32_t r = blockIdx.x, t = threadIdx.x;
    if (r >= p.n_rows || blockDim.x != PT)
        return;
    const float *x = (const float *)(uintptr_t)p.x_va + (size_t)r * p.n;
    float bv = -INFINITY;
    uint32_t bi = NONE, bad = NONE;
    /* ascending ids per thread: the first of equals stays */
    auto take = [&](float v, uint32_t i) {
        if (!isfinite(v))
            bad = min(bad, i);
        else if (bi == NONE || v > bv)
            bv = v, bi = i;
    };
    const bool vec = ((uintptr_t)x & 15) == 0;
    const uint32_t n4 = vec ? p.n / 4 : 0; /* groups of 4 read as float4 */
    uint32_t g = t;
    for (; g + 7 * PT < n4; g += 8 * PT) {
        float4 v[8];
#pragma unroll
        for (int u = 0; u < 8; u++)
            v[u] = ((const float4 *)x)[g + u * PT];
#pragma unroll
        for (int u = 0; u < 8; u++) {
            const uint32_t i = 4 * (g + u * PT);
            take(v[u].x, i), take(v[u].y, i + 1), take(v[u].z, i + 2), take(v[u].w, i + 3);
        }
    }
    for (; g < n4; g += PT) {
        const float4 v = ((const float4 *)x)[g];
        take(v.x, 4 * g), take(v.y, 4 * g + 1), take(v.z, 4 * g + 2), take(v.w, 4 * g + 3);
    }
    for (uint32_t i = 4 * n4 + t; i < p.n; i += PT)
        take(x[i], i);
    sv[t] = bv, si[t] = bi, sb[t] = bad;
    __syncthreads();
    for (uint32_t s = PT / 2; s > 0; s >>= 1) {
        if (t < s) {
            const float ov = sv[t + s];
            const uint32_t oi = si[t + s];
            if (oi != NONE && (si[t] == NONE || ov > sv[t] || (ov == sv[t] && oi < si[t])))
                sv[t] = ov, si[t] = oi;
            sb[t] = min(sb[t], sb[t + s]);
        }
        __syncthreads();
    }
    if (t == 0)
        ((int32_t *)(uintptr_t)p.out_va)[r] = sb[0] != NONE ? -1 - (int32_t)sb[0] : (int32_t)si[0];
}
