/* SPDX-License-Identifier: MIT */
/*
 * test_llm_dequant.c - k_llm_dequant_f16 (the prefill's weight expansion, k_llm_gemm.cu) on
 * every device that opens (cpu: its twin; HCQ_TEST_DEVS, else cpu emu:gh100 cuda:0 rm:0):
 * every value of random quantized matrices of each type it reads - the repacked
 * Q4_0R/Q8_0R/Q6_KR (rows of 2048/4096: the task path) and the file layouts (k 256: the
 * per-value path) - against the host's k_llm_dq_at rounded to f16, output poisoned first.
 * Bound: identical f16 bits, or one f16 step where the device may fuse a multiply-add
 * (Q4_K/Q5_K: d sc q - dmin m).
 * And the prefill GEMM itself, k_llm_gemm and (where its sm_90a cubin or twin loads)
 * k_llm_gemm_wgmma, and the split-k kernel of few tokens k_llm_gemm_sk (run twice: bit-identical)
 * and its twins over Q8_0R and Q4_KR weights k_llm_gemm_sk_q8_0 / _q4_k (the reference: each
 * weight as the kernel forms it in f16; k of whole 1024 / 2048-value groups), with bias, accumulation and a
 * padded y stride on odd shapes, against a double reference within k 2^-23 sum|x w| + 2^-22 (|ref| + |y0| +
 * |b|).
 */
#include "harness.h"
#include "hcq.h"
#include "k_llm_gemm_params.h"
#include "k_llm_quant.h"
#include "llm.h"
#include "llm_model_priv.h"
#include "ops_half.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0xD1B54A32D192ED03ull;
static float
frand(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (float)((rng >> 11) * (1.0 / 9007199254740992.0)) * 2.0f - 1.0f;
}

/* rows x k values of `type` quantized from random data, repacked where the type has a repacked
 * form for rows of k; *rtype the code the rows are in. NULL on failure. */
static uint8_t *
make_rows(uint32_t type, uint32_t rows, uint32_t k, uint32_t *rtype)
{
    uint64_t n = (uint64_t)rows * k, B = llm_type_row_bytes(type, k) * rows;
    float *src = malloc(4 * n);
    uint8_t *q = malloc(B), *r = NULL;
    if (!src || !q)
        goto fail;
    for (uint64_t i = 0; i < n; i++)
        src[i] = 3.0f * frand();
    if (llm_quantize(type, src, q, n) != HCQ_OK)
        goto fail;
    *rtype = k_llm_rp_of(type, k);
    if (*rtype != type) {
        if (!(r = malloc(B)))
            goto fail;
        llm_repack_rows(*rtype, q, r, rows, k);
        free(q);
        q = r;
    }
    free(src);
    return q;
fail:
    free(src);
    free(q);
    return NULL;
}

TEST(dequant_f16_every_value)
{
    static const uint32_t types[] = {LLM_TYPE_Q4_0, LLM_TYPE_Q8_0, LLM_TYPE_Q6_K,
                                     LLM_TYPE_Q4_K, LLM_TYPE_Q5_K, LLM_TYPE_F16};
    static const uint32_t ks[] = {256, 2048, 4096};
    const uint32_t rows = 37;
    char devs[256];
    const char *env = getenv("HCQ_TEST_DEVS");
    snprintf(devs, sizeof devs, "cpu %s", env ? env : "emu:gh100 cuda:0 rm:0");
    int tried = 0;
    for (char *save = NULL, *dn = strtok_r(devs, " ,", &save); dn; dn = strtok_r(NULL, " ,", &save)) {
        struct hcq_device *dev = NULL;
        struct hcq_program *prog = NULL;
        struct hcq_queue *q = NULL;
        if (hcq_device_open(dn, &dev) != HCQ_OK) {
            printf("    %s: does not open here, skipped\n", dn);
            continue;
        }
        CHECK_OK(hcq_program_load(dev, "k_llm_dequant_f16", &prog));
        CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
        int cases = 0, exact = 0, near = 0;
        for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
            for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++) {
                const uint32_t k = ks[ki];
                uint32_t rt = 0;
                uint8_t *w = make_rows(types[ti], rows, k, &rt);
                CHECK(w);
                const uint64_t rb = k_llm_row_bytes(rt, k), n = (uint64_t)rows * k;
                uint16_t *out = malloc(2 * n);
                CHECK(out);
                memset(out, 0xFF, 2 * n); /* NaN poison */
                struct hcq_buf *wb, *ob;
                CHECK_OK(hcq_buf_alloc(dev, rb * rows, HCQ_MEM_DEVICE, &wb));
                CHECK_OK(hcq_buf_alloc(dev, 2 * n, HCQ_MEM_DEVICE, &ob));
                CHECK_OK(hcq_buf_write(wb, 0, w, rb * rows));
                CHECK_OK(hcq_buf_write(ob, 0, out, 2 * n));
                struct k_llm_dequant_f16_params p = {
                    .w_va = hcq_buf_va(wb), .out_va = hcq_buf_va(ob), .type = rt, .k = k, .rows = rows};
                uint32_t grid[3] = {96, 1, 1}, block[3] = {K_LLM_GEMM_AUX_BLOCK, 1, 1};
                CHECK_OK(hcq_queue_launch(q, prog, grid, block, &p, sizeof p));
                CHECK_OK(hcq_queue_finish(q, 20ull * 1000 * 1000 * 1000));
                CHECK_OK(hcq_buf_read(ob, 0, out, 2 * n));
                const bool fused = types[ti] == LLM_TYPE_Q4_K || types[ti] == LLM_TYPE_Q5_K;
                int bad = 0;
                for (uint32_t r = 0; r < rows; r++)
                    for (uint32_t i = 0; i < k; i++) {
                        const uint16_t want = ops_half_f32_to_f16(k_llm_dq_at(rt, w + r * rb, i)),
                                       got = out[(size_t)r * k + i];
                        const int d = (int)got - (int)want;
                        if (d == 0) {
                            exact++;
                            continue;
                        }
                        if (fused && (d == 1 || d == -1) && (got & 0x7C00) != 0x7C00) {
                            near++;
                            continue;
                        }
                        if (bad++ < 3)
                            CHECKF(0, "%s type %#x k %u row %u value %u: f16 %#06x, want %#06x", dn, rt, k, r,
                                   i, got, want);
                    }
                CHECK(bad == 0);
                cases++;
                hcq_buf_free(wb), hcq_buf_free(ob);
                free(w), free(out);
            }
        }
        printf("    %s: %d matrices, %d values identical, %d one f16 step apart (fused multiply-add)\n", dn,
               cases, exact, near);
        hcq_queue_destroy(q);
        hcq_program_destroy(prog);
        hcq_device_close(dev);
        tried++;
    }
    CHECK(tried > 0);
done:;
}

/* One GEMM case on one program: y (+)= x w^T + b over n tokens x rows outputs, y_stride >= rows
 * (the gap columns must keep their poison), grid `grid` (0: the launcher's own). k_llm_gemm_sk
 * (wg 3): the launcher's split (llm_gemm_sk_split), or with grid_x one piece per 64 k (the most
 * splits); run twice, the second result must be the first bit for bit (the partials are summed in
 * a fixed order, and the counters were left zero). wg 4: k_llm_gemm_sk_q8_0, the same over Q8_0R
 * rows of random Q8_0 blocks (make_rows), split in pieces of 128 k; wg 5: k_llm_gemm_sk_q4_k over
 * Q4_KR rows, pieces of 256 k, each weight as the kernel forms it (q4_kr_value). */
#define N_GEMM 6
static const char *const gemm_names[N_GEMM] = {"k_llm_gemm",    "k_llm_gemm_wgmma",   "k_llm_gemm_wgmma_tma",
                                               "k_llm_gemm_sk", "k_llm_gemm_sk_q8_0", "k_llm_gemm_sk_q4_k"};

/* Weight j of a Q4_KR row as k_llm_gemm_sk_q4_k computes it in f16: q * f16(d sc) - f16(dmin m)
 * rounded once (k_llm_gemm_sk.cu); the block's scale and min from the ggml packing
 * (docs/perf/anchors.md), the nibble from the repacked task layout (k_llm_quant.h). */
static uint16_t
q4_kr_value(const uint8_t *row, uint32_t j)
{
    const uint8_t *g = row + 1152ull * (j / 2048);
    const uint32_t w = j % 2048, b = w / 256, sb = (w % 256) / 32, l = w % 32, c = sb % 4;
    const uint8_t byte = g[(c < 2 ? 0 : 512) + 16 * (4 * b + 2 * (sb / 4) + l / 16) + l % 16];
    const int q = c % 2 ? byte >> 4 : byte & 0xF;
    const uint8_t *hd = g + 1024 + 16 * b, *s = hd + 4;
    const uint32_t sc = sb < 4 ? s[sb] & 63 : (s[sb + 4] & 0xF) | ((s[sb - 4] >> 6) << 4);
    const uint32_t m = sb < 4 ? s[sb + 4] & 63 : (s[sb + 4] >> 4) | ((s[sb] >> 6) << 4);
    const float d = ops_half_f16_to_f32((uint16_t)(hd[0] | hd[1] << 8));
    const float dmin = ops_half_f16_to_f32((uint16_t)(hd[2] | hd[3] << 8));
    const double ds = ops_half_f16_to_f32(ops_half_f32_to_f16(d * (float)sc));
    const double dm = ops_half_f16_to_f32(ops_half_f32_to_f16(dmin * (float)m));
    return ops_half_f32_to_f16((float)(q * ds - dm));
}

static void
gemm_case(struct th *t, struct hcq_device *dev, struct hcq_queue *q, struct hcq_program *prog, int wg,
          uint32_t n, uint32_t rows, uint32_t k, bool bias, bool acc, uint32_t grid_x, uint32_t sms)
{
    const uint32_t ys = (rows + 2 * (uint32_t)(rng % 3) + 1) & ~1u; /* even, >= rows */
    const uint64_t ny = (uint64_t)(n - 1) * ys + rows + 8;          /* 8 guard floats */
    uint16_t *x = malloc(2ull * n * k + 2), *w = malloc(2ull * rows * k + 2);
    float *b = malloc(4ull * rows), *y0 = malloc(4 * ny), *y = malloc(4 * ny);
    struct hcq_buf *xb = NULL, *wbuf = NULL, *bb = NULL, *yb = NULL, *pb = NULL;
    float *y1 = malloc(4 * ny);
    uint8_t *wq = NULL; /* wg 4: the Q8_0R rows uploaded; w their values in f16 */
    CHECK(y1);
    CHECK(x && w && b && y0 && y);
    for (uint64_t i = 0; i < (uint64_t)n * k; i++)
        x[i] = ops_half_f32_to_f16(frand());
    uint32_t wtype = 0;
    const uint32_t qtype = wg == 4 ? LLM_TYPE_Q8_0 : LLM_TYPE_Q4_K;
    const uint64_t w_B = wg >= 4 ? llm_type_row_bytes(qtype, k) * rows : 2ull * rows * k;
    if (wg >= 4) {
        CHECK((wq = make_rows(qtype, rows, k, &wtype)) && wtype == (wg == 4 ? K_LLM_T_Q8_0R : K_LLM_T_Q4_KR));
        for (uint64_t r = 0; r < rows; r++)
            for (uint32_t j = 0; j < k; j++)
                w[r * k + j] = wg == 5 ? q4_kr_value(wq + r * (w_B / rows), j)
                                       : ops_half_f32_to_f16(k_llm_dq_at(wtype, wq + r * (w_B / rows), j));
    } else {
        for (uint64_t i = 0; i < (uint64_t)rows * k; i++)
            w[i] = ops_half_f32_to_f16(frand());
    }
    for (uint32_t i = 0; i < rows; i++)
        b[i] = frand();
    for (uint64_t i = 0; i < ny; i++) /* accumulate: random starting values; else NaN poison */
        y0[i] = acc ? frand() : NAN;
    CHECK_OK(hcq_buf_alloc(dev, 2ull * n * k + 2, HCQ_MEM_DEVICE, &xb));
    CHECK_OK(hcq_buf_alloc(dev, w_B + 2, HCQ_MEM_DEVICE, &wbuf));
    CHECK_OK(hcq_buf_alloc(dev, 4ull * rows, HCQ_MEM_DEVICE, &bb));
    CHECK_OK(hcq_buf_alloc(dev, 4 * ny, HCQ_MEM_DEVICE, &yb));
    CHECK_OK(hcq_buf_write(xb, 0, x, 2ull * n * k));
    CHECK_OK(hcq_buf_write(wbuf, 0, wq ? (const void *)wq : w, w_B));
    CHECK_OK(hcq_buf_write(bb, 0, b, 4ull * rows));
    CHECK_OK(hcq_buf_write(yb, 0, y0, 4 * ny));
    struct k_llm_gemm_params p = {.x_va = hcq_buf_va(xb),
                                  .w_va = hcq_buf_va(wbuf),
                                  .y_va = hcq_buf_va(yb),
                                  .b_va = bias ? hcq_buf_va(bb) : 0,
                                  .k = k,
                                  .rows = rows,
                                  .n = n,
                                  .y_stride = ys,
                                  .accumulate = acc};
    const uint32_t tm = wg ? K_GEMM_WG_BM : K_LLM_GEMM_TILE_M, tn = wg ? K_GEMM_WG_BN : K_LLM_GEMM_TILE_N;
    uint32_t tiles = ((n + tm - 1) / tm) * ((rows + tn - 1) / tn), cap = wg && sms ? sms : 65535;
    uint32_t grid[3] = {grid_x ? grid_x : tiles > cap ? cap : tiles, 1, 1};
    uint32_t block[3] = {wg ? K_GEMM_WG_THREADS : K_LLM_GEMM_THREADS, 1, 1};
    if (wg >= 3) { /* partial sums, then zeroed counters */
        const uint64_t part_B = LLM_GEMM_SK_MAX_BLOCKS * (uint64_t)K_LLM_GEMM_SK_PART_B(64);
        static const uint32_t zero[LLM_GEMM_SK_MAX_TILES];
        CHECK_OK(hcq_buf_alloc(dev, part_B + sizeof zero, HCQ_MEM_DEVICE, &pb));
        CHECK_OK(hcq_buf_write(pb, part_B, zero, sizeof zero));
        struct k_llm_gemm_sk_params sp;
        const uint32_t ks = wg == 5 ? 256 : wg == 4 ? 128 : 64;
        grid[0] = llm_gemm_sk_split(&sp, &p, sms ? sms : 1, hcq_buf_va(pb), hcq_buf_va(pb) + part_B, ks);
        CHECK(grid[0] > 0);
        const uint32_t tiles_sk = (rows + K_LLM_GEMM_SK_ROWS - 1) / K_LLM_GEMM_SK_ROWS;
        if (grid_x && tiles_sk * ((k + ks - 1) / ks) <= LLM_GEMM_SK_MAX_BLOCKS) {
            sp.k_chunk = ks;
            sp.splits = (k + ks - 1) / ks;
            grid[0] = sp.splits * tiles_sk;
        }
        block[0] = K_LLM_GEMM_SK_THREADS;
        for (int run = 0; run < 2; run++) {
            if (run) {
                CHECK_OK(hcq_buf_read(yb, 0, y1, 4 * ny));
                CHECK_OK(hcq_buf_write(yb, 0, y0, 4 * ny));
            }
            CHECK_OK(hcq_queue_launch(q, prog, grid, block, &sp, sizeof sp));
            CHECK_OK(hcq_queue_finish(q, 20ull * 1000 * 1000 * 1000));
        }
    } else if (wg == 2) { /* the TMA build: the tensor maps of x and w first (llm_gemm_tma_params) */
        struct k_llm_gemm_tma_params tp;
        CHECK_OK(llm_gemm_tma_params(&tp, &p));
        CHECK_OK(hcq_queue_launch(q, prog, grid, block, &tp, sizeof tp));
    } else {
        CHECK_OK(hcq_queue_launch(q, prog, grid, block, &p, sizeof p));
    }
    if (wg < 3)
        CHECK_OK(hcq_queue_finish(q, 20ull * 1000 * 1000 * 1000));
    CHECK_OK(hcq_buf_read(yb, 0, y, 4 * ny));
    int bad = 0;
    for (uint64_t i = 0; i < ny; i++) {
        const uint64_t tok = i / ys, r = i % ys;
        if (tok >= n || r >= rows) { /* gap or guard: untouched */
            uint32_t u0, u1;
            memcpy(&u0, &y0[i], 4), memcpy(&u1, &y[i], 4);
            if (u0 != u1 && bad++ < 3)
                CHECKF(0, "%s: y[%llu] (token %llu, column %llu) outside the output was written",
                       gemm_names[wg], (unsigned long long)i, (unsigned long long)tok, (unsigned long long)r);
            continue;
        }
        double ref = 0, mag = 0;
        for (uint32_t j = 0; j < k; j++) {
            double pr = (double)ops_half_f16_to_f32(x[tok * k + j]) * ops_half_f16_to_f32(w[r * k + j]);
            ref += pr;
            mag += fabs(pr);
        }
        const double base = (acc ? y0[i] : 0.0) + (bias ? b[r] : 0.0);
        ref += base;
        const double tol = k * ldexp(1.0, -23) * mag + ldexp(fabs(ref) + fabs(base), -22);
        if (!(fabs(y[i] - ref) <= tol) && bad++ < 3)
            CHECKF(0, "%s n %u rows %u k %u bias %d acc %d grid %u: y[%llu][%llu] = %g, want %g (tol %g)",
                   gemm_names[wg], n, rows, k, bias, acc, grid[0], (unsigned long long)tok,
                   (unsigned long long)r, y[i], ref, tol);
    }
    CHECK(bad == 0);
    if (wg >= 3)
        CHECKF(!memcmp(y, y1, 4 * ny), "%s n %u rows %u k %u grid %u: a second run differs", gemm_names[wg],
               n, rows, k, grid[0]);
done:
    hcq_buf_free(xb), hcq_buf_free(wbuf), hcq_buf_free(bb), hcq_buf_free(yb), hcq_buf_free(pb);
    free(x), free(w), free(b), free(y0), free(y), free(y1), free(wq);
}

/* Both GEMM kernels on device dn; false when it does not open. */
static bool
gemm_device(struct th *t, const char *dn)
{
    struct hcq_device *dev = NULL;
    struct hcq_queue *q = NULL;
    struct hcq_program *prog[N_GEMM] = {NULL};
    struct hcq_device_info info;
    if (hcq_device_open(dn, &dev) != HCQ_OK) {
        printf("    %s: does not open here, skipped\n", dn);
        return false;
    }
    CHECK_OK(hcq_device_info(dev, &info));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    CHECK_OK(hcq_program_load(dev, "k_llm_gemm", &prog[0]));
    /* the wgmma kernel: twins on cpu/emu, the sm_90a cubin on sm_90 GPUs (none elsewhere) */
    CHECK_OK(hcq_program_load(dev, "k_llm_gemm_sk", &prog[3]));
    CHECK_OK(hcq_program_load(dev, "k_llm_gemm_sk_q8_0", &prog[4]));
    CHECK_OK(hcq_program_load(dev, "k_llm_gemm_sk_q4_k", &prog[5]));
    for (int i = 1; i < 3; i++)
        if (hcq_program_load(dev, gemm_names[i], &prog[i]) != HCQ_OK)
            printf("    %s (%s): no %s here\n", dn, info.arch, gemm_names[i]);
    const bool host = !strcmp(info.backend, "cpu") || info.emulated;
    for (int wg = 0; wg < N_GEMM && !t->failed; wg++) {
        if (!prog[wg])
            continue;
        for (int c = 0; c < (wg >= 3 ? 8 : 4) && !t->failed; c++) {
            /* odd sizes; on GPUs up to 3 x 3 wgmma tiles and 128 k-steps (the ring wraps); the
             * split kernel: 1-64 tokens (each of its three token tiles) */
            rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
            const uint32_t n = 1 + (uint32_t)(rng % (wg == 5 ? 32 : wg >= 3 ? 64 : host ? 150 : 300));
            const uint32_t rows = 1 + (uint32_t)((rng >> 16) % (host ? 300 : 600));
            const uint32_t k = wg == 5   ? 2048 * (1 + (uint32_t)((rng >> 32) % (host ? 1 : 3)))
                               : wg == 4 ? 1024 * (1 + (uint32_t)((rng >> 32) % (host ? 2 : 4)))
                                         : 8 * (1 + (uint32_t)((rng >> 32) % (host ? 40 : 128)));
            gemm_case(t, dev, q, prog[wg], wg, n, rows, k, c & 1, c & 2, c % 4 == 3 ? 3 : 0, info.sm_count);
        }
        printf("    %s: %s checked\n", dn, gemm_names[wg]);
    }
done:
    for (int i = 0; i < N_GEMM; i++)
        hcq_program_destroy(prog[i]);
    hcq_queue_destroy(q);
    hcq_device_close(dev);
    return true;
}

TEST(prefill_gemm_epilogue)
{
    char devs[256];
    const char *env = getenv("HCQ_TEST_DEVS");
    snprintf(devs, sizeof devs, "cpu %s", env ? env : "emu:gh100 cuda:0 rm:0");
    int tried = 0;
    for (char *save = NULL, *dn = strtok_r(devs, " ,", &save); dn && !t->failed;
         dn = strtok_r(NULL, " ,", &save))
        tried += gemm_device(t, dn);
    CHECK(tried > 0);
done:;
}

int
main(int argc, char **argv)
{
    static const struct th_case cases[] = {TH_CASE(dequant_f16_every_value), TH_CASE(prefill_gemm_epilogue)};
    return th_run("llm_dequant", NULL, cases, TH_COUNT(cases), argc - 1, argv + 1) ? 1 : 0;
}
