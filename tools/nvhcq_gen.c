/* SPDX-License-Identifier: MIT */
/*
 * nvhcq_gen.c - prompt evaluation and streamed decoding shared by `nvhcq run` and
 * `nvhcq chat`: tokens to stdout as they are sampled (UTF-8 held back until whole), timing
 * for the summary line. Layer: tools (programs may print and exit).
 */
#include "nvhcq_gen.h"
#include "hcq.h"
#include "nvhcq_cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The text of one generated token as --special wants it: control tokens render as their
 * name; other tokens go through the streaming detokenizer (UTF-8 held back until whole). */
static size_t
token_text(const struct llm_tok *tok, struct llm_detok *d, int32_t id, bool special, char *out, size_t cap)
{
    if (special) {
        char piece[512];
        size_t plain = llm_tok_piece(tok, id, false, piece, sizeof piece);
        size_t named = plain ? 0 : llm_tok_piece(tok, id, true, piece, sizeof piece);
        if (named) {
            size_t w = llm_detok_flush(d, out, cap); /* text held so far comes first */
            size_t k = named < cap - w ? named : cap - w;
            memcpy(out + w, piece, k);
            return w + k;
        }
    }
    return llm_detok_push(d, tok, id, out, cap);
}

/* stdout, and the reply being collected */
static int
put(const struct nvhcq_gen_opts *o, const char *s, size_t n)
{
    fwrite(s, 1, n, stdout);
    if (o->reply && n) {
        char *r = realloc(*o->reply, *o->reply_n + n + 1);
        if (!r)
            return cli_fail(o->cmd, "out of memory");
        memcpy(r + *o->reply_n, s, n);
        *o->reply_n += n;
        r[*o->reply_n] = 0;
        *o->reply = r;
    }
    return 0;
}

int
nvhcq_gen_prefill(struct llm_model *m, struct llm_sampler *s, const struct nvhcq_gen_opts *o,
                  const int32_t *ids, size_t n, uint32_t pos, struct nvhcq_gen_stats *st)
{
    if (o->show_ids) {
        fprintf(stderr, "prompt: %zu tokens:", n);
        for (size_t i = 0; i < n; i++)
            fprintf(stderr, " %d", ids[i]);
        fprintf(stderr, "\n");
    }
    if (o->host_sample) {
        for (size_t i = 0; i < n; i++)
            llm_sampler_accept(s, ids[i]);
    } else if (llm_model_sampler_accept(m, ids, (uint32_t)n)) {
        return cli_fail(o->cmd, "sampler: %s", hcq_last_error());
    }
    uint64_t t0 = hcq_time_ns();
    if (llm_model_eval(m, ids, (uint32_t)n, pos) ||
        llm_logits_check(llm_model_logits(m), llm_model_hparams(m)->n_vocab))
        return cli_fail(o->cmd, "prompt evaluation failed: %s", hcq_last_error());
    st->pp_s += (hcq_time_ns() - t0) * 1e-9;
    st->pp_n += (uint32_t)n;
    return 0;
}

int
nvhcq_gen_decode(struct llm_model *m, struct llm_sampler *s, const struct nvhcq_gen_opts *o, uint32_t *pos,
                 struct nvhcq_gen_stats *st)
{
    const struct llm_tok *tok = llm_model_tok(m);
    uint32_t n_ctx = llm_model_n_ctx(m);
    struct llm_detok d;
    llm_detok_init(&d);
    d.first = false;
    char out[2048];
    int i = 0;
    int32_t id = 0;
    uint64_t t0 = hcq_time_ns();
    if (o->host_sample) {
        id = llm_sampler_sample(s, llm_model_logits(m));
        llm_sampler_accept(s, id);
    } else if (llm_model_sample(m, &id)) {
        return cli_fail(o->cmd, "sampling failed: %s", hcq_last_error());
    }
    for (; (o->n_predict < 0 || i < o->n_predict) && *pos < n_ctx; i++) {
        if (o->cancel && *o->cancel) {
            st->cancelled = true;
            break;
        }
        bool eog = llm_tok_is_eog(tok, id);
        for (size_t k = 0; k < o->n_stop_ids && !eog; k++)
            eog = id == o->stop_ids[k];
        if (eog && !o->special)
            break;
        if (!eog && !o->host_sample && llm_model_gen_submit(m, *pos))
            return cli_fail(o->cmd, "decode failed: %s", hcq_last_error());
        size_t w = token_text(tok, &d, id, o->special, out, sizeof out);
        if (put(o, out, w))
            return 1;
        if (o->show_ids)
            printf("[%d]", id);
        fflush(stdout);
        if (eog)
            break;
        st->tg_empty += w == 0 && llm_tok_piece(tok, id, false, out, sizeof out) == 0;
        st->tg_n++;
        enum hcq_status rs;
        if (o->host_sample) {
            rs = llm_model_eval(m, &id, 1, (*pos)++);
            if (!rs)
                rs = llm_logits_check(llm_model_logits(m), llm_model_hparams(m)->n_vocab);
            if (!rs) {
                id = llm_sampler_sample(s, llm_model_logits(m));
                llm_sampler_accept(s, id);
            }
        } else {
            (*pos)++;
            rs = llm_model_gen_wait(m, &id);
        }
        if (rs) {
            fprintf(stdout, "\n");
            return cli_fail(o->cmd, "decode failed: %s", hcq_last_error());
        }
    }
    size_t w = llm_detok_flush(&d, out, sizeof out);
    if (put(o, out, w))
        return 1;
    st->tg_s += (hcq_time_ns() - t0) * 1e-9;
    st->ctx_full = *pos >= n_ctx && (o->n_predict < 0 || i < o->n_predict);
    return 0;
}
