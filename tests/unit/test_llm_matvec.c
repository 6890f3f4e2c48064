/* SPDX-License-Identifier: MIT */
/*
 * test_llm_matvec.c - the decode mat-vec (k_llm_matvec, k_llm_matvec.h) on every device
 * that opens (cpu: its twin; HCQ_TEST_DEVS, else cpu emu:gh100 cuda:0 rm:0) against a
 * double-precision reference over the dequantized weights, for every supported type,
 * each mode (SET with three segments and the folded RMSNorm, ACC with bias, SWIGLU), row
 * counts that leave partial tiles, k with a partial chunk, and a grid smaller than the
 * tile count (CTAs loop over tiles). Outputs are poisoned (NaN) before each launch.
 * Bound: |y - ref| <= 1e-5 * (sum_j |w_j x'_j| + |ref|) + 1e-6 per output (f32 products
 * and sums of k <= 11264 terms; the kernel and the twin sum in different orders).
 * k_llm_matvec_q8 (int8 activations) reads the repacked layouts (Q4_0R, Q8_0R, Q4_KR, Q5_KR, Q6_KR made
 * by llm_repack_rows) and Q4_K/Q5_K rows the repack does not take as they are; its reference uses x' rounded
 * through the same int8 blocks (k_llm_mvq_block), with room for 2 activations rounding the other way (x'
 * differs in the last bit between devices: rsqrtf), and a second check bounds its distance from the f32
 * result: |y - y_f32| <= sum_j |w_j| d_j / 2 (+ the f32 bound). k_llm_matvec_h_f16 / _bf16 (16-bit
 * float weights, f32 activations) take the f32 bound, on their own type only, with the q8 kernels'
 * units and grid (and an output-head-sized launch of row pairs).
 */
#include "harness.h"
#include "hcq.h"
#include "k_llm_matvec.h"
#include "k_llm_quant.h"
#include "llm.h"
#include "llm_model_priv.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static float
frand(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (float)((rng >> 11) * (1.0 / 9007199254740992.0)) * 2.0f - 1.0f;
}

struct mat {
    uint32_t type, rows; /* type: ggml, or a repacked code (q holds that layout) */
    uint8_t *q;          /* quantized */
    float *deq;          /* dequantized [rows][k] */
};

/* m's rows rewritten in place into the repacked layout (k_llm_quant.h) when the type has one */
static enum hcq_status
mat_repack(struct mat *m, uint32_t k)
{
    uint32_t rt = k_llm_rp_of(m->type, k);
    if (rt == m->type)
        return HCQ_OK;
    uint64_t n = llm_type_row_bytes(m->type, k) * m->rows;
    uint8_t *d = malloc(n);
    if (!d)
        return HCQ_ERR_NOMEM;
    llm_repack_rows(rt, m->q, d, m->rows, k);
    /* the per-value reader the embedding and matmul kernels use sees the same values */
    uint64_t rb = k_llm_row_bytes(rt, k);
    for (uint32_t r = 0; r < m->rows; r++)
        for (uint32_t i = 0; i < k; i++)
            if (k_llm_dq_at(rt, d + r * rb, i) != m->deq[(size_t)r * k + i]) {
                printf("    repacked type %#x row %u value %u: %g, file layout %g\n", rt, r, i,
                       k_llm_dq_at(rt, d + r * rb, i), m->deq[(size_t)r * k + i]);
                free(d);
                return HCQ_ERR_FORMAT;
            }
    free(m->q);
    m->q = d;
    m->type = rt;
    return HCQ_OK;
}

static enum hcq_status
mat_make(struct mat *m, uint32_t type, uint32_t rows, uint32_t k)
{
    float *src = malloc(4ull * rows * k);
    m->type = type;
    m->rows = rows;
    m->q = malloc(llm_type_row_bytes(type, k) * rows);
    m->deq = malloc(4ull * rows * k);
    if (!src || !m->q || !m->deq) {
        free(src);
        return HCQ_ERR_NOMEM;
    }
    for (uint64_t i = 0; i < (uint64_t)rows * k; i++)
        src[i] = frand();
    enum hcq_status st = llm_quantize(type, src, m->q, (uint64_t)rows * k);
    if (!st)
        st = llm_dequantize(type, m->q, m->deq, (uint64_t)rows * k);
    free(src);
    return st;
}

static void
mat_free(struct mat *m)
{
    free(m->q);
    free(m->deq);
}

/* One launch on dev: segments mats[0..n), mode, k; checks every output. */
static int
run_case(struct th *t, struct hcq_device *dev, struct hcq_program *prog, const struct mat *mats, uint32_t n,
         uint32_t mode, uint32_t k, bool norm, bool bias, uint32_t grid_cap, bool q8, bool h16, double *worst)
{
    int fails = 0;
    uint32_t n_out = 0;
    for (uint32_t s = 0; s < n; s++)
        n_out += mats[s].rows;
    if (mode == K_LLM_MV_SWIGLU)
        n_out = mats[0].rows;
    float *x = malloc(4ull * k), *nw = malloc(4ull * k), *b = malloc(4ull * n_out),
          *y0 = malloc(4ull * n_out);
    float *y = malloc(4ull * n_out), *xn = malloc(4ull * k);
    double *ref = malloc(8ull * n_out), *mag = malloc(8ull * n_out), *reff = malloc(8ull * n_out),
           *qbound = malloc(8ull * n_out), *flip = malloc(8ull * n_out);
    float *xq = malloc(4ull * k), *dq = calloc(k, 4);
    struct hcq_buf *wb = NULL, *xb = NULL, *yb = NULL, *nb = NULL, *bb = NULL;
    struct hcq_queue *q = NULL;
    uint64_t w_off[K_LLM_MV_SEGS], total = 0;
    CHECK(x && nw && b && y0 && y && xn && ref && mag && reff && qbound && flip && xq && dq);
    for (uint32_t j = 0; j < k; j++) {
        x[j] = 2.0f * frand();
        nw[j] = 1.0f + 0.5f * frand();
    }
    for (uint32_t o = 0; o < n_out; o++) {
        b[o] = frand();
        y0[o] = mode == K_LLM_MV_ACC ? frand() : NAN;
    }
    /* reference in double: x' then dots */
    double ss = 0;
    for (uint32_t j = 0; j < k; j++)
        ss += (double)x[j] * x[j];
    double inv = 1.0 / sqrt(ss / k + 1e-5);
    /* x' as the kernels form it in f32 ((x * inv) * w); for q8 its int8 round trip xq and
     * each value's block scale dq */
    float inv_f = (float)inv;
    for (uint32_t j = 0; j < k; j++) {
        xn[j] = norm ? x[j] * inv_f * nw[j] : x[j];
        xq[j] = xn[j];
    }
    if (q8)
        for (uint32_t j = 0; j < k; j += 16) {
            int8_t qv[16];
            float d = k_llm_mvq_block(xn + j, qv);
            for (int i = 0; i < 16; i++)
                xq[j + i] = d * (float)qv[i], dq[j + i] = d;
        }
    for (uint32_t o = 0; o < n_out; o++) {
        uint32_t s = 0, r = o;
        if (mode != K_LLM_MV_SWIGLU)
            while (r >= mats[s].rows)
                r -= mats[s++].rows;
        double d[2] = {0, 0}, df[2] = {0, 0}, a = 0, qb[2] = {0, 0}, wq[2] = {0, 0};
        for (uint32_t h = 0; h < (mode == K_LLM_MV_SWIGLU ? 2u : 1u); h++)
            for (uint32_t j = 0; j < k; j++) {
                double w = mats[s + h].deq[(size_t)r * k + j], p = w * xq[j];
                d[h] += p;
                df[h] += w * xn[j];
                a += fabs(p);
                if (q8) {
                    qb[h] += fabs(w) * dq[j] / 2; /* int8 rounding of x'_j: at most d_j / 2 */
                    if (fabs(w) * dq[j] > wq[h])
                        wq[h] = fabs(w) * dq[j];
                }
            }
        if (mode == K_LLM_MV_SWIGLU) {
            ref[o] = d[0] / (1.0 + exp(-d[0])) * d[1];
            reff[o] = df[0] / (1.0 + exp(-df[0])) * df[1];
            a = a * (1.0 + fabs(d[1])) + fabs(ref[o]);
            /* silu(g) * u moves by at most |u| * 1.1 |dg| + |silu(g)| |du| (silu' <= 1.1) */
            qbound[o] = 1.1 * (fabs(d[1]) + qb[1]) * qb[0] + (fabs(d[0]) + qb[0]) * qb[1];
            flip[o] = 2 * (1.1 * (fabs(d[1]) + wq[1]) * wq[0] + (fabs(d[0]) + wq[0]) * wq[1]);
        } else {
            double add = (bias ? b[o] : 0) + (mode == K_LLM_MV_ACC ? y0[o] : 0);
            ref[o] = d[0] + add;
            reff[o] = df[0] + add;
            qbound[o] = qb[0];
            flip[o] = 2 * wq[0];
        }
        mag[o] = a + fabs(ref[o]);
    }
    for (uint32_t s = 0; s < n; s++) {
        w_off[s] = total;
        total += (k_llm_row_bytes(mats[s].type, k) * mats[s].rows + 255) / 256 * 256;
    }
    CHECK_OK(hcq_buf_alloc(dev, total, HCQ_MEM_DEVICE, &wb));
    for (uint32_t s = 0; s < n; s++)
        CHECK_OK(hcq_buf_write(wb, w_off[s], mats[s].q, k_llm_row_bytes(mats[s].type, k) * mats[s].rows));
    CHECK_OK(hcq_buf_alloc(dev, 4ull * k, HCQ_MEM_DEVICE, &xb));
    CHECK_OK(hcq_buf_alloc(dev, 4ull * k, HCQ_MEM_DEVICE, &nb));
    CHECK_OK(hcq_buf_alloc(dev, 4ull * n_out, HCQ_MEM_DEVICE, &bb));
    CHECK_OK(hcq_buf_alloc(dev, 4ull * n_out, HCQ_MEM_DEVICE, &yb));
    CHECK_OK(hcq_buf_write(xb, 0, x, 4ull * k));
    CHECK_OK(hcq_buf_write(nb, 0, nw, 4ull * k));
    CHECK_OK(hcq_buf_write(bb, 0, b, 4ull * n_out));
    CHECK_OK(hcq_buf_write(yb, 0, y0, 4ull * n_out));
    struct k_llm_matvec_params p = {
        .x_va = hcq_buf_va(xb),
        .y_va = hcq_buf_va(yb),
        .norm_w_va = norm ? hcq_buf_va(nb) : 0,
        .b_va = bias ? hcq_buf_va(bb) : 0,
        .k = k,
        .n_seg = n,
        .mode = mode,
        .eps = 1e-5f,
    };
    for (uint32_t s = 0; s < n; s++)
        p.seg[s] = (struct k_llm_mv_seg){hcq_buf_va(wb) + w_off[s], mats[s].type, mats[s].rows};
    uint32_t tiles = q8 || h16 ? k_llm_mvq_ctas(&p) : k_llm_mv_tiles(&p);
    uint32_t grid[3] = {tiles < grid_cap ? tiles : grid_cap, 1, 1}, block[3] = {K_LLM_MV_THREADS, 1, 1};
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    CHECK_OK(hcq_queue_launch(q, prog, grid, block, &p, sizeof p));
    CHECK_OK(hcq_queue_finish(q, 20ull * 1000 * 1000 * 1000));
    CHECK_OK(hcq_buf_read(yb, 0, y, 4ull * n_out));
    for (uint32_t o = 0; o < n_out; o++) {
        double e = fabs(y[o] - ref[o]), bound = 1e-5 * mag[o] + 1e-6 + (q8 ? flip[o] : 0);
        double ef = fabs(y[o] - reff[o]), fbound = 1e-5 * mag[o] + 1e-6 + qbound[o] + (q8 ? flip[o] : 0);
        if (!(e <= bound) || (q8 && !(ef <= fbound))) {
            if (fails++ < 3)
                CHECKF(0,
                       "type %#x mode %u k %u row %u: %.9g vs ref %.9g (bound %.3g), vs f32 %.9g (int8 bound "
                       "%.3g)",
                       mats[0].type, mode, k, o, y[o], ref[o], bound, reff[o], fbound);
        } else if (mag[o] > 0 && e / mag[o] > *worst) {
            *worst = e / mag[o];
        }
    }
done:
    hcq_queue_destroy(q);
    hcq_buf_free(wb);
    hcq_buf_free(xb);
    hcq_buf_free(nb);
    hcq_buf_free(bb);
    hcq_buf_free(yb);
    free(x), free(nw), free(b), free(y0), free(y), free(xn), free(ref), free(mag), free(reff), free(qbound),
        free(flip), free(xq), free(dq);
    return fails;
}

/* The per-type kernels' x' slots (k_llm_mvq_slot) against the order q8_dot reads x' in: for
 * every k, task and run, the block the run reads (spelled here from the repacked layouts,
 * k_llm_quant.h) is stored at the slot the run loads, every slot inside k / 16 and used once. */
TEST(mvq_slots_match_the_read_order)
{
    static const uint32_t types[] = {12,           13,           0x100u | 2u, 0x100u | 8u,
                                     0x100u | 12u, 0x100u | 13u, 0x100u | 14u};
    static uint8_t used[K_LLM_MVQ_MAX_K / 16];
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
        /* Q5_KR's and Q4_KR's tasks hold the values of Q6_KR's (k_llm_quant.h) */
        const uint32_t ty = types[ti],
                       q6 = ty == (0x100u | 14u) || ty == (0x100u | 13u) || ty == (0x100u | 12u),
                       runs = q6 ? 4 : 2;
        for (uint32_t k = 256; k <= K_LLM_MVQ_MAX_K; k += 256) {
            if (q6 && k % 2048) /* Q6_KR, Q5_KR and Q4_KR rows are whole 2048-value groups */
                continue;
            const uint32_t nb = k / 16, nt = k_llm_mvq_tasks(ty, k);
            memset(used, 0, nb);
            int bad = 0;
            for (uint32_t tk = 0; tk < nt; tk++) {
                const uint32_t L = tk % 32;
                for (uint32_t c = 0; c < runs; c++) {
                    uint32_t bi;
                    if (q6) /* values 2048g + 256b + 128h + 16p + {0, 64, 32, 96}[c] */
                        bi = 128 * (tk / 32) + 16 * (L / 4) + 8 * ((L / 2) % 2) + L % 2 +
                             (c == 1   ? 4
                              : c == 2 ? 2
                              : c == 3 ? 6
                                       : 0);
                    else if (ty == 12 ||
                             ty == 13) /* superblock t / 8, sub-blocks 2j (+ 2 blocks: high nibbles) */
                        bi = 16 * (tk / 8) + 4 * ((tk % 8) / 2) + (tk % 8) % 2 + 2 * c;
                    else /* 32 values per task */
                        bi = 2 * tk + c;
                    const uint32_t s = k_llm_mvq_run_slot(ty, tk, c, nb);
                    if (s >= nb || bi >= nb || k_llm_mvq_slot(ty, bi, nb) != s || used[s]++)
                        bad++;
                }
            }
            for (uint32_t s = 0; s < nb; s++)
                bad += used[s] != 1;
            if (bad) {
                printf("    type 0x%x k %u: %d slots wrong\n", ty, k, bad);
                CHECK(0);
            }
        }
    }
    CHECK(k_llm_mvq_slot(0, 77, 128) == 77); /* mixed types: logical order */
done:;
}

/* k_llm_mvq_block: |q| <= 127, q * d within d / 2 of v (and a float rounding), the largest
 * value at +-127; zeros give d = 0; a NaN or an Inf anywhere gives d = NaN and q = 0. */
TEST(mvq_block_rounds_and_flags_non_finite)
{
    uint64_t s = 0x9E3779B97F4A7C15ull;
    for (int n = 0; n < 20000; n++) {
        float v[16];
        int8_t q[16];
        const float scale = ldexpf(1.0f, (int)(n % 60) - 30);
        for (int i = 0; i < 16; i++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            v[i] = scale * ((float)(s >> 40) / (float)(1u << 24) * 2.0f - 1.0f);
        }
        if (n % 7 == 0)
            v[n % 16] = 0.0f;
        const float d = k_llm_mvq_block(v, q);
        float amax = 0.0f;
        for (int i = 0; i < 16; i++)
            amax = fmaxf(amax, fabsf(v[i]));
        int bad = d != amax / 127.0f;
        for (int i = 0; i < 16; i++) {
            bad |= q[i] == -128; /* (int8_t: |q| <= 127 otherwise) */
            bad |= fabs((double)q[i] * d - v[i]) > d / 2 * (1 + 1e-5);
            bad |= fabsf(v[i]) == amax && amax > 0.0f && q[i] != (v[i] > 0 ? 127 : -127);
        }
        if (bad) {
            printf("    block %d (scale %g) wrong\n", n, scale);
            CHECK(0);
        }
    }
    float v[16] = {0}, d;
    int8_t q[16];
    CHECK(k_llm_mvq_block(v, q) == 0.0f && q[3] == 0);
    const float odd[3] = {NAN, INFINITY, -INFINITY};
    for (int j = 0; j < 3; j++)
        for (int at = 0; at < 16; at += 5) {
            for (int i = 0; i < 16; i++)
                v[i] = 0.25f * (float)(i - 8);
            v[at] = odd[j];
            memset(q, 1, sizeof q);
            d = k_llm_mvq_block(v, q);
            int nz = 0;
            for (int i = 0; i < 16; i++)
                nz += q[i] != 0;
            CHECKF(isnan(d) && nz == 0, "value %d = %g: d %g, %d quants not 0", at, odd[j], d, nz);
        }
done:;
}

/* The two-type kernels (Q4_K or Q5_K with Q6_K segments): the test gives them Q4_K or Q5_K
 * launches whose third segment is Q6_K; their first type, 0 for the other kernels. */
static uint32_t
typed2_kernel(const char *name)
{
    if (!strcmp(name, "k_llm_matvec_q8_q4k_q6k") || !strcmp(name, "k_llm_matvec_q8_q4k_q6k_w2"))
        return LLM_TYPE_Q4_K;
    if (!strcmp(name, "k_llm_matvec_q8_q5k_q6k") || !strcmp(name, "k_llm_matvec_q8_q5k_q6k_w2"))
        return LLM_TYPE_Q5_K;
    return 0;
}

/* Returned for a kernel named like a per-type one with a build suffix typed_kernel_type does
 * not know: the test fails by name (such a kernel was once given every type and trapped on the
 * GPU, Xid 13, while the cpu and emu twins passed). */
#define TYPED_UNKNOWN UINT32_MAX

/* The weight type a per-type kernel (k_llm_matvec_q8_<type>[_w2], _q4k_q6k[_w2],
 * _q5k_q6k[_w2]) takes, 0 for the others (generic kernels), TYPED_UNKNOWN for a per-type name with
 * a suffix not listed here. */
static uint32_t
typed_kernel_type(const char *name)
{
    const uint32_t t2 = typed2_kernel(name);
    if (t2)
        return t2;
    static const struct {
        const char *suffix;
        uint32_t type;
    } t[] = {{"q4_0x2", LLM_TYPE_Q4_0}, {"q8_0x2", LLM_TYPE_Q8_0}, {"q4k", LLM_TYPE_Q4_K},
             {"q5k", LLM_TYPE_Q5_K},    {"q4_0", LLM_TYPE_Q4_0},   {"q8_0", LLM_TYPE_Q8_0},
             {"q6k", LLM_TYPE_Q6_K}};
    const char *pre = "k_llm_matvec_q8_";
    if (strncmp(name, pre, strlen(pre)))
        return 0;
    name += strlen(pre);
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        size_t n = strlen(t[i].suffix);
        if (strncmp(name, t[i].suffix, n))
            continue;
        if (!name[n] || !strcmp(name + n, "_w2"))
            return t[i].type;
        return TYPED_UNKNOWN; /* the first (longest) type name that matches decides */
    }
    return 0;
}

/* The kernel-name table itself (no device): known builds map to their type, generic kernels to
 * 0, a per-type name with an unknown build suffix to TYPED_UNKNOWN. */
TEST(typed_kernel_names)
{
    CHECK(typed_kernel_type("k_llm_matvec_q8_q8_0x2") == LLM_TYPE_Q8_0);
    CHECK(typed_kernel_type("k_llm_matvec_q8_q4_0") == LLM_TYPE_Q4_0);
    CHECK(typed_kernel_type("k_llm_matvec_q8_q6k_w2") == LLM_TYPE_Q6_K);
    CHECK(typed_kernel_type("k_llm_matvec_q8_q5k_q6k_w2") == LLM_TYPE_Q5_K);
    CHECK(typed_kernel_type("k_llm_matvec_q8") == 0 && typed_kernel_type("k_llm_matvec_wide") == 0);
    CHECK(typed_kernel_type("k_llm_matvec_q8_q8_0x2d") == TYPED_UNKNOWN);
    CHECK(typed_kernel_type("k_llm_matvec_q8_q6k_h") == TYPED_UNKNOWN);
done:;
}

TEST(matvec_all_types_modes_devices)
{
    static const uint32_t types[] = {LLM_TYPE_F16,  LLM_TYPE_BF16, LLM_TYPE_Q4_0, LLM_TYPE_Q8_0,
                                     LLM_TYPE_Q4_K, LLM_TYPE_Q5_K, LLM_TYPE_Q6_K};
    char devs[256];
    const char *env = getenv("HCQ_TEST_DEVS");
    snprintf(devs, sizeof devs, "cpu %s", env ? env : "emu:gh100 cuda:0 rm:0");
    int tried = 0;
    for (char *save = NULL, *dn = strtok_r(devs, " ,", &save); dn; dn = strtok_r(NULL, " ,", &save)) {
        /* one device per name for every kernel: an open + close costs ~0.8 s on cuda:0 and
         * ~0.25 s on rm:0 (H100), ~45 s a run when each kernel opened its own */
        struct hcq_device *dev = NULL;
        if (hcq_device_open(dn, &dev) != HCQ_OK) {
            printf("    %s: does not open here, skipped\n", dn);
            continue;
        }
        static const char *const kernels[] = {
            "k_llm_matvec", "k_llm_matvec_wide", "k_llm_matvec_q8",
            /* one weight type each (they trap on another): x' in conflict-free slots */
            "k_llm_matvec_q8_q4k", "k_llm_matvec_q8_q5k", "k_llm_matvec_q8_q4_0", "k_llm_matvec_q8_q8_0",
            "k_llm_matvec_q8_q6k",
            /* two types: Q4_K / Q5_K launches with a Q6_K third segment (Q4_K_M's, Q5_K_M's Q|K|V) */
            "k_llm_matvec_q8_q4k_q6k", "k_llm_matvec_q8_q5k_q6k",
            /* two passes of weights before the PDL wait */
            "k_llm_matvec_q8_q4k_w2", "k_llm_matvec_q8_q5k_w2", "k_llm_matvec_q8_q4_0_w2",
            "k_llm_matvec_q8_q8_0_w2", "k_llm_matvec_q8_q6k_w2", "k_llm_matvec_q8_q4k_q6k_w2",
            "k_llm_matvec_q8_q5k_q6k_w2",
            /* two groups per task (rows of whole group pairs: k 2048, 8192 here) */
            "k_llm_matvec_q8_q4_0x2", "k_llm_matvec_q8_q8_0x2",
            /* 16-bit float weights, f32 activations (k_llm_mvh.cu; they trap on another type) */
            "k_llm_matvec_h_f16", "k_llm_matvec_h_bf16"};
        for (int kn = 0; kn < (int)(sizeof kernels / sizeof kernels[0]); kn++) {
            const bool q8 = !strncmp(kernels[kn], "k_llm_matvec_q8", 15);
            const bool h16 = !strncmp(kernels[kn], "k_llm_matvec_h_", 15); /* units and grid as q8 */
            /* 0: any type */
            const uint32_t only = h16 ? (strstr(kernels[kn], "bf16") ? LLM_TYPE_BF16 : LLM_TYPE_F16)
                                      : typed_kernel_type(kernels[kn]);
            CHECKF(only != TYPED_UNKNOWN,
                   "%s: a per-type kernel whose suffix typed_kernel_type does not know", kernels[kn]);
            const bool mixed = !only || typed2_kernel(kernels[kn]); /* Q4_K/Q5_K cases get a Q6_K third */
            struct hcq_program *prog = NULL;
            if (hcq_program_load(dev, kernels[kn], &prog) != HCQ_OK) {
                printf("    %s: no %s, skipped\n", dn, kernels[kn]);
                continue;
            }
            double worst = 0;
            int cases = 0;
            for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
                /* the 16-bit kernels only: 896 (Qwen2.5-0.5B's width, rows of whole 16-byte pieces)
                 * and their longest rows */
                static const uint32_t ks[] = {256, 2304, 2048, 8192, 896, K_LLM_MVH_MAX_K};
                for (int ki = 0; ki < 6; ki++) {
                    uint32_t k = ks[ki], ty = types[ti];
                    if ((k % 256 || k > 8192) && !h16)
                        continue;
                    if (only && ty != only)
                        continue;
                    /* q8: the types it reads (Q6_K only repacks for k % 2048 == 0: 8192 here) */
                    if (q8 && !k_llm_mvq_type_ok(k_llm_rp_of(ty, k), k))
                        continue;
                    /* the Q4_K / Q5_K kernels read Q4_KR / Q5_KR, rows of whole 2048-value groups
                     * (k 2048, 8192 here); other Q4_K / Q5_K rows take k_llm_matvec_q8 */
                    if ((only == LLM_TYPE_Q4_K || only == LLM_TYPE_Q5_K) && !(k_llm_rp_of(ty, k) & K_LLM_RP))
                        continue;
                    if (strstr(kernels[kn], "x2") && k % 2048)
                        continue;
                    struct mat m[3] = {0};
                    uint32_t rows[3] = {37, 8, 13};
                    if (k == 8192)
                        rows[0] = 21, rows[1] = 9, rows[2] = 3;
                    bool ok = true;
                    for (int s = 0; s < 3; s++)
                        ok = ok && mat_make(&m[s],
                                            s == 2 && (ty == LLM_TYPE_Q4_K || ty == LLM_TYPE_Q5_K) && mixed
                                                ? LLM_TYPE_Q6_K
                                                : ty,
                                            rows[s], k) == 0;
                    for (int s = 0; s < 3 && q8; s++)
                        ok = ok && mat_repack(&m[s], k) == 0;
                    CHECK(ok);
                    if (q8 && !k_llm_mvq_type_ok(m[2].type, k)) { /* Q4_K's/Q5_K's Q6_K third at k 2304 */
                        for (int s = 0; s < 3; s++)
                            mat_free(&m[s]);
                        continue;
                    }
                    /* SET: three segments (Q4_K cases mix in a Q6_K third segment like Q4_K_M's V), norm */
                    run_case(t, dev, prog, m, 3, K_LLM_MV_SET, k, true, false, 1000, q8, h16, &worst);
                    /* ACC with bias, few CTAs looping over tiles */
                    run_case(t, dev, prog, m, 1, K_LLM_MV_ACC, k, false, true, 2, q8, h16, &worst);
                    /* ACC without bias on the whole grid (LLaMA's O and down + residual) */
                    run_case(t, dev, prog, m, 2, K_LLM_MV_ACC, k, false, false, 1000, q8, h16, &worst);
                    /* SWIGLU: gate and up of equal rows, norm */
                    struct mat gu[2] = {m[0], m[0]};
                    gu[1].q = m[0].q, gu[1].deq = m[0].deq;
                    run_case(t, dev, prog, gu, 2, K_LLM_MV_SWIGLU, k, true, false, 3, q8, h16, &worst);
                    cases += 4;
                    if ((!strcmp(kernels[kn], "k_llm_matvec_q8") || only == LLM_TYPE_Q6_K || h16) &&
                        k == 2048 && (ty == LLM_TYPE_Q6_K || h16)) {
                        /* an output-head-sized launch: two rows per unit (k_llm_mvq_rpu), odd
                         * row count (the last unit has one row), one-wave grid */
                        struct mat big = {0};
                        CHECK(mat_make(&big, ty, K_LLM_MVQ_PAIR_ROWS + 17, k) == 0 &&
                              (h16 || mat_repack(&big, k) == 0));
                        run_case(t, dev, prog, &big, 1, K_LLM_MV_SET, k, true, false, 264, q8, h16, &worst);
                        mat_free(&big);
                        cases++;
                    }
                    for (int s = 0; s < 3; s++)
                        mat_free(&m[s]);
                }
            }
            printf("    %s %s: %d launches, worst |err| / (sum |w x| + |ref|) = %.3g\n", dn, kernels[kn],
                   cases, worst);
            hcq_program_destroy(prog);
            tried++;
        }
        hcq_device_close(dev);
    }
    CHECK(tried > 0);
done:;
}

int
main(int argc, char **argv)
{
    static const struct th_case cases[] = {
        TH_CASE(mvq_block_rounds_and_flags_non_finite), TH_CASE(mvq_slots_match_the_read_order),
        TH_CASE(typed_kernel_names), TH_CASE(matvec_all_types_modes_devices)};
    return th_run("llm_matvec", NULL, cases, TH_COUNT(cases), argc - 1, argv + 1) ? 1 : 0;
}
