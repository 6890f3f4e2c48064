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
    if (st != HCQ_OK)
        bench_add_status(ctx, &r, BENCH_ERROR, "%s", hcq_last_error());
    else if (!ok)
        bench_add_status(ctx, &r, BENCH_FAIL, "bytes written to a new buffer did not read back");
    else {
        bench_stats(&r, t, reps, 0);
        r.verdict = BENCH_VERIFIED;
        snprintf(r.note, sizeof r.note,
                 cold ? "host time of alloc + free + pool trim (the driver's path)"
                      : "host time of alloc + free (repeated size: the caching pool)");
        bench_add(ctx, &r);
    }
    free(t);
}

void
bench_alloc(struct bench_ctx *ctx)
{
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
