/* SPDX-License-Identifier: MIT */
/*
 * nvhcq_llm_bench.h - what `nvhcq llm-bench` (nvhcq_llm_bench.c) shares with its batched-decode
 * mode (nvhcq_llm_bench_batch.c). Layer: tools.
 */
#ifndef NVHCQ_LLM_BENCH_H
#define NVHCQ_LLM_BENCH_H

#include "hcq.h"
#include "llm.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* What every JSON record names: the file, its weight type, the device, the commit. */
struct llm_bench_meta {
    const char *model, *type, *commit;
    const struct hcq_device_info *info;
};

/* The markdown table of a profiled step's rows (llm_model_profile_step, llm_batch_profile_step). */
void nvhcq_llm_print_prof(const struct llm_prof_row *rows, uint32_t n, double step_us);

/* --batch: for each of the n_b sizes bs[], B sequences of pp prompt tokens then tg steps of all
 * of them (llm_batch_*); a markdown table (md) or JSON records on stdout, and JSON into jf when
 * non-NULL; profile (md only): after each B's timed steps, the per-kernel table of one more step.
 * warm_ms: how long the untimed warm-up of the first size runs at least (once when 0).
 * Returns 0, or 1 after printing the error. */
int nvhcq_llm_bench_batch(struct llm_model *m, const uint32_t *bs, uint32_t n_b, uint32_t pp, uint32_t tg,
                          int warm_ms, const struct llm_bench_meta *mt, bool md, bool profile, FILE *jf);

#endif /* NVHCQ_LLM_BENCH_H */
