/* SPDX-License-Identifier: MIT */
/*
 * nvhcq_bench.c - `nvhcq bench [GROUP...] [--devs rm:0,cuda:0,cpu] [--json FILE] [--out DIR]
 * [--quick]`: opens every device asked for (default: each of cuda:0, rm:0, nvgpu:0, cpu that
 * opens here), runs the groups (bench/bench_<group>.c) on all of them side by side, prints
 * the table and writes JSON + markdown + SVG. Layer: tools. Method: bench/README.md.
 */
#include "../bench/bench.h"
#include "nvhcq_cli.h"
#include "nvhcq_cmds.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const struct {
    const char *name;
    bench_group_fn fn;
    bool opt_in; /* runs only when named (a subset of another group) */
} groups[] = {
    {"latency", bench_latency, false},
    {"copy", bench_copy, false},
    {"elementwise", bench_elementwise, false},
    {"matmul", bench_matmul, false},
    {"alloc", bench_alloc, false},
    {"mlp", bench_mlp, false},
    {"xdev", bench_xdev, false},
    {"attn", bench_attn, false},
    {"gemm", bench_gemm, true},
};
#define GROUP_COUNT (int)(sizeof groups / sizeof groups[0])

struct bench_args {
    bool want[GROUP_COUNT], any;
};

static int
bench_group_arg(const char *arg, void *user)
{
    struct bench_args *ba = user;
    for (int g = 0; g < GROUP_COUNT; g++)
        if (!strcmp(arg, groups[g].name)) {
            ba->want[g] = ba->any = true;
            return 0;
        }
    fprintf(stderr,
            "nvhcq bench: unknown group '%s' (groups: latency copy elementwise matmul alloc mlp xdev attn "
            "gemm)\n",
            arg);
    return 2;
}

static void
describe_host(char *out, size_t out_B)
{
    char name[64] = "?", model[128] = "?";
    gethostname(name, sizeof name);
    name[sizeof name - 1] = 0;
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        char line[256];
        while (fgets(line, sizeof line, f)) {
            char *colon = strchr(line, ':');
            if (colon && !strncmp(line, "model name", 10)) {
                snprintf(model, sizeof model, "%s", colon + 2);
                model[strcspn(model, "\n")] = 0;
                break;
            }
        }
        fclose(f);
    }
    snprintf(out, out_B, "%s, %s, %ld cores", name, model, sysconf(_SC_NPROCESSORS_ONLN));
}

/* GPU clocks as nvidia-smi reports them for device index `index` (read-only query), or "". */
static void
query_clocks(int index, char *out, size_t out_B)
{
    char cmd[160], line[128];
    out[0] = 0;
    snprintf(cmd, sizeof cmd,
             "nvidia-smi -i %d --query-gpu=clocks.sm,clocks.max.sm,clocks.mem --format=csv,noheader,nounits "
             "2>/dev/null",
             index);
    FILE *p = popen(cmd, "r");
    if (!p)
        return;
    unsigned sm = 0, sm_max = 0, mem = 0;
    if (fgets(line, sizeof line, p) && sscanf(line, "%u, %u, %u", &sm, &sm_max, &mem) == 3)
        snprintf(out, out_B, "sm %u MHz (max %u), mem %u MHz", sm, sm_max, mem);
    pclose(p);
}

static void
record_clocks(struct bench_ctx *ctx)
{
    for (int i = 0; i < ctx->dev_count; i++) {
        struct bench_dev *d = &ctx->devs[i];
        const char *colon = strchr(d->info.spec, ':');
        if (d->timed_on_device && colon && strcmp(d->info.backend, "nvgpu"))
            query_clocks(atoi(colon + 1), d->clocks, sizeof d->clocks);
    }
}

static int
open_dev(struct bench_ctx *ctx, const char *spec, bool required)
{
    if (ctx->dev_count >= BENCH_MAX_DEVS)
        return 0;
    struct bench_dev *d = &ctx->devs[ctx->dev_count];
    memset(d, 0, sizeof *d);
    enum hcq_status st = hcq_device_open(spec, &d->dev);
    if (st != HCQ_OK) {
        if (required)
            fprintf(stderr, "nvhcq bench: %s: %s\n", spec, hcq_last_error());
        return required ? -1 : 0;
    }
    if (hcq_device_info(d->dev, &d->info) != HCQ_OK ||
        hcq_queue_create(d->dev, HCQ_QUEUE_COMPUTE, &d->q) != HCQ_OK ||
        hcq_queue_create(d->dev, HCQ_QUEUE_COPY, &d->cq) != HCQ_OK ||
        hcq_signal_create(d->dev, 0, &d->ts_a) != HCQ_OK ||
        hcq_signal_create(d->dev, 0, &d->ts_b) != HCQ_OK) {
        fprintf(stderr, "nvhcq bench: %s: setup failed: %s\n", spec, hcq_last_error());
        hcq_device_close(d->dev);
        return -1;
    }
    bool host = !strcmp(d->info.backend, "cpu");
    d->timed_on_device = !host && !d->info.emulated;
    d->slow = host || d->info.emulated;
    ctx->dev_count++;
    fprintf(stderr, "bench: %-10s %s, %s, %s%s\n", d->info.spec, d->info.name, d->info.arch, d->info.driver,
            d->timed_on_device ? "" : " (host-timed: figures are meaningless as GPU speed)");
    return 0;
}

static void
close_devs(struct bench_ctx *ctx)
{
    for (int i = 0; i < ctx->dev_count; i++) {
        struct bench_dev *d = &ctx->devs[i];
        hcq_signal_destroy(d->ts_a);
        hcq_signal_destroy(d->ts_b);
        hcq_queue_destroy(d->q);
        hcq_queue_destroy(d->cq);
        hcq_device_close(d->dev);
    }
    ctx->dev_count = 0;
}

/* FILE.json -> FILE.<ext> */
static void
sibling(char *out, size_t out_B, const char *json, const char *ext)
{
    size_t n = strlen(json);
    if (n > 5 && !strcmp(json + n - 5, ".json"))
        n -= 5;
    snprintf(out, out_B, "%.*s.%s", (int)n, json, ext);
}

static int
write_outputs(const struct bench_ctx *ctx, const char *json)
{
    char md[1024], svg[1024];
    sibling(md, sizeof md, json, "md");
    sibling(svg, sizeof svg, json, "svg");
    if (bench_write_json(ctx, json) || bench_write_md(ctx, md) || bench_write_svg(ctx, svg))
        return -1;
    fprintf(stderr, "bench: wrote %s, %s, %s\n", json, md, svg);
    return 0;
}

/* DIR/<gpu>/<date>-<commit>.json, <gpu> from the first GPU device's name ("nvidia-h100-80gb-hbm3"). */
static int
out_path(const struct bench_ctx *ctx, const char *dir, char *out, size_t out_B)
{
    const char *gpu = "cpu";
    for (int i = 0; i < ctx->dev_count; i++)
        if (ctx->devs[i].timed_on_device) {
            gpu = ctx->devs[i].info.name;
            break;
        }
    char slug[96];
    size_t j = 0;
    for (const char *p = gpu; *p && j + 1 < sizeof slug; p++) {
        char c = *p;
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))
            slug[j++] = c;
        else if (j && slug[j - 1] != '-')
            slug[j++] = '-';
    }
    while (j && slug[j - 1] == '-')
        j--;
    slug[j] = 0;
    char sub[1024];
    snprintf(sub, sizeof sub, "%.900s/%s", dir, slug);
    mkdir(dir, 0755);
    mkdir(sub, 0755);
    char day[16];
    snprintf(day, sizeof day, "%.10s", ctx->date);
    snprintf(out, out_B, "%.980s/%.10s-%.20s.json", sub, day, ctx->commit);
    return 0;
}

int
nvhcq_cmd_bench(int argc, char **argv)
{
    struct bench_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    const char *devs = NULL, *json = NULL, *out_dir = NULL;
    struct bench_args ba = {{false}, false};
    size_t cl = 0;
    for (int i = 0; i < argc && cl < sizeof ctx.command - 1; i++)
        cl +=
            (size_t)snprintf(ctx.command + cl, sizeof ctx.command - cl, "%s%s", i ? " " : "nvhcq ", argv[i]);
    const struct cli_opt opts[] = {
        CLI_STR(NULL, "--devs", &devs, "SPEC,...",
                "devices side by side [default: those of cuda:0,rm:0,nvgpu:0,cpu that open]"),
        CLI_STR(NULL, "--json", &json, "FILE", "write FILE (JSON) and FILE's .md and .svg next to it"),
        CLI_STR(NULL, "--out", &out_dir, "DIR",
                "write DIR/<gpu>/<date>-<commit>.{json,md,svg} (bench/results layout)"),
        CLI_FLAG(NULL, "--quick", &ctx.quick, "small sizes and few reps (make bench, CI smoke)"),
        CLI_END,
    };
    const struct cli_cmd cmd = {
        "bench",
        "[GROUP...] [--devs SPEC,SPEC,...] [--json FILE] [--out DIR] [--quick]",
        "Runs the benchmark groups on every device side by side (median, p99, ratios), checks each\n"
        "result, prints the table. GROUP: latency copy elementwise matmul alloc mlp xdev attn (default: "
        "all), "
        "gemm (only when named: matmul's tensor-core rows, n = 1024..8192).",
        opts,
        bench_group_arg,
        &ba,
        "method: bench/README.md",
    };
    int rc = cli_parse(&cmd, argc, argv);
    if (rc != CLI_CONTINUE)
        return rc;
    cli_commit(ctx.commit, sizeof ctx.commit);
    describe_host(ctx.host, sizeof ctx.host);
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(ctx.date, sizeof ctx.date, "%Y-%m-%dT%H:%M:%SZ", &tm);

    int left_out = 0;
    if (devs) {
        char *list = strdup(devs);
        for (char *save = NULL, *s = list ? strtok_r(list, ",", &save) : NULL; s;
             s = strtok_r(NULL, ",", &save))
            if (open_dev(&ctx, s, true) != 0) {
                fprintf(stderr, "bench: %s left out (it did not open); the exit status will be 1\n", s);
                left_out++; /* the others still run */
            }
        free(list);
    } else {
        static const char *const defaults[] = {"cuda:0", "rm:0", "nvgpu:0", "cpu"};
        for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++)
            (void)open_dev(&ctx, defaults[i], false);
    }
    if (!ctx.dev_count) {
        fprintf(stderr, "bench: no device opened\n");
        return 1;
    }
    bench_print_header();
    for (int g = 0; g < GROUP_COUNT; g++)
        if ((!ba.any && !groups[g].opt_in) || ba.want[g])
            groups[g].fn(&ctx);

    record_clocks(&ctx); /* after the run: the clocks the GPU ran the last groups at */
    rc = left_out ? 1 : 0;
    char path[1024];
    if (json && write_outputs(&ctx, json))
        rc = 1;
    if (out_dir && (out_path(&ctx, out_dir, path, sizeof path) || write_outputs(&ctx, path)))
        rc = 1;
    uint32_t fails = 0;
    for (uint32_t i = 0; i < ctx.result_count; i++)
        fails += ctx.results[i].verdict == BENCH_FAIL || ctx.results[i].verdict == BENCH_ERROR;
    if (fails) {
        fprintf(stderr, "bench: %u result(s) FAILED verification or errored\n", fails);
        rc = 1;
    }
    close_devs(&ctx);
    free(ctx.results);
    return rc;
}
