/* SPDX-License-Identifier: MIT */
/*
 * bench_xdev.c - two devices of one backend in one process (rm:0 + rm:1, cuda:0 + cuda:1),
 * every such pair of --devs, both directions:
 *   cross_device_copy    A's VRAM -> B's VRAM, 1 MiB .. 1 GiB. With a peer mapping
 *                        (hcq_buf_peer_map) one copy on B's copy queue, device-timed; cuda's
 *                        peer copy is the driver's own (cuMemcpyDtoDAsync across contexts
 *                        with peer access, what cuMemcpyPeer does under unified addressing),
 *                        the reference for rm. Without peer access the row says so and
 *                        measures the staged path instead (A -> pinned host -> B, 64 MiB
 *                        chunks, host-timed).
 *   cross_device_signal  A's queue signals, B's queue waits on it and signals back to the
 *                        host: host-timed round trip (submit B, submit A, wait), us.
 * Napkin bounds: NVLink 4 (H100/H200 SXM) ~ 450 GB/s per direction, PCIe 5.0 x16 ~ 55 GB/s;
 * staged copies are bound by two PCIe crossings plus a host wait per chunk. One-GPU pairs
 * (the same spec twice) measure the in-device path, not P2P.
 * Verification: the destination is poisoned first and compared with the source after.
 */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIMEOUT_NS (20ull * 1000 * 1000 * 1000)
#define STAGE_CHUNK_B (64ull << 20)

struct xcopy {
    struct bench_dev *a, *b;
    struct hcq_buf *src, *dst, *alias;   /* alias: src mapped into b (peer path) */
    struct hcq_buf *stage, *stage_alias; /* staged path: pinned on a, mapped into b */
    uint64_t size;
};

static enum hcq_status
rec_peer(struct bench_dev *d, struct hcq_queue *q, void *arg)
{
    struct xcopy *x = arg;
    (void)d;
    return hcq_queue_copy(q, x->dst, 0, x->alias, 0, x->size);
}

/* The staged path, synchronous (host-timed by bench_time with timed_on_device off). */
static enum hcq_status
rec_staged(struct bench_dev *d, struct hcq_queue *q, void *arg)
{
    struct xcopy *x = arg;
    enum hcq_status st = HCQ_OK;
    (void)d;
    (void)q;
    for (uint64_t off = 0; off < x->size && st == HCQ_OK; off += STAGE_CHUNK_B) {
        uint64_t n = x->size - off < STAGE_CHUNK_B ? x->size - off : STAGE_CHUNK_B;
        st = hcq_queue_copy(x->a->cq, x->stage, 0, x->src, off, n);
        if (st == HCQ_OK)
            st = hcq_queue_finish(x->a->cq, TIMEOUT_NS);
        if (st == HCQ_OK)
            st = hcq_queue_copy(x->b->cq, x->dst, off, x->stage_alias, 0, n);
        if (st == HCQ_OK)
            st = hcq_queue_finish(x->b->cq, TIMEOUT_NS);
    }
    return st;
}

static void
copy_one(struct bench_ctx *ctx, struct bench_dev *a, struct bench_dev *b, uint64_t size, const uint8_t *data,
         uint8_t *check)
{
    char params[64], sz[16];
    bench_fmt_bytes(sz, sizeof sz, size);
    snprintf(params, sizeof params, "%.15s %.20s->%.20s", sz, a->info.spec, b->info.spec);
    struct bench_result r = bench_result_init("xdev", "cross_device_copy", b, params, "GB/s", true);
    struct xcopy x = {.a = a, .b = b, .size = size};
    double *t = NULL, one = 0;
    uint32_t batch = 1, reps = 0;
    bool saved = b->timed_on_device, ok = false;
    char why[96] = "";
    enum hcq_status st = hcq_buf_alloc(a->dev, size, HCQ_MEM_DEVICE, &x.src);
    if (st == HCQ_OK)
        st = hcq_buf_write(x.src, 0, data, size);
    if (st == HCQ_OK)
        st = hcq_buf_alloc(b->dev, size, HCQ_MEM_DEVICE, &x.dst);
    if (st == HCQ_OK) {
        memset(check, 0xAB, size);
        st = hcq_buf_write(x.dst, 0, check, size);
    }
    if (st == HCQ_OK) {
        st = hcq_buf_peer_map(b->dev, x.src, &x.alias);
        if (st == HCQ_ERR_UNSUPPORTED) {
            snprintf(why, sizeof why, "%.90s", hcq_last_error());
            st = hcq_buf_alloc(a->dev, size < STAGE_CHUNK_B ? size : STAGE_CHUNK_B, HCQ_MEM_HOST, &x.stage);
            if (st == HCQ_OK)
                st = hcq_buf_peer_map(b->dev, x.stage, &x.stage_alias);
        }
    }
    bench_record_fn rec = x.alias ? rec_peer : rec_staged;
    b->timed_on_device = saved && x.alias;
    if (st == HCQ_OK)
        st = bench_batch(b, b->cq, rec, &x, 200e3, x.alias ? 16 : 1, &batch, &one);
    reps = bench_reps(ctx, one * batch, 0.25, 3, 30);
    if (st == HCQ_OK && !(t = calloc(reps, sizeof *t)))
        st = HCQ_ERR_NOMEM;
    if (st == HCQ_OK)
        st = bench_time(b, b->cq, rec, &x, batch, reps, t);
    b->timed_on_device = saved;
    if (st == HCQ_OK) {
        memset(check, 0, size);
        st = hcq_buf_read(x.dst, 0, check, size);
        ok = st == HCQ_OK && !memcmp(check, data, size);
    }
    if (st != HCQ_OK) {
        bench_add_status(ctx, &r, BENCH_ERROR, "%s%s%s", why[0] ? "staged (no peer access); " : "",
                         hcq_last_error(), "");
    } else if (!ok) {
        bench_add_status(ctx, &r, BENCH_FAIL, "destination differs from the source (%s path)",
                         x.alias ? "peer" : "staged");
    } else {
        bench_stats(&r, t, reps, (double)size);
        r.verdict = BENCH_VERIFIED;
        if (x.alias)
            snprintf(r.note, sizeof r.note, "peer mapping, %s%s", saved ? "device time" : "host time",
                     batch > 1 ? ", batched" : "");
        else
            snprintf(r.note, sizeof r.note, "STAGED through host (no peer access): %.80s", why);
        bench_add(ctx, &r);
    }
    free(t);
    hcq_buf_free(x.stage_alias);
    hcq_buf_free(x.stage);
    hcq_buf_free(x.alias);
    hcq_buf_free(x.dst);
    hcq_buf_free(x.src);
}

static void
signal_one(struct bench_ctx *ctx, struct bench_dev *a, struct bench_dev *b)
{
    char params[64];
    snprintf(params, sizeof params, "%.30s->%.30s", a->info.spec, b->info.spec);
    struct bench_result r = bench_result_init("xdev", "cross_device_signal", b, params, "us", false);
    struct hcq_signal *sa = NULL, *sb = NULL;
    uint32_t reps = ctx->quick ? 20 : 2000;
    double *t = calloc(reps, sizeof *t);
    enum hcq_status st = t ? HCQ_OK : HCQ_ERR_NOMEM;
    if (st == HCQ_OK)
        st = hcq_signal_create(a->dev, 0, &sa);
    if (st == HCQ_OK)
        st = hcq_signal_create(b->dev, 0, &sb);
    for (uint32_t i = 0; i <= reps && st == HCQ_OK; i++) { /* i == 0: warm-up (maps the signal page) */
        uint64_t v = i + 1, t0 = hcq_time_ns();
        st = hcq_queue_wait(b->q, sa, v);
        if (st == HCQ_OK)
            st = hcq_queue_signal(b->q, sb, v);
        if (st == HCQ_OK)
            st = hcq_queue_submit(b->q);
        if (st == HCQ_OK)
            st = hcq_queue_signal(a->q, sa, v);
        if (st == HCQ_OK)
            st = hcq_queue_submit(a->q);
        if (st == HCQ_OK)
            st = hcq_signal_wait(sb, v, TIMEOUT_NS);
        if (st == HCQ_OK && i > 0)
            t[i - 1] = (double)(hcq_time_ns() - t0);
    }
    if (st != HCQ_OK) {
        bench_add_status(ctx, &r, BENCH_ERROR, "%s", hcq_last_error());
    } else {
        bench_stats(&r, t, reps, 0);
        r.verdict = BENCH_NOT_CHECKED;
        snprintf(r.note, sizeof r.note,
                 "host time: submit B's wait, submit A's signal, host waits B's signal");
        bench_add(ctx, &r);
    }
    if (hcq_queue_finish(a->q, TIMEOUT_NS) != HCQ_OK || hcq_queue_finish(b->q, TIMEOUT_NS) != HCQ_OK)
        a->dead = b->dead = true; /* a queue is stuck on the other's signal: measure nothing more */
    /* b's alias of sa's page stays until b closes (b closes before a: later in the list) */
    hcq_signal_destroy(sb);
    hcq_signal_destroy(sa);
    free(t);
}

void
bench_xdev(struct bench_ctx *ctx)
{
    static const uint64_t sizes[] = {1 << 20, 64ull << 20, 256ull << 20, 1ull << 30};
    int pairs = 0;
    for (int i = 0; i < ctx->dev_count; i++) {
        for (int j = i + 1; j < ctx->dev_count; j++) {
            struct bench_dev *a = &ctx->devs[i], *b = &ctx->devs[j];
            if (a->dead || b->dead || strcmp(a->info.backend, b->info.backend) != 0)
                continue;
            pairs++;
            int nsizes = (ctx->quick || a->slow || b->slow) ? 1 : 4;
            uint64_t max_B = sizes[nsizes - 1];
            uint8_t *data = malloc(max_B), *check = malloc(max_B);
            if (!data || !check) {
                free(data);
                free(check);
                return;
            }
            bench_rand_bytes(data, max_B);
            for (int dir = 0; dir < 2; dir++) {
                struct bench_dev *from = dir ? b : a, *to = dir ? a : b;
                for (int s = 0; s < nsizes; s++)
                    copy_one(ctx, from, to, sizes[s], data, check);
            }
            signal_one(ctx, a, b);
            free(check);
            free(data);
        }
    }
    if (!pairs)
        printf(
            "xdev: no two devices of one backend in --devs (e.g. --devs rm:0,rm:1,cuda:0,cuda:1): skipped\n");
}
