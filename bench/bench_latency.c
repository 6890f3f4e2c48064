/* SPDX-License-Identifier: MIT */
/*
 * bench_latency.c - how long it takes to get work onto the GPU and hear back, the cost
 * that dominates batch-1 LLM decode (docs/perf/anchors.md: ~300 kernels per token).
 *   launch_sync      one empty kernel, submit, wait idle; host time per round (>= 2000)
 *   back_to_back     20000 empty kernels recorded, submitted, one wait; us per kernel
 *   graph_300        a graph of 300 empty kernels replayed; us per kernel
 *   dep_chain_graph  device time around 300 dependent tiny kernels (k_axpb_u64 on one
 *   dep_chain_stream counter) as a replayed graph / as plain launches; us per kernel: the
 *                    kernel plus the GPU-side gap before the next dependent one starts
 *   dep_step_graph   a graph of 300 dependent k_dep_step launches (2 CTAs per SM, each
 *   dep_step_pdl     reads a cell of the previous launch, writes its own); us per kernel
 *                    without / with HCQ_LAUNCH_DEP_WAIT (programmatic dependent launch:
 *                    the next grid starts when the previous one's last CTA launched)
 *   signal_roundtrip host sets A, the queue waits A and sets B, the host waits B
 *   copy_to_compute  copy queue: 4 KiB H2D + signal; compute queue: wait, kernel copy,
 *                    signal; host time of the chain (and the device-clock handoff gap)
 * Napkin bounds (H100/H200, CUDA driver API, anchors.md appendix): launch+sync ~8-10 us,
 * back-to-back ~3.6-4.6 us/kernel, CUDA graph ~0.8-1 us/kernel; a PCIe round trip for a
 * host-visible signal is ~1-2 us each way, so ~3-5 us for signal_roundtrip.
 * Verification: timings use k_empty, which computes nothing, so each measurement is
 * followed by the same submission pattern with k_axpb_u64 (x = x + 1 on one element) and
 * the count is checked: a path that drops or reorders launches is reported as FAIL.
 */
#include "bench.h"
#include "k_params.h"
#include "ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIMEOUT_NS (20ull * 1000 * 1000 * 1000)

struct lat {
    struct bench_ctx *ctx;
    struct bench_dev *d;
    struct hcq_program *empty, *axpb, *copyk, *dstep;
    struct hcq_buf *cell; /* u64[1] counter for the verification launches */
};

/* Counter = 0, then `launches` x (x = x + 1) in `per_submit` chunks, then check. */
static enum hcq_status
verify_count(struct lat *l, uint32_t launches, uint32_t per_submit, bool *ok_out)
{
    uint64_t zero = 0, got = 0;
    enum hcq_status st = hcq_buf_write(l->cell, 0, &zero, 8);
    for (uint32_t i = 0; i < launches && st == HCQ_OK; i++) {
        st = ops_launch_axpb_u64(l->d->q, l->axpb, l->cell, 1, 1, 1);
        if (st == HCQ_OK && ((i + 1) % per_submit == 0 || i + 1 == launches))
            st = hcq_queue_finish(l->d->q, TIMEOUT_NS);
    }
    if (st == HCQ_OK)
        st = hcq_buf_read(l->cell, 0, &got, 8);
    *ok_out = st == HCQ_OK && got == launches;
    return st;
}

static void
finish_result(struct lat *l, struct bench_result *r, enum hcq_status st, bool ok, double *t, uint32_t n)
{
    if (st != HCQ_OK) {
        bench_add_status(l->ctx, r, BENCH_ERROR, "%s", hcq_last_error());
        return;
    }
    if (!ok) {
        bench_add_status(l->ctx, r, BENCH_FAIL, "verification launches lost or reordered");
        return;
    }
    bench_stats(r, t, n, 0);
    r->verdict = BENCH_VERIFIED;
    bench_add(l->ctx, r);
}

/* One round of the launch_sync row: an empty kernel, submitted, waited for. */
static enum hcq_status
launch_and_wait(struct lat *l)
{
    enum hcq_status st = ops_launch_empty(l->d->q, l->empty, 1, 1);
    return st == HCQ_OK ? hcq_queue_finish(l->d->q, TIMEOUT_NS) : st;
}

static void
launch_sync(struct lat *l)
{
    uint32_t n = l->ctx->quick ? 200 : 2000;
    double *t = calloc(n, sizeof *t);
    struct bench_result r = bench_result_init("latency", "launch_sync", l->d, "1 empty kernel", "us", false);
    enum hcq_status st = t ? HCQ_OK : HCQ_ERR_NOMEM;
    bool ok = false;
    /* Warm-up: at least 20 rounds and, unless quick, 1.5 s of them. This row runs first, right
     * after the device opened, and an idle GPU's clock takes about a second of launches to
     * come up: on H100 rm:0's launch + sync fell in steps from 7.6 us to 4.2 over the first
     * ~950 ms of rounds (cuda:0 stayed at ~13.3: its host path is longer than the GPU's), so
     * the row read 4.4-5.7 us with 20 rounds or 300 ms of warm-up against 4.1-4.4 warm. */
    const uint64_t warm_ns = l->ctx->quick ? 0 : 1500ull * 1000 * 1000;
    uint64_t warm_start = hcq_time_ns();
    for (uint32_t i = 0; (i < 20 || hcq_time_ns() - warm_start < warm_ns) && st == HCQ_OK; i++)
        st = launch_and_wait(l);
    for (uint32_t i = 0; i < n && st == HCQ_OK; i++) {
        uint64_t t0 = hcq_time_ns();
        st = launch_and_wait(l);
        t[i] = (double)(hcq_time_ns() - t0);
    }
    if (st == HCQ_OK)
        st = verify_count(l, 100, 1, &ok);
    snprintf(r.note, sizeof r.note, "host time, submit + wait idle, after a %.1f s warm-up",
             (double)warm_ns / 1e9);
    finish_result(l, &r, st, ok, t, n);
    free(t);
}

static void
back_to_back(struct lat *l)
{
    uint32_t kernels = l->ctx->quick ? 2000 : 20000, reps = l->ctx->quick ? 2 : 5;
    double t[8];
    struct bench_result r =
        bench_result_init("latency", "back_to_back", l->d, "20000 empty kernels", "us/kernel", false);
    if (l->ctx->quick)
        snprintf(r.params, sizeof r.params, "%u empty kernels", kernels);
    enum hcq_status st = HCQ_OK;
    bool ok = false;
    for (uint32_t rep = 0; rep <= reps && st == HCQ_OK; rep++) { /* rep 0: warm-up */
        uint64_t t0 = hcq_time_ns();
        for (uint32_t i = 0; i < kernels && st == HCQ_OK; i++)
            st = ops_launch_empty(l->d->q, l->empty, 1, 1);
        if (st == HCQ_OK)
            st = hcq_queue_finish(l->d->q, TIMEOUT_NS);
        if (rep)
            t[rep - 1] = (double)(hcq_time_ns() - t0) / kernels;
    }
    if (st == HCQ_OK)
        st = verify_count(l, l->ctx->quick ? 500 : 5000, UINT32_MAX, &ok);
    snprintf(r.note, sizeof r.note, "host time from the first record to idle");
    finish_result(l, &r, st, ok, t, reps);
}

static enum hcq_status
record_graph(struct lat *l, struct hcq_program *p, uint32_t kernels, struct hcq_graph **g_out)
{
    enum hcq_status st = hcq_graph_begin(l->d->q);
    for (uint32_t i = 0; i < kernels && st == HCQ_OK; i++)
        st = p == l->axpb ? ops_launch_axpb_u64(l->d->q, p, l->cell, 1, 1, 1)
                          : ops_launch_empty(l->d->q, p, 1, 1);
    if (st == HCQ_OK)
        return hcq_graph_end(l->d->q, g_out);
    struct hcq_graph *g = NULL;
    if (hcq_graph_end(l->d->q, &g) == HCQ_OK)
        hcq_graph_destroy(g);
    return st;
}

static void
graph_300(struct lat *l)
{
    uint32_t reps = l->ctx->quick ? 5 : 200;
    double *t = calloc(reps, sizeof *t);
    struct hcq_graph *g = NULL, *gv = NULL;
    struct bench_result r =
        bench_result_init("latency", "graph_300", l->d, "300 empty kernels", "us/kernel", false);
    enum hcq_status st = t ? record_graph(l, l->empty, 300, &g) : HCQ_ERR_NOMEM;
    bool ok = false;
    for (uint32_t i = 0; i < reps + 3 && st == HCQ_OK; i++) { /* 3 warm-up replays */
        uint64_t t0 = hcq_time_ns();
        st = hcq_graph_replay(g);
        if (st == HCQ_OK)
            st = hcq_queue_finish(l->d->q, TIMEOUT_NS);
        if (i >= 3)
            t[i - 3] = (double)(hcq_time_ns() - t0) / 300;
    }
    /* Verification: the same shape with counting kernels, replayed 3 times -> 900. */
    uint64_t zero = 0, got = 0;
    if (st == HCQ_OK)
        st = hcq_buf_write(l->cell, 0, &zero, 8);
    if (st == HCQ_OK)
        st = record_graph(l, l->axpb, 300, &gv);
    for (int i = 0; i < 3 && st == HCQ_OK; i++)
        st = hcq_graph_replay(gv);
    if (st == HCQ_OK)
        st = hcq_queue_finish(l->d->q, TIMEOUT_NS);
    if (st == HCQ_OK)
        st = hcq_buf_read(l->cell, 0, &got, 8);
    ok = got == 900;
    snprintf(r.note, sizeof r.note, "host time of replay + wait idle, / 300");
    finish_result(l, &r, st, ok, t, reps);
    hcq_graph_destroy(g);
    hcq_graph_destroy(gv);
    free(t);
}

/* The GPU-side cost of a dependency between kernels: timestamps around a chain of 300
 * dependent tiny kernels (k_axpb_u64 on one counter: each reads what the previous wrote),
 * recorded as a graph (replayed) or submitted as plain launches; device time between the
 * two timestamps / 300 = the kernel plus the gap before the next one starts. This is what
 * a batch-1 decode step of ~100-300 kernels pays per kernel on the GPU. */
static void
dep_chain(struct lat *l, bool graph)
{
    enum { K = 300 };
    uint32_t reps = l->ctx->quick ? 3 : 100;
    double *t = calloc(reps, sizeof *t);
    struct hcq_signal *ta = NULL, *tb = NULL;
    struct hcq_graph *g = NULL;
    struct bench_result r = bench_result_init("latency", graph ? "dep_chain_graph" : "dep_chain_stream", l->d,
                                              "300 dependent kernels", "us/kernel", false);
    enum hcq_status st = t ? hcq_signal_create(l->d->dev, 0, &ta) : HCQ_ERR_NOMEM;
    if (st == HCQ_OK)
        st = hcq_signal_create(l->d->dev, 0, &tb);
    uint64_t zero = 0, got = 0, launched = 0;
    if (st == HCQ_OK)
        st = hcq_buf_write(l->cell, 0, &zero, 8);
    if (st == HCQ_OK && graph) {
        st = hcq_graph_begin(l->d->q);
        if (st == HCQ_OK)
            st = hcq_queue_timestamp(l->d->q, ta);
        for (uint32_t i = 0; i < K && st == HCQ_OK; i++)
            st = ops_launch_axpb_u64(l->d->q, l->axpb, l->cell, 1, 1, 1);
        if (st == HCQ_OK)
            st = hcq_queue_timestamp(l->d->q, tb);
        enum hcq_status st2 = hcq_graph_end(l->d->q, &g);
        if (st == HCQ_OK)
            st = st2;
    }
    for (uint32_t i = 0; i < reps + 3 && st == HCQ_OK; i++) { /* 3 warm-up rounds */
        if (graph) {
            st = hcq_graph_replay(g);
        } else {
            st = hcq_queue_timestamp(l->d->q, ta);
            for (uint32_t k = 0; k < K && st == HCQ_OK; k++)
                st = ops_launch_axpb_u64(l->d->q, l->axpb, l->cell, 1, 1, 1);
            if (st == HCQ_OK)
                st = hcq_queue_timestamp(l->d->q, tb);
        }
        if (st == HCQ_OK)
            st = hcq_queue_finish(l->d->q, TIMEOUT_NS);
        launched += K;
        if (i >= 3)
            t[i - 3] = (double)bench_ts_delta(ta, tb) / K;
    }
    if (st == HCQ_OK)
        st = hcq_buf_read(l->cell, 0, &got, 8);
    snprintf(r.note, sizeof r.note, "%s time between timestamps around the chain, / 300",
             l->d->timed_on_device ? "device" : "emulated/host");
    finish_result(l, &r, st, got == launched, t, reps);
    hcq_graph_destroy(g);
    hcq_signal_destroy(ta);
    hcq_signal_destroy(tb);
    free(t);
}

static void
dep_chain_graph(struct lat *l)
{
    dep_chain(l, true);
}

static void
dep_chain_stream(struct lat *l)
{
    dep_chain(l, false);
}

/* 300 dependent k_dep_step launches as a replayed graph, with or without
 * HCQ_LAUNCH_DEP_WAIT; device time between timestamps / 300; every launch checks its
 * predecessor's writes (a mismatch fails the row). */
static void
dep_step(struct lat *l, bool pdl)
{
    enum { K = 300 };
    uint32_t reps = l->ctx->quick ? 3 : 100;
    const uint32_t n = 2 * (l->d->info.sm_count ? l->d->info.sm_count : 4);
    double *t = calloc(reps, sizeof *t);
    struct hcq_signal *ta = NULL, *tb = NULL;
    struct hcq_graph *g = NULL;
    struct hcq_buf *cells = NULL;
    uint32_t *zero = calloc(2 * n + 1, 4), e = 1;
    struct bench_result r = bench_result_init("latency", pdl ? "dep_step_pdl" : "dep_step_graph", l->d,
                                              "300 dependent kernels, 2 CTAs/SM", "us/kernel", false);
    enum hcq_status st = t && zero ? hcq_signal_create(l->d->dev, 0, &ta) : HCQ_ERR_NOMEM;
    if (st == HCQ_OK)
        st = hcq_signal_create(l->d->dev, 0, &tb);
    if (st == HCQ_OK)
        st = hcq_buf_alloc(l->d->dev, (2ull * n + 1) * 4, HCQ_MEM_DEVICE, &cells);
    if (st == HCQ_OK)
        st = hcq_graph_begin(l->d->q);
    if (st == HCQ_OK) {
        st = hcq_queue_timestamp(l->d->q, ta);
        for (uint32_t i = 0; i < K && st == HCQ_OK; i++) {
            struct k_dep_step_params p = {
                .cell_va = hcq_buf_va(cells), .err_va = hcq_buf_va(cells) + 8ull * n, .idx = i, .wait = pdl};
            struct hcq_launch ln = {.prog = l->dstep,
                                    .grid = {n, 1, 1},
                                    .block = {64, 1, 1},
                                    .args = &p,
                                    .args_B = sizeof p,
                                    .grid_var = {HCQ_VAR_NONE, HCQ_VAR_NONE, HCQ_VAR_NONE},
                                    .flags = pdl ? HCQ_LAUNCH_DEP_WAIT : 0};
            st = hcq_queue_launch_ex(l->d->q, &ln);
        }
        if (st == HCQ_OK)
            st = hcq_queue_timestamp(l->d->q, tb);
        enum hcq_status st2 = hcq_graph_end(l->d->q, &g);
        if (st == HCQ_OK)
            st = st2;
    }
    bool ok = true;
    for (uint32_t i = 0; i < reps + 3 && st == HCQ_OK; i++) { /* 3 warm-up rounds */
        if ((st = hcq_buf_write(cells, 0, zero, (2ull * n + 1) * 4)) != HCQ_OK ||
            (st = hcq_graph_replay(g)) != HCQ_OK || (st = hcq_queue_finish(l->d->q, TIMEOUT_NS)) != HCQ_OK ||
            (st = hcq_buf_read(cells, 8ull * n, &e, 4)) != HCQ_OK)
            break;
        ok &= e == 0;
        if (i >= 3)
            t[i - 3] = (double)bench_ts_delta(ta, tb) / K;
    }
    snprintf(r.note, sizeof r.note, "%s time around the chain / 300%s",
             l->d->timed_on_device ? "device" : "emulated/host", ok ? "" : "; MISMATCHES");
    finish_result(l, &r, st, ok, t, reps);
    hcq_graph_destroy(g);
    hcq_buf_free(cells);
    hcq_signal_destroy(ta);
    hcq_signal_destroy(tb);
    free(zero);
    free(t);
}

static void
dep_step_graph(struct lat *l)
{
    dep_step(l, false);
}

static void
dep_step_pdl(struct lat *l)
{
    dep_step(l, true);
}

static void
signal_roundtrip(struct lat *l)
{
    uint32_t n = l->ctx->quick ? 50 : 1000;
    double *t = calloc(n, sizeof *t);
    struct hcq_signal *a = NULL, *b = NULL;
    struct bench_result r =
        bench_result_init("latency", "signal_roundtrip", l->d, "host->queue->host", "us", false);
    enum hcq_status st = t ? hcq_signal_create(l->d->dev, 0, &a) : HCQ_ERR_NOMEM;
    if (st == HCQ_OK)
        st = hcq_signal_create(l->d->dev, 0, &b);
    bool ok = true;
    for (uint32_t i = 1; i <= n + 10 && st == HCQ_OK; i++) { /* 10 warm-up rounds */
        if ((st = hcq_queue_wait(l->d->q, a, i)) != HCQ_OK ||
            (st = hcq_queue_signal(l->d->q, b, i)) != HCQ_OK || (st = hcq_queue_submit(l->d->q)) != HCQ_OK)
            break;
        ok &= hcq_signal_value(b) == i - 1; /* the queue really waited */
        uint64_t t0 = hcq_time_ns();
        hcq_signal_set(a, i);
        st = hcq_signal_wait(b, i, TIMEOUT_NS);
        if (i > 10)
            t[i - 11] = (double)(hcq_time_ns() - t0);
        ok &= hcq_signal_value(b) == i;
    }
    if (st == HCQ_OK)
        st = hcq_queue_finish(l->d->q, TIMEOUT_NS);
    snprintf(r.note, sizeof r.note, "host time from set to seen");
    finish_result(l, &r, st, ok, t, n);
    hcq_signal_destroy(a);
    hcq_signal_destroy(b);
    free(t);
}

static void
copy_to_compute(struct lat *l)
{
    enum { SIZE = 4096 };
    uint32_t n = l->ctx->quick ? 20 : 500;
    double *t = calloc(n, sizeof *t), *h = calloc(n, sizeof *h);
    struct hcq_signal *s = NULL, *done = NULL, *tc = NULL, *tk = NULL;
    struct hcq_buf *src = NULL, *mid = NULL, *dst = NULL;
    uint8_t want[SIZE], got[SIZE];
    struct bench_result r =
        bench_result_init("latency", "copy_to_compute", l->d, "4 KiB H2D -> kernel", "us", false);
    struct bench_result rh =
        bench_result_init("latency", "copy_to_compute_gap", l->d, "device clock", "us", false);
    enum hcq_status st = t && h ? hcq_signal_create(l->d->dev, 0, &s) : HCQ_ERR_NOMEM;
    if (st == HCQ_OK)
        st = hcq_signal_create(l->d->dev, 0, &done);
    if (st == HCQ_OK)
        st = hcq_signal_create(l->d->dev, 0, &tc);
    if (st == HCQ_OK)
        st = hcq_signal_create(l->d->dev, 0, &tk);
    if (st == HCQ_OK)
        st = hcq_buf_alloc(l->d->dev, SIZE, HCQ_MEM_HOST, &src);
    if (st == HCQ_OK)
        st = hcq_buf_alloc(l->d->dev, SIZE, HCQ_MEM_DEVICE, &mid);
    if (st == HCQ_OK)
        st = hcq_buf_alloc(l->d->dev, SIZE, HCQ_MEM_DEVICE, &dst);
    bool ok = true;
    for (uint32_t i = 1; i <= n + 5 && st == HCQ_OK; i++) {
        bench_rand_bytes(want, SIZE);
        memcpy(hcq_buf_map(src), want, SIZE);
        uint64_t t0 = hcq_time_ns();
        if ((st = hcq_queue_copy(l->d->cq, mid, 0, src, 0, SIZE)) != HCQ_OK ||
            (l->d->timed_on_device && (st = hcq_queue_timestamp(l->d->cq, tc)) != HCQ_OK) ||
            (st = hcq_queue_signal(l->d->cq, s, i)) != HCQ_OK ||
            (st = hcq_queue_wait(l->d->q, s, i)) != HCQ_OK ||
            (l->d->timed_on_device && (st = hcq_queue_timestamp(l->d->q, tk)) != HCQ_OK) ||
            (st = ops_launch_copy_bytes(l->d->q, l->copyk, dst, 0, mid, 0, SIZE)) != HCQ_OK ||
            (st = hcq_queue_signal(l->d->q, done, i)) != HCQ_OK ||
            (st = hcq_queue_submit(l->d->q)) != HCQ_OK || (st = hcq_queue_submit(l->d->cq)) != HCQ_OK ||
            (st = hcq_signal_wait(done, i, TIMEOUT_NS)) != HCQ_OK)
            break;
        if (i > 5) {
            t[i - 6] = (double)(hcq_time_ns() - t0);
            h[i - 6] = (double)bench_ts_delta(tc, tk);
        }
        if (i == n + 5) { /* check the last round's data end to end */
            if ((st = hcq_queue_finish(l->d->q, TIMEOUT_NS)) == HCQ_OK &&
                (st = hcq_buf_read(dst, 0, got, SIZE)) == HCQ_OK)
                ok = !memcmp(got, want, SIZE);
        }
    }
    snprintf(r.note, sizeof r.note, "host time, compute queue submitted first");
    finish_result(l, &r, st, ok, t, n);
    if (l->d->timed_on_device) {
        snprintf(rh.note, sizeof rh.note, "copy-queue timestamp -> compute timestamp after its wait");
        finish_result(l, &rh, st, ok, h, n);
    }
    if (hcq_queue_finish(l->d->cq, TIMEOUT_NS) != HCQ_OK || hcq_queue_finish(l->d->q, TIMEOUT_NS) != HCQ_OK)
        fprintf(stderr, "bench: %s: queues not idle after copy_to_compute\n", l->d->info.spec);
    hcq_buf_free(src);
    hcq_buf_free(mid);
    hcq_buf_free(dst);
    hcq_signal_destroy(s);
    hcq_signal_destroy(done);
    hcq_signal_destroy(tc);
    hcq_signal_destroy(tk);
    free(t);
    free(h);
}

void
bench_latency(struct bench_ctx *ctx)
{
    for (int i = 0; i < ctx->dev_count; i++) {
        struct lat l = {.ctx = ctx, .d = &ctx->devs[i]};
        if (l.d->dead)
            continue;
        struct bench_result r = bench_result_init("latency", "setup", l.d, "", "us", false);
        enum hcq_status st = hcq_program_load(l.d->dev, "k_empty", &l.empty);
        if (st == HCQ_OK)
            st = hcq_program_load(l.d->dev, "k_axpb_u64", &l.axpb);
        if (st == HCQ_OK)
            st = hcq_program_load(l.d->dev, "k_copy_bytes", &l.copyk);
        if (st == HCQ_OK)
            st = hcq_program_load(l.d->dev, "k_dep_step", &l.dstep);
        if (st == HCQ_OK)
            st = hcq_buf_alloc(l.d->dev, 4096, HCQ_MEM_DEVICE, &l.cell);
        if (st != HCQ_OK) {
            bench_add_status(ctx, &r, BENCH_ERROR, "%s", hcq_last_error());
        } else {
            void (*const steps[])(struct lat *) = {launch_sync,     back_to_back,     graph_300,
                                                   dep_chain_graph, dep_chain_stream, dep_step_graph,
                                                   dep_step_pdl,    signal_roundtrip, copy_to_compute};
            for (size_t k = 0; k < sizeof steps / sizeof steps[0] && !l.d->dead; k++)
                steps[k](&l);
        }
        hcq_buf_free(l.cell);
        hcq_program_destroy(l.empty);
        hcq_program_destroy(l.axpb);
        hcq_program_destroy(l.copyk);
        hcq_program_destroy(l.dstep);
    }
}
