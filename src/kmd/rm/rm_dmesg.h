/* SPDX-License-Identifier: MIT */
/*
 * rm_dmesg.h - classify kernel log (dmesg) lines of the NVIDIA driver: Xids, MMU faults,
 * a GPU that fell off the bus and channel errors are errors; the driver's routine
 * start-up lines are harmless. Used by `nvhcq dmesg-check`, the GPU test suites and
 * after hardware runs. Layer: kmd (pure text processing, no syscalls).
 */
#ifndef RM_DMESG_H
#define RM_DMESG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum rm_dmesg_class {
    RM_DMESG_UNRELATED, /* not an NVIDIA driver line (or before the --since point) */
    RM_DMESG_HARMLESS,  /* a known routine NVIDIA line */
    RM_DMESG_NOTICE,    /* an NVIDIA line we do not know: reported, not an error */
    RM_DMESG_ERROR,     /* Xid, MMU fault, fallen off the bus, channel/RC error, GSP failure */
};

struct rm_dmesg_hit {
    enum rm_dmesg_class cls;
    int xid;            /* Xid number, -1 if the line has none */
    double ts_s;        /* kernel timestamp "[  33.65]" in seconds, -1 if none */
    const char *what;   /* short static description of the match ("Xid", "MMU fault", ...) */
};

/* Classify one line (len bytes, no newline needed). */
enum rm_dmesg_class rm_dmesg_classify(const char *line, size_t len, struct rm_dmesg_hit *hit);

#define RM_DMESG_XID_MAX 256

struct rm_dmesg_report {
    uint32_t lines;          /* lines in the text */
    uint32_t scanned;        /* lines after the --since point */
    uint32_t errors, notices, harmless;
    uint32_t xid_count[RM_DMESG_XID_MAX];
    bool since_found;        /* the --since mark/timestamp was found (true without --since) */
    double last_ts_s;        /* last timestamp seen, -1 if none (what `--mark` prints) */
};

/* Called for every NVIDIA line after the --since point (classified). */
typedef void (*rm_dmesg_line_fn)(void *user, const char *line, size_t len, const struct rm_dmesg_hit *hit);

/*
 * Scan a whole log. since: NULL (everything), "ts:<seconds>" (lines with a later
 * timestamp) or "mark:<text>" (lines after the last line containing <text>). A since
 * point that is not found scans everything and leaves since_found false.
 */
void rm_dmesg_check(const char *text, size_t text_B, const char *since, struct rm_dmesg_report *rep,
                    rm_dmesg_line_fn fn, void *user);

#endif /* RM_DMESG_H */
