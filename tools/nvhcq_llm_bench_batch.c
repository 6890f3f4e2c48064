/* SPDX-License-Identifier: MIT */
/*
 * nvhcq_llm_bench_batch.c - `nvhcq llm-bench --batch B1,B2..`: batched decode throughput as
 * llama-batched-bench reports it. Per B: a batch of B sequences (llm_batch_*), each with its own
 * -p random prompt tokens, all prefilled in one llm_batch_prefill (passes shared by the prompts,
 * each one's first token sampled), then -n steps of all B sequences together (llm_batch_step with greedy
 * slots: the picks made on the device, B ids read back: what a caller of the batch API gets). Columns as
 * llama-batched-bench's: PP, TG, B, N_KV = B x (PP + TG), T_PP / S_PP (prefill time and B x PP / T_PP), T_TG
 * / S_TG (generation time and B x TG / T_TG), T / S (both), plus the step time p50 / p99 in ms (the latency
 * each sequence sees per token). One warm-up round of the first B first (untimed). Layer: tools.
 */
#include "hcq.h"
#include "llm.h"
#include "nvhcq_cli.h"
#include "nvhcq_llm_bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct batch_rec {
    uint32_t pp, tg, b;
    double t_pp, t_tg, p50_ms, p99_ms;
    struct llm_prof_row prof[64]; /* --profile: one more step's rows */
    uint32_t n_prof;
    double prof_us;
};

static int
cmp_dbl(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* One B: prefill B prompts, then tg steps of all of them. */
static int
run_one(struct llm_model *m, uint32_t B, uint32_t pp, uint32_t tg, bool profile, struct batch_rec *r)
{
    const uint32_t V = llm_model_hparams(m)->n_vocab;
    struct llm_batch *b = NULL;
    struct llm_batch_params bp = {.n_seq = B, .n_ctx = pp + tg + 2};
    const uint32_t plen = pp ? pp : 1;
    int32_t *prompt = malloc(4ull * plen * B), *tok = malloc(4ull * B), *ids = malloc(4ull * B);
    uint32_t *seqs = malloc(4ull * B), *lens = malloc(4ull * B);
    const int32_t **pr = malloc(sizeof *pr * B);
    double *step_ms = malloc(sizeof(double) * (tg ? tg : 1));
    int rc = 1;
    if (!prompt || !tok || !ids || !seqs || !lens || !pr || !step_ms) {
        cli_fail("llm-bench", "--batch: out of host memory");
        goto done;
    }
    if (llm_batch_create(m, &bp, &b)) {
        cli_fail("llm-bench", "--batch %u: %s", B, hcq_last_error());
        goto done;
    }
    uint64_t x = 0x9E3779B97F4A7C15ull ^ B;
    for (uint32_t i = 0; i < B; i++) {
        for (uint32_t j = 0; j < plen; j++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            prompt[(size_t)i * plen + j] = (int32_t)(x % V);
        }
        pr[i] = prompt + (size_t)i * plen, lens[i] = plen;
        if (llm_batch_seq_add(b, &seqs[i])) {
            cli_fail("llm-bench", "--batch %u: %s", B, hcq_last_error());
            goto done;
        }
    }
    /* the B prompts together (llm_batch_prefill: passes shared up to the model's n_batch rows) */
    uint64_t t0 = hcq_time_ns();
    if (llm_batch_prefill(b, seqs, pr, lens, B, NULL, tok)) {
        cli_fail("llm-bench", "--batch %u: %s", B, hcq_last_error());
        goto done;
    }
    r->t_pp = (hcq_time_ns() - t0) * 1e-9;
    t0 = hcq_time_ns();
    for (uint32_t s = 0; s < tg; s++) {
        const uint64_t s0 = hcq_time_ns();
        if (llm_batch_step(b, seqs, tok, B, NULL, ids, NULL)) {
            cli_fail("llm-bench", "--batch %u step %u: %s", B, s, hcq_last_error());
            goto done;
        }
        memcpy(tok, ids, 4ull * B);
        step_ms[s] = (hcq_time_ns() - s0) * 1e-6;
    }
    r->t_tg = (hcq_time_ns() - t0) * 1e-9;
    r->pp = pp, r->tg = tg, r->b = B;
    r->p50_ms = r->p99_ms = 0;
    if (tg) {
        qsort(step_ms, tg, sizeof *step_ms, cmp_dbl);
        r->p50_ms = step_ms[tg / 2];
        r->p99_ms = step_ms[(uint32_t)((tg - 1) * 0.99 + 0.5)];
    }
    r->n_prof = 0;
    if (profile && llm_batch_profile_step(b, seqs, tok, B, ids, r->prof, 64, &r->n_prof, &r->prof_us)) {
        cli_fail("llm-bench", "--batch %u --profile: %s", B, hcq_last_error());
        goto done;
    }
    rc = 0;
done:
    llm_batch_destroy(b);
    free(prompt), free(tok), free(ids), free(seqs), free(lens), free(pr), free(step_ms);
    return rc;
}

/* tokens/s of n tokens in t seconds (0 when nothing was timed) */
static double
rate(uint64_t n, double t)
{
    return t > 0 ? (double)n / t : 0;
}

static void
json_rec(FILE *f, const struct llm_bench_meta *mt, const struct batch_rec *r, bool last)
{
    const double t = r->t_pp + r->t_tg;
    const double s_pp = rate((uint64_t)r->b * r->pp, r->t_pp), s_tg = rate((uint64_t)r->b * r->tg, r->t_tg);
    fprintf(f, "  {\"model\": ");
    cli_json_str(f, mt->model);
    fprintf(f, ", \"type\": ");
    cli_json_str(f, mt->type);
    fprintf(f, ", \"backend\": ");
    cli_json_str(f, mt->info->backend);
    fprintf(f, ", \"device\": ");
    cli_json_str(f, mt->info->spec);
    fprintf(f, ", \"gpu\": ");
    cli_json_str(f, mt->info->name);
    fprintf(f, ", \"driver\": ");
    cli_json_str(f, mt->info->driver);
    fprintf(f, ", \"commit\": ");
    cli_json_str(f, mt->commit);
    fprintf(
        f,
        ",\n   \"test\": \"batch\", \"pp\": %u, \"tg\": %u, \"b\": %u, \"n_kv\": %u, \"t_pp\": %.4f, "
        "\"s_pp\": %.2f, \"t_tg\": %.4f, \"s_tg\": %.2f, \"t\": %.4f, \"s\": %.2f, \"step_ms_p50\": %.4f, "
        "\"step_ms_p99\": %.4f}%s\n",
        r->pp, r->tg, r->b, r->b * (r->pp + r->tg), r->t_pp, s_pp, r->t_tg, s_tg, t,
        rate((uint64_t)r->b * (r->pp + r->tg), t), r->p50_ms, r->p99_ms, last ? "" : ",");
}

int
nvhcq_llm_bench_batch(struct llm_model *m, const uint32_t *bs, uint32_t n_b, uint32_t pp, uint32_t tg,
                      int warm_ms, const struct llm_bench_meta *mt, bool md, bool profile, FILE *jf)
{
    struct batch_rec recs[16];
    if (n_b > 16)
        return cli_fail("llm-bench", "--batch: at most 16 sizes");
    /* warm-up (first launches, graphs; on rm/nvgpu the clock ramp, see nvhcq_llm_bench.c): the
     * first size, untimed, at least once and for warm_ms (after one short round the first row of
     * an rm:0 run on an idle H200 measured Q4_K_M B=1 at 878 tokens/s and its prefill at 6.0k,
     * Q8_0 right after on the busy GPU 1769 and 28.6k) */
    for (uint64_t w0 = hcq_time_ns(), k = 0; !k || hcq_time_ns() - w0 < (uint64_t)warm_ms * 1000000u; k++)
        if (run_one(m, bs[0], pp, tg < 16 ? tg : 16, false, &recs[0]))
            return 1;
    if (md)
        printf("| PP | TG | B | N_KV | T_PP s | S_PP t/s | T_TG s | S_TG t/s | T s | S t/s | step ms p50 | "
               "step ms "
               "p99 |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (uint32_t i = 0; i < n_b; i++) {
        struct batch_rec *r = &recs[i];
        if (run_one(m, bs[i], pp, tg, profile && md, r))
            return 1;
        if (md) {
            const double t = r->t_pp + r->t_tg;
            printf("| %u | %u | %u | %u | %.3f | %.2f | %.3f | %.2f | %.3f | %.2f | %.3f | %.3f |\n", r->pp,
                   r->tg, r->b, r->b * (r->pp + r->tg), r->t_pp, rate((uint64_t)r->b * r->pp, r->t_pp),
                   r->t_tg, rate((uint64_t)r->b * r->tg, r->t_tg), t,
                   rate((uint64_t)r->b * (r->pp + r->tg), t), r->p50_ms, r->p99_ms);
            fflush(stdout);
        }
    }
    for (uint32_t i = 0; i < n_b && profile && md; i++) {
        const struct batch_rec *r = &recs[i];
        printf("\nprofile: one step of %u sequences at position %u, %.1f us of device time (timed steps: p50 "
               "%.1f us; this one recorded without a graph)\n\n",
               r->b, r->pp + r->tg, r->prof_us, r->p50_ms * 1e3);
        nvhcq_llm_print_prof(r->prof, r->n_prof, r->prof_us);
    }
    for (int k = 0; k < 2; k++) {
        FILE *f = k ? jf : (md ? NULL : stdout);
        if (!f)
            continue;
        fprintf(f, "[\n");
        for (uint32_t i = 0; i < n_b; i++)
            json_rec(f, mt, &recs[i], i + 1 == n_b);
        fprintf(f, "]\n");
    }
    return 0;
}
