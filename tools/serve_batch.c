/* SPDX-License-Identifier: MIT */
/*
 * serve_batch.c - the batched loop of `nvhcq serve --parallel N` (serve_gen_int.h): up to N
 * requests decoded together, one llm_batch_step per token for all of them (continuous batching:
 * queued requests take free slots between two steps, their prompts prefilled together by one
 * llm_batch_prefill, and a finished or cancelled one leaves its slot at once). Each slot does what the
 * one-slot loop (serve_gen.c run_job) does per token - the same end conditions in the same order, stop
 * strings on the text, detokenized pieces streamed - with the slot's own sampler (llm_batch_seq_sampler:
 * greedy slots pick on the device, the others on the host from their row of logits). Layer: tools.
 */
#include "serve_gen_int.h"

#include "hcq.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct slot {
    struct srv_job *j; /* NULL: free */
    uint32_t seq;      /* its batch slot */
    int32_t id;        /* the token sampled last, not yet sent */
    uint32_t pos, ct, cnt;
    bool stepped; /* id goes through the next step */
    struct llm_detok d;
    struct srv_stop_filter f;
};

/* DONE sent: the request's memory and the slot are free, one fewer running. */
static void
slot_free(struct srv_gen *g, struct slot *sl)
{
    free(sl->f.buf);
    srv_req_free(&sl->j->req);
    free(sl->j);
    memset(sl, 0, sizeof *sl);
    pthread_mutex_lock(&g->mu);
    g->running--;
    pthread_mutex_unlock(&g->mu);
}

/* End the slot's request: the held text where it ended without a stop string, DONE, the slot free. */
static void
slot_end(struct srv_gen *g, struct slot *sl, enum srv_finish fin, bool stop_hit, const char *error)
{
    struct srv_job *j = sl->j;
    if (!error)
        fin = srv_end_text(j, &sl->d, &sl->f, fin, stop_hit, &error);
    srv_add_time(g, &g->st.decode_s, 0, &g->st.completion_tokens, sl->ct);
    srv_finish(g, j, fin, error, sl->cnt, sl->ct);
    llm_batch_seq_remove(g->b, sl->seq);
    slot_free(g, sl);
}

/* A request into a free slot: checks, a batch slot, its sampler fed the prompt (the prefill
 * follows, for every request admitted together: admit()). false: it ended already (DONE sent,
 * nothing held). */
static bool
slot_start(struct srv_gen *g, struct slot *sl, struct srv_job *j)
{
    const uint32_t n_ctx = llm_batch_n_ctx(g->b), n_vocab = llm_model_hparams(g->m)->n_vocab;
    struct srv_req *r = &j->req;
    struct llm_sampler *s = NULL;
    char msg[256];
    enum srv_finish fin = SRV_FIN_ERROR;
    *sl = (struct slot){.j = j, .cnt = (uint32_t)r->n_ids};
    if (atomic_load(&j->cancel)) {
        fin = SRV_FIN_CANCELLED;
        msg[0] = 0;
        goto fail;
    }
    if (!r->n_ids || r->n_ids >= n_ctx) { /* srv_gen_tokenize refuses these */
        snprintf(msg, sizeof msg, "the prompt has %zu tokens; the context holds %u", r->n_ids, n_ctx);
        fin = SRV_FIN_BAD_PROMPT;
        goto fail;
    }
    /* the parameters are checked as the one-slot loop checks them (a sampler made of them) */
    if (llm_sampler_create(&r->sp, n_vocab, &s)) {
        snprintf(msg, sizeof msg, "sampling parameters: %s", hcq_last_error());
        fin = SRV_FIN_BAD_PROMPT;
        goto fail;
    }
    llm_sampler_destroy(s);
    if (llm_batch_seq_add(g->b, &sl->seq)) {
        snprintf(msg, sizeof msg, "no free slot: %s", hcq_last_error());
        goto fail;
    }
    if (llm_batch_seq_sampler(g->b, sl->seq, &r->sp, r->ids, sl->cnt)) {
        snprintf(msg, sizeof msg, "sampler: %s", hcq_last_error());
        llm_batch_seq_remove(g->b, sl->seq);
        goto fail;
    }
    return true;
fail:
    srv_finish(g, j, fin, fin == SRV_FIN_CANCELLED ? NULL : msg, sl->cnt, 0);
    slot_free(g, sl);
    return false;
}

/* The slot's token before a step (run_job's loop body up to its decode): end conditions, then the
 * token's text; sl->stepped when its token goes through the step. */
static void
slot_emit(struct srv_gen *g, struct slot *sl, uint32_t n_ctx)
{
    const struct srv_req *r = &sl->j->req;
    const struct llm_tok *tok = llm_model_tok(g->m);
    char out[4096];
    sl->stepped = false;
    if (atomic_load(&sl->j->cancel))
        return slot_end(g, sl, SRV_FIN_CANCELLED, false, NULL);
    const int end = srv_end_before(r, tok, sl->id, sl->ct, sl->pos, n_ctx);
    if (end >= 0)
        return slot_end(g, sl, (enum srv_finish)end, false, NULL);
    sl->ct++;
    const size_t w = llm_detok_push(&sl->d, tok, sl->id, out, sizeof out);
    if (!srv_sf_append(&sl->f, out, w))
        return slot_end(g, sl, SRV_FIN_ERROR, false, "out of memory");
    if (srv_sf_step(&sl->f, sl->j))
        return slot_end(g, sl, SRV_FIN_STOP, true, NULL);
    /* the last token's step is not needed once the limit is reached */
    if (srv_last_token(r, sl->ct, sl->pos, n_ctx))
        sl->pos++; /* (ends LENGTH before the next step) */
    else
        sl->stepped = true;
}

/* The prompts of the k slots at idx[] (just started) in one llm_batch_prefill: the passes are
 * shared, as a step is; then each one's START. A failure ends all k. */
static void
admit(struct srv_gen *g, struct slot *sl, const uint32_t *idx, uint32_t k, uint32_t *seqs, int32_t *ids)
{
    const int32_t **pr = malloc(sizeof *pr * k);
    uint32_t *lens = malloc(sizeof *lens * k), total = 0;
    char msg[256];
    bool ok = pr && lens;
    snprintf(msg, sizeof msg, "out of host memory");
    for (uint32_t i = 0; ok && i < k; i++) {
        const struct slot *s = &sl[idx[i]];
        seqs[i] = s->seq, pr[i] = s->j->req.ids, lens[i] = s->cnt, total += s->cnt;
    }
    const uint64_t t0 = hcq_time_ns();
    if (ok && llm_batch_prefill(g->b, seqs, pr, lens, k, NULL, ids)) {
        snprintf(msg, sizeof msg, "prompt evaluation failed: %s", hcq_last_error());
        ok = false;
    }
    free(pr), free(lens);
    if (ok)
        srv_add_time(g, &g->st.prefill_s, (hcq_time_ns() - t0) * 1e-9, &g->st.prompt_tokens, total);
    for (uint32_t i = 0; i < k; i++) {
        struct slot *s = &sl[idx[i]];
        if (!ok) {
            slot_end(g, s, SRV_FIN_ERROR, false, msg);
            continue;
        }
        s->id = ids[i];
        s->pos = s->cnt;
        llm_detok_init(&s->d);
        s->d.first = false;
        struct srv_event start = {.kind = SRV_EV_START, .prompt_tokens = s->cnt};
        s->j->cb(s->j->user, &start);
    }
}

void
srv_worker_batch(struct srv_gen *g)
{
    const uint32_t N = g->p.parallel, n_ctx = llm_batch_n_ctx(g->b);
    struct slot *sl = calloc(N, sizeof *sl);
    uint32_t *seqs = malloc(4ull * N), *idx = malloc(4ull * N);
    int32_t *toks = malloc(4ull * N), *ids = malloc(4ull * N);
    enum hcq_status *sst = malloc(sizeof *sst * N);
    if (!sl || !seqs || !idx || !toks || !ids || !sst) {
        /* nothing can be served: every request is answered with the error until the drain */
        while (g->head || !g->draining) {
            while (!g->head && !g->draining)
                pthread_cond_wait(&g->cv, &g->mu);
            struct srv_job *j = g->head;
            if (!j)
                break;
            g->head = j->next;
            g->tail = g->head ? g->tail : NULL;
            g->queued--;
            pthread_mutex_unlock(&g->mu);
            srv_finish(g, j, SRV_FIN_ERROR, "out of host memory", 0, 0);
            srv_req_free(&j->req);
            free(j);
            pthread_mutex_lock(&g->mu);
        }
        goto done;
    }
    for (;;) {
        /* wait for work; admit queued requests into free slots (in arrival order) */
        while (!g->head && !g->running && !g->draining)
            pthread_cond_wait(&g->cv, &g->mu);
        if (!g->head && !g->running)
            break; /* draining and nothing left */
        uint32_t k = 0;
        for (uint32_t i = 0; i < N && g->head; i++) {
            if (sl[i].j)
                continue;
            struct srv_job *j = g->head;
            g->head = j->next;
            g->tail = g->head ? g->tail : NULL;
            g->queued--;
            g->running++;
            pthread_mutex_unlock(&g->mu);
            if (slot_start(g, &sl[i], j))
                idx[k++] = i;
            pthread_mutex_lock(&g->mu);
        }
        pthread_mutex_unlock(&g->mu);
        if (k)
            admit(g, sl, idx, k, seqs, ids);
        /* every slot's last token: its end, or its text and a place in the step */
        uint32_t n = 0;
        for (uint32_t i = 0; i < N; i++) {
            if (!sl[i].j)
                continue;
            slot_emit(g, &sl[i], n_ctx);
            if (sl[i].j && sl[i].stepped) {
                idx[n] = i;
                seqs[n] = sl[i].seq;
                toks[n++] = sl[i].id;
            }
        }
        if (n) {
            const uint64_t t0 = hcq_time_ns();
            if (llm_batch_step(g->b, seqs, toks, n, NULL, ids, sst)) {
                char msg[256];
                snprintf(msg, sizeof msg, "decode failed: %s", hcq_last_error());
                for (uint32_t r = 0; r < n; r++)
                    slot_end(g, &sl[idx[r]], SRV_FIN_ERROR, false, msg);
            } else {
                for (uint32_t r = 0; r < n; r++) {
                    struct slot *s = &sl[idx[r]];
                    s->pos++;
                    if (sst[r]) /* its slot is full (not stepped): ends LENGTH next */
                        s->pos = n_ctx;
                    else
                        s->id = ids[r];
                }
                srv_add_time(g, &g->st.decode_s, (hcq_time_ns() - t0) * 1e-9, &g->st.completion_tokens, 0);
            }
        }
        pthread_mutex_lock(&g->mu);
    }
done:
    free(sl), free(seqs), free(idx), free(toks), free(ids), free(sst);
}
