/* SPDX-License-Identifier: MIT */
/*
 * rm_dmesg.c - classifier for NVIDIA driver lines in the kernel log (see rm_dmesg.h).
 * Layer: kmd (pure text processing). The error patterns are what the open driver
 * prints on a fault (an example from our H200 run, tests/hw/logs/h200_run1_dmesg.txt:
 * "NVRM: Xid (PCI:0000:00:06): 31, pid=452, name=rm_bringup, channel 0x0000000a, ...
 * MMU Fault: ENGINE GR0_PBDMA0 HUBCLIENT_ESC faulted @ 0x70_00000000 ..."); the harmless
 * list holds the routine lines of driver load and GPU bring-up seen on the same machine.
 * Jetson's nvgpu/nvmap lines follow docs/hw/nvgpu.md §8.3 (its checker's table, plus the
 * `sm machine check` / `hww_warp_esr` lines it recommends treating as errors).
 */
#include "rm_dmesg.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* Case-insensitive search of needle in line[0..len). */
static const char *
rm_memstr_ci(const char *line, size_t len, const char *needle)
{
    size_t n = strlen(needle);
    if (n == 0 || n > len)
        return NULL;
    for (size_t i = 0; i + n <= len; i++) {
        size_t j = 0;
        while (j < n && tolower((unsigned char)line[i + j]) == tolower((unsigned char)needle[j]))
            j++;
        if (j == n)
            return line + i;
    }
    return NULL;
}

static bool
rm_has(const char *line, size_t len, const char *needle)
{
    return rm_memstr_ci(line, len, needle) != NULL;
}

/* "[   33.653154] ..." -> 33.653154, -1 without a timestamp. */
static double
rm_dmesg_ts(const char *line, size_t len)
{
    size_t i = 0;
    if (len == 0 || line[0] != '[')
        return -1;
    for (i = 1; i < len && line[i] == ' '; i++)
        ;
    double v = 0, scale = 0;
    bool digits = false;
    for (; i < len && line[i] != ']'; i++) {
        char c = line[i];
        if (c >= '0' && c <= '9') {
            digits = true;
            if (scale == 0) {
                v = v * 10 + (c - '0');
            } else {
                v += (c - '0') * scale;
                scale /= 10;
            }
        } else if (c == '.' && scale == 0) {
            scale = 0.1;
        } else {
            return -1;
        }
    }
    return (i < len && digits) ? v : -1;
}

/* Xid number in "...Xid (PCI:0000:00:06): 31, ..." or "...Xid: 31...", -1 if none. */
static int
rm_dmesg_xid(const char *line, size_t len)
{
    const char *x = rm_memstr_ci(line, len, "Xid");
    if (!x)
        return -1;
    const char *end = line + len, *p = x + 3;
    if (p < end && *p == ' ' && p + 1 < end && p[1] == '(') {
        while (p < end && *p != ')')
            p++;
        p++;
    }
    if (p < end && *p == ':')
        p++;
    while (p < end && *p == ' ')
        p++;
    if (p >= end || !isdigit((unsigned char)*p))
        return -1;
    int v = 0;
    while (p < end && isdigit((unsigned char)*p) && v < 100000)
        v = v * 10 + (*p++ - '0');
    return v;
}

static const char *const rm_dmesg_harmless[] = {
    "loading out-of-tree module taints kernel",
    "module verification failed",
    "Persistence mode is deprecated",
    "loading NVIDIA UNIX",
    "Nvlink Core is being initialized",
    "FBHUB Interrupt detected",
    "GPU Board Serial Number",
    "NVRM: GPU at PCI:",
    "Loaded the UVM driver",
    "nvidia-modeset: Loading",
    "[nvidia-drm]",
    "nvidia_uvm: module uses symbols",
    "enabling device",
    "vgaarb:",
    "tu104_gr_init_commit_rtv_cb",          /* nvgpu.md §8.3: fires on every GR context init */
    "Error reporting is not supported",     /* nvgpu.md §8.3: CIC info */
};

/* Errors: (all substrings must match, case-insensitive) -> description. */
static const struct {
    const char *a, *b;
    const char *what;
} rm_dmesg_errors[] = {
    { "fallen off the bus", NULL, "GPU has fallen off the bus" },
    { "MMU Fault", NULL, "MMU fault" },
    { "GPU is lost", NULL, "GPU lost" },
    { "RmInitAdapter failed", NULL, "GPU initialisation failed" },
    { "RPC", "timeout", "GSP RPC timeout" },
    { "channel", "error", "channel error" },
    { "channel", "exception", "channel exception" },
    { "robust channel", NULL, "robust-channel (RC) recovery" },
    { "uncorrectable", NULL, "uncorrectable (ECC) error" },
    { "uvm", "fatal", "UVM fatal error" },
    { "sked exception", NULL, "SKED exception (bad pushbuffer or QMD)" }, /* nvgpu.md §8.3 */
    { "is not idle", "CE", "copy engine not idle (after an earlier error)" },
    { "gr exception", NULL, "graphics engine exception" },
    { "fifo_pbdma", "intr", "PBDMA interrupt (pushbuffer error)" },
    { "ctxsw_timeout", NULL, "context switch timeout (hang)" },
    { "sm machine check", NULL, "SM machine check" },
    { "hww_warp_esr", NULL, "SM warp error" },
    { "general protection fault", NULL, "kernel fault in the driver" },
    { "BUG:", NULL, "kernel BUG in the driver" },
};

enum rm_dmesg_class
rm_dmesg_classify(const char *line, size_t len, struct rm_dmesg_hit *hit)
{
    struct rm_dmesg_hit h = { RM_DMESG_UNRELATED, -1, rm_dmesg_ts(line, len), NULL };
    bool nv = rm_has(line, len, "NVRM") || rm_has(line, len, "nvidia") || rm_has(line, len, "nvlink") ||
              rm_has(line, len, "nvidia-uvm") || rm_has(line, len, "uvm:") || rm_has(line, len, "nvgpu") ||
              rm_has(line, len, "ga10b") || rm_has(line, len, "nvmap");
    if (nv) {
        h.xid = rm_dmesg_xid(line, len);
        if (h.xid >= 0) {
            h.cls = RM_DMESG_ERROR;
            h.what = "Xid";
        }
        for (size_t i = 0; h.cls == RM_DMESG_UNRELATED && i < sizeof rm_dmesg_errors / sizeof rm_dmesg_errors[0];
             i++) {
            if (rm_has(line, len, rm_dmesg_errors[i].a) &&
                (!rm_dmesg_errors[i].b || rm_has(line, len, rm_dmesg_errors[i].b))) {
                h.cls = RM_DMESG_ERROR;
                h.what = rm_dmesg_errors[i].what;
            }
        }
        for (size_t i = 0; h.cls == RM_DMESG_UNRELATED && i < sizeof rm_dmesg_harmless / sizeof rm_dmesg_harmless[0];
             i++) {
            if (rm_has(line, len, rm_dmesg_harmless[i])) {
                h.cls = RM_DMESG_HARMLESS;
                h.what = "routine";
            }
        }
        if (h.cls == RM_DMESG_UNRELATED) {
            h.cls = RM_DMESG_NOTICE;
            h.what = "unrecognised NVIDIA line";
        }
    } else if (rm_has(line, len, "fallen off the bus")) {
        /* printed by the PCI layer too, without a driver prefix */
        h.cls = RM_DMESG_ERROR;
        h.what = "GPU has fallen off the bus";
    }
    if (hit)
        *hit = h;
    return h.cls;
}

/* Offset of the first line to scan for `since` (0 when absent or not found). */
static size_t
rm_dmesg_since(const char *text, size_t text_B, const char *since, bool *found)
{
    *found = since == NULL;
    if (!since)
        return 0;
    bool is_ts = strncmp(since, "ts:", 3) == 0, is_mark = strncmp(since, "mark:", 5) == 0;
    double ts = is_ts ? strtod(since + 3, NULL) : 0;
    const char *mark = is_mark ? since + 5 : NULL;
    size_t start = 0, off = 0;
    while (off < text_B) {
        const char *nl = memchr(text + off, '\n', text_B - off);
        size_t len = nl ? (size_t)(nl - (text + off)) : text_B - off;
        size_t next = off + len + (nl ? 1 : 0);
        if (is_mark && *mark && rm_memstr_ci(text + off, len, mark)) {
            start = next; /* the last mark wins */
            *found = true;
        } else if (is_ts) {
            double t = rm_dmesg_ts(text + off, len);
            if (t >= 0 && t <= ts) {
                start = next;
                *found = true;
            }
        }
        off = next;
    }
    return start;
}

void
rm_dmesg_check(const char *text, size_t text_B, const char *since, struct rm_dmesg_report *rep, rm_dmesg_line_fn fn,
               void *user)
{
    memset(rep, 0, sizeof *rep);
    rep->last_ts_s = -1;
    size_t start = rm_dmesg_since(text, text_B, since, &rep->since_found);
    if (!rep->since_found)
        start = 0;
    size_t off = 0;
    while (off < text_B) {
        const char *line = text + off;
        const char *nl = memchr(line, '\n', text_B - off);
        size_t len = nl ? (size_t)(nl - line) : text_B - off;
        off += len + (nl ? 1 : 0);
        if (len == 0)
            continue;
        rep->lines++;
        struct rm_dmesg_hit hit;
        enum rm_dmesg_class cls = rm_dmesg_classify(line, len, &hit);
        if (hit.ts_s >= 0)
            rep->last_ts_s = hit.ts_s;
        if ((size_t)(line - text) < start)
            continue;
        rep->scanned++;
        if (cls == RM_DMESG_UNRELATED)
            continue;
        if (cls == RM_DMESG_ERROR)
            rep->errors++;
        else if (cls == RM_DMESG_NOTICE)
            rep->notices++;
        else
            rep->harmless++;
        if (hit.xid >= 0 && hit.xid < RM_DMESG_XID_MAX)
            rep->xid_count[hit.xid]++;
        if (fn)
            fn(user, line, len, &hit);
    }
}
