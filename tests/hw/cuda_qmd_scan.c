/* SPDX-License-Identifier: MIT */
/*
 * cuda_qmd_scan.c - what the CUDA driver writes in its QMDs (Hopper, QMD V04_00), read from
 * this process's own memory after it launched a known sequence through the cuda backend.
 *
 * Why: the rm backend's programmatic dependent launches (pb_build.c pb_pdl_link) gave wrong
 * tokens on H100 until the producer grid got a completion membar (docs/status.md known
 * issues); the CUDA driver's choice of CWD_MEMBAR_TYPE, CWD_MEMBAR_TASK_CHASING_ENABLE,
 * SYNC_DOMAIN_ID and latch ids for the same launches is the reference, and no document here
 * states it. The driver builds each QMD in memory the CPU can read (a staging copy, inline
 * data in its pushbuffer, or the QMD itself), so the launches are given grid widths no other
 * data has (4931, 4933, 4937, 4939) and a block of 96 threads, and every readable mapping is
 * searched for a V04_00 QMD with those fields (GRID_WIDTH dword 32, CTA_THREAD_DIMENSION0 in
 * dword 36, major version 4 in dword 18: gpu_qmd.h).
 *
 * Launches on one stream, in order: A (flags 0), B (HCQ_LAUNCH_DEP_WAIT), C (DEP_WAIT), D
 * (flags 0): A->B and B->C are programmatic pairs, C->D a plain one. The memory is searched
 * after each launch (the driver reuses its staging copy). Then (session 22) a graph of two plain
 * launches, E and F (grid widths 4943, 4951), recorded, instantiated and replayed: what the
 * driver writes in a graph's kernel-node QMDs, searched after the graph is made and after a
 * replay (issue 13: CUDA's graphs of empty kernels run 0.58 us/kernel on H200 against 0.81 on
 * H100 - the fields may say why; a graph's QMDs may also live only in device memory, where this
 * search does not find them unless HCQ_QMD_SCAN_DEV=1 reaches a BAR mapping).
 *
 * Mappings of the GPU device files are read last and only when HCQ_QMD_SCAN_DEV=1 (reading
 * BAR space is slow; register windows are never read: mappings under 1 MiB of /dev/nvidia*
 * are skipped). Faults while reading are caught per page.
 *
 * Not built by `make` (it needs a GPU and the CUDA driver); on the device machine:
 *   cc -O2 -std=c11 -D_GNU_SOURCE -Iinclude -Isrc/kernels -Isrc/gpu -Isrc/util \
 *      tests/hw/cuda_qmd_scan.c build/libnvhcq.a -ldl -lm -lpthread -o build/cuda_qmd_scan
 *   build/cuda_qmd_scan [cuda:0]
 * Prints each distinct QMD found (its mapping, gpu_qmd_dump's fields, and any set bit no
 * named field covers) and "cuda_qmd_scan: N QMDs found".
 */
#include "gpu_qmd.h"
#include "hcq.h"
#include "k_params.h"

#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const uint32_t grids[6] = {4931, 4933, 4937, 4939, 4943, 4951};
enum { BLOCK = 96, QMD_DW = 96, MAX_FOUND = 64 };

static sigjmp_buf fault_jmp;

static void
on_fault(int sig)
{
    siglongjmp(fault_jmp, sig);
}

/* Copy one page, or return false when reading it faults. */
static bool
read_page(const volatile uint8_t *src, uint8_t *dst, size_t n)
{
    if (sigsetjmp(fault_jmp, 1))
        return false;
    for (size_t i = 0; i < n; i += 8)
        *(uint64_t *)(dst + i) = *(const volatile uint64_t *)(src + i);
    return true;
}

struct found {
    uint32_t dw[QMD_DW];
    char where[160];
    unsigned count;
};
static struct found found[MAX_FOUND];
static unsigned found_n;

static void
consider(const uint32_t *q, const char *path, uintptr_t addr)
{
    if ((q[36] & 0xFFFF) != BLOCK || ((q[18] >> 4) & 0xF) != 4)
        return;
    for (unsigned i = 0; i < found_n; i++)
        if (!memcmp(found[i].dw, q, sizeof found[i].dw)) {
            found[i].count++;
            return;
        }
    if (found_n == MAX_FOUND)
        return;
    memcpy(found[found_n].dw, q, sizeof found[found_n].dw);
    snprintf(found[found_n].where, sizeof found[found_n].where, "%s at 0x%" PRIxPTR, path, addr);
    found[found_n].count = 1;
    found_n++;
}

/* Search one mapping page by page (a QMD may straddle two pages: keep the previous one). */
static void
scan_region(uintptr_t lo, uintptr_t hi, const char *path)
{
    enum { PG = 4096 };
    static uint8_t buf[2 * PG];
    bool have_prev = false;
    for (uintptr_t a = lo; a < hi; a += PG) {
        if (!read_page((const volatile uint8_t *)a, buf + PG, PG)) {
            have_prev = false;
            continue;
        }
        const uint32_t *w = (const uint32_t *)buf;
        for (uint32_t i = PG / 4; i < 2 * PG / 4; i++) {
            uint32_t v = w[i];
            bool known = false;
            for (unsigned g = 0; g < sizeof grids / sizeof grids[0]; g++)
                known |= v == grids[g];
            if (!known)
                continue;
            /* GRID_WIDTH is dword 32 of the QMD */
            if (i < 32 || (i - 32 < PG / 4 && !have_prev) || i - 32 + QMD_DW > 2 * PG / 4)
                continue;
            consider(w + i - 32, path, a - PG + (i - 32) * 4);
        }
        memmove(buf, buf + PG, PG);
        have_prev = true;
    }
}

static void
scan_maps(bool device_files)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f) {
        printf("cannot open /proc/self/maps\n");
        return;
    }
    char line[512];
    while (fgets(line, sizeof line, f)) {
        uintptr_t lo, hi;
        char perm[8] = "", path[256] = "";
        if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %7s %*s %*s %*s %255[^\n]", &lo, &hi, perm, path) < 3)
            continue;
        if (perm[0] != 'r' || hi - lo > (2ull << 30))
            continue;
        const char *p = path;
        while (*p == ' ')
            p++;
        bool dev = !strncmp(p, "/dev/nvidia", 11);
        if (dev != device_files || !strcmp(p, "[vvar]") || !strcmp(p, "[vsyscall]") || !strcmp(p, "[vdso]"))
            continue;
        if (dev && hi - lo < (1u << 20))
            continue;
        if ((uintptr_t)found >= lo && (uintptr_t)found < hi)
            continue; /* our own copies */
        scan_region(lo, hi, *p ? p : "[anon]");
    }
    fclose(f);
}

/* Bits set in q that no named V04_00 field covers. */
static void
print_unnamed_bits(const uint32_t *q)
{
    const struct gpu_qmd_ops *ops = &gpu_qmd_v04_00_ops;
    uint32_t named[QMD_DW] = {0};
    for (uint32_t i = 0; i < ops->field_count; i++)
        for (uint32_t b = ops->fields[i].lo; b <= ops->fields[i].hi; b++)
            named[b / 32] |= 1u << (b % 32);
    for (uint32_t d = 0; d < QMD_DW; d++)
        if (q[d] & ~named[d])
            printf("  unnamed bits: dw%u & 0x%08x (bits %u..%u)\n", d, q[d] & ~named[d], d * 32, d * 32 + 31);
}

/* Search every readable mapping of this process (and the device files' when dev_too) with
 * faults caught. */
static void
scan_all(const struct sigaction *sa, bool dev_too)
{
    struct sigaction old_segv, old_bus;
    sigaction(SIGSEGV, sa, &old_segv);
    sigaction(SIGBUS, sa, &old_bus);
    scan_maps(false);
    if (dev_too)
        scan_maps(true);
    sigaction(SIGSEGV, &old_segv, NULL);
    sigaction(SIGBUS, &old_bus, NULL);
}

int
main(int argc, char **argv)
{
    const char *spec = argc > 1 ? argv[1] : "cuda:0";
    struct hcq_device *dev = NULL;
    struct hcq_queue *q = NULL;
    struct hcq_program *prog = NULL;
    struct hcq_buf *cell = NULL, *err = NULL;
    struct hcq_graph *g = NULL;
    int rc = 1;
    if (hcq_device_open(spec, &dev) != HCQ_OK || hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q) != HCQ_OK ||
        hcq_program_load(dev, "k_dep_step", &prog) != HCQ_OK ||
        hcq_buf_alloc(dev, 2ull * grids[5] * 4, HCQ_MEM_DEVICE, &cell) != HCQ_OK ||
        hcq_buf_alloc(dev, 4, HCQ_MEM_DEVICE, &err) != HCQ_OK) {
        printf("cuda_qmd_scan: setup on %s failed: %s\n", spec, hcq_last_error());
        goto done;
    }
    struct sigaction sa = {.sa_handler = on_fault};
    sigemptyset(&sa.sa_mask);
    const char *d = getenv("HCQ_QMD_SCAN_DEV");
    /* the driver reuses its staging memory: search after each launch */
    for (uint32_t i = 0; i < 4; i++) {
        const bool pdl = i == 1 || i == 2;
        struct k_dep_step_params p = {
            .cell_va = hcq_buf_va(cell), .err_va = hcq_buf_va(err), .idx = i, .wait = pdl ? 1u : 0u};
        struct hcq_launch l = {.prog = prog,
                               .grid = {grids[i], 1, 1},
                               .block = {BLOCK, 1, 1},
                               .args = &p,
                               .args_B = sizeof p,
                               .grid_var = {HCQ_VAR_NONE, HCQ_VAR_NONE, HCQ_VAR_NONE},
                               .flags = pdl ? HCQ_LAUNCH_DEP_WAIT : 0u};
        if (hcq_queue_launch_ex(q, &l) != HCQ_OK || hcq_queue_submit(q) != HCQ_OK) {
            printf("cuda_qmd_scan: launch %u: %s\n", i, hcq_last_error());
            goto done;
        }
        /* B and C must be searched while their predecessor may still run: no finish before */
        if (i == 3 && hcq_queue_finish(q, 10ull * 1000 * 1000 * 1000) != HCQ_OK) {
            printf("cuda_qmd_scan: run: %s\n", hcq_last_error());
            goto done;
        }
        scan_all(&sa, d && !strcmp(d, "1"));
    }
    /* E, F: a graph of two plain launches, searched once made and again after a replay */
    if (hcq_graph_begin(q) != HCQ_OK) {
        printf("cuda_qmd_scan: graph_begin: %s\n", hcq_last_error());
        goto done;
    }
    for (uint32_t i = 4; i < 6; i++) {
        struct k_dep_step_params p = {
            .cell_va = hcq_buf_va(cell), .err_va = hcq_buf_va(err), .idx = i, .wait = 0};
        struct hcq_launch l = {.prog = prog,
                               .grid = {grids[i], 1, 1},
                               .block = {BLOCK, 1, 1},
                               .args = &p,
                               .args_B = sizeof p,
                               .grid_var = {HCQ_VAR_NONE, HCQ_VAR_NONE, HCQ_VAR_NONE}};
        if (hcq_queue_launch_ex(q, &l) != HCQ_OK) {
            printf("cuda_qmd_scan: graph launch %u: %s\n", i, hcq_last_error());
            struct hcq_graph *gx = NULL;
            if (hcq_graph_end(q, &gx) == HCQ_OK)
                hcq_graph_destroy(gx);
            goto done;
        }
    }
    if (hcq_graph_end(q, &g) != HCQ_OK) {
        printf("cuda_qmd_scan: graph_end: %s\n", hcq_last_error());
        goto done;
    }
    scan_all(&sa, d && !strcmp(d, "1"));
    if (hcq_graph_replay(g) != HCQ_OK || hcq_queue_finish(q, 10ull * 1000 * 1000 * 1000) != HCQ_OK) {
        printf("cuda_qmd_scan: graph replay: %s\n", hcq_last_error());
        goto done;
    }
    scan_all(&sa, d && !strcmp(d, "1"));
    for (unsigned i = 0; i < found_n; i++) {
        static char text[8192];
        gpu_qmd_dump(&gpu_qmd_v04_00_ops, found[i].dw, text, sizeof text);
        unsigned which = 6;
        for (unsigned g = 0; g < 6; g++)
            if (found[i].dw[32] == grids[g])
                which = g;
        printf("== QMD %u (grid width %u, launch %c%s; %u copies), first in %s\n%s", i, found[i].dw[32],
               "ABCDEF?"[which], which >= 4 && which < 6 ? ", graph" : "", found[i].count, found[i].where,
               text);
        print_unnamed_bits(found[i].dw);
        printf("  raw:");
        for (uint32_t w = 0; w < QMD_DW; w++)
            printf("%s%08x", w % 8 ? " " : "\n   ", found[i].dw[w]);
        printf("\n");
    }
    printf("cuda_qmd_scan: %u QMDs found\n", found_n);
    rc = found_n ? 0 : 1;
done:
    hcq_graph_destroy(g);
    hcq_buf_free(cell);
    hcq_buf_free(err);
    hcq_program_destroy(prog);
    hcq_queue_destroy(q);
    hcq_device_close(dev);
    return rc;
}
