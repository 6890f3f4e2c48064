/* SPDX-License-Identifier: MIT */
/*
 * hcq_suite_graph.c - the HCQ suite's graph-copy tests: recorded copies whose source
 * offset, destination offset and size are graph variables patched at every replay
 * (update_copy, update_copy_long), and graphs mixing input-dependent work with work that
 * does not depend on the inputs (what a graph pruner would drop), which must stay correct
 * replay after replay (prune_w_copy_correct, prune_w_independent_copy_correct). A host
 * mirror predicts every byte; bytes outside the written ranges keep their old values.
 * Also dep_wait_chain: chains of k_dep_step launched with HCQ_LAUNCH_DEP_WAIT (streamed and
 * as a replayed graph), where a launch that starts early (Hopper latches on rm) must still
 * see every write of its predecessor and must not overwrite what the predecessor reads;
 * dep_wait_mixed: the same with unflagged launches between flagged ones.
 */
#include "hcq_suite.h"

#include <stdlib.h>
#include <string.h>

/* One replay of a variable copy, checked against the mirror. */
struct vcopy {
    struct hcq_graph *g;
    struct hcq_signal *fin;
    struct hcq_buf *dst;
    uint32_t v_iter, v_doff, v_soff, v_size;
    uint64_t iter;
    uint8_t *src_data, *mirror, *got;
    uint64_t src_B, dst_B;
};

static bool
vcopy_replay(struct th *t, struct vcopy *v, uint64_t doff, uint64_t soff, uint64_t size)
{
    bool ok = false;
    v->iter++;
    CHECK_OK(hcq_graph_set(v->g, v->v_iter, v->iter));
    CHECK_OK(hcq_graph_set(v->g, v->v_doff, doff));
    CHECK_OK(hcq_graph_set(v->g, v->v_soff, soff));
    CHECK_OK(hcq_graph_set(v->g, v->v_size, size));
    CHECK_OK(hcq_graph_replay(v->g));
    CHECK_OK(hcq_signal_wait(v->fin, v->iter, SUITE_TIMEOUT_NS));
    memmove(v->mirror + doff, v->src_data + soff, size);
    CHECK_OK(hcq_buf_read(v->dst, 0, v->got, v->dst_B));
    for (uint64_t i = 0; i < v->dst_B; i++)
        CHECKF(v->got[i] == v->mirror[i],
               "replay %llu (copy of %llu B, +%llu -> +%llu): dst byte %llu = 0x%02x (expected 0x%02x)",
               (unsigned long long)v->iter, (unsigned long long)size, (unsigned long long)soff,
               (unsigned long long)doff, (unsigned long long)i, v->got[i], v->mirror[i]);
    ok = true;
done:
    return ok;
}

/* Record [copy(dst + var, src + var, var bytes); signal var] on a queue of `kind` and
 * replay it with the offsets/sizes of `plan` (then random ones). */
static bool
update_copy_run(struct th *t, struct hcq_device *dev, enum hcq_queue_kind kind, uint64_t max_B,
                uint64_t src_B, uint64_t dst_B, const uint64_t (*plan)[3], int plan_n, int random_n)
{
    bool ok = false;
    struct hcq_queue *q = NULL;
    struct hcq_buf *src = NULL;
    struct vcopy v = {.src_B = src_B, .dst_B = dst_B};
    CHECK(v.src_data = malloc(src_B));
    CHECK(v.mirror = malloc(dst_B));
    CHECK(v.got = malloc(dst_B));
    suite_rand_bytes(v.src_data, src_B);
    memset(v.mirror, SUITE_POISON, dst_B);
    CHECK_OK(hcq_queue_create(dev, kind, &q));
    CHECK_OK(hcq_signal_create(dev, 0, &v.fin));
    CHECK_OK(suite_buf(dev, src_B, HCQ_MEM_DEVICE, v.src_data, 0, &src));
    CHECK_OK(suite_buf(dev, dst_B, HCQ_MEM_DEVICE, NULL, SUITE_POISON, &v.dst));
    CHECK_OK(hcq_graph_begin(q));
    CHECK_OK(hcq_graph_var(q, &v.v_iter));
    CHECK_OK(hcq_graph_var(q, &v.v_doff));
    CHECK_OK(hcq_graph_var(q, &v.v_soff));
    CHECK_OK(hcq_graph_var(q, &v.v_size));
    struct hcq_copy c = {.dst = v.dst,
                         .dst_off_B = 0,
                         .src = src,
                         .src_off_B = 0,
                         .size_B = max_B,
                         .dst_off_var = v.v_doff,
                         .src_off_var = v.v_soff,
                         .size_var = v.v_size};
    CHECK_OK(hcq_queue_copy_ex(q, &c));
    CHECK_OK(hcq_queue_signal_var(q, v.fin, v.v_iter, 0));
    CHECK_OK(hcq_graph_end(q, &v.g));
    for (int i = 0; i < plan_n; i++)
        CHECK(vcopy_replay(t, &v, plan[i][0], plan[i][1], plan[i][2]));
    for (int i = 0; i < random_n; i++) {
        uint64_t size = th_rand() % (max_B + 1);
        uint64_t doff = th_rand() % (dst_B - size + 1), soff = th_rand() % (src_B - size + 1);
        CHECK(vcopy_replay(t, &v, doff, soff, size));
    }
    /* values out of bounds are refused before anything is submitted */
    CHECK_OK(hcq_graph_set(v.g, v.v_size, max_B + 1));
    CHECK(hcq_graph_replay(v.g) == HCQ_ERR_INVALID);
    CHECK_OK(hcq_graph_set(v.g, v.v_size, 1));
    CHECK_OK(hcq_graph_set(v.g, v.v_doff, dst_B));
    CHECK(hcq_graph_replay(v.g) == HCQ_ERR_INVALID);
    CHECK_OK(hcq_graph_set(v.g, v.v_doff, 0));
    CHECK_OK(hcq_graph_set(v.g, v.v_soff, UINT64_MAX));
    CHECK(hcq_graph_replay(v.g) == HCQ_ERR_INVALID);
    CHECK(hcq_signal_value(v.fin) == v.iter);
    ok = true;
done:
    hcq_graph_destroy(v.g);
    hcq_buf_free(v.dst);
    hcq_buf_free(src);
    hcq_signal_destroy(v.fin);
    hcq_queue_destroy(q);
    free(v.got);
    free(v.mirror);
    free(v.src_data);
    return ok;
}

/* A recorded copy re-aimed at every replay: new source and destination offsets (aligned
 * and not), sizes from 0 to the recorded 64 KiB, on a copy queue and on a compute queue. */
TEST(update_copy)
{
    struct hcq_device *dev = NULL;
    const uint64_t max_B = 64 << 10, src_B = 3 * max_B, dst_B = 2 * max_B + 100;
    const uint64_t plan[][3] = {
        {0, 0, max_B}, {1, 3, max_B - 7}, {max_B + 100, 2 * max_B, max_B},
        {17, 5, 1},    {0, 0, 0},         {4096, 8192, 4096},
    };
    CHECK_OK(hcq_device_open(t->dev_spec, &dev));
    CHECK(update_copy_run(t, dev, HCQ_QUEUE_COPY, max_B, src_B, dst_B, plan, TH_COUNT(plan), 20));
    CHECK(update_copy_run(t, dev, HCQ_QUEUE_COMPUTE, max_B, src_B, dst_B, plan, TH_COUNT(plan), 10));
done:
    hcq_device_close(dev);
}

/* The same with a long copy: 256 MiB recorded on a GPU (16 MiB on cpu/emu), replayed in
 * full, shifted by one byte (unaligned both ways), halved, and at the end of the buffers. */
TEST(update_copy_long)
{
    struct hcq_device *dev = NULL;
    CHECK_OK(hcq_device_open(t->dev_spec, &dev));
    const uint64_t max_B = suite_is_gpu(dev) ? 256ull << 20 : 16ull << 20;
    const uint64_t src_B = max_B + 4096, dst_B = max_B + 4096;
    const uint64_t plan[][3] = {
        {0, 0, max_B},
        {1, 4095, max_B - 1},
        {4096, 0, max_B / 2},
        {4096, 4096, max_B},
    };
    CHECK(update_copy_run(t, dev, HCQ_QUEUE_COPY, max_B, src_B, dst_B, plan, TH_COUNT(plan), 0));
done:
    hcq_device_close(dev);
}

/* Graph: upload the host input (copy), x = x * mul + add on it (depends on the input),
 * fill y with a constant (depends on nothing: a pruner's candidate), download x. The host
 * changes the input and scribbles over y between replays: every replay must produce the
 * new x and restore y. */
TEST(prune_w_copy_correct)
{
    struct hcq_device *dev = NULL;
    struct hcq_queue *q = NULL;
    struct hcq_program *axpb = NULL, *fill = NULL;
    struct hcq_buf *hin = NULL, *hout = NULL, *x = NULL, *y = NULL;
    struct hcq_signal *fin = NULL;
    struct hcq_graph *g = NULL;
    uint32_t v_iter, *ygot = NULL;
    const uint64_t n = 4096;
    CHECK_OK(hcq_device_open(t->dev_spec, &dev));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    CHECK_OK(hcq_program_load(dev, "k_axpb_u64", &axpb));
    CHECK_OK(hcq_program_load(dev, "k_fill_u32", &fill));
    CHECK_OK(hcq_signal_create(dev, 0, &fin));
    CHECK_OK(hcq_buf_alloc(dev, n * 8, HCQ_MEM_HOST, &hin));
    CHECK_OK(hcq_buf_alloc(dev, n * 8, HCQ_MEM_HOST, &hout));
    CHECK_OK(suite_buf(dev, n * 8, HCQ_MEM_DEVICE, NULL, SUITE_POISON, &x));
    CHECK_OK(suite_buf(dev, n * 4, HCQ_MEM_DEVICE, NULL, SUITE_POISON, &y));
    CHECK(ygot = malloc(n * 4));
    uint64_t *in = hcq_buf_map(hin), *out = hcq_buf_map(hout);
    const uint64_t mul = th_rand() | 1, add = th_rand();
    const uint32_t yval = (uint32_t)th_rand();
    CHECK_OK(hcq_graph_begin(q));
    CHECK_OK(hcq_graph_var(q, &v_iter));
    CHECK_OK(hcq_queue_copy(q, x, 0, hin, 0, n * 8));
    CHECK_OK(ops_launch_axpb_u64(q, axpb, x, n, mul, add));
    CHECK_OK(ops_launch_fill_u32(q, fill, y, n, yval));
    CHECK_OK(hcq_queue_barrier(q));
    CHECK_OK(hcq_queue_copy(q, hout, 0, x, 0, n * 8));
    CHECK_OK(hcq_queue_signal_var(q, fin, v_iter, 0));
    CHECK_OK(hcq_graph_end(q, &g));
    for (uint64_t it = 1; it <= 8; it++) {
        suite_rand_bytes(in, n * 8);
        memset(out, SUITE_POISON, n * 8);
        if (it > 1) { /* stale y must not survive a replay */
            memset(ygot, 0x5C, n * 4);
            CHECK_OK(hcq_buf_write(y, 0, ygot, n * 4));
        }
        CHECK_OK(hcq_graph_set(g, v_iter, it));
        CHECK_OK(hcq_graph_replay(g));
        CHECK_OK(hcq_signal_wait(fin, it, SUITE_TIMEOUT_NS));
        for (uint64_t i = 0; i < n; i++)
            CHECKF(out[i] == in[i] * mul + add, "replay %llu: x[%llu] = 0x%llx (expected 0x%llx)",
                   (unsigned long long)it, (unsigned long long)i, (unsigned long long)out[i],
                   (unsigned long long)(in[i] * mul + add));
        CHECK_OK(hcq_buf_read(y, 0, ygot, n * 4));
        for (uint64_t i = 0; i < n; i++)
            CHECKF(ygot[i] == yval, "replay %llu: y[%llu] = 0x%08x (expected 0x%08x)", (unsigned long long)it,
                   (unsigned long long)i, ygot[i], yval);
    }
done:
    hcq_graph_destroy(g);
    free(ygot);
    hcq_buf_free(y);
    hcq_buf_free(x);
    hcq_buf_free(hout);
    hcq_buf_free(hin);
    hcq_signal_destroy(fin);
    hcq_program_destroy(fill);
    hcq_program_destroy(axpb);
    hcq_queue_destroy(q);
    hcq_device_close(dev);
}

/* Graph: a kernel on input x (written by the host between replays) and, independent of
 * it, a copy of a constant buffer k into d. The host overwrites d between replays; each
 * replay must copy k again (an "unchanged" copy that was dropped would leave d stale)
 * while the kernel sees the new x. */
TEST(prune_w_independent_copy_correct)
{
    struct hcq_device *dev = NULL;
    struct hcq_queue *q = NULL;
    struct hcq_program *axpb = NULL;
    struct hcq_buf *x = NULL, *k = NULL, *d = NULL;
    struct hcq_signal *fin = NULL;
    struct hcq_graph *g = NULL;
    uint64_t *xin = NULL, *xgot = NULL, *kdata = NULL, *dgot = NULL;
    uint32_t v_iter, v_add;
    const uint64_t n = 2048;
    CHECK_OK(hcq_device_open(t->dev_spec, &dev));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    CHECK_OK(hcq_program_load(dev, "k_axpb_u64", &axpb));
    CHECK_OK(hcq_signal_create(dev, 0, &fin));
    CHECK(xin = malloc(n * 8));
    CHECK(xgot = malloc(n * 8));
    CHECK(kdata = malloc(n * 8));
    CHECK(dgot = malloc(n * 8));
    suite_rand_bytes(kdata, n * 8);
    CHECK_OK(suite_buf(dev, n * 8, HCQ_MEM_DEVICE, NULL, SUITE_POISON, &x));
    CHECK_OK(suite_buf(dev, n * 8, HCQ_MEM_DEVICE, kdata, 0, &k));
    CHECK_OK(suite_buf(dev, n * 8, HCQ_MEM_DEVICE, NULL, SUITE_POISON, &d));
    CHECK_OK(hcq_graph_begin(q));
    CHECK_OK(hcq_graph_var(q, &v_iter));
    CHECK_OK(hcq_graph_var(q, &v_add));
    struct k_axpb_u64_params pa = {.x_va = hcq_buf_va(x), .n = n, .mul = 3, .add = 0};
    const struct hcq_arg_patch patch[] = {{v_add, offsetof(struct k_axpb_u64_params, add), 8}};
    struct hcq_launch la = {.prog = axpb,
                            .grid = {(uint32_t)((n + 255) / 256), 1, 1},
                            .block = {256, 1, 1},
                            .args = &pa,
                            .args_B = sizeof pa,
                            .grid_var = {HCQ_VAR_NONE, HCQ_VAR_NONE, HCQ_VAR_NONE},
                            .patches = patch,
                            .patch_count = 1};
    CHECK_OK(hcq_queue_launch_ex(q, &la));
    CHECK_OK(hcq_queue_copy(q, d, 0, k, 0, n * 8));
    CHECK_OK(hcq_queue_barrier(q));
    CHECK_OK(hcq_queue_signal_var(q, fin, v_iter, 0));
    CHECK_OK(hcq_graph_end(q, &g));
    for (uint64_t it = 1; it <= 8; it++) {
        uint64_t addv = th_rand();
        suite_rand_bytes(xin, n * 8);
        CHECK_OK(hcq_buf_write(x, 0, xin, n * 8));
        memset(dgot, 0x3E, n * 8);
        CHECK_OK(hcq_buf_write(d, 0, dgot, n * 8));
        CHECK_OK(hcq_graph_set(g, v_iter, it));
        CHECK_OK(hcq_graph_set(g, v_add, addv));
        CHECK_OK(hcq_graph_replay(g));
        CHECK_OK(hcq_signal_wait(fin, it, SUITE_TIMEOUT_NS));
        CHECK_OK(hcq_buf_read(x, 0, xgot, n * 8));
        CHECK_OK(hcq_buf_read(d, 0, dgot, n * 8));
        for (uint64_t i = 0; i < n; i++) {
            CHECKF(xgot[i] == xin[i] * 3 + addv, "replay %llu: x[%llu] = 0x%llx (expected 0x%llx)",
                   (unsigned long long)it, (unsigned long long)i, (unsigned long long)xgot[i],
                   (unsigned long long)(xin[i] * 3 + addv));
            CHECKF(dgot[i] == kdata[i], "replay %llu: d[%llu] = 0x%llx (expected the constant 0x%llx)",
                   (unsigned long long)it, (unsigned long long)i, (unsigned long long)dgot[i],
                   (unsigned long long)kdata[i]);
        }
    }
done:
    hcq_graph_destroy(g);
    hcq_buf_free(d);
    hcq_buf_free(k);
    hcq_buf_free(x);
    free(dgot);
    free(kdata);
    free(xgot);
    free(xin);
    hcq_signal_destroy(fin);
    hcq_program_destroy(axpb);
    hcq_queue_destroy(q);
    hcq_device_close(dev);
}

/* N dependent k_dep_step launches (2 CTAs per SM, each busy delay_ns before its write) with
 * HCQ_LAUNCH_DEP_WAIT or without, reading through L1 (plain) or not; every launch checks another CTA's cell
 * of the previous launch, so a launch that ran before its predecessor's writes were visible, or whose writes
 * landed before the predecessor's reads, counts a mismatch. Streamed, then as a graph
 * replayed 3 times. */
bool
dep_chain_run(struct th *t, struct hcq_device *dev, uint32_t flags, bool graph, bool plain)
{
    return dep_chain_run_mixed(t, dev, flags, graph, plain, 0);
}

/* dep_chain_run with every launch i % mix == 1 launched without the flags and without
 * griddepcontrol (mix 0: none): chains that mix flagged and unflagged launches, as the LLM
 * engine's decode step does (PDL mat-vecs and attention beside f32 mat-vecs and RoPE). Why: on
 * H100 rm:0 the engine's e2e A/Bs of such steps gave wrong tokens with PDL on
 * (docs/status.md known issues); this is the smallest chain of that shape. */
bool
dep_chain_run_mixed(struct th *t, struct hcq_device *dev, uint32_t flags, bool graph, bool plain,
                    uint32_t mix)
{
    enum { N = 120 };
    bool ok = false;
    struct hcq_queue *q = NULL;
    struct hcq_program *prog = NULL;
    struct hcq_buf *cell = NULL, *err = NULL;
    struct hcq_graph *g = NULL;
    uint32_t *got = NULL;
    struct hcq_device_info info;
    CHECK_OK(hcq_device_info(dev, &info));
    const uint32_t n = 2 * (info.sm_count ? info.sm_count : 4), reps = graph ? 3 : 1;
    CHECK(got = malloc(2ull * n * 4));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    CHECK_OK(hcq_program_load(dev, "k_dep_step", &prog));
    CHECK_OK(suite_buf(dev, 2ull * n * 4, HCQ_MEM_DEVICE, NULL, 0, &cell));
    CHECK_OK(suite_buf(dev, 4, HCQ_MEM_DEVICE, NULL, 0, &err));
    if (graph)
        CHECK_OK(hcq_graph_begin(q));
    for (uint32_t i = 0; i < N; i++) {
        const bool unflagged = mix && i % mix == 1;
        struct k_dep_step_params p = {.cell_va = hcq_buf_va(cell),
                                      .err_va = hcq_buf_va(err),
                                      .idx = i,
                                      .delay_ns = 1000 + 97 * (i % 17),
                                      .wait = (unflagged ? 0u : 1u) | (plain ? 2u : 0u)};
        struct hcq_launch l = {.prog = prog,
                               .grid = {n, 1, 1},
                               .block = {64, 1, 1},
                               .args = &p,
                               .args_B = sizeof p,
                               .grid_var = {HCQ_VAR_NONE, HCQ_VAR_NONE, HCQ_VAR_NONE},
                               .flags = unflagged ? 0u : flags};
        CHECK_OK(hcq_queue_launch_ex(q, &l));
    }
    if (graph)
        CHECK_OK(hcq_graph_end(q, &g));
    for (uint32_t r = 0; r < reps; r++) {
        /* each round starts from cell half 0 = 0 (the chain's launch 0 expects 0) */
        memset(got, 0, 2ull * n * 4);
        CHECK_OK(hcq_buf_write(cell, 0, got, 2ull * n * 4));
        CHECK_OK(hcq_buf_write(err, 0, got, 4));
        if (graph)
            CHECK_OK(hcq_graph_replay(g));
        else
            CHECK_OK(hcq_queue_submit(q));
        CHECK_OK(hcq_queue_finish(q, SUITE_TIMEOUT_NS));
        uint32_t e = 1;
        CHECK_OK(hcq_buf_read(err, 0, &e, 4));
        CHECKF(e == 0, "%s, flags 0x%x, mix %u, round %u: %u mismatches seen by the chain's launches",
               graph ? "graph" : "stream", flags, mix, r, e);
        CHECK_OK(hcq_buf_read(cell, 0, got, 2ull * n * 4));
        for (uint32_t b = 0; b < n; b++)
            CHECKF(got[(N & 1) * n + b] == N, "%s, round %u: cell %u = %u (expected %u)",
                   graph ? "graph" : "stream", r, b, got[(N & 1) * n + b], (uint32_t)N);
    }
    ok = true;
done:
    hcq_graph_destroy(g);
    hcq_buf_free(cell);
    hcq_buf_free(err);
    hcq_program_destroy(prog);
    hcq_queue_destroy(q);
    free(got);
    return ok;
}

TEST(dep_wait_chain)
{
    struct hcq_device *dev = NULL;
    CHECK_OK(hcq_device_open(t->dev_spec, &dev));
    for (int plain = 0; plain < 2; plain++) {
        CHECK(dep_chain_run(t, dev, HCQ_LAUNCH_DEP_WAIT, false, plain));
        CHECK(dep_chain_run(t, dev, HCQ_LAUNCH_DEP_WAIT, true, plain));
        CHECK(dep_chain_run(t, dev, 0, false, plain));
        CHECK(dep_chain_run(t, dev, 0, true, plain));
    }
done:
    hcq_device_close(dev);
}

/* Flagged and unflagged launches in one chain (every third, every second unflagged), streamed
 * and replayed, plain and volatile reads. */
TEST(dep_wait_mixed)
{
    struct hcq_device *dev = NULL;
    CHECK_OK(hcq_device_open(t->dev_spec, &dev));
    for (uint32_t mix = 2; mix <= 3; mix++)
        for (int plain = 0; plain < 2; plain++) {
            CHECK(dep_chain_run_mixed(t, dev, HCQ_LAUNCH_DEP_WAIT, false, plain, mix));
            CHECK(dep_chain_run_mixed(t, dev, HCQ_LAUNCH_DEP_WAIT, true, plain, mix));
        }
done:
    hcq_device_close(dev);
}

const struct th_case suite_graph_cases[] = {
    TH_CASE(update_copy),          TH_CASE(update_copy_long),
    TH_CASE(prune_w_copy_correct), TH_CASE(prune_w_independent_copy_correct),
    TH_CASE(dep_wait_chain),       TH_CASE(dep_wait_mixed),
};
const int suite_graph_case_count = TH_COUNT(suite_graph_cases);
