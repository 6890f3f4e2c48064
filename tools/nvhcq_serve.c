/* SPDX-License-Identifier: MIT */
/*
 * nvhcq_serve.c - `nvhcq serve`: an OpenAI-compatible HTTP server for a GGUF model
 * (docs/serve.md). Parses the options, loads the model in the generation worker
 * (serve_gen.c), starts the HTTP daemon (serve_http.c) and waits for SIGINT/SIGTERM, then
 * drains: no new connections, queued requests finished, then exit. Built without
 * libmicrohttpd/jansson, it says so and how to get them. Layer: tools.
 */
#include "nvhcq_cli.h"
#include "nvhcq_cmds.h"
#include "serve_http.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

int
nvhcq_cmd_serve(int argc, char **argv)
{
    const char *model = NULL, *dev = NULL, *host = "127.0.0.1", *api_key = NULL, *tmpl = NULL, *alias = NULL;
    uint32_t port = 8080, parallel = 1, n_ctx = 0, n_batch = 512, max_queue = 64, timeout_s = 60,
             drain_s = 60;
    uint64_t max_body = 1 << 20;
    bool host_sample = false;
    const struct cli_opt opts[] = {
        CLI_STR("-m", "--model", &model, "FILE", "GGUF model (required)"),
        CLI_STR(NULL, "--dev", &dev, "SPEC", "device: cpu, cuda:N, rm:N, nvgpu:0, emu:... [default: auto]"),
        CLI_STR(NULL, "--host", &host, "ADDR", "numeric address to listen on (0.0.0.0: every interface)"),
        CLI_NUM(NULL, "--port", &port, "N", 0, 65535, "TCP port"),
        CLI_NUM(NULL, "--parallel", &parallel, "N", 1, LLM_BATCH_MAX_SEQ,
                "decode slots: requests decoded together, one batch step per token for all of them "
                "(continuous batching; each slot has the whole context)"),
        CLI_NUM("-c", "--ctx-size", &n_ctx, "N", 0, 1 << 20,
                "context (KV cache) length; 0: the model's, at most 4096"),
        CLI_NUM("-b", "--batch-size", &n_batch, "N", 1, 65536,
                "prompt tokens per prefill pass (the prompts of several slots share passes); raised to "
                "--parallel (a decode step's rows), lowered to the context"),
        CLI_STR(NULL, "--api-key", &api_key, "KEY",
                "require \"Authorization: Bearer KEY\" (all but /health)"),
        CLI_STR(NULL, "--chat-template", &tmpl, "NAME|FILE",
                "chat template: a built-in (nvhcq chat --help lists them), a Jinja file, or none "
                "(contents joined by newlines) [default: the model's tokenizer.chat_template]"),
        CLI_STR(NULL, "--alias", &alias, "NAME",
                "model name in /v1/models and responses [default: file name]"),
        CLI_NUM(NULL, "--max-body", &max_body, "B", 1024, 1 << 30, "largest request body (bytes; 413 above)"),
        CLI_NUM(NULL, "--max-queue", &max_queue, "N", 0, 100000, "requests waiting for a slot; more get 429"),
        CLI_NUM(NULL, "--timeout", &timeout_s, "S", 1, 86400, "close a connection idle this long (seconds)"),
        CLI_NUM(NULL, "--drain-timeout", &drain_s, "S", 0, 86400,
                "on SIGINT/SIGTERM: wait this long for requests in flight"),
        CLI_FLAG(NULL, "--host-sample", &host_sample,
                 "sample on the host from logits read back every step instead of on the device"),
        CLI_END,
    };
    const struct cli_cmd cmd = {
        "serve",
        "-m FILE [--host ADDR] [--port N] [--api-key KEY] [options]",
        "OpenAI-compatible HTTP server: POST /v1/chat/completions, /v1/completions (streaming too),\n"
        "GET /v1/models, /health, /metrics. Binds 127.0.0.1 unless --host says otherwise.\n"
        "SIGINT/SIGTERM stop accepting, finish the requests in flight, exit 0. docs/serve.md.",
        opts,
        NULL,
        NULL,
        "example:\n"
        "  nvhcq serve -m tests/data/models/tinystories-656k.gguf --dev cpu --port 8080 &\n"
        "  curl -s localhost:8080/v1/completions -d '{\"prompt\": \"Once upon a time\", \"max_tokens\": 16}'",
    };
    int rc = cli_parse(&cmd, argc, argv);
    if (rc != CLI_CONTINUE)
        return rc;
    if (!model)
        return cli_usage_error(&cmd, "-m FILE is required (a GGUF model)");
    if (api_key && !api_key[0])
        return cli_usage_error(&cmd, "--api-key: empty key");
#ifndef NVHCQ_HAVE_SERVE
    (void)dev;
    (void)host;
    (void)tmpl;
    (void)alias;
    return cli_fail("serve",
                    "this nvhcq was built without the server: it needs libmicrohttpd and jansson. Install "
                    "them (Debian/Ubuntu: apt-get install libmicrohttpd-dev libjansson-dev) or unpack them "
                    "with tools/deps-fetch.sh DIR and build with make DEPS=DIR; docs/serve.md");
#else
    /* every thread inherits this mask: the signals reach sigwait below, never a worker */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    char err[512], name[128];
    const char *base = strrchr(model, '/') ? strrchr(model, '/') + 1 : model;
    snprintf(name, sizeof name, "%s", alias ? alias : base);
    struct srv_gen_params gp = {.model = model,
                                .dev = dev,
                                .n_ctx = n_ctx,
                                .n_batch = n_batch > parallel ? n_batch : parallel,
                                .max_queue = max_queue,
                                .parallel = parallel,
                                .host_sample = host_sample,
                                .chat_template = tmpl};
    struct srv_gen *g = NULL;
    struct srv_http *h = NULL;
    if (srv_gen_start(&gp, &g, err, sizeof err))
        return cli_fail("serve", "%s", err);
    struct srv_http_opts ho = {.host = host,
                               .port = (uint16_t)port,
                               .api_key = api_key,
                               .model_id = name,
                               .max_body = max_body,
                               .timeout_s = timeout_s,
                               .max_conn = max_queue + parallel + 64};
    if (srv_http_start(&ho, g, &h, err, sizeof err)) {
        srv_gen_free(g);
        return cli_fail("serve", "%s", err);
    }
    fprintf(stderr,
            "nvhcq serve: %s on %s, context %u, chat template %s; listening on http://%s%s%s:%u "
            "(%u slot%s, queue %u%s)\n",
            name, srv_gen_device_name(g), srv_gen_n_ctx(g), srv_gen_chat_tmpl_name(g),
            strchr(host, ':') ? "[" : "", host, strchr(host, ':') ? "]" : "", port, parallel,
            parallel > 1 ? "s" : "", max_queue, api_key ? ", API key required" : "");
    int sig = 0;
    sigwait(&set, &sig);
    fprintf(stderr, "nvhcq serve: %s: draining (no new connections; requests in flight finish)\n",
            sig == SIGINT ? "SIGINT" : "SIGTERM");
    srv_http_quiesce(h);
    srv_gen_stop(g); /* queued requests run to their end; new ones get 503 */
    srv_http_stop(h, drain_s);
    srv_gen_free(g);
    fprintf(stderr, "nvhcq serve: stopped\n");
    return 0;
#endif
}
