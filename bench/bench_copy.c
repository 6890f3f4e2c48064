/* SPDX-License-Identifier: MIT */
/*
 * bench_copy.c - memory bandwidth between host and device and within the device.
 *   h2d_pinned, d2h_pinned     copy-queue copy between an HCQ_MEM_HOST buffer and VRAM
 *   h2d_pageable, d2h_pageable hcq_buf_write/read from malloc'd memory (synchronous API,
 *                              host-timed: includes the staging the runtime does)
 *   d2d_copy_engine            copy-queue copy VRAM -> VRAM
 *   d2d_queue_copy             hcq_queue_copy VRAM -> VRAM on the compute queue (rm: the
 *                              engine's copy kernel; cuda: cuMemcpyDtoDAsync)
 *   d2d_kernel                 k_copy_bytes on the compute queue
 * Sizes 4 KiB .. 1 GiB. GB/s = 1e9 bytes/s; D2D counts bytes read + written (2 x size),
 * as DRAM sees them, so it compares with the HBM peak.
 * Napkin bounds: PCIe 5.0 x16 ~ 64 GB/s raw, ~55 GB/s achievable per direction pinned
 * (anchors.md measured 53.7/55.0 on H200); pageable is lower (an extra host memcpy);
 * D2D on HBM3 H100 ~ 3.35 TB/s peak (anchors.md: 2.76 TB/s measured), H200 4.8 TB/s
 * (4.26 measured). Small sizes are latency-bound: 1 MiB at 50 GB/s is 21 us, near the
 * ~10 us cost of a submission.
 * Verification: the destination is poisoned before each operation is timed and compared
 * byte for byte with the random source afterwards.
 */
#include "bench.h"
#include "ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIMEOUT_NS (20ull * 1000 * 1000 * 1000)

struct cp {
    struct bench_ctx *ctx;
    struct bench_dev *d;
    uint64_t size;
    const uint8_t *src;          /* the configuration's random bytes */
    uint8_t *check;              /* host scratch for read-back */
    uint8_t *pageable;           /* malloc'd copy of src */
    struct hcq_buf *h, *d1, *d2; /* pinned host, two VRAM buffers */
    struct hcq_program *fill, *copyk;
};

struct cp_op {
    struct cp *c;
    struct hcq_buf *dst, *src;
    int kind; /* 0 queue copy, 1 kernel copy, 2 pageable write, 3 pageable read */
};

static enum hcq_status
rec_op(struct bench_dev *d, struct hcq_queue *q, void *arg)
{
    struct cp_op *o = arg;
    (void)d;
    switch (o->kind) {
    case 0:
        return hcq_queue_copy(q, o->dst, 0, o->src, 0, o->c->size);
    case 1:
        return ops_launch_copy_bytes(q, o->c->copyk, o->dst, 0, o->src, 0, o->c->size);
    case 2:
        return hcq_buf_write(o->dst, 0, o->c->pageable, o->c->size);
    default:
        return hcq_buf_read(o->src, 0, o->c->check, o->c->size);
    }
}

static enum hcq_status
poison(struct cp *c, struct hcq_buf *b)
{
    if (hcq_buf_map(b)) {
        memset(hcq_buf_map(b), 0xAB, c->size);
        return HCQ_OK;
    }
    enum hcq_status st = ops_launch_fill_u32(c->d->q, c->fill, b, c->size / 4, 0xABABABABu);
    return st == HCQ_OK ? hcq_queue_finish(c->d->q, TIMEOUT_NS) : st;
}

/* Bytes of b equal to the source? (reads back unless b is mapped) */
static enum hcq_status
matches(struct cp *c, struct hcq_buf *b, bool *ok)
{
    const uint8_t *p = hcq_buf_map(b);
    enum hcq_status st = HCQ_OK;
    if (!p) {
        memset(c->check, 0, c->size);
        st = hcq_buf_read(b, 0, c->check, c->size);
        p = c->check;
    }
    *ok = st == HCQ_OK && !memcmp(p, c->src, c->size);
    return st;
}

static void
run_op(struct cp *c, const char *name, int kind, struct hcq_buf *dst, struct hcq_buf *src,
       struct hcq_queue *q, bool rw)
{
    char params[32];
    bench_fmt_bytes(params, sizeof params, c->size);
    struct bench_result r = bench_result_init("copy", name, c->d, params, rw ? "GB/s r+w" : "GB/s", true);
    struct cp_op o = {c, dst, src, kind};
    bool host_timed = kind >= 2;
    bool saved = c->d->timed_on_device;
    uint32_t batch = 1, reps;
    double one = 0, *t = NULL;
    bool ok = false;
    enum hcq_status st = poison(c, kind == 3 ? c->h : dst); /* kind 3 checks c->check; h is unused */
    if (kind == 3)
        memset(c->check, 0xAB, c->size);
    c->d->timed_on_device = saved && !host_timed; /* synchronous calls: host time only */
    if (st == HCQ_OK)
        st = bench_batch(c->d, q, rec_op, &o, 200e3, 64, &batch, &one);
    reps = bench_reps(c->ctx, one * batch, 0.25, 5, 100);
    if (st == HCQ_OK && !(t = calloc(reps, sizeof *t)))
        st = HCQ_ERR_NOMEM;
    if (st == HCQ_OK)
        st = bench_time(c->d, q, rec_op, &o, batch, reps, t);
    c->d->timed_on_device = saved;
    if (st == HCQ_OK) {
        if (kind == 3)
            ok = !memcmp(c->check, c->src, c->size);
        else
            st = matches(c, dst, &ok);
    }
    if (st != HCQ_OK) {
        bench_add_status(c->ctx, &r, BENCH_ERROR, "%s", hcq_last_error());
    } else if (!ok) {
        bench_add_status(c->ctx, &r, BENCH_FAIL, "destination differs from the source");
    } else {
        bench_stats(&r, t, reps, (double)c->size * (rw ? 2 : 1));
        r.verdict = BENCH_VERIFIED;
        snprintf(r.note, sizeof r.note, "%s%s", host_timed || !saved ? "host time" : "device time",
                 batch > 1 ? ", batched" : "");
        bench_add(c->ctx, &r);
        if (rw && saved) { /* the device's D2D ceiling: best method at the largest size */
            if (c->size > c->d->d2d_size_B) {
                c->d->d2d_GBps = r.median;
                c->d->d2d_size_B = c->size;
            } else if (c->size == c->d->d2d_size_B && r.median > c->d->d2d_GBps) {
                c->d->d2d_GBps = r.median;
            }
        }
    }
    free(t);
}

static void
run_device(struct cp *c)
{
    struct hcq_device *dev = c->d->dev;
    enum hcq_status st = hcq_buf_alloc(dev, c->size, HCQ_MEM_HOST, &c->h);
    if (st == HCQ_OK)
        st = hcq_buf_alloc(dev, c->size, HCQ_MEM_DEVICE, &c->d1);
    if (st == HCQ_OK)
        st = hcq_buf_alloc(dev, c->size, HCQ_MEM_DEVICE, &c->d2);
    if (st != HCQ_OK) {
        char params[32];
        bench_fmt_bytes(params, sizeof params, c->size);
        struct bench_result r = bench_result_init("copy", "alloc", c->d, params, "GB/s", true);
        bench_add_status(c->ctx, &r, BENCH_ERROR, "%s", hcq_last_error());
        goto out;
    }
    memcpy(hcq_buf_map(c->h), c->src, c->size);
    run_op(c, "h2d_pinned", 0, c->d1, c->h, c->d->cq, false); /* the rows below read d1 */
    if (!c->d->dead)
        run_op(c, "d2h_pinned", 0, c->h, c->d1, c->d->cq, false);
    if (!c->d->dead)
        run_op(c, "h2d_pageable", 2, c->d1, NULL, c->d->q, false);
    if (!c->d->dead)
        run_op(c, "d2h_pageable", 3, NULL, c->d1, c->d->q, false);
    if (!c->d->dead)
        run_op(c, "d2d_copy_engine", 0, c->d2, c->d1, c->d->cq, true);
    if (!c->d->dead)
        run_op(c, "d2d_queue_copy", 0, c->d2, c->d1, c->d->q, true);
    if (!c->d->dead)
        run_op(c, "d2d_kernel", 1, c->d2, c->d1, c->d->q, true);
out:
    hcq_buf_free(c->h);
    hcq_buf_free(c->d1);
    hcq_buf_free(c->d2);
    c->h = c->d1 = c->d2 = NULL;
}

void
bench_copy(struct bench_ctx *ctx)
{
    static const uint64_t full[] = {4ull << 10,  64ull << 10,  1ull << 20,
                                    16ull << 20, 256ull << 20, 1ull << 30};
    static const uint64_t quick[] = {1ull << 20, 4ull << 20};
    const uint64_t *sizes = ctx->quick ? quick : full;
    int count = ctx->quick ? 2 : 6;
    for (int s = 0; s < count; s++) {
        uint64_t size = sizes[s];
        uint8_t *src = malloc(size), *check = malloc(size), *pageable = malloc(size);
        if (!src || !check || !pageable) {
            fprintf(stderr, "bench: copy: no host memory for %llu bytes\n", (unsigned long long)size);
            free(src);
            free(check);
            free(pageable);
            break;
        }
        bench_rand_bytes(src, size);
        memcpy(pageable, src, size);
        for (int i = 0; i < ctx->dev_count; i++) {
            struct cp c = {.ctx = ctx,
                           .d = &ctx->devs[i],
                           .size = size,
                           .src = src,
                           .check = check,
                           .pageable = pageable};
            if (c.d->dead)
                continue;
            if (c.d->slow && size > (c.d->info.emulated ? (16ull << 20) : (256ull << 20))) {
                char params[32];
                bench_fmt_bytes(params, sizeof params, size);
                struct bench_result r = bench_result_init("copy", "all", c.d, params, "GB/s", true);
                bench_add_status(ctx, &r, BENCH_SKIPPED, "size capped on host-run devices");
                continue;
            }
            if (hcq_program_load(c.d->dev, "k_fill_u32", &c.fill) != HCQ_OK ||
                hcq_program_load(c.d->dev, "k_copy_bytes", &c.copyk) != HCQ_OK) {
                struct bench_result r = bench_result_init("copy", "setup", c.d, "", "GB/s", true);
                bench_add_status(ctx, &r, BENCH_ERROR, "%s", hcq_last_error());
            } else {
                run_device(&c);
            }
            hcq_program_destroy(c.fill);
            hcq_program_destroy(c.copyk);
        }
        free(src);
        free(check);
        free(pageable);
    }
}
