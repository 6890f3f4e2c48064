/* SPDX-License-Identifier: MIT */
/*
 * test_llm_batch.c - batched decode (llm_batch_*) against the same prompts run alone. Tiny
 * random-weight models (llama Q8_0 of width 256 and 2048, llama Q4_K of width 2048, qwen2 F16 with Q/K/V
 * biases, qwen3 Q6_K with head norms, phi3 F16 with fused tensors; GPT-2 vocabulary cut to 2048 ids) on every
 * device that opens (cpu, then HCQ_TEST_DEVS, else emu:gh100 cuda:0 rm:0). Five prompts of different lengths
 * (fresh random ids each run) share three slots: sequences join at different steps, leave after STEPS tokens,
 * and a freed slot takes the next prompt, so every step mixes lengths. Each sequence's greedy tokens must
 * equal the prompt's alone (llm_model_eval, the per-op path the batch runs too), and its logits stay within
 * NMSE 1e-7 of them on cpu and emu (the twins add in one order whatever the rows: 0 measured) and 1e-6 on a
 * GPU, where the one-row matmul (a block per weight row) and the several-row one (a warp per row) add in
 * different orders and the f16 cache turns such last-bit differences into whole ulps near a rounding boundary
 * (H200, 86bf03dbed: 1.6e-7 Q8_0, 1.2e-7 Q6_K). A second pass runs the batch steps' matmuls on tensor cores
 * (gemm_min_batch 2: f16 operands; bound 1e-5), feeding each sequence the tokens it took alone (a near-tie
 * may pick otherwise there; the picks that differ are printed; the width-2048 models, there for the kernels
 * that read quantized rows on tensor cores, run that pass only). The two prompts that join first are
 * prefilled together (llm_batch_prefill, passes of 8 rows). Then the errors: an unknown or repeated sequence,
 * n = 0, a full batch, a prompt past n_ctx (nothing appended), and a full sequence in a step (HCQ_ERR_NOMEM
 * for it alone, the other stepped correctly).
 */
#include "harness.h"
#include "proc_count.h" /* PROC_ASAN */
#include "llm_match.h"
#include "llm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STEPS 10
#define N_PROMPT 5
#define N_SEQ 3
#define MAX_PROMPT 13

static enum hcq_status
gen(const char *preset, enum llm_type type, char *path, size_t path_B)
{
    return llm_match_gen("batch_", preset, type, 4321, 2048, path, path_B);
}

struct prompts {
    int32_t ids[N_PROMPT][MAX_PROMPT];
    uint32_t len[N_PROMPT];
    int32_t tok[N_PROMPT][STEPS]; /* the greedy tokens alone */
    float *lg;                    /* [N_PROMPT][STEPS][V] their logits */
};

/* Each prompt alone: prefill, then STEPS tokens (the logits before each): greedy, or with sp
 * (non-NULL) prompt j's sampler on the host, its window holding the prompt first. */
static enum hcq_status
run_alone(struct llm_model *m, struct prompts *p, uint32_t V, const struct llm_sampler_params *sp)
{
    enum hcq_status st = HCQ_OK;
    for (int j = 0; j < N_PROMPT && !st; j++) {
        struct llm_sampler *hs = NULL;
        if (sp && (st = llm_sampler_create(&sp[j], V, &hs)))
            break;
        for (uint32_t i = 0; hs && i < p->len[j]; i++)
            llm_sampler_accept(hs, p->ids[j][i]);
        st = llm_model_eval(m, p->ids[j], p->len[j], 0);
        for (uint32_t s = 0; s < STEPS && !st; s++) {
            const float *l = llm_model_logits(m);
            memcpy(p->lg + ((size_t)j * STEPS + s) * V, l, 4ull * V);
            p->tok[j][s] = hs ? llm_sampler_sample(hs, l) : llm_match_argmax(l, V);
            if (hs)
                llm_sampler_accept(hs, p->tok[j][s]);
            if (s + 1 < STEPS)
                st = llm_model_eval(m, &p->tok[j][s], 1, p->len[j] + s);
        }
        llm_sampler_destroy(hs);
    }
    return st;
}

/* The prompts through a batch of N_SEQ slots, logits against alone. force: each step feeds the
 * token the prompt took alone (its picks counted, not required: with f16 matmul operands a
 * near-tie may go the other way, and after that the two runs would compare different texts). */
static void
run_batch(struct th *t, struct llm_model *m, const struct prompts *p, uint32_t V, const char *label,
          double bound, bool force, const struct llm_sampler_params *sp, bool twins)
{
    int differ = 0, multi = 0, parted = 0;
    bool apart[N_PROMPT] = {false}; /* sp: the prompt's tokens left the ones alone (compared no further) */
    struct llm_batch *b = NULL;
    float *lg = malloc(4ull * N_SEQ * V);
    struct llm_batch_params bp = {.n_seq = N_SEQ, .n_ctx = 48};
    int who[N_SEQ];       /* prompt in each slot, -1: free */
    uint32_t done[N_SEQ]; /* tokens produced in each slot */
    int32_t last[N_SEQ];
    int next = 0, finished = 0, join_at[N_PROMPT] = {0, 0, 2, 3, 4};
    double worst = 0;
    CHECK(lg);
    CHECK_OK(llm_batch_create(m, &bp, &b));
    for (int i = 0; i < N_SEQ; i++)
        who[i] = -1;
    for (int step = 0; finished < N_PROMPT && step < 100; step++) {
        /* admit: the prompts whose turn has come take free slots; several at once are prefilled
         * together (llm_batch_prefill: packed into passes of n_batch 8 rows, so a prompt may span
         * two), one alone with llm_batch_seq_prefill */
        uint32_t aq[N_SEQ], alen[N_SEQ], na = 0;
        const int32_t *aids[N_SEQ];
        int32_t afirst[N_SEQ];
        int aj[N_SEQ];
        while (next < N_PROMPT && join_at[next] <= step) {
            uint32_t q;
            if (llm_batch_seq_add(b, &q) != HCQ_OK)
                break;
            CHECK(q < N_SEQ && who[q] == -1);
            if (sp) /* its sampler, the prompt in its window (the device state when it samples there) */
                CHECK_OK(llm_batch_seq_sampler(b, q, &sp[next], p->ids[next], p->len[next]));
            aq[na] = q, aids[na] = p->ids[next], alen[na] = p->len[next], aj[na++] = next;
            who[q] = next++, done[q] = 1;
        }
        if (na == 1)
            CHECK_OK(llm_batch_seq_prefill(b, aq[0], aids[0], alen[0], lg, &afirst[0]));
        else if (na > 1)
            CHECK_OK(llm_batch_prefill(b, aq, aids, alen, na, lg, afirst));
        multi += na > 1 ? na : 0;
        for (uint32_t k = 0; k < na; k++) {
            const int j = aj[k];
            worst = fmax(worst, llm_match_nmse(lg + (size_t)k * V, p->lg + (size_t)j * STEPS * V, V));
            CHECKF(force || (sp && !twins) || afirst[k] == p->tok[j][0],
                   "%s prompt %d: first token %d, alone %d", label, j, afirst[k], p->tok[j][0]);
            differ += afirst[k] != p->tok[j][0];
            if (sp && afirst[k] != p->tok[j][0])
                apart[j] = true, parted++;
            last[aq[k]] = sp ? afirst[k] : p->tok[j][0];
        }
        uint32_t seqs[N_SEQ], n = 0;
        int32_t toks[N_SEQ], ids[N_SEQ];
        for (uint32_t q = 0; q < N_SEQ; q++)
            if (who[q] >= 0)
                seqs[n] = q, toks[n++] = last[q];
        if (!n)
            continue;
        enum hcq_status sts[N_SEQ];
        CHECK_OK(llm_batch_step(b, seqs, toks, n, lg, ids, sts));
        for (uint32_t i = 0; i < n; i++) {
            const uint32_t q = seqs[i];
            const int j = who[q];
            CHECK(sts[i] == HCQ_OK);
            if (!apart[j]) {
                worst = fmax(
                    worst, llm_match_nmse(lg + (size_t)i * V, p->lg + ((size_t)j * STEPS + done[q]) * V, V));
                CHECKF(force || (sp && !twins) || ids[i] == p->tok[j][done[q]],
                       "%s prompt %d token %u: %d in the batch, %d alone", label, j, done[q], ids[i],
                       p->tok[j][done[q]]);
                differ += ids[i] != p->tok[j][done[q]];
                if (sp && ids[i] != p->tok[j][done[q]])
                    apart[j] = true, parted++;
            }
            last[q] = sp ? ids[i] : p->tok[j][done[q]]; /* (= ids[i] unless force) */
            if (++done[q] == STEPS) {                   /* leaves; its slot is free for the next prompt */
                llm_batch_seq_remove(b, q);
                who[q] = -1, finished++;
            }
        }
    }
    CHECKF(finished == N_PROMPT, "%s: %d of %d prompts finished", label, finished, N_PROMPT);
    CHECKF(multi >= 2, "%s: %d prompts prefilled together", label, multi);
    printf("    %s: %d prompts in %d slots, worst logits NMSE %.3g against alone (bound %g), %d of %d picks "
           "differ\n",
           label, N_PROMPT, N_SEQ, worst, bound, differ, N_PROMPT * STEPS);
    CHECKF(worst < bound, "%s: logits NMSE %g", label, worst);
    /* sampled on a GPU: the device sampler's sums and expf against the host's move a draw within a
     * few ulp of a boundary (test_llm_sample allows 1 in 500): one prompt may part */
    CHECKF(!sp || parted <= (twins ? 0 : 1), "%s: %d of %d sampled prompts parted from alone", label, parted,
           N_PROMPT);
done:
    llm_batch_destroy(b);
    free(lg);
}

/* passes: bit 0 the per-op pass, bit 1 the tensor-core pass; bit 2: not on cpu (its twins are the
 * emulated GPU's: the same code twice) */
static void
one_model_sp(struct th *t, const char *preset, enum llm_type type, const struct llm_sampler_params *sp,
             unsigned passes)
{
    char path[256], devs[256], label[128];
    struct llm_gguf *g = NULL;
    struct prompts p;
    p.lg = NULL;
    CHECK_OK(gen(preset, type, path, sizeof path));
    CHECK_OK(llm_gguf_open(path, &g));
    for (int j = 0; j < N_PROMPT; j++) {
        p.len[j] = 3 + (uint32_t)(th_rand() % (MAX_PROMPT - 3));
        for (uint32_t i = 0; i < p.len[j]; i++)
            p.ids[j][i] = (int32_t)(th_rand() % 2048);
    }
    const char *env = getenv("HCQ_TEST_DEVS");
    snprintf(devs, sizeof devs, "cpu %s", env ? env : "emu:gh100 cuda:0 rm:0");
    for (char *save = NULL, *dn = strtok_r(devs, " ,", &save); dn; dn = strtok_r(NULL, " ,", &save)) {
        if (strcmp(dn, "cpu") ? !llm_match_device_usable(dn) : (passes & 4) != 0)
            continue;
        for (int tc = 0; tc < 2; tc++) {
            if (!(passes >> tc & 1))
                continue;
            struct llm_model_params mp;
            struct llm_model *m = NULL;
            llm_model_params_default(&mp);
            mp.dev_spec = dn;
            mp.n_ctx = 48;
            mp.n_batch = 8;
            mp.naive_decode = true;         /* alone: the per-op path a batch step runs */
            mp.gemm_min_batch = tc ? 2 : 0; /* tc: batch steps and prefills on tensor cores */
            CHECK_OK(llm_model_load_gguf(g, &mp, &m));
            const uint32_t V = llm_model_hparams(m)->n_vocab;
            if (!p.lg)
                CHECK((p.lg = malloc(4ull * N_PROMPT * STEPS * V)));
            enum hcq_status st = run_alone(m, &p, V, sp);
            if (st) {
                llm_model_destroy(m);
                CHECK_OK(st);
            }
            snprintf(label, sizeof label, "%s %s %s%s%s", dn, preset, llm_type_name(type),
                     tc ? " (tensor-core matmuls)" : "", sp ? " sampled" : "");
            const bool twins = !strcmp(dn, "cpu") || !strncmp(dn, "emu", 3);
            run_batch(t, m, &p, V, label, tc ? 1e-5 : twins ? 1e-7 : 1e-6, tc, sp, twins);
            llm_model_destroy(m);
        }
    }
done:
    llm_gguf_destroy(g);
    free(p.lg);
    unlink(path);
}

static void
one_model(struct th *t, const char *preset, enum llm_type type)
{
    one_model_sp(t, preset, type, NULL, 3);
}

/* Sequences that sample (k_llm_sample_part_rows / pick_rows in the steps and prefill passes, the
 * fused one-sequence step's sampler after it) beside greedy ones: each one's tokens equal the
 * prompt alone with its host sampler and the same seed. */
TEST(llama_q8_0_sampled_batch_vs_alone)
{
    struct llm_sampler_params sp[N_PROMPT];
    for (int j = 0; j < N_PROMPT; j++) {
        llm_sampler_params_default(&sp[j]);
        sp[j].seed = 1000 + (uint64_t)j;
        if (j % 3 == 1) /* llama.cpp's defaults: the top-k path */
            sp[j].temp = 0.8f, sp[j].top_k = 40, sp[j].top_p = 0.95f, sp[j].min_p = 0.05f,
            sp[j].repeat_penalty = 1.1f;
        else if (j % 3 == 2) /* OpenAI's: the whole vocabulary, with penalties */
            sp[j].temp = 1.0f, sp[j].presence_penalty = 0.3f, sp[j].frequency_penalty = 0.2f,
            sp[j].repeat_last_n = 16;
    }
    one_model_sp(t, "tiny", LLM_TYPE_Q8_0, sp, 1); /* (the per-op pass; greedy covers both) */
}

TEST(llama_q8_0_batch_vs_alone)
{
    one_model(t, "tiny", LLM_TYPE_Q8_0);
}
/* width 2048: the matrices are Q8_0R (whole 1024-value groups), so the tensor-core pass takes
 * k_llm_gemm_sk_q8_0 over the quantized rows instead of the f16 copy */
TEST(llama_2k_q8_0_batch_vs_alone)
{
    /* Under ASan (72 s of the sanitizer pass for both width-2048 models on 2 cores) they add only
     * the twins of the quantized-row matmuls, run in the plain build; the batch code is the tiny
     * models'. */
    if (PROC_ASAN)
        SKIP("width-2048 models skipped under AddressSanitizer (their batch code is the tiny models'; run in "
             "the plain build)");
    one_model_sp(t, "tiny-2k", LLM_TYPE_Q8_0, NULL, 2 | 4); /* (the per-op path: the tiny models) */
done:;
}
/* the same with Q4_K: k_llm_gemm_sk_q4_k over the Q4_KR rows */
TEST(llama_2k_q4_k_batch_vs_alone)
{
    if (PROC_ASAN)
        SKIP("width-2048 models skipped under AddressSanitizer (their batch code is the tiny models'; run in "
             "the plain build)");
    one_model_sp(t, "tiny-2k", LLM_TYPE_Q4_K, NULL, 2 | 4);
done:;
}
TEST(qwen2_f16_batch_vs_alone)
{
    one_model(t, "qwen2-tiny", LLM_TYPE_F16);
}
TEST(qwen3_q6_k_batch_vs_alone)
{
    one_model(t, "qwen3-tiny", LLM_TYPE_Q6_K);
}
TEST(phi3_f16_batch_vs_alone)
{
    one_model(t, "phi3-tiny", LLM_TYPE_F16);
}
/* Gemma 2: windowed layers (8 positions: the prompts and steps run past it), attention and final
 * soft-caps, post norms, GeGLU, the embedding scale */
TEST(gemma2_q8_0_batch_vs_alone)
{
    one_model(t, "gemma2-tiny", LLM_TYPE_Q8_0);
}

/* One sequence in a batch takes the model's fused decode step over its slot (llm_batch_step with
 * one row, a model without naive_decode): its tokens and logits equal the prompt run alone on the
 * same fused path, on every device; a second sequence that joins later (two rows: the batch
 * step, fed the alone tokens) leaves again, and the single-row steps after it still match. */
TEST(one_sequence_fused)
{
    char path[256], devs[256];
    struct llm_gguf *g = NULL;
    float *alone = NULL, *lg = NULL;
    CHECK_OK(gen("tiny", LLM_TYPE_Q8_0, path, sizeof path));
    CHECK_OK(llm_gguf_open(path, &g));
    int32_t pr[MAX_PROMPT];
    const uint32_t len = 3 + (uint32_t)(th_rand() % (MAX_PROMPT - 3));
    for (uint32_t i = 0; i < len; i++)
        pr[i] = (int32_t)(th_rand() % 2048);
    const char *env = getenv("HCQ_TEST_DEVS");
    snprintf(devs, sizeof devs, "cpu %s", env ? env : "emu:gh100 cuda:0 rm:0");
    for (char *save = NULL, *dn = strtok_r(devs, " ,", &save); dn && !t->failed;
         dn = strtok_r(NULL, " ,", &save)) {
        if (strcmp(dn, "cpu") && !llm_match_device_usable(dn))
            continue;
        struct llm_model_params mp;
        struct llm_model *m = NULL;
        struct llm_batch *b = NULL;
        llm_model_params_default(&mp);
        mp.gemm_min_batch = LLM_GEMM_MIN_BATCH_REF; /* the f32 per-op prefill the bounds here assume */
        mp.dev_spec = dn;
        mp.n_ctx = 48;
        mp.n_batch = 8;
        CHECK_OK(llm_model_load_gguf(g, &mp, &m));
        const uint32_t V = llm_model_hparams(m)->n_vocab;
        int32_t tok[STEPS], last, id, ids[2];
        double worst = 0;
        if (!alone)
            CHECK((alone = malloc(4ull * STEPS * V)) && (lg = malloc(8ull * V)));
        /* alone: the fused decode (its graph) */
        CHECK_OK(llm_model_eval(m, pr, len, 0));
        for (uint32_t s = 0; s < STEPS; s++) {
            memcpy(alone + (size_t)s * V, llm_model_logits(m), 4ull * V);
            tok[s] = llm_match_argmax(alone + (size_t)s * V, V);
            if (s + 1 < STEPS)
                CHECK_OK(llm_model_eval(m, &tok[s], 1, len + s));
        }
        struct llm_batch_params bp = {.n_seq = 2, .n_ctx = 48};
        uint32_t q, q2, two[2];
        CHECK_OK(llm_batch_create(m, &bp, &b));
        CHECK_OK(llm_batch_seq_add(b, &q2)); /* (so that q is slot 1: its offset in the cache counts) */
        CHECK_OK(llm_batch_seq_add(b, &q));
        llm_batch_seq_remove(b, q2);
        CHECK(q == 1);
        CHECK_OK(llm_batch_seq_prefill(b, q, pr, len, lg, &last));
        worst = llm_match_nmse(lg, alone, V);
        CHECKF(last == tok[0], "%s: first token %d, alone %d", dn, last, tok[0]);
        for (uint32_t s = 1; s < STEPS; s++) {
            if (s == 4) { /* a second sequence for steps 4 and 5 */
                CHECK_OK(llm_batch_seq_add(b, &q2));
                CHECK_OK(llm_batch_seq_prefill(b, q2, pr, 3, NULL, &id));
            }
            if (s == 4 || s == 5) {
                two[0] = q, two[1] = q2;
                const int32_t tt[2] = {last, id};
                CHECK_OK(llm_batch_step(b, two, tt, 2, lg, ids, NULL));
                if (ids[0] != tok[s]) /* (other kernels: a near-tie may go the other way) */
                    printf("    %s step %u (two rows): %d, alone %d\n", dn, s, ids[0], tok[s]);
                last = tok[s], id = ids[1];
                if (s == 5)
                    llm_batch_seq_remove(b, q2);
                continue; /* (the batch step's logits are compared in run_batch) */
            }
            CHECK_OK(llm_batch_step(b, &q, &last, 1, lg, &last, NULL));
            worst = fmax(worst, llm_match_nmse(lg, alone + (size_t)s * V, V));
            CHECKF(last == tok[s], "%s step %u: %d, alone %d", dn, s, last, tok[s]);
        }
        printf("    %s: one sequence on the fused path, worst logits NMSE %.3g against alone\n", dn, worst);
        CHECKF(worst < 1e-9, "%s: logits NMSE %g", dn, worst);
        llm_batch_destroy(b);
        llm_model_destroy(m);
    }
done:
    llm_gguf_destroy(g);
    free(alone), free(lg);
    unlink(path);
}

TEST(errors)
{
    char path[256];
    struct llm_gguf *g = NULL;
    struct llm_model *m = NULL;
    struct llm_batch *b = NULL;
    CHECK_OK(gen("tiny", LLM_TYPE_F16, path, sizeof path));
    CHECK_OK(llm_gguf_open(path, &g));
    struct llm_model_params mp;
    llm_model_params_default(&mp);
    mp.gemm_min_batch = LLM_GEMM_MIN_BATCH_REF; /* the f32 per-op prefill the bounds here assume */
    mp.dev_spec = "cpu";
    mp.n_ctx = 32;
    mp.n_batch = 4;
    mp.naive_decode = true; /* alone: the per-op path a batch step runs */
    CHECK_OK(llm_model_load_gguf(g, &mp, &m));
    struct llm_batch_params bp = {.n_seq = 8, .n_ctx = 16};
    CHECK(llm_batch_create(m, &bp, &b) == HCQ_ERR_INVALID); /* above the model's batch rows */
    bp.n_seq = 2, bp.n_ctx = 64;
    CHECK(llm_batch_create(m, &bp, &b) == HCQ_ERR_INVALID); /* above the model's context */
    bp.n_ctx = 16;
    CHECK_OK(llm_batch_create(m, &bp, &b));
    CHECK(llm_batch_n_seq(b) == 2 && llm_batch_n_ctx(b) == 16);
    uint32_t a, c, d;
    CHECK_OK(llm_batch_seq_add(b, &a));
    CHECK_OK(llm_batch_seq_add(b, &c));
    CHECK(llm_batch_seq_add(b, &d) == HCQ_ERR_NOMEM); /* every slot taken */
    int32_t pr[20], id = -1, ids[2];
    for (int i = 0; i < 20; i++)
        pr[i] = (int32_t)(th_rand() % 2048);
    CHECK(llm_batch_seq_prefill(b, a, pr, 17, NULL, NULL) == HCQ_ERR_NOMEM); /* past n_ctx */
    CHECK(llm_batch_seq_pos(b, a) == 0);                                     /* nothing appended */
    CHECK_OK(llm_batch_seq_prefill(b, a, pr, 16, NULL, NULL));               /* exactly full */
    CHECK_OK(llm_batch_seq_prefill(b, c, pr, 5, NULL, &id));
    uint32_t seqs[2] = {a, c}, bad[2] = {c, c}, gone = 5;
    int32_t toks[2] = {1, id}, badtok = 99999;
    enum hcq_status sts[2];
    CHECK(llm_batch_step(b, bad, toks, 2, NULL, ids, NULL) == HCQ_ERR_INVALID);   /* repeated */
    CHECK(llm_batch_step(b, &gone, toks, 1, NULL, ids, NULL) == HCQ_ERR_INVALID); /* no such slot */
    CHECK(llm_batch_step(b, seqs, toks, 0, NULL, ids, NULL) == HCQ_ERR_INVALID);  /* n = 0 */
    CHECK(llm_batch_step(b, &c, &badtok, 1, NULL, ids, NULL) == HCQ_ERR_INVALID); /* token */
    CHECK_OK(llm_batch_step(b, seqs, toks, 2, NULL, ids, sts));
    CHECK(sts[0] == HCQ_ERR_NOMEM && ids[0] == -1 && llm_batch_seq_pos(b, a) == 16); /* full: not stepped */
    CHECK(sts[1] == HCQ_OK && ids[1] >= 0 && llm_batch_seq_pos(b, c) == 6);
    /* c's token equals the same prompt alone */
    CHECK_OK(llm_model_eval(m, pr, 5, 0));
    CHECK_OK(llm_model_eval(m, &id, 1, 5));
    CHECK(ids[1] == llm_match_argmax(llm_model_logits(m), llm_model_hparams(m)->n_vocab));
    llm_batch_seq_remove(b, a);
    CHECK_OK(llm_batch_seq_add(b, &d));
    CHECK(d == a && llm_batch_seq_pos(b, d) == 0);
done:
    llm_batch_destroy(b);
    llm_model_destroy(m);
    llm_gguf_destroy(g);
    unlink(path);
}

int
main(int argc, char **argv)
{
    static const struct th_case cases[] = {
        TH_CASE(llama_q8_0_batch_vs_alone),    TH_CASE(llama_q8_0_sampled_batch_vs_alone),
        TH_CASE(llama_2k_q8_0_batch_vs_alone), TH_CASE(llama_2k_q4_k_batch_vs_alone),
        TH_CASE(qwen2_f16_batch_vs_alone),     TH_CASE(qwen3_q6_k_batch_vs_alone),
        TH_CASE(phi3_f16_batch_vs_alone),      TH_CASE(gemma2_q8_0_batch_vs_alone),
        TH_CASE(one_sequence_fused),           TH_CASE(errors)};
    return th_run("llm_batch", NULL, cases, TH_COUNT(cases), argc - 1, argv + 1) ? 1 : 0;
}
