/* SPDX-License-Identifier: MIT */
/*
 * nvhcq_llm.c - `nvhcq run` (generate from a GGUF model, streaming tokens to stdout,
 * statistics to stderr, optional interactive chat) and `nvhcq gen-model` (random-weight
 * models with real shapes). Layer: tools (programs may print and exit).
 */
#include "hcq.h"
#include "llm.h"
#include "nvhcq_cmds.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ==== shared with nvhcq_llm_bench.c ==== */

void nvhcq_llm_progress(uint64_t done_B, uint64_t total_B, void *user);

void
nvhcq_llm_progress(uint64_t done_B, uint64_t total_B, void *user)
{
    int *last = user;
    if (total_B < (64ull << 20) || !isatty(2))
        return;
    int pct = (int)(100 * done_B / total_B);
    if (pct == *last)
        return;
    *last = pct;
    int bar = pct / 4;
    fprintf(stderr, "\rloading [%.*s%*s] %3d%% %6.0f MiB", bar, "=========================", 25 - bar, "", pct,
            done_B / 1048576.0);
    if (pct == 100)
        fprintf(stderr, "\n");
}

struct run_opts {
    const char *model, *prompt, *dev, *tok_fallback;
    int n_predict;
    uint32_t n_ctx, n_batch;
    bool interactive, chat, no_graph;
    struct llm_sampler_params sp;
};

static int
run_usage(void)
{
    fprintf(stderr, "usage: nvhcq run -m model.gguf [-p prompt] [-n N] [--temp T] [--top-k K] [--top-p P]\n"
                    "                 [--min-p P] [--repeat-penalty R] [--seed S] [--dev SPEC] [-c CTX]\n"
                    "                 [-b BATCH] [--chat] [-i] [--no-graph] [--tokenizer-fallback gpt2]\n");
    return 2;
}

static bool
parse_run(int argc, char **argv, struct run_opts *o)
{
    memset(o, 0, sizeof *o);
    o->n_predict = 128;
    o->prompt = "";
    llm_sampler_params_default(&o->sp);
    o->sp.temp = 0.8f;
    o->sp.top_k = 40;
    o->sp.top_p = 0.95f;
    o->sp.min_p = 0.05f;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
#define ARG(name) (!strcmp(a, name) && v && (i++, true))
        if (ARG("-m")) o->model = v;
        else if (ARG("-p")) o->prompt = v;
        else if (ARG("-n")) o->n_predict = atoi(v);
        else if (ARG("--temp")) o->sp.temp = (float)atof(v);
        else if (ARG("--top-k")) o->sp.top_k = (uint32_t)atoi(v);
        else if (ARG("--top-p")) o->sp.top_p = (float)atof(v);
        else if (ARG("--min-p")) o->sp.min_p = (float)atof(v);
        else if (ARG("--repeat-penalty")) o->sp.repeat_penalty = (float)atof(v);
        else if (ARG("--seed")) o->sp.seed = strtoull(v, NULL, 0);
        else if (ARG("--dev")) o->dev = v;
        else if (ARG("-c")) o->n_ctx = (uint32_t)atoi(v);
        else if (ARG("-b")) o->n_batch = (uint32_t)atoi(v);
        else if (ARG("--tokenizer-fallback")) o->tok_fallback = v;
        else if (!strcmp(a, "-i")) o->interactive = true;
        else if (!strcmp(a, "--chat")) o->chat = true;
        else if (!strcmp(a, "--no-graph")) o->no_graph = true;
        else {
            fprintf(stderr, "nvhcq run: unknown or incomplete option '%s'\n", a);
            return false;
        }
#undef ARG
    }
    return o->model != NULL;
}

/* Evaluate `text` at *pos, then sample and stream up to n tokens; updates *pos. */
static int
generate(struct llm_model *m, struct llm_sampler *s, const char *text, bool add_bos, int n, uint32_t *pos,
         double *pp_s, uint32_t *pp_n, double *tg_s, uint32_t *tg_n)
{
    const struct llm_tok *tok = llm_model_tok(m);
    uint32_t n_ctx = llm_model_n_ctx(m);
    size_t len = strlen(text), cnt = 0;
    int32_t *ids = malloc((len + 8) * sizeof *ids);
    if (!ids || llm_tok_encode(tok, text, len, add_bos, true, ids, len + 8, &cnt)) {
        fprintf(stderr, "nvhcq run: tokenizing failed: %s\n", hcq_last_error());
        free(ids);
        return 1;
    }
    if (!cnt || *pos + cnt >= n_ctx) {
        fprintf(stderr, "nvhcq run: prompt of %zu tokens does not fit the context (%u used of %u)\n", cnt, *pos, n_ctx);
        free(ids);
        return 1;
    }
    for (size_t i = 0; i < cnt; i++)
        llm_sampler_accept(s, ids[i]);
    uint64_t t0 = hcq_time_ns();
    if (llm_model_eval(m, ids, (uint32_t)cnt, *pos) ||
        llm_logits_check(llm_model_logits(m), llm_model_hparams(m)->n_vocab)) {
        fprintf(stderr, "nvhcq run: prompt evaluation failed: %s\n", hcq_last_error());
        free(ids);
        return 1;
    }
    *pp_s += (hcq_time_ns() - t0) * 1e-9;
    *pp_n += (uint32_t)cnt;
    *pos += (uint32_t)cnt;
    free(ids);
    struct llm_detok d;
    llm_detok_init(&d);
    d.first = false;
    char out[2048];
    t0 = hcq_time_ns();
    for (int i = 0; i < n && *pos < n_ctx; i++) {
        int32_t id = llm_sampler_sample(s, llm_model_logits(m));
        llm_sampler_accept(s, id);
        if (llm_tok_is_eog(tok, id))
            break;
        size_t w = llm_detok_push(&d, tok, id, out, sizeof out);
        fwrite(out, 1, w, stdout);
        fflush(stdout);
        (*tg_n)++;
        if (llm_model_eval(m, &id, 1, (*pos)++) ||
            llm_logits_check(llm_model_logits(m), llm_model_hparams(m)->n_vocab)) {
            fprintf(stderr, "\nnvhcq run: decode failed: %s\n", hcq_last_error());
            return 1;
        }
    }
    size_t w = llm_detok_flush(&d, out, sizeof out);
    fwrite(out, 1, w, stdout);
    *tg_s += (hcq_time_ns() - t0) * 1e-9;
    return 0;
}

int
nvhcq_cmd_run(int argc, char **argv)
{
    struct run_opts o;
    if (!parse_run(argc, argv, &o))
        return run_usage();
    struct llm_model_params mp;
    llm_model_params_default(&mp);
    int last = -1, rc = 1;
    mp.dev_spec = o.dev;
    mp.n_ctx = o.n_ctx;
    mp.n_batch = o.n_batch;
    mp.use_graph = !o.no_graph;
    mp.tok_pre_fallback = o.tok_fallback;
    mp.progress = nvhcq_llm_progress;
    mp.progress_user = &last;
    struct llm_model *m = NULL;
    struct llm_sampler *s = NULL;
    struct llm_gguf *g = NULL;
    uint64_t t0 = hcq_time_ns();
    if (llm_gguf_open(o.model, &g) || llm_model_load_gguf(g, &mp, &m)) {
        fprintf(stderr, "nvhcq run: cannot load %s: %s\n", o.model, hcq_last_error());
        goto done;
    }
    double load_s = (hcq_time_ns() - t0) * 1e-9;
    struct hcq_device_info info;
    if (hcq_device_info(llm_model_device(m), &info) == HCQ_OK)
        fprintf(stderr, "nvhcq run: %s on %s (%s), %.1f MiB of weights, loaded in %.2f s\n", o.model, info.name,
                info.spec, llm_model_weight_bytes(m) / 1048576.0, load_s);
    if (llm_sampler_create(&o.sp, llm_model_hparams(m)->n_vocab, &s)) {
        fprintf(stderr, "nvhcq run: sampler: %s\n", hcq_last_error());
        goto done;
    }
    const struct llm_tok *tok = llm_model_tok(m);
    enum llm_chat_tmpl tmpl = llm_chat_detect(g);
    uint32_t pos = 0, pp_n = 0, tg_n = 0;
    double pp_s = 0, tg_s = 0;
    rc = 0;
    if (!o.interactive) {
        char *text = (char *)o.prompt;
        if (o.chat) {
            struct llm_chat_msg msg = { "user", o.prompt };
            size_t need = llm_chat_render(tmpl, &msg, 1, true, NULL, 0);
            text = malloc(need + 1);
            if (text)
                llm_chat_render(tmpl, &msg, 1, true, text, need + 1);
        }
        if (!text || !text[0]) {
            /* an empty prompt starts from BOS alone */
            text = text ? text : (char *)"";
        }
        rc = generate(m, s, text, llm_tok_add_bos_default(tok) || !text[0], o.n_predict, &pos, &pp_s, &pp_n, &tg_s,
                      &tg_n);
        if (text != o.prompt)
            free(text);
        printf("\n");
        fflush(stdout);
    } else {
        char line[4096];
        fprintf(stderr, "interactive chat (%s template); empty line or EOF ends\n",
                tmpl == LLM_CHAT_LLAMA3 ? "llama-3" : tmpl == LLM_CHAT_CHATML ? "chatml" : "no");
        for (bool first = true; fprintf(stderr, "> "), fgets(line, sizeof line, stdin); first = false) {
            line[strcspn(line, "\n")] = 0;
            if (!line[0])
                break;
            struct llm_chat_msg msg = { "user", line };
            char buf[8192];
            llm_chat_render(tmpl, &msg, 1, true, buf, sizeof buf);
            if ((rc = generate(m, s, buf, first && llm_tok_add_bos_default(tok), o.n_predict, &pos, &pp_s, &pp_n,
                               &tg_s, &tg_n)))
                break;
            printf("\n");
            fflush(stdout);
        }
    }
    fprintf(stderr, "load %.2f s | prompt %u tokens, %.2f tok/s | decode %u tokens, %.2f tok/s\n", load_s, pp_n,
            pp_s > 0 ? pp_n / pp_s : 0, tg_n, tg_s > 0 ? tg_n / tg_s : 0);
done:
    llm_sampler_destroy(s);
    llm_model_destroy(m);
    llm_gguf_destroy(g);
    return rc;
}

/* ==== gen-model ==== */

int
nvhcq_cmd_gen_model(int argc, char **argv)
{
    struct llm_gen_params p = { .arch = "llama", .preset = "tiny", .type = LLM_TYPE_Q8_0, .seed = 1 };
    const char *vocab = NULL, *out = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
#define ARG(name) (!strcmp(a, name) && v && (i++, true))
        if (ARG("--arch")) p.arch = v;
        else if (ARG("--preset")) p.preset = v;
        else if (ARG("--vocab")) vocab = v;
        else if (ARG("-o")) out = v;
        else if (ARG("--seed")) p.seed = strtoull(v, NULL, 0);
        else if (ARG("--threads")) p.threads = (uint32_t)atoi(v);
        else if (ARG("--type")) {
            if (!llm_type_from_name(v, &p.type)) {
                fprintf(stderr, "nvhcq gen-model: unknown type '%s'\n", v);
                return 2;
            }
        } else {
            fprintf(stderr, "usage: nvhcq gen-model [--arch llama|gpt2] --preset tiny|llama-3.2-1b|llama-3.2-3b|\n"
                            "         llama-3.1-8b|gpt2-124m|gpt2-tiny --type q6_k|q4_k|q8_0|f16|... --vocab VOCAB.gguf\n"
                            "         -o out.gguf [--seed S] [--threads N]\n");
            return 2;
        }
#undef ARG
    }
    if (!out || !vocab) {
        fprintf(stderr, "nvhcq gen-model: -o and --vocab are required\n");
        return 2;
    }
    if (!strcmp(p.preset, "gpt2-124m") || !strcmp(p.preset, "gpt2-tiny"))
        p.arch = "gpt2";
    struct llm_gguf *v = NULL;
    if (llm_gguf_open(vocab, &v)) {
        fprintf(stderr, "nvhcq gen-model: %s: %s\n", vocab, hcq_last_error());
        return 1;
    }
    p.vocab = v;
    uint64_t t0 = hcq_time_ns();
    enum hcq_status st = llm_gen_model(&p, out);
    llm_gguf_destroy(v);
    if (st) {
        fprintf(stderr, "nvhcq gen-model: %s\n", hcq_last_error());
        return 1;
    }
    fprintf(stderr, "nvhcq gen-model: wrote %s (%s, %s) in %.2f s\n", out, p.preset, llm_type_name(p.type),
            (hcq_time_ns() - t0) * 1e-9);
    return 0;
}
