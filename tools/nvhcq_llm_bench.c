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

static int
bench_one(struct llm_model *m, bool pp, uint32_t n, int reps, double *mean, double *sd)
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
        uint64_t t0 = hcq_time_ns();
        enum hcq_status st = HCQ_OK;
        if (pp)
            st = llm_model_eval(m, toks, n, 0);
        else
            for (uint32_t i = 0; i < n && !st; i++)
                st = llm_model_eval(m, &toks[i], 1, i);
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
    uint32_t n_pp = 512, n_tg = 128, n_batch = 0;
    int reps = 5;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
#define ARG(name) (!strcmp(a, name) && v && (i++, true))
        if (ARG("-m")) model = v;
        else if (ARG("-p")) n_pp = (uint32_t)atoi(v);
        else if (ARG("-n")) n_tg = (uint32_t)atoi(v);
        else if (ARG("-r")) reps = atoi(v);
        else if (ARG("-b")) n_batch = (uint32_t)atoi(v);
        else if (ARG("--dev")) dev = v;
        else {
            fprintf(stderr, "usage: nvhcq llm-bench -m model.gguf [-p 512] [-n 128] [-r 5] [-b BATCH] [--dev SPEC]\n");
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
    mp.n_ctx = (n_pp > n_tg ? n_pp : n_tg) + 1;
    mp.n_batch = n_batch ? n_batch : (n_pp ? n_pp : 1);
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
    for (int k = 0; k < 2 && !rc; k++) {
        bool pp = k == 0;
        uint32_t n = pp ? n_pp : n_tg;
        if (!n)
            continue;
        double mean, sd;
        if ((rc = bench_one(m, pp, n, reps, &mean, &sd)))
            break;
        printf("| %s | %.2f GiB | %u | %s | %s%u | %.2f ± %.2f |\n", base, llm_model_weight_bytes(m) / 1073741824.0,
               hp->n_layer, info.backend, pp ? "pp" : "tg", n, mean, sd);
        fflush(stdout);
    }
    llm_model_destroy(m);
    return rc;
}
