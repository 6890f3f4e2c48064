/* SPDX-License-Identifier: MIT */
/*
 * nvhcq_chat.c - `nvhcq chat`: an interactive terminal chat on a GGUF model. The history is
 * rendered through the model's chat template (llm_chat_tmpl_*) each turn and only the tokens
 * that differ from what the KV cache already holds are evaluated; answers stream token by
 * token (nvhcq_gen.c, shared with `nvhcq run`). /reset, /exit; Ctrl-C stops the answer, at
 * the prompt twice ends the program; EOF ends it. Layer: tools (programs may print and exit).
 */
#include "hcq.h"
#include "llm.h"
#include "nvhcq_cli.h"
#include "nvhcq_cmds.h"
#include "nvhcq_gen.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void nvhcq_llm_progress(uint64_t done_B, uint64_t total_B, void *user);

static volatile sig_atomic_t interrupted;

static void
on_sigint(int sig)
{
    (void)sig;
    interrupted = 1;
}

struct history {
    struct llm_chat_msg *v;
    size_t n, cap;
};

static void
history_clear(struct history *h, size_t keep)
{
    while (h->n > keep) {
        h->n--;
        free((char *)h->v[h->n].role);
        free((char *)h->v[h->n].content);
    }
}

static int
history_push(struct history *h, const char *role, const char *content)
{
    if (h->n == h->cap) {
        size_t nc = h->cap ? h->cap * 2 : 16;
        struct llm_chat_msg *nv = realloc(h->v, nc * sizeof *nv);
        if (!nv)
            return cli_fail("chat", "out of memory");
        h->v = nv;
        h->cap = nc;
    }
    char *r = strdup(role), *c = strdup(content);
    if (!r || !c) {
        free(r);
        free(c);
        return cli_fail("chat", "out of memory");
    }
    h->v[h->n++] = (struct llm_chat_msg){r, c};
    return 0;
}

struct chat {
    struct llm_model *m;
    struct llm_sampler *s;
    struct llm_chat_tmpl_obj *t;
    struct history h;
    size_t n_system; /* messages /reset keeps (the --system one) */
    int32_t *kv;     /* the prompt tokens the KV cache holds, from position 0 */
    size_t kv_n;
    int32_t stop_ids[8]; /* the template's end-of-turn texts that are single tokens */
    size_t n_stop_ids;
    struct nvhcq_gen_stats st;
    int n_predict;
    bool special;
    bool host_sample; /* llm_sampler s on logits read back, else the device sampler */
};

/* One turn: render the history, evaluate what the cache lacks, stream the answer. Returns
 * 0 (answered), -1 (not answered, said why; the conversation goes on) or 1 (fatal). */
static int
chat_turn(struct chat *c)
{
    const struct llm_tok *tok = llm_model_tok(c->m);
    uint32_t n_ctx = llm_model_n_ctx(c->m);
    char *text = NULL, *reply = NULL;
    size_t len = 0, reply_n = 0, cnt = 0;
    int32_t *ids = NULL;
    int rc = 0;
    if (llm_chat_tmpl_apply(c->t, c->h.v, c->h.n, true, &text, &len)) {
        /* a template that refuses the conversation (raise_exception) is not fatal */
        fprintf(stderr, "nvhcq chat: the chat template refused the conversation: %s\n", hcq_last_error());
        history_clear(&c->h, c->h.n - 1);
        rc = -1;
        goto done;
    }
    if (!(ids = malloc((len + 8) * sizeof *ids)) ||
        llm_tok_encode(tok, text, len, false, true, ids, len + 8, &cnt)) {
        rc = cli_fail("chat", "tokenizing the conversation failed: %s",
                      ids ? hcq_last_error() : "out of memory");
        goto done;
    }
    /* BOS unless the template wrote it already (its text holds the BOS token) */
    int32_t bos = llm_tok_bos(tok);
    if (llm_tok_add_bos_default(tok) && bos >= 0 && (!cnt || ids[0] != bos)) {
        memmove(ids + 1, ids, cnt * sizeof *ids);
        ids[0] = bos;
        cnt++;
    }
    if (!cnt) {
        fprintf(stderr, "nvhcq chat: the chat template rendered nothing\n");
        history_clear(&c->h, c->h.n - 1);
        rc = -1;
        goto done;
    }
    if (cnt + 1 >= n_ctx) {
        fprintf(stderr,
                "nvhcq chat: the conversation (%zu tokens) no longer fits the context of %u tokens: /reset "
                "starts over (-c sets the context)\n",
                cnt, n_ctx);
        history_clear(&c->h, c->h.n - 1);
        rc = -1;
        goto done;
    }
    /* reuse the cached prefix; evaluate at least one token for fresh logits */
    size_t same = 0;
    while (same < c->kv_n && same < cnt && c->kv[same] == ids[same])
        same++;
    if (same == cnt)
        same--;
    struct nvhcq_gen_opts go = {.n_predict = c->n_predict,
                                .special = c->special,
                                .host_sample = c->host_sample,
                                .cmd = "chat",
                                .cancel = &interrupted,
                                .stop_ids = c->stop_ids,
                                .n_stop_ids = c->n_stop_ids,
                                .reply = &reply,
                                .reply_n = &reply_n};
    c->kv_n = 0; /* until the prefill succeeds the cache holds nothing known */
    if ((rc = nvhcq_gen_prefill(c->m, c->s, &go, ids + same, cnt - same, (uint32_t)same, &c->st)))
        goto done;
    free(c->kv);
    c->kv = ids;
    c->kv_n = cnt;
    ids = NULL;
    uint32_t pos = (uint32_t)cnt;
    interrupted = 0;
    c->st.cancelled = c->st.ctx_full = false;
    if ((rc = nvhcq_gen_decode(c->m, c->s, &go, &pos, &c->st)))
        goto done;
    printf("\n");
    fflush(stdout);
    if (c->st.cancelled)
        fprintf(stderr, "(stopped)\n");
    if (c->st.ctx_full)
        fprintf(stderr, "nvhcq chat: the context (%u tokens) is full: /reset starts over\n", n_ctx);
    interrupted = 0;
    rc = history_push(&c->h, "assistant", reply ? reply : "");
done:
    free(reply);
    free(text);
    free(ids);
    return rc;
}

static void
chat_reset(struct chat *c)
{
    history_clear(&c->h, c->n_system);
    c->kv_n = 0;
    llm_sampler_reset(c->s);
    if (!c->host_sample && llm_model_sampler_reset(c->m, NULL, 0))
        fprintf(stderr, "nvhcq chat: sampler reset: %s\n", hcq_last_error());
}

int
nvhcq_cmd_chat(int argc, char **argv)
{
    const char *model = NULL, *dev = NULL, *tmpl_name = NULL, *system = NULL, *tok_fallback = NULL;
    uint32_t n_ctx = 0;
    bool no_graph = false;
    struct chat c = {.n_predict = 1024};
    struct llm_sampler_params sp;
    llm_sampler_params_default(&sp);
    sp.temp = 0.8f;
    sp.top_k = 40;
    sp.top_p = 0.95f;
    sp.min_p = 0.05f;
    const struct cli_opt opts[] = {
        CLI_STR("-m", "--model", &model, "FILE", "GGUF model (required)"),
        CLI_STR(NULL, "--dev", &dev, "SPEC",
                "device: cpu, cuda:N, rm:N, nvgpu:0, emu:... [default: HCQ_DEV, else auto]"),
        CLI_NUM("-c", "--ctx-size", &n_ctx, "N", 16, 1 << 20,
                "context (KV cache) length: the whole conversation [default: the model's, at most 4096]"),
        CLI_NUM("-n", "--n-predict", &c.n_predict, "N", -1, 10000000,
                "most tokens per answer; -1: until the model ends its turn or the context fills"),
        CLI_NUM(NULL, "--temp", &sp.temp, "T", 0, 100, "temperature; 0: greedy"),
        CLI_NUM(NULL, "--top-k", &sp.top_k, "K", 0, 10000000, "keep the K likeliest tokens; 0: off"),
        CLI_NUM(NULL, "--top-p", &sp.top_p, "P", 0, 1, "keep the likeliest tokens up to mass P; 1: off"),
        CLI_NUM(NULL, "--min-p", &sp.min_p, "P", 0, 1, "drop tokens below P x the likeliest; 0: off"),
        CLI_NUM(NULL, "--repeat-penalty", &sp.repeat_penalty, "R", 0.01, 100,
                "penalty of recent tokens; 1: off"),
        CLI_NUM(NULL, "--repeat-last-n", &sp.repeat_last_n, "N", 0, 1 << 20,
                "how many recent tokens the penalty sees"),
        CLI_NUM(NULL, "--seed", &sp.seed, "S", 0, 1.9e19, "sampler seed (same seed, same answers)"),
        CLI_STR(NULL, "--chat-template", &tmpl_name, "NAME|FILE",
                "a built-in template or a file instead of the model's own (docs/chat.md lists the names)"),
        CLI_STR(NULL, "--system", &system, "TEXT", "system message at the start of the conversation"),
        CLI_FLAG(NULL, "--special", &c.special, "print control tokens (<|eot_id|>, reserved) by name"),
        CLI_FLAG(NULL, "--no-graph", &no_graph, "do not record decode as a graph (debugging)"),
        CLI_FLAG(NULL, "--host-sample", &c.host_sample,
                 "sample on the host from the logits read back each step instead of on the device"),
        CLI_STR(NULL, "--tokenizer-fallback", &tok_fallback, "gpt2",
                "load a vocabulary whose pre-tokenizer is unknown with GPT-2 splitting (warns)"),
        CLI_END,
    };
    const struct cli_cmd cmd = {
        "chat",
        "-m FILE [--chat-template NAME|FILE] [--system TEXT] [options]",
        "Interactive chat: type a message, the answer streams to stdout. The conversation goes through\n"
        "the model's chat template. /reset forgets the conversation, /exit (or EOF) ends; Ctrl-C stops\n"
        "the answer, Ctrl-C twice at the prompt ends.",
        opts,
        NULL,
        NULL,
        "example: nvhcq chat -m tests/data/models/tinystories-656k.gguf --dev cpu --temp 0 -n 64",
    };
    int rc = cli_parse(&cmd, argc, argv);
    if (rc != CLI_CONTINUE)
        return rc;
    if (!model)
        return cli_usage_error(&cmd, "-m FILE is required (a GGUF model)");
    struct llm_model_params mp;
    llm_model_params_default(&mp);
    int last = -1;
    mp.dev_spec = dev;
    mp.n_ctx = n_ctx;
    mp.use_graph = !no_graph;
    mp.tok_pre_fallback = tok_fallback;
    mp.progress = nvhcq_llm_progress;
    mp.progress_user = &last;
    struct llm_gguf *g = NULL;
    char *line = NULL;
    size_t line_cap = 0;
    rc = 1;
    if (llm_gguf_open(model, &g) || llm_model_load_gguf(g, &mp, &c.m)) {
        cli_fail_file("chat", "cannot load", model);
        goto done;
    }
    if (llm_chat_tmpl_from_model(g, tmpl_name, &c.t)) {
        cli_fail("chat", "%s", hcq_last_error());
        goto done;
    }
    /* a vocabulary the device sampler does not hold: sample on the host, as --host-sample */
    enum hcq_status sst = c.host_sample ? HCQ_OK : llm_model_sampler_set(c.m, &sp);
    if (sst == HCQ_ERR_UNSUPPORTED) {
        fprintf(stderr, "nvhcq chat: sampling on the host: %s\n", hcq_last_error());
        c.host_sample = true;
        sst = HCQ_OK;
    }
    if (llm_sampler_create(&sp, llm_model_hparams(c.m)->n_vocab, &c.s) || sst) {
        cli_fail("chat", "sampler: %s", hcq_last_error());
        goto done;
    }
    const char *const *stops;
    size_t n_stops = llm_chat_tmpl_stops(c.t, &stops);
    for (size_t i = 0; i < n_stops && c.n_stop_ids < 8; i++) {
        int32_t id = llm_tok_find(llm_model_tok(c.m), stops[i]);
        if (id >= 0)
            c.stop_ids[c.n_stop_ids++] = id;
    }
    if (system && history_push(&c.h, "system", system))
        goto done;
    c.n_system = c.h.n;
    struct hcq_device_info info;
    if (hcq_device_info(llm_model_device(c.m), &info) == HCQ_OK)
        fprintf(stderr,
                "nvhcq chat: %s on %s, context %u, template %s; /reset, /exit, Ctrl-C stops an answer\n",
                model, info.spec, llm_model_n_ctx(c.m), llm_chat_tmpl_name(c.t));
    struct sigaction sa = {0};
    sa.sa_handler = on_sigint; /* no SA_RESTART: Ctrl-C interrupts the read at the prompt */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    int turns = 0;
    bool warned = false;
    rc = 0;
    for (;;) {
        fprintf(stderr, "> ");
        fflush(stderr);
        errno = 0;
        ssize_t n = getline(&line, &line_cap, stdin);
        if (n < 0) {
            if (errno == EINTR && interrupted) {
                interrupted = 0;
                clearerr(stdin);
                if (warned) {
                    fprintf(stderr, "\n");
                    break;
                }
                warned = true;
                fprintf(stderr, "\n(Ctrl-C again, /exit or EOF ends the chat)\n");
                continue;
            }
            fprintf(stderr, "\n");
            break; /* EOF */
        }
        warned = false;
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
            line[--n] = 0;
        if (!n)
            continue;
        if (strlen(line) != (size_t)n) {
            fprintf(stderr, "nvhcq chat: the line holds a NUL byte: not sent\n");
            continue;
        }
        if (!strcmp(line, "/exit") || !strcmp(line, "/quit"))
            break;
        if (!strcmp(line, "/reset")) {
            chat_reset(&c);
            fprintf(stderr, "(conversation cleared)\n");
            continue;
        }
        if (line[0] == '/' && line[1] != '/') {
            fprintf(stderr,
                    "commands: /reset (forget the conversation), /exit; start a message with // to send "
                    "a leading /\n");
            continue;
        }
        if ((rc = history_push(&c.h, "user", line[0] == '/' ? line + 1 : line)))
            break;
        int r = chat_turn(&c);
        if (r > 0) {
            rc = 1;
            break;
        }
        turns += r == 0;
    }
    signal(SIGINT, SIG_DFL);
    fprintf(stderr, "nvhcq chat: %d answers | prompt %u tokens, %.2f tok/s | decode %u tokens, %.2f tok/s\n",
            turns, c.st.pp_n, c.st.pp_s > 0 ? c.st.pp_n / c.st.pp_s : 0, c.st.tg_n,
            c.st.tg_s > 0 ? c.st.tg_n / c.st.tg_s : 0);
done:
    free(line);
    history_clear(&c.h, 0);
    free(c.h.v);
    free(c.kv);
    llm_chat_tmpl_destroy(c.t);
    llm_sampler_destroy(c.s);
    llm_model_destroy(c.m);
    llm_gguf_destroy(g);
    return rc;
}
