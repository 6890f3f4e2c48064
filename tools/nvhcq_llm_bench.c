/* SPDX-License-Identifier: MIT */
/*
 * nvhcq_llm_bench.c - `nvhcq llm-bench`: llama-bench-style throughput of a GGUF model:
 * pp<N> (prompt processing: N tokens evaluated in one call, batches of -b) and tg<N>
 * (N decode steps of one token from an empty context), each repeated -r times after one
 * warm-up, reported as mean ± sd tokens/s in a markdown table; -d repeats them after a KV
 * cache filled to each depth, --profile adds one decode step's per-kernel table. tg<N>s: N
 * decode steps through the generation path of `nvhcq run` (llm_model_gen_submit/gen_wait: the
 * device sampler in the step's graph, the token id read back each step) with sampling on
 * (bench_sampler below). Layer: tools.
 * Napkin math: tg is bounded by weight bytes / memory bandwidth (anchors.md §6.3).
 */
#include "hcq.h"
#include "k_llm_params.h" /* K_LLM_KV_B */
#include "llm.h"
#include "nvhcq_cli.h"
#include "nvhcq_llm_bench.h"
#include "nvhcq_cmds.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void nvhcq_llm_progress(uint64_t done_B, uint64_t total_B, void *user);

void
nvhcq_llm_print_prof(const struct llm_prof_row *rows, uint32_t n, double step)
{
    printf("| kernel | count | total us | us/launch | GB/s | %% of step |\n|---|---:|---:|---:|---:|---:|\n");
    for (uint32_t i = 0; i < n; i++) {
        char bw[32] = "";
        if (rows[i].bytes && rows[i].us > 0)
            snprintf(bw, sizeof bw, "%.0f", rows[i].bytes / (rows[i].us * 1e3));
        printf("| %s | %u | %.1f | %.2f | %s | %.1f |\n", rows[i].kernel, rows[i].count, rows[i].us,
               rows[i].us / rows[i].count, bw, step > 0 ? 100.0 * rows[i].us / step : 0.0);
    }
}

/* Per-kernel table of one decode step at position pos (llm_model_profile_step). */
static int
print_profile(struct llm_model *m, uint32_t pos)
{
    struct llm_prof_row rows[64];
    uint32_t n = 0;
    double step = 0;
    if (llm_model_profile_step(m, 1, pos, rows, 64, &n, &step))
        return cli_fail("llm-bench", "--profile: %s", hcq_last_error());
    printf("\nprofile: one decode step at position %u, %.1f us (no graph; rows from each grid's completion "
           "time, launches chained as in a step)\n\n",
           pos, step);
    nvhcq_llm_print_prof(rows, n, step);
    return 0;
}

/* The sampler of the tg<N>s test: llama.cpp's common defaults. */
static void
bench_sampler(struct llm_sampler_params *sp)
{
    llm_sampler_params_default(sp);
    sp->temp = 0.8f;
    sp->top_k = 40;
    sp->top_p = 0.95f;
    sp->min_p = 0.05f;
    sp->repeat_penalty = 1.1f;
    sp->repeat_last_n = 64;
    sp->seed = 1;
}

/* pp: one evaluation of n tokens; else n decode steps (sampled: through the device sampler,
 * after one untimed step that samples the first token at depth) */
static int
bench_one(struct llm_model *m, bool pp, bool sampled, uint32_t n, uint32_t depth, int reps, double *mean,
          double *sd)
{
    uint32_t V = llm_model_hparams(m)->n_vocab, n_toks = n > depth ? n : depth;
    int32_t *toks = malloc(n_toks * sizeof *toks);
    double *rate = calloc((size_t)reps + 1, sizeof *rate);
    if (!toks || !rate)
        return 1;
    uint64_t x = 0x2545F4914F6CDD1Dull;
    for (uint32_t i = 0; i < n_toks; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        toks[i] = (int32_t)(x % V);
    }
    for (int r = 0; r <= reps; r++) { /* r == 0: warm-up (graph recording, caches) */
        enum hcq_status st = HCQ_OK;
        /* -d: fill the KV cache with depth tokens first (not timed), like llama-bench: one
         * evaluation, in passes of the model's n_batch (in passes of n, a tg test's 128 tokens,
         * llm-bench -d 32768 -n 32 on a 3B model ran 64 s, H200) */
        if (depth)
            st = llm_model_eval(m, toks, depth, 0);
        int32_t id = 0;
        if (!st && sampled && !(st = llm_model_sampler_reset(m, NULL, 0)) &&
            !(st = llm_model_eval(m, toks, 1, depth)))
            st = llm_model_sample(m, &id);
        uint64_t t0 = hcq_time_ns();
        if (st)
            ;
        else if (pp)
            st = llm_model_eval(m, toks, n, depth);
        else if (sampled) {
            for (uint32_t j = 0; j < n && !st; j++)
                if (!(st = llm_model_gen_submit(m, depth + 1 + j)))
                    st = llm_model_gen_wait(m, &id);
        } else
            for (uint32_t i = 0; i < n && !st; i++)
                st = llm_model_eval(m, &toks[i], 1, depth + i);
        if (st) {
            cli_fail("llm-bench", "%s", hcq_last_error());
            free(toks);
            free(rate);
            return 1;
        }
        rate[r] = n / ((hcq_time_ns() - t0) * 1e-9);
    }
    double s = 0, ss = 0;
    for (int r = 1; r <= reps; r++)
        s += rate[r];
    *mean = s / reps;
    for (int r = 1; r <= reps; r++)
        ss += (rate[r] - *mean) * (rate[r] - *mean);
    *sd = reps > 1 ? sqrt(ss / (reps - 1)) : 0;
    free(toks);
    free(rate);
    return 0;
}

/* Weight type of the file: general.file_type is llama.cpp's llama_ftype enum (values as in its
 * llama.h); "?" for one not listed. */
static const char *
ftype_name(const struct llm_gguf *g)
{
    static const char *const names[] = {
        [0] = "F32",     [1] = "F16",     [2] = "Q4_0",    [3] = "Q4_1",    [7] = "Q8_0",    [8] = "Q5_0",
        [9] = "Q5_1",    [10] = "Q2_K",   [11] = "Q3_K_S", [12] = "Q3_K_M", [13] = "Q3_K_L", [14] = "Q4_K_S",
        [15] = "Q4_K_M", [16] = "Q5_K_S", [17] = "Q5_K_M", [18] = "Q6_K",   [32] = "BF16",
    };
    uint32_t ft;
    if (llm_gguf_get_u32(g, "general.file_type", &ft) || ft >= sizeof names / sizeof names[0] || !names[ft])
        return "?";
    return names[ft];
}

struct bench_rec {
    char test[32];
    uint32_t n_prompt, n_gen, n_depth;
    double mean, sd;
    double bytes_per_tok; /* bytes the test reads per token (traffic_per_token) */
};

/* DRAM peak of a GPU by name, bytes/s (NVIDIA's data sheets), 0 when not listed: the "% of peak"
 * column is then left out. Longer names first (an "H100 NVL" is not an "H100"). */
static double
dram_peak_Bps(const char *name)
{
    static const struct {
        const char *name;
        double tbps;
    } t[] = {
        {"GH200", 4.0},
        {"H200", 4.8},
        {"H100 NVL", 3.9},
        {"H100 PCIe", 2.0},
        {"H100 80GB HBM3", 3.35},
        {"H800", 3.35},
        {"A100-SXM4-80GB", 2.039},
        {"A100 80GB PCIe", 1.935},
        {"A100-SXM4-40GB", 1.555},
        {"A100-PCIE-40GB", 1.555},
        {"L40S", 0.864},
        {"RTX 4090", 1.008},
    };
    for (size_t i = 0; name && i < sizeof t / sizeof t[0]; i++)
        if (strstr(name, t[i].name))
            return t[i].tbps * 1e12;
    return 0;
}

/* Bytes a test reads per token from device memory - the weights and the KV cache; activations,
 * the KV rows written and the logits are left out (under 1% for these models):
 *  - the weights of a step: every tensor of the file, except that the token embedding is one row
 *    (the whole matrix again where the output head is tied to it: no output.weight);
 *  - tg (n decode steps from depth d): the weights each step, and K and V of every cached
 *    position in every layer (f16, K_LLM_KV_B bytes each), on average d + (n + 1) / 2 positions;
 *  - pp (n prompt tokens in batches of n_batch): the weights once per batch, over the n tokens;
 *    the attention's own K/V traffic is not counted. */
static double
traffic_per_token(const struct llm_gguf *g, const struct llm_hparams *hp, bool pp, uint32_t n, uint32_t depth,
                  uint32_t n_batch)
{
    double w = 0;
    const struct llm_gguf_tensor *emb = llm_gguf_tensor_find(g, "token_embd.weight");
    for (uint64_t i = 0; i < llm_gguf_tensor_count(g); i++)
        w += (double)llm_gguf_tensor_at(g, i)->size_B;
    if (emb && llm_gguf_tensor_find(g, "output.weight"))
        w -= (double)emb->size_B - (double)llm_type_row_bytes(emb->type, emb->ne[0]);
    if (pp)
        return w * ((n + n_batch - 1) / n_batch) / n;
    const double kv_row = 2.0 * K_LLM_KV_B * hp->n_layer * hp->n_head_kv * hp->head_dim;
    return w + kv_row * (depth + (n + 1) / 2.0);
}

static void
write_json(FILE *f, const char *model, const char *type, const struct llm_model *m,
           const struct hcq_device_info *in, uint32_t n_batch, int reps, const char *commit,
           const struct bench_rec *r, int n)
{
    fprintf(f, "[\n");
    for (int i = 0; i < n; i++) {
        fprintf(f, "  {\"model\": ");
        cli_json_str(f, model);
        fprintf(f, ", \"type\": ");
        cli_json_str(f, type);
        fprintf(f, ", \"size_B\": %llu, \"n_layer\": %u, \"backend\": ",
                (unsigned long long)llm_model_weight_bytes(m), llm_model_hparams(m)->n_layer);
        cli_json_str(f, in->backend);
        fprintf(f, ", \"device\": ");
        cli_json_str(f, in->spec);
        fprintf(f, ", \"gpu\": ");
        cli_json_str(f, in->name);
        fprintf(f, ", \"driver\": ");
        cli_json_str(f, in->driver);
        fprintf(f, ", \"commit\": ");
        cli_json_str(f, commit);
        fprintf(f,
                ",\n   \"test\": \"%s\", \"n_prompt\": %u, \"n_gen\": %u, \"n_depth\": %u, \"n_batch\": %u, "
                "\"reps\": %d, \"avg_ts\": %.3f, \"stddev_ts\": %.3f,\n   \"bytes_per_token\": %.0f, "
                "\"gbps\": %.1f",
                r[i].test, r[i].n_prompt, r[i].n_gen, r[i].n_depth, n_batch, reps, r[i].mean, r[i].sd,
                r[i].bytes_per_tok, r[i].bytes_per_tok * r[i].mean * 1e-9);
        const double peak = dram_peak_Bps(in->name);
        if (peak > 0)
            fprintf(f, ", \"peak_gbps\": %.0f, \"pct_peak\": %.1f", peak * 1e-9,
                    100.0 * r[i].bytes_per_tok * r[i].mean / peak);
        else
            fprintf(f, ", \"peak_gbps\": null, \"pct_peak\": null");
        fprintf(f, "}%s\n", i + 1 < n ? "," : "");
    }
    fprintf(f, "]\n");
}

int
nvhcq_cmd_llm_bench(int argc, char **argv)
{
    const char *model = NULL, *dev = NULL, *json = NULL, *format = "md", *depth_s = "0", *batch_s = NULL;
    uint32_t n_pp = 512, n_tg = 128, n_batch = 0, depths[8] = {0}, n_depth = 0, bs[16], n_bs = 0,
             gemm_min = LLM_GEMM_MIN_BATCH_FAST;
    int reps = 5, warm_ms = -1;
    bool profile = false, no_sampled = false;
    const struct cli_opt opts[] = {
        CLI_STR("-m", "--model", &model, "FILE", "GGUF model (required)"),
        CLI_NUM("-p", "--n-prompt", &n_pp, "N", 0, 1 << 20,
                "pp test: N prompt tokens in one evaluation; 0: skip"),
        CLI_NUM("-n", "--n-gen", &n_tg, "N", 0, 1 << 20, "tg test: N decode steps of one token; 0: skip"),
        CLI_NUM("-r", "--repetitions", &reps, "N", 1, 1000,
                "timed repetitions of each test (after one warm-up)"),
        CLI_NUM("-b", "--batch-size", &n_batch, "N", 1, 1 << 20,
                "prompt batch [default: -p's value; 512 if -p 0]"),
        CLI_STR(NULL, "--dev", &dev, "SPEC",
                "device: cpu, cuda:N, rm:N, nvgpu:0 [default: HCQ_DEV, else auto]"),
        CLI_STR("-d", "--n-depth", &depth_s, "D1,D2..",
                "repeat the tests after a KV cache filled to each depth"),
        CLI_NUM(NULL, "--warmup-ms", &warm_ms, "MS", 0, 600000,
                "run the first test untimed for at least MS ms first [default: 2000 on rm/nvgpu, else 0]"),
        CLI_FLAG(NULL, "--no-sampled", &no_sampled,
                 "skip the tg<N>s test (tg through the device sampler: temp 0.8, top-k 40, top-p 0.95, "
                 "min-p 0.05, repeat penalty 1.1 over 64)"),
        CLI_FLAG(NULL, "--profile", &profile,
                 "per-kernel device time of one decode step (per depth; with --batch, of one step per B; md "
                 "output)"),
        CLI_NUM(NULL, "--gemm-min-batch", &gemm_min, "N", 0, 1 << 20,
                "matmuls of at least N rows (prefill batches, batch steps) on tensor cores, f16 operands; 0: "
                "never (llm_model_params.gemm_min_batch) [default: 2]"),
        CLI_STR(NULL, "--batch", &batch_s, "B1,B2..",
                "batched decode instead (llama-batched-bench's -npl): per B, B sequences of -p prompt "
                "tokens, then -n steps of all of them; columns as llama-batched-bench's"),
        CLI_CHOICE("-o", "--output", &format, "md|json", "stdout format: markdown table or JSON records"),
        CLI_STR(NULL, "--json", &json, "FILE", "also write the JSON records to FILE"),
        CLI_END,
    };
    const struct cli_cmd cmd = {
        "llm-bench",
        "-m FILE [-p N] [-n N] [-r N] [options]",
        "llama-bench-style throughput: pp<N> (prompt processing) and tg<N> (decode from an empty\n"
        "context), mean +- sd tokens/s over -r repetitions after one warm-up; tg<N>s: tg as `run`\n"
        "generates, sampling on the device each step and reading the token back.\n"
        "JSON records: model, type, size_B, n_layer, backend, device, gpu, driver, commit, test,\n"
        "n_prompt, n_gen, n_depth, n_batch, reps, avg_ts, stddev_ts, bytes_per_token, gbps,\n"
        "peak_gbps, pct_peak. bytes_per_token: the weights and KV cache a token reads (tg: the whole\n"
        "step; pp: the weights once per batch, over its tokens); gbps = bytes_per_token x t/s;\n"
        "pct_peak: of the GPU's DRAM peak where its name is known, else null.",
        opts,
        NULL,
        NULL,
        NULL,
    };
    int rc = cli_parse(&cmd, argc, argv);
    if (rc != CLI_CONTINUE)
        return rc;
    if (!model)
        return cli_usage_error(&cmd, "-m FILE is required");
    if (!n_pp && !n_tg)
        return cli_usage_error(&cmd, "-p 0 and -n 0: nothing to measure");
    uint32_t max_d = 0;
    for (const char *c = depth_s; *c; c = strchr(c, ',') ? strchr(c, ',') + 1 : "") {
        char *end;
        long d = strtol(c, &end, 10);
        if (n_depth == 8 || end == c || d < 0 || d > (1 << 20) || (*end && *end != ','))
            return cli_usage_error(&cmd, "-d: up to 8 comma-separated depths 0..1048576");
        depths[n_depth++] = (uint32_t)d;
        max_d = (uint32_t)d > max_d ? (uint32_t)d : max_d;
    }
    if (!n_depth)
        return cli_usage_error(&cmd, "-d: up to 8 comma-separated depths 0..1048576");
    uint32_t max_b = 0;
    for (const char *c = batch_s; c && *c; c = strchr(c, ',') ? strchr(c, ',') + 1 : "") {
        char *end;
        long v = strtol(c, &end, 10);
        if (n_bs == 16 || end == c || v < 1 || v > LLM_BATCH_MAX_SEQ || (*end && *end != ','))
            return cli_usage_error(&cmd, "--batch: up to 16 comma-separated sizes 1..256");
        bs[n_bs++] = (uint32_t)v;
        max_b = (uint32_t)v > max_b ? (uint32_t)v : max_b;
    }
    if (batch_s && (!n_bs || !n_tg || max_d))
        return cli_usage_error(&cmd, "--batch needs sizes and -n > 0, and takes no -d");
    bool md = !strcmp(format, "md");
    FILE *jf = NULL;
    if (json && !(jf = fopen(json, "w")))
        return cli_fail("llm-bench", "--json %s: %s", json, strerror(errno));
    struct llm_model_params mp;
    llm_model_params_default(&mp);
    int last = -1;
    mp.dev_spec = dev;
    mp.n_ctx = max_d + (n_pp > n_tg ? n_pp : n_tg) + 2; /* tg<N>s: one step more */
    mp.n_batch = n_batch ? n_batch : (n_pp ? n_pp : 512);
    mp.gemm_min_batch = gemm_min;
    /* --batch: the prompts are prefilled packed into passes of n_batch rows (512 unless -b, as
     * llama-batched-bench's physical batch; -p 128 passes of 128 rows ran the prompts at half the
     * rate of 512-row ones), and a batch step runs its sequences as rows of one pass */
    if (n_bs && !n_batch)
        mp.n_batch = 512;
    if (n_bs && mp.n_batch < max_b)
        mp.n_batch = max_b;
    if (n_bs) /* (each sequence's slot: the prompt, then the steps) */
        mp.n_ctx = n_pp + n_tg + 2;
    mp.progress = nvhcq_llm_progress;
    mp.progress_user = &last;
    struct llm_model *m = NULL;
    struct llm_gguf *g = NULL;
    if (llm_gguf_open(model, &g) || llm_model_load_gguf(g, &mp, &m)) {
        rc = cli_fail_file("llm-bench", "cannot load", model);
        goto done;
    }
    struct hcq_device_info info;
    if (hcq_device_info(llm_model_device(m), &info) != HCQ_OK)
        memset(&info, 0, sizeof info);
    const struct llm_hparams *hp = llm_model_hparams(m);
    const char *base = strrchr(model, '/') ? strrchr(model, '/') + 1 : model;
    const char *type = ftype_name(g);
    char commit[48];
    cli_commit(commit, sizeof commit);
    /* Why a timed warm-up on rm/nvgpu: the GPU idles at its lowest clock (H200: 345 MHz) and
     * its own load-based ramp took ~1.7 s (measured 2026-11-24);
     * a CUDA context asks the kernel driver for a boost at once, these backends do not (that
     * would change how the GPU is clocked). Without it a pp512 row right after the model load
     * measured the kernels at idle clock (H200 Q6_K rm:0 13.8k vs 43.6k tokens/s). */
    if (warm_ms < 0)
        warm_ms = !strcmp(info.backend, "rm") || !strcmp(info.backend, "nvgpu") ? 2000 : 0;
    if (n_bs) {
        const struct llm_bench_meta mt = {.model = base, .type = type, .commit = commit, .info = &info};
        if (md)
            printf("device: %s (%s, %s), driver %s, commit %s, batched decode\n\n", info.name, info.spec,
                   info.arch, info.driver, commit);
        rc = nvhcq_llm_bench_batch(m, bs, n_bs, n_pp, n_tg, warm_ms, &mt, md, profile, jf);
        goto done;
    }
    if (md) {
        printf("device: %s (%s, %s), driver %s, commit %s, decode path %s\n\n", info.name, info.spec,
               info.arch, info.driver, commit, llm_model_decode_path(m));
        printf("| model | type | size | layers | backend | test | t/s | MB/token | GB/s | %% of peak |\n"
               "|---|---|---:|---:|---|---:|---:|---:|---:|---:|\n");
    }
    struct bench_rec recs[24];
    int n_rec = 0;
    bool smp_set = false;
    rc = 0;
    for (uint64_t w0 = hcq_time_ns();
         warm_ms > 0 && !rc && hcq_time_ns() - w0 < (uint64_t)warm_ms * 1000000u;) {
        double wm, ws;
        rc = bench_one(m, n_pp > 0, false, n_pp > 0 ? n_pp : n_tg, 0, 1, &wm, &ws);
    }
    for (uint32_t di = 0; di < n_depth && !rc; di++) {
        for (int k = 0; k < 3 && !rc; k++) {
            const bool pp = k == 0, sampled = k == 2;
            uint32_t n = pp ? n_pp : n_tg;
            if (!n || (sampled && no_sampled))
                continue;
            if (sampled && !smp_set) {
                struct llm_sampler_params sp;
                bench_sampler(&sp);
                if (llm_model_sampler_set(m, &sp)) {
                    rc = cli_fail("llm-bench", "sampler: %s", hcq_last_error());
                    break;
                }
                smp_set = true;
            }
            struct bench_rec *r = &recs[n_rec];
            if ((rc = bench_one(m, pp, sampled, n, depths[di], reps, &r->mean, &r->sd)))
                break;
            const char *kind = pp ? "pp" : "tg", *suffix = sampled ? "s" : "";
            if (depths[di])
                snprintf(r->test, sizeof r->test, "%s%u%s @ d%u", kind, n, suffix, depths[di]);
            else
                snprintf(r->test, sizeof r->test, "%s%u%s", kind, n, suffix);
            r->n_prompt = pp ? n : 0;
            r->n_gen = pp ? 0 : n;
            r->n_depth = depths[di];
            r->bytes_per_tok = traffic_per_token(g, hp, pp, n, depths[di] + sampled, mp.n_batch);
            n_rec++;
            if (md) {
                const double peak = dram_peak_Bps(info.name), Bps = r->bytes_per_tok * r->mean;
                char pct[16] = "-";
                if (peak > 0)
                    snprintf(pct, sizeof pct, "%.1f%%", 100.0 * Bps / peak);
                printf("| %s | %s | %.2f GiB | %u | %s | %s | %.2f ± %.2f | %.1f | %.1f | %s |\n", base, type,
                       llm_model_weight_bytes(m) / 1073741824.0, hp->n_layer, info.backend, r->test, r->mean,
                       r->sd, r->bytes_per_tok * 1e-6, Bps * 1e-9, pct);
                fflush(stdout);
            }
        }
    }
    for (uint32_t di = 0; profile && md && di < n_depth && !rc; di++)
        rc = print_profile(m, depths[di] + (n_tg ? n_tg : 1) - 1);
    if (!md)
        write_json(stdout, base, type, m, &info, mp.n_batch, reps, commit, recs, n_rec);
    if (jf)
        write_json(jf, base, type, m, &info, mp.n_batch, reps, commit, recs, n_rec);
done:
    if (jf && fclose(jf) && !rc)
        rc = cli_fail("llm-bench", "--json %s: %s", json, strerror(errno));
    llm_model_destroy(m);
    llm_gguf_destroy(g);
    return rc;
}
