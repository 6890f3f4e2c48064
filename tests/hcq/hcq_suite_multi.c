/* SPDX-License-Identifier: MIT */
/*
 * hcq_suite_multi.c - the HCQ suite's device-pair tests: --dev A and --dev2 B (B defaults
 * to A opened a second time: two emulated GPUs for emu:*, two contexts/clients for real
 * ones) open in one process. The same kernels on both (multidevice), copies between them
 * in both directions, 1 B to 1 GiB (64 MiB off GPUs), unaligned, through a peer mapping
 * where the pair has one and staged through host memory where it does not
 * (multidevice_p2p), a queue of B waiting on A's timeline signal with no host step between
 * (multidevice_signal_wait), graphs on both devices chained by a cross-device signal
 * (jit_several_devs), and small host-buffer copies carried on to the other device
 * (small_copies_from_host_buf_transfer). Devices close waiter-first (B, then A).
 */
#include "hcq_suite.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The second device of the pair (the first is open already). */
static enum hcq_status
open_second(struct hcq_device **b)
{
    return hcq_device_open(suite_dev2_spec ? suite_dev2_spec : "cpu", b);
}

/* Whether host memory of each device maps into the other (what the peer paths and
 * cross-device signals need); false with the reason in `why` when a driver cannot import
 * foreign host memory (the nvgpu/nvmap driver model). */
static bool
pair_shares_host_memory(struct hcq_device *a, struct hcq_device *b, char *why, size_t why_B)
{
    struct hcq_device *d[2] = {a, b};
    bool ok = true;
    for (int i = 0; i < 2 && ok; i++) {
        struct hcq_buf *h = NULL, *alias = NULL;
        enum hcq_status st = hcq_buf_alloc(d[i], 4096, HCQ_MEM_HOST, &h);
        if (st == HCQ_OK)
            st = hcq_buf_peer_map(d[1 - i], h, &alias);
        if (st != HCQ_OK) {
            snprintf(why, why_B, "%.70s", hcq_last_error());
            ok = false;
        }
        hcq_buf_free(alias);
        hcq_buf_free(h);
    }
    return ok;
}

#define REQUIRE_SHARED_HOST_MEMORY(a, b)                                                                     \
    do {                                                                                                     \
        char why_[80];                                                                                       \
        if (!pair_shares_host_memory((a), (b), why_, sizeof why_))                                           \
            SKIP("pair shares no host memory: %.60s", why_);                                                 \
    } while (0)

/* A buffer of `from` as seen by `to`: a peer alias, or NULL when only staging works. */
static enum hcq_status
peer_or_null(struct hcq_device *to, struct hcq_buf *buf, struct hcq_buf **alias)
{
    enum hcq_status st = hcq_buf_peer_map(to, buf, alias);
    if (st == HCQ_ERR_UNSUPPORTED) {
        *alias = NULL;
        return HCQ_OK;
    }
    return st;
}

/* Copy size_B bytes src (device memory of src's device) -> dst (device memory of another
 * device) on queues of the destination's side: the peer mapping when there is one, else
 * src -> pinned host buffer of src's device (copy engine there) -> alias of that host
 * buffer on dst's device -> dst (copy engine there). Sets *peer to the path taken. */
static enum hcq_status
cross_copy(struct hcq_device *sdev, struct hcq_queue *qsrc, struct hcq_device *ddev, struct hcq_queue *qdst,
           struct hcq_buf *dst, uint64_t dst_off_B, struct hcq_buf *src, uint64_t src_off_B, uint64_t size_B,
           bool *peer)
{
    struct hcq_buf *alias = NULL, *stage = NULL, *stage_alias = NULL;
    enum hcq_status st = peer_or_null(ddev, src, &alias);
    if (st != HCQ_OK)
        return st;
    *peer = alias != NULL;
    if (alias) {
        st = hcq_queue_copy(qdst, dst, dst_off_B, alias, src_off_B, size_B);
        if (st == HCQ_OK)
            st = hcq_queue_finish(qdst, SUITE_TIMEOUT_NS);
        hcq_buf_free(alias);
        return st;
    }
    const uint64_t chunk_B = 64ull << 20;
    uint64_t stage_B = ((size_B < chunk_B ? size_B : chunk_B) + 4095) & ~4095ull;
    if ((st = hcq_buf_alloc(sdev, stage_B, HCQ_MEM_HOST, &stage)) != HCQ_OK)
        return st;
    if ((st = hcq_buf_peer_map(ddev, stage, &stage_alias)) != HCQ_OK)
        goto out;
    for (uint64_t off = 0; off < size_B && st == HCQ_OK; off += chunk_B) {
        uint64_t n = size_B - off < chunk_B ? size_B - off : chunk_B;
        st = hcq_queue_copy(qsrc, stage, 0, src, src_off_B + off, n);
        if (st == HCQ_OK)
            st = hcq_queue_finish(qsrc, SUITE_TIMEOUT_NS);
        if (st == HCQ_OK)
            st = hcq_queue_copy(qdst, dst, dst_off_B + off, stage_alias, 0, n);
        if (st == HCQ_OK)
            st = hcq_queue_finish(qdst, SUITE_TIMEOUT_NS);
    }
out:
    hcq_buf_free(stage_alias);
    hcq_buf_free(stage);
    return st;
}

/* The same fill + axpb + add sequence on both devices with the same inputs: equal results. */
TEST(multidevice)
{
    struct hcq_device *dev[2] = {0};
    struct hcq_queue *q[2] = {0};
    struct hcq_program *axpb[2] = {0}, *add[2] = {0};
    struct hcq_buf *x[2] = {0}, *a[2] = {0}, *b[2] = {0}, *c[2] = {0};
    uint64_t *xin = NULL, *xgot[2] = {0};
    float *fa = NULL, *fb = NULL, *cgot[2] = {0};
    const uint64_t n = 10000;
    const uint64_t mul = th_rand() | 1, addv = th_rand();
    CHECK_OK(hcq_device_open(t->dev_spec, &dev[0]));
    CHECK_OK(open_second(&dev[1]));
    CHECK(xin = malloc(n * 8));
    CHECK(fa = malloc(n * 4));
    CHECK(fb = malloc(n * 4));
    suite_rand_bytes(xin, n * 8);
    for (uint64_t i = 0; i < n; i++) {
        fa[i] = th_randf(-100.f, 100.f);
        fb[i] = th_randf(-100.f, 100.f);
    }
    for (int d = 0; d < 2; d++) {
        CHECK(xgot[d] = malloc(n * 8));
        CHECK(cgot[d] = malloc(n * 4));
        CHECK_OK(hcq_queue_create(dev[d], HCQ_QUEUE_COMPUTE, &q[d]));
        CHECK_OK(hcq_program_load(dev[d], "k_axpb_u64", &axpb[d]));
        CHECK_OK(hcq_program_load(dev[d], "k_add_f32", &add[d]));
        CHECK_OK(suite_buf(dev[d], n * 8, HCQ_MEM_DEVICE, xin, 0, &x[d]));
        CHECK_OK(suite_buf(dev[d], n * 4, HCQ_MEM_DEVICE, fa, 0, &a[d]));
        CHECK_OK(suite_buf(dev[d], n * 4, HCQ_MEM_DEVICE, fb, 0, &b[d]));
        CHECK_OK(suite_buf(dev[d], n * 4, HCQ_MEM_DEVICE, NULL, SUITE_POISON, &c[d]));
    }
    /* both queues busy at once: record and submit on both before waiting on either */
    for (int d = 0; d < 2; d++) {
        CHECK_OK(ops_launch_axpb_u64(q[d], axpb[d], x[d], n, mul, addv));
        CHECK_OK(ops_launch_binary_f32(q[d], add[d], c[d], a[d], b[d], n));
        CHECK_OK(hcq_queue_submit(q[d]));
    }
    for (int d = 0; d < 2; d++) {
        CHECK_OK(hcq_queue_finish(q[d], SUITE_TIMEOUT_NS));
        CHECK_OK(hcq_buf_read(x[d], 0, xgot[d], n * 8));
        CHECK_OK(hcq_buf_read(c[d], 0, cgot[d], n * 4));
    }
    for (uint64_t i = 0; i < n; i++) {
        CHECKF(xgot[0][i] == xin[i] * mul + addv && xgot[1][i] == xgot[0][i],
               "x[%llu]: 0x%llx on %s, 0x%llx on %s (expected 0x%llx)", (unsigned long long)i,
               (unsigned long long)xgot[0][i], t->dev_spec, (unsigned long long)xgot[1][i], suite_dev2_spec,
               (unsigned long long)(xin[i] * mul + addv));
        float want = fa[i] + fb[i];
        CHECKF(!memcmp(&cgot[0][i], &want, 4) && !memcmp(&cgot[1][i], &want, 4),
               "c[%llu]: %a and %a (expected %a)", (unsigned long long)i, (double)cgot[0][i],
               (double)cgot[1][i], (double)want);
    }
done:
    for (int d = 1; d >= 0; d--) {
        hcq_buf_free(c[d]);
        hcq_buf_free(b[d]);
        hcq_buf_free(a[d]);
        hcq_buf_free(x[d]);
        hcq_program_destroy(add[d]);
        hcq_program_destroy(axpb[d]);
        hcq_queue_destroy(q[d]);
        free(cgot[d]);
        free(xgot[d]);
        hcq_device_close(dev[d]);
    }
    free(fb);
    free(fa);
    free(xin);
}

/* Copies A -> B and B -> A of 1 B ... 1 GiB (64 MiB off GPUs), at unaligned offsets, checked
 * byte for byte with poison around the destination range. */
TEST(multidevice_p2p)
{
    struct hcq_device *dev[2] = {0};
    struct hcq_queue *cq[2] = {0};
    uint8_t *data = NULL, *got = NULL;
    struct hcq_buf *src = NULL, *dst = NULL;
    bool peer = false;
    int peer_count = 0, staged_count = 0;
    CHECK_OK(hcq_device_open(t->dev_spec, &dev[0]));
    CHECK_OK(open_second(&dev[1]));
    REQUIRE_SHARED_HOST_MEMORY(dev[0], dev[1]);
    for (int d = 0; d < 2; d++)
        CHECK_OK(hcq_queue_create(dev[d], HCQ_QUEUE_COPY, &cq[d]));
    const bool gpu = suite_is_gpu(dev[0]) && suite_is_gpu(dev[1]);
    const uint64_t sizes[] = {1, 3, 4096 + 5, (1 << 20) + 17, 64ull << 20, 1ull << 30};
    const int nsizes = gpu ? 6 : 5;
    CHECK(data = malloc((1ull << (gpu ? 30 : 26)) + 64));
    CHECK(got = malloc((1ull << (gpu ? 30 : 26)) + 128));
    for (int si = 0; si < nsizes; si++) {
        for (int dir = 0; dir < 2; dir++) {
            uint64_t size = sizes[si], soff = 1 + th_rand() % 31, doff = 3 + th_rand() % 29;
            uint64_t dst_B = doff + size + 64;
            struct hcq_device *from = dev[dir], *to = dev[1 - dir];
            suite_rand_bytes(data, soff + size);
            CHECK_OK(suite_buf(from, soff + size, HCQ_MEM_DEVICE, data, 0, &src));
            CHECK_OK(suite_buf(to, dst_B, HCQ_MEM_DEVICE, NULL, SUITE_POISON, &dst));
            CHECK_OK(cross_copy(from, cq[dir], to, cq[1 - dir], dst, doff, src, soff, size, &peer));
            peer ? peer_count++ : staged_count++;
            CHECK_OK(hcq_buf_read(dst, 0, got, dst_B));
            for (uint64_t i = 0; i < dst_B; i++) {
                bool in = i >= doff && i < doff + size;
                uint8_t want = in ? data[soff + i - doff] : SUITE_POISON;
                CHECKF(got[i] == want,
                       "%s -> %s, %llu B (+%llu -> +%llu, %s): byte %llu = 0x%02x (expected 0x%02x)",
                       dir ? suite_dev2_spec : t->dev_spec, dir ? t->dev_spec : suite_dev2_spec,
                       (unsigned long long)size, (unsigned long long)soff, (unsigned long long)doff,
                       peer ? "peer" : "staged", (unsigned long long)i, got[i], want);
            }
            hcq_buf_free(dst);
            dst = NULL;
            hcq_buf_free(src);
            src = NULL;
        }
    }
    printf("    %d copies through a peer mapping, %d staged through host memory\n", peer_count, staged_count);
    /* HCQ_TEST_EXPECT_PEER=1 (run_all.sh: rm peer mappings on emulated pairs): none may stage */
    const char *expect = getenv("HCQ_TEST_EXPECT_PEER");
    if (expect && !strcmp(expect, "1"))
        CHECKF(staged_count == 0, "%d copies staged, expected all through a peer mapping", staged_count);
done:
    hcq_buf_free(dst);
    hcq_buf_free(src);
    free(got);
    free(data);
    for (int d = 1; d >= 0; d--) {
        hcq_queue_destroy(cq[d]);
        hcq_device_close(dev[d]);
    }
}

static void
sleep_ms(unsigned ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* B's queue waits on A's timeline signal, then fills a buffer and signals B's own signal;
 * A's queue sets its signal only after a kernel, submitted after B's wait. The host only
 * submits and finally waits on B. Repeated with rising values. */
TEST(multidevice_signal_wait)
{
    struct hcq_device *dev[2] = {0};
    struct hcq_queue *qa = NULL, *qb = NULL;
    struct hcq_program *fa = NULL, *fb = NULL;
    struct hcq_buf *ba = NULL, *bb = NULL;
    struct hcq_signal *sa = NULL, *sb = NULL;
    uint32_t got[1024];
    const uint64_t n = 1024;
    CHECK_OK(hcq_device_open(t->dev_spec, &dev[0]));
    CHECK_OK(open_second(&dev[1]));
    REQUIRE_SHARED_HOST_MEMORY(dev[0], dev[1]);
    CHECK_OK(hcq_queue_create(dev[0], HCQ_QUEUE_COMPUTE, &qa));
    CHECK_OK(hcq_queue_create(dev[1], HCQ_QUEUE_COMPUTE, &qb));
    CHECK_OK(hcq_program_load(dev[0], "k_fill_u32", &fa));
    CHECK_OK(hcq_program_load(dev[1], "k_fill_u32", &fb));
    CHECK_OK(hcq_signal_create(dev[0], 0, &sa));
    CHECK_OK(hcq_signal_create(dev[1], 0, &sb));
    CHECK_OK(suite_buf(dev[0], n * 4, HCQ_MEM_DEVICE, NULL, SUITE_POISON, &ba));
    CHECK_OK(suite_buf(dev[1], n * 4, HCQ_MEM_DEVICE, NULL, SUITE_POISON, &bb));
    for (uint64_t r = 1; r <= 5; r++) {
        CHECK_OK(hcq_queue_wait(qb, sa, r * 10));
        CHECK_OK(ops_launch_fill_u32(qb, fb, bb, n, (uint32_t)(0xB0000000u + r)));
        CHECK_OK(hcq_queue_signal(qb, sb, r));
        CHECK_OK(hcq_queue_submit(qb));
        sleep_ms(r == 1 ? 30 : 5);
        CHECKF(hcq_signal_value(sb) == r - 1,
               "round %llu: %s passed its wait on %s's signal before it was set", (unsigned long long)r,
               suite_dev2_spec, t->dev_spec);
        CHECK_OK(ops_launch_fill_u32(qa, fa, ba, n, (uint32_t)(0xA0000000u + r)));
        CHECK_OK(hcq_queue_signal(qa, sa, r * 10 - 1)); /* not enough yet */
        CHECK_OK(hcq_queue_signal(qa, sa, r * 10));
        CHECK_OK(hcq_queue_submit(qa));
        CHECK_OK(hcq_signal_wait(sb, r, SUITE_TIMEOUT_NS));
        CHECK(hcq_signal_value(sa) >= r * 10);
        CHECK_OK(hcq_buf_read(bb, 0, got, n * 4));
        for (uint64_t i = 0; i < n; i++)
            CHECKF(got[i] == 0xB0000000u + r, "round %llu: b[%llu] = 0x%08x", (unsigned long long)r,
                   (unsigned long long)i, got[i]);
    }
    /* and the other way: A waits on B */
    CHECK_OK(hcq_queue_wait(qa, sb, 100));
    CHECK_OK(hcq_queue_signal(qa, sa, 1000));
    CHECK_OK(hcq_queue_submit(qa));
    sleep_ms(10);
    CHECK(hcq_signal_value(sa) == 50);
    CHECK_OK(hcq_queue_signal(qb, sb, 100));
    CHECK_OK(hcq_queue_submit(qb));
    CHECK_OK(hcq_signal_wait(sa, 1000, SUITE_TIMEOUT_NS));
done:
    hcq_buf_free(bb);
    hcq_buf_free(ba);
    hcq_program_destroy(fb);
    hcq_program_destroy(fa);
    hcq_queue_destroy(qb);
    hcq_queue_destroy(qa);
    hcq_signal_destroy(sb);
    hcq_device_close(dev[1]);
    hcq_signal_destroy(sa);
    hcq_device_close(dev[0]);
}

/* Graphs on both devices, chained: A's graph computes x = x * mul + add (variables) and
 * copies x into a pinned host buffer of A, then signals; B's graph waits for that signal,
 * copies the host buffer (mapped into B) into its own x, adds 1 to it, and signals.
 * Replayed with fresh variables; B's result is checked every time. */
TEST(jit_several_devs)
{
    struct hcq_device *dev[2] = {0};
    struct hcq_queue *qa = NULL, *qb = NULL;
    struct hcq_program *pa = NULL, *pb = NULL;
    struct hcq_buf *xa = NULL, *ha = NULL, *ha_b = NULL, *xb = NULL;
    struct hcq_signal *sa = NULL, *sb = NULL;
    struct hcq_graph *ga = NULL, *gb = NULL;
    uint64_t *expect = NULL, *got = NULL;
    uint32_t va_iter, va_mul, va_add, vb_iter;
    const uint64_t n = 4096;
    CHECK_OK(hcq_device_open(t->dev_spec, &dev[0]));
    CHECK_OK(open_second(&dev[1]));
    REQUIRE_SHARED_HOST_MEMORY(dev[0], dev[1]);
    CHECK(expect = malloc(n * 8));
    CHECK(got = malloc(n * 8));
    suite_rand_bytes(expect, n * 8);
    CHECK_OK(hcq_queue_create(dev[0], HCQ_QUEUE_COMPUTE, &qa));
    CHECK_OK(hcq_queue_create(dev[1], HCQ_QUEUE_COMPUTE, &qb));
    CHECK_OK(hcq_program_load(dev[0], "k_axpb_u64", &pa));
    CHECK_OK(hcq_program_load(dev[1], "k_axpb_u64", &pb));
    CHECK_OK(hcq_signal_create(dev[0], 0, &sa));
    CHECK_OK(hcq_signal_create(dev[1], 0, &sb));
    CHECK_OK(suite_buf(dev[0], n * 8, HCQ_MEM_DEVICE, expect, 0, &xa));
    CHECK_OK(hcq_buf_alloc(dev[0], n * 8, HCQ_MEM_HOST, &ha));
    CHECK_OK(hcq_buf_peer_map(dev[1], ha, &ha_b));
    CHECK_OK(suite_buf(dev[1], n * 8, HCQ_MEM_DEVICE, NULL, SUITE_POISON, &xb));

    CHECK_OK(hcq_graph_begin(qa));
    CHECK_OK(hcq_graph_var(qa, &va_iter));
    CHECK_OK(hcq_graph_var(qa, &va_mul));
    CHECK_OK(hcq_graph_var(qa, &va_add));
    struct k_axpb_u64_params p = {.x_va = hcq_buf_va(xa), .n = n, .mul = 1, .add = 0};
    const struct hcq_arg_patch patch[] = {
        {va_mul, offsetof(struct k_axpb_u64_params, mul), 8},
        {va_add, offsetof(struct k_axpb_u64_params, add), 8},
    };
    struct hcq_launch l = {.prog = pa,
                           .grid = {16, 1, 1},
                           .block = {256, 1, 1},
                           .args = &p,
                           .args_B = sizeof p,
                           .grid_var = {HCQ_VAR_NONE, HCQ_VAR_NONE, HCQ_VAR_NONE},
                           .patches = patch,
                           .patch_count = 2};
    CHECK_OK(hcq_queue_launch_ex(qa, &l));
    CHECK_OK(hcq_queue_copy(qa, ha, 0, xa, 0, n * 8));
    CHECK_OK(hcq_queue_signal_var(qa, sa, va_iter, 0));
    CHECK_OK(hcq_graph_end(qa, &ga));

    CHECK_OK(hcq_graph_begin(qb));
    CHECK_OK(hcq_graph_var(qb, &vb_iter));
    CHECK_OK(hcq_queue_wait_var(qb, sa, vb_iter, 0)); /* A's signal, waited on by B's queue */
    CHECK_OK(hcq_queue_copy(qb, xb, 0, ha_b, 0, n * 8));
    CHECK_OK(ops_launch_axpb_u64(qb, pb, xb, n, 1, 1));
    CHECK_OK(hcq_queue_signal_var(qb, sb, vb_iter, 0));
    CHECK_OK(hcq_graph_end(qb, &gb));

    for (uint64_t it = 1; it <= 10; it++) {
        uint64_t mul = th_rand() | 1, add = th_rand();
        CHECK_OK(hcq_graph_set(gb, vb_iter, it));
        CHECK_OK(hcq_graph_replay(gb)); /* B first: it must wait for A */
        CHECK_OK(hcq_graph_set(ga, va_iter, it));
        CHECK_OK(hcq_graph_set(ga, va_mul, mul));
        CHECK_OK(hcq_graph_set(ga, va_add, add));
        CHECK_OK(hcq_graph_replay(ga));
        CHECK_OK(hcq_signal_wait(sb, it, SUITE_TIMEOUT_NS));
        for (uint64_t i = 0; i < n; i++)
            expect[i] = expect[i] * mul + add;
        CHECK_OK(hcq_buf_read(xb, 0, got, n * 8));
        for (uint64_t i = 0; i < n; i++)
            CHECKF(got[i] == expect[i] + 1, "replay %llu: x on %s [%llu] = 0x%llx (expected 0x%llx)",
                   (unsigned long long)it, suite_dev2_spec, (unsigned long long)i, (unsigned long long)got[i],
                   (unsigned long long)(expect[i] + 1));
    }
done:
    hcq_graph_destroy(gb);
    hcq_graph_destroy(ga);
    hcq_buf_free(xb);
    hcq_buf_free(ha_b);
    hcq_program_destroy(pb);
    hcq_queue_destroy(qb);
    hcq_signal_destroy(sb);
    hcq_device_close(dev[1]);
    hcq_buf_free(ha);
    hcq_buf_free(xa);
    hcq_program_destroy(pa);
    hcq_queue_destroy(qa);
    hcq_signal_destroy(sa);
    hcq_device_close(dev[0]);
    free(got);
    free(expect);
}

/* 1..64 B copies out of a pinned host buffer of A into device memory of A, then each
 * carried on to device memory of B (peer or staged), byte-exact, poison elsewhere. */
TEST(small_copies_from_host_buf_transfer)
{
    struct hcq_device *dev[2] = {0};
    struct hcq_queue *cq[2] = {0};
    struct hcq_buf *hsrc = NULL, *mid = NULL, *dst = NULL;
    uint8_t *mirror = NULL, *got = NULL;
    const uint64_t size_B = 16 << 10;
    bool peer = false;
    CHECK_OK(hcq_device_open(t->dev_spec, &dev[0]));
    CHECK_OK(open_second(&dev[1]));
    REQUIRE_SHARED_HOST_MEMORY(dev[0], dev[1]);
    for (int d = 0; d < 2; d++)
        CHECK_OK(hcq_queue_create(dev[d], HCQ_QUEUE_COPY, &cq[d]));
    CHECK(mirror = malloc(size_B));
    CHECK(got = malloc(size_B));
    memset(mirror, SUITE_POISON, size_B);
    CHECK_OK(hcq_buf_alloc(dev[0], size_B, HCQ_MEM_HOST, &hsrc));
    suite_rand_bytes(hcq_buf_map(hsrc), size_B);
    CHECK_OK(suite_buf(dev[0], size_B, HCQ_MEM_DEVICE, NULL, SUITE_POISON, &mid));
    CHECK_OK(suite_buf(dev[1], size_B, HCQ_MEM_DEVICE, NULL, SUITE_POISON, &dst));
    const uint8_t *h = hcq_buf_map(hsrc);
    for (int i = 0; i < 48; i++) {
        uint64_t n = 1 + th_rand() % 64, so = th_rand() % (size_B - n + 1),
                 doff = th_rand() % (size_B - n + 1);
        CHECK_OK(hcq_queue_copy(cq[0], mid, doff, hsrc, so, n));
        CHECK_OK(hcq_queue_finish(cq[0], SUITE_TIMEOUT_NS));
        CHECK_OK(cross_copy(dev[0], cq[0], dev[1], cq[1], dst, doff, mid, doff, n, &peer));
        memcpy(mirror + doff, h + so, n);
    }
    CHECK_OK(hcq_buf_read(dst, 0, got, size_B));
    for (uint64_t i = 0; i < size_B; i++)
        CHECKF(got[i] == mirror[i], "byte %llu on %s = 0x%02x (expected 0x%02x, %s path)",
               (unsigned long long)i, suite_dev2_spec, got[i], mirror[i], peer ? "peer" : "staged");
done:
    hcq_buf_free(dst);
    hcq_buf_free(mid);
    hcq_buf_free(hsrc);
    free(got);
    free(mirror);
    for (int d = 1; d >= 0; d--) {
        hcq_queue_destroy(cq[d]);
        hcq_device_close(dev[d]);
    }
}

const struct th_case suite_multi_cases[] = {
    TH_CASE(multidevice),
    TH_CASE(multidevice_p2p),
    TH_CASE(multidevice_signal_wait),
    TH_CASE(jit_several_devs),
    TH_CASE(small_copies_from_host_buf_transfer),
};
const int suite_multi_case_count = TH_COUNT(suite_multi_cases);
