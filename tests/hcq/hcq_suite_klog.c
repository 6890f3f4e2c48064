/* SPDX-License-Identifier: MIT */
/*
 * hcq_suite_klog.c - the HCQ suite's per-test kernel-log check (--klog; make test-gpu
 * uses it): before each test the suite notes the last kernel-log timestamp, after it
 * classifies the NVIDIA lines logged since (src/kmd/klog.c: Xid, MMU fault, fallen
 * off the bus, channel errors) and fails that test by name when there is an error line.
 * The log is read with `dmesg` (as `nvhcq dmesg-check` does; HCQ_KLOG_CMD replaces the
 * command, which is how the check itself was tested); where it cannot be read the check
 * says so once and stays off.
 */
#include "hcq_suite.h"
#include "klog.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double klog_since_s = -1;
static bool klog_off;

/* The whole kernel log (malloc'd, NUL-terminated) or NULL. */
static char *
klog_read(size_t *len_out)
{
    /* HCQ_KLOG_CMD replaces `dmesg` (to test the check itself with a scripted log) */
    const char *cmd = getenv("HCQ_KLOG_CMD") ? getenv("HCQ_KLOG_CMD") : "dmesg 2>/dev/null";
    FILE *p = popen(cmd, "r");
    if (!p)
        return NULL;
    size_t cap = 1 << 20, len = 0;
    char *buf = malloc(cap);
    while (buf) {
        if (len + 4096 + 1 > cap) {
            char *n = realloc(buf, cap * 2);
            if (!n) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = n;
            cap *= 2;
        }
        size_t got = fread(buf + len, 1, 4096, p);
        if (got == 0)
            break;
        len += got;
    }
    int rc = pclose(p);
    if (!buf || rc != 0 || len == 0) {
        free(buf);
        return NULL;
    }
    buf[len] = 0;
    *len_out = len;
    return buf;
}

static void
klog_before(struct th *t, const char *name)
{
    (void)t;
    (void)name;
    if (klog_off)
        return;
    size_t len = 0;
    char *text = klog_read(&len);
    if (!text) {
        klog_off = true;
        printf("    (--klog: the kernel log cannot be read here; per-test check off)\n");
        return;
    }
    struct klog_report rep;
    klog_check(text, len, NULL, &rep, NULL, NULL);
    klog_since_s = rep.last_ts_s;
    free(text);
}

struct klog_lines {
    char text[640];
    size_t len;
};

static void
klog_line(void *user, const char *line, size_t len, const struct klog_hit *hit)
{
    struct klog_lines *l = user;
    if (hit->cls != KLOG_ERROR || l->len + 8 >= sizeof l->text)
        return;
    int n = snprintf(l->text + l->len, sizeof l->text - l->len, "      %.*s\n", (int)(len > 160 ? 160 : len),
                     line);
    if (n > 0)
        l->len += (size_t)n < sizeof l->text - l->len ? (size_t)n : sizeof l->text - l->len - 1;
}

static void
klog_after(struct th *t, const char *name)
{
    if (klog_off || klog_since_s < 0)
        return;
    size_t len = 0;
    char *text = klog_read(&len);
    if (!text)
        return;
    char since[48];
    snprintf(since, sizeof since, "ts:%.6f", klog_since_s);
    struct klog_report rep;
    struct klog_lines lines = {.len = 0};
    klog_check(text, len, since, &rep, klog_line, &lines);
    free(text);
    if (rep.errors) {
        th_fail(t, __FILE__, __LINE__, "kernel log: %u NVIDIA error line(s) during %s:\n%s", rep.errors, name,
                lines.text);
    }
}

void
suite_klog_enable(void)
{
    th_before_each = klog_before;
    th_after_each = klog_after;
}
