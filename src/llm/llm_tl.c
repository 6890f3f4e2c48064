/* SPDX-License-Identifier: MIT */
/*
 * llm_tl.c - the per-CTA timeline of the decode mat-vec in a profiled step (NVHCQ_MVQ_TL=1;
 * diagnosis only). Layer: llm (engine, internal).
 *
 * Why: each decode mat-vec launch pays ~2-3 us beside its bytes (H100 Q8_0: gate|up streams
 * 2.3 TB/s, Q|K|V 1.2, the output head 2.7), and `llm-bench --profile` gives one number per
 * launch - the time from the previous grid's completion to this one's - which cannot say
 * whether that goes to the CTAs' start, the PDL wait, the RMSNorm prologue or the tail. The
 * _tl kernels (src/kernels/k_llm_matvec_tl.cu) stamp %globaltimer per CTA at entry, after the
 * wait and after the prologue, and per warp at its end; %clock64 gives the prologue on the SM's
 * own clock (the global timer's step may be coarse: the smallest step seen is reported).
 *
 * Rows added to the profile, per launch label, each the mean over that label's launches of a
 * time relative to the PREVIOUS launch's completion (the profile's timestamp; negative: before
 * it, which programmatic dependent launch allows): the CTAs' entries (first / median / last),
 * the PDL wait opening (first / last CTA), the prologue's length (median CTA, SM clock), the
 * warps' ends (first / median / last) and this launch's completion less its last warp's end.
 * Nothing is written outside a profiled step (pf.va[1] stays 0), and a backend whose kernels
 * are twins (emu, cpu) writes no records: then no rows are added.
 */
#include "llm_model_int.h"
#include "util_log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TL_WORDS 16
#define TL_SLOT_B ((uint64_t)TL_CTA_MAX * TL_WORDS * 8)

static const char *const phase_name[LLM_TL_PHASES] = {"entry first",    "entry median",
                                                      "entry last",     "wait open first",
                                                      "wait open last", "prologue (SM clock, median CTA)",
                                                      "warp end first", "warp end median",
                                                      "warp end last",  "completion - last warp end"};

bool
llm_tl_prog(int prog)
{
    return prog == PROG_MVQ_Q4_0X2 || prog == PROG_MVQ_Q8_0X2 || prog == PROG_MVQ_Q6K ||
           prog == PROG_MVQ_Q6K + PROG_MVQ_W2 || prog == PROG_MVQ_Q4_0X2D || prog == PROG_MVQ_Q8_0X2D;
}

enum hcq_status
llm_tl_init(struct llm_model *m)
{
    const char *e = getenv("NVHCQ_MVQ_TL");
    if (!e || strcmp(e, "1"))
        return HCQ_OK;
    m->tl = calloc(1, sizeof *m->tl);
    if (!m->tl)
        return hcq_err(HCQ_ERR_NOMEM, "NVHCQ_MVQ_TL: timeline state");
    return hcq_buf_alloc(m->dev, TL_LAUNCH_MAX * TL_SLOT_B, HCQ_MEM_DEVICE, &m->tl->buf);
}

void
llm_tl_free(struct llm_model *m)
{
    if (!m->tl)
        return;
    hcq_buf_free(m->tl->buf);
    free(m->tl);
    m->tl = NULL;
}

enum hcq_status
llm_tl_begin(struct llm_model *m)
{
    if (!m->tl)
        return HCQ_OK;
    m->tl->n = 0;
    /* zero records: a CTA that never ran (or a twin) leaves entry 0, which the rows skip */
    void *z = calloc(1, TL_LAUNCH_MAX * TL_SLOT_B);
    if (!z)
        return hcq_err(HCQ_ERR_NOMEM, "NVHCQ_MVQ_TL: zero records");
    enum hcq_status st = hcq_buf_write(m->tl->buf, 0, z, TL_LAUNCH_MAX * TL_SLOT_B);
    free(z);
    return st;
}

void
llm_tl_slot(struct llm_model *m, int prog, uint32_t grid, struct k_llm_matvec_params *p)
{
    struct mvq_tl *tl = m->tl;
    if (!tl || !m->prof || !llm_tl_prog(prog) || grid > TL_CTA_MAX || tl->n >= TL_LAUNCH_MAX ||
        (p->pf.B[0] | p->pf.B[1]))
        return;
    tl->prof_i[tl->n] = m->prof->n; /* the index launch_prog gives this launch */
    tl->grid[tl->n] = grid;
    p->pf.va[1] = hcq_buf_va(tl->buf) + tl->n * TL_SLOT_B;
    p->pf.B[1] = 0;
    tl->n++;
}

static int
cmp_i64(const void *a, const void *b)
{
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* median of v[0..n) (sorts v); 0 when n is 0 */
static int64_t
median(int64_t *v, uint32_t n)
{
    if (!n)
        return 0;
    qsort(v, n, sizeof *v, cmp_i64);
    return v[n / 2];
}

bool
llm_tl_launch(const uint64_t *rec, uint32_t grid, int64_t t0, int64_t done, double rate, int64_t *scratch,
              int64_t out[LLM_TL_PHASES], int64_t *step)
{
    int64_t ent_min = INT64_MAX, ent_max = INT64_MIN, w_min = INT64_MAX, w_max = INT64_MIN;
    int64_t x_min = INT64_MAX, x_max = INT64_MIN;
    uint32_t ne = 0, np = 0, nx = 0;
    int64_t *ent = scratch, *pro = scratch + grid, *ex = scratch + 2 * (uint64_t)grid;
    int64_t last_entry = 0;
    for (uint32_t b = 0; b < grid; b++) {
        const uint64_t *r = rec + (uint64_t)b * TL_WORDS;
        if (!r[0]) /* this CTA wrote no record */
            continue;
        const int64_t e = (int64_t)r[0] - t0;
        ent[ne++] = e;
        ent_min = e < ent_min ? e : ent_min, ent_max = e > ent_max ? e : ent_max;
        if (last_entry && (int64_t)r[0] != last_entry) {
            const int64_t d =
                (int64_t)r[0] > last_entry ? (int64_t)r[0] - last_entry : last_entry - (int64_t)r[0];
            *step = !*step || d < *step ? d : *step;
        }
        last_entry = (int64_t)r[0];
        if (r[1]) {
            const int64_t w = (int64_t)r[1] - t0;
            w_min = w < w_min ? w : w_min, w_max = w > w_max ? w : w_max;
        }
        if (r[14] > r[13] && r[13] && rate > 0)
            pro[np++] = (int64_t)((double)(r[14] - r[13]) / rate);
        for (uint32_t w = 0; w < 8; w++)
            if (r[4 + w]) {
                const int64_t x = (int64_t)r[4 + w] - t0;
                ex[nx++] = x;
                x_min = x < x_min ? x : x_min, x_max = x > x_max ? x : x_max;
            }
    }
    if (!ne || !nx || w_min == INT64_MAX)
        return false;
    const int64_t val[LLM_TL_PHASES] = {ent_min, median(ent, ne),  ent_max, w_min,
                                        w_max,   median(pro, np),  x_min,   median(ex, nx),
                                        x_max,   done - t0 - x_max};
    memcpy(out, val, sizeof val);
    return true;
}

void
llm_tl_rows(struct llm_model *m, const struct prof *pf, struct llm_prof_row *rows, uint32_t max_rows,
            uint32_t *n_rows)
{
    struct mvq_tl *tl = m->tl;
    if (!tl || !tl->n)
        return;
    const uint64_t used_B = tl->n * TL_SLOT_B;
    uint64_t *rec = malloc(used_B);
    int64_t *v = malloc(sizeof(int64_t) * TL_CTA_MAX * 10); /* llm_tl_launch's scratch */
    if (!rec || !v || hcq_buf_read(tl->buf, 0, rec, used_B) != HCQ_OK) {
        HCQ_LOG_WARN("NVHCQ_MVQ_TL: the records could not be read back; no timeline rows");
        goto out;
    }
    /* the SM clock in cycles per ns over every CTA (entry to warp 0's end), and the global timer's
     * smallest nonzero step between two CTAs' entries */
    double cyc = 0, ns = 0;
    int64_t step = 0;
    for (uint32_t j = 0; j < tl->n; j++)
        for (uint32_t b = 0; b < tl->grid[j]; b++) {
            const uint64_t *r = rec + (j * (uint64_t)TL_CTA_MAX + b) * TL_WORDS;
            if (r[0] && r[4] > r[0] && r[15] > r[12])
                cyc += (double)(r[15] - r[12]), ns += (double)(r[4] - r[0]);
        }
    if (ns <= 0) /* no records: a backend whose kernels are twins */
        goto out;
    const double rate = cyc / ns;
    const char *labels[TL_LABELS];
    uint32_t row0[TL_LABELS]; /* each label's first row */
    uint32_t n_labels = 0;
    for (uint32_t j = 0; j < tl->n; j++) {
        const uint32_t i = tl->prof_i[j];
        if (i >= pf->n)
            continue;
        const char *label = pf->label[i];
        uint32_t L = 0;
        while (L < n_labels && strcmp(labels[L], label))
            L++;
        if (L == n_labels) {
            if (n_labels == TL_LABELS || *n_rows + LLM_TL_PHASES > max_rows)
                continue;
            labels[n_labels] = label;
            row0[n_labels++] = *n_rows;
            for (uint32_t k = 0; k < LLM_TL_PHASES; k++) {
                snprintf(tl->name[L][k], sizeof tl->name[L][k], "tl %s: %s", label, phase_name[k]);
                rows[*n_rows + k] = (struct llm_prof_row){.kernel = tl->name[L][k]};
            }
            *n_rows += LLM_TL_PHASES;
        }
        struct llm_prof_row *row = rows + row0[L];
        const int64_t t0 = (int64_t)hcq_signal_timestamp_ns(pf->ts[i]);
        const int64_t done = (int64_t)hcq_signal_timestamp_ns(pf->ts[i + 1]);
        int64_t val[LLM_TL_PHASES];
        if (!llm_tl_launch(rec + j * (uint64_t)TL_CTA_MAX * TL_WORDS, tl->grid[j], t0, done, rate, v, val,
                           &step))
            continue;
        for (uint32_t k = 0; k < LLM_TL_PHASES; k++) {
            row[k].count++;
            row[k].us += (double)val[k] * 1e-3;
        }
    }
    /* the global timer's smallest step between two CTAs' entries, as a row of its own: a coarse
     * timer (a step near 1 us) makes the global-timer rows multiples of it */
    if (step && *n_rows < max_rows)
        rows[(*n_rows)++] = (struct llm_prof_row){
            .kernel = "tl: %globaltimer's smallest step seen", .count = 1, .us = (double)step * 1e-3};
    HCQ_LOG_INFO("NVHCQ_MVQ_TL: %u launches, SM clock %.3f GHz, global timer step %lld ns", tl->n, rate,
                 (long long)step);
out:
    free(rec);
    free(v);
}
