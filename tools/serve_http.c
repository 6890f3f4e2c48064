/* SPDX-License-Identifier: MIT */
/*
 * serve_http.c - the HTTP daemon of `nvhcq serve` on libmicrohttpd: one thread per
 * connection (a request waits for its tokens without blocking the others), the body limit
 * (413, before the body is read when Content-Length says so), the API key (401), routing
 * (404/405), OpenAI-style error bodies, GET /health, /metrics (Prometheus text) and
 * /v1/models. JSON through jansson. Layer: tools.
 */
#ifdef NVHCQ_HAVE_SERVE
#include "serve_http.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Status codes /metrics counts (the last slot counts any other). */
static const unsigned codes[] = {200, 400, 401, 404, 405, 413, 429, 500, 503, 0};
#define N_CODES (sizeof codes / sizeof codes[0])

struct srv_http {
    struct srv_http_opts o;
    struct srv_gen *g;
    struct MHD_Daemon *d;
    atomic_int inflight;
    atomic_uint_fast64_t by_code[N_CODES];
    time_t started;
};

/* Per request: the body as it arrives. */
struct rq {
    char *body;
    size_t len, cap;
    bool too_big, replied;
};

static struct srv_http *the_http; /* one server per process: the status counters' home */

static enum MHD_Result
reply(struct MHD_Connection *c, unsigned status, const char *type, char *text, size_t len)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(text);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", type);
    if (status == 401)
        MHD_add_response_header(r, "WWW-Authenticate", "Bearer");
    enum MHD_Result ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    size_t i = 0;
    while (codes[i] && codes[i] != status)
        i++;
    if (the_http)
        atomic_fetch_add(&the_http->by_code[i], 1);
    return ret;
}

enum MHD_Result
srv_reply_json(struct MHD_Connection *c, unsigned status, json_t *body)
{
    char *s = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    if (!s)
        return MHD_NO;
    return reply(c, status, "application/json", s, strlen(s));
}

enum MHD_Result
srv_reply_error(struct MHD_Connection *c, unsigned status, const char *type, const char *code,
                const char *param, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    json_t *e = json_pack("{s:{s:s, s:s, s:o, s:s}}", "error", "message", msg, "type", type, "param",
                          param ? json_string(param) : json_null(), "code", code);
    if (!e)
        return MHD_NO;
    return srv_reply_json(c, status, e);
}

/* Constant-time comparison: the time to refuse a key says nothing about how much of it matched. */
static bool
key_ok(const char *want, const char *got)
{
    size_t wl = strlen(want), gl = got ? strlen(got) : 0;
    unsigned char diff = (unsigned char)(wl != gl);
    for (size_t i = 0; i < wl; i++)
        diff |= (unsigned char)(want[i] ^ (i < gl ? got[i] : 0));
    return got && diff == 0;
}

static enum MHD_Result
metrics(struct MHD_Connection *c, struct srv_http *h)
{
    struct srv_gen_stats st;
    srv_gen_stats(h->g, &st);
    char *buf = malloc(4096);
    if (!buf)
        return MHD_NO;
    size_t n = 0, cap = 4096;
#define M(...) (n += (size_t)snprintf(buf + n, n < cap ? cap - n : 0, __VA_ARGS__))
    M("# HELP nvhcq_http_requests_total HTTP responses by status code (0: any other).\n"
      "# TYPE nvhcq_http_requests_total counter\n");
    for (size_t i = 0; i < N_CODES; i++)
        M("nvhcq_http_requests_total{code=\"%u\"} %llu\n", codes[i], (unsigned long long)h->by_code[i]);
    M("# HELP nvhcq_requests_completed_total Generation requests the worker finished (any outcome).\n"
      "# TYPE nvhcq_requests_completed_total counter\nnvhcq_requests_completed_total %llu\n",
      (unsigned long long)st.requests_done);
    M("# HELP nvhcq_requests_cancelled_total Generations cancelled because the client went away.\n"
      "# TYPE nvhcq_requests_cancelled_total counter\nnvhcq_requests_cancelled_total %llu\n",
      (unsigned long long)st.requests_cancelled);
    M("# HELP nvhcq_prompt_tokens_total Prompt tokens evaluated.\n"
      "# TYPE nvhcq_prompt_tokens_total counter\nnvhcq_prompt_tokens_total %llu\n",
      (unsigned long long)st.prompt_tokens);
    M("# HELP nvhcq_completion_tokens_total Tokens generated.\n"
      "# TYPE nvhcq_completion_tokens_total counter\nnvhcq_completion_tokens_total %llu\n",
      (unsigned long long)st.completion_tokens);
    M("# HELP nvhcq_queue_depth Requests waiting for a decode slot.\n"
      "# TYPE nvhcq_queue_depth gauge\nnvhcq_queue_depth %u\n",
      st.queued);
    M("# HELP nvhcq_slots_busy Decode slots generating now.\n# TYPE nvhcq_slots_busy gauge\nnvhcq_slots_busy "
      "%u\n",
      st.running);
    M("# HELP nvhcq_slots Decode slots (--parallel).\n# TYPE nvhcq_slots gauge\nnvhcq_slots %u\n", st.slots);
    M("# HELP nvhcq_decode_tokens_per_second Generated tokens over the time spent decoding them.\n"
      "# TYPE nvhcq_decode_tokens_per_second gauge\nnvhcq_decode_tokens_per_second %.3f\n",
      st.decode_s > 0 ? st.completion_tokens / st.decode_s : 0.0);
    M("# HELP nvhcq_prompt_tokens_per_second Prompt tokens over the time spent evaluating them.\n"
      "# TYPE nvhcq_prompt_tokens_per_second gauge\nnvhcq_prompt_tokens_per_second %.3f\n",
      st.prefill_s > 0 ? st.prompt_tokens / st.prefill_s : 0.0);
#undef M
    if (n >= cap) {
        free(buf);
        return srv_reply_error(c, 500, "server_error", "internal", NULL, "metrics do not fit their buffer");
    }
    return reply(c, 200, "text/plain; version=0.0.4", buf, n);
}

static enum MHD_Result
route(struct MHD_Connection *c, struct srv_http *h, const char *url, const char *method, struct rq *q)
{
    bool get = !strcmp(method, "GET"), post = !strcmp(method, "POST");
    if (!strcmp(url, "/health")) {
        if (!get)
            return srv_reply_error(c, 405, "invalid_request_error", "method_not_allowed", NULL,
                                   "%s /health: use GET", method);
        return srv_reply_json(c, 200, json_pack("{s:s}", "status", "ok"));
    }
    if (h->o.api_key) {
        const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
        const char *tok = auth && !strncmp(auth, "Bearer ", 7) ? auth + 7 : NULL;
        if (!key_ok(h->o.api_key, tok))
            return srv_reply_error(c, 401, "invalid_request_error", "invalid_api_key", NULL,
                                   auth ? "the API key is wrong"
                                        : "an API key is required: Authorization: Bearer KEY");
    }
    bool chat = !strcmp(url, "/v1/chat/completions"), compl = !strcmp(url, "/v1/completions");
    bool models = !strcmp(url, "/v1/models"), met = !strcmp(url, "/metrics");
    if (!chat && !compl &&!models && !met)
        return srv_reply_error(c, 404, "invalid_request_error", "not_found", NULL, "no such route: %s %.200s",
                               method, url);
    if ((chat || compl ) && !post)
        return srv_reply_error(c, 405, "invalid_request_error", "method_not_allowed", NULL, "%s %s: use POST",
                               method, url);
    if ((models || met) && !get)
        return srv_reply_error(c, 405, "invalid_request_error", "method_not_allowed", NULL, "%s %s: use GET",
                               method, url);
    if (met)
        return metrics(c, h);
    if (models)
        return srv_reply_json(c, 200,
                              json_pack("{s:s, s:[{s:s, s:s, s:I, s:s}]}", "object", "list", "data", "id",
                                        h->o.model_id, "object", "model", "created", (json_int_t)h->started,
                                        "owned_by", "nvhcq"));
    if (q->too_big)
        return srv_reply_error(c, 413, "invalid_request_error", "request_too_large", NULL,
                               "the request body is larger than %llu bytes (the server's --max-body)",
                               (unsigned long long)h->o.max_body);
    json_error_t je;
    json_t *body = json_loadb(q->body ? q->body : "", q->len, 0, &je);
    if (!body)
        return srv_reply_error(c, 400, "invalid_request_error", "invalid_json", NULL,
                               "the body is not valid JSON: %s (line %d, column %d)", je.text, je.line,
                               je.column);
    enum MHD_Result ret = srv_api_completion(c, h->g, h->o.model_id, chat, body);
    json_decref(body);
    return ret;
}

static enum MHD_Result
on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method, const char *version,
           const char *upload, size_t *upload_size, void **con_cls)
{
    (void)version;
    struct srv_http *h = cls;
    struct rq *q = *con_cls;
    if (!q) {
        if (!(q = calloc(1, sizeof *q)))
            return MHD_NO;
        *con_cls = q;
        atomic_fetch_add(&h->inflight, 1);
        /* A body over the limit is read and dropped, then refused (413): a client that is still
         * sending when the connection closes sees a reset, not the error. One declared far over
         * it (16x) is refused before it is read. */
        const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
        if (cl && strtoull(cl, NULL, 10) / 16 > h->o.max_body) {
            q->replied = true;
            return srv_reply_error(c, 413, "invalid_request_error", "request_too_large", NULL,
                                   "the request body is larger than %llu bytes (the server's --max-body)",
                                   (unsigned long long)h->o.max_body);
        }
        return MHD_YES;
    }
    if (*upload_size) {
        if (!q->replied && !q->too_big) {
            if (q->len + *upload_size > h->o.max_body) {
                q->too_big = true; /* keep reading, answer 413 at the end */
                free(q->body);
                q->body = NULL;
                q->len = q->cap = 0;
            } else {
                if (q->len + *upload_size + 1 > q->cap) {
                    size_t cap = (q->len + *upload_size + 1) * 2;
                    char *b = realloc(q->body, cap);
                    if (!b)
                        return MHD_NO;
                    q->body = b;
                    q->cap = cap;
                }
                memcpy(q->body + q->len, upload, *upload_size);
                q->len += *upload_size;
            }
        }
        *upload_size = 0;
        return MHD_YES;
    }
    if (q->replied)
        return MHD_YES;
    q->replied = true;
    return route(c, h, url, method, q);
}

static void
on_completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode toe)
{
    (void)c;
    (void)toe;
    struct srv_http *h = cls;
    struct rq *q = *con_cls;
    if (!q)
        return;
    free(q->body);
    free(q);
    *con_cls = NULL;
    atomic_fetch_sub(&h->inflight, 1);
}

int
srv_http_start(const struct srv_http_opts *o, struct srv_gen *g, struct srv_http **h_out, char *err,
               size_t err_B)
{
    *h_out = NULL;
    struct sockaddr_in a4 = {.sin_family = AF_INET, .sin_port = htons(o->port)};
    struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_port = htons(o->port)};
    bool v6 = strchr(o->host, ':') != NULL;
    if (v6 ? inet_pton(AF_INET6, o->host, &a6.sin6_addr) != 1
           : inet_pton(AF_INET, o->host, &a4.sin_addr) != 1) {
        snprintf(err, err_B, "--host %s: not a numeric IPv4 or IPv6 address", o->host);
        return -1;
    }
    struct srv_http *h = calloc(1, sizeof *h);
    if (!h) {
        snprintf(err, err_B, "out of memory");
        return -1;
    }
    h->o = *o;
    h->g = g;
    h->started = time(NULL);
    atomic_init(&h->inflight, 0);
    the_http = h;
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ITC |
                     (v6 ? MHD_USE_IPv6 : 0);
    h->d = MHD_start_daemon(flags, o->port, NULL, NULL, on_request, h, MHD_OPTION_SOCK_ADDR,
                            v6 ? (struct sockaddr *)&a6 : (struct sockaddr *)&a4, MHD_OPTION_CONNECTION_LIMIT,
                            (unsigned)o->max_conn, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)o->timeout_s,
                            MHD_OPTION_NOTIFY_COMPLETED, on_completed, h, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
                            (size_t)256 * 1024, MHD_OPTION_END);
    if (!h->d) {
        snprintf(err, err_B, "cannot listen on %s port %u (in use, or not an address of this machine?)",
                 o->host, o->port);
        the_http = NULL;
        free(h);
        return -1;
    }
    *h_out = h;
    return 0;
}

void
srv_http_quiesce(struct srv_http *h)
{
    int fd = (int)MHD_quiesce_daemon(h->d);
    if (fd >= 0)
        close(fd);
}

void
srv_http_stop(struct srv_http *h, uint32_t wait_s)
{
    if (!h)
        return;
    for (uint32_t i = 0; i < wait_s * 10 && atomic_load(&h->inflight) > 0; i++)
        usleep(100 * 1000);
    MHD_stop_daemon(h->d);
    the_http = NULL;
    free(h);
}
#endif /* NVHCQ_HAVE_SERVE */
