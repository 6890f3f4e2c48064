/* SPDX-License-Identifier: MIT */
/*
 * nvhcq.c - the nvhcq command-line tool: dispatches to subcommands (tools/nvhcq_*.c).
 * Layer: tools (may exit; library code never does).
 */
#include "hcq.h"
#include "nvhcq_cmds.h"

#include <stdio.h>
#include <string.h>

#pragma weak nvhcq_cmd_bench
#pragma weak nvhcq_cmd_run
#pragma weak nvhcq_cmd_llm_bench
#pragma weak nvhcq_cmd_gen_model
#pragma weak nvhcq_cmd_selftest
#pragma weak nvhcq_cmd_dmesg_check
#pragma weak nvhcq_cmd_tokenize
#pragma weak nvhcq_cmd_perplexity
#pragma weak nvhcq_cmd_serve
#pragma weak nvhcq_cmd_chat

static const struct {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *help;
} cmds[] = {
    {"info", nvhcq_cmd_info, "backends, devices, arch, SMs, memory, driver, embedded cubin archs"},
    {"devices", nvhcq_cmd_devices,
     "list device specs that open here (--testable: those the test suite uses)"},
    {"demo", nvhcq_cmd_demo, "self-check of the default device (HCQ_DEV or --dev) and what ran where"},
    {"bench", NULL,
     "benchmark suite: latency copy elementwise matmul alloc mlp xdev attn, backends side by side"},
    {"run", NULL, "run a GGUF model: -m model.gguf -p prompt [-n N] [--temp T] [--seed S] [--dev D]"},
    {"llm-bench", NULL, "llama-bench-style pp/tg throughput: -m model.gguf [-p 512] [-n 128] [-r 5]"},
    {"gen-model", NULL, "write a random-weight GGUF with a real architecture's shapes"},
    {"tokenize", NULL, "show how a model's tokenizer splits text: -m model.gguf -p text [--ids]"},
    {"selftest", NULL, "Jetson owners: HCQ suite on nvgpu:0, short benchmark, kernel log check"},
    {"dmesg-check", NULL, "classify kernel log lines (NVRM Xid, MMU faults, nvgpu errors)"},
    {"perplexity", NULL, "llama-perplexity's method: -m model.gguf -f text.txt [-c 512] [--dev D]"},
    {"serve", NULL, "OpenAI-compatible HTTP server: -m model.gguf [--port 8080] [--api-key KEY]"},
    {"chat", NULL, "interactive chat in the model's chat template: -m model.gguf [--system TEXT]"},
};

static int (*resolve(int i))(int, char **)
{
    switch (i) {
    case 3:
        return nvhcq_cmd_bench;
    case 4:
        return nvhcq_cmd_run;
    case 5:
        return nvhcq_cmd_llm_bench;
    case 6:
        return nvhcq_cmd_gen_model;
    case 7:
        return nvhcq_cmd_tokenize;
    case 8:
        return nvhcq_cmd_selftest;
    case 9:
        return nvhcq_cmd_dmesg_check;
    case 10:
        return nvhcq_cmd_perplexity;
    case 11:
        return nvhcq_cmd_serve;
    case 12:
        return nvhcq_cmd_chat;
    default:
        return cmds[i].fn;
    }
}

static void
usage(FILE *f)
{
    fprintf(f, "usage: nvhcq <command> [options]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
        fprintf(f, "  %-12s %s%s\n", cmds[i].name, cmds[i].help, resolve((int)i) ? "" : " (not built)");
    fprintf(f, "\nenvironment: HCQ_DEV=<spec> (auto, cpu, cuda:N, rm:N, nvgpu:0, emu:gh100|ga102|ga10b),\n"
               "             HCQ_LOG=error|warn|info|debug, HCQ_DEBUG=push_dump,push_sync,qmd_dump,...\n"
               "\n`nvhcq <command> --help` lists a command's options and their defaults.\n"
               "Exit status: 0 success, 1 failure (a check failed, a file or device did not open), 2 usage "
               "error.\n");
}

int
main(int argc, char **argv)
{
    /* The CLI prints hcq_last_error() with its own context, so the library does not log
     * the same error a second time (HCQ_LOG=debug shows the library's line too). */
    hcq_log_errors_owned_by_caller(true);
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        if (strcmp(argv[1], cmds[i].name) != 0)
            continue;
        int (*fn)(int, char **) = resolve((int)i);
        if (!fn) {
            fprintf(stderr, "nvhcq: '%s' is not built into this binary\n", argv[1]);
            return 2;
        }
        return fn(argc - 1, argv + 1);
    }
    fprintf(stderr, "nvhcq: unknown command '%s'\n\n", argv[1]);
    usage(stderr);
    return 2;
}
