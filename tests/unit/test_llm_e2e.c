/* SPDX-License-Identifier: MIT */
/*
 * test_llm_e2e.c - end to end on tiny models written by the generator (fixed seed) with the
 * GPT-2 vocabulary cut to 2048 tokens: the device forward pass on `cpu` (kernel twins)
 * against the independent double-precision reference (llm_ref) - logits NMSE and identical
 * greedy tokens - and the committed greedy ids; prefill in batches vs token-by-token decode;
 * every other device that opens (HCQ_TEST_DEVS, else emu:gh100, emu:ga10b, cuda:0, rm:0) against
 * `cpu`: same 32 greedy tokens, logits within NMSE 1e-6 (f32 on both sides; only the
 * summation order differs).
 */
#include "harness.h"
#include "llm_match.h"
#include "llm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STEPS 32
#define VOCAB "tests/data/tokenizers/ggml-vocab-gpt-2.gguf"

/* Greedy ids of the tiny llama (q8_0, seed 1234) after the prompt below, produced by this
 * test on `cpu` and checked against llm_ref when recorded. */
static const int32_t expect_llama_q8_0[STEPS] = {
#include "test_llm_e2e_expect.inc"
};
static const char prompt[] = "Hello world, this is a small test";

static uint32_t
argmax(const float *l, uint32_t n)
{
    return (uint32_t)llm_match_argmax(l, n);
}

/* Write a generated model to a temp file; returns the path in buf. The first 2048 GPT-2 tokens
 * (and the merges among them) keep the output head small: the suite stays fast on 2 cores, under
 * ASan and under qemu. */
static enum hcq_status
gen(const char *preset, enum llm_type type, char *path, size_t path_B)
{
    return llm_match_gen("", preset, type, 1234, 2048, path, path_B);
}

/* Greedy decode: prompt, then STEPS tokens; logits of every step into logits[STEPS][V]. */
static enum hcq_status
run_model(struct llm_model *m, const int32_t *pr, uint32_t np, int32_t *out, float *logits)
{
    uint32_t V = llm_model_hparams(m)->n_vocab;
    enum hcq_status st = llm_model_eval(m, pr, np, 0);
    for (uint32_t s = 0; s < STEPS && !st; s++) {
        memcpy(logits + (size_t)s * V, llm_model_logits(m), 4ull * V);
        out[s] = (int32_t)argmax(llm_model_logits(m), V);
        if (s + 1 < STEPS)
            st = llm_model_eval(m, &out[s], 1, np + s);
    }
    return st;
}

static enum hcq_status
run_ref(struct llm_ref *r, const int32_t *pr, uint32_t np, int32_t *out, float *logits)
{
    uint32_t V = llm_ref_hparams(r)->n_vocab;
    enum hcq_status st = llm_ref_eval(r, pr, np, 0, logits);
    for (uint32_t s = 0; s < STEPS && !st; s++) {
        out[s] = (int32_t)argmax(logits + (size_t)s * V, V);
        if (s + 1 < STEPS)
            st = llm_ref_eval(r, &out[s], 1, np + s, logits + (size_t)(s + 1) * V);
    }
    return st;
}

static void
check_vs_ref(struct th *t, const char *preset, enum llm_type type, const int32_t *expect, bool f32)
{
    char path[256];
    struct llm_gguf *g = NULL;
    struct llm_ref *ref = NULL;
    struct llm_model *m = NULL;
    float *lr = NULL, *lm = NULL;
    int32_t pr[64], tr[STEPS], tm[STEPS];
    size_t np;
    CHECK_OK(gen(preset, type, path, sizeof path));
    CHECK_OK(llm_gguf_open(path, &g));
    struct llm_model_params mp;
    llm_model_params_default(&mp);
    mp.gemm_min_batch = LLM_GEMM_MIN_BATCH_REF; /* the f32 per-op prefill the bounds here assume */
    mp.dev_spec = "cpu";
    mp.n_ctx = 128;
    mp.n_batch = 5; /* the prompt spans several batches */
    mp.f32_decode = f32;
    CHECK_OK(llm_model_load_gguf(g, &mp, &m));
    CHECK_OK(llm_tok_encode(llm_model_tok(m), prompt, strlen(prompt), false, false, pr, 64, &np));
    CHECK(np > 5 && np < 64);
    uint32_t V = llm_model_hparams(m)->n_vocab;
    lr = malloc(4ull * V * STEPS);
    lm = malloc(4ull * V * STEPS);
    CHECK(lr && lm);
    CHECK_OK(llm_ref_create(g, 128, &ref));
    CHECK_OK(run_ref(ref, pr, (uint32_t)np, tr, lr));
    CHECK_OK(run_model(m, pr, (uint32_t)np, tm, lm));
    double worst = 0;
    for (int s = 0; s < STEPS; s++)
        worst = fmax(worst, llm_match_nmse(lm + (size_t)s * V, lr + (size_t)s * V, V));
    printf("    %s %s%s: cpu vs reference: worst logits NMSE %.3g over %d steps; ids", preset,
           llm_type_name(type), f32 ? "" : " (int8 decode activations)", worst, STEPS);
    for (int s = 0; s < STEPS; s++)
        printf(" %d", tm[s]);
    printf("\n");
    if (!f32) {
        /* int8 activations (k_llm_matvec_q8): the reference keeps f32, so only a bound holds.
         * The first step's logits come from prefill (f32 path) and must still match tightly.
         * Greedy ids are printed, not compared: with random weights the top logits of later
         * steps lie closer together than the int8 error, so ids may part (a real model's
         * agreement is measured by perplexity). */
        CHECKF(worst < 2e-3, "int8 decode: logits NMSE %g vs reference (bound 2e-3)", worst);
        CHECKF(llm_match_nmse(lm, lr, V) < 1e-8, "prefill logits NMSE %g", llm_match_nmse(lm, lr, V));
        goto done;
    }
    /* 5e-8: both round K and V to the f16 cache, but from f32 values that differ in the last
     * bits (the reference's RoPE and dot products are double), so an element near a rounding
     * boundary may land one f16 ulp (2^-11 relative) apart; qwen2-tiny shows 1.3e-8 */
    CHECKF(worst < 5e-8, "logits NMSE %g vs reference", worst);
    for (int s = 0; s < STEPS; s++)
        CHECKF(tm[s] == tr[s], "step %d: cpu %d, reference %d", s, tm[s], tr[s]);
    if (expect)
        for (int s = 0; s < STEPS; s++)
            CHECKF(tm[s] == expect[s], "step %d: cpu %d, committed %d", s, tm[s], expect[s]);
done:
    llm_model_destroy(m);
    llm_ref_destroy(ref);
    llm_gguf_destroy(g);
    free(lr);
    free(lm);
    unlink(path);
}

TEST(llama_q8_0_vs_ref_and_committed)
{
    check_vs_ref(t, "tiny", LLM_TYPE_Q8_0, expect_llama_q8_0, true);
}
TEST(llama_q6_k_vs_ref)
{
    check_vs_ref(t, "tiny", LLM_TYPE_Q6_K, NULL, true);
}
TEST(llama_q4_k_vs_ref)
{
    check_vs_ref(t, "tiny", LLM_TYPE_Q4_K, NULL, true);
}
TEST(llama_f16_vs_ref)
{
    check_vs_ref(t, "tiny", LLM_TYPE_F16, NULL, true);
}
/* Qwen2: Q|K|V biases (one packed bias in the fused decode's Q|K|V launch and the prefill
 * GEMM) and RoPE over the pairs (i, i + hd/2), which the engine runs as adjacent pairs on Q and K
 * rows reordered at load (llm_upload.c) and the reference computes as the file says */
TEST(qwen2_q8_0_vs_ref)
{
    check_vs_ref(t, "qwen2-tiny", LLM_TYPE_Q8_0, NULL, true);
    check_vs_ref(t, "qwen2-tiny", LLM_TYPE_F16, NULL, true);
    check_vs_ref(t, "qwen2-tiny", LLM_TYPE_Q8_0, NULL, false);
    check_vs_ref(t, "qwen2-tiny", LLM_TYPE_F16, NULL, false);
}

/* Qwen3: an RMSNorm over each Q and K head before RoPE (k_llm_head_norm; the fused decode then
 * keeps RoPE out of the Q|K|V epilogue), heads of attention.key_length wider than n_embd / n_head
 * (qwen3-tiny: 4 heads of 128 on a 256-wide model), NEOX RoPE */
TEST(qwen3_vs_ref)
{
    check_vs_ref(t, "qwen3-tiny", LLM_TYPE_Q8_0, NULL, true);
    check_vs_ref(t, "qwen3-tiny", LLM_TYPE_F16, NULL, true);
    check_vs_ref(t, "qwen3-tiny", LLM_TYPE_F16, NULL, false);
}

/* Phi-3: Q|K|V and gate|up each in one tensor (the engine reads LLaMA's views of their rows, Q and K
 * rows reordered for RoPE, V rows not), NEOX RoPE, a separate output head */
TEST(phi3_vs_ref)
{
    check_vs_ref(t, "phi3-tiny", LLM_TYPE_Q8_0, NULL, true);
    check_vs_ref(t, "phi3-tiny", LLM_TYPE_F16, NULL, false);
}

TEST(gpt2_q8_0_vs_ref)
{
    check_vs_ref(t, "gpt2-tiny", LLM_TYPE_Q8_0, NULL, true);
}

/* The default decode path: int8 activations on every type k_llm_matvec_q8 reads. */
TEST(llama_int8_decode_vs_ref)
{
    check_vs_ref(t, "tiny", LLM_TYPE_Q8_0, NULL, false);
    check_vs_ref(t, "tiny", LLM_TYPE_Q4_K, NULL, false);
    check_vs_ref(t, "tiny", LLM_TYPE_Q4_0, NULL, false);
    check_vs_ref(t, "tiny", LLM_TYPE_Q5_K, NULL, false);
}

/* Prefill in one batch, in batches of 3, and token by token (graph decode): same logits
 * (f32 decode activations: the int8 path is bounded above, not equal). */
TEST(prefill_vs_decode)
{
    char path[256];
    struct llm_gguf *g = NULL;
    struct llm_model *a = NULL, *b = NULL;
    float *la = NULL;
    int32_t pr[64];
    size_t np;
    CHECK_OK(gen("tiny", LLM_TYPE_Q4_0, path, sizeof path));
    CHECK_OK(llm_gguf_open(path, &g));
    struct llm_model_params mp;
    llm_model_params_default(&mp);
    mp.gemm_min_batch = LLM_GEMM_MIN_BATCH_REF; /* the f32 per-op prefill the bounds here assume */
    mp.dev_spec = "cpu";
    mp.n_ctx = 64;
    mp.n_batch = 64;
    mp.f32_decode = true;
    CHECK_OK(llm_model_load_gguf(g, &mp, &a));
    mp.n_batch = 3;
    CHECK_OK(llm_model_load_gguf(g, &mp, &b));
    CHECK_OK(llm_tok_encode(llm_model_tok(a), prompt, strlen(prompt), false, false, pr, 64, &np));
    uint32_t V = llm_model_hparams(a)->n_vocab;
    CHECK((la = malloc(4ull * V)));
    CHECK_OK(llm_model_eval(a, pr, (uint32_t)np, 0));
    memcpy(la, llm_model_logits(a), 4ull * V);
    CHECK_OK(llm_model_eval(b, pr, (uint32_t)np, 0));
    double e1 = llm_match_nmse(llm_model_logits(b), la, V);
    for (uint32_t i = 0; i < np; i++) /* overwrite the cache one token at a time */
        CHECK_OK(llm_model_eval(b, &pr[i], 1, i));
    double e2 = llm_match_nmse(llm_model_logits(b), la, V);
    printf("    prefill(64) vs prefill(3): NMSE %.3g; vs token-by-token: %.3g\n", e1, e2);
    CHECK(e1 < 1e-10 && e2 < 1e-10);
    CHECK(llm_model_eval(a, pr, 1, 64) == HCQ_ERR_INVALID); /* past the context */
done:
    free(la);
    llm_model_destroy(a);
    llm_model_destroy(b);
    llm_gguf_destroy(g);
    unlink(path);
}

/* llm_model_profile_step: one row per label of the fused decode path, counts per layer, rows
 * adding up to the step, weight bytes of the mat-vec rows, the step's logits as eval's. */
TEST(profile_step)
{
    char path[256];
    struct llm_gguf *g = NULL;
    struct llm_model *m = NULL;
    float *la = NULL;
    CHECK_OK(gen("tiny", LLM_TYPE_Q6_K, path, sizeof path));
    CHECK_OK(llm_gguf_open(path, &g));
    struct llm_model_params mp;
    llm_model_params_default(&mp);
    mp.gemm_min_batch = LLM_GEMM_MIN_BATCH_REF; /* the f32 per-op prefill the bounds here assume */
    mp.dev_spec = "cpu";
    mp.n_ctx = 32;
    CHECK_OK(llm_model_load_gguf(g, &mp, &m));
    const struct llm_hparams *hp = llm_model_hparams(m);
    int32_t tok[2] = {17, 42};
    CHECK_OK(llm_model_eval(m, tok, 2, 0));
    CHECK((la = malloc(4ull * hp->n_vocab)));
    CHECK_OK(llm_model_eval(m, &tok[1], 1, 1));
    memcpy(la, llm_model_logits(m), 4ull * hp->n_vocab);
    struct llm_prof_row rows[32];
    uint32_t n = 0;
    double step = 0, sum = 0;
    CHECK_OK(llm_model_profile_step(m, tok[1], 1, rows, 32, &n, &step));
    CHECK(n == 8); /* embed, qkv, rope_kv, attn, o, gate/up, down, output */
    uint32_t launches = 0;
    for (uint32_t i = 0; i < n; i++) {
        sum += rows[i].us;
        launches += rows[i].count;
        if (!strncmp(rows[i].kernel, "mv ", 3))
            CHECKF(rows[i].bytes > 0, "%s: no bytes", rows[i].kernel);
    }
    CHECKF(launches == 6 * hp->n_layer + 2, "%u launches", launches);
    CHECKF(fabs(sum - step) <= 1e-6 * step + 1e-3, "rows %.3f us, step %.3f us", sum, step);
    CHECK(llm_match_nmse(llm_model_logits(m), la, hp->n_vocab) == 0);
    CHECK(llm_model_profile_step(m, tok[1], 32, rows, 32, &n, &step) == HCQ_ERR_INVALID);
done:
    free(la);
    llm_model_destroy(m);
    llm_gguf_destroy(g);
    unlink(path);
}

/* What dev_run loads and runs: the model's GGUF and parameters, the prompt. */
struct dev_run_ctx {
    struct llm_gguf *g;
    struct llm_model_params mp;
    const int32_t *pr;
    uint32_t np;
};

/* llm_match_devices' run: the model on device spec, then run_model over the prompt. */
static enum hcq_status
dev_run(void *ctx, const char *spec, struct llm_model **m, int32_t *tokens, float *logits)
{
    struct dev_run_ctx *r = ctx;
    r->mp.dev_spec = spec;
    enum hcq_status st = llm_model_load_gguf(r->g, &r->mp, m);
    return st ? st : run_model(*m, r->pr, r->np, tokens, logits);
}

/* Every other device: same greedy tokens as cpu for 32 steps, logits within NMSE 1e-6.
 * gemm_min is the model's gemm_min_batch on both sides (2: the prompt's prefill runs the
 * tensor-core matmuls, k_llm_gemm.cu; 0: the one-warp-per-row matmul). */
static void
devices_match(struct th *t, const char *preset, enum llm_type type, uint32_t gemm_min)
{
    char path[256];
    struct llm_gguf *g = NULL;
    struct llm_model *mc = NULL;
    float *lc = NULL;
    int32_t pr[64], tc[STEPS];
    size_t np;
    CHECK_OK(gen(preset, type, path, sizeof path));
    CHECK_OK(llm_gguf_open(path, &g));
    struct llm_model_params mp;
    llm_model_params_default(&mp);
    mp.dev_spec = "cpu";
    mp.n_ctx = 128;
    mp.gemm_min_batch = gemm_min;
    CHECK_OK(llm_model_load_gguf(g, &mp, &mc));
    /* three copies of the prompt: > 16 tokens, so the GPU prefill mat-mul runs a full
     * 16-token pass and a partial one */
    char long_prompt[3 * sizeof prompt + 4];
    snprintf(long_prompt, sizeof long_prompt, "%s %s %s", prompt, prompt, prompt);
    CHECK_OK(llm_tok_encode(llm_model_tok(mc), long_prompt, strlen(long_prompt), false, false, pr, 64, &np));
    CHECK(np > 16 && np < 48);
    uint32_t V = llm_model_hparams(mc)->n_vocab;
    CHECK((lc = malloc(4ull * V * STEPS)));
    CHECK_OK(run_model(mc, pr, (uint32_t)np, tc, lc));
    struct dev_run_ctx r = {g, mp, pr, (uint32_t)np};
    char note[96];
    snprintf(note, sizeof note, " (%s %s, gemm_min_batch %u)", preset, llm_type_name(type), gemm_min);
    llm_match_devices(t, "emu:gh100 emu:ga10b cuda:0 rm:0", note, dev_run, &r, tc, lc, STEPS, V);
done:
    llm_model_destroy(mc);
    llm_gguf_destroy(g);
    free(lc);
    unlink(path);
}

TEST(devices_match_cpu)
{
    devices_match(t, "tiny", LLM_TYPE_Q6_K, 0);
}

/* Qwen2 on the devices: the Q|K|V bias in the decode mat-vecs' RoPE epilogue (F16: k_llm_matvec_h_f16;
 * Q8_0: the q8 kernels) and in the prefill GEMM */
TEST(qwen2_devices_match_cpu)
{
    devices_match(t, "qwen2-tiny", LLM_TYPE_F16, 2);
    devices_match(t, "qwen2-tiny", LLM_TYPE_Q8_0, 0);
}

TEST(qwen3_devices_match_cpu)
{
    devices_match(t, "qwen3-tiny", LLM_TYPE_F16, 2);
    devices_match(t, "qwen3-tiny", LLM_TYPE_Q6_K, 0);
}

/* (Q6_K as the other tiny cases: its 256-value rows take the f32 mat-vec, whose results every
 * device shares to ~1e-7; a Q4_K file takes the int8 mat-vec, whose GPU prologue rounds x' in
 * another order than the twin - H200 2026-11-28: the same tokens, logits NMSE 8.9e-5, past this
 * check's 1e-6 and inside the int8 bound llama_int8_decode_vs_ref tests) */
TEST(phi3_devices_match_cpu)
{
    devices_match(t, "phi3-tiny", LLM_TYPE_F16, 2);
    devices_match(t, "phi3-tiny", LLM_TYPE_Q6_K, 0);
}

/* Past the 8192 positions the engine once stopped at: a one-layer tiny model trained for 16384
 * tokens, a prompt of 8500 token ids, then STEPS greedy steps, on every GPU against cpu (the
 * decode attention's split path at every step, the prefill attention over batches of 512). Only
 * GPUs: the cpu side is O(n^2) attention over 8500 tokens in the twins (~50 s per layer and
 * device on the GPU machine; the emulators would run the same twins again), too long for CI's 2
 * cores under sanitizers; the attention kernels themselves are checked past 8192 positions on
 * every device in test_llm_attn_decode and test_llm_attn_prefill. */
TEST(long_context_devices_match_cpu)
{
    char path[256];
    struct llm_gguf *g = NULL, *v = NULL;
    struct llm_model *mc = NULL;
    float *lc = NULL;
    int32_t *pr = NULL, tc[STEPS];
    enum { NP = 8500 };
    if (!llm_match_device_usable("rm:0") && !llm_match_device_usable("cuda:0"))
        SKIP("no GPU opens here");
    CHECK_OK(llm_gguf_open(VOCAB, &v));
    snprintf(path, sizeof path, "/tmp/nvhcq_test_llm_long_%d.gguf", (int)getpid());
    struct llm_gen_params gp = {.preset = "tiny",
                                .type = LLM_TYPE_Q8_0,
                                .vocab = v,
                                .seed = 99,
                                .threads = 2,
                                .n_vocab = 2048,
                                .n_layer = 1,
                                .n_ctx = 16384};
    CHECK_OK(llm_gen_model(&gp, path));
    CHECK_OK(llm_gguf_open(path, &g));
    struct llm_model_params mp;
    llm_model_params_default(&mp);
    mp.gemm_min_batch = LLM_GEMM_MIN_BATCH_REF; /* the f32 per-op prefill the bounds here assume */
    mp.dev_spec = "cpu";
    mp.n_ctx = NP + STEPS + 3;
    mp.n_batch = 512;
    CHECK_OK(llm_model_load_gguf(g, &mp, &mc));
    const uint32_t V = llm_model_hparams(mc)->n_vocab;
    CHECK((pr = malloc(4ull * NP)) && (lc = malloc(4ull * V * STEPS)));
    for (uint32_t i = 0; i < NP; i++)
        pr[i] = (int32_t)((i * 7919u + 13u) % V);
    CHECK_OK(run_model(mc, pr, NP, tc, lc));
    struct dev_run_ctx r = {g, mp, pr, NP};
    llm_match_devices_ex(t, "cuda:0 rm:0", true, " (8500-token prompt)", dev_run, &r, tc, lc, STEPS, V);
done:
    llm_model_destroy(mc);
    llm_gguf_destroy(g);
    llm_gguf_destroy(v);
    free(pr);
    free(lc);
    unlink(path);
}
TEST(devices_match_cpu_gemm)
{
    devices_match(t, "tiny", LLM_TYPE_Q6_K, 2);
}

/* The tensor-core prefill (weights and activations rounded to f16) on cpu (its twins)
 * against the double-precision reference: the prompt's logits within NMSE 1e-5 (f16
 * rounding, relative 2^-11 per operand, gives ~1e-7 on these models) and the same first
 * greedy token. */
TEST(prefill_gemm_vs_ref)
{
    char path[256];
    struct llm_gguf *g = NULL;
    struct llm_ref *ref = NULL;
    struct llm_model *m = NULL;
    float *lr = NULL;
    int32_t pr[64];
    size_t np;
    CHECK_OK(gen("tiny", LLM_TYPE_Q4_K, path, sizeof path));
    CHECK_OK(llm_gguf_open(path, &g));
    struct llm_model_params mp;
    llm_model_params_default(&mp);
    mp.dev_spec = "cpu";
    mp.n_ctx = 64;
    mp.n_batch = 64;
    mp.gemm_min_batch = 2;
    CHECK_OK(llm_model_load_gguf(g, &mp, &m));
    CHECK_OK(llm_tok_encode(llm_model_tok(m), prompt, strlen(prompt), false, false, pr, 64, &np));
    uint32_t V = llm_model_hparams(m)->n_vocab;
    CHECK((lr = malloc(4ull * V)));
    CHECK_OK(llm_ref_create(g, 64, &ref));
    CHECK_OK(llm_ref_eval(ref, pr, (uint32_t)np, 0, lr));
    CHECK_OK(llm_model_eval(m, pr, (uint32_t)np, 0));
    double e = llm_match_nmse(llm_model_logits(m), lr, V);
    printf("    tensor-core prefill (f16 operands) vs reference: logits NMSE %.3g\n", e);
    CHECKF(e < 1e-5, "logits NMSE %g", e);
    CHECK(argmax(llm_model_logits(m), V) == argmax(lr, V));
done:
    free(lr);
    llm_model_destroy(m);
    llm_ref_destroy(ref);
    llm_gguf_destroy(g);
    unlink(path);
}

/* Decode attention: one CTA per query head (short contexts, the default up to
 * K_LLM_AD_HEAD_MAX positions) vs the split-K path at every position
 * (llm_model_params.attn_split_only), on every device (cpu twins included): the same softmax
 * summed in another order, so f32 decode activations (with int8 activations the O projection's
 * rounding of the attention output may flip: H100 measured logits NMSE 7e-5, inside the int8
 * bound) and logits within NMSE 1e-10, the same greedy ids over STEPS steps. */
TEST(attn_head_vs_split)
{
    char path[256];
    struct llm_gguf *g = NULL;
    struct llm_model *m = NULL;
    float *lg[2] = {NULL, NULL};
    int32_t pr[64], ids[2][STEPS];
    size_t np = 0;
    char devs[256];
    const char *env = getenv("HCQ_TEST_DEVS");
    snprintf(devs, sizeof devs, "cpu %s", env ? env : "emu:gh100 emu:ga10b cuda:0 rm:0");
    CHECK_OK(gen("tiny", LLM_TYPE_Q4_K, path, sizeof path));
    CHECK_OK(llm_gguf_open(path, &g));
    struct llm_model_params mp;
    llm_model_params_default(&mp);
    mp.gemm_min_batch = LLM_GEMM_MIN_BATCH_REF; /* the f32 per-op prefill the bounds here assume */
    mp.n_ctx = 128;
    mp.f32_decode = true;
    for (char *save = NULL, *d = strtok_r(devs, " ,", &save); d; d = strtok_r(NULL, " ,", &save)) {
        if (strcmp(d, "cpu") && !llm_match_device_usable(d))
            continue;
        mp.dev_spec = d;
        uint32_t V = 0;
        for (int k = 0; k < 2; k++) {
            mp.attn_split_only = k == 1;
            CHECK_OK(llm_model_load_gguf(g, &mp, &m));
            V = llm_model_hparams(m)->n_vocab;
            if (!np)
                CHECK_OK(llm_tok_encode(llm_model_tok(m), prompt, strlen(prompt), false, false, pr, 64, &np));
            if (!lg[k])
                CHECK((lg[k] = malloc(4ull * V * STEPS)));
            CHECK_OK(run_model(m, pr, (uint32_t)np, ids[k], lg[k]));
            llm_model_destroy(m);
            m = NULL;
        }
        double worst = 0;
        for (uint32_t st = 0; st < STEPS; st++)
            worst = fmax(worst, llm_match_nmse(lg[1] + (size_t)st * V, lg[0] + (size_t)st * V, V));
        printf("    %s split-K attention vs per-head: worst logits NMSE %.3g over %d greedy steps\n", d,
               worst, STEPS);
        for (uint32_t st = 0; st < STEPS; st++)
            CHECKF(ids[0][st] == ids[1][st], "%s step %u: %d vs %d", d, st, ids[1][st], ids[0][st]);
        /* 5e-9: the two paths add in other orders, and the f16 cache turns such last-bit
         * differences of a layer's K/V into whole f16 ulps (2^-11) where a value lies near a
         * rounding boundary, which the later layers carry (rm:0 on H200: 2.0e-10) */
        CHECKF(worst < 5e-9, "%s: logits NMSE %g", d, worst);
    }
done:
    llm_model_destroy(m);
    llm_gguf_destroy(g);
    free(lg[0]);
    free(lg[1]);
    unlink(path);
}

int
main(int argc, char **argv)
{
    static const struct th_case cases[] = {
        TH_CASE(llama_q8_0_vs_ref_and_committed),
        TH_CASE(llama_q6_k_vs_ref),
        TH_CASE(llama_q4_k_vs_ref),
        TH_CASE(llama_f16_vs_ref),
        TH_CASE(llama_int8_decode_vs_ref),
        TH_CASE(qwen2_q8_0_vs_ref),
        TH_CASE(qwen3_vs_ref),
        TH_CASE(phi3_vs_ref),
        TH_CASE(gpt2_q8_0_vs_ref),
        TH_CASE(prefill_vs_decode),
        TH_CASE(profile_step),
        TH_CASE(devices_match_cpu),
        TH_CASE(qwen2_devices_match_cpu),
        TH_CASE(qwen3_devices_match_cpu),
        TH_CASE(phi3_devices_match_cpu),
        TH_CASE(long_context_devices_match_cpu),
        TH_CASE(devices_match_cpu_gemm),
        TH_CASE(prefill_gemm_vs_ref),
        TH_CASE(attn_head_vs_split),
    };
    return th_run("llm_e2e", NULL, cases, TH_COUNT(cases), argc - 1, argv + 1) ? 1 : 0;
}
