/* SPDX-License-Identifier: MIT */
/*
 * serve_gen.h - the generation worker behind `nvhcq serve`: a bounded queue of requests and
 * `parallel` decode slots, served in arrival order: one slot decodes one sequence at a time on
 * the model's own path; several are the sequences of a batch (llm_batch_*), stepped together,
 * joining and leaving at any step (continuous batching). The HTTP side knows only this
 * interface: submit a request, receive its text through a callback, cancel it. Layer: tools.
 */
#ifndef SERVE_GEN_H
#define SERVE_GEN_H

#include "llm.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SRV_MAX_STOP 4 /* stop strings per request (OpenAI's limit) */

struct srv_gen_params {
    const char *model, *dev;   /* GGUF path, device spec (NULL: auto) */
    uint32_t n_ctx;            /* 0: the model's default */
    uint32_t n_batch;          /* rows of a prefill pass or batch step (>= parallel); 0: the model's */
    uint32_t max_queue;        /* requests waiting beyond the running ones; more are refused */
    uint32_t parallel;         /* decode slots: 0 or 1 one sequence at a time; more a batch of them */
    bool host_sample;          /* sample on the host (logits read back every step), not on the device */
    const char *chat_template; /* NULL: the model's; a built-in name or a template file
                                  (llm_chat_tmpl_from_model); "none" */
};

/* How a request ended. */
enum srv_finish { SRV_FIN_STOP, SRV_FIN_LENGTH, SRV_FIN_CANCELLED, SRV_FIN_BAD_PROMPT, SRV_FIN_ERROR };

struct srv_req {
    char *prompt; /* rendered text to continue (malloc'ed) */
    bool add_bos; /* prepend BOS (the model's default for a fresh sequence) */
    int32_t *ids; /* the prompt's tokens (srv_gen_tokenize; malloc'ed) */
    size_t n_ids;
    int64_t max_tokens; /* < 0: until the context fills */
    struct llm_sampler_params sp;
    char *stop[SRV_MAX_STOP]; /* malloc'ed (freed by the worker), non-empty */
    int n_stop;
    bool ignore_eos; /* generate through end-of-turn tokens (benchmarks of a fixed length) */
};

/* One event of a request, from the worker thread, in order: START once the prompt is in the
 * KV cache (or DONE at once if it failed), TEXT for each piece of generated text (never
 * containing a stop string), then DONE exactly once; after DONE the worker forgets the request. */
enum srv_ev_kind { SRV_EV_START, SRV_EV_TEXT, SRV_EV_DONE };
struct srv_event {
    enum srv_ev_kind kind;
    const char *text; /* TEXT */
    size_t len;
    enum srv_finish finish; /* DONE */
    const char *error;      /* DONE with BAD_PROMPT / ERROR: why */
    uint32_t prompt_tokens, completion_tokens;
};
typedef void (*srv_event_cb)(void *user, const struct srv_event *ev);

struct srv_gen;
struct srv_job;

/* Start the worker thread, which loads the model (on its own thread: device contexts are
 * per thread on some backends); returns once it is loaded (0) or failed (-1, why in err). */
int srv_gen_start(const struct srv_gen_params *p, struct srv_gen **g_out, char *err, size_t err_B);
/* Drain: requests already queued are finished, new ones refused (SRV_DRAINING); returns
 * when the thread has ended. The model stays until srv_gen_free. */
void srv_gen_stop(struct srv_gen *g);
void srv_gen_free(struct srv_gen *g);

/* Queue `req` (taken over on SRV_SUBMITTED, else left to the caller). *job_out identifies the
 * request for srv_gen_cancel until its DONE. */
enum srv_submit { SRV_SUBMITTED, SRV_QUEUE_FULL, SRV_DRAINING, SRV_NOMEM };
enum srv_submit srv_gen_submit(struct srv_gen *g, struct srv_req *req, srv_event_cb cb, void *user,
                               struct srv_job **job_out);
/* Ask the request to end (DONE with CANCELLED follows, from the worker). Only before DONE. */
void srv_gen_cancel(struct srv_job *job);
/* Tokenize r->prompt into r->ids on the caller's thread (the tokenizer is read-only, so
 * connections tokenize in parallel and a long prompt holds up no one else). -1: the prompt does
 * not fit the context (checked on its byte length first); -2: the tokenizer failed; why in err. */
int srv_gen_tokenize(const struct srv_gen *g, struct srv_req *r, char *err, size_t err_B);
/* Release a request nobody submitted (its strings). */
void srv_req_free(struct srv_req *req);

/* The model and its chat template, for request rendering and /v1/models. */
const struct llm_tok *srv_gen_tok(const struct srv_gen *g);
uint32_t srv_gen_n_ctx(const struct srv_gen *g);
/* the chat template's name ("gguf", a built-in, a file; "none") */
const char *srv_gen_chat_tmpl_name(const struct srv_gen *g);
const char *srv_gen_device_name(const struct srv_gen *g);

/* Counters for /metrics (a consistent snapshot). */
struct srv_gen_stats {
    uint64_t prompt_tokens, completion_tokens, requests_done, requests_cancelled;
    uint32_t queued, running, slots;
    double decode_s, prefill_s; /* time spent in decode steps / prompt evaluation */
};
void srv_gen_stats(struct srv_gen *g, struct srv_gen_stats *out);

/* Render chat messages with the server's template (the model's own tokenizer.chat_template, or
 * --chat-template's built-in or file, llm_chat_tmpl_*; "none": contents joined by newlines) and
 * the generation prompt: *out malloc'ed. A template error (its raise_exception, a message it
 * cannot render) is the status with hcq_last_error() saying why; HCQ_ERR_NOMEM: out of memory. */
enum hcq_status srv_chat_render(const struct srv_gen *g, const struct llm_chat_msg *msgs, size_t n,
                                char **out);

#endif /* SERVE_GEN_H */
