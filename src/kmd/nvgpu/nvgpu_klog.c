/* SPDX-License-Identifier: MIT */
/*
 * nvgpu_klog.c - kernel-log line classifier for the Jetson GPU stack (docs/hw/nvgpu.md §8.3,
 * the project's dmesg_checker classes, plus the SM exception lines of the P0 crash that
 * §8.3 recommends treating as errors). Layer: kmd.
 */
#include "nvgpu_klog.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* Case-insensitive substring search. */
static const char *
nvgpu_klog_find(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] && tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
            i++;
        if (i == n)
            return hay;
    }
    return NULL;
}

/* `a` followed (later on the line) by `b`: the ".*" of the §8.3 regex ideas. */
static bool
nvgpu_klog_seq(const char *line, const char *a, const char *b)
{
    const char *p = nvgpu_klog_find(line, a);
    return p && (!b || nvgpu_klog_find(p + strlen(a), b));
}

static const struct {
    enum nvgpu_klog_level level;
    const char *name, *a, *b, *meaning;
} nvgpu_klog_rules[] = {
    /* harmless first: fires on every GR context init on ga10b (§8.3, §4.4) */
    {NVGPU_KLOG_HARMLESS, "RTV_CB", "tu104_gr_init_commit_rtv_cb", NULL, "RTV circular buffer not on ga10b; every GR context init"},
    {NVGPU_KLOG_ERROR, "SKED_EXCEPTION", "sked exception", NULL, "bad pushbuffer / QMD (missing windows, wrong qmd_version)"},
    {NVGPU_KLOG_ERROR, "CE_NOT_IDLE", "ce engine", "is not idle", "consequence of an earlier GPU error / reset"},
    {NVGPU_KLOG_ERROR, "GR_EXCEPTION", "set gr exception notifier", NULL, "accompanies GR errors"},
    {NVGPU_KLOG_ERROR, "MMU_FAULT", "mmu fault", NULL, "bad or unmapped GPU VA"},
    {NVGPU_KLOG_ERROR, "PBDMA_INTR", "fifo_pbdma", "intr", "pushbuffer DMA error"},
    {NVGPU_KLOG_ERROR, "CTXSW_TIMEOUT", "ctxsw_timeout", NULL, "context switch timeout: hang"},
    {NVGPU_KLOG_ERROR, "SM_MACHINE_CHECK", "sm machine check", NULL, "SM exception (the P0 window collision showed this)"},
    {NVGPU_KLOG_ERROR, "HWW_WARP_ESR", "hww_warp_esr", NULL, "warp error status (e.g. 0x10 MISALIGNED_ADDR)"},
    {NVGPU_KLOG_ERROR, "HWW_GLOBAL_ESR", "hww_global_esr", NULL, "SM global error status"},
    {NVGPU_KLOG_ERROR, "EMU_MODEL", "emu-nvgpu:", NULL, "the emulated driver caught a hardware rule being broken"},
    {NVGPU_KLOG_WARNING, "NVMAP_TAG", "tag not specified", NULL, "nvmap allocation without a tag (bits 31:16)"},
    {NVGPU_KLOG_WARNING, "NVMAP_TAG", "allocation tag", "warning", "nvmap allocation without a tag (bits 31:16)"},
    {NVGPU_KLOG_WARNING, "ERR_REPORT_UNSUPPORTED", "error reporting is not supported", NULL, "CIC info, harmless"},
};

struct nvgpu_klog_class
nvgpu_klog_classify(const char *line)
{
    struct nvgpu_klog_class c = {NVGPU_KLOG_IGNORED, "", ""};
    /* Only GPU lines count (§8.3: lines matching nvgpu|ga10b|nvmap). */
    if (!nvgpu_klog_find(line, "nvgpu") && !nvgpu_klog_find(line, "ga10b") && !nvgpu_klog_find(line, "nvmap"))
        return c;
    for (size_t i = 0; i < sizeof nvgpu_klog_rules / sizeof nvgpu_klog_rules[0]; i++) {
        if (nvgpu_klog_seq(line, nvgpu_klog_rules[i].a, nvgpu_klog_rules[i].b)) {
            c.level = nvgpu_klog_rules[i].level;
            c.name = nvgpu_klog_rules[i].name;
            c.meaning = nvgpu_klog_rules[i].meaning;
            return c;
        }
    }
    c.level = NVGPU_KLOG_INFO;
    c.name = "INFO";
    c.meaning = "GPU driver message";
    return c;
}

unsigned
nvgpu_klog_scan(const char *text, struct nvgpu_klog_counts *counts, char *report, size_t report_B)
{
    struct nvgpu_klog_counts n = {0};
    size_t used = 0;
    if (report && report_B)
        report[0] = 0;
    while (text && *text) {
        const char *eol = strchr(text, '\n');
        size_t len = eol ? (size_t)(eol - text) : strlen(text);
        char line[512];
        size_t cp = len < sizeof line - 1 ? len : sizeof line - 1;
        memcpy(line, text, cp);
        line[cp] = 0;
        struct nvgpu_klog_class c = nvgpu_klog_classify(line);
        switch (c.level) {
        case NVGPU_KLOG_ERROR: n.errors++; break;
        case NVGPU_KLOG_WARNING: n.warnings++; break;
        case NVGPU_KLOG_HARMLESS: n.harmless++; break;
        case NVGPU_KLOG_INFO: n.info++; break;
        case NVGPU_KLOG_IGNORED: break;
        }
        if (c.level >= NVGPU_KLOG_WARNING && report && used + 1 < report_B) {
            int w = snprintf(report + used, report_B - used, "%s %s: %s\n",
                             c.level == NVGPU_KLOG_ERROR ? "ERROR" : "WARNING", c.name, line);
            used = w > 0 && (size_t)w < report_B - used ? used + (size_t)w : report_B - 1;
        }
        text += len + (eol ? 1 : 0);
    }
    if (counts)
        *counts = n;
    return n.errors;
}
