/* SPDX-License-Identifier: MIT */
/*
 * bench_util.c - the bench framework: order statistics, result table, random inputs, and
 * the JSON / markdown / SVG writers of `nvhcq bench`. Layer: bench (tools level).
 */
#include "bench.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ==== Results ==== */

struct bench_result
bench_result_init(const char *group, const char *name, const struct bench_dev *d, const char *params,
                  const char *unit, bool higher_is_better)
{
    struct bench_result r;
    memset(&r, 0, sizeof r);
    snprintf(r.group, sizeof r.group, "%s", group);
    snprintf(r.name, sizeof r.name, "%s", name);
    snprintf(r.backend, sizeof r.backend, "%s", d->info.spec);
    snprintf(r.params, sizeof r.params, "%s", params);
    snprintf(r.unit, sizeof r.unit, "%s", unit);
    r.higher_is_better = higher_is_better;
    r.extra = -1;
    r.verdict = BENCH_NOT_CHECKED;
    return r;
}

static int
cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void
bench_stats(struct bench_result *r, double *t_ns, uint32_t n, double work)
{
    r->n = n;
    if (!n)
        return;
    qsort(t_ns, n, sizeof *t_ns, cmp_double);
    uint32_t i99 = (uint32_t)ceil(0.99 * n) - 1;
    double t[4] = {t_ns[0], t_ns[n / 2], t_ns[i99 < n ? i99 : n - 1], t_ns[n - 1]};
    if (n % 2 == 0)
        t[1] = 0.5 * (t_ns[n / 2 - 1] + t_ns[n / 2]);
    for (int i = 0; i < 4; i++)
        t[i] = t[i] > 0 ? t[i] : 1e-3; /* a clock tick below resolution: not infinitely fast */
    if (r->higher_is_better) {
        r->min = work / t[3];
        r->median = work / t[1];
        r->p99 = work / t[2];
        r->max = work / t[0];
    } else {
        r->min = t[0] * 1e-3;
        r->median = t[1] * 1e-3;
        r->p99 = t[2] * 1e-3;
        r->max = t[3] * 1e-3;
    }
}

static const char *
verdict_str(enum bench_verdict v)
{
    switch (v) {
    case BENCH_VERIFIED:
        return "ok";
    case BENCH_FAIL:
        return "FAIL";
    case BENCH_NOT_CHECKED:
        return "n/a";
    case BENCH_SKIPPED:
        return "skipped";
    case BENCH_ERROR:
        return "ERROR";
    }
    return "?";
}

static bool
has_numbers(const struct bench_result *r)
{
    return (r->verdict == BENCH_VERIFIED || r->verdict == BENCH_NOT_CHECKED) && r->n > 0;
}

double
bench_vs_cuda(const struct bench_ctx *ctx, const struct bench_result *r)
{
    if (!has_numbers(r))
        return 0;
    for (uint32_t i = 0; i < ctx->result_count; i++) {
        const struct bench_result *c = &ctx->results[i];
        if (strncmp(c->backend, "cuda", 4) || strcmp(c->group, r->group) || strcmp(c->name, r->name) ||
            strcmp(c->params, r->params) || !has_numbers(c))
            continue;
        return r->higher_is_better ? r->median / c->median : c->median / r->median;
    }
    return 0;
}

void
bench_print_header(void)
{
    printf("%-11s %-24s %-16s %-10s %11s %11s %11s %-10s %7s  %s\n", "group", "name", "params", "backend",
           "median", "best", "p99", "unit", "vs cuda", "verified");
    fflush(stdout);
}

static void
print_row(const struct bench_ctx *ctx, const struct bench_result *r)
{
    char vs[16] = "-";
    double v = bench_vs_cuda(ctx, r);
    if (v > 0)
        snprintf(vs, sizeof vs, "%.2fx", v);
    if (has_numbers(r)) {
        double best = r->higher_is_better ? r->max : r->min;
        printf("%-11s %-24s %-16s %-10s %11.4g %11.4g %11.4g %-10s %7s  %s%s%s\n", r->group, r->name,
               r->params, r->backend, r->median, best, r->p99, r->unit, vs, verdict_str(r->verdict),
               r->note[0] ? "  " : "", r->note);
    } else {
        printf("%-11s %-24s %-16s %-10s %11s %11s %11s %-10s %7s  %s  %s\n", r->group, r->name, r->params,
               r->backend, "-", "-", "-", r->unit, "-", verdict_str(r->verdict), r->note);
    }
    fflush(stdout);
}

void
bench_add(struct bench_ctx *ctx, const struct bench_result *r)
{
    if (ctx->result_count == ctx->result_cap) {
        uint32_t cap = ctx->result_cap ? 2 * ctx->result_cap : 64;
        struct bench_result *n = realloc(ctx->results, cap * sizeof *n);
        if (!n) {
            fprintf(stderr, "bench: out of memory for results\n");
            return;
        }
        ctx->results = n;
        ctx->result_cap = cap;
    }
    ctx->results[ctx->result_count++] = *r;
    print_row(ctx, r);
}

void
bench_add_status(struct bench_ctx *ctx, struct bench_result *r, enum bench_verdict v, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->note, sizeof r->note, fmt, ap);
    va_end(ap);
    r->verdict = v;
    if (v == BENCH_FAIL || v == BENCH_ERROR || v == BENCH_SKIPPED)
        r->n = 0; /* a wrong or missing answer has no speed */
    if (v == BENCH_ERROR && (strstr(r->note, "HCQ_ERR_DEVICE_LOST") || strstr(r->note, "HCQ_ERR_TIMEOUT"))) {
        /* a lost or hung device would only add timeouts to the run: skip its remaining rows */
        for (int i = 0; i < ctx->dev_count; i++)
            if (!strcmp(ctx->devs[i].info.spec, r->backend) && !ctx->devs[i].dead) {
                ctx->devs[i].dead = true;
                fprintf(stderr, "bench: %s lost or hung; skipping its remaining measurements\n", r->backend);
            }
    }
    bench_add(ctx, r);
}

uint64_t
bench_ts_delta(struct hcq_signal *a, struct hcq_signal *b)
{
    uint64_t ta = hcq_signal_timestamp_ns(a), tb = hcq_signal_timestamp_ns(b);
    return tb > ta ? tb - ta : 0;
}

uint32_t
bench_reps(const struct bench_ctx *ctx, double est_ns, double budget_s, uint32_t lo, uint32_t hi)
{
    if (ctx->quick)
        return lo < 3 ? lo : 3;
    double n = est_ns > 0 ? budget_s * 1e9 / est_ns : hi;
    if (n < lo)
        n = lo;
    if (n > hi)
        n = hi;
    return (uint32_t)n;
}

/* ==== Timing ==== */

static enum hcq_status
time_one(struct bench_dev *d, struct hcq_queue *q, bench_record_fn rec, void *arg, uint32_t batch,
         double *ns_out)
{
    enum hcq_status st;
    uint64_t t0 = hcq_time_ns();
    if (d->timed_on_device && (st = hcq_queue_timestamp(q, d->ts_a)) != HCQ_OK)
        return st;
    for (uint32_t b = 0; b < batch; b++)
        if ((st = rec(d, q, arg)) != HCQ_OK)
            return st;
    if (d->timed_on_device && (st = hcq_queue_timestamp(q, d->ts_b)) != HCQ_OK)
        return st;
    if ((st = hcq_queue_finish(q, 30ull * 1000 * 1000 * 1000)) != HCQ_OK)
        return st;
    uint64_t t1 = hcq_time_ns();
    *ns_out = (double)(d->timed_on_device ? bench_ts_delta(d->ts_a, d->ts_b) : t1 - t0) / batch;
    return HCQ_OK;
}

enum hcq_status
bench_time(struct bench_dev *d, struct hcq_queue *q, bench_record_fn rec, void *arg, uint32_t batch,
           uint32_t reps, double *samples_ns)
{
    double warm;
    enum hcq_status st = time_one(d, q, rec, arg, batch, &warm);
    for (uint32_t i = 0; i < reps && st == HCQ_OK; i++)
        st = time_one(d, q, rec, arg, batch, &samples_ns[i]);
    return st;
}

enum hcq_status
bench_batch(struct bench_dev *d, struct hcq_queue *q, bench_record_fn rec, void *arg, double min_ns,
            uint32_t cap, uint32_t *batch_out, double *one_ns_out)
{
    double ns = 0;
    enum hcq_status st = time_one(d, q, rec, arg, 1, &ns); /* first touch, module load: warm-up */
    if (st == HCQ_OK)
        st = time_one(d, q, rec, arg, 1, &ns);
    if (st != HCQ_OK)
        return st;
    double b = ns > 0 ? ceil(min_ns / ns) : cap;
    *batch_out = b < 1 ? 1 : b > cap ? cap : (uint32_t)b;
    *one_ns_out = ns;
    return HCQ_OK;
}

/* ==== Inputs ==== */

static uint64_t rng = 0;

static uint64_t
rand64(void)
{
    if (!rng)
        rng = (hcq_time_ns() * 0x9E3779B97F4A7C15ull) | 1;
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 0x2545F4914F6CDD1Dull;
}

void
bench_rand_f32(float *v, size_t n, float lo, float hi)
{
    for (size_t i = 0; i < n; i++) {
        float x;
        do
            x = lo + (hi - lo) * (float)((rand64() >> 40) / 16777216.0);
        while (x == 0.0f);
        v[i] = x;
    }
}

void
bench_rand_bytes(void *v, size_t n)
{
    uint8_t *p = v;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t x = rand64() | 0x0101010101010101ull; /* no zero bytes: a zero output is never right */
        memcpy(p + i, &x, 8);
    }
    for (; i < n; i++)
        p[i] = (uint8_t)(rand64() | 1);
}

const char *
bench_fmt_bytes(char *buf, size_t buf_B, uint64_t bytes)
{
    if (bytes >= (1ull << 30) && bytes % (1ull << 30) == 0)
        snprintf(buf, buf_B, "%llu GiB", (unsigned long long)(bytes >> 30));
    else if (bytes >= (1ull << 20) && bytes % (1ull << 20) == 0)
        snprintf(buf, buf_B, "%llu MiB", (unsigned long long)(bytes >> 20));
    else if (bytes >= 1024 && bytes % 1024 == 0)
        snprintf(buf, buf_B, "%llu KiB", (unsigned long long)(bytes >> 10));
    else
        snprintf(buf, buf_B, "%llu B", (unsigned long long)bytes);
    return buf;
}

const char *
bench_fmt_count(char *buf, size_t buf_B, uint64_t n)
{
    if (n >= 1000000 && n % 1000000 == 0)
        snprintf(buf, buf_B, "%lluM", (unsigned long long)(n / 1000000));
    else if (n >= 1000 && n % 1000 == 0)
        snprintf(buf, buf_B, "%lluK", (unsigned long long)(n / 1000));
    else
        snprintf(buf, buf_B, "%llu", (unsigned long long)n);
    return buf;
}

/* ==== JSON ==== */

static void
json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static void
json_num(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.6g", v);
    else
        fprintf(f, "null");
}

int
bench_write_json(const struct bench_ctx *ctx, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return -1;
    }
    fprintf(f, "{\n  \"tool\": \"nvhcq bench\",\n  \"commit\": ");
    json_str(f, ctx->commit);
    fprintf(f, ",\n  \"date\": ");
    json_str(f, ctx->date);
    fprintf(f, ",\n  \"host\": ");
    json_str(f, ctx->host);
    fprintf(f, ",\n  \"command\": ");
    json_str(f, ctx->command);
    fprintf(f, ",\n  \"quick\": %s,\n  \"devices\": [", ctx->quick ? "true" : "false");
    for (int i = 0; i < ctx->dev_count; i++) {
        const struct hcq_device_info *in = &ctx->devs[i].info;
        fprintf(f, "%s\n    {\"spec\": ", i ? "," : "");
        json_str(f, in->spec);
        fprintf(f, ", \"name\": ");
        json_str(f, in->name);
        fprintf(f, ", \"backend\": ");
        json_str(f, in->backend);
        fprintf(f, ", \"arch\": ");
        json_str(f, in->arch);
        fprintf(f, ", \"driver\": ");
        json_str(f, in->driver);
        fprintf(f, ", \"sm_count\": %u, \"mem_B\": %llu, \"emulated\": %s, \"clocks\": ", in->sm_count,
                (unsigned long long)in->mem_B, in->emulated ? "true" : "false");
        if (ctx->devs[i].clocks[0])
            json_str(f, ctx->devs[i].clocks);
        else
            fprintf(f, "null");
        fprintf(f, ", \"timed_on_device\": %s}", ctx->devs[i].timed_on_device ? "true" : "false");
    }
    fprintf(f, "\n  ],\n  \"results\": [");
    for (uint32_t i = 0; i < ctx->result_count; i++) {
        const struct bench_result *r = &ctx->results[i];
        fprintf(f, "%s\n    {\"group\": ", i ? "," : "");
        json_str(f, r->group);
        fprintf(f, ", \"name\": ");
        json_str(f, r->name);
        fprintf(f, ", \"backend\": ");
        json_str(f, r->backend);
        fprintf(f, ", \"params\": ");
        json_str(f, r->params);
        fprintf(f, ", \"unit\": ");
        json_str(f, r->unit);
        fprintf(f, ", \"higher_is_better\": %s, \"n\": %u", r->higher_is_better ? "true" : "false", r->n);
        const char *keys[4] = {"min", "median", "p99", "max"};
        double vals[4] = {r->min, r->median, r->p99, r->max};
        for (int k = 0; k < 4; k++) {
            fprintf(f, ", \"%s\": ", keys[k]);
            if (has_numbers(r))
                json_num(f, vals[k]);
            else
                fprintf(f, "null");
        }
        fprintf(f, ", \"verified\": ");
        json_str(f, verdict_str(r->verdict));
        double v = bench_vs_cuda(ctx, r);
        fprintf(f, ", \"vs_cuda\": ");
        if (v > 0)
            json_num(f, v);
        else
            fprintf(f, "null");
        if (r->extra >= 0) {
            fprintf(f, ", \"pct_of_d2d\": ");
            json_num(f, r->extra);
        }
        fprintf(f, ", \"note\": ");
        json_str(f, r->note);
        fprintf(f, "}");
    }
    fprintf(f, "\n  ]\n}\n");
    return fclose(f) == 0 ? 0 : -1;
}

/* ==== Markdown ==== */

int
bench_write_md(const struct bench_ctx *ctx, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return -1;
    }
    fprintf(f, "# nvhcq bench%s\n\n", ctx->quick ? " (--quick: sizes and reps too small to mean much)" : "");
    fprintf(f, "commit `%s`, %s, host: %s\n\n`%s`\n\n", ctx->commit, ctx->date, ctx->host, ctx->command);
    for (int i = 0; i < ctx->dev_count; i++) {
        const struct hcq_device_info *in = &ctx->devs[i].info;
        fprintf(f, "- **%s**: %s, %s, %u SMs, %.1f GiB, %s%s%s%s\n", in->spec, in->name, in->arch,
                in->sm_count, in->mem_B / 1073741824.0, in->driver,
                ctx->devs[i].clocks[0] ? ", clocks after the run: " : "", ctx->devs[i].clocks,
                ctx->devs[i].timed_on_device ? "" : " (host-timed; figures meaningless as GPU speed)");
    }
    fprintf(f, "\nmedian / best / p99 (slow tail) of the reps; *vs cuda* = speed relative to cuda:0 "
               "(>1 is faster). Method: bench/README.md.\n");
    const char *group = "";
    for (uint32_t i = 0; i < ctx->result_count; i++) {
        const struct bench_result *r = &ctx->results[i];
        if (strcmp(group, r->group)) {
            group = r->group;
            fprintf(
                f,
                "\n## %s\n\n| name | params | backend | median | best | p99 | unit | vs cuda | verified |\n"
                "|---|---|---|---:|---:|---:|---|---:|---|\n",
                group);
        }
        double v = bench_vs_cuda(ctx, r);
        char vs[16] = "-";
        if (v > 0)
            snprintf(vs, sizeof vs, "%.2fx", v);
        if (has_numbers(r))
            fprintf(f, "| %s | %s | %s | %.4g | %.4g | %.4g | %s | %s | %s%s%s |\n", r->name, r->params,
                    r->backend, r->median, r->higher_is_better ? r->max : r->min, r->p99, r->unit, vs,
                    verdict_str(r->verdict), r->note[0] ? ": " : "", r->note);
        else
            fprintf(f, "| %s | %s | %s | - | - | - | %s | - | %s: %s |\n", r->name, r->params, r->backend,
                    r->unit, verdict_str(r->verdict), r->note);
    }
    return fclose(f) == 0 ? 0 : -1;
}

/* ==== SVG: one panel per group, a row per configuration, a bar per backend ==== */

static const char *
backend_color(const char *spec)
{
    if (!strncmp(spec, "cuda", 4))
        return "#76b900"; /* NVIDIA green */
    if (!strncmp(spec, "rm", 2))
        return "#1f77b4";
    if (!strncmp(spec, "nvgpu", 5))
        return "#9467bd";
    if (!strncmp(spec, "emu", 3))
        return "#ff7f0e";
    return "#7f7f7f";
}

static void
svg_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '<')
            fputs("&lt;", f);
        else if (*s == '>')
            fputs("&gt;", f);
        else if (*s == '&')
            fputs("&amp;", f);
        else
            fputc(*s, f);
    }
}

static bool
same_config(const struct bench_result *a, const struct bench_result *b)
{
    return !strcmp(a->group, b->group) && !strcmp(a->name, b->name) && !strcmp(a->params, b->params);
}

int
bench_write_svg(const struct bench_ctx *ctx, const char *path)
{
    const int W = 980, label_w = 330, bar_max = 470, bar_h = 11;
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return -1;
    }
    /* Height: a title per group, a row block per configuration. */
    int height = 40;
    for (uint32_t i = 0; i < ctx->result_count; i++) {
        if (i == 0 || strcmp(ctx->results[i].group, ctx->results[i - 1].group))
            height += 34;
        height += bar_h + 2;
        if (i + 1 == ctx->result_count || !same_config(&ctx->results[i], &ctx->results[i + 1]))
            height += 6;
    }
    fprintf(f,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"monospace\" "
            "font-size=\"10\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
            W, height);
    fprintf(f,
            "<text x=\"8\" y=\"16\" font-size=\"13\">nvhcq bench, commit %s, %s%s: bar = speed relative to "
            "the fastest backend of the row</text>\n",
            ctx->commit, ctx->date, ctx->quick ? " (--quick)" : "");
    int lx = 8;
    for (int d = 0; d < ctx->dev_count; d++) {
        fprintf(f, "<rect x=\"%d\" y=\"24\" width=\"10\" height=\"10\" fill=\"%s\"/><text x=\"%d\" y=\"33\">",
                lx, backend_color(ctx->devs[d].info.spec), lx + 14);
        svg_text(f, ctx->devs[d].info.spec);
        fprintf(f, "</text>\n");
        lx += 110;
    }
    int y = 40;
    for (uint32_t i = 0; i < ctx->result_count;) {
        const struct bench_result *r = &ctx->results[i];
        if (i == 0 || strcmp(r->group, ctx->results[i - 1].group)) {
            y += 30;
            fprintf(f, "<text x=\"8\" y=\"%d\" font-size=\"13\" font-weight=\"bold\">", y - 8);
            svg_text(f, r->group);
            fprintf(f, "</text>\n");
        }
        uint32_t end = i;
        double best = 0;
        while (end < ctx->result_count && same_config(&ctx->results[end], r)) {
            const struct bench_result *e = &ctx->results[end];
            if (has_numbers(e)) {
                double speed = e->higher_is_better ? e->median : 1.0 / e->median;
                best = speed > best ? speed : best;
            }
            end++;
        }
        fprintf(f, "<text x=\"8\" y=\"%d\">", y + bar_h - 2);
        svg_text(f, r->name);
        fprintf(f, " ");
        svg_text(f, r->params);
        fprintf(f, "</text>\n");
        for (; i < end; i++) {
            const struct bench_result *e = &ctx->results[i];
            double speed = has_numbers(e) ? (e->higher_is_better ? e->median : 1.0 / e->median) : 0;
            int w = best > 0 ? (int)(bar_max * speed / best + 0.5) : 0;
            fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"/>", label_w, y,
                    w > 1 ? w : 1, bar_h, backend_color(e->backend));
            fprintf(f, "<text x=\"%d\" y=\"%d\">", label_w + (w > 1 ? w : 1) + 4, y + bar_h - 2);
            if (has_numbers(e))
                fprintf(f, "%.4g %s", e->median, e->unit);
            else
                svg_text(f, e->verdict == BENCH_FAIL ? "FAIL (wrong result)" : e->note);
            fprintf(f, " [");
            svg_text(f, e->backend);
            fprintf(f, "]</text>\n");
            y += bar_h + 2;
        }
        y += 6;
    }
    fprintf(f, "</svg>\n");
    return fclose(f) == 0 ? 0 : -1;
}
