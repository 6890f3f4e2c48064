/* SPDX-License-Identifier: MIT */
/*
 * nvhcq_llm.c - `nvhcq run` (generate from a GGUF model, streaming tokens to stdout,
 * statistics to stderr, optional interactive chat) and `nvhcq gen-model` (random-weight
 * models with real shapes). Layer: tools (programs may print and exit).
 */
#include "hcq.h"
#include "llm.h"
#include "nvhcq_cli.h"
#include "nvhcq_cmds.h"
#include "nvhcq_gen.h"

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
    fprintf(stderr, "\rloading [%.*s%*s] %3d%% %6.0f MiB", bar, "=========================", 25 - bar, "",
            pct, done_B / 1048576.0);
    if (pct == 100)
        fprintf(stderr, "\n");
}

struct run_opts {
    const char *model, *prompt, *prompt_file, *dev, *tok_fallback, *chat_template;
    int n_predict;
    uint32_t n_ctx, n_batch;
    bool interactive, chat, no_graph, special, show_ids, host_sample;
    struct llm_sampler_params sp;
};

/* Evaluate `text` at *pos, then sample and stream up to n tokens (n < 0: until the context
 * fills or the model ends its turn); updates *pos. */
static int
generate(struct llm_model *m, struct llm_sampler *s, const struct run_opts *o, const char *text, bool add_bos,
         uint32_t *pos, struct nvhcq_gen_stats *st)
{
    const struct llm_tok *tok = llm_model_tok(m);
    uint32_t n_ctx = llm_model_n_ctx(m);
    size_t len = strlen(text), cnt = 0;
    int32_t *ids = malloc((len + 8) * sizeof *ids);
    if (!ids || llm_tok_encode(tok, text, len, false, true, ids, len + 8, &cnt)) {
        cli_fail("run", "tokenizing the prompt failed: %s", hcq_last_error());
        free(ids);
        return 1;
    }
    /* BOS first, unless the text starts with it (a chat template writes bos_token itself) */
    int32_t bos = llm_tok_bos(tok);
    if (add_bos && bos >= 0 && (!cnt || ids[0] != bos)) {
        memmove(ids + 1, ids, cnt * sizeof *ids);
        ids[0] = bos;
        cnt++;
    }
    if (!cnt || *pos + cnt >= n_ctx) {
        cli_fail("run", "the prompt (%zu tokens) does not fit the context (%u of %u used; -c sets its size)",
                 cnt, *pos, n_ctx);
        free(ids);
        return 1;
    }
    struct nvhcq_gen_opts go = {.n_predict = o->n_predict,
                                .special = o->special,
                                .show_ids = o->show_ids,
                                .host_sample = o->host_sample,
                                .cmd = "run"};
    int rc = nvhcq_gen_prefill(m, s, &go, ids, cnt, *pos, st);
    free(ids);
    if (rc)
        return rc;
    *pos += (uint32_t)cnt;
    return nvhcq_gen_decode(m, s, &go, pos, st);
}

int
nvhcq_cmd_run(int argc, char **argv)
{
    struct run_opts o = {.n_predict = 128, .prompt = ""};
    llm_sampler_params_default(&o.sp);
    o.sp.temp = 0.8f;
    o.sp.top_k = 40;
    o.sp.top_p = 0.95f;
    o.sp.min_p = 0.05f;
    const struct cli_opt opts[] = {
        CLI_STR("-m", "--model", &o.model, "FILE", "GGUF model (required)"),
        CLI_STR("-p", "--prompt", &o.prompt, "TEXT", "prompt (empty: start from BOS)"),
        CLI_STR("-f", "--file", &o.prompt_file, "FILE",
                "read the prompt from FILE (- : stdin) instead of -p"),
        CLI_NUM("-n", "--n-predict", &o.n_predict, "N", -1, 10000000,
                "tokens to generate; -1: until the context fills"),
        CLI_NUM("-c", "--ctx-size", &o.n_ctx, "N", 16, 1 << 20,
                "context (KV cache) length [default: the model's, at most 4096]"),
        CLI_NUM("-b", "--batch-size", &o.n_batch, "N", 1, 65536,
                "prompt tokens evaluated per batch [default: 64]"),
        CLI_NUM(NULL, "--temp", &o.sp.temp, "T", 0, 100, "temperature; 0: greedy"),
        CLI_NUM(NULL, "--top-k", &o.sp.top_k, "K", 0, 10000000, "keep the K likeliest tokens; 0: off"),
        CLI_NUM(NULL, "--top-p", &o.sp.top_p, "P", 0, 1, "keep the likeliest tokens up to mass P; 1: off"),
        CLI_NUM(NULL, "--min-p", &o.sp.min_p, "P", 0, 1, "drop tokens below P x the likeliest; 0: off"),
        CLI_NUM(NULL, "--repeat-penalty", &o.sp.repeat_penalty, "R", 0.01, 100,
                "penalty of recent tokens; 1: off"),
        CLI_NUM(NULL, "--repeat-last-n", &o.sp.repeat_last_n, "N", 0, 1 << 20,
                "how many recent tokens the penalty sees"),
        CLI_NUM(NULL, "--presence-penalty", &o.sp.presence_penalty, "P", -100, 100,
                "subtracted from the logit of each token in the last N; 0: off"),
        CLI_NUM(NULL, "--frequency-penalty", &o.sp.frequency_penalty, "F", -100, 100,
                "subtracted F x its count in the last N from each token's logit; 0: off"),
        CLI_NUM(NULL, "--seed", &o.sp.seed, "S", 0, 1.9e19, "sampler seed (same seed, same text)"),
        CLI_FLAG(NULL, "--host-sample", &o.host_sample,
                 "sample on the host from the logits read back each step (the reference path) instead "
                 "of on the device"),
        CLI_STR(NULL, "--dev", &o.dev, "SPEC",
                "device: cpu, cuda:N, rm:N, nvgpu:0, emu:... [default: HCQ_DEV, else auto]"),
        CLI_FLAG(NULL, "--chat", &o.chat, "the prompt is a user message in the model's chat template"),
        CLI_STR(NULL, "--chat-template", &o.chat_template, "NAME|FILE",
                "--chat with a built-in template or a file instead of the model's own (docs/chat.md)"),
        CLI_FLAG("-i", "--interactive", &o.interactive, "chat: read user turns from stdin"),
        CLI_FLAG(NULL, "--special", &o.special, "print control tokens (<|eot_id|>, reserved) by name"),
        CLI_FLAG(NULL, "--show-ids", &o.show_ids,
                 "print each token's id after its text as [id]; prompt ids to stderr"),
        CLI_FLAG(NULL, "--no-graph", &o.no_graph, "do not record decode as a graph (debugging)"),
        CLI_STR(NULL, "--tokenizer-fallback", &o.tok_fallback, "gpt2",
                "load a vocabulary whose pre-tokenizer is unknown with GPT-2 splitting (warns)"),
        CLI_END,
    };
    const struct cli_cmd cmd = {
        "run",
        "-m FILE [-p TEXT | -f FILE] [options]",
        "Generates text from a GGUF model (LLaMA, GPT-2): tokens to stdout, load and speed to stderr.",
        opts,
        NULL,
        NULL,
        "example (random weights, so random words; seconds on a CPU):\n"
        "  nvhcq gen-model --preset tiny --vocab tests/data/tokenizers/ggml-vocab-gpt-2.gguf -o tiny.gguf\n"
        "  nvhcq run -m tiny.gguf -p \"Once upon a time\" -n 32 --dev cpu --seed 3",
    };
    int rc = cli_parse(&cmd, argc, argv);
    if (rc != CLI_CONTINUE)
        return rc;
    if (!o.model)
        return cli_usage_error(&cmd, "-m FILE is required (a GGUF model; nvhcq gen-model writes one)");
    if (o.prompt_file && o.prompt[0])
        return cli_usage_error(&cmd, "-p and -f both give the prompt: use one");
    if (o.interactive && o.prompt_file)
        return cli_usage_error(&cmd, "-i reads the turns from stdin: -f does not apply");
    char *file_text = NULL;
    if (o.prompt_file) {
        size_t n;
        if (!(file_text = cli_read_text("run", o.prompt_file, &n)))
            return 1;
        if (strlen(file_text) != n) {
            free(file_text);
            return cli_fail("run", "%s: contains NUL bytes, not a text prompt", o.prompt_file);
        }
        o.prompt = file_text;
    }
    struct llm_model_params mp;
    llm_model_params_default(&mp);
    int last = -1;
    rc = 1;
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
        cli_fail_file("run", "cannot load", o.model);
        goto done;
    }
    double load_s = (hcq_time_ns() - t0) * 1e-9;
    struct hcq_device_info info;
    struct llm_mem_need mem;
    llm_model_mem_need(m, &mem);
    if (hcq_device_info(llm_model_device(m), &info) == HCQ_OK)
        fprintf(stderr,
                "nvhcq run: %s on %s (%s), %.1f MiB of weights, context %u, loaded in %.2f s\n"
                "memory: %.1f MiB = weights %.1f + KV cache %.1f + activations %.1f + prefill staging %.1f\n",
                o.model, info.name, info.spec, llm_model_weight_bytes(m) / 1048576.0, llm_model_n_ctx(m),
                load_s, mem.total_B / 1048576.0, mem.weights_B / 1048576.0, mem.kv_B / 1048576.0,
                mem.act_B / 1048576.0, mem.scratch_B / 1048576.0);
    /* a vocabulary the device sampler does not hold: sample on the host, as --host-sample */
    enum hcq_status sst = o.host_sample ? HCQ_OK : llm_model_sampler_set(m, &o.sp);
    if (sst == HCQ_ERR_UNSUPPORTED) {
        fprintf(stderr, "nvhcq run: sampling on the host: %s\n", hcq_last_error());
        o.host_sample = true;
        sst = HCQ_OK;
    }
    if (llm_sampler_create(&o.sp, llm_model_hparams(m)->n_vocab, &s) || sst) {
        cli_fail("run", "sampler: %s", hcq_last_error());
        goto done;
    }
    const struct llm_tok *tok = llm_model_tok(m);
    enum llm_chat_tmpl tmpl = llm_chat_detect(g);
    uint32_t pos = 0;
    struct nvhcq_gen_stats st = {0};
    rc = 0;
    if (!o.interactive) {
        char *text = (char *)o.prompt;
        if (o.chat || o.chat_template) {
            struct llm_chat_msg msg = {"user", o.prompt};
            struct llm_chat_tmpl_obj *ct = NULL;
            enum hcq_status cst = llm_chat_tmpl_from_model(g, o.chat_template, &ct);
            if (!cst)
                cst = llm_chat_tmpl_apply(ct, &msg, 1, true, &text, NULL);
            llm_chat_tmpl_destroy(ct);
            if (cst) {
                rc = cli_fail("run", "--chat: %s", hcq_last_error());
                goto done;
            }
        }
        /* an empty prompt starts from BOS alone */
        rc = generate(m, s, &o, text, llm_tok_add_bos_default(tok) || !text[0], &pos, &st);
        if (text != o.prompt)
            free(text);
        printf("\n");
        fflush(stdout);
    } else {
        char line[4096];
        fprintf(stderr, "interactive chat (%s template); empty line or EOF ends\n",
                tmpl == LLM_CHAT_LLAMA3   ? "llama-3"
                : tmpl == LLM_CHAT_CHATML ? "chatml"
                                          : "no");
        for (bool first = true; fprintf(stderr, "> "), fgets(line, sizeof line, stdin); first = false) {
            line[strcspn(line, "\n")] = 0;
            if (!line[0])
                break;
            struct llm_chat_msg msg = {"user", line};
            char buf[8192];
            llm_chat_render(tmpl, &msg, 1, true, buf, sizeof buf);
            if ((rc = generate(m, s, &o, buf, first && llm_tok_add_bos_default(tok), &pos, &st)))
                break;
            printf("\n");
            fflush(stdout);
            if (st.ctx_full)
                break;
        }
    }
    if (st.ctx_full)
        fprintf(stderr, "nvhcq run: context full (%u tokens): stopped after %u generated tokens%s\n",
                llm_model_n_ctx(m), st.tg_n, o.n_predict < 0 ? "" : " (fewer than -n; -c sets the context)");
    if (st.tg_empty)
        fprintf(stderr,
                "nvhcq run: %u of %u generated tokens were control tokens, printed as nothing (--special "
                "shows them)\n",
                st.tg_empty, st.tg_n);
    fprintf(stderr, "load %.2f s | prompt %u tokens, %.2f tok/s | decode %u tokens, %.2f tok/s\n", load_s,
            st.pp_n, st.pp_s > 0 ? st.pp_n / st.pp_s : 0, st.tg_n, st.tg_s > 0 ? st.tg_n / st.tg_s : 0);
done:
    llm_sampler_destroy(s);
    llm_model_destroy(m);
    llm_gguf_destroy(g);
    free(file_text);
    return rc;
}

/* ==== gen-model ==== */

int
nvhcq_cmd_gen_model(int argc, char **argv)
{
    struct llm_gen_params p = {.arch = NULL, .preset = "tiny", .type = LLM_TYPE_Q8_0, .seed = 1};
    const char *vocab = NULL, *out = NULL, *type = "q8_0";
    const struct cli_opt opts[] = {
        CLI_CHOICE(NULL, "--preset", &p.preset,
                   "tiny|tiny-2k|gpt2-tiny|gpt2-124m|llama-3.2-1b|llama-3.2-3b|llama-3.1-8b|qwen2-tiny|qwen2."
                   "5-0.5b|qwen2.5-1.5b|qwen3-tiny|qwen3-0.6b|qwen3-1.7b|phi3-tiny|phi-3-mini|gemma2-tiny|"
                   "gemma-2-2b|"
                   "gemma3-tiny|gemma3-tiny-linear|gemma-3-1b|gemma-3-4b",
                   "shapes (tiny: 2 layers, width 256, the vocabulary's size)"),
        CLI_CHOICE(NULL, "--arch", &p.arch, "llama|qwen2|qwen3|phi3|gemma2|gemma3|gpt2",
                   "architecture [default: the preset's]"),
        CLI_STR(NULL, "--type", &type, "TYPE",
                "weight type: f32 f16 bf16 q8_0 q4_0 q4_1 q5_0 q5_1 q4_k q5_k q6_k ..."),
        CLI_STR(NULL, "--vocab", &vocab, "FILE",
                "GGUF whose tokenizer the model gets (required; vocab-only files do)"),
        CLI_STR("-o", "--output", &out, "FILE", "where to write the model (required)"),
        CLI_NUM(NULL, "--seed", &p.seed, "S", 0, 1.9e19, "weights are a function of the seed alone"),
        CLI_NUM(NULL, "--threads", &p.threads, "N", 0, 64, "quantizing threads; 0: one per core"),
        CLI_END,
    };
    const struct cli_cmd cmd = {
        "gen-model",
        "--vocab FILE -o FILE [--preset P] [--type T] [options]",
        "Writes a GGUF model with random weights and a real architecture's shapes, for tests and\n"
        "benchmarks. Random weights produce random tokens: with the GPT-2 vocabulary nearly every\n"
        "token is a visible word piece; the LLaMA-3 presets pad a smaller vocabulary to 128256 with\n"
        "reserved control tokens, which `run` prints as nothing unless --special.",
        opts,
        NULL,
        NULL,
        "example: nvhcq gen-model --preset tiny --vocab tests/data/tokenizers/ggml-vocab-gpt-2.gguf -o "
        "tiny.gguf",
    };
    int rc = cli_parse(&cmd, argc, argv);
    if (rc != CLI_CONTINUE)
        return rc;
    if (!llm_type_from_name(type, &p.type))
        return cli_usage_error(&cmd, "--type '%s': unknown weight type", type);
    if (!out || !vocab)
        return cli_usage_error(&cmd, "%s is required", !vocab ? "--vocab FILE" : "-o FILE");
    struct llm_gguf *v = NULL;
    if (llm_gguf_open(vocab, &v))
        return cli_fail_file("gen-model", "--vocab", vocab);
    p.vocab = v;
    uint64_t t0 = hcq_time_ns();
    enum hcq_status st = llm_gen_model(&p, out);
    llm_gguf_destroy(v);
    if (st)
        return cli_fail("gen-model", "%s", hcq_last_error());
    fprintf(stderr, "nvhcq gen-model: wrote %s (%s, %s) in %.2f s\n", out, p.preset, llm_type_name(p.type),
            (hcq_time_ns() - t0) * 1e-9);
    return 0;
}

/* ==== tokenize ==== */

int
nvhcq_cmd_tokenize(int argc, char **argv)
{
    const char *model = NULL, *prompt = NULL, *file = NULL;
    bool ids_only = false, no_bos = false, no_special = false, count = false;
    const struct cli_opt opts[] = {
        CLI_STR("-m", "--model", &model, "FILE", "GGUF model or vocab-only GGUF (required)"),
        CLI_STR("-p", "--prompt", &prompt, "TEXT", "text to tokenize"),
        CLI_STR("-f", "--file", &file, "FILE", "read the text from FILE (- : stdin) instead of -p"),
        CLI_FLAG(NULL, "--ids", &ids_only, "print only the ids, as [1, 2, 3]"),
        CLI_FLAG(NULL, "--no-bos", &no_bos, "do not add the BOS token even where the model adds it"),
        CLI_FLAG(NULL, "--no-parse-special", &no_special, "treat \"<|eot_id|>\" in the text as plain text"),
        CLI_FLAG(NULL, "--show-count", &count, "print the number of tokens last"),
        CLI_END,
    };
    const struct cli_cmd cmd = {
        "tokenize",
        "-m FILE (-p TEXT | -f FILE) [--ids]",
        "Shows how the model's tokenizer splits the text: one line per token, `id -> 'piece'`\n"
        "(control tokens by name), or with --ids the id list only.",
        opts,
        NULL,
        NULL,
        "example: nvhcq tokenize -m tests/data/tokenizers/ggml-vocab-llama-spm.gguf -p \"Hello world\"",
    };
    int rc = cli_parse(&cmd, argc, argv);
    if (rc != CLI_CONTINUE)
        return rc;
    if (!model)
        return cli_usage_error(&cmd, "-m FILE is required");
    if (!prompt == !file)
        return cli_usage_error(&cmd, "give the text with -p TEXT or -f FILE (one of them)");
    char *text = NULL;
    size_t len = prompt ? strlen(prompt) : 0;
    if (file && !(text = cli_read_text("tokenize", file, &len)))
        return 1;
    struct llm_gguf *g = NULL;
    struct llm_tok *tok = NULL;
    int32_t *ids = NULL;
    size_t n = 0;
    rc = 1;
    if (llm_gguf_open(model, &g) || llm_tok_create(g, &tok)) {
        cli_fail_file("tokenize", "cannot load", model);
        goto done;
    }
    bool bos = !no_bos && llm_tok_add_bos_default(tok);
    const char *src = text ? text : prompt;
    if (!(ids = malloc((len + 8) * sizeof *ids)) ||
        llm_tok_encode(tok, src, len, bos, !no_special, ids, len + 8, &n)) {
        cli_fail("tokenize", "%s", ids ? hcq_last_error() : "out of memory");
        goto done;
    }
    if (ids_only) {
        printf("[");
        for (size_t i = 0; i < n; i++)
            printf("%s%d", i ? ", " : "", ids[i]);
        printf("]\n");
    } else {
        for (size_t i = 0; i < n; i++) {
            char piece[512];
            size_t k = llm_tok_piece(tok, ids[i], true, piece, sizeof piece);
            printf("%6d -> '%.*s'\n", ids[i], (int)k, piece);
        }
    }
    if (count)
        printf("Total number of tokens: %zu\n", n);
    rc = 0;
done:
    free(ids);
    free(text);
    llm_tok_destroy(tok);
    llm_gguf_destroy(g);
    return rc;
}
