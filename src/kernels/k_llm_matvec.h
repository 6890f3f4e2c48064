/* SPDX-License-Identifier: MIT */
/*
 * k_llm_matvec.h - parameters of the decode mat-vec (src/kernels/k_llm_matvec.cu), shared
 * by the .cu, its CPU twin (src/ops/ops_llm_matvec.c) and the engine (src/llm/llm_model.c).
 * Layer: kernels (param headers). One struct, by value (STYLE 2.7); sizes and offsets are
 * _Static_assert'ed because the loader copies it into the constant bank byte for byte.
 *
 * y = W x for one token (n = 1), W given as up to K_LLM_MV_SEGS row segments (each its
 * own tensor and type, rows concatenated in y: Q, K and V as one launch), with optional
 *  - RMSNorm of x folded into the prologue: x' = (x * rsqrt(mean(x^2) + eps)) * norm_w,
 *  - bias b (f32, one per output row),
 *  - mode ACC: y += W x (residual add), mode SWIGLU: two segments of equal rows (gate, up),
 *    y[r] = silu(gate_r . x') * (up_r . x').
 * Supported weight types (k_llm_mv_type_ok): F16, BF16, Q4_0, Q8_0, Q4_K, Q5_K, Q6_K; k a
 * multiple of 256 and <= K_LLM_MV_MAX_K. Other shapes use
 * k_llm_matmul.
 */
#ifndef K_LLM_MATVEC_H
#define K_LLM_MATVEC_H

#include <stddef.h>
#include <stdint.h>
#ifndef __CUDACC__
#include <math.h>
#endif

#if defined(__cplusplus) && !defined(_Static_assert)
#define _Static_assert static_assert
#endif
#ifdef __CUDACC__
#define K_LLM_MV_FN static __host__ __device__ __forceinline__
#else
#define K_LLM_MV_FN static inline
#endif

#define K_LLM_MV_SEGS 3
#define K_LLM_MV_ROWS 8            /* weight rows per tile (one CTA stages them together) */
#define K_LLM_MV_THREADS 256       /* threads per CTA (the kernel assumes it) */
#define K_LLM_MV_MAX_K 65536       /* longest row supported */
#define K_LLM_MV_STAGE_B 1104      /* staged bytes per row and chunk: 1088 (Q8_0 x 1024) + slack */
#define K_LLM_MV_STAGE_WIDE_B 2192 /* k_llm_matvec_wide: 2176 (Q8_0 x 2048) + slack */

/* K_LLM_MV_ROPE (k_llm_matvec_q8 and the persistent decode kernel's table, k_llm_decode.h):
 * two rows per unit, a RoPE pair, rotated in the epilogue (struct k_llm_mv_rope). */
enum k_llm_mv_mode { K_LLM_MV_SET = 0, K_LLM_MV_ACC = 1, K_LLM_MV_SWIGLU = 2, K_LLM_MV_ROPE = 3 };

struct k_llm_mv_seg {
    uint64_t w_va; /* [rows][k] of `type`, ggml row layout */
    uint32_t type, rows;
};

/* An L2 prefetch hint (k_llm_matvec_q8, k_llm_attn_decode): up to two byte ranges the NEXT
 * launches will read (the decode engine names the next weight matrices). The kernel spreads
 * them over its CTAs as cp.async.bulk.prefetch.L2 requests at its start and does not wait
 * for them: a launch whose own DRAM traffic is small (attention, the small Q|K|V and O
 * mat-vecs, bound by latency and the prologue) then moves the next launch's weights into L2
 * while DRAM would idle. A hint only: results never depend on it. va 16-byte aligned.
 * Measured on H100: 7-10% SLOWER end to end (the attention launch grew from 9.5 to 13.9 us
 * issuing the requests; gate|up did not speed up), so the engine leaves it zero; the field
 * stays in the parameter block for the kernels' layout. */
struct k_llm_pf {
    uint64_t va[2];
    uint32_t B[2];
};
_Static_assert(sizeof(struct k_llm_pf) == 24, "pf size");

/* Mode K_LLM_MV_ROPE of k_llm_matvec_q8 (the Q|K|V launch of a decode step): rows (o, o+1) are
 * a RoPE pair; Q rows (o < n_q) are rotated into y, K rows (n_q <= o < n_q + n_kv) rotated
 * into the K cache row at pos, V rows copied into the V cache row at pos - what k_llm_rope_kv
 * did in a launch of its own (same formula and rounding). A bias (b_va) is added to every row
 * first. */
struct k_llm_mv_rope {
    uint64_t kc_va, vc_va; /* this layer's caches, f16 [n_ctx][n_kv] (K_LLM_KV_B) */
    uint64_t freqs_va;     /* f32 [hd / 2] frequency divisors, or 0 */
    uint32_t pos, hd;
    uint32_t n_q, n_kv; /* Q rows, K rows (= V rows) */
    float base;
    uint32_t n_ctx;
};
_Static_assert(sizeof(struct k_llm_mv_rope) == 48, "mv rope size");

struct k_llm_matvec_params {
    struct k_llm_mv_seg seg[K_LLM_MV_SEGS];
    uint64_t x_va, y_va; /* x f32 [k], y f32 [sum of rows] (SWIGLU: [rows]) */
    uint64_t norm_w_va;  /* f32 [k] RMSNorm weight, or 0: x used as is */
    uint64_t b_va;       /* f32 bias per output row, or 0 */
    uint32_t k, n_seg;
    uint32_t mode;
    float eps;
    struct k_llm_pf pf;        /* k_llm_matvec_q8 only */
    struct k_llm_mv_rope rope; /* mode K_LLM_MV_ROPE only */
};
_Static_assert(sizeof(struct k_llm_mv_seg) == 16, "mv seg size");
_Static_assert(sizeof(struct k_llm_matvec_params) == 168, "matvec size");
_Static_assert(
    offsetof(struct k_llm_matvec_params, x_va) == 48 && offsetof(struct k_llm_matvec_params, y_va) == 56 &&
        offsetof(struct k_llm_matvec_params, norm_w_va) == 64 &&
        offsetof(struct k_llm_matvec_params, b_va) == 72 && offsetof(struct k_llm_matvec_params, k) == 80 &&
        offsetof(struct k_llm_matvec_params, n_seg) == 84 &&
        offsetof(struct k_llm_matvec_params, mode) == 88 && offsetof(struct k_llm_matvec_params, eps) == 92 &&
        offsetof(struct k_llm_matvec_params, pf) == 96 && offsetof(struct k_llm_matvec_params, rope) == 120,
    "matvec offsets");

/* Bytes per 256 values of a supported type (0: not supported by this kernel). */
K_LLM_MV_FN uint32_t
k_llm_mv_b256(uint32_t type)
{
    switch (type) {
    case 1:
        return 512; /* F16 */
    case 30:
        return 512; /* BF16 */
    case 2:
        return 144; /* Q4_0: 8 blocks of 18 */
    case 8:
        return 272; /* Q8_0: 8 blocks of 34 */
    case 12:
        return 144; /* Q4_K */
    case 13:
        return 176; /* Q5_K */
    case 14:
        return 210; /* Q6_K */
    default:
        return 0;
    }
}

/* Values per staged chunk of a row: as many as fit the stage row less 16 bytes of slack. */
K_LLM_MV_FN uint32_t
k_llm_mv_chunk(uint32_t type, int wide)
{
    return (type == 1 || type == 30 ? 512u : 1024u) << (wide ? 1 : 0);
}

K_LLM_MV_FN int
k_llm_mv_type_ok(uint32_t type, uint32_t k)
{
    return k_llm_mv_b256(type) && k % 256 == 0 && k <= K_LLM_MV_MAX_K;
}

/* ==== k_llm_matvec_q8: the same launch contract with int8 activations ====
 * x' is quantized per block of 16 values (d = max|x'| / 127, q = rint(x' * (127 / max|x'|)), no zero point)
 * in each CTA's prologue and dotted with the weights by dp4a; weights are read with 16-byte
 * loads straight into registers (no shared-memory stage), one or two rows per warp. Types: Q4_K,
 * Q5_K and the repacked Q4_0R, Q8_0R, Q6_KR (k_llm_quant.h); k a multiple of 256 and
 * <= K_LLM_MVQ_MAX_K. Error against f32 activations: |y - y_f32| <= sum_j |w_j| d_j / 2 per
 * row (d_j: the scale of x'_j's block), tested in tests/unit/test_llm_matvec.c. */
#define K_LLM_MVQ_MAX_K 16384
#define K_LLM_MVQ_WARPS (K_LLM_MV_THREADS / 32)
K_LLM_MV_FN int
k_llm_mvq_type_ok(uint32_t type, uint32_t k)
{
    if (k % 256 || k > K_LLM_MVQ_MAX_K)
        return 0;
    return type == 12 || type == 13 || type == (0x100u | 2u) || type == (0x100u | 8u) ||
           type == (0x100u | 12u) || type == (0x100u | 13u) || type == (0x100u | 14u);
}

/* ==== k_llm_matvec_h_f16 / _bf16 (k_llm_mvh.cu): 16-bit float weights, f32 activations ====
 * The same launch contract and units as k_llm_matvec_q8 (every mode, ROPE included); x' in
 * shared memory as f32, so k <= K_LLM_MVH_MAX_K (44 KB of the 48 KB of static shared memory:
 * FFN rows of 8960 (Qwen2.5-1.5B), 9216 (Gemma-2-2B), 11008 (Qwen2.5-3B); two CTAs per SM as
 * the registers allow anyway); a multiple of 8 (one 16-byte piece: Qwen2.5-0.5B's rows of 896). K_LLM_MVH_U:
 * the 16-byte pieces a lane loads per row and pass. */
#define K_LLM_MVH_MAX_K 11264
#define K_LLM_MVH_U 4
K_LLM_MV_FN int
k_llm_mvh_type_ok(uint32_t type, uint32_t k)
{
    return (type == 1 || type == 30) && k % 8 == 0 && k && k <= K_LLM_MVH_MAX_K;
}

/* Quantize 16 activations: returns d = max|v| / 127 and q[i] = rint(v[i] * (127 / max|v|))
 * (0 where max|v| = 0; |q| <= 127, within d / 2 of v / d up to one float rounding). One
 * division per block instead of one per value: the prologue of every decode mat-vec runs this
 * after its griddepcontrol.wait, on the critical path (k 8192: two blocks per thread, 32 IEEE
 * divisions of ~8 instructions each before). A NaN or Inf among them gives d = NaN and q = 0,
 * so the outputs turn NaN as with f32 activations (and non-finite logits are reported). The
 * kernel and its twin share this definition (IEEE division and product on both), so both
 * round alike. */
K_LLM_MV_FN float
k_llm_mvq_block(const float *v, int8_t *q)
{
    float amax = 0.0f, z = 0.0f;
    for (int i = 0; i < 16; i++) {
        amax = fmaxf(amax, fabsf(v[i]));
        z += v[i] * 0.0f; /* +-0 for finite values, NaN once one is NaN or Inf (one FMA each) */
    }
    const int bad = z != 0.0f;
    const float d = amax / 127.0f, inv = amax > 0.0f ? 127.0f / amax : 0.0f;
    for (int i = 0; i < 16; i++)
        q[i] = (int8_t)(amax > 0.0f && !bad ? (int)rintf(v[i] * inv) : 0);
    return bad ? __builtin_nanf("") : d;
}

/* Whether a q8 type's tasks hold Q6_KR's 64 values per lane (Q4_KR, Q5_KR, Q6_KR: k_llm_quant.h). */
K_LLM_MV_FN int
k_llm_mvq_q6map(uint32_t type)
{
    return type == (0x100u | 14u) || type == (0x100u | 13u) || type == (0x100u | 12u);
}

/* Tasks per row of a q8 type (one lane's share of a row per pass: 64 values for the Q6_KR value
 * map and the two-group codes 0x302 / 0x308 - k_llm_matvec_q8_q4_0x2 / _q8_0x2, k_llm_quant.h -
 * 32 for the others); the kernels' pass count and the engine's choice of body both derive from it. */
K_LLM_MV_FN uint32_t
k_llm_mvq_tasks(uint32_t type, uint32_t k)
{
    return k_llm_mvq_q6map(type) || type == (0x300u | 2u) || type == (0x300u | 8u) ? k / 64 : k / 32;
}

/* Where the per-type kernels (k_llm_matvec_q8_<type>) keep x' block bi (16 values) in shared
 * memory: at the slot where run c of lane L of its group reads it, g0 + c * nl + L, so a warp's
 * load of one run is one contiguous run of slots (no bank conflict; k_llm_mvq.cuh says why). A
 * group is the 32 lanes' share of one pass: 128 blocks (4 runs per lane) for Q6_KR, Q5_KR and Q4_KR, 64
 * (2 runs) for the others; nl = lanes in it (fewer in the last group when k is not a multiple of it).
 * nb = k / 16. Type 0 (launches of mixed types): logical order. */
K_LLM_MV_FN uint32_t
k_llm_mvq_group_blocks(uint32_t type)
{
    return k_llm_mvq_q6map(type) ? 128 : 64;
}

K_LLM_MV_FN uint32_t
k_llm_mvq_group_lanes(uint32_t type, uint32_t g0, uint32_t nb)
{
    const uint32_t bg = k_llm_mvq_group_blocks(type), n = nb - g0 < bg ? nb - g0 : bg;
    return n / (bg / 32);
}

/* slot of run c of task t's lane (t % 32); the runs in the order the kernel reads them:
 * Q6_KR, Q5_KR and Q4_KR blocks 16b + 8h + p + {0, 4, 2, 6} of lane 4b + 2h + p; Q4_K/Q5_K 16sb + 4j + p +
 * {0, 2} of lane 8sb + 2j + p; Q8_0R/Q4_0R 2L + {0, 1} */
K_LLM_MV_FN uint32_t
k_llm_mvq_run_slot(uint32_t type, uint32_t t, uint32_t c, uint32_t nb)
{
    const uint32_t g0 = k_llm_mvq_group_blocks(type) * (t / 32);
    return g0 + c * k_llm_mvq_group_lanes(type, g0, nb) + t % 32;
}

/* slot of block bi (the store side: the inverse of k_llm_mvq_run_slot) */
K_LLM_MV_FN uint32_t
k_llm_mvq_slot(uint32_t type, uint32_t bi, uint32_t nb)
{
    if (type == 0)
        return bi;
    const uint32_t bg = k_llm_mvq_group_blocks(type), g0 = bi - bi % bg, r = bi % bg;
    uint32_t c, L;
    if (k_llm_mvq_q6map(type)) {
        const uint32_t q = (r % 8) / 2;
        c = ((q & 1) << 1) | (q >> 1);
        L = 4 * (r / 16) + 2 * ((r / 8) % 2) + r % 2;
    } else if (type == 12 || type == 13) {
        const uint32_t q = r % 16;
        c = (q % 4) / 2;
        L = 8 * (r / 16) + 2 * (q / 4) + q % 2;
    } else {
        c = r % 2;
        L = r / 2;
    }
    return g0 + c * k_llm_mvq_group_lanes(type, g0, nb) + L;
}

/* Warps that share one unit's row (each a slice of k): the largest power of two <= k / 2048,
 * at most the CTA's 8 warps. */
K_LLM_MV_FN uint32_t
k_llm_mvq_split(uint32_t k)
{
    uint32_t w = 1;
    while (w < K_LLM_MVQ_WARPS && 2048u * 2 * w <= k)
        w *= 2;
    return w;
}

/* Work units of a q8 launch (one warp each): SWIGLU, one gate row with its up row; else
 * k_llm_mvq_rpu consecutive rows of one segment. */
K_LLM_MV_FN uint32_t k_llm_mvq_units(const struct k_llm_matvec_params *p);

/* Rows per unit of a SET/ACC launch: 2 for large launches (a warp's loads cover two rows),
 * 1 below K_LLM_MVQ_PAIR_ROWS rows - there pairs leave too few warps per GPU (the FFN down
 * projection of a 1B model, 2048 rows, ran 1 TB/s with 1,024 warps on 132 SMs). */
#define K_LLM_MVQ_PAIR_ROWS 16384
/* rows of a launch, all segments */
K_LLM_MV_FN uint32_t
k_llm_mvq_rows(const struct k_llm_matvec_params *p)
{
    return p->seg[0].rows + (p->n_seg > 1 ? p->seg[1].rows : 0) + (p->n_seg > 2 ? p->seg[2].rows : 0);
}

/* An ACC launch whose (otherwise unused) rope block has n_q = K_LLM_MVQ_PAIRS_MARK runs row pairs
 * at any size: the engine marks the O projection so: half the CTAs, each with all its bytes
 * requested before the PDL wait - tg128 +1.2-2.8% on H100 (llm_model.c). */
#define K_LLM_MVQ_PAIRS_MARK 0x50414952u
K_LLM_MV_FN uint32_t
k_llm_mvq_rpu(const struct k_llm_matvec_params *p)
{
    return k_llm_mvq_rows(p) >= K_LLM_MVQ_PAIR_ROWS || p->mode == K_LLM_MV_ROPE ||
                   (p->mode == K_LLM_MV_ACC && p->rope.n_q == K_LLM_MVQ_PAIRS_MARK)
               ? 2
               : 1;
}

K_LLM_MV_FN uint32_t
k_llm_mvq_units(const struct k_llm_matvec_params *p)
{
    if (p->mode == K_LLM_MV_SWIGLU)
        return p->seg[0].rows;
    uint32_t r = k_llm_mvq_rpu(p), u = (p->seg[0].rows + r - 1) / r;
    if (p->n_seg > 1)
        u += (p->seg[1].rows + r - 1) / r;
    if (p->n_seg > 2)
        u += (p->seg[2].rows + r - 1) / r;
    return u;
}

/* The type every segment of a launch has, or 0 when they differ: the engine picks a
 * k_llm_matvec_q8_<type> kernel by it (llm_model.c mvq_typed_prog) and that kernel checks it.
 * Constant segment indices: a dynamic index would copy the params to local memory. */
K_LLM_MV_FN uint32_t
k_llm_mvq_uniform_type(const struct k_llm_matvec_params *p)
{
    const uint32_t t = p->seg[0].type;
    if ((p->n_seg > 1 && p->seg[1].type != t) || (p->n_seg > 2 && p->seg[2].type != t))
        return 0;
    return t;
}

/* Whether every segment of a launch has type a or b: a two-type kernel takes it
 * (k_llm_matvec_q8_q4k_q6k, _q5k_q6k; llm_model.c mvq_typed_prog picks them by this, the kernels check it).
 */
K_LLM_MV_FN int
k_llm_mvq_types_of(const struct k_llm_matvec_params *p, uint32_t a, uint32_t b)
{
    const uint32_t t0 = p->seg[0].type, t1 = p->n_seg > 1 ? p->seg[1].type : a,
                   t2 = p->n_seg > 2 ? p->seg[2].type : a;
    return (t0 == a || t0 == b) && (t1 == a || t1 == b) && (t2 == a || t2 == b);
}

/* CTAs a q8 launch can use: one warp per unit (the launch caps the grid at one wave; then
 * warps take several units). Every body of the kernel takes any grid size. */
K_LLM_MV_FN uint32_t
k_llm_mvq_ctas(const struct k_llm_matvec_params *p)
{
    return (k_llm_mvq_units(p) + K_LLM_MVQ_WARPS - 1) / K_LLM_MVQ_WARPS;
}

/* Tiles (CTA work units) of a launch: SWIGLU tiles hold K_LLM_MV_ROWS / 2 rows of each. */
K_LLM_MV_FN uint32_t
k_llm_mv_tiles(const struct k_llm_matvec_params *p)
{
    if (p->mode == K_LLM_MV_SWIGLU)
        return (p->seg[0].rows + K_LLM_MV_ROWS / 2 - 1) / (K_LLM_MV_ROWS / 2);
    uint32_t t = (p->seg[0].rows + K_LLM_MV_ROWS - 1) / K_LLM_MV_ROWS;
    if (p->n_seg > 1)
        t += (p->seg[1].rows + K_LLM_MV_ROWS - 1) / K_LLM_MV_ROWS;
    if (p->n_seg > 2)
        t += (p->seg[2].rows + K_LLM_MV_ROWS - 1) / K_LLM_MV_ROWS;
    return t;
}

#endif /* K_LLM_MATVEC_H */
