/* SPDX-License-Identifier: MIT */
/*
 * launch_split.c - where the time of one launch + sync goes (issue 13: launch + sync <= 5 us on
 * H100; `nvhcq bench latency` gives 4.4-5.0 us median there in session 23, 4.2-4.4 in session 10).
 *
 * Each round: record one k_empty launch (1 CTA of 1 thread), submit, finish, with the host clock
 * read between the three calls: "record" (building the QMD, cbuf0 and methods), "submit" (copying
 * them to the stream ring, the GPFIFO entry, the doorbell and, on rm, the GPGet read-back that
 * follows it: rm_chan_kick) and "wait" (until the host sees the queue's timeline value).
 *
 * A second pass ("stamped") adds a timestamp command before and after the launch. Their device
 * times give "gpu" (first timestamp -> second: the launch's front-end work, grid and grid-end
 * barrier); the rest of the wait, wait - gpu, is the way there and back: doorbell -> the GPU
 * runs the first method, and the last release -> the host sees it (the two clocks' offset cancels).
 * The timestamps end the QMD-released segment end (pushbuffer releases instead), so the stamped
 * pass's total is not the plain one's; its split is the point.
 *
 * Not built by `make`; on the device machine:
 *   cc -O2 -std=c11 -D_GNU_SOURCE -Iinclude -Isrc/kernels tests/hw/launch_split.c \
 *      build/libnvhcq.a -ldl -lm -lpthread -o build/launch_split
 *   build/launch_split [rm:0 [rounds]]
 * Prints one line per pass: medians and p99 of each part, in us. LAUNCH_SPLIT_MAP=1 adds
 * map_costs: the CPU's cost of writing 384 bytes through a BAR1 mapping vs host memory;
 * LAUNCH_SPLIT_RAMP=<ms> first prints the launch + sync median of each 50 ms from the start.
 */
#include "hcq.h"
#include "k_params.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIMEOUT_NS (5ull * 1000 * 1000 * 1000)
enum { WARM = 50, PARTS = 5 };

static int
cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static double
pct(uint64_t *v, uint32_t n, double p)
{
    qsort(v, n, sizeof *v, cmp_u64);
    uint32_t i = (uint32_t)(p * (n - 1) + 0.5);
    return (double)v[i] / 1000.0;
}

/* One pass of `n` rounds; t[part * n + i] in ns. Parts: record, submit, wait, total, gpu. */
static enum hcq_status
pass(struct hcq_queue *q, struct hcq_program *prog, struct hcq_signal *sa, struct hcq_signal *sb,
     bool stamped, uint32_t n, uint64_t *t)
{
    struct k_empty_params p = {0};
    uint32_t grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
    enum hcq_status st = HCQ_OK;
    for (uint32_t i = 0; i < n + WARM && st == HCQ_OK; i++) {
        uint64_t t0 = hcq_time_ns();
        if (stamped)
            st = hcq_queue_timestamp(q, sa);
        if (st == HCQ_OK)
            st = hcq_queue_launch(q, prog, grid, block, &p, sizeof p);
        if (st == HCQ_OK && stamped)
            st = hcq_queue_timestamp(q, sb);
        uint64_t t1 = hcq_time_ns();
        if (st == HCQ_OK)
            st = hcq_queue_submit(q);
        uint64_t t2 = hcq_time_ns();
        if (st == HCQ_OK)
            st = hcq_queue_finish(q, TIMEOUT_NS);
        uint64_t t3 = hcq_time_ns();
        if (st != HCQ_OK || i < WARM)
            continue;
        uint32_t k = i - WARM;
        t[0 * n + k] = t1 - t0;
        t[1 * n + k] = t2 - t1;
        t[2 * n + k] = t3 - t2;
        t[3 * n + k] = t3 - t0;
        t[4 * n + k] = stamped ? hcq_signal_timestamp_ns(sb) - hcq_signal_timestamp_ns(sa) : 0;
    }
    return st;
}

/* What the CPU pays to write a QMD-sized block (384 bytes) through a mapping and make it
 * leave the core (sfence), and to read 4 bytes back: device memory the CPU maps through BAR1
 * (HCQ_MEM_MAPPABLE, as the stream ring on rm) against pinned host memory. A write-combined
 * BAR1 mapping sends 384 bytes as a few 64-byte bursts; an uncached one as 48 or more
 * separate stores. */
static void
map_costs(struct hcq_device *dev, const char *spec)
{
    static const uint32_t kinds[2] = {HCQ_MEM_MAPPABLE, HCQ_MEM_HOST};
    enum { R = 2000, QMD_B = 384 };
    uint64_t *t = calloc(3 * (size_t)R, sizeof *t);
    uint8_t src[QMD_B];
    memset(src, 0x5a, sizeof src);
    for (int k = 0; k < 2 && t; k++) {
        struct hcq_buf *b = NULL;
        if (hcq_buf_alloc(dev, 1 << 20, kinds[k], &b) != HCQ_OK || !hcq_buf_map(b)) {
            printf("map_costs %s %s: no mapped buffer (%s)\n", spec, k ? "host" : "bar1", hcq_last_error());
            hcq_buf_free(b);
            continue;
        }
        volatile uint8_t *m = hcq_buf_map(b);
        for (uint32_t i = 0; i < R; i++) {
            uint8_t *dst = (uint8_t *)m + (i % 1024) * 512;
            uint64_t t0 = hcq_time_ns();
            memcpy(dst, src, QMD_B);
            __atomic_thread_fence(__ATOMIC_SEQ_CST);
#if defined(__x86_64__)
            __asm__ __volatile__("sfence" ::: "memory");
#endif
            uint64_t t1 = hcq_time_ns();
            for (uint32_t w = 0; w < QMD_B / 8; w++)
                ((volatile uint64_t *)(m + (i % 1024) * 512))[w] = w;
            __atomic_thread_fence(__ATOMIC_SEQ_CST);
            uint64_t t2 = hcq_time_ns();
            (void)*(volatile uint32_t *)(m + ((i + 7) % 1024) * 512);
            uint64_t t3 = hcq_time_ns();
            t[i] = t1 - t0;
            t[R + i] = t2 - t1;
            t[2 * R + i] = t3 - t2;
        }
        printf("map_costs %s %-4s  memcpy384+sfence %.3f (p99 %.3f)  48x8B-stores %.3f (p99 %.3f)  read4 "
               "%.3f (p99 %.3f)\n",
               spec, k ? "host" : "bar1", pct(t, R, 0.5), pct(t, R, 0.99), pct(t + R, R, 0.5),
               pct(t + R, R, 0.99), pct(t + 2 * R, R, 0.5), pct(t + 2 * R, R, 0.99));
        hcq_buf_free(b);
    }
    free(t);
}

/* LAUNCH_SPLIT_RAMP=<ms>: launch + sync rounds for that long from this process's first launch,
 * the median of each 50 ms window printed with its start: how long a GPU that was idle takes
 * to reach its steady launch + sync time (what a benchmark's warm-up must cover). */
static enum hcq_status
ramp(struct hcq_queue *q, struct hcq_program *prog, const char *spec, uint64_t ms)
{
    struct k_empty_params p = {0};
    uint32_t grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
    enum { CAP = 100000 };
    uint64_t *w = calloc(CAP, sizeof *w), start = hcq_time_ns(), win = start;
    uint32_t k = 0;
    enum hcq_status st = w ? HCQ_OK : HCQ_ERR_NOMEM;
    printf("ramp %s:", spec);
    while (st == HCQ_OK) {
        uint64_t t0 = hcq_time_ns();
        st = hcq_queue_launch(q, prog, grid, block, &p, sizeof p);
        if (st == HCQ_OK)
            st = hcq_queue_finish(q, TIMEOUT_NS);
        uint64_t t1 = hcq_time_ns();
        if (k < CAP)
            w[k++] = t1 - t0;
        if (t1 - win >= 50ull * 1000 * 1000) {
            printf(" %llu:%.2f", (unsigned long long)((win - start) / 1000000), pct(w, k, 0.5));
            k = 0;
            win = t1;
            if (t1 - start >= ms * 1000 * 1000)
                break;
        }
    }
    printf("\n");
    free(w);
    return st;
}

int
main(int argc, char **argv)
{
    const char *spec = argc > 1 ? argv[1] : "rm:0";
    uint32_t n = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 10) : 2000;
    if (n < 10 || n > 1000000) {
        fprintf(stderr, "launch_split: rounds %u (expected 10..1000000)\n", n);
        return 2;
    }
    struct hcq_device *dev = NULL;
    struct hcq_queue *q = NULL;
    struct hcq_program *prog = NULL;
    struct hcq_signal *sa = NULL, *sb = NULL;
    uint64_t *t = calloc((size_t)n * (PARTS + 1), sizeof *t);
    int rc = 1;
    enum hcq_status st = t ? hcq_device_open(spec, &dev) : HCQ_ERR_NOMEM;
    if (st == HCQ_OK)
        st = hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q);
    if (st == HCQ_OK)
        st = hcq_program_load(dev, "k_empty", &prog);
    if (st == HCQ_OK)
        st = hcq_signal_create(dev, 0, &sa);
    if (st == HCQ_OK)
        st = hcq_signal_create(dev, 0, &sb);
    const char *rm_ms = getenv("LAUNCH_SPLIT_RAMP");
    if (st == HCQ_OK && rm_ms && *rm_ms)
        st = ramp(q, prog, spec, strtoull(rm_ms, NULL, 10));
    static const char *const names[PARTS + 1] = {"record", "submit", "wait", "total", "gpu", "wait-gpu"};
    for (int s = 0; s < 2 && st == HCQ_OK; s++) {
        memset(t, 0, (size_t)n * (PARTS + 1) * sizeof *t);
        st = pass(q, prog, sa, sb, s == 1, n, t);
        if (st != HCQ_OK)
            break;
        /* the way there and back, wait - gpu, per round (before pct sorts the parts) */
        for (uint32_t i = 0; i < n; i++)
            t[5 * (size_t)n + i] = t[2 * n + i] > t[4 * n + i] ? t[2 * n + i] - t[4 * n + i] : 0;
        printf("launch_split %s %-7s", spec, s ? "stamped" : "plain");
        for (int part = 0; part < (s ? PARTS + 1 : PARTS - 1); part++)
            printf("  %s %.3f (p99 %.3f)", names[part], pct(t + (size_t)part * n, n, 0.5),
                   pct(t + (size_t)part * n, n, 0.99));
        printf("\n");
    }
    if (st == HCQ_OK && getenv("LAUNCH_SPLIT_MAP"))
        map_costs(dev, spec);
    if (st == HCQ_OK)
        rc = 0;
    else
        fprintf(stderr, "launch_split: %s: %s\n", hcq_status_str(st), hcq_last_error());
    hcq_signal_destroy(sa);
    hcq_signal_destroy(sb);
    hcq_program_destroy(prog);
    hcq_queue_destroy(q);
    hcq_device_close(dev);
    free(t);
    return rc;
}
