/* SPDX-License-Identifier: MIT */
/*
 * nvgpu_klog.h - classify kernel log (dmesg) lines of the Jetson GPU stack: nvgpu errors
 * (SKED exceptions, MMU faults, PBDMA interrupts, ...), warnings and known-harmless lines,
 * from docs/hw/nvgpu.md §8.3. Pure string matching; used by `nvhcq selftest` and tests.
 * Layer: kmd (it speaks the driver's vocabulary; reading the log is the tool's job).
 */
#ifndef NVGPU_KLOG_H
#define NVGPU_KLOG_H

#include <stddef.h>

enum nvgpu_klog_level {
    NVGPU_KLOG_IGNORED,  /* not a GPU line (no nvgpu / ga10b / nvmap in it) */
    NVGPU_KLOG_INFO,     /* any other GPU line: context */
    NVGPU_KLOG_HARMLESS, /* known and harmless on ga10b */
    NVGPU_KLOG_WARNING,
    NVGPU_KLOG_ERROR,
};

struct nvgpu_klog_class {
    enum nvgpu_klog_level level;
    const char *name;    /* "SKED_EXCEPTION", "MMU_FAULT", ... ("" when IGNORED) */
    const char *meaning; /* one line for the report */
};

/* Classify one log line (without its trailing newline). */
struct nvgpu_klog_class nvgpu_klog_classify(const char *line);

/* Counts over a buffer of lines; lines of level >= WARNING are appended to `report`
 * (NUL-terminated, truncated to report_B) as "LEVEL NAME: line\n". Returns the errors. */
struct nvgpu_klog_counts {
    unsigned errors, warnings, harmless, info;
};
unsigned nvgpu_klog_scan(const char *text, struct nvgpu_klog_counts *counts, char *report, size_t report_B);

#endif /* NVGPU_KLOG_H */
