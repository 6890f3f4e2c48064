/* SPDX-License-Identifier: MIT */
/*
 * serve_api.c - POST /v1/chat/completions and /v1/completions of `nvhcq serve`: checks every
 * request field (a wrong type or range is a 400 naming the field), renders the prompt, queues
 * it with the generation worker (serve_gen.h) and answers with one JSON body or a stream of
 * server-sent events. A client that goes away cancels its generation. Layer: tools.
 */
#ifdef NVHCQ_HAVE_SERVE
#include "serve_http.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

/* What a request asked for, beside srv_req. */
struct api_req {
    bool chat, stream, include_usage;
    const char *bad_param; /* the field that failed */
    char bad_msg[256];
};

/* The bridge between the worker's events (worker thread) and the HTTP side (connection
 * thread). Two owners while submitted: freed by whoever lets go last. */
struct bridge {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int refs;
    bool started, done;
    enum srv_finish fin;
    char error[320];
    uint32_t pt, ct;
    char *text; /* generated text not yet taken (stream) or all of it (one body) */
    size_t len, cap;
    bool oom;
    struct srv_job *job;
    int fd; /* the client's socket, to notice that it went away */
    /* streaming */
    bool chat, include_usage, sent_role, sent_final, sent_done_marker;
    char id[48], model[128];
    time_t created;
    char *out; /* formatted event bytes waiting for MHD's buffer */
    size_t out_len, out_off;
};

static atomic_uint_fast64_t next_id = 1;

static void
bridge_unref(struct bridge *b)
{
    pthread_mutex_lock(&b->mu);
    bool last = --b->refs == 0;
    pthread_mutex_unlock(&b->mu);
    if (!last)
        return;
    pthread_mutex_destroy(&b->mu);
    pthread_cond_destroy(&b->cv);
    free(b->text);
    free(b->out);
    free(b);
}

static void
on_event(void *user, const struct srv_event *ev)
{
    struct bridge *b = user;
    pthread_mutex_lock(&b->mu);
    switch (ev->kind) {
    case SRV_EV_START:
        b->started = true;
        b->pt = ev->prompt_tokens;
        break;
    case SRV_EV_TEXT:
        if (b->len + ev->len + 1 > b->cap) {
            size_t cap = (b->len + ev->len + 1) * 2;
            char *t = realloc(b->text, cap);
            if (!t) {
                b->oom = true;
                break;
            }
            b->text = t;
            b->cap = cap;
        }
        memcpy(b->text + b->len, ev->text, ev->len);
        b->len += ev->len;
        b->text[b->len] = 0;
        break;
    case SRV_EV_DONE:
        b->done = true;
        b->fin = b->oom ? SRV_FIN_ERROR : ev->finish;
        snprintf(b->error, sizeof b->error, "%s", b->oom ? "out of memory" : ev->error ? ev->error : "");
        b->pt = ev->prompt_tokens;
        b->ct = ev->completion_tokens;
        break;
    }
    pthread_cond_broadcast(&b->cv);
    pthread_mutex_unlock(&b->mu);
    if (ev->kind == SRV_EV_DONE)
        bridge_unref(b);
}

/* True when the client closed its end (a peek reads end of file or fails). */
static bool
client_gone(int fd)
{
    char c;
    ssize_t r = recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
    return r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

enum wait_for { W_OUTPUT, W_STARTED, W_DONE };

static bool
wait_holds(const struct bridge *b, enum wait_for w)
{
    return b->done || (w == W_STARTED && b->started) || (w == W_OUTPUT && b->len > 0);
}

/* Wait (mu held) until `w` holds; false if the client went away first (the job is then
 * cancelled: it is still running, as DONE has not come). */
static bool
bridge_wait(struct bridge *b, enum wait_for w)
{
    while (!wait_holds(b, w)) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 100 * 1000 * 1000;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&b->cv, &b->mu, &ts);
        if (!wait_holds(b, w) && client_gone(b->fd)) {
            srv_gen_cancel(b->job);
            return false;
        }
    }
    return true;
}

/* ---- request fields ---- */

static bool bad(struct api_req *a, const char *param, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static bool
bad(struct api_req *a, const char *param, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->bad_msg, sizeof a->bad_msg, fmt, ap);
    va_end(ap);
    a->bad_param = param;
    return false;
}

/* An optional number field in [lo, hi] into *out; null or absent leaves *out. */
static bool
get_num(json_t *body, const char *key, double lo, double hi, double *out, struct api_req *a)
{
    json_t *v = json_object_get(body, key);
    if (!v || json_is_null(v))
        return true;
    if (!json_is_number(v))
        return bad(a, key, "'%s' must be a number", key);
    double x = json_number_value(v);
    if (!isfinite(x) || x < lo || x > hi)
        return bad(a, key, "'%s' is %g; it must be in [%g, %g]", key, x, lo, hi);
    *out = x;
    return true;
}

static bool
get_int(json_t *body, const char *key, json_int_t lo, json_int_t hi, json_int_t *out, struct api_req *a)
{
    json_t *v = json_object_get(body, key);
    if (!v || json_is_null(v))
        return true;
    if (!json_is_integer(v))
        return bad(a, key, "'%s' must be an integer", key);
    json_int_t x = json_integer_value(v);
    if (x < lo || x > hi)
        return bad(a, key, "'%s' is %lld; it must be in [%lld, %lld]", key, (long long)x, (long long)lo,
                   (long long)hi);
    *out = x;
    return true;
}

/* The text of a message's content: a string, or an array of {"type":"text","text":...} parts. */
static bool
content_text(json_t *c, char **out, struct api_req *a)
{
    *out = NULL;
    if (json_is_string(c))
        return (*out = strdup(json_string_value(c))) != NULL || bad(a, "messages", "out of memory");
    if (json_is_null(c))
        return (*out = strdup("")) != NULL || bad(a, "messages", "out of memory");
    if (!json_is_array(c))
        return bad(a, "messages", "a message's 'content' must be a string or an array of text parts");
    size_t n = 0, i;
    json_t *part;
    json_array_foreach(c, i, part)
    {
        json_t *t = json_object_get(part, "text");
        if (!json_is_object(part) || !json_is_string(json_object_get(part, "type")) ||
            strcmp(json_string_value(json_object_get(part, "type")), "text") || !json_is_string(t))
            return bad(a, "messages",
                       "content part %zu: only {\"type\": \"text\", \"text\": \"...\"} parts are "
                       "supported",
                       i);
        n += json_string_length(t);
    }
    if (!(*out = malloc(n + 1)))
        return bad(a, "messages", "out of memory");
    n = 0;
    json_array_foreach(c, i, part)
    {
        json_t *t = json_object_get(part, "text");
        memcpy(*out + n, json_string_value(t), json_string_length(t));
        n += json_string_length(t);
    }
    (*out)[n] = 0;
    return true;
}

static bool
chat_prompt(struct srv_gen *g, json_t *body, struct srv_req *r, struct api_req *a)
{
    json_t *msgs = json_object_get(body, "messages");
    if (!json_is_array(msgs) || json_array_size(msgs) == 0)
        return bad(a, "messages", "'messages' must be a non-empty array of {\"role\", \"content\"} objects");
    size_t n = json_array_size(msgs), i;
    struct llm_chat_msg *m = calloc(n, sizeof *m);
    char **texts = calloc(n, sizeof *texts);
    bool ok = m && texts;
    if (!ok)
        bad(a, "messages", "out of memory");
    json_t *msg;
    json_array_foreach(msgs, i, msg)
    {
        if (!ok)
            break;
        json_t *role = json_object_get(msg, "role");
        const char *rs = json_string_value(role);
        if (!json_is_object(msg) || !rs) {
            ok = bad(a, "messages", "message %zu: needs a string 'role'", i);
            break;
        }
        if (!strcmp(rs, "developer"))
            rs = "system"; /* OpenAI's newer name of the system role */
        if (strcmp(rs, "system") && strcmp(rs, "user") && strcmp(rs, "assistant")) {
            ok = bad(a, "messages",
                     "message %zu: role '%.40s' is not one of system, developer, user, assistant", i, rs);
            break;
        }
        if (!(ok = content_text(json_object_get(msg, "content"), &texts[i], a)))
            break;
        m[i] = (struct llm_chat_msg){rs, texts[i]};
    }
    enum hcq_status cst = ok ? srv_chat_render(g, m, n, &r->prompt) : HCQ_OK;
    if (cst == HCQ_ERR_NOMEM)
        ok = bad(a, "messages", "out of memory");
    else if (cst)
        ok = bad(a, "messages", "the chat template cannot render these messages: %s", hcq_last_error());
    for (i = 0; texts && i < n; i++)
        free(texts[i]);
    free(texts);
    free(m);
    return ok;
}

static bool
text_prompt(json_t *body, struct srv_req *r, struct api_req *a)
{
    json_t *p = json_object_get(body, "prompt");
    if (json_is_array(p) && json_array_size(p) == 1 && json_is_string(json_array_get(p, 0)))
        p = json_array_get(p, 0);
    if (json_is_array(p) && json_array_size(p) > 1)
        return bad(a, "prompt", "one prompt per request: 'prompt' has %zu", json_array_size(p));
    if (!json_is_string(p))
        return bad(a, "prompt", "'prompt' must be a string");
    return (r->prompt = strdup(json_string_value(p))) != NULL || bad(a, "prompt", "out of memory");
}

/* Every field into r and a; false with a->bad_* set on the first bad one. */
static bool
parse_req(struct srv_gen *g, json_t *body, struct srv_req *r, struct api_req *a)
{
    json_t *model = json_object_get(body, "model");
    if (model && !json_is_string(model))
        return bad(a, "model", "'model' must be a string");
    if (!(a->chat ? chat_prompt(g, body, r, a) : text_prompt(body, r, a)))
        return false;
    /* chat: the rendered template starts the sequence; completions: the model's BOS rule */
    r->add_bos = llm_tok_add_bos_default(srv_gen_tok(g));
    json_int_t max_t = -1, n = 1, top_k = 0, seed = -1;
    if (!get_int(body, "max_tokens", 1, 1 << 30, &max_t, a) ||
        !get_int(body, "max_completion_tokens", 1, 1 << 30, &max_t, a) || !get_int(body, "n", 1, 1, &n, a) ||
        !get_int(body, "top_k", 0, 1 << 30, &top_k, a) ||
        !get_int(body, "seed", INT64_MIN, INT64_MAX, &seed, a))
        return false;
    r->max_tokens = max_t;
    /* OpenAI's defaults: temperature 1, top_p 1, no top-k, min-p or penalties */
    double temp = 1, top_p = 1, min_p = 0, pres = 0, freq = 0;
    if (!get_num(body, "temperature", 0, 2, &temp, a) || !get_num(body, "top_p", 0, 1, &top_p, a) ||
        !get_num(body, "min_p", 0, 1, &min_p, a) || !get_num(body, "presence_penalty", -2, 2, &pres, a) ||
        !get_num(body, "frequency_penalty", -2, 2, &freq, a))
        return false;
    llm_sampler_params_default(&r->sp);
    r->sp.temp = top_p == 0 ? 0 : (float)temp; /* top_p 0 keeps the likeliest token alone */
    r->sp.top_p = top_p == 0 ? 1 : (float)top_p;
    r->sp.top_k = (uint32_t)top_k;
    r->sp.min_p = (float)min_p;
    r->sp.presence_penalty = (float)pres;
    r->sp.frequency_penalty = (float)freq;
    r->sp.seed = json_object_get(body, "seed") && !json_is_null(json_object_get(body, "seed"))
                     ? (uint64_t)seed
                     : (uint64_t)time(NULL) * 0x9E3779B97F4A7C15ull + atomic_fetch_add(&next_id, 0);
    json_t *st = json_object_get(body, "stop");
    if (st && !json_is_null(st)) {
        json_t *one = json_is_string(st) ? st : NULL;
        size_t k = one ? 1 : json_is_array(st) ? json_array_size(st) : SIZE_MAX;
        if (k == SIZE_MAX || k > SRV_MAX_STOP)
            return bad(a, "stop", "'stop' must be a string or an array of at most %d strings", SRV_MAX_STOP);
        for (size_t i = 0; i < k; i++) {
            json_t *s = one ? one : json_array_get(st, i);
            if (!json_is_string(s) || json_string_length(s) == 0 || json_string_length(s) > 256)
                return bad(a, "stop", "each stop string must be a string of 1 to 256 bytes");
            if (!(r->stop[r->n_stop++] = strdup(json_string_value(s))))
                return bad(a, "stop", "out of memory");
        }
    }
    json_t *ie = json_object_get(body, "ignore_eos"); /* llama-server's field, for benchmarks */
    if (ie && !json_is_null(ie) && !json_is_boolean(ie))
        return bad(a, "ignore_eos", "'ignore_eos' must be true or false");
    r->ignore_eos = json_is_true(ie);
    json_t *sv = json_object_get(body, "stream");
    if (sv && !json_is_null(sv) && !json_is_boolean(sv))
        return bad(a, "stream", "'stream' must be true or false");
    a->stream = json_is_true(sv);
    json_t *so = json_object_get(body, "stream_options");
    if (so && !json_is_null(so)) {
        json_t *iu = json_object_get(so, "include_usage");
        if (!json_is_object(so) || (iu && !json_is_boolean(iu)))
            return bad(a, "stream_options", "'stream_options' must be {\"include_usage\": true|false}");
        a->include_usage = json_is_true(iu);
    }
    return true;
}

/* ---- responses ---- */

static const char *
finish_name(enum srv_finish f)
{
    return f == SRV_FIN_STOP ? "stop" : "length";
}

static json_t *
usage_json(uint32_t pt, uint32_t ct)
{
    return json_pack("{s:i, s:i, s:i}", "prompt_tokens", (json_int_t)pt, "completion_tokens", (json_int_t)ct,
                     "total_tokens", (json_int_t)pt + ct);
}

/* One chunk: text (NULL: none), finish (NULL: null), usage chunk when `usage`. */
static char *
chunk_json(struct bridge *b, const char *text, size_t len, const char *finish, bool usage)
{
    json_t *choice, *o;
    if (usage) {
        o = json_pack("{s:s, s:s, s:I, s:s, s:[], s:o}", "id", b->id, "object",
                      b->chat ? "chat.completion.chunk" : "text_completion", "created",
                      (json_int_t)b->created, "model", b->model, "choices", "usage",
                      usage_json(b->pt, b->ct));
    } else {
        if (b->chat) {
            json_t *delta = json_object();
            if (!b->sent_role) {
                json_object_set_new(delta, "role", json_string("assistant"));
                b->sent_role = true;
            }
            if (text)
                json_object_set_new(delta, "content", json_stringn(text, len));
            choice = json_pack("{s:i, s:o, s:o, s:n}", "index", 0, "delta", delta, "finish_reason",
                               finish ? json_string(finish) : json_null(), "logprobs");
        } else {
            choice = json_pack("{s:i, s:s%, s:o, s:n}", "index", 0, "text", text ? text : "", text ? len : 0,
                               "finish_reason", finish ? json_string(finish) : json_null(), "logprobs");
        }
        o = json_pack("{s:s, s:s, s:I, s:s, s:[o]}", "id", b->id, "object",
                      b->chat ? "chat.completion.chunk" : "text_completion", "created",
                      (json_int_t)b->created, "model", b->model, "choices", choice);
    }
    char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    return s;
}

static bool
out_add(struct bridge *b, const char *s)
{
    size_t n = strlen(s);
    char *o = realloc(b->out, b->out_len + n + 1);
    if (!o)
        return false;
    b->out = o;
    memcpy(b->out + b->out_len, s, n + 1);
    b->out_len += n;
    return true;
}

static bool
out_event(struct bridge *b, char *json)
{
    bool ok = json && out_add(b, "data: ") && out_add(b, json) && out_add(b, "\n\n");
    free(json);
    return ok;
}

/* MHD asks for the next bytes of the event stream. */
static ssize_t
stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    struct bridge *b = cls;
    if (b->out_off == b->out_len) {
        b->out_off = b->out_len = 0;
        if (b->sent_done_marker)
            return MHD_CONTENT_READER_END_OF_STREAM;
        pthread_mutex_lock(&b->mu);
        if (!bridge_wait(b, W_OUTPUT)) {
            pthread_mutex_unlock(&b->mu);
            return MHD_CONTENT_READER_END_WITH_ERROR;
        }
        bool ok = true;
        if (b->len > 0) {
            ok = out_event(b, chunk_json(b, b->text, b->len, NULL, false));
            b->len = 0;
        }
        if (ok && b->done) {
            if (b->fin == SRV_FIN_ERROR || b->fin == SRV_FIN_BAD_PROMPT || b->fin == SRV_FIN_CANCELLED) {
                json_t *e = json_pack("{s:{s:s, s:s, s:n, s:s}}", "error", "message",
                                      b->error[0] ? b->error : "cancelled", "type", "server_error", "param",
                                      "code", "generation_failed");
                ok = out_event(b, e ? json_dumps(e, JSON_COMPACT) : NULL);
                json_decref(e);
            } else {
                ok = out_event(b, chunk_json(b, NULL, 0, finish_name(b->fin), false));
                if (ok && b->include_usage)
                    ok = out_event(b, chunk_json(b, NULL, 0, NULL, true));
            }
            ok = ok && out_add(b, "data: [DONE]\n\n");
            b->sent_done_marker = true;
        }
        pthread_mutex_unlock(&b->mu);
        if (!ok)
            return MHD_CONTENT_READER_END_WITH_ERROR;
    }
    size_t n = b->out_len - b->out_off < max ? b->out_len - b->out_off : max;
    memcpy(buf, b->out + b->out_off, n);
    b->out_off += n;
    return (ssize_t)n;
}

static void
stream_free(void *cls)
{
    struct bridge *b = cls;
    pthread_mutex_lock(&b->mu);
    if (!b->done)
        srv_gen_cancel(b->job); /* the client went away mid-stream */
    pthread_mutex_unlock(&b->mu);
    bridge_unref(b);
}

static enum MHD_Result
reply_failed(struct MHD_Connection *c, struct bridge *b)
{
    if (b->fin == SRV_FIN_BAD_PROMPT)
        return srv_reply_error(c, 400, "invalid_request_error", "context_length_exceeded", NULL, "%s",
                               b->error);
    return srv_reply_error(c, 500, "server_error", "generation_failed", NULL, "%s",
                           b->error[0] ? b->error : "generation failed");
}

static enum MHD_Result
reply_whole(struct MHD_Connection *c, struct bridge *b)
{
    json_t *choice;
    const char *text = b->text ? b->text : "";
    if (b->chat)
        choice = json_pack("{s:i, s:{s:s, s:s%}, s:s, s:n}", "index", 0, "message", "role", "assistant",
                           "content", text, b->len, "finish_reason", finish_name(b->fin), "logprobs");
    else
        choice = json_pack("{s:i, s:s%, s:s, s:n}", "index", 0, "text", text, b->len, "finish_reason",
                           finish_name(b->fin), "logprobs");
    json_t *o = json_pack("{s:s, s:s, s:I, s:s, s:[o], s:o}", "id", b->id, "object",
                          b->chat ? "chat.completion" : "text_completion", "created", (json_int_t)b->created,
                          "model", b->model, "choices", choice, "usage", usage_json(b->pt, b->ct));
    if (!o)
        return srv_reply_error(c, 500, "server_error", "internal", NULL, "cannot build the response");
    return srv_reply_json(c, 200, o);
}

enum MHD_Result
srv_api_completion(struct MHD_Connection *c, struct srv_gen *g, const char *model_id, bool chat, json_t *body)
{
    struct api_req a = {.chat = chat};
    struct srv_req r = {0};
    if (!json_is_object(body))
        return srv_reply_error(c, 400, "invalid_request_error", "invalid_json", NULL,
                               "the request body must be a JSON object");
    if (!parse_req(g, body, &r, &a)) {
        srv_req_free(&r);
        return srv_reply_error(c, 400, "invalid_request_error", "invalid_value", a.bad_param, "%s",
                               a.bad_msg);
    }
    char err[320];
    int tr = srv_gen_tokenize(g, &r, err, sizeof err);
    if (tr) {
        srv_req_free(&r);
        if (tr == -1)
            return srv_reply_error(c, 400, "invalid_request_error", "context_length_exceeded", NULL, "%s",
                                   err);
        return srv_reply_error(c, 500, "server_error", "tokenizer_failed", NULL, "%s", err);
    }
    struct bridge *b = calloc(1, sizeof *b);
    if (!b) {
        srv_req_free(&r);
        return srv_reply_error(c, 500, "server_error", "internal", NULL, "out of memory");
    }
    pthread_mutex_init(&b->mu, NULL);
    pthread_cond_init(&b->cv, NULL);
    b->refs = 2; /* this side and the worker (until DONE) */
    b->chat = chat;
    b->include_usage = a.include_usage;
    b->created = time(NULL);
    snprintf(b->id, sizeof b->id, "%s-%llu", chat ? "chatcmpl" : "cmpl",
             (unsigned long long)atomic_fetch_add(&next_id, 1));
    snprintf(b->model, sizeof b->model, "%s", model_id);
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    b->fd = ci ? ci->connect_fd : -1;
    enum srv_submit sr = srv_gen_submit(g, &r, on_event, b, &b->job);
    if (sr != SRV_SUBMITTED) {
        srv_req_free(&r);
        b->refs = 1;
        bridge_unref(b);
        if (sr == SRV_QUEUE_FULL)
            return srv_reply_error(c, 429, "rate_limit_error", "queue_full", NULL,
                                   "the request queue is full (the server's --max-queue); retry later");
        if (sr == SRV_DRAINING)
            return srv_reply_error(c, 503, "server_error", "shutting_down", NULL,
                                   "the server is shutting down");
        return srv_reply_error(c, 500, "server_error", "internal", NULL, "out of memory");
    }
    enum MHD_Result ret;
    pthread_mutex_lock(&b->mu);
    /* a stream starts once the prompt is in (so that a bad prompt still gets its status code);
     * a whole answer once it is done */
    if (!bridge_wait(b, a.stream ? W_STARTED : W_DONE)) {
        pthread_mutex_unlock(&b->mu);
        bridge_unref(b);
        return MHD_NO; /* the client is gone: close */
    }
    bool failed = b->done && b->fin != SRV_FIN_STOP && b->fin != SRV_FIN_LENGTH;
    pthread_mutex_unlock(&b->mu);
    if (failed || !a.stream) {
        ret = failed ? reply_failed(c, b) : reply_whole(c, b);
        bridge_unref(b);
        return ret;
    }
    struct MHD_Response *resp =
        MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, stream_read, b, stream_free);
    if (!resp) {
        srv_gen_cancel(b->job);
        bridge_unref(b);
        return MHD_NO;
    }
    MHD_add_response_header(resp, "Content-Type", "text/event-stream");
    MHD_add_response_header(resp, "Cache-Control", "no-cache");
    ret = MHD_queue_response(c, 200, resp);
    MHD_destroy_response(resp);
    return ret;
}
#endif /* NVHCQ_HAVE_SERVE */
