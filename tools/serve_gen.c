/* SPDX-License-Identifier: MIT */
/*
 * serve_gen.c - the generation worker of `nvhcq serve` (serve_gen.h): one thread owns the
 * model, takes requests from a bounded FIFO and decodes them one at a time, as `nvhcq run`
 * does (tokenize, prefill, sample, decode, stream detokenized text), with stop strings matched
 * on the text and cancellation between tokens. Layer: tools.
 */
#include "serve_gen_int.h"

#include "hcq.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
srv_req_free(struct srv_req *req)
{
    free(req->prompt);
    req->prompt = NULL;
    free(req->ids);
    req->ids = NULL;
    req->n_ids = 0;
    for (int i = 0; i < req->n_stop; i++)
        free(req->stop[i]);
    req->n_stop = 0;
}

enum hcq_status
srv_chat_render(const struct srv_gen *g, const struct llm_chat_msg *msgs, size_t n, char **out)
{
    *out = NULL;
    if (g->tmpl)
        return llm_chat_tmpl_apply(g->tmpl, msgs, n, true, out, NULL);
    size_t need = llm_chat_render(LLM_CHAT_NONE, msgs, n, true, NULL, 0);
    if (!(*out = malloc(need + 1)))
        return HCQ_ERR_NOMEM;
    llm_chat_render(LLM_CHAT_NONE, msgs, n, true, *out, need + 1);
    return HCQ_OK;
}

bool
srv_sf_append(struct srv_stop_filter *f, const char *s, size_t n)
{
    if (f->len + n + 1 > f->cap) {
        size_t cap = (f->len + n + 1) * 2;
        char *b = realloc(f->buf, cap);
        if (!b)
            return false;
        f->buf = b;
        f->cap = cap;
    }
    memcpy(f->buf + f->len, s, n);
    f->len += n;
    f->buf[f->len] = 0;
    return true;
}

void
srv_send_text(struct srv_job *j, const char *s, size_t n)
{
    if (!n)
        return;
    struct srv_event ev = {.kind = SRV_EV_TEXT, .text = s, .len = n};
    j->cb(j->user, &ev);
}

int
srv_end_before(const struct srv_req *r, const struct llm_tok *tok, int32_t id, uint32_t ct, uint32_t pos,
               uint32_t n_ctx)
{
    if ((r->max_tokens >= 0 && ct >= r->max_tokens) || pos >= n_ctx)
        return SRV_FIN_LENGTH;
    if (llm_tok_is_eog(tok, id) && !r->ignore_eos)
        return SRV_FIN_STOP;
    return -1;
}

bool
srv_last_token(const struct srv_req *r, uint32_t ct, uint32_t pos, uint32_t n_ctx)
{
    return (r->max_tokens >= 0 && ct >= r->max_tokens) || pos + 1 >= n_ctx;
}

enum srv_finish
srv_end_text(struct srv_job *j, struct llm_detok *d, struct srv_stop_filter *f, enum srv_finish fin,
             bool stop_hit, const char **error)
{
    char out[64];
    if (fin != SRV_FIN_LENGTH && (fin != SRV_FIN_STOP || stop_hit))
        return fin;
    const size_t w = llm_detok_flush(d, out, sizeof out);
    if (!srv_sf_append(f, out, w)) {
        *error = "out of memory";
        return SRV_FIN_ERROR;
    }
    if (srv_sf_step(f, j))
        return SRV_FIN_STOP;
    srv_send_text(j, f->buf, f->len);
    return fin;
}

/* Send what can no longer be part of a stop string; true when a stop string was found (the
 * text before it is sent, the rest dropped). */
bool
srv_sf_step(struct srv_stop_filter *f, struct srv_job *j)
{
    const struct srv_req *r = &j->req;
    size_t cut = f->len; /* earliest stop match */
    for (int i = 0; i < r->n_stop; i++) {
        char *hit = memmem(f->buf, f->len, r->stop[i], strlen(r->stop[i]));
        if (hit && (size_t)(hit - f->buf) < cut)
            cut = (size_t)(hit - f->buf);
    }
    if (cut < f->len) {
        srv_send_text(j, f->buf, cut);
        f->len = 0;
        return true;
    }
    /* keep the longest tail that is a proper prefix of a stop string */
    size_t keep = 0;
    for (int i = 0; i < r->n_stop; i++) {
        size_t sl = strlen(r->stop[i]);
        for (size_t k = sl - 1 < f->len ? sl - 1 : f->len; k > keep; k--)
            if (!memcmp(f->buf + f->len - k, r->stop[i], k)) {
                keep = k;
                break;
            }
    }
    srv_send_text(j, f->buf, f->len - keep);
    memmove(f->buf, f->buf + f->len - keep, keep);
    f->len = keep;
    return false;
}

void
srv_finish(struct srv_gen *g, struct srv_job *j, enum srv_finish fin, const char *error, uint32_t pt,
           uint32_t ct)
{
    struct srv_event ev = {
        .kind = SRV_EV_DONE, .finish = fin, .error = error, .prompt_tokens = pt, .completion_tokens = ct};
    pthread_mutex_lock(&g->mu);
    g->st.requests_done++;
    g->st.requests_cancelled += fin == SRV_FIN_CANCELLED;
    pthread_mutex_unlock(&g->mu);
    j->cb(j->user, &ev);
}

void
srv_add_time(struct srv_gen *g, double *field, double s, uint64_t *tokens, uint32_t n)
{
    pthread_mutex_lock(&g->mu);
    *field += s;
    *tokens += n;
    pthread_mutex_unlock(&g->mu);
}

/* Serve one request to its DONE event. */
static void
run_job(struct srv_gen *g, struct srv_job *j)
{
    struct llm_model *m = g->m;
    const struct llm_tok *tok = llm_model_tok(m);
    uint32_t n_ctx = llm_model_n_ctx(m), n_vocab = llm_model_hparams(m)->n_vocab;
    struct srv_req *r = &j->req;
    struct llm_sampler *s = NULL;
    struct srv_stop_filter f = {0};
    const int32_t *ids = r->ids;
    char msg[256], out[4096];
    uint32_t ct = 0;
    size_t cnt = r->n_ids;
    if (atomic_load(&j->cancel)) {
        srv_finish(g, j, SRV_FIN_CANCELLED, NULL, 0, 0);
        return;
    }
    if (!cnt || cnt >= n_ctx) { /* srv_gen_tokenize refuses these: a caller that did not ask it */
        snprintf(msg, sizeof msg, "the prompt has %zu tokens; the context holds %u", cnt, n_ctx);
        srv_finish(g, j, SRV_FIN_BAD_PROMPT, msg, (uint32_t)cnt, 0);
        return;
    }
    if (llm_sampler_create(&r->sp, n_vocab, &s)) {
        snprintf(msg, sizeof msg, "sampling parameters: %s", hcq_last_error());
        srv_finish(g, j, SRV_FIN_BAD_PROMPT, msg, (uint32_t)cnt, 0);
        goto done;
    }
    /* the device sampler: bound per request (its window reset), fed the prompt; the host sampler
     * s checks the parameters either way */
    const bool dev = g->dev_sample;
    if (dev && (llm_model_sampler_set(m, &r->sp) || llm_model_sampler_accept(m, ids, (uint32_t)cnt))) {
        snprintf(msg, sizeof msg, "sampler: %s", hcq_last_error());
        srv_finish(g, j, SRV_FIN_ERROR, msg, (uint32_t)cnt, 0);
        goto done;
    }
    for (size_t i = 0; !dev && i < cnt; i++)
        llm_sampler_accept(s, ids[i]);
    uint64_t t0 = hcq_time_ns();
    int32_t id = 0;
    if (llm_model_eval(m, ids, (uint32_t)cnt, 0) || llm_logits_check(llm_model_logits(m), n_vocab) ||
        (dev && llm_model_sample(m, &id))) {
        snprintf(msg, sizeof msg, "prompt evaluation failed: %s", hcq_last_error());
        srv_finish(g, j, SRV_FIN_ERROR, msg, (uint32_t)cnt, 0);
        goto done;
    }
    if (!dev) {
        id = llm_sampler_sample(s, llm_model_logits(m));
        llm_sampler_accept(s, id);
    }
    srv_add_time(g, &g->st.prefill_s, (hcq_time_ns() - t0) * 1e-9, &g->st.prompt_tokens, (uint32_t)cnt);
    struct srv_event start = {.kind = SRV_EV_START, .prompt_tokens = (uint32_t)cnt};
    j->cb(j->user, &start);
    struct llm_detok d;
    llm_detok_init(&d);
    d.first = false;
    uint32_t pos = (uint32_t)cnt;
    enum srv_finish fin = SRV_FIN_LENGTH;
    bool stop_hit = false;
    t0 = hcq_time_ns();
    /* id: the token sampled last. On the device the step that decodes it (and samples the next
     * one from device memory) is queued before its text is sent, so sending overlaps the step;
     * a queued step is always waited for before the loop ends (the next request rebinds the
     * sampler's state) */
    for (;;) {
        if (atomic_load(&j->cancel)) {
            fin = SRV_FIN_CANCELLED;
            break;
        }
        const int end = srv_end_before(r, tok, id, ct, pos, n_ctx);
        if (end >= 0) {
            fin = (enum srv_finish)end;
            break;
        }
        ct++;
        /* the last token's next step is not needed once the limit is reached */
        const bool more = !srv_last_token(r, ct, pos, n_ctx);
        if (dev && more && llm_model_gen_submit(m, pos)) {
            snprintf(msg, sizeof msg, "decode failed: %s", hcq_last_error());
            srv_finish(g, j, SRV_FIN_ERROR, msg, (uint32_t)cnt, ct);
            goto done;
        }
        size_t w = llm_detok_push(&d, tok, id, out, sizeof out);
        const bool oom = !srv_sf_append(&f, out, w);
        const bool hit = !oom && srv_sf_step(&f, j);
        enum hcq_status rs = HCQ_OK;
        if (more && dev) {
            pos++;
            rs = llm_model_gen_wait(m, &id);
        } else if (more && !oom && !hit) {
            rs = llm_model_eval(m, &id, 1, pos++);
            if (!rs)
                rs = llm_logits_check(llm_model_logits(m), n_vocab);
            if (!rs) {
                id = llm_sampler_sample(s, llm_model_logits(m));
                llm_sampler_accept(s, id);
            }
        } else {
            pos++;
        }
        if (oom) {
            srv_finish(g, j, SRV_FIN_ERROR, "out of memory", (uint32_t)cnt, ct);
            goto done;
        }
        if (hit) {
            fin = SRV_FIN_STOP;
            stop_hit = true;
            break;
        }
        if (rs) {
            snprintf(msg, sizeof msg, "decode failed: %s", hcq_last_error());
            srv_finish(g, j, SRV_FIN_ERROR, msg, (uint32_t)cnt, ct);
            goto done;
        }
    }
    srv_add_time(g, &g->st.decode_s, (hcq_time_ns() - t0) * 1e-9, &g->st.completion_tokens, ct);
    const char *error = NULL;
    fin = srv_end_text(j, &d, &f, fin, stop_hit, &error);
    srv_finish(g, j, fin, error, (uint32_t)cnt, ct);
done:
    free(f.buf);
    llm_sampler_destroy(s);
}

static int
load(struct srv_gen *g)
{
    struct llm_model_params mp;
    llm_model_params_default(&mp);
    mp.dev_spec = g->p.dev;
    mp.n_ctx = g->p.n_ctx;
    mp.n_batch = g->p.n_batch;
    if (llm_gguf_open(g->p.model, &g->gguf) || llm_model_load_gguf(g->gguf, &mp, &g->m)) {
        snprintf(g->err, sizeof g->err, "cannot load %s: %s", g->p.model, hcq_last_error());
        return -1;
    }
    /* the most input bytes one token can stand for: a prompt longer than n_ctx of them cannot
     * fit, and is refused before it is tokenized (no work spent on what cannot be served); 8
     * covers an unknown character's token */
    const struct llm_tok *tok = llm_model_tok(g->m);
    char piece[1024];
    g->max_piece = 8;
    for (uint32_t i = 0; i < llm_tok_vocab_size(tok); i++) {
        size_t n = llm_tok_piece(tok, (int32_t)i, true, piece, sizeof piece);
        g->max_piece = n > g->max_piece ? (uint32_t)n : g->max_piece;
    }
    /* the chat template is compiled once at load: one the renderer cannot handle is an error now,
     * naming the construct, not on the first request */
    const char *t = g->p.chat_template;
    if (!(t && !strcmp(t, "none")) && llm_chat_tmpl_from_model(g->gguf, t, &g->tmpl)) {
        snprintf(g->err, sizeof g->err, "chat template: %s", hcq_last_error());
        return -1;
    }
    /* sampling on the device where it holds the vocabulary (only the token id crosses to the
     * host each step); --host-sample, or a vocabulary it does not hold: the host sampler */
    struct llm_sampler_params sp;
    llm_sampler_params_default(&sp);
    g->dev_sample = !g->p.host_sample && llm_model_sampler_set(g->m, &sp) == HCQ_OK;
    struct hcq_device_info info;
    if (hcq_device_info(llm_model_device(g->m), &info) == HCQ_OK)
        snprintf(g->dev_name, sizeof g->dev_name, "%s", info.spec);
    /* several slots: a batch of them, each with the model's whole context (its KV cache sized
     * and checked against the device's free memory here, not on a request) */
    if (g->p.parallel > 1) {
        struct llm_batch_params bp = {.n_seq = g->p.parallel, .n_ctx = llm_model_n_ctx(g->m)};
        if (llm_batch_create(g->m, &bp, &g->b)) {
            snprintf(g->err, sizeof g->err, "--parallel %u: %s", g->p.parallel, hcq_last_error());
            return -1;
        }
    }
    return 0;
}

static void *
worker(void *arg)
{
    struct srv_gen *g = arg;
    int rc = load(g);
    pthread_mutex_lock(&g->mu);
    g->load_done = true;
    g->load_ok = rc == 0;
    pthread_cond_broadcast(&g->cv);
    if (rc == 0 && g->b) {
        srv_worker_batch(g);
        rc = 1;
    }
    while (rc == 0) {
        while (!g->head && !g->draining)
            pthread_cond_wait(&g->cv, &g->mu);
        struct srv_job *j = g->head;
        if (!j)
            break; /* draining and nothing left */
        g->head = j->next;
        if (!g->head)
            g->tail = NULL;
        g->queued--;
        g->running = 1;
        pthread_mutex_unlock(&g->mu);
        run_job(g, j);
        srv_req_free(&j->req);
        free(j);
        pthread_mutex_lock(&g->mu);
        g->running = 0;
    }
    pthread_mutex_unlock(&g->mu);
    return NULL;
}

int
srv_gen_start(const struct srv_gen_params *p, struct srv_gen **g_out, char *err, size_t err_B)
{
    *g_out = NULL;
    struct srv_gen *g = calloc(1, sizeof *g);
    if (!g) {
        snprintf(err, err_B, "out of memory");
        return -1;
    }
    g->p = *p;
    pthread_mutex_init(&g->mu, NULL);
    pthread_cond_init(&g->cv, NULL);
    snprintf(g->dev_name, sizeof g->dev_name, "unknown device");
    if (pthread_create(&g->th, NULL, worker, g)) {
        snprintf(err, err_B, "cannot start the generation thread");
        free(g);
        return -1;
    }
    pthread_mutex_lock(&g->mu);
    while (!g->load_done)
        pthread_cond_wait(&g->cv, &g->mu);
    bool ok = g->load_ok;
    pthread_mutex_unlock(&g->mu);
    if (!ok) {
        pthread_join(g->th, NULL);
        snprintf(err, err_B, "%s", g->err);
        llm_batch_destroy(g->b);
        llm_model_destroy(g->m);
        llm_gguf_destroy(g->gguf);
        pthread_mutex_destroy(&g->mu);
        pthread_cond_destroy(&g->cv);
        free(g);
        return -1;
    }
    *g_out = g;
    return 0;
}

void
srv_gen_stop(struct srv_gen *g)
{
    if (!g)
        return;
    pthread_mutex_lock(&g->mu);
    g->draining = true;
    pthread_cond_broadcast(&g->cv);
    bool join = !g->joined;
    g->joined = true;
    pthread_mutex_unlock(&g->mu);
    if (join)
        pthread_join(g->th, NULL);
}

void
srv_gen_free(struct srv_gen *g)
{
    if (!g)
        return;
    srv_gen_stop(g);
    llm_chat_tmpl_destroy(g->tmpl);
    llm_batch_destroy(g->b);
    llm_model_destroy(g->m);
    llm_gguf_destroy(g->gguf);
    pthread_mutex_destroy(&g->mu);
    pthread_cond_destroy(&g->cv);
    free(g);
}

enum srv_submit
srv_gen_submit(struct srv_gen *g, struct srv_req *req, srv_event_cb cb, void *user, struct srv_job **job_out)
{
    *job_out = NULL;
    struct srv_job *j = calloc(1, sizeof *j);
    if (!j)
        return SRV_NOMEM;
    pthread_mutex_lock(&g->mu);
    /* max_queue wait beyond the ones running; each idle slot takes one more */
    const uint32_t slots = g->b ? g->p.parallel : 1;
    uint32_t cap = g->p.max_queue + (g->running < slots ? slots - g->running : 0);
    enum srv_submit rc = g->draining ? SRV_DRAINING : g->queued >= cap ? SRV_QUEUE_FULL : SRV_SUBMITTED;
    if (rc == SRV_SUBMITTED) {
        j->req = *req;
        *req = (struct srv_req){0};
        j->cb = cb;
        j->user = user;
        atomic_init(&j->cancel, false);
        if (g->tail)
            g->tail->next = j;
        else
            g->head = j;
        g->tail = j;
        g->queued++;
        *job_out = j;
        pthread_cond_broadcast(&g->cv);
    }
    pthread_mutex_unlock(&g->mu);
    if (rc != SRV_SUBMITTED)
        free(j);
    return rc;
}

void
srv_gen_cancel(struct srv_job *job)
{
    atomic_store(&job->cancel, true);
}

int
srv_gen_tokenize(const struct srv_gen *g, struct srv_req *r, char *err, size_t err_B)
{
    const struct llm_tok *tok = llm_model_tok(g->m);
    uint32_t n_ctx = llm_model_n_ctx(g->m);
    size_t len = strlen(r->prompt), cnt = 0;
    if (len > (size_t)n_ctx * g->max_piece) {
        snprintf(err, err_B,
                 "the prompt has %zu bytes: more than the context's %u tokens can hold (the server's "
                 "--ctx-size sets it)",
                 len, n_ctx);
        return -1;
    }
    int32_t *ids = malloc((len + 8) * sizeof *ids);
    if (!ids || llm_tok_encode(tok, r->prompt, len, r->add_bos || !len, true, ids, len + 8, &cnt)) {
        snprintf(err, err_B, "tokenizing the prompt failed: %s", ids ? hcq_last_error() : "out of memory");
        free(ids);
        return -2;
    }
    if (!cnt || cnt >= n_ctx) {
        snprintf(
            err, err_B,
            "the prompt has %zu tokens; the context holds %u, with room for at least one generated token "
            "(the server's --ctx-size sets it)",
            cnt, n_ctx);
        free(ids);
        return -1;
    }
    free(r->ids);
    r->ids = ids;
    r->n_ids = cnt;
    return 0;
}

const struct llm_tok *
srv_gen_tok(const struct srv_gen *g)
{
    return llm_model_tok(g->m);
}

uint32_t
srv_gen_n_ctx(const struct srv_gen *g)
{
    return llm_model_n_ctx(g->m);
}

const char *
srv_gen_chat_tmpl_name(const struct srv_gen *g)
{
    return g->tmpl ? llm_chat_tmpl_name(g->tmpl) : "none (contents joined by newlines)";
}

const char *
srv_gen_device_name(const struct srv_gen *g)
{
    return g->dev_name;
}

void
srv_gen_stats(struct srv_gen *g, struct srv_gen_stats *out)
{
    pthread_mutex_lock(&g->mu);
    *out = g->st;
    out->queued = g->queued;
    out->running = g->running;
    out->slots = g->b ? g->p.parallel : 1;
    pthread_mutex_unlock(&g->mu);
}
