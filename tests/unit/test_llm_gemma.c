/* SPDX-License-Identifier: MIT */
/*
 * test_llm_gemma.c - Gemma 2 and Gemma 3 (GGUF gemma2, gemma3): the hyper-parameters read from
 * the files gen-model writes (window, pattern, soft-caps, RoPE bases, head width), the double
 * reference (llm_ref) against llama.cpp's own perplexity of the same files, and the forward pass
 * of every device (per-op path: window, soft-caps, post norms, GeGLU) against the reference.
 *
 * The llama.cpp numbers: `nvhcq gen-model --preset P --type f32 --vocab VOCAB --seed 7 -o F`, then
 * `llama-perplexity -m F -f tests/data/text/story-ppl.txt -c 128 --chunks 1 -ctk f32 -ctv f32`
 * (the CPU build of ../shared/anchors/llamacpp, 2026-11-28; gemma3-tiny-linear 2026-11-29): f32 weights and
 * an f32 KV cache, so the two differ by float rounding alone (measured 2e-6 on the llama preset "tiny", 7e-6
 * and 2.2e-5 on these over 4 chunks). The prompt of 127 tokens is 16 windows of 8: a window misplaced by one
 * key, a soft-cap or a post norm left out moves the perplexity by far more.
 */
#include "harness.h"
#include "llm_match.h"
#include "llm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TEXT "tests/data/text/story-ppl.txt"
#define N_CTX 128u
/* |ref - llama.cpp| / llama.cpp: 20x the worst measured */
#define PPL_REL_BOUND 5e-4

static enum hcq_status
gen(const char *preset, enum llm_type type, char *path, size_t path_B)
{
    return llm_match_gen("gemma_", preset, type, 7, 0, path, path_B);
}

TEST(hparams_gemma2)
{
    char path[256] = "";
    struct llm_gguf *g = NULL;
    struct llm_hparams hp;
    CHECK_OK(gen("gemma2-tiny", LLM_TYPE_F16, path, sizeof path));
    CHECK_OK(llm_gguf_open(path, &g));
    CHECK_OK(llm_hparams_read(g, &hp));
    CHECK(hp.arch == LLM_ARCH_GEMMA2 && hp.rope_neox && hp.tied_output);
    CHECKF(hp.head_dim == 128 && hp.q_dim == 512 && hp.n_embd == 256, "hd %u q %u", hp.head_dim, hp.q_dim);
    CHECKF(hp.n_swa == 8 && hp.swa_period == 2, "window %u period %u", hp.n_swa, hp.swa_period);
    CHECKF(hp.attn_softcap == 0.5f && hp.final_softcap == 3.0f, "caps %g %g", (double)hp.attn_softcap,
           (double)hp.final_softcap);
    /* gemma2: the windowed layers keep the file's base */
    CHECK(hp.rope_base == 10000.0f && hp.rope_base_swa == hp.rope_base);
    CHECKF(fabsf(hp.attn_scale - 1.0f / sqrtf(128.0f)) < 1e-7f, "scale %g", (double)hp.attn_scale);
done:
    llm_gguf_destroy(g);
    if (*path)
        unlink(path);
}

/* rope.scaling linear 8: a scale of 1/8 for the global layers (the windowed ones keep theirs) */
TEST(hparams_gemma3_linear)
{
    char path[256] = "";
    struct llm_gguf *g = NULL;
    struct llm_hparams hp;
    CHECK_OK(gen("gemma3-tiny-linear", LLM_TYPE_F16, path, sizeof path));
    CHECK_OK(llm_gguf_open(path, &g));
    CHECK_OK(llm_hparams_read(g, &hp));
    CHECKF(hp.rope_scale == 0.125f && hp.rope_base_swa == 10000.0f, "scale %g", (double)hp.rope_scale);
done:
    llm_gguf_destroy(g);
    if (*path)
        unlink(path);
}

TEST(hparams_gemma3)
{
    char path[256] = "";
    struct llm_gguf *g = NULL;
    struct llm_hparams hp;
    CHECK_OK(gen("gemma3-tiny", LLM_TYPE_F16, path, sizeof path));
    CHECK_OK(llm_gguf_open(path, &g));
    CHECK_OK(llm_hparams_read(g, &hp));
    CHECK(hp.arch == LLM_ARCH_GEMMA3 && hp.rope_neox && hp.tied_output);
    CHECKF(hp.n_swa == 8 && hp.swa_period == 3 && hp.n_head_kv == 1, "window %u period %u kv %u", hp.n_swa,
           hp.swa_period, hp.n_head_kv);
    /* no soft-caps; the windowed layers at llama.cpp's default base (the file has no freq_base_swa) */
    CHECK(hp.attn_softcap == 0 && hp.final_softcap == 0);
    CHECKF(hp.rope_base == 1e6f && hp.rope_base_swa == 10000.0f, "bases %g %g", (double)hp.rope_base,
           (double)hp.rope_base_swa);
done:
    llm_gguf_destroy(g);
    if (*path)
        unlink(path);
}

/* Perplexity of the first chunk by llama-perplexity's method, on llm_ref. */
static enum hcq_status
ref_ppl(const struct llm_gguf *g, double *ppl)
{
    struct llm_tok *tok = NULL;
    struct llm_ref *ref = NULL;
    float *lg = NULL;
    int32_t *ids = NULL;
    size_t n = 0, len = 0;
    char *text = NULL;
    FILE *f = fopen(TEXT, "rb");
    enum hcq_status st = f ? HCQ_OK : HCQ_ERR_IO;
    if (f) {
        text = malloc(1 << 20);
        len = text ? fread(text, 1, 1 << 20, f) : 0;
        fclose(f);
    }
    if (st || !text || (st = llm_tok_create(g, &tok)) || (st = llm_ppl_tokenize(tok, text, len, &ids, &n)) ||
        (st = llm_ref_create(g, N_CTX, &ref)))
        goto out;
    const uint32_t V = llm_ref_hparams(ref)->n_vocab;
    const int32_t bos = llm_tok_add_bos_default(tok) ? llm_tok_bos(tok) : -1;
    long double sum = 0;
    uint32_t count = 0;
    if (n < 2 * N_CTX || !(lg = malloc(4ull * V))) {
        st = HCQ_ERR_NOMEM;
        goto out;
    }
    for (uint32_t j = 0; j + 1 < N_CTX && !st; j++) {
        const int32_t in = j == 0 && bos >= 0 ? bos : ids[j];
        if ((st = llm_ref_eval(ref, &in, 1, j, lg)) || j < N_CTX / 2)
            continue;
        long double mx = lg[0], s = 0;
        for (uint32_t v = 1; v < V; v++)
            mx = lg[v] > mx ? lg[v] : mx;
        for (uint32_t v = 0; v < V; v++)
            s += expl(lg[v] - mx);
        sum += -(lg[ids[j + 1]] - mx - logl(s));
        count++;
    }
    *ppl = (double)expl(sum / count);
out:
    free(lg);
    free(ids);
    free(text);
    llm_ref_destroy(ref);
    llm_tok_destroy(tok);
    return st;
}

static void
ref_vs_llamacpp(struct th *t, const char *preset, double want)
{
    char path[256] = "";
    struct llm_gguf *g = NULL;
    double got = 0;
    CHECK_OK(gen(preset, LLM_TYPE_F32, path, sizeof path));
    CHECK_OK(llm_gguf_open(path, &g));
    CHECK_OK(ref_ppl(g, &got));
    CHECKF(fabs(got - want) <= PPL_REL_BOUND * want, "%s: llm_ref perplexity %.4f, llama.cpp %.4f", preset,
           got, want);
done:
    llm_gguf_destroy(g);
    if (*path)
        unlink(path);
}

TEST(ref_gemma2_vs_llamacpp)
{
    ref_vs_llamacpp(t, "gemma2-tiny", 67955.7555);
}

TEST(ref_gemma3_vs_llamacpp)
{
    ref_vs_llamacpp(t, "gemma3-tiny", 76815.0203);
}

/* Gemma 3's linear RoPE scaling (factor 8 on the global layers, 2026-11-29; unscaled: 76815) */
TEST(ref_gemma3_linear_vs_llamacpp)
{
    ref_vs_llamacpp(t, "gemma3-tiny-linear", 78564.0956);
}

#define STEPS 24

/* The forward pass on cpu and every device that opens (HCQ_TEST_DEVS, else emu:gh100, cuda:0,
 * rm:0) against llm_ref: a prompt in batches of 5, then greedy steps, 30+ positions past the
 * window of 8; logits of every step compared (NMSE), and on cpu and the emulators (the kernels' f32
 * twins) the greedy ids too. */
static void
devices_vs_ref(struct th *t, const char *preset)
{
    static const char prompt[] = "Once upon a time, a small dog found a red ball in the park";
    char path[256] = "", devs[256];
    struct llm_gguf *g = NULL;
    struct llm_ref *ref = NULL;
    struct llm_model *m = NULL;
    float *lr = NULL, *lm = NULL;
    int32_t pr[64], tr[STEPS], tm[STEPS];
    size_t np = 0;
    const char *env = getenv("HCQ_TEST_DEVS");
    snprintf(devs, sizeof devs, "cpu %s", env ? env : "emu:gh100 cuda:0 rm:0");
    CHECK_OK(gen(preset, LLM_TYPE_F16, path, sizeof path));
    CHECK_OK(llm_gguf_open(path, &g));
    CHECK_OK(llm_ref_create(g, N_CTX, &ref));
    const uint32_t V = llm_ref_hparams(ref)->n_vocab;
    CHECK((lr = malloc(4ull * V * STEPS)) && (lm = malloc(4ull * V * STEPS)));
    struct llm_model_params mp;
    llm_model_params_default(&mp);
    mp.gemm_min_batch = LLM_GEMM_MIN_BATCH_REF; /* the f32 per-op prefill the bounds here assume */
    mp.n_ctx = N_CTX;
    mp.n_batch = 5;
    mp.f32_decode = true;
    for (char *save = NULL, *d = strtok_r(devs, " ,", &save); d; d = strtok_r(NULL, " ,", &save)) {
        if (strcmp(d, "cpu") && !llm_match_device_usable(d))
            continue;
        mp.dev_spec = d;
        CHECK_OK(llm_model_load_gguf(g, &mp, &m));
        if (!np) {
            CHECK_OK(llm_tok_encode(llm_model_tok(m), prompt, strlen(prompt), false, false, pr, 64, &np));
            CHECK(np > 10 && np < 64);
            /* the reference, once: prompt, then its own greedy ids */
            CHECK_OK(llm_ref_eval(ref, pr, (uint32_t)np, 0, lr));
            for (uint32_t s = 0; s < STEPS; s++) {
                uint32_t b = 0;
                for (uint32_t v = 1; v < V; v++)
                    b = lr[(size_t)s * V + v] > lr[(size_t)s * V + b] ? v : b;
                tr[s] = (int32_t)b;
                if (s + 1 < STEPS)
                    CHECK_OK(llm_ref_eval(ref, &tr[s], 1, (uint32_t)np + s, lr + (size_t)(s + 1) * V));
            }
        }
        /* the model is fed the reference's ids, so every step's logits compare */
        CHECK_OK(llm_model_eval(m, pr, (uint32_t)np, 0));
        double worst = 0;
        for (uint32_t s = 0; s < STEPS; s++) {
            const float *l = llm_model_logits(m);
            memcpy(lm + (size_t)s * V, l, 4ull * V);
            uint32_t b = 0;
            for (uint32_t v = 1; v < V; v++)
                b = l[v] > l[b] ? v : b;
            tm[s] = (int32_t)b;
            worst = fmax(worst, llm_match_nmse(lm + (size_t)s * V, lr + (size_t)s * V, V));
            if (s + 1 < STEPS)
                CHECK_OK(llm_model_eval(m, &tr[s], 1, (uint32_t)np + s));
        }
        const bool twins = !strcmp(d, "cpu") || !strncmp(d, "emu", 3);
        printf("    %s %s: worst logits NMSE %.3g vs llm_ref over %d steps (%zu-token prompt)\n", preset, d,
               worst, STEPS, np);
        /* f32 twins: rounding alone (measured ~1e-12 when written); GPUs: f16 prefill paths */
        CHECKF(worst < (twins ? 1e-8 : 1e-4), "%s %s: logits NMSE %g vs llm_ref", preset, d, worst);
        for (uint32_t s = 0; twins && s < STEPS; s++)
            CHECKF(tm[s] == tr[s], "%s %s step %u: %d, llm_ref %d", preset, d, s, tm[s], tr[s]);
        llm_model_destroy(m);
        m = NULL;
    }
done:
    llm_model_destroy(m);
    llm_ref_destroy(ref);
    llm_gguf_destroy(g);
    free(lr);
    free(lm);
    if (*path)
        unlink(path);
}

TEST(gemma2_devices_vs_ref)
{
    devices_vs_ref(t, "gemma2-tiny");
}

TEST(gemma3_devices_vs_ref)
{
    devices_vs_ref(t, "gemma3-tiny");
}

TEST(gemma3_linear_devices_vs_ref)
{
    devices_vs_ref(t, "gemma3-tiny-linear");
}

int
main(int argc, char **argv)
{
    static const struct th_case cases[] = {
        TH_CASE(hparams_gemma2),
        TH_CASE(hparams_gemma3),
        TH_CASE(ref_gemma2_vs_llamacpp),
        TH_CASE(ref_gemma3_vs_llamacpp),
        TH_CASE(gemma2_devices_vs_ref),
        TH_CASE(gemma3_devices_vs_ref),
        TH_CASE(ref_gemma3_linear_vs_llamacpp),
        TH_CASE(gemma3_linear_devices_vs_ref),
        TH_CASE(hparams_gemma3_linear),
    };
    return th_run("llm_gemma", NULL, cases, TH_COUNT(cases), argc - 1, argv + 1) ? 1 : 0;
}
