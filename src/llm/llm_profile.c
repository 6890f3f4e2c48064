/* SPDX-License-Identifier: MIT */
/*
 * llm_profile.c - llm_model_profile_step (include/llm.h): one decode step recorded without a graph,
 * each launch's completion stamped by the grid itself (llm_model.c launch_prog while m->prof is
 * set), the rows summed per kernel label. Layer: llm.
 */
#include "llm_model_int.h"

#include "util_log.h"

#include <stdlib.h>
#include <string.h>

enum hcq_status
llm_model_profile_step(struct llm_model *m, int32_t token, uint32_t pos, struct llm_prof_row *rows,
                       uint32_t max_rows, uint32_t *n_rows, double *step_us)
{
    enum hcq_status st = HCQ_OK;
    *n_rows = 0;
    *step_us = 0;
    if (pos >= m->n_ctx || token < 0 || (uint32_t)token >= m->hp.n_vocab)
        return hcq_err(HCQ_ERR_INVALID, "llm_model_profile_step: token %d at %u", token, pos);
    struct prof *pf = calloc(1, sizeof *pf);
    if (!pf)
        return hcq_err(HCQ_ERR_NOMEM, "llm_model_profile_step");
    uint32_t n_sig = 16 * m->hp.n_layer + 16;
    if (n_sig > PROF_MAX)
        n_sig = PROF_MAX;
    for (uint32_t i = 0; i <= n_sig && !st; i++)
        st = hcq_signal_create(m->dev, 0, &pf->ts[i]);
    struct step s = {.graph = false};
    if (!st && !(st = hcq_buf_write(m->tokbuf, 0, &token, 4)) &&
        !(st = hcq_queue_timestamp(m->q, pf->ts[0]))) {
        m->prof = pf; /* (the launches of the step record their timestamps) */
        st = llm_model_step_run(m, 1, pos, true, &s);
        m->prof = NULL;
        if (!st && pf->n >= n_sig)
            st = hcq_err(HCQ_ERR_UNSUPPORTED, "llm_model_profile_step: more than %u launches", n_sig);
    }
    if (!st) {
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
