/* SPDX-License-Identifier: MIT */
/*
 * k_llm_sample.h - parameters and shared definitions of the device sampler
 * (src/kernels/k_llm_sample.cu; CPU twin src/ops/ops_llm_sample.c). Layer: kernels (param
 * headers). One struct by value for both kernels, size and offsets _Static_assert'ed.
 *
 * The sampler takes the logits of one step in device memory and leaves the chosen token id
 * in device memory (state word K_LLM_SMP_ST_ID, which the next step's embedding reads) and,
 * when out_va is set, in a host-visible {id, status} pair. Order of operations as the host
 * sampler (src/llm/llm_sampler.c): penalties (repetition, then presence + frequency, from
 * the counts of the last last_n tokens) -> greedy argmax (ties: lowest id) | top-k ->
 * temperature softmax over the top k -> top-p -> min-p -> draw u(seed, n).
 *
 * Two launches:
 *  k_llm_sample_part, grid (n_slice), K_LLM_SMP_PART_THREADS threads: slice s covers ids
 *   [s * L, min((s + 1) * L, n_vocab)), L = ceil(n_vocab / n_slice) <= K_LLM_SMP_SLICE_MAX.
 *   It writes one struct k_llm_smp_part: the penalised slice maximum (value, lowest id), the
 *   first non-finite logit, and (temp > 0) the slice's top K_LLM_SMP_C candidates as sorted
 *   keys and z = sum exp((x - m) / temp) over the slice.
 *  k_llm_sample_pick, grid (1), K_LLM_SMP_PICK_THREADS threads: merges the candidates
 *   and walks the sorted prefix as the host sampler does. The bound: every id outside the
 *   candidates has a key below B = the largest K_LLM_SMP_C-th key of a slice longer than
 *   K_LLM_SMP_C, so the sorted candidates down to B are the exact global prefix (>=
 *   K_LLM_SMP_C ids). With 1 <= top-k <= K_LLM_SMP_TOPK (< n_vocab) it first takes the top
 *   K_LLM_SMP_TOPK candidates only: when top-k of them are >= B, the walk over them is the
 *   whole answer (status K_LLM_SMP_S_TOPK; the same id the full walk picks). Else all
 *   n_slice * K_LLM_SMP_C candidates sorted (bitonic, shared memory), and when top-k,
 *   the top-p cut, the min-p cut or the draw needs ids past that prefix (or flags has
 *   K_LLM_SMP_EXACT), the kernel takes the exact path: the walk over all n_vocab ids in sorted
 *   order, each of its cuts found as a key by a radix descent over the keys (no sort; the
 *   twin sorts them). Status bit K_LLM_SMP_S_EXACT says which path ran.
 * A non-finite logit: the id word holds its index (the first), status K_LLM_SMP_S_NONFINITE,
 * and the state (penalty window, draw counter) is left as it was.
 * After a pick the kernel accepts the token itself: the window ring and the counts move by
 * one token and the draw counter by one when temp > 0.
 */
#ifndef K_LLM_SAMPLE_H
#define K_LLM_SAMPLE_H

#include <stddef.h>
#include <stdint.h>

#if defined(__cplusplus) && !defined(_Static_assert)
#define _Static_assert static_assert
#endif

#ifdef __CUDACC__
#define K_SMP_FN static __host__ __device__ __forceinline__
#else
#define K_SMP_FN static inline
#endif

#define K_LLM_SMP_C 32           /* candidates per slice */
#define K_LLM_SMP_SLICES 128     /* at most this many slices */
#define K_LLM_SMP_SLICE_MAX 2048 /* ids per slice at most: n_vocab <= 262144 */
#define K_LLM_SMP_SLICE_IDS 1024 /* ids per slice the engine aims at (n_slice = ceil(n / this)) */
#define K_LLM_SMP_PART_THREADS 256
#define K_LLM_SMP_PICK_THREADS 1024
#define K_LLM_SMP_CHUNK 4096 /* keys one pass of the walk holds (4 per thread of the pick) */
#define K_LLM_SMP_TOPK 64    /* the pick's top-k path: top-k up to this many (2 a lane of a warp) */
_Static_assert(K_LLM_SMP_C == 32 && K_LLM_SMP_TOPK == 64, "the warp merges hold 32 and 64 keys");
_Static_assert(K_LLM_SMP_SLICES <= 4 * (K_LLM_SMP_PICK_THREADS / 32), "4 slices a warp of the pick");

/* state_va words */
#define K_LLM_SMP_ST_ID 0     /* the chosen id (int32) */
#define K_LLM_SMP_ST_STATUS 1 /* K_LLM_SMP_S_* of the last pick */
#define K_LLM_SMP_ST_DRAWS 2  /* u64 draw counter (words 2, 3) */
#define K_LLM_SMP_ST_HIST_N 4 /* tokens in the window (<= last_n) */
#define K_LLM_SMP_ST_HIST_POS 5
#define K_LLM_SMP_ST_RING 8 /* int32 ring[last_n], then u32 counts[n_vocab] */

#define K_LLM_SMP_S_EXACT 1u     /* the exact path ran */
#define K_LLM_SMP_S_NONFINITE 2u /* a logit is NaN/Inf: id = its index, nothing sampled */
#define K_LLM_SMP_S_TOPK 4u      /* the top-k path ran (the top K_LLM_SMP_TOPK candidates held it) */

#define K_LLM_SMP_EXACT 1u /* flags: always take the exact path (tests) */

struct k_llm_sample_params {
    uint64_t logits_va; /* f32 [n_vocab] */
    uint64_t state_va;  /* u32 words, see K_LLM_SMP_ST_* */
    uint64_t part_va;   /* struct k_llm_smp_part [n_slice] */
    uint64_t out_va;    /* u32 [2] {id, status} (host-visible), or 0 */
    uint64_t seed;
    uint32_t n_vocab, n_slice;
    float temp; /* <= 0: greedy */
    uint32_t top_k;
    float top_p, min_p;
    float repeat_penalty, presence_penalty, frequency_penalty;
    uint32_t last_n;
    uint32_t flags;
    uint32_t pad;
};
_Static_assert(sizeof(struct k_llm_sample_params) == 88, "sample params size");
_Static_assert(offsetof(struct k_llm_sample_params, seed) == 32 &&
                   offsetof(struct k_llm_sample_params, n_vocab) == 40 &&
                   offsetof(struct k_llm_sample_params, temp) == 48 &&
                   offsetof(struct k_llm_sample_params, top_p) == 56 &&
                   offsetof(struct k_llm_sample_params, repeat_penalty) == 64 &&
                   offsetof(struct k_llm_sample_params, last_n) == 76 &&
                   offsetof(struct k_llm_sample_params, flags) == 80,
               "sample params layout");

struct k_llm_smp_part {
    float m;       /* penalised maximum of the slice */
    float z;       /* sum over the slice of exp((x - m) / temp) (temp > 0) */
    uint32_t arg;  /* its id (lowest on ties) */
    uint32_t bad;  /* first non-finite logit's id, or 0xffffffff */
    uint32_t n_c;  /* candidates written (min(K_LLM_SMP_C, slice length)) */
    uint32_t more; /* the slice has ids that are not candidates */
    uint32_t pad[2];
    uint64_t key[K_LLM_SMP_C]; /* descending */
};
_Static_assert(sizeof(struct k_llm_smp_part) == 32 + 8 * K_LLM_SMP_C, "smp part size");

/* Slices for n ids: ceil(n / K_LLM_SMP_SLICE_IDS), at most K_LLM_SMP_SLICES; 0 when n does
 * not fit (L > K_LLM_SMP_SLICE_MAX). */
K_SMP_FN uint32_t
k_llm_smp_slices(uint32_t n)
{
    uint32_t s = (n + K_LLM_SMP_SLICE_IDS - 1) / K_LLM_SMP_SLICE_IDS;
    if (s > K_LLM_SMP_SLICES)
        s = K_LLM_SMP_SLICES;
    if (!n || (n + s - 1) / s > K_LLM_SMP_SLICE_MAX)
        return 0;
    return s;
}

/* Bytes of the state for a window of last_n tokens over n ids. */
K_SMP_FN uint64_t
k_llm_smp_state_bytes(uint32_t last_n, uint32_t n)
{
    return 4ull * (K_LLM_SMP_ST_RING + last_n + n);
}

/* Smallest power of two >= n (the pick's sort of the candidates). */
K_SMP_FN uint32_t
k_llm_smp_sort_n(uint32_t n)
{
    uint32_t s = 1;
    while (s < n)
        s <<= 1;
    return s;
}

/* Sort key: larger key = earlier in the host sampler's order (logit descending, then id
 * ascending); 0 sorts after every id (padding). The float's bits mapped to an order-keeping
 * unsigned value, the id complemented below it. Non-finite logits never get here. */
K_SMP_FN uint64_t
k_llm_smp_key(float x, uint32_t id)
{
    union {
        float f;
        uint32_t u;
    } c = {x};
    if (!(c.u & 0x7fffffffu))
        c.u = 0; /* -0 and +0 compare equal in the host sampler: one key, ordered by id */
    uint32_t o = c.u & 0x80000000u ? ~c.u : c.u | 0x80000000u;
    return (uint64_t)o << 32 | (0xffffffffu - id);
}

K_SMP_FN float
k_llm_smp_key_x(uint64_t key)
{
    uint32_t o = (uint32_t)(key >> 32);
    union {
        uint32_t u;
        float f;
    } c = {o & 0x80000000u ? o & 0x7fffffffu : ~o};
    return c.f;
}

K_SMP_FN uint32_t
k_llm_smp_key_id(uint64_t key)
{
    return 0xffffffffu - (uint32_t)key;
}

/* The draw-n uniform: llm_sample_uniform (src/llm/llm_sampler.c) bit for bit. */
K_SMP_FN float
k_llm_smp_uniform(uint64_t seed, uint64_t n)
{
    uint64_t z = (seed ^ 0x9E3779B97F4A7C15ull) + n * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (float)((z >> 40) * (1.0 / 16777216.0));
}

/* k_llm_sample_part_rows, grid (n_slice, n_rows), and k_llm_sample_pick_rows, grid (1, n_rows):
 * the two launches above for n_rows rows at once (a batch step's sequences, src/llm/llm_batch.c),
 * row y taking the parameters rows_va[y] (its logits, state, scratch and {id, status}; every row
 * the same n_vocab and n_slice). */
struct k_llm_sample_rows_params {
    uint64_t rows_va; /* struct k_llm_sample_params [n_rows] */
    uint32_t n_rows, pad;
};
_Static_assert(sizeof(struct k_llm_sample_rows_params) == 16 &&
                   offsetof(struct k_llm_sample_rows_params, n_rows) == 8,
               "sample rows params layout");

/* k_llm_sample_argmax_rows: greedy picks of a batch step (src/llm/llm_batch.c): for each row r of
 * x f32 [n_rows][n], out[r] = the id of the row's largest logit (lowest id on ties, as the host
 * sampler's greedy), or -1 - i when logit i is the row's first NaN/Inf. grid (n_rows),
 * K_LLM_SMP_PART_THREADS threads. */
struct k_llm_argmax_params {
    uint64_t x_va;   /* f32 [n_rows][n] */
    uint64_t out_va; /* int32 [n_rows] */
    uint32_t n_rows, n;
};
_Static_assert(sizeof(struct k_llm_argmax_params) == 24 &&
                   offsetof(struct k_llm_argmax_params, out_va) == 8 &&
                   offsetof(struct k_llm_argmax_params, n_rows) == 16 &&
                   offsetof(struct k_llm_argmax_params, n) == 20,
               "argmax params layout");

#endif /* K_LLM_SAMPLE_H */
