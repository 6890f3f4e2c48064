/* SPDX-License-Identifier: MIT */
/*
 * nvhcq_llm_bench.c - `nvhcq llm-bench`: llama-bench-style throughput of a GGUF model:
 * pp<N> (prompt processing: N tokens evaluated in one call, batches of -b) and tg<N>
 * (N decode steps of one token from an empty context), each repeated -r times after one
 * warm-up, reported as mean ± sd tokens/s in a markdown table. Layer: tools.
 * Napkin math: tg is bounded by weight bytes / memory bandwidth (anchors.md §6.3).
 */
#include "hcq.h"
#include "llm.h"
#include "nvhcq_cmds.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void nvhcq_llm_progress(uint64_t done_B, uint64_t total_B, void *user);

/* Per-kernel table of one decode step at position pos (llm_model_profile_step). */
static int
print_profile(struct llm_model *m, uint32_t pos)
{
    struct llm_prof_row rows[64];
    uint32_t n = 0;
    double step = 0;
    if (llm_model_profile_step(m, 1, pos, rows, 64, &n, &step)) {
        fprintf(stderr, "nvhcq llm-bench: profile: %s\n", hcq_last_error());
        return 1;
    }
    printf("\nprofile: one decode step at position %u, %.1f us (no graph; timestamps between launches)\n\n", pos,
           step);
    printf("| kernel | count | total us | us/launch | GB/s | %% of step |\n|---|---:|---:|---:|---:|---:|\n");
    for (uint32_t i = 0; i < n; i++) {
        char bw[32] = "";
        if (rows[i].bytes && rows[i].us > 0)
            snprintf(bw, sizeof bw, "%.0f", rows[i].bytes / (rows[i].us * 1e3));
        printf("| %s | %u | %.1f | %.2f | %s | %.1f |\n", rows[i].kernel, rows[i].count, rows[i].us,
               rows[i].us / rows[i].count, bw, step > 0 ? 100.0 * rows[i].us / step : 0.0);
    }
    return 0;
}

static int
bench_one(struct llm_model *m, bool pp, uint32_t n, uint32_t depth, int reps, double *mean, double *sd)
{
    uint32_t V = llm_model_hparams(m)->n_vocab;
    int32_t *toks = malloc(n * sizeof *toks);
    double *rate = calloc((size_t)reps + 1, sizeof *rate);
    if (!toks || !rate)
        return 1;
    uint64_t x = 0x2545F4914F6CDD1Dull;
    for (uint32_t i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        toks[i] = (int32_t)(x % V);
    }
    for (int r = 0; r <= reps; r++) { /* r == 0: warm-up (graph recording, caches) */
        enum hcq_status st = HCQ_OK;
        /* -d: fill the KV cache with depth tokens first (not timed), like llama-bench */
        for (uint32_t i = 0; i < depth && !st; i += n) {
            uint32_t c = depth - i < n ? depth - i : n;
            st = llm_model_eval(m, toks, c, i);
        }
        uint64_t t0 = hcq_time_ns();
        if (st)
            ;
        else if (pp)
            st = llm_model_eval(m, toks, n, depth);
        else
            for (uint32_t i = 0; i < n && !st; i++)
                st = llm_model_eval(m, &toks[i], 1, depth + i);
        if (st) {
            fprintf(stderr, "nvhcq llm-bench: %s\n", hcq_last_error());
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

int
nvhcq_cmd_llm_bench(int argc, char **argv)
{
    const char *model = NULL, *dev = NULL;
    uint32_t n_pp = 512, n_tg = 128, n_batch = 0, depths[8] = { 0 }, n_depth = 1;
    int reps = 5;
    bool profile = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
#define ARG(name) (!strcmp(a, name) && v && (i++, true))
        if (ARG("-m")) model = v;
        else if (ARG("-p")) n_pp = (uint32_t)atoi(v);
        else if (ARG("-n")) n_tg = (uint32_t)atoi(v);
        else if (ARG("-r")) reps = atoi(v);
        else if (ARG("-b")) n_batch = (uint32_t)atoi(v);
        else if (ARG("--dev")) dev = v;
        else if (!strcmp(a, "--profile")) profile = true;
        else if (ARG("-d")) { /* comma list of depths, like llama-bench */
            n_depth = 0;
            for (const char *c = v; *c && n_depth < 8; c = strchr(c, ',') ? strchr(c, ',') + 1 : "")
                depths[n_depth++] = (uint32_t)atoi(c);
        }
        else {
            fprintf(stderr, "usage: nvhcq llm-bench -m model.gguf [-p 512] [-n 128] [-r 5] [-b BATCH] [-d D1,D2..] "
                            "[--profile] [--dev SPEC]\n");
            return 2;
        }
#undef ARG
    }
    if (!model || reps < 1)
        return fprintf(stderr, "nvhcq llm-bench: -m is required\n"), 2;
    struct llm_model_params mp;
    llm_model_params_default(&mp);
    int last = -1;
    mp.dev_spec = dev;
    mp.naive_decode = getenv("NVHCQ_NAIVE_DECODE") != NULL; /* A/B against the per-op kernels */
    uint32_t max_d = 0;
    for (uint32_t i = 0; i < n_depth; i++)
        max_d = depths[i] > max_d ? depths[i] : max_d;
    mp.n_ctx = max_d + (n_pp > n_tg ? n_pp : n_tg) + 1;
    mp.n_batch = n_batch ? n_batch : (n_pp ? n_pp : 512);
    mp.progress = nvhcq_llm_progress;
    mp.progress_user = &last;
    struct llm_model *m = NULL;
    if (llm_model_load(model, &mp, &m)) {
        fprintf(stderr, "nvhcq llm-bench: cannot load %s: %s\n", model, hcq_last_error());
        return 1;
    }
    struct hcq_device_info info;
    if (hcq_device_info(llm_model_device(m), &info) != HCQ_OK)
        memset(&info, 0, sizeof info);
    const struct llm_hparams *hp = llm_model_hparams(m);
    const char *base = strrchr(model, '/') ? strrchr(model, '/') + 1 : model;
    printf("device: %s (%s, %s), driver %s\n\n", info.name, info.spec, info.arch, info.driver);
    printf("| model | size | layers | backend | test | t/s |\n|---|---:|---:|---|---:|---:|\n");
    int rc = 0;
    for (uint32_t di = 0; di < n_depth && !rc; di++) {
        for (int k = 0; k < 2 && !rc; k++) {
            bool pp = k == 0;
            uint32_t n = pp ? n_pp : n_tg;
            if (!n)
                continue;
            double mean, sd;
            if ((rc = bench_one(m, pp, n, depths[di], reps, &mean, &sd)))
                break;
            char at[32] = "";
            if (depths[di])
                snprintf(at, sizeof at, " @ d%u", depths[di]);
            printf("| %s | %.2f GiB | %u | %s | %s%u%s | %.2f ± %.2f |\n", base,
                   llm_model_weight_bytes(m) / 1073741824.0, hp->n_layer, info.backend, pp ? "pp" : "tg", n, at,
                   mean, sd);
            fflush(stdout);
        }
    }
    for (uint32_t di = 0; profile && di < n_depth && !rc; di++)
        rc = print_profile(m, depths[di] + (n_tg ? n_tg : 1) - 1);
    llm_model_destroy(m);
    return rc;
}
