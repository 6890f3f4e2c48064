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
    uint32_t b = 0;
    for (uint32_t i = 1; i < n; i++)
        if (l[i] > l[b])
            b = i;
    return b;
}

/* Write a generated model to a temp file; returns the path in buf. */
static enum hcq_status
gen(const char *preset, enum llm_type type, char *path, size_t path_B)
{
    struct llm_gguf *v = NULL;
    enum hcq_status st = llm_gguf_open(VOCAB, &v);
    if (st)
        return st;
    snprintf(path, path_B, "/tmp/nvhcq_test_llm_%s_%s_%d.gguf", preset, llm_type_name(type), (int)getpid());
    /* the first 2048 GPT-2 tokens (and the merges among them) keep the output head small:
     * the suite stays fast on 2 cores, under ASan and under qemu */
    struct llm_gen_params gp = {
        .preset = preset, .type = type, .vocab = v, .seed = 1234, .threads = 2, .n_vocab = 2048};
    st = llm_gen_model(&gp, path);
    llm_gguf_destroy(v);
    return st;
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
         * agreement is measured by perplexity, bench/final/ppl.sh). */
        CHECKF(worst < 2e-3, "int8 decode: logits NMSE %g vs reference (bound 2e-3)", worst);
        CHECKF(llm_match_nmse(lm, lr, V) < 1e-8, "prefill logits NMSE %g", llm_match_nmse(lm, lr, V));
        goto done;
    }
    CHECKF(worst < 1e-8, "logits NMSE %g vs reference", worst);
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
devices_match(struct th *t, uint32_t gemm_min)
{
    char path[256];
    struct llm_gguf *g = NULL;
    struct llm_model *mc = NULL;
    float *lc = NULL;
    int32_t pr[64], tc[STEPS];
    size_t np;
    CHECK_OK(gen("tiny", LLM_TYPE_Q6_K, path, sizeof path));
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
    char note[48];
    snprintf(note, sizeof note, " (gemm_min_batch %u)", gemm_min);
    llm_match_devices(t, "emu:gh100 emu:ga10b cuda:0 rm:0", note, dev_run, &r, tc, lc, STEPS, V);
done:
    llm_model_destroy(mc);
    llm_gguf_destroy(g);
    free(lc);
    unlink(path);
}

TEST(devices_match_cpu)
{
    devices_match(t, 0);
}
TEST(devices_match_cpu_gemm)
{
    devices_match(t, 2);
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

/* The persistent decode kernel (k_llm_decode_layers: every layer in one launch) against the
 * fused per-kernel path it replaces (NVHCQ_PERSIST=1 vs unset; off by default), on cpu (twins) and every
 * device that opens: the phases run the same device code, so the logits must agree to f32 rounding and the
 * greedy ids exactly. With NVHCQ_PERSIST_GRID set to a grid that cannot be resident, the kernel's barrier
 * times out, the step is run again on the per-kernel path and the result is still the same (GPU devices only:
 * the twins have no barrier). */
static void
persistent_case(struct th *t, enum llm_type type, const char *grid)
{
    int tried = 0;
    char path[256];
    struct llm_gguf *g = NULL;
    struct llm_model *m = NULL;
    float *lp = NULL, *lf = NULL;
    int32_t pr[64], tp[STEPS], tf[STEPS];
    size_t np;
    char devs[256];
    const char *env = getenv("HCQ_TEST_DEVS");
    snprintf(devs, sizeof devs, "cpu %s", env ? env : "emu:gh100 emu:ga10b cuda:0 rm:0");
    CHECK_OK(gen("tiny", type, path, sizeof path));
    CHECK_OK(llm_gguf_open(path, &g));
    struct llm_model_params mp;
    llm_model_params_default(&mp);
    mp.n_ctx = 128;
    for (char *save = NULL, *d = strtok_r(devs, " ,", &save); d; d = strtok_r(NULL, " ,", &save)) {
        if (strcmp(d, "cpu") && !llm_match_device_usable(d))
            continue;
        bool gpu = !strncmp(d, "cuda", 4) || !strncmp(d, "rm", 2);
        if (grid && !gpu)
            continue;
        tried++;
        mp.dev_spec = d;
        if (grid)
            setenv("NVHCQ_PERSIST_GRID", grid, 1);
        setenv("NVHCQ_PERSIST", "1", 1);
        enum hcq_status st = llm_model_load_gguf(g, &mp, &m);
        unsetenv("NVHCQ_PERSIST");
        unsetenv("NVHCQ_PERSIST_GRID");
        CHECK_OK(st);
        CHECKF(!strcmp(llm_model_decode_path(m), "persistent"), "%s: decode path %s", d,
               llm_model_decode_path(m));
        if (!lp) {
            CHECK_OK(llm_tok_encode(llm_model_tok(m), prompt, strlen(prompt), false, false, pr, 64, &np));
            uint32_t V = llm_model_hparams(m)->n_vocab;
            CHECK((lp = malloc(4ull * V * STEPS)) && (lf = malloc(4ull * V * STEPS)));
        }
        uint32_t V = llm_model_hparams(m)->n_vocab;
        CHECK_OK(run_model(m, pr, (uint32_t)np, tp, lp));
        const char *path_after = llm_model_decode_path(m);
        llm_model_destroy(m);
        m = NULL;
        if (grid) /* the first step timed out and turned the path off */
            CHECKF(!strcmp(path_after, "fused"), "%s grid %s: decode path %s after the run", d, grid,
                   path_after);
        /* the persistent kernel's attention is the split path (with int8 activations a
         * different attention summation can flip roundings); after a fallback both sides run
         * the default per-kernel path */
        if (!grid)
            setenv("NVHCQ_AD_HEAD_MAX", "0", 1);
        st = llm_model_load_gguf(g, &mp, &m);
        unsetenv("NVHCQ_AD_HEAD_MAX");
        CHECK_OK(st);
        CHECK(!strcmp(llm_model_decode_path(m), "fused"));
        CHECK_OK(run_model(m, pr, (uint32_t)np, tf, lf));
        llm_model_destroy(m);
        m = NULL;
        char label[96];
        snprintf(label, sizeof label, "%s %s persistent%s%s", d, llm_type_name(type), grid ? ", grid " : "",
                 grid ? grid : "");
        double worst = 0;
        for (uint32_t s = 0; s < STEPS; s++)
            worst = fmax(worst, llm_match_nmse(lp + (size_t)s * V, lf + (size_t)s * V, V));
        printf("    %s vs per-kernel: worst logits NMSE %.3g over %d greedy steps\n", label, worst, STEPS);
        for (uint32_t s = 0; s < STEPS; s++)
            CHECKF(tp[s] == tf[s], "%s step %u: %d vs per-kernel %d", label, s, tp[s], tf[s]);
        CHECKF(worst < 1e-10, "%s: logits NMSE %g vs per-kernel", label, worst);
    }
    if (grid && !tried)
        printf("    no GPU device here: the barrier timeout and fallback were not exercised\n");
done:
    unsetenv("NVHCQ_PERSIST");
    unsetenv("NVHCQ_PERSIST_GRID");
    llm_model_destroy(m);
    llm_gguf_destroy(g);
    free(lp);
    free(lf);
    unlink(path);
}

TEST(persistent_vs_per_kernel)
{
    persistent_case(t, LLM_TYPE_Q4_K, NULL);
    persistent_case(t, LLM_TYPE_Q5_K, NULL);
    /* 64 CTAs per SM of 132+ SMs: never resident at once */
    persistent_case(t, LLM_TYPE_Q4_K, "16384");
}

/* One decode switch A/B on every device (cpu twins included): the model loaded with env var
 * `var` = a and = b, the same prompt and 32 greedy steps, logits within NMSE tol and, where
 * tol < 1e-8, ids equal. f32: f32 decode activations - with int8 activations a last-bit difference upstream
 * can flip an int8 rounding and move the logits by up to the int8 bound, so only switches
 * that keep every value bit-identical are compared with int8 activations. */
static void
env_ab_preset(struct th *t, const char *preset, enum llm_type type, const char *var, const char *a,
              const char *b, double tol, bool f32, uint32_t gemm_min)
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
    CHECK_OK(gen(preset, type, path, sizeof path));
    CHECK_OK(llm_gguf_open(path, &g));
    struct llm_model_params mp;
    llm_model_params_default(&mp);
    mp.n_ctx = 128;
    mp.f32_decode = f32;
    if (gemm_min)
        mp.gemm_min_batch = gemm_min;
    for (char *save = NULL, *d = strtok_r(devs, " ,", &save); d; d = strtok_r(NULL, " ,", &save)) {
        if (strcmp(d, "cpu") && !llm_match_device_usable(d))
            continue;
        mp.dev_spec = d;
        uint32_t V = 0;
        for (int k = 0; k < 2; k++) {
            setenv(var, k ? b : a, 1);
            enum hcq_status st = llm_model_load_gguf(g, &mp, &m);
            unsetenv(var);
            CHECK_OK(st);
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
        printf("    %s %s %s=%s vs %s: worst logits NMSE %.3g over %d greedy steps\n", d, llm_type_name(type),
               var, b, a, worst, STEPS);
        /* ids equal where the logits must be (near) bit-identical; a looser tol is an int8 bound,
         * under which random weights' top logits may swap (check_vs_ref says why) */
        for (uint32_t st = 0; st < STEPS && tol < 1e-8; st++)
            CHECKF(ids[0][st] == ids[1][st], "%s %s step %u: %d vs %d", d, var, st, ids[1][st], ids[0][st]);
        CHECKF(worst < tol, "%s %s: logits NMSE %g", d, var, worst);
    }
done:
    unsetenv(var);
    llm_model_destroy(m);
    llm_gguf_destroy(g);
    free(lg[0]);
    free(lg[1]);
    unlink(path);
}

static void
env_ab(struct th *t, enum llm_type type, const char *var, const char *a, const char *b, double tol, bool f32,
       uint32_t gemm_min)
{
    env_ab_preset(t, "tiny", type, var, a, b, tol, f32, gemm_min);
}

/* RoPE + KV store in the Q|K|V mat-vec's epilogue vs k_llm_rope_kv's own launch: same formula
 * and rounding, so the same logits (bit-identical on the GPUs measured). */
TEST(rope_fused_vs_own_launch)
{
    env_ab(t, LLM_TYPE_Q4_K, "NVHCQ_ROPE_FUSED", "0", "1", 1e-12, false, 0);
}

/* Prefill Q|K|V as one tensor-core GEMM vs three (the prompt's batch takes the GEMM path:
 * gemm_min_batch 2): every output element is the same dot in the same order. */
TEST(qkv_gemm_vs_three)
{
    env_ab(t, LLM_TYPE_Q4_K, "NVHCQ_QKV_GEMM", "0", "1", 1e-12, true, 2);
}

/* Decode attention: one CTA per query head (short contexts, the default up to 256 positions)
 * vs the split-K path at every position (NVHCQ_AD_HEAD_MAX=0): the same softmax summed in
 * another order, so f32 decode (with int8 activations the O projection's rounding of the
 * attention output may flip: H100 measured logits NMSE 7e-5, inside the int8 bound). */
TEST(attn_head_vs_split)
{
    env_ab(t, LLM_TYPE_Q4_K, "NVHCQ_AD_HEAD_MAX", "0", "256", 1e-10, true, 0);
}

/* Programmatic dependent launch (HCQ_LAUNCH_DEP_WAIT on the decode mat-vecs and attention:
 * each may start while its predecessor drains and waits in the kernel) vs plain chaining:
 * the same kernels in the same order, so bit-identical logits - a launch that read its
 * input early would show here. Q4_K and Q6_K (both repacked q8 paths). */
TEST(pdl_vs_serial)
{
    env_ab(t, LLM_TYPE_Q4_K, "NVHCQ_PDL", "0", "1", 1e-30, false, 0);
    env_ab(t, LLM_TYPE_Q6_K, "NVHCQ_PDL", "0", "1", 1e-30, false, 0);
}

/* The token embedding over d / 256 CTAs (the default) vs one CTA (NVHCQ_EMBED_SPLIT=0): the same
 * values, written by other threads - the same logits, bit for bit; GPT-2 adds the position row. */
TEST(embed_split_vs_one_cta)
{
    env_ab(t, LLM_TYPE_Q8_0, "NVHCQ_EMBED_SPLIT", "0", "1", 1e-30, false, 0);
    env_ab_preset(t, "tiny-2k", LLM_TYPE_Q6_K, "NVHCQ_EMBED_SPLIT", "0", "1", 1e-30, false, 0);
    env_ab_preset(t, "gpt2-tiny", LLM_TYPE_Q8_0, "NVHCQ_EMBED_SPLIT", "0", "1", 1e-30, false, 0);
}

/* Decode attention + O projection as one launch (k_llm_attn_o, every step of the prompt's context
 * here: NVHCQ_AO_MAX=128) vs the attention and O launches: the attention's other summation order
 * and the per-KV-head partial sums move f32 last bits, which can flip an int8 rounding of the
 * activations after them - logits within a quarter of the int8 bound (2e-3 vs the f32
 * reference), not equal (cpu twins: 2.6-2.9e-5). Then the fused launch with
 * its fixed-order sums (NVHCQ_AO_DET=1, the default) twice: the same bits. tiny-2k: the 1B
 * model's attention shapes (tiny's O is not repacked, so it never takes the fused launch). */
TEST(attn_o_fused_vs_two_launches)
{
    /* one type per task map (32-value tasks, the Q6_KR value map); test_llm_attn_o runs all five */
    static const enum llm_type types[] = {LLM_TYPE_Q8_0, LLM_TYPE_Q4_K};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        env_ab_preset(t, "tiny-2k", types[i], "NVHCQ_AO_MAX", "0", "128", 5e-4, false, 0);
    setenv("NVHCQ_AO_MAX", "128", 1);
    env_ab_preset(t, "tiny-2k", LLM_TYPE_Q8_0, "NVHCQ_AO_DET", "1", "1", 1e-30, false, 0);
    unsetenv("NVHCQ_AO_MAX");
    /* the fused launch really ran: a step's profile has its row and not the O mat-vec's, up to
     * NVHCQ_AO_MAX positions; past them the two launches again */
    char path[256];
    struct llm_gguf *g = NULL;
    struct llm_model *m = NULL;
    CHECK_OK(gen("tiny-2k", LLM_TYPE_Q8_0, path, sizeof path));
    CHECK_OK(llm_gguf_open(path, &g));
    struct llm_model_params mp;
    llm_model_params_default(&mp);
    mp.dev_spec = "cpu";
    mp.n_ctx = 32;
    setenv("NVHCQ_AO_MAX", "4", 1);
    enum hcq_status st = llm_model_load_gguf(g, &mp, &m);
    unsetenv("NVHCQ_AO_MAX");
    CHECK_OK(st);
    int32_t tok[6] = {17, 42, 7, 99, 5, 3};
    CHECK_OK(llm_model_eval(m, tok, 6, 0));
    for (uint32_t pos = 2; pos <= 6; pos += 4) {
        struct llm_prof_row rows[32];
        uint32_t n = 0;
        double step = 0;
        bool fused = false, o = false;
        CHECK_OK(llm_model_profile_step(m, tok[1], pos, rows, 32, &n, &step));
        for (uint32_t i = 0; i < n; i++) {
            fused = fused || !strcmp(rows[i].kernel, "attn+o+residual");
            o = o || !strcmp(rows[i].kernel, "mv o+residual");
        }
        CHECKF(fused == (pos < 4) && o == !fused, "pos %u: fused launch %d, O mat-vec %d", pos, fused, o);
    }
done:
    llm_model_destroy(m);
    llm_gguf_destroy(g);
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
        TH_CASE(gpt2_q8_0_vs_ref),
        TH_CASE(prefill_vs_decode),
        TH_CASE(profile_step),
        TH_CASE(devices_match_cpu),
        TH_CASE(devices_match_cpu_gemm),
        TH_CASE(prefill_gemm_vs_ref),
        TH_CASE(persistent_vs_per_kernel),
        TH_CASE(rope_fused_vs_own_launch),
        TH_CASE(pdl_vs_serial),
        TH_CASE(attn_head_vs_split),
        TH_CASE(qkv_gemm_vs_three),
        TH_CASE(attn_o_fused_vs_two_launches),
        TH_CASE(embed_split_vs_one_cta),
    };
    return th_run("llm_e2e", NULL, cases, TH_COUNT(cases), argc - 1, argv + 1) ? 1 : 0;
}
