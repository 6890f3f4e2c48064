/* SPDX-License-Identifier: MIT */
/*
 * serve_gen_int.h - what the generation worker's two loops share (serve_gen.c: one slot and the
 * queue; serve_batch.c: several slots stepped as one batch): the worker's state, the stop-string
 * filter and the event helpers. Layer: tools.
 */
#ifndef SERVE_GEN_INT_H
#define SERVE_GEN_INT_H

#include "serve_gen.h"

#include <pthread.h>
#include <stdatomic.h>

struct srv_job {
    struct srv_req req;
    srv_event_cb cb;
    void *user;
    atomic_bool cancel;
    struct srv_job *next;
};

struct srv_gen {
    struct srv_gen_params p;
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct srv_job *head, *tail;
    uint32_t queued;
    uint32_t running; /* requests being decoded */
    bool draining, joined, load_done, load_ok;
    char err[512];
    struct llm_gguf *gguf;
    struct llm_model *m;
    struct llm_chat_tmpl_obj *tmpl; /* NULL: "none" */
    bool dev_sample;                /* sampling on the model's device (llm_model_sampler_*), else the host */
    char dev_name[256];
    uint32_t max_piece; /* bytes of the longest token text */
    struct srv_gen_stats st;
    struct llm_batch *b; /* --parallel > 1: the slots' batch; NULL: one slot on the model */
};

/* Text not yet sent, held while its end could be the start of a stop string. */
struct srv_stop_filter {
    char *buf;
    size_t len, cap;
};

bool srv_sf_append(struct srv_stop_filter *f, const char *s, size_t n);
/* Send what can no longer be part of a stop string; true when a stop string was found (the text
 * before it is sent, the rest dropped). */
bool srv_sf_step(struct srv_stop_filter *f, struct srv_job *j);
void srv_send_text(struct srv_job *j, const char *s, size_t n);
/* The checks both loops make before a token's text, in order: SRV_FIN_LENGTH when ct tokens
 * reached max_tokens or position pos is past the context, SRV_FIN_STOP for an end-of-generation
 * token (unless ignore_eos); -1: the token goes out. */
int srv_end_before(const struct srv_req *r, const struct llm_tok *tok, int32_t id, uint32_t ct, uint32_t pos,
                   uint32_t n_ctx);
/* Whether the ct-th token at position pos is the last (its next step is not needed). */
bool srv_last_token(const struct srv_req *r, uint32_t ct, uint32_t pos, uint32_t n_ctx);
/* The end of a request's text: where it ended LENGTH, or STOP without a stop string, the held
 * UTF-8 bytes of d and then the held text of f are part of the answer (a stop string they complete
 * makes it STOP). Returns the finish reason; SRV_FIN_ERROR with *error set when memory ran out. */
enum srv_finish srv_end_text(struct srv_job *j, struct llm_detok *d, struct srv_stop_filter *f,
                             enum srv_finish fin, bool stop_hit, const char **error);
/* The DONE event (and the counters of finished requests). */
void srv_finish(struct srv_gen *g, struct srv_job *j, enum srv_finish fin, const char *error, uint32_t pt,
                uint32_t ct);
/* s seconds into *field and n tokens into *tokens, under the lock */
void srv_add_time(struct srv_gen *g, double *field, double s, uint64_t *tokens, uint32_t n);
/* The batched loop (serve_batch.c): runs until draining with nothing left; g->mu is held on entry
 * and on return. */
void srv_worker_batch(struct srv_gen *g);

#endif /* SERVE_GEN_INT_H */
