/* SPDX-License-Identifier: MIT */
/*
 * klog.h - classify kernel-log (dmesg) lines of NVIDIA's GPU drivers, desktop and Jetson
 * alike: Xids, MMU faults, a GPU that fell off the bus, channel errors, SKED/SM/PBDMA
 * exceptions are errors; missing nvmap tags are warnings; the drivers' routine lines are
 * harmless; other driver lines are notices. One classifier behind `nvhcq dmesg-check`,
 * `nvhcq selftest`, the GPU suites and the emulator's tests. Patterns: docs/hw/nvgpu.md §8.3
 * (Jetson) and the lines the open RM driver printed on our H200 (tests/data/klog/).
 * Layer: kmd (pure text processing in the drivers' vocabulary; reading the log is the tool's job).
 */
#ifndef KLOG_H
#define KLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Ordered: a level >= KLOG_WARNING is worth showing. */
enum klog_level {
    KLOG_UNRELATED, /* not a GPU-driver line (or before the --since point) */
    KLOG_NOTICE,    /* a driver line we do not know: reported, not an error ("INFO") */
    KLOG_HARMLESS,  /* a known routine line */
    KLOG_WARNING,   /* a known fixable complaint (nvmap allocation without a tag, ...) */
    KLOG_ERROR,     /* Xid, fault, exception, hang, lost GPU */
};

struct klog_hit {
    enum klog_level cls;
    const char *name; /* "XID", "MMU_FAULT", "SKED_EXCEPTION", ..., "INFO"; "" when unrelated */
    const char *what; /* one static line saying what it means ("" when unrelated) */
    int xid;          /* Xid number, -1 if the line has none */
    double ts_s;      /* kernel timestamp "[  33.65]" in seconds, -1 if none */
};

/* Short description of an Xid (13 -> "graphics engine exception"; from kmd/rm's table),
 * "unknown Xid" for others. */
const char *klog_xid_name(int xid);

/* Classify one line (len bytes, no newline needed); *hit may be NULL. */
enum klog_level klog_classify(const char *line, size_t len, struct klog_hit *hit);

#define KLOG_XID_MAX 256

struct klog_report {
    uint32_t lines;   /* non-empty lines in the text */
    uint32_t scanned; /* of them after the --since point */
    uint32_t errors, warnings, notices, harmless;
    uint32_t xid_count[KLOG_XID_MAX];
    bool since_found; /* the --since mark/timestamp was found (true without --since) */
    double last_ts_s; /* last timestamp seen, -1 if none (what `--mark` prints) */
};

/* Called for every driver line after the --since point (classified). */
typedef void (*klog_line_fn)(void *user, const char *line, size_t len, const struct klog_hit *hit);

/*
 * Scan a whole log. since: NULL (everything), "ts:<seconds>" (lines with a later timestamp)
 * or "mark:<text>" (lines after the last line containing <text>). A since point that is not
 * found scans everything and leaves since_found false.
 */
void klog_check(const char *text, size_t text_B, const char *since, struct klog_report *rep, klog_line_fn fn,
                void *user);

/* The selftest's summary: klog_check of a NUL-terminated text from the start; every line of
 * level >= KLOG_WARNING is appended to `report` (NUL-terminated, cut to report_B) as
 * "ERROR NAME: line\n" / "WARNING NAME: line\n". Returns the number of errors. */
uint32_t klog_scan(const char *text, struct klog_report *rep, char *report, size_t report_B);

#endif /* KLOG_H */
