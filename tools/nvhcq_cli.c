/* SPDX-License-Identifier: MIT */
/*
 * nvhcq_cli.c - the argument parser shared by every nvhcq subcommand (nvhcq_cli.h says how
 * a subcommand describes its options) and the helpers they share. Layer: tools.
 */
#include "nvhcq_cli.h"

#include "hcq.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define CLI_MAX_OPTS 64

static int
opt_count(const struct cli_opt *o)
{
    int n = 0;
    while (o && (o[n].name || o[n].alias))
        n++;
    return n;
}

/* The value in the destination as help shows it ("" when there is nothing to show). */
static void
format_value(const struct cli_opt *o, char *out, size_t out_B)
{
    out[0] = 0;
    switch (o->type) {
    case CLI_T_FLAG:
        break;
    case CLI_T_STR:
    case CLI_T_CHOICE:
        if (*(const char **)o->dst)
            snprintf(out, out_B, "%s", *(const char **)o->dst);
        break;
    case CLI_T_INT:
        snprintf(out, out_B, "%d", *(int *)o->dst);
        break;
    case CLI_T_U32:
        snprintf(out, out_B, "%u", *(uint32_t *)o->dst);
        break;
    case CLI_T_U64:
        snprintf(out, out_B, "%llu", (unsigned long long)*(uint64_t *)o->dst);
        break;
    case CLI_T_F32:
        snprintf(out, out_B, "%g", (double)*(float *)o->dst);
        break;
    case CLI_T_F64:
        snprintf(out, out_B, "%g", *(double *)o->dst);
        break;
    }
}

/* A range bound as a person writes it: 1000000, not 1e+06. */
static const char *
fmt_num(double x, char *buf, size_t buf_B)
{
    if (x >= 1.8e19)
        snprintf(buf, buf_B, "2^64-1");
    else if (x == floor(x) && fabs(x) < 1e15)
        snprintf(buf, buf_B, "%.0f", x);
    else
        snprintf(buf, buf_B, "%g", x);
    return buf;
}

static bool
is_number_type(enum cli_type t)
{
    return t >= CLI_T_INT;
}

static void
print_help(const struct cli_cmd *c, char defaults[][48])
{
    printf("usage: nvhcq %s%s%s\n", c->name, c->synopsis && !*c->synopsis ? "" : " ",
           c->synopsis ? c->synopsis : "[options]");
    if (c->about)
        printf("\n%s\n", c->about);
    printf("\noptions:\n");
    int n = opt_count(c->opts);
    for (int i = 0; i <= n; i++) {
        static const struct cli_opt help = {"-h", "--help", CLI_T_FLAG, NULL,
                                            NULL, 0,        0,          "print this help and exit"};
        const struct cli_opt *o = i < n ? &c->opts[i] : &help;
        char head[160];
        int w =
            snprintf(head, sizeof head, "%s%s%s%s%s", o->name ? o->name : "", o->name && o->alias ? ", " : "",
                     o->alias ? o->alias : "", o->arg ? " " : "", o->arg ? o->arg : "");
        printf("  %-26s", head);
        if (w > 26)
            printf("\n  %-26s", "");
        printf(" %s", o->help ? o->help : "");
        if (i < n && is_number_type(o->type)) {
            char lo[32], hi[32];
            printf(" (%s..%s)", fmt_num(o->min, lo, sizeof lo), fmt_num(o->max, hi, sizeof hi));
        }
        if (i < n && defaults[i][0] && !(o->help && strstr(o->help, "[default")))
            printf(" [default: %s]", defaults[i]);
        printf("\n");
    }
    if (c->epilog)
        printf("\n%s\n", c->epilog);
}

int
cli_usage_error(const struct cli_cmd *c, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "nvhcq %s: ", c->name);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n(nvhcq %s --help lists the options)\n", c->name);
    return 2;
}

int
cli_fail(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "nvhcq %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    return 1;
}

int
cli_fail_file(const char *cmd, const char *what, const char *path)
{
    const char *e = hcq_last_error();
    if (strstr(e, path))
        return cli_fail(cmd, "%s: %s", what, e);
    return cli_fail(cmd, "%s %s: %s", what, path, e);
}

/* Base 10, or 16 after "0x": "010" is ten, as a user reading it expects. */
static int
num_base(const char *v)
{
    const char *p = v + (*v == '-' || *v == '+');
    return p[0] == '0' && (p[1] == 'x' || p[1] == 'X') ? 16 : 10;
}

/* Parse `v` for option `o` into its destination; 0, or 2 after printing why. */
static int
range_error(const struct cli_cmd *c, const struct cli_opt *o, const char *flag, const char *v)
{
    char lo[32], hi[32];
    return cli_usage_error(c, "%s %s: out of range (%s..%s)", flag, v, fmt_num(o->min, lo, sizeof lo),
                           fmt_num(o->max, hi, sizeof hi));
}

static int
set_value(const struct cli_cmd *c, const struct cli_opt *o, const char *flag, const char *v)
{
    char *end = NULL;
    errno = 0;
    switch (o->type) {
    case CLI_T_FLAG:
        return 0;
    case CLI_T_STR:
        *(const char **)o->dst = v;
        return 0;
    case CLI_T_CHOICE: {
        size_t len = strlen(v);
        for (const char *p = o->arg; p && *p;) {
            size_t n = strcspn(p, "|");
            if (n == len && !strncmp(p, v, n)) {
                *(const char **)o->dst = v;
                return 0;
            }
            p += n + (p[n] == '|');
        }
        return cli_usage_error(c, "%s '%s': expected one of %s", flag, v, o->arg);
    }
    case CLI_T_INT:
    case CLI_T_U32: {
        long long x = strtoll(v, &end, num_base(v));
        if (!*v || *end || errno)
            return cli_usage_error(c, "%s '%s': not an integer", flag, v);
        if ((double)x < o->min || (double)x > o->max)
            return range_error(c, o, flag, v);
        if (o->type == CLI_T_INT)
            *(int *)o->dst = (int)x;
        else
            *(uint32_t *)o->dst = (uint32_t)x;
        return 0;
    }
    case CLI_T_U64: {
        const char *p = v;
        while (*p == ' ')
            p++;
        unsigned long long x = strtoull(v, &end, num_base(v));
        if (!*v || *end || errno || *p == '-')
            return cli_usage_error(c, "%s '%s': not a non-negative integer", flag, v);
        if ((double)x < o->min || (o->max < 1.8e19 && (double)x > o->max))
            return range_error(c, o, flag, v);
        *(uint64_t *)o->dst = x;
        return 0;
    }
    case CLI_T_F32:
    case CLI_T_F64: {
        double x = strtod(v, &end);
        if (!*v || *end || !isfinite(x))
            return cli_usage_error(c, "%s '%s': not a number", flag, v);
        if (x < o->min || x > o->max)
            return range_error(c, o, flag, v);
        if (o->type == CLI_T_F32)
            *(float *)o->dst = (float)x;
        else
            *(double *)o->dst = x;
        return 0;
    }
    }
    return 0;
}

int
cli_parse(const struct cli_cmd *c, int argc, char **argv)
{
    int n = opt_count(c->opts);
    static char defaults[CLI_MAX_OPTS][48];
    if (n > CLI_MAX_OPTS)
        return cli_fail(c->name, "internal: more than %d options", CLI_MAX_OPTS), 2;
    for (int i = 0; i < n; i++) /* before parsing: help shows defaults, not this run's values */
        format_value(&c->opts[i], defaults[i], sizeof defaults[i]);
    bool only_positional = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (only_positional || a[0] != '-' || !a[1]) { /* "-" alone is a value (stdin) */
            if (!c->positional)
                return cli_usage_error(c, "unexpected argument '%s'", a);
            int rc = c->positional(a, c->user);
            if (rc)
                return rc;
            continue;
        }
        if (!strcmp(a, "--")) {
            only_positional = true;
            continue;
        }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            print_help(c, defaults);
            return 0;
        }
        /* --name=value is accepted for long options */
        const char *eq = a[1] == '-' ? strchr(a, '=') : NULL;
        size_t len = eq ? (size_t)(eq - a) : strlen(a);
        const struct cli_opt *o = NULL;
        for (int k = 0; k < n && !o; k++) {
            const struct cli_opt *q = &c->opts[k];
            if ((q->name && strlen(q->name) == len && !strncmp(q->name, a, len)) ||
                (q->alias && strlen(q->alias) == len && !strncmp(q->alias, a, len)))
                o = q;
        }
        if (!o)
            return cli_usage_error(c, "unknown option '%.*s'", (int)len, a);
        char flag[64];
        snprintf(flag, sizeof flag, "%.*s", (int)len, a);
        if (o->type == CLI_T_FLAG) {
            if (eq)
                return cli_usage_error(c, "%s takes no value", flag);
            *(bool *)o->dst = true;
            continue;
        }
        const char *v = eq ? eq + 1 : i + 1 < argc ? argv[++i] : NULL;
        if (!v)
            return cli_usage_error(c, "%s needs a value (%s)", flag, o->arg ? o->arg : "VALUE");
        int rc = set_value(c, o, flag, v);
        if (rc)
            return rc;
    }
    return CLI_CONTINUE;
}

void
cli_commit(char *out, size_t out_B)
{
    const char *env = getenv("NVHCQ_COMMIT"); /* a copy without .git (the GPU machine) */
    if (env && *env) {
        snprintf(out, out_B, "%.40s", env);
        return;
    }
#ifdef NVHCQ_COMMIT
    snprintf(out, out_B, "%s", NVHCQ_COMMIT);
    return;
#endif
    snprintf(out, out_B, "unknown");
    FILE *p = popen("git rev-parse --short=10 HEAD 2>/dev/null", "r");
    if (!p)
        return;
    char line[48];
    if (fgets(line, sizeof line, p)) {
        line[strcspn(line, "\r\n")] = 0;
        if (line[0])
            snprintf(out, out_B, "%.40s", line);
    }
    pclose(p);
}

char *
cli_read_text(const char *cmd, const char *path, size_t *len_out)
{
    struct stat sb;
    bool is_stdin = !strcmp(path, "-");
    if (!is_stdin && stat(path, &sb)) {
        cli_fail(cmd, "%s: %s", path, strerror(errno));
        return NULL;
    }
    if (!is_stdin && S_ISDIR(sb.st_mode)) {
        cli_fail(cmd, "%s: is a directory", path);
        return NULL;
    }
    FILE *f = is_stdin ? stdin : fopen(path, "rb");
    if (!f) {
        cli_fail(cmd, "%s: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    for (size_t got; buf; n += got) {
        if (n + 1 >= cap) {
            char *nb = cap < ((size_t)1 << 30) ? realloc(buf, cap * 2) : NULL;
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        got = fread(buf + n, 1, cap - n - 1, f);
        if (!got)
            break;
    }
    bool err = ferror(f);
    if (!is_stdin)
        fclose(f);
    if (!buf || err) {
        cli_fail(cmd, "%s: %s", path, buf ? "read error" : "too large or out of memory");
        free(buf);
        return NULL;
    }
    buf[n] = 0;
    if (len_out)
        *len_out = n;
    return buf;
}

void
cli_json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}
