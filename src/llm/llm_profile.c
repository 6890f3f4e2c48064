/* SPDX-License-Identifier: MIT */
/*
 * llm_profile.c - per-kernel device time of one step: llm_model_profile_step (one decode token)
 * and llm_batch_profile_step (one batch step), both in include/llm.h. The step is recorded
 * without a graph, each launch's completion stamped by the grid itself (llm_launch_prog while
 * m->prof is set), the rows summed per kernel label. Layer: llm.
 */
#include "llm_model_int.h"

#include "util_log.h"

#include <stdlib.h>
#include <string.h>

/* Signals for the stamps of up to 24 launches a layer (+32: a batch step's that dequantizes each
 * matrix has 20) and the first stamp queued. */
enum hcq_status
llm_prof_begin(struct llm_model *m, struct prof **pf_out)
{
    enum hcq_status st = HCQ_OK;
    struct prof *pf = calloc(1, sizeof *pf);
    *pf_out = NULL;
    if (!pf)
        return hcq_err(HCQ_ERR_NOMEM, "llm profile: out of host memory");
    pf->cap = 24 * m->hp.n_layer + 32;
    if (pf->cap > PROF_MAX)
        pf->cap = PROF_MAX;
    for (uint32_t i = 0; i <= pf->cap && !st; i++)
        st = hcq_signal_create(m->dev, 0, &pf->ts[i]);
    if (!st)
        st = hcq_queue_timestamp(m->q, pf->ts[0]);
    if (st) {
        llm_prof_end(m, pf, NULL, 0, NULL, NULL);
        return st;
    }
    *pf_out = pf;
    m->prof = pf; /* (the launches record their timestamps from here on) */
    return HCQ_OK;
}

/* Stop stamping; with rows, the step's rows summed per label (the step has completed). Frees pf. */
enum hcq_status
llm_prof_end(struct llm_model *m, struct prof *pf, struct llm_prof_row *rows, uint32_t max_rows,
             uint32_t *n_rows, double *step_us)
{
    enum hcq_status st = HCQ_OK;
    m->prof = NULL;
    if (rows && pf->n >= pf->cap)
        st = hcq_err(HCQ_ERR_UNSUPPORTED, "llm profile: more than %u launches", pf->cap);
    if (rows && !st) {
        uint64_t t0 = hcq_signal_timestamp_ns(pf->ts[0]);
        *step_us = (hcq_signal_timestamp_ns(pf->ts[pf->n]) - t0) * 1e-3;
        for (uint32_t i = 0; i < pf->n; i++) {
            double us =
                (double)(hcq_signal_timestamp_ns(pf->ts[i + 1]) - hcq_signal_timestamp_ns(pf->ts[i])) * 1e-3;
            uint32_t r = 0;
            while (r < *n_rows && strcmp(rows[r].kernel, pf->label[i]))
                r++;
            if (r == *n_rows) {
                if (r == max_rows)
                    continue;
                rows[r] = (struct llm_prof_row){.kernel = pf->label[i]};
                (*n_rows)++;
            }
            rows[r].count++;
            rows[r].us += us;
            rows[r].bytes += pf->bytes[i];
        }
    }
    for (uint32_t i = 0; i <= PROF_MAX; i++)
        hcq_signal_destroy(pf->ts[i]);
    free(pf);
    return st;
}

enum hcq_status
llm_model_profile_step(struct llm_model *m, int32_t token, uint32_t pos, struct llm_prof_row *rows,
                       uint32_t max_rows, uint32_t *n_rows, double *step_us)
{
    enum hcq_status st;
    struct prof *pf = NULL;
    *n_rows = 0;
    *step_us = 0;
    if (pos >= m->n_ctx || token < 0 || (uint32_t)token >= m->hp.n_vocab)
        return hcq_err(HCQ_ERR_INVALID, "llm_model_profile_step: token %d at %u", token, pos);
    /* with a device sampler set, the step a generated token takes: embedding the sampler's id
     * word (token written there), sampling after the head (the sampler's state advances) */
    const bool smp = m->smp != NULL;
    if ((st = smp ? llm_smp_set_id(m->smp, token) : hcq_buf_write(m->tokbuf, 0, &token, 4)) ||
        (st = llm_prof_begin(m, &pf)))
        return st;
    const struct step s = {.graph = false, .sample = smp};
    st = llm_model_step_run(m, 1, pos, true, &s);
    enum hcq_status st2 = llm_prof_end(m, pf, st ? NULL : rows, max_rows, n_rows, step_us);
    return st ? st : st2;
}
