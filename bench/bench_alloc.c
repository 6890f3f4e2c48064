/* SPDX-License-Identifier: MIT */
/*
 * bench_alloc.c - cost of getting and returning memory: hcq_buf_alloc + hcq_buf_free of
 * 1, 16 and 256 MiB, device memory (alloc_device) and pinned host memory (alloc_host),
 * host time of the pair. An engine that allocates per step pays this every token, so it
 * shows how much a caching allocator above the runtime is worth. These rows repeat one size,
 * so after the warm-up they time the caching pool (docs/engine.md §3.1); alloc_device_cold and
 * alloc_host_cold time the driver's path: alloc + free + hcq_device_mem_trim, every block
 * going back to the driver (the first allocation of a size class pays this; on cuda, which has
 * no pool of ours, trim does nothing and the rows equal the others).
 * alloc_device_fresh / alloc_host_fresh (4 KiB .. 256 MiB, measured first) time each
 * allocation of n distinct live buffers of one size, none freed in between - what a program
 * that sets up many buffers pays, and where neither side's free list can help (ours is trimmed
 * before the row; CUDA keeps whatever its driver caches). Then all are freed, untimed.
 * Napkin bound: a device allocation is a VA reservation plus page-table writes for
 * 2 MiB pages (~tens of us; anchors.md: cuMemAlloc 16 MiB median 36 us on H200); pinned
 * host memory must also pin (and zero) every 4 KiB page: ~0.1-0.3 ms per MiB.
 * Verification: each allocation of the first rep is written at both ends (4 KiB of fresh
 * random bytes) and read back.
 */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static enum hcq_status
probe(struct hcq_buf *b, bool *ok)
{
    uint8_t want[4096], got[4096];
    uint64_t size = hcq_buf_size(b), at[2] = {0, size - sizeof want};
    enum hcq_status st = HCQ_OK;
    *ok = true;
    for (int i = 0; i < 2 && st == HCQ_OK; i++) {
        bench_rand_bytes(want, sizeof want);
        memset(got, 0, sizeof got);
        st = hcq_buf_write(b, at[i], want, sizeof want);
        if (st == HCQ_OK)
            st = hcq_buf_read(b, at[i], got, sizeof got);
        *ok &= st == HCQ_OK && !memcmp(want, got, sizeof want);
    }
    return st;
}

/* The row r from n timings t: an error, a failed read-back, or the verified statistics. */
static void
finish(struct bench_ctx *ctx, struct bench_result *r, enum hcq_status st, bool ok, double *t, uint32_t n,
       const char *note)
{
    if (st != HCQ_OK)
        bench_add_status(ctx, r, BENCH_ERROR, "%s", hcq_last_error());
    else if (!ok)
        bench_add_status(ctx, r, BENCH_FAIL, "bytes written to a new buffer did not read back");
    else {
        bench_stats(r, t, n, 0);
        r->verdict = BENCH_VERIFIED;
        snprintf(r->note, sizeof r->note, "%s", note);
        bench_add(ctx, r);
    }
}

static void
run(struct bench_ctx *ctx, struct bench_dev *d, uint64_t size, uint32_t flags, bool cold)
{
    char params[32];
    static const char *const names[2][2] = {{"alloc_device", "alloc_host"},
                                            {"alloc_device_cold", "alloc_host_cold"}};
    struct bench_result r = bench_result_init("alloc", names[cold][(flags & HCQ_MEM_HOST) != 0], d,
                                              bench_fmt_bytes(params, sizeof params, size), "us", false);
    uint32_t reps = ctx->quick ? 10 : size >= (256ull << 20) ? 30 : cold ? 50 : 200;
    if (cold)
        (void)hcq_device_mem_trim(d->dev);
    double *t = calloc(reps, sizeof *t);
    enum hcq_status st = t ? HCQ_OK : HCQ_ERR_NOMEM;
    bool ok = false;
    for (uint32_t i = 0; i < reps + 2 && st == HCQ_OK; i++) { /* 2 warm-up pairs */
        struct hcq_buf *b = NULL;
        uint64_t t0 = hcq_time_ns();
        st = hcq_buf_alloc(d->dev, size, flags, &b);
        hcq_buf_free(b);
        if (cold)
            (void)hcq_device_mem_trim(d->dev);
        uint64_t t1 = hcq_time_ns();
        if (i >= 2)
            t[i - 2] = (double)(t1 - t0);
        if (i == 0 && st == HCQ_OK) { /* correctness, outside the timed pair */
            if ((st = hcq_buf_alloc(d->dev, size, flags, &b)) == HCQ_OK)
                st = probe(b, &ok);
            hcq_buf_free(b);
            if (cold)
                (void)hcq_device_mem_trim(d->dev);
        }
    }
    finish(ctx, &r, st, ok, t, reps,
           cold ? "host time of alloc + free + pool trim (the driver's path)"
                : "host time of alloc + free (repeated size: the caching pool)");
    free(t);
}

/* n distinct live buffers of `size`, each allocation timed; freed (and trimmed) after. */
static void
run_fresh(struct bench_ctx *ctx, struct bench_dev *d, uint64_t size, uint32_t flags)
{
    char params[32];
    struct bench_result r =
        bench_result_init("alloc", (flags & HCQ_MEM_HOST) ? "alloc_host_fresh" : "alloc_device_fresh", d,
                          bench_fmt_bytes(params, sizeof params, size), "us", false);
    uint32_t n = ctx->quick            ? 8
                 : size <= (64u << 10) ? 64
                 : size <= (1u << 20)  ? 32
                 : size <= (16u << 20) ? 16
                                       : 4;
    (void)hcq_device_mem_trim(d->dev);
    struct hcq_buf **b = calloc(n, sizeof *b);
    double *t = calloc(n, sizeof *t);
    enum hcq_status st = b && t ? HCQ_OK : HCQ_ERR_NOMEM;
    bool ok = true;
    for (uint32_t i = 0; i < n && st == HCQ_OK; i++) {
        uint64_t t0 = hcq_time_ns();
        st = hcq_buf_alloc(d->dev, size, flags, &b[i]);
        t[i] = (double)(hcq_time_ns() - t0);
    }
    /* correctness, untimed: the first and the last buffer hold what was written to them */
    for (uint32_t i = 0; i < n && st == HCQ_OK; i += n - 1 ? n - 1 : 1) {
        bool one = false;
        st = probe(b[i], &one);
        ok &= one;
    }
    for (uint32_t i = 0; b && i < n; i++)
        hcq_buf_free(b[i]);
    (void)hcq_device_mem_trim(d->dev);
    char note[96];
    snprintf(note, sizeof note, "host time of each of %u allocations of live, distinct buffers", n);
    finish(ctx, &r, st, ok, t, n, note);
    free(t);
    free(b);
}

void
bench_alloc(struct bench_ctx *ctx)
{
    /* fresh rows first, so on every backend they are the process's first allocations of the size */
    static const uint64_t fresh[] = {4u << 10, 64u << 10, 1u << 20, 16u << 20, 256u << 20};
    for (int s = 0; s < 5; s++)
        for (int f = 0; f < 2; f++)
            for (int i = 0; i < ctx->dev_count; i++) {
                struct bench_dev *d = &ctx->devs[i];
                if (d->dead || (ctx->quick && fresh[s] > (1u << 20)) ||
                    (d->info.emulated && fresh[s] > (16u << 20)))
                    continue;
                run_fresh(ctx, d, fresh[s], f ? HCQ_MEM_HOST : HCQ_MEM_DEVICE);
            }
    static const uint64_t sizes[] = {1ull << 20, 16ull << 20, 256ull << 20};
    for (int cold = 0; cold < 2; cold++)
        for (int s = 0; s < 3; s++)
            for (int f = 0; f < 2; f++)
                for (int i = 0; i < ctx->dev_count; i++) {
                    struct bench_dev *d = &ctx->devs[i];
                    if (d->dead)
                        continue;
                    if ((ctx->quick || d->info.emulated) && sizes[s] > (16ull << 20))
                        continue; /* a quick run / the emulator: small buffers only */
                    run(ctx, d, sizes[s], f ? HCQ_MEM_HOST : HCQ_MEM_DEVICE, cold);
                }
}
