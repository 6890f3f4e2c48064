/* SPDX-License-Identifier: MIT */
/*
 * test_llm_gemma.c - Gemma 2 and Gemma 3 (GGUF gemma2, gemma3): the hyper-parameters read from
 * the files gen-model writes (window, pattern, soft-caps, RoPE bases, head width), the double
 * reference (llm_ref) against llama.cpp's own perplexity of the same files, and the devices'
 * clear refusal while their forward pass lacks Gemma.
 *
 * The llama.cpp numbers: `nvhcq gen-model --preset P --type f32 --vocab VOCAB --seed 7 -o F`, then
 * `llama-perplexity -m F -f tests/data/text/story-ppl.txt -c 128 --chunks 1 -ctk f32 -ctv f32`
 * (the CPU build of ../shared/anchors/llamacpp, 2026-11-28): f32 weights and an f32 KV cache, so
 * the two differ by float rounding alone (measured 2e-6 on the llama preset "tiny", 7e-6 and
 * 2.2e-5 on these over 4 chunks). The prompt of 127 tokens is 16 windows of 8: a window
 * misplaced by one key, a soft-cap or a post norm left out moves the perplexity by far more.
 */
#include "harness.h"
#include "llm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define VOCAB "tests/data/tokenizers/ggml-vocab-gpt-2.gguf"
#define TEXT "tests/data/text/story-ppl.txt"
#define N_CTX 128u
/* |ref - llama.cpp| / llama.cpp: 20x the worst measured */
#define PPL_REL_BOUND 5e-4

static enum hcq_status
gen(const char *preset, enum llm_type type, char *path, size_t path_B)
{
    struct llm_gguf *v = NULL;
    enum hcq_status st = llm_gguf_open(VOCAB, &v);
    if (st)
        return st;
    snprintf(path, path_B, "/tmp/nvhcq_test_llm_gemma_%s_%d.gguf", preset, (int)getpid());
    struct llm_gen_params gp = {.preset = preset, .type = type, .vocab = v, .seed = 7, .threads = 2};
    st = llm_gen_model(&gp, path);
    llm_gguf_destroy(v);
    return st;
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

/* Until the devices' forward pass has Gemma: a clear error, never other numbers. */
TEST(device_refuses_clearly)
{
    char path[256] = "";
    struct llm_gguf *g = NULL;
    struct llm_model *m = NULL;
    CHECK_OK(gen("gemma3-tiny", LLM_TYPE_F16, path, sizeof path));
    CHECK_OK(llm_gguf_open(path, &g));
    struct llm_model_params mp;
    llm_model_params_default(&mp);
    mp.dev_spec = "cpu";
    mp.n_ctx = 64;
    CHECK(llm_model_load_gguf(g, &mp, &m) == HCQ_ERR_UNSUPPORTED && !m);
    CHECKF(strstr(hcq_last_error(), "gemma3"), "'%s'", hcq_last_error());
done:
    llm_model_destroy(m);
    llm_gguf_destroy(g);
    if (*path)
        unlink(path);
}

int
main(int argc, char **argv)
{
    static const struct th_case cases[] = {
        TH_CASE(hparams_gemma2),         TH_CASE(hparams_gemma3),         TH_CASE(ref_gemma2_vs_llamacpp),
        TH_CASE(ref_gemma3_vs_llamacpp), TH_CASE(device_refuses_clearly),
    };
    return th_run("llm_gemma", NULL, cases, TH_COUNT(cases), argc - 1, argv + 1) ? 1 : 0;
}
