/* SPDX-License-Identifier: MIT */
/*
 * test_llm_ppl.c - perplexity by llama.cpp's method (llm_perplexity, `nvhcq perplexity`).
 * The oracle is computed here, independently: the reference forward pass (llm_ref, sums in
 * double) one token at a time over each chunk, log-softmax and the running / final
 * estimates and the standard error in long double from the per-token values (two-pass
 * variance). Compared with it: llm_perplexity on cpu, emu:gh100 and every other device of
 * HCQ_TEST_DEVS that opens, for chunks of 64 (prefill under the tensor-core batch size) and
 * 128 (prefill of 65 tokens through the f16 tensor-core path), prefill split in batches; and
 * the text printed by the nvhcq binary beside this test on cpu and emu:gh100. Also: the
 * log-softmax and the error formula on hand-computed cases, the tokenization rules, and the
 * bad inputs (text under 2 x n_ctx tokens, context out of range, token out of range).
 * Model: tests/data/models/tinystories-656k.gguf; text: tests/data/text/story-ppl.txt
 * (tests/data/README.md gives both origins).
 */
#include "harness.h"
#include "llm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MODEL "tests/data/models/tinystories-656k.gguf"
#define TEXT "tests/data/text/story-ppl.txt"
/* Bounds on |PPL - oracle| / oracle (running estimates included). cpu and emu run the
 * kernels' f32 twins; with 64-token chunks (prefill of 33, under the tensor-core batch size)
 * the measured difference was 1.4e-7 (worst running 3.2e-7) when this test was written:
 * bound 1e-5. With 128-token chunks the prefill of 65 tokens runs f16 tensor-core matmuls
 * (the first half's K/V pass through f16): measured 2.9e-5 (worst running 8.7e-5): bound
 * 5e-4, still 10x under the 0.5% the comparison with llama.cpp asks for. The standard
 * error gets 10x each bound. */
#define PPL_REL_BOUND_F32 1e-5
#define PPL_REL_BOUND_F16 5e-4

static char cli_path[4096] = "build/nvhcq";

static char *
read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *s = NULL;
    long n;
    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (s = malloc(n + 1))) {
        *len = fread(s, 1, n, f);
        s[*len] = 0;
    }
    fclose(f);
    return s;
}

/* The oracle: per-chunk running estimates run[c] and the final ppl / err. */
struct oracle {
    uint32_t n_chunks;
    uint64_t count;
    double run[64];
    double ppl, err;
};

static enum hcq_status
oracle_ppl(const struct llm_gguf *g, const int32_t *ids, size_t n, uint32_t n_ctx, int32_t bos,
           struct oracle *o)
{
    struct llm_ref *ref = NULL;
    enum hcq_status st = llm_ref_create(g, n_ctx, &ref);
    if (st)
        return st;
    uint32_t V = llm_ref_hparams(ref)->n_vocab;
    size_t n_chunks = n / n_ctx;
    float *lg = malloc(4ull * V);
    long double *nll = malloc(sizeof *nll * n);
    memset(o, 0, sizeof *o);
    if (!lg || !nll || n_chunks > 64) {
        st = HCQ_ERR_NOMEM;
        goto out;
    }
    long double sum = 0;
    for (size_t c = 0; c < n_chunks && !st; c++) {
        const int32_t *ct = ids + c * n_ctx;
        for (uint32_t j = 0; j + 1 < n_ctx && !st; j++) {
            int32_t in = j == 0 && bos >= 0 ? bos : ct[j];
            if ((st = llm_ref_eval(ref, &in, 1, j, lg)) || j < n_ctx / 2)
                continue;
            long double mx = lg[0], s = 0;
            for (uint32_t v = 1; v < V; v++)
                mx = lg[v] > mx ? lg[v] : mx;
            for (uint32_t v = 0; v < V; v++)
                s += expl(lg[v] - mx);
            nll[o->count] = -(lg[ct[j + 1]] - mx - logl(s));
            sum += nll[o->count++];
        }
        o->run[o->n_chunks++] = (double)expl(sum / o->count);
    }
    long double mean = sum / o->count, var = 0;
    for (uint64_t i = 0; i < o->count; i++)
        var += (nll[i] - mean) * (nll[i] - mean);
    var /= o->count;
    o->ppl = (double)expl(mean);
    o->err = (double)(expl(mean) * sqrtl(var / (o->count - 1)));
out:
    free(lg);
    free(nll);
    llm_ref_destroy(ref);
    return st;
}

TEST(log_softmax_hand_cases)
{
    const float a[3] = {1, 2, 3};
    double want = 3 - log(exp(1) + exp(2) + exp(3));
    CHECKF(fabs(llm_log_softmax(a, 3, 2) - want) < 1e-12, "%.15g vs %.15g", llm_log_softmax(a, 3, 2), want);
    /* large logits: max-shifted, no overflow */
    const float b[2] = {1000, 1000};
    CHECKF(fabs(llm_log_softmax(b, 2, 1) + log(2.0)) < 1e-12, "%.15g", llm_log_softmax(b, 2, 1));
    /* a 128k vocabulary of equal logits: -log(131072) exactly enough */
    static float c[131072];
    for (uint32_t i = 0; i < 131072; i++)
        c[i] = -7.25f;
    CHECKF(fabs(llm_log_softmax(c, 131072, 99) + log(131072.0)) < 1e-9, "%.15g",
           llm_log_softmax(c, 131072, 99));
done:;
}

TEST(error_formula_hand_case)
{
    /* nll values 1, 2, 3, 4: mean 2.5, population variance 1.25 */
    struct llm_ppl_result r = {.count = 4, .nll_sum = 10, .nll2_sum = 30};
    llm_ppl_finish(&r);
    CHECKF(fabs(r.ppl - exp(2.5)) < 1e-12 * exp(2.5), "ppl %.15g", r.ppl);
    double err = exp(2.5) * sqrt(1.25 / 3);
    CHECKF(fabs(r.ppl_err - err) < 1e-12 * err, "err %.15g vs %.15g", r.ppl_err, err);
    struct llm_ppl_result z = {.count = 3, .nll_sum = 6, .nll2_sum = 12}; /* all 2: no variance */
    llm_ppl_finish(&z);
    CHECK(fabs(z.ppl - exp(2.0)) < 1e-12 && isnan(z.ppl_err));
    struct llm_ppl_result e = {0};
    llm_ppl_finish(&e);
    CHECK(isnan(e.ppl) && isnan(e.ppl_err));
done:;
}

/* BOS first (this vocabulary adds it), one trailing newline dropped, only one. */
TEST(tokenize_rules)
{
    struct llm_gguf *g = NULL;
    struct llm_tok *tok = NULL;
    int32_t *a = NULL, *b = NULL, *c = NULL;
    size_t na, nb, nc;
    CHECK_OK(llm_gguf_open(MODEL, &g));
    CHECK_OK(llm_tok_create(g, &tok));
    CHECK(llm_tok_add_bos_default(tok));
    CHECK_OK(llm_ppl_tokenize(tok, "The cat sat.", 12, &a, &na));
    CHECK_OK(llm_ppl_tokenize(tok, "The cat sat.\n", 13, &b, &nb));
    CHECK_OK(llm_ppl_tokenize(tok, "The cat sat.\n\n", 14, &c, &nc));
    CHECKF(na >= 2 && a[0] == llm_tok_bos(tok), "%zu ids, first %d", na, na ? a[0] : -1);
    CHECKF(nb == na && !memcmp(a, b, na * sizeof *a), "trailing newline kept: %zu vs %zu ids", nb, na);
    /* two newlines: one stays, as the tokenizer encodes it */
    int32_t d[64];
    size_t nd;
    CHECK_OK(llm_tok_encode(tok, "The cat sat.\n", 13, true, false, d, 64, &nd));
    CHECKF(nc == nd && !memcmp(c, d, nd * sizeof *d) && memcmp(c, a, na * sizeof *a), "two newlines: %zu ids",
           nc);
done:
    free(a);
    free(b);
    free(c);
    llm_tok_destroy(tok);
    llm_gguf_destroy(g);
}

struct runs {
    uint32_t n;
    double v[64];
};
static void
on_chunk(uint32_t chunk, double ppl, void *user)
{
    struct runs *r = user;
    if (chunk == r->n + 1 && r->n < 64)
        r->v[r->n++] = ppl;
}

/* llm_perplexity on each device vs the oracle: running estimates, PPL and its error. */
TEST(devices_match_reference)
{
    struct llm_gguf *g = NULL;
    struct llm_model *m = NULL;
    struct llm_tok *tok = NULL;
    int32_t *ids = NULL;
    size_t n = 0, len = 0;
    char *text = read_all(TEXT, &len), devs[256];
    const char *env = getenv("HCQ_TEST_DEVS");
    snprintf(devs, sizeof devs, "cpu emu:gh100 %s", env ? env : "");
    CHECK(text);
    CHECK_OK(llm_gguf_open(MODEL, &g));
    CHECK_OK(llm_tok_create(g, &tok));
    CHECK_OK(llm_ppl_tokenize(tok, text, len, &ids, &n));
    CHECKF(n >= 256, "%s: %zu tokens", TEXT, n);
    for (int k = 0; k < 2; k++) {
        uint32_t n_ctx = k ? 128 : 64;
        struct oracle o;
        CHECK_OK(oracle_ppl(g, ids, n, n_ctx, llm_tok_bos(tok), &o));
        printf("    n_ctx %u: %u chunks, %llu scored; reference PPL %.6f +/- %.6f\n", n_ctx, o.n_chunks,
               (unsigned long long)o.count, o.ppl, o.err);
        char list[256];
        snprintf(list, sizeof list, "%s", devs);
        for (char *save = NULL, *d = strtok_r(list, " ,", &save); d; d = strtok_r(NULL, " ,", &save)) {
            bool dup = false; /* HCQ_TEST_DEVS may name cpu or emu:gh100 again */
            for (const char *e = devs; e < devs + (d - list) && !dup; e++)
                dup = !strncmp(e, d, strlen(d)) && (e == devs || e[-1] == ' ') &&
                      (e[strlen(d)] == ' ' || e[strlen(d)] == ',' || !e[strlen(d)]);
            if (dup)
                continue;
            struct hcq_device *probe = NULL;
            if (hcq_device_open(d, &probe) != HCQ_OK) {
                printf("      %s: does not open here, skipped\n", d);
                continue;
            }
            hcq_device_close(probe);
            struct llm_model_params mp;
            llm_model_params_default(&mp);
            mp.gemm_min_batch = LLM_GEMM_MIN_BATCH_REF; /* the f32 per-op prefill the bounds here assume */
            mp.dev_spec = d;
            mp.n_ctx = n_ctx;
            mp.n_batch = k ? 128 : 24; /* 64: the prefill of 33 spans two batches */
            CHECK_OK(llm_model_load_gguf(g, &mp, &m));
            struct runs r = {0};
            struct llm_ppl_params pp = {.n_ctx = n_ctx, .on_chunk = on_chunk, .user = &r};
            struct llm_ppl_result res;
            CHECK_OK(llm_perplexity(m, ids, n, &pp, &res));
            double worst = 0;
            for (uint32_t c = 0; c < r.n && c < o.n_chunks; c++)
                worst = fmax(worst, fabs(r.v[c] - o.run[c]) / o.run[c]);
            double rel = fabs(res.ppl - o.ppl) / o.ppl, rel_err = fabs(res.ppl_err - o.err) / o.err;
            printf("      %-10s PPL %.6f +/- %.6f: rel. diff %.2g (running: worst %.2g, error %.2g)\n", d,
                   res.ppl, res.ppl_err, rel, worst, rel_err);
            CHECKF(res.n_chunks == o.n_chunks && r.n == o.n_chunks && res.count == o.count,
                   "%s: %u chunks (%u reported), %llu scored; reference %u, %llu", d, res.n_chunks, r.n,
                   (unsigned long long)res.count, o.n_chunks, (unsigned long long)o.count);
            double bound = k ? PPL_REL_BOUND_F16 : PPL_REL_BOUND_F32;
            CHECKF(rel < bound && worst < bound, "%s n_ctx %u: PPL %.6f vs %.6f (running: worst %.2g)", d,
                   n_ctx, res.ppl, o.ppl, worst);
            CHECKF(rel_err < 10 * bound, "%s: error %.6f vs %.6f", d, res.ppl_err, o.err);
            llm_model_destroy(m);
            m = NULL;
        }
    }
done:
    llm_model_destroy(m);
    llm_tok_destroy(tok);
    llm_gguf_destroy(g);
    free(ids);
    free(text);
}

/* `nvhcq perplexity` itself: the printed running estimates and final line vs the oracle. */
TEST(cli_matches_reference)
{
    struct llm_gguf *g = NULL;
    struct llm_tok *tok = NULL;
    int32_t *ids = NULL;
    size_t n = 0, len = 0;
    char *text = read_all(TEXT, &len), cmd[sizeof cli_path + 512], out[4096];
    FILE *f = fopen(cli_path, "rb");
    if (!f)
        SKIP("%.200s not built", cli_path);
    fclose(f);
    CHECK(text);
    CHECK_OK(llm_gguf_open(MODEL, &g));
    CHECK_OK(llm_tok_create(g, &tok));
    CHECK_OK(llm_ppl_tokenize(tok, text, len, &ids, &n));
    struct oracle o;
    CHECK_OK(oracle_ppl(g, ids, n, 64, llm_tok_bos(tok), &o));
    static const char *const devs[] = {"cpu", "emu:gh100"};
    for (int i = 0; i < 2; i++) {
        int w = snprintf(cmd, sizeof cmd, "'%s' perplexity -m %s -f %s -c 64 -b 16 --dev %s 2>/dev/null",
                         cli_path, MODEL, TEXT, devs[i]);
        CHECK(w > 0 && (size_t)w < sizeof cmd);
        FILE *p = popen(cmd, "r");
        CHECK(p);
        size_t got = fread(out, 1, sizeof out - 1, p);
        out[got] = 0;
        int rc = pclose(p);
        CHECKF(rc == 0, "%s: exit status %d", cmd, rc);
        /* "[1]x,[2]y,...\nFinal estimate: PPL = X +/- Y\n" */
        const char *s = out;
        for (uint32_t c = 0; c < o.n_chunks; c++) {
            unsigned idx;
            double v;
            int used = 0;
            CHECKF(sscanf(s, "[%u]%lf,%n", &idx, &v, &used) == 2 && used > 0 && idx == c + 1,
                   "%s: chunk %u in '%s'", devs[i], c + 1, out);
            CHECKF(fabs(v - o.run[c]) < 5e-5 + PPL_REL_BOUND_F32 * o.run[c], "%s: [%u]%.4f vs reference %.6f",
                   devs[i], c + 1, v, o.run[c]);
            s += used;
        }
        double ppl, err;
        const char *fin = strstr(out, "Final estimate: PPL = ");
        CHECKF(fin && sscanf(fin, "Final estimate: PPL = %lf +/- %lf", &ppl, &err) == 2,
               "%s: no final line in '%s'", devs[i], out);
        printf("    %-10s nvhcq perplexity: PPL = %.4f +/- %.5f; reference %.6f +/- %.6f\n", devs[i], ppl,
               err, o.ppl, o.err);
        CHECKF(fabs(ppl - o.ppl) < 5e-5 + PPL_REL_BOUND_F32 * o.ppl, "%s: PPL %.4f vs %.6f", devs[i], ppl,
               o.ppl);
        CHECKF(fabs(err - o.err) < 5e-6 + 10 * PPL_REL_BOUND_F32 * o.err, "%s: error %.5f vs %.6f", devs[i],
               err, o.err);
    }
done:
    llm_tok_destroy(tok);
    llm_gguf_destroy(g);
    free(ids);
    free(text);
}

/* Bad inputs: a clear HCQ_ERR_INVALID, nothing evaluated. */
TEST(bad_inputs)
{
    struct llm_model *m = NULL;
    struct llm_model_params mp;
    llm_model_params_default(&mp);
    mp.gemm_min_batch = LLM_GEMM_MIN_BATCH_REF; /* the f32 per-op prefill the bounds here assume */
    mp.dev_spec = "cpu";
    mp.n_ctx = 64;
    CHECK_OK(llm_model_load(MODEL, &mp, &m));
    int32_t ids[200];
    for (int i = 0; i < 200; i++)
        ids[i] = 10 + i;
    struct llm_ppl_params pp = {.n_ctx = 64};
    struct llm_ppl_result r;
    CHECK(llm_perplexity(m, ids, 127, &pp, &r) == HCQ_ERR_INVALID);
    CHECKF(strstr(hcq_last_error(), "has 127 tokens") && strstr(hcq_last_error(), "at least 128"), "'%s'",
           hcq_last_error());
    CHECK(isnan(r.ppl) && r.count == 0);
    pp.n_ctx = 3;
    CHECK(llm_perplexity(m, ids, 200, &pp, &r) == HCQ_ERR_INVALID);
    pp.n_ctx = 65; /* above the model's context of 64 */
    CHECK(llm_perplexity(m, ids, 200, &pp, &r) == HCQ_ERR_INVALID);
    CHECKF(strstr(hcq_last_error(), "context 65"), "'%s'", hcq_last_error());
    pp.n_ctx = 64;
    ids[150] = 1 << 20;
    CHECK(llm_perplexity(m, ids, 200, &pp, &r) == HCQ_ERR_INVALID);
    CHECKF(strstr(hcq_last_error(), "at 150"), "'%s'", hcq_last_error());
    ids[150] = 5;
    pp.n_chunks = 1; /* exactly 2 x n_ctx tokens: fine, and --chunks limits */
    CHECK_OK(llm_perplexity(m, ids, 128, &pp, &r));
    CHECKF(r.n_chunks == 1 && r.count == 31 && r.ppl > 1, "%u chunks, %llu scored, ppl %g", r.n_chunks,
           (unsigned long long)r.count, r.ppl);
done:
    llm_model_destroy(m);
}

int
main(int argc, char **argv)
{
    /* the CLI sits beside the tests' directory: BUILD/tests/test_llm_ppl -> BUILD/nvhcq */
    const char *slash = strrchr(argv[0], '/');
    if (slash)
        snprintf(cli_path, sizeof cli_path, "%.*s/../nvhcq", (int)(slash - argv[0]), argv[0]);
    static const struct th_case cases[] = {
        TH_CASE(log_softmax_hand_cases),  TH_CASE(error_formula_hand_case), TH_CASE(tokenize_rules),
        TH_CASE(devices_match_reference), TH_CASE(cli_matches_reference),   TH_CASE(bad_inputs),
    };
    return th_run("llm_ppl", NULL, cases, TH_COUNT(cases), argc - 1, argv + 1) ? 1 : 0;
}
