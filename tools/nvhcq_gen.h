/* SPDX-License-Identifier: MIT */
/*
 * nvhcq_gen.h - prompt evaluation and streamed decoding shared by `nvhcq run` (nvhcq_llm.c)
 * and `nvhcq chat` (nvhcq_chat.c). Layer: tools.
 */
#ifndef NVHCQ_GEN_H
#define NVHCQ_GEN_H

#include "llm.h"

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What generation saw, for the summary line and the notes after it. */
struct nvhcq_gen_stats {
    double pp_s, tg_s;
    uint32_t pp_n, tg_n;
    uint32_t tg_empty; /* generated tokens that printed nothing (control tokens without --special) */
    bool ctx_full;     /* generation stopped because the context was full */
    bool cancelled;    /* *cancel was set */
};

struct nvhcq_gen_opts {
    int n_predict; /* < 0: until the context fills or the model ends its turn */
    bool special;  /* print control tokens by name (and do not stop at end-of-turn ones) */
    bool show_ids; /* [id] after each token's text */
    /* sample on the host from the logits read back each step (llm_sampler s), else on the model's
     * device (llm_model_sampler_set before; s only holds the parameters) */
    bool host_sample;
    const char *cmd;                     /* for error messages: "run", "chat" */
    const volatile sig_atomic_t *cancel; /* non-zero: stop after the current token (NULL: never) */
    const int32_t *stop_ids;             /* more end-of-turn tokens than the vocabulary marks */
    size_t n_stop_ids;
    char **reply; /* non-NULL: the streamed text is appended to *reply (malloc'd), *reply_n bytes */
    size_t *reply_n;
};

/* Evaluate ids[0..n) at pos (the sampler - s, or the device's - sees them as history). Returns 0
 * or 1 (printed). */
int nvhcq_gen_prefill(struct llm_model *m, struct llm_sampler *s, const struct nvhcq_gen_opts *o,
                      const int32_t *ids, size_t n, uint32_t pos, struct nvhcq_gen_stats *st);
/* Sample and stream tokens to stdout after the last evaluated one, at *pos (updated); stops
 * at n_predict, an end-of-turn token, a full context or *cancel. Device sampling queues step
 * n + 1 (which reads token n from device memory) before token n is printed, so printing overlaps
 * it. Returns 0 or 1 (printed). */
int nvhcq_gen_decode(struct llm_model *m, struct llm_sampler *s, const struct nvhcq_gen_opts *o,
                     uint32_t *pos, struct nvhcq_gen_stats *st);

#endif
