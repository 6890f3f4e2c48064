/* SPDX-License-Identifier: MIT */
/*
 * nvhcq_dmesg.c - `nvhcq dmesg-check`: read the kernel log (or a saved one) and report the
 * NVIDIA driver's errors (Xids, MMU faults, a GPU that fell off the bus, channel errors),
 * ignoring its routine lines. Exit status 0 = clean, 1 = errors, 2 = log unreadable.
 * The classifier is src/kmd/klog.c (shared with `nvhcq selftest`); this file only does I/O
 * and printing.
 *
 *   nvhcq dmesg-check                   scan the whole `dmesg` output
 *   nvhcq dmesg-check --mark            print a token for --since (writes a marker line to
 *                                       /dev/kmsg when allowed, else the last timestamp)
 *   nvhcq dmesg-check --since TOKEN     only lines after the token ("mark:TEXT" / "ts:SECONDS")
 *   nvhcq dmesg-check --file F          scan a saved log (F = - for stdin)
 *   nvhcq dmesg-check --quiet           summary only
 */
#include "klog.h"
#include "nvhcq_cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int nvhcq_cmd_dmesg_check(int argc, char **argv);

struct dm_buf {
    char *p;
    size_t n, cap;
};

static int
dm_read_stream(FILE *f, struct dm_buf *b)
{
    char chunk[65536];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (b->n + got + 1 > b->cap) {
            size_t cap = b->cap ? b->cap * 2 : 1 << 20;
            while (cap < b->n + got + 1)
                cap *= 2;
            char *np = realloc(b->p, cap);
            if (!np)
                return -1;
            b->p = np;
            b->cap = cap;
        }
        memcpy(b->p + b->n, chunk, got);
        b->n += got;
    }
    return ferror(f) ? -1 : 0;
}

/* The log from `dmesg` (file == NULL), a file, or stdin ("-"). */
static int
dm_read_log(const char *file, struct dm_buf *b)
{
    if (file) {
        FILE *f = strcmp(file, "-") == 0 ? stdin : fopen(file, "r");
        if (!f) {
            fprintf(stderr, "nvhcq dmesg-check: %s: %s\n", file, strerror(errno));
            return -1;
        }
        int rc = dm_read_stream(f, b);
        if (f != stdin)
            fclose(f);
        return rc;
    }
    FILE *p = popen("dmesg 2>/dev/null", "r");
    if (!p) {
        fprintf(stderr, "dmesg-check: cannot run dmesg\n");
        return -1;
    }
    int rc = dm_read_stream(p, b);
    int st = pclose(p);
    if (rc == 0 && b->n == 0) {
        fprintf(stderr,
                "dmesg-check: dmesg printed nothing (exit status %d; no permission to read the "
                "kernel log? try sudo, or --file)\n",
                st);
        return -1;
    }
    return rc;
}

/* --mark: a marker line in the kernel log when /dev/kmsg is writable, else a timestamp. */
static int
dm_mark(void)
{
    char text[64];
    snprintf(text, sizeof text, "nvhcq-mark-%ld-%ld", (long)getpid(), (long)time(NULL));
    int fd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC);
    if (fd >= 0) {
        char line[96];
        int n = snprintf(line, sizeof line, "%s\n", text);
        ssize_t w = write(fd, line, (size_t)n);
        close(fd);
        if (w == n) {
            printf("mark:%s\n", text);
            return 0;
        }
    }
    struct dm_buf b = {0};
    struct klog_report rep;
    if (dm_read_log(NULL, &b) != 0) {
        free(b.p);
        return 2;
    }
    klog_check(b.p, b.n, NULL, &rep, NULL, NULL);
    free(b.p);
    printf("ts:%.6f\n", rep.last_ts_s < 0 ? 0.0 : rep.last_ts_s);
    return 0;
}

struct dm_print {
    bool quiet;
};

static void
dm_print_line(void *user, const char *line, size_t len, const struct klog_hit *hit)
{
    const struct dm_print *p = user;
    if (p->quiet || hit->cls == KLOG_HARMLESS)
        return;
    if (hit->xid >= 0)
        printf("ERROR  [Xid %d: %s] %.*s\n", hit->xid, klog_xid_name(hit->xid), (int)len, line);
    else
        printf("%-6s [%s] %.*s\n",
               hit->cls == KLOG_ERROR     ? "ERROR"
               : hit->cls == KLOG_WARNING ? "WARN"
                                          : "NOTE",
               hit->what, (int)len, line);
}

/* `dmesg-check` may be handed the whole command line (argv[1] == "dmesg-check"): skip it */
static int
dm_positional(const char *arg, void *user)
{
    (void)user;
    if (!strcmp(arg, "dmesg-check"))
        return 0;
    fprintf(stderr,
            "nvhcq dmesg-check: unexpected argument '%s'\n(nvhcq dmesg-check --help lists the options)\n",
            arg);
    return 2;
}

int
nvhcq_cmd_dmesg_check(int argc, char **argv)
{
    const char *file = NULL, *since = NULL;
    bool mark = false;
    struct dm_print pr = {false};
    const struct cli_opt opts[] = {
        CLI_STR(NULL, "--file", &file, "F", "read the log from F (- : stdin) [default: the kernel log]"),
        CLI_STR(NULL, "--since", &since, "mark:TEXT|ts:SECONDS", "scan only after this mark or timestamp"),
        CLI_FLAG(NULL, "--mark", &mark, "write a mark into the kernel log and print it (for --since)"),
        CLI_FLAG(NULL, "--quiet", &pr.quiet, "print only the summary line"),
        CLI_END,
    };
    const struct cli_cmd cmd = {
        "dmesg-check",
        "[--file F|-] [--since mark:TEXT|ts:SECONDS] [--mark] [--quiet]",
        "Classifies kernel log lines of the GPU drivers (NVRM Xid, MMU faults, nvgpu errors).\n"
        "Exit status 1 when an error line is found, 2 when the log cannot be read.",
        opts,
        dm_positional,
        NULL,
        NULL,
    };
    int rc = cli_parse(&cmd, argc, argv);
    if (rc != CLI_CONTINUE)
        return rc;
    if (mark)
        return dm_mark();
    if (since && strncmp(since, "ts:", 3) != 0 && strncmp(since, "mark:", 5) != 0) {
        fprintf(stderr, "dmesg-check: --since %s: expected mark:TEXT or ts:SECONDS\n", since);
        return 2;
    }
    struct dm_buf b = {0};
    if (dm_read_log(file, &b) != 0) {
        free(b.p);
        return 2;
    }
    struct klog_report rep;
    klog_check(b.p, b.n, since, &rep, dm_print_line, &pr);
    free(b.p);
    if (since && !rep.since_found)
        printf("dmesg-check: warning: %s not found in the log (rotated?); scanned all of it\n", since);
    printf("dmesg-check: %u lines, %u scanned: %u error(s), %u warning(s), %u unrecognised NVIDIA line(s), "
           "%u routine",
           rep.lines, rep.scanned, rep.errors, rep.warnings, rep.notices, rep.harmless);
    for (int x = 0; x < KLOG_XID_MAX; x++)
        if (rep.xid_count[x])
            printf("; Xid %d x%u", x, rep.xid_count[x]);
    printf("\n");
    return rep.errors ? 1 : 0;
}
