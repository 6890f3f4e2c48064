/* SPDX-License-Identifier: MIT */
/*
 * serve_http.h - the HTTP side of `nvhcq serve` (libmicrohttpd + jansson): serve_http.c runs
 * the daemon (routing, API key, body limit, errors, /health, /metrics, /v1/models);
 * serve_api.c turns completion requests into srv_req and the worker's events into OpenAI
 * responses and server-sent events. Built only with the two libraries (NVHCQ_HAVE_SERVE).
 * Layer: tools.
 */
#ifndef SERVE_HTTP_H
#define SERVE_HTTP_H

#include "serve_gen.h"

#include <stdint.h>

struct srv_http_opts {
    const char *host;
    uint16_t port;
    const char *api_key;  /* NULL: no key */
    const char *model_id; /* the name /v1/models lists and responses carry */
    uint64_t max_body;    /* bytes of a request body */
    uint32_t timeout_s;   /* idle connection timeout */
    uint32_t max_conn;    /* open connections */
};

struct srv_http;
int srv_http_start(const struct srv_http_opts *o, struct srv_gen *g, struct srv_http **h_out, char *err,
                   size_t err_B);
/* Stop accepting connections (the drain starts; requests in flight go on). */
void srv_http_quiesce(struct srv_http *h);
/* Wait (at most wait_s) for the requests in flight to end, then close everything. */
void srv_http_stop(struct srv_http *h, uint32_t wait_s);

#ifdef NVHCQ_HAVE_SERVE
#include <jansson.h>
#include <microhttpd.h>

/* An OpenAI error body {"error": {"message", "type", "param", "code"}} with `status`. */
enum MHD_Result srv_reply_error(struct MHD_Connection *c, unsigned status, const char *type, const char *code,
                                const char *param, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
/* A JSON body (the reference is taken). */
enum MHD_Result srv_reply_json(struct MHD_Connection *c, unsigned status, json_t *body);
/* POST /v1/chat/completions (chat) or /v1/completions with the parsed body. */
enum MHD_Result srv_api_completion(struct MHD_Connection *c, struct srv_gen *g, const char *model_id,
                                   bool chat, json_t *body);
#endif

#endif /* SERVE_HTTP_H */
