/* SPDX-License-Identifier: MIT */
/*
 * test_engine.c - unit tests of the pushbuffer engine that need no device: GPFIFO
 * free-slot counting across wraparound, the stream allocator (in-order hand-out, recycling
 * only behind timeline fences, never overlapping memory the simulated GPU has not passed,
 * never straddling the end of the ring), and the whole engine end to end on a fake kmd +
 * GPU (chaining, wraparound under load, copies, 64-bit signals, timestamps, graphs, faults).
 */
#include "harness.h"

#include "pb.h"
#include "pb_ring.h"
#include "k_params.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine_fake.h" /* fake kmd + GPU thread */

/* GPFIFO: free + pending == entries - 1 for every (put, get), including wrapped indices. */
TEST(gpfifo_free_wraparound)
{
    const uint32_t sizes[] = {2, 8, 1024, 65536};
    for (int s = 0; s < 4; s++) {
        uint32_t n = sizes[s];
        for (int i = 0; i < 2000; i++) {
            uint32_t get = (uint32_t)th_rand() % n;
            uint32_t pending = (uint32_t)th_rand() % n; /* 0 .. n-1 entries in flight */
            uint32_t put = (get + pending) % n;
            CHECKF(pb_gpfifo_pending(put, get, n) == pending, "n %u put %u get %u: pending %u (expected %u)",
                   n, put, get, pb_gpfifo_pending(put, get, n), pending);
            CHECKF(pb_gpfifo_free(put, get, n) == n - 1 - pending,
                   "n %u put %u get %u: free %u (expected %u)", n, put, get, pb_gpfifo_free(put, get, n),
                   n - 1 - pending);
        }
        /* Full ring: one slot stays empty so put == get always means "empty". */
        CHECK(pb_gpfifo_free(n - 1, 0, n) == 0);
        CHECK(pb_gpfifo_free(3 % n, (3 + 1) % n, n) == 0);
        CHECK(pb_gpfifo_free(5 % n, 5 % n, n) == n - 1);
    }
done:;
}

/* A simulated producer/GPU pair: every chunk handed out is tagged with the timeline value of
 * the submission that uses it; the GPU completes values in order at random times. No chunk
 * may overlap a chunk whose value the GPU has not reached. */
struct live_chunk {
    uint64_t off, size, value;
};

static bool
overlaps(uint64_t a, uint64_t an, uint64_t b, uint64_t bn)
{
    return a < b + bn && b < a + an;
}

TEST(ring_recycles_only_behind_fences)
{
    struct pb_ring r = {0};
    const uint64_t size = 64 * 1024;
    struct live_chunk *live = calloc(100000, sizeof(*live));
    CHECK_OK(pb_ring_init(&r, size, 64));
    uint32_t live_n = 0;
    uint64_t submitted = 0, completed = 0, handed_B = 0;
    uint32_t wraps = 0, waits = 0;
    uint64_t last_off = 0;
    CHECK(live);
    for (int step = 0; step < 20000; step++) {
        uint64_t n = 1 + th_rand() % 6000;
        uint64_t align = 1ull << (th_rand() % 9); /* 1 .. 256 */
        uint64_t off;
        while (!pb_ring_alloc(&r, n, align, &off)) {
            /* Full: what a queue does - retire what completed, else wait for the oldest fence
             * (here: the GPU completes it), else fence the unsubmitted part first. */
            uint64_t oldest;
            if (pb_ring_oldest(&r, &oldest)) {
                CHECK(oldest > completed);
                completed = oldest;
                pb_ring_retire(&r, completed);
                waits++;
            } else {
                CHECK(pb_ring_unfenced(&r) > 0); /* an empty ring always fits n <= size/2 */
                CHECK(pb_ring_fence(&r, ++submitted));
            }
        }
        CHECKF(off % align == 0, "offset 0x%llx not aligned to %llu", (unsigned long long)off,
               (unsigned long long)align);
        CHECKF(off + n <= size, "chunk [0x%llx, +0x%llx) straddles the end", (unsigned long long)off,
               (unsigned long long)n);
        if (off < last_off)
            wraps++;
        last_off = off;
        /* Drop chunks the GPU has passed, then check the new one against the rest. */
        uint32_t k = 0;
        for (uint32_t i = 0; i < live_n; i++)
            if (live[i].value > completed)
                live[k++] = live[i];
        live_n = k;
        for (uint32_t i = 0; i < live_n; i++)
            CHECKF(!overlaps(off, n, live[i].off, live[i].size),
                   "step %d: chunk [0x%llx,+0x%llx) overlaps live [0x%llx,+0x%llx) of value %llu (completed "
                   "%llu)",
                   step, (unsigned long long)off, (unsigned long long)n, (unsigned long long)live[i].off,
                   (unsigned long long)live[i].size, (unsigned long long)live[i].value,
                   (unsigned long long)completed);
        /* Unsubmitted chunks belong to the next fence. */
        live[live_n++] = (struct live_chunk){off, n, submitted + 1};
        handed_B += n;
        CHECK(pb_ring_used(&r) <= size);
        /* Submit now and then; the GPU completes now and then. */
        if (th_rand() % 3 == 0) {
            if (!pb_ring_fence(&r, submitted + 1)) {
                uint64_t oldest;
                CHECK(pb_ring_oldest(&r, &oldest));
                completed = oldest;
                pb_ring_retire(&r, completed);
                CHECK(pb_ring_fence(&r, submitted + 1));
            }
            submitted++;
            CHECK(pb_ring_unfenced(&r) == 0);
        }
        if (th_rand() % 4 == 0 && completed < submitted) {
            completed += 1 + th_rand() % (submitted - completed);
            pb_ring_retire(&r, completed);
        }
    }
    CHECKF(wraps > 10 && waits > 10, "the test did not exercise wraparound (%u) and waits (%u)", wraps,
           waits);
    CHECK(handed_B > 100 * size);
done:
    free(live);
    pb_ring_fini(&r);
}

TEST(ring_limits)
{
    struct pb_ring r;
    uint64_t off;
    CHECK(pb_ring_init(&r, 1000, 4) == HCQ_ERR_INVALID); /* not a 4 KiB multiple */
    CHECK(pb_ring_init(&r, 4096, 3) == HCQ_ERR_INVALID); /* fences not a power of two */
    CHECK_OK(pb_ring_init(&r, 8192, 4));
    CHECK(!pb_ring_alloc(&r, 4097, 4, &off)); /* more than half: never fits */
    CHECK(!pb_ring_alloc(&r, 0, 4, &off));
    CHECK(pb_ring_alloc(&r, 4096, 256, &off) && off == 0);
    CHECK(pb_ring_alloc(&r, 4000, 256, &off) && off == 4096);
    CHECK(!pb_ring_alloc(&r, 256, 256, &off)); /* 96 bytes left: in use */
    uint64_t v;
    CHECK(!pb_ring_oldest(&r, &v));
    /* Fence FIFO of 4: fifth fence refused until one retires. */
    for (uint64_t i = 1; i <= 4; i++) {
        CHECK(pb_ring_fence(&r, i));
        CHECK(pb_ring_fence(&r, i + 100)); /* nothing new handed out: no new fence */
        if (i < 4)
            CHECK(pb_ring_alloc(&r, 1, 1, &off));
    }
    CHECK(pb_ring_oldest(&r, &v) && v == 1);
    pb_ring_retire(&r, 0);
    CHECK(pb_ring_used(&r) > 8000);
    pb_ring_retire(&r, 4);
    CHECK(pb_ring_used(&r) == 0);
    CHECK(!pb_ring_oldest(&r, &v));
    /* After everything retired, the wrap skip still fits a half-ring request. */
    CHECK(pb_ring_alloc(&r, 4096, 4096, &off));
done:
    pb_ring_fini(&r);
}

TEST(ring_fence_fifo_full)
{
    struct pb_ring r;
    uint64_t off;
    CHECK_OK(pb_ring_init(&r, 1 << 20, 8));
    for (uint64_t i = 1; i <= 8; i++) {
        CHECK(pb_ring_alloc(&r, 64, 64, &off));
        CHECK(pb_ring_fence(&r, i));
    }
    CHECK(pb_ring_alloc(&r, 64, 64, &off));
    CHECK(!pb_ring_fence(&r, 9));
    CHECK(pb_ring_unfenced(&r) == 64);
    pb_ring_retire(&r, 3);
    CHECK(pb_ring_fence(&r, 9));
    CHECK(pb_ring_unfenced(&r) == 0);
    CHECK(pb_ring_used(&r) == 6 * 64);
done:
    pb_ring_fini(&r);
}

/* ==== End-to-end tests on the fake GPU ==== */

#define FAKE_N 777u

static uint32_t *
fill_random(struct hcq_buf *b, uint32_t n, uint32_t *ref)
{
    uint32_t *x = hcq_buf_map(b);
    for (uint32_t i = 0; i < n; i++)
        x[i] = ref[i] = (uint32_t)th_rand();
    return x;
}

/* Hundreds of back-to-back launches in one submission: chained QMDs, in order. */
TEST(fake_launch_chain)
{
    struct fake_kmd *k = NULL;
    struct hcq_device *dev = NULL;
    struct hcq_program *prog = NULL;
    struct hcq_queue *q;
    struct hcq_buf *b;
    uint32_t ref[FAKE_N];
    CHECK_OK(fake_open("gh100", false, &k, &dev));
    CHECK_OK(fake_prog(dev, &muladd_desc, &prog));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    CHECK_OK(hcq_buf_alloc(dev, FAKE_N * 4, HCQ_MEM_HOST, &b));
    uint32_t *x = fill_random(b, FAKE_N, ref);
    for (int i = 0; i < 300; i++) {
        struct muladd_params p = {hcq_buf_va(b), FAKE_N, (uint32_t)th_rand()};
        CHECK_OK(hcq_queue_launch(q, prog, one3, one3, &p, sizeof p));
        ref_muladd(ref, FAKE_N, p.k);
    }
    CHECK_OK(hcq_queue_finish(q, HCQ_TIMEOUT_DEFAULT_NS));
    for (uint32_t i = 0; i < FAKE_N; i++)
        CHECKF(x[i] == ref[i], "x[%u] = 0x%08x (expected 0x%08x)", i, x[i], ref[i]);
    CHECKF(atomic_load(&k->launches) == 1 && atomic_load(&k->chained) == 299,
           "%u sent, %u chained (expected 1, 299)", atomic_load(&k->launches), atomic_load(&k->chained));
    /* QMD V4: every launch's cbuf0 is prefetched (pb_build.c) */
    CHECKF(atomic_load(&k->cbuf0_prefetched) == 300, "%u of 300 QMDs with cbuf0 prefetch",
           atomic_load(&k->cbuf0_prefetched));
done:
    fake_prog_free(prog);
    hcq_device_close(dev);
}

/* hcq_queue_timestamp_launch keeps launches chained (the stamp rides in each QMD's release),
 * where hcq_queue_timestamp ends the chain at every stamp: 50 stamped launches are 1 sent +
 * 49 chained, against 50 sent with ordinary timestamps; the stamps come in launch order, the
 * stamped signals keep their values, and a stamp with no launch before it is refused. */
TEST(fake_timestamp_launch_keeps_chain)
{
    enum { N = 50 };
    struct fake_kmd *k = NULL;
    struct hcq_device *dev = NULL;
    struct hcq_program *prog = NULL;
    struct hcq_queue *q;
    struct hcq_buf *b;
    struct hcq_signal *sig[N] = {0};
    uint32_t ref[FAKE_N];
    CHECK_OK(fake_open("gh100", false, &k, &dev));
    CHECK_OK(fake_prog(dev, &muladd_desc, &prog));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    CHECK_OK(hcq_buf_alloc(dev, FAKE_N * 4, HCQ_MEM_HOST, &b));
    for (int i = 0; i < N; i++)
        CHECK_OK(hcq_signal_create(dev, 5 + (uint64_t)i, &sig[i]));
    CHECK(hcq_queue_timestamp_launch(q, sig[0]) == HCQ_ERR_INVALID);
    uint32_t *x = fill_random(b, FAKE_N, ref);
    for (int pass = 0; pass < 2; pass++) {
        unsigned l0 = atomic_load(&k->launches), c0 = atomic_load(&k->chained);
        for (int i = 0; i < N; i++) {
            struct muladd_params p = {hcq_buf_va(b), FAKE_N, (uint32_t)th_rand()};
            CHECK_OK(hcq_queue_launch(q, prog, one3, one3, &p, sizeof p));
            CHECK_OK(pass == 0 ? hcq_queue_timestamp_launch(q, sig[i]) : hcq_queue_timestamp(q, sig[i]));
            ref_muladd(ref, FAKE_N, p.k);
        }
        CHECK_OK(hcq_queue_finish(q, HCQ_TIMEOUT_DEFAULT_NS));
        unsigned sent = atomic_load(&k->launches) - l0, chained = atomic_load(&k->chained) - c0;
        CHECKF(pass == 0 ? sent == 1 && chained == N - 1 : sent == N && chained == 0,
               "pass %d: %u sent, %u chained", pass, sent, chained);
        uint64_t prev = 0;
        for (int i = 0; i < N; i++) {
            uint64_t ts = hcq_signal_timestamp_ns(sig[i]);
            CHECKF(ts && ts >= prev, "pass %d launch %d: stamp %llu (previous %llu)", pass, i,
                   (unsigned long long)ts, (unsigned long long)prev);
            CHECKF(hcq_signal_value(sig[i]) == 5 + (uint64_t)i, "pass %d: signal %d = %llu", pass, i,
                   (unsigned long long)hcq_signal_value(sig[i]));
            prev = ts;
        }
    }
    for (uint32_t i = 0; i < FAKE_N; i++)
        CHECKF(x[i] == ref[i], "x[%u] = 0x%08x (expected 0x%08x)", i, x[i], ref[i]);
done:
    for (int i = 0; i < N; i++)
        hcq_signal_destroy(sig[i]);
    fake_prog_free(prog);
    hcq_device_close(dev);
}

/* One submission larger than half the stream ring: the builder ends segments on the way
 * (breaking the QMD chain there) and results stay in order. */
TEST(fake_huge_submission)
{
    struct fake_kmd *k = NULL;
    struct hcq_device *dev = NULL;
    struct hcq_program *prog = NULL;
    struct hcq_queue *q;
    struct hcq_buf *b;
    uint32_t ref[16];
    const int n = 6000; /* ~1.2 KiB of stream each: ~7 MiB > 4 MiB ring */
    CHECK_OK(fake_open("gh100", false, &k, &dev));
    CHECK_OK(fake_prog(dev, &muladd_desc, &prog));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    CHECK_OK(hcq_buf_alloc(dev, sizeof ref, HCQ_MEM_HOST, &b));
    uint32_t *x = fill_random(b, 16, ref);
    for (int i = 0; i < n; i++) {
        struct muladd_params p = {hcq_buf_va(b), 16, (uint32_t)th_rand()};
        CHECK_OK(hcq_queue_launch(q, prog, one3, one3, &p, sizeof p));
        ref_muladd(ref, 16, p.k);
    }
    CHECK_OK(hcq_queue_finish(q, HCQ_TIMEOUT_DEFAULT_NS));
    for (uint32_t i = 0; i < 16; i++)
        CHECKF(x[i] == ref[i], "x[%u] = 0x%08x (expected 0x%08x)", i, x[i], ref[i]);
    CHECKF(atomic_load(&k->launches) >= 3 &&
               atomic_load(&k->launches) + atomic_load(&k->chained) == (unsigned)n,
           "%u sent + %u chained (expected >= 3 segments, %d launches)", atomic_load(&k->launches),
           atomic_load(&k->chained), n);
done:
    fake_prog_free(prog);
    hcq_device_close(dev);
}

/* Thousands of submissions: the GPFIFO ring (1024) and the stream ring (4 MiB) wrap many
 * times while the GPU lags; results stay in order. */
TEST(fake_stream_wraparound)
{
    struct fake_kmd *k = NULL;
    struct hcq_device *dev = NULL;
    struct hcq_program *prog = NULL;
    struct hcq_queue *q;
    struct hcq_buf *b;
    uint32_t ref[64];
    CHECK_OK(fake_open("ga102", false, &k, &dev));
    CHECK_OK(fake_prog(dev, &muladd_desc, &prog));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    CHECK_OK(hcq_buf_alloc(dev, sizeof ref, HCQ_MEM_HOST, &b));
    uint32_t *x = fill_random(b, 64, ref);
    fake_pause(k, true); /* let work pile up first */
    for (int s = 0; s < 3000; s++) {
        if (s == 500)
            fake_pause(k, false);
        for (int i = 0; i < 1 + s % 3; i++) {
            struct muladd_params p = {hcq_buf_va(b), 64, (uint32_t)th_rand()};
            CHECK_OK(hcq_queue_launch(q, prog, one3, one3, &p, sizeof p));
            ref_muladd(ref, 64, p.k);
        }
        CHECK_OK(hcq_queue_submit(q));
    }
    CHECK_OK(hcq_queue_finish(q, HCQ_TIMEOUT_DEFAULT_NS));
    for (uint32_t i = 0; i < 64; i++)
        CHECKF(x[i] == ref[i], "x[%u] = 0x%08x (expected 0x%08x)", i, x[i], ref[i]);
done:
    fake_prog_free(prog);
    hcq_device_close(dev);
}

/* The GPFIFO ring fills while the GPU is stopped: the engine counts the ring's room from the
 * GPGet it read last (pb_chan_kick reads USERD again only when that says full), so the
 * 1024th submission must wait for the GPU, and nothing may be overwritten before it was
 * fetched: every launch's effect is checked. A thread restarts the GPU after 150 ms. */
struct fake_resume {
    struct fake_kmd *k;
};

static void *
fake_resume_later(void *arg)
{
    struct fake_resume *r = arg;
    struct timespec ts = {0, 150 * 1000 * 1000};
    nanosleep(&ts, NULL);
    fake_pause(r->k, false);
    return NULL;
}

TEST(fake_gpfifo_full_waits)
{
    struct fake_kmd *k = NULL;
    struct hcq_device *dev = NULL;
    struct hcq_program *prog = NULL;
    struct hcq_queue *q;
    struct hcq_buf *b;
    uint32_t ref[64];
    pthread_t th;
    bool started = false;
    CHECK_OK(fake_open("gh100", false, &k, &dev));
    CHECK_OK(fake_prog(dev, &muladd_desc, &prog));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    CHECK_OK(hcq_buf_alloc(dev, sizeof ref, HCQ_MEM_HOST, &b));
    uint32_t *x = fill_random(b, 64, ref);
    CHECK_OK(hcq_queue_finish(q, HCQ_TIMEOUT_DEFAULT_NS));
    fake_pause(k, true);
    struct fake_resume r = {k};
    CHECKF(pthread_create(&th, NULL, fake_resume_later, &r) == 0, "pthread_create");
    started = true;
    uint64_t t0 = hcq_time_ns();
    for (int s = 0; s < 1500; s++) {
        struct muladd_params p = {hcq_buf_va(b), 64, (uint32_t)th_rand()};
        CHECK_OK(hcq_queue_launch(q, prog, one3, one3, &p, sizeof p));
        ref_muladd(ref, 64, p.k);
        CHECK_OK(hcq_queue_submit(q));
    }
    uint64_t dt = hcq_time_ns() - t0;
    CHECK_OK(hcq_queue_finish(q, HCQ_TIMEOUT_DEFAULT_NS));
    CHECKF(dt >= 100 * 1000 * 1000ull,
           "1500 submissions took %llu us with the GPU stopped: the full ring did not wait",
           (unsigned long long)(dt / 1000));
    for (uint32_t i = 0; i < 64; i++)
        CHECKF(x[i] == ref[i], "x[%u] = 0x%08x (expected 0x%08x)", i, x[i], ref[i]);
done:
    if (started)
        pthread_join(th, NULL);
    if (k)
        fake_pause(k, false);
    fake_prog_free(prog);
    hcq_device_close(dev);
}

/* A stream submission that ends with a chained launch releases its timeline value from that
 * launch's QMD (pb_build.c pb_end_by_qmd), one that ends with a signal from the pushbuffer;
 * either way every launch ran, in order, and the queue's finish sees them. */
TEST(fake_segment_end_by_qmd)
{
    struct fake_kmd *k = NULL;
    struct hcq_device *dev = NULL;
    struct hcq_program *prog = NULL;
    struct hcq_queue *q;
    struct hcq_buf *b;
    struct hcq_signal *sig = NULL;
    uint32_t ref[64];
    CHECK_OK(fake_open("gh100", false, &k, &dev));
    CHECK_OK(fake_prog(dev, &muladd_desc, &prog));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    CHECK_OK(hcq_signal_create(dev, 0, &sig));
    CHECK_OK(hcq_buf_alloc(dev, sizeof ref, HCQ_MEM_HOST, &b));
    uint32_t *x = fill_random(b, 64, ref);
    CHECK_OK(hcq_queue_finish(q, HCQ_TIMEOUT_DEFAULT_NS));
    uint32_t r0 = atomic_load(&k->qmd_releases);
    for (int s = 0; s < 50; s++) {
        for (int i = 0; i < 1 + s % 3; i++) {
            struct muladd_params p = {hcq_buf_va(b), 64, (uint32_t)th_rand()};
            CHECK_OK(hcq_queue_launch(q, prog, one3, one3, &p, sizeof p));
            ref_muladd(ref, 64, p.k);
        }
        CHECK_OK(hcq_queue_submit(q));
        if (s % 7 == 0)
            CHECK_OK(hcq_queue_finish(q, HCQ_TIMEOUT_DEFAULT_NS));
    }
    CHECK_OK(hcq_queue_finish(q, HCQ_TIMEOUT_DEFAULT_NS));
    CHECKF(atomic_load(&k->qmd_releases) - r0 == 50u, "%u of 50 submissions released by their QMD",
           atomic_load(&k->qmd_releases) - r0);
    for (uint32_t i = 0; i < 64; i++)
        CHECKF(x[i] == ref[i], "x[%u] = 0x%08x (expected 0x%08x)", i, x[i], ref[i]);
    /* a submission that ends with a signal: the host release, no QMD release */
    r0 = atomic_load(&k->qmd_releases);
    struct muladd_params p = {hcq_buf_va(b), 64, 5};
    CHECK_OK(hcq_queue_launch(q, prog, one3, one3, &p, sizeof p));
    ref_muladd(ref, 64, p.k);
    CHECK_OK(hcq_queue_signal(q, sig, 77));
    CHECK_OK(hcq_queue_submit(q));
    CHECK_OK(hcq_signal_wait(sig, 77, HCQ_TIMEOUT_DEFAULT_NS));
    CHECK_OK(hcq_queue_finish(q, HCQ_TIMEOUT_DEFAULT_NS));
    CHECKF(atomic_load(&k->qmd_releases) == r0, "a segment ending with a signal used %u QMD releases",
           atomic_load(&k->qmd_releases) - r0);
    for (uint32_t i = 0; i < 64; i++)
        CHECKF(x[i] == ref[i], "x[%u] = 0x%08x (expected 0x%08x)", i, x[i], ref[i]);
done:
    hcq_signal_destroy(sig);
    fake_prog_free(prog);
    hcq_device_close(dev);
}

/* A stream submission released by its last QMD leaves that grid possibly running (no WFI
 * after it): whatever launches next on the channel - a stream launch, a graph's first launch
 * at a replay, and also a stream launch after a graph was built (building submits nothing
 * and must not clear that state) - must come behind a WFI. The fake GPU faults a SEND_PCAS
 * that follows such a grid without one. */
TEST(fake_launch_after_qmd_release_waits)
{
    struct fake_kmd *k = NULL;
    struct hcq_device *dev = NULL;
    struct hcq_program *prog = NULL;
    struct hcq_queue *q;
    struct hcq_buf *b;
    struct hcq_graph *g = NULL;
    uint32_t ref[64];
    CHECK_OK(fake_open("gh100", false, &k, &dev));
    CHECK_OK(fake_prog(dev, &muladd_desc, &prog));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    CHECK_OK(hcq_buf_alloc(dev, sizeof ref, HCQ_MEM_HOST, &b));
    uint32_t *x = fill_random(b, 64, ref);
    struct muladd_params p = {hcq_buf_va(b), 64, 3};
    /* the graph: two launches */
    CHECK_OK(hcq_graph_begin(q));
    CHECK_OK(hcq_queue_launch(q, prog, one3, one3, &p, sizeof p));
    CHECK_OK(hcq_queue_launch(q, prog, one3, one3, &p, sizeof p));
    CHECK_OK(hcq_graph_end(q, &g));
    for (int round = 0; round < 3; round++) {
        CHECK_OK(hcq_queue_launch(q, prog, one3, one3, &p, sizeof p)); /* stream, ends by QMD */
        ref_muladd(ref, 64, p.k);
        CHECK_OK(hcq_queue_submit(q));
        CHECK_OK(hcq_graph_replay(g)); /* its first launch behind a WFI */
        ref_muladd(ref, 64, p.k);
        ref_muladd(ref, 64, p.k);
        CHECK_OK(hcq_queue_launch(q, prog, one3, one3, &p, sizeof p));
        ref_muladd(ref, 64, p.k);
        CHECK_OK(hcq_queue_submit(q));
        if (round == 1) { /* a graph built while a grid may run, then a stream launch */
            struct hcq_graph *g2 = NULL;
            CHECK_OK(hcq_graph_begin(q));
            CHECK_OK(hcq_queue_launch(q, prog, one3, one3, &p, sizeof p));
            CHECK_OK(hcq_graph_end(q, &g2));
            CHECK_OK(hcq_queue_launch(q, prog, one3, one3, &p, sizeof p));
            ref_muladd(ref, 64, p.k);
            CHECK_OK(hcq_queue_submit(q));
            CHECK_OK(hcq_graph_replay(g2));
            ref_muladd(ref, 64, p.k);
            CHECK_OK(hcq_queue_finish(q, HCQ_TIMEOUT_DEFAULT_NS));
            hcq_graph_destroy(g2);
        }
    }
    CHECK_OK(hcq_queue_finish(q, HCQ_TIMEOUT_DEFAULT_NS));
    for (uint32_t i = 0; i < 64; i++)
        CHECKF(x[i] == ref[i], "x[%u] = 0x%08x (expected 0x%08x)", i, x[i], ref[i]);
done:
    hcq_graph_destroy(g);
    fake_prog_free(prog);
    hcq_device_close(dev);
}

/* Copies on a copy queue, and on a compute queue (copy helper channel) between launches. */
static void
fake_copies_on(struct th *t, bool cpu_copies)
{
    struct fake_kmd *k = NULL;
    struct hcq_device *dev = NULL;
    struct hcq_program *prog = NULL;
    struct hcq_queue *qc, *qx;
    struct hcq_buf *a, *bb, *c, *d;
    struct hcq_signal *sig = NULL;
    uint32_t ref[FAKE_N];
    CHECK_OK(fake_open("gh100", cpu_copies, &k, &dev));
    CHECK_OK(fake_prog(dev, &muladd_desc, &prog));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &qc));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COPY, &qx));
    CHECK_OK(hcq_signal_create(dev, 0, &sig));
    CHECK_OK(hcq_buf_alloc(dev, FAKE_N * 4, HCQ_MEM_HOST, &a));
    CHECK_OK(hcq_buf_alloc(dev, FAKE_N * 4, HCQ_MEM_HOST, &bb));
    CHECK_OK(hcq_buf_alloc(dev, FAKE_N * 4, HCQ_MEM_HOST, &c));
    CHECK_OK(hcq_buf_alloc(dev, FAKE_N * 4, HCQ_MEM_HOST, &d));
    fill_random(a, FAKE_N, ref);
    memset(hcq_buf_map(bb), 0xAB, FAKE_N * 4);
    memset(hcq_buf_map(c), 0xCD, FAKE_N * 4);
    memset(hcq_buf_map(d), 0xEF, FAKE_N * 4);
    for (int round = 0; round < 3; round++) {
        struct muladd_params p = {hcq_buf_va(bb), FAKE_N, (uint32_t)th_rand()};
        CHECK_OK(hcq_queue_copy(qc, bb, 0, round ? c : a, 0, FAKE_N * 4));
        CHECK_OK(hcq_queue_launch(qc, prog, one3, one3, &p, sizeof p));
        CHECK_OK(hcq_queue_launch(qc, prog, one3, one3, &p, sizeof p));
        CHECK_OK(hcq_queue_copy(qc, c, 0, bb, 0, FAKE_N * 4));
        ref_muladd(ref, FAKE_N, p.k);
        ref_muladd(ref, FAKE_N, p.k);
    }
    CHECK_OK(hcq_queue_signal(qc, sig, 1));
    CHECK_OK(hcq_queue_submit(qc));
    CHECK_OK(hcq_queue_wait(qx, sig, 1));
    CHECK_OK(hcq_queue_copy(qx, d, 0, c, 0, FAKE_N * 4));
    CHECK_OK(hcq_queue_finish(qx, HCQ_TIMEOUT_DEFAULT_NS));
    const uint32_t *out = hcq_buf_map(d);
    for (uint32_t i = 0; i < FAKE_N; i++)
        CHECKF(out[i] == ref[i], "d[%u] = 0x%08x (expected 0x%08x)", i, out[i], ref[i]);
    /* copies_by_cpu: only qc's very first copy finds the queue idle with nothing before it
     * (a host memmove); the rest follow launches or a WAIT and go through the copy engine. */
    CHECKF(atomic_load(&k->copies) == (cpu_copies ? 6u : 7u), "%u copy-engine copies",
           atomic_load(&k->copies));
done:
    hcq_signal_destroy(sig);
    fake_prog_free(prog);
    hcq_device_close(dev);
}

TEST(fake_copies)
{
    fake_copies_on(t, false);
}

TEST(fake_copies_by_cpu)
{
    fake_copies_on(t, true);
}

/* copies_by_cpu keeps queue semantics: a copy behind a WAIT on a signal the host sets only
 * after the submit, or behind a launch still running, is queued (the submit returns at
 * once, the copy has not run) and runs in order later; a copy the idle queue can do at once
 * is a host memmove (no copy-engine copy). */
TEST(fake_copies_by_cpu_queue_order)
{
    struct fake_kmd *k = NULL;
    struct hcq_device *dev = NULL;
    struct hcq_program *prog = NULL;
    struct hcq_queue *qs[2];
    struct hcq_buf *a, *b;
    struct hcq_signal *go = NULL, *done = NULL;
    enum { N = 1024 };
    uint32_t ref[N];
    CHECK_OK(fake_open("ga10b", true, &k, &dev));
    CHECK_OK(fake_prog(dev, &muladd_desc, &prog));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &qs[0]));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COPY, &qs[1]));
    CHECK_OK(hcq_signal_create(dev, 0, &go));
    CHECK_OK(hcq_signal_create(dev, 0, &done));
    CHECK_OK(hcq_buf_alloc(dev, N * 4, HCQ_MEM_HOST, &a));
    CHECK_OK(hcq_buf_alloc(dev, N * 4, HCQ_MEM_HOST, &b));
    for (uint64_t qi = 0; qi < 2; qi++) {
        struct hcq_queue *q = qs[qi];
        fill_random(a, N, ref);
        memset(hcq_buf_map(b), 0x5A, N * 4);
        uint32_t ce0 = atomic_load(&k->copies);
        uint64_t t0 = hcq_time_ns();
        CHECK_OK(hcq_queue_wait(q, go, qi + 1));
        CHECK_OK(hcq_queue_copy(q, b, 0, a, 0, N * 4));
        CHECK_OK(hcq_queue_signal(q, done, qi + 1));
        CHECK_OK(hcq_queue_submit(q));
        CHECKF(hcq_time_ns() - t0 < 1000000000ull, "queue %llu: submit blocked %.1f s",
               (unsigned long long)qi, (hcq_time_ns() - t0) / 1e9);
        CHECK(hcq_queue_finish(q, 20 * 1000 * 1000) == HCQ_ERR_TIMEOUT);
        CHECKF(((uint32_t *)hcq_buf_map(b))[0] == 0x5A5A5A5Au, "queue %llu: the copy ran before the wait",
               (unsigned long long)qi);
        hcq_signal_set(go, qi + 1);
        CHECK_OK(hcq_signal_wait(done, qi + 1, HCQ_TIMEOUT_DEFAULT_NS));
        CHECK(memcmp(hcq_buf_map(b), ref, N * 4) == 0);
        CHECKF(atomic_load(&k->copies) == ce0 + 1, "queue %llu: %u copy-engine copies (expected 1)",
               (unsigned long long)qi, atomic_load(&k->copies) - ce0);
        /* idle queue, copy first in its list: done by the CPU during the submit */
        CHECK_OK(hcq_queue_finish(q, HCQ_TIMEOUT_DEFAULT_NS));
        fill_random(a, N, ref);
        CHECK_OK(hcq_queue_copy(q, b, 0, a, 0, N * 4));
        CHECK_OK(hcq_queue_submit(q));
        CHECK(memcmp(hcq_buf_map(b), ref, N * 4) == 0);
        CHECK(atomic_load(&k->copies) == ce0 + 1);
        CHECK_OK(hcq_queue_finish(q, HCQ_TIMEOUT_DEFAULT_NS));
    }
    /* behind a launch the GPU holds back: queued, not waited for in the submit */
    struct pb_queue *pq = pb_queue(qs[0]);
    fill_random(a, N, ref);
    memset(hcq_buf_map(b), 0x5A, N * 4);
    atomic_store(&k->hold_token, pq->main.kc->token);
    struct muladd_params p = {hcq_buf_va(a), N, 77};
    uint64_t t0 = hcq_time_ns();
    CHECK_OK(hcq_queue_launch(qs[0], prog, one3, one3, &p, sizeof p));
    CHECK_OK(hcq_queue_submit(qs[0]));
    CHECK_OK(hcq_queue_copy(qs[0], b, 0, a, 0, N * 4));
    CHECK_OK(hcq_queue_submit(qs[0]));
    CHECKF(hcq_time_ns() - t0 < 1000000000ull, "submit behind a held launch blocked %.1f s",
           (hcq_time_ns() - t0) / 1e9);
    CHECKF(((uint32_t *)hcq_buf_map(b))[0] == 0x5A5A5A5Au, "the copy ran before the launch it follows");
    atomic_store(&k->hold_token, 0);
    CHECK_OK(hcq_queue_finish(qs[0], HCQ_TIMEOUT_DEFAULT_NS));
    ref_muladd(ref, N, 77);
    for (uint32_t i = 0; i < N; i++)
        CHECKF(((uint32_t *)hcq_buf_map(b))[i] == ref[i], "b[%u] = 0x%08x (expected 0x%08x)", i,
               ((uint32_t *)hcq_buf_map(b))[i], ref[i]);
done:
    if (k)
        atomic_store(&k->hold_token, 0);
    hcq_signal_destroy(go);
    hcq_signal_destroy(done);
    fake_prog_free(prog);
    hcq_device_close(dev);
}

/* Cross-queue ordering with 64-bit values across 2^32: the waiting queue does not run early. */
TEST(fake_signals_64bit)
{
    struct fake_kmd *k = NULL;
    struct hcq_device *dev = NULL;
    struct hcq_program *prog = NULL;
    struct hcq_queue *q1, *q2;
    struct hcq_buf *b;
    struct hcq_signal *sig = NULL;
    uint32_t ref[FAKE_N];
    const uint64_t big = 0x100000005ull;
    CHECK_OK(fake_open("gh100", false, &k, &dev));
    CHECK_OK(fake_prog(dev, &muladd_desc, &prog));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q1));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q2));
    CHECK_OK(hcq_signal_create(dev, 0xFFFFFFFFull, &sig));
    CHECK_OK(hcq_buf_alloc(dev, FAKE_N * 4, HCQ_MEM_HOST, &b));
    uint32_t *x = fill_random(b, FAKE_N, ref);
    struct muladd_params p1 = {hcq_buf_va(b), FAKE_N, 11}, p2 = {hcq_buf_va(b), FAKE_N, 22};
    CHECK_OK(hcq_queue_wait(q2, sig, big));
    CHECK_OK(hcq_queue_launch(q2, prog, one3, one3, &p2, sizeof p2));
    CHECK_OK(hcq_queue_submit(q2));
    /* 0xFFFFFFFF < big even though its low word is larger: q2 must stay blocked. */
    CHECK(hcq_queue_finish(q2, 20 * 1000 * 1000) == HCQ_ERR_TIMEOUT);
    CHECK(x[0] == ref[0]);
    CHECK_OK(hcq_queue_launch(q1, prog, one3, one3, &p1, sizeof p1));
    CHECK_OK(hcq_queue_signal(q1, sig, big));
    CHECK_OK(hcq_queue_submit(q1));
    CHECK_OK(hcq_queue_finish(q2, HCQ_TIMEOUT_DEFAULT_NS));
    ref_muladd(ref, FAKE_N, 11);
    ref_muladd(ref, FAKE_N, 22);
    for (uint32_t i = 0; i < FAKE_N; i++)
        CHECKF(x[i] == ref[i], "x[%u] = 0x%08x (expected 0x%08x)", i, x[i], ref[i]);
    CHECK(hcq_signal_value(sig) == big);
done:
    hcq_signal_destroy(sig);
    fake_prog_free(prog);
    hcq_device_close(dev);
}

/* A timestamp writes the device time and leaves the signal's value as it was. */
TEST(fake_timestamp)
{
    struct fake_kmd *k = NULL;
    struct hcq_device *dev = NULL;
    struct hcq_queue *q;
    struct hcq_signal *sig = NULL;
    CHECK_OK(fake_open("ga10b", false, &k, &dev));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    CHECK_OK(hcq_signal_create(dev, 7, &sig));
    uint64_t t0 = hcq_time_ns();
    CHECK_OK(hcq_queue_timestamp(q, sig));
    CHECK_OK(hcq_queue_finish(q, HCQ_TIMEOUT_DEFAULT_NS));
    uint64_t ts1 = hcq_signal_timestamp_ns(sig);
    CHECKF(hcq_signal_value(sig) == 7, "value %llu (expected 7)", (unsigned long long)hcq_signal_value(sig));
    CHECKF(ts1 >= t0 && ts1 <= hcq_time_ns(), "timestamp %llu outside [%llu, now]", (unsigned long long)ts1,
           (unsigned long long)t0);
    CHECK_OK(hcq_queue_signal(q, sig, 9));
    CHECK_OK(hcq_queue_barrier(q));
    CHECK_OK(hcq_queue_timestamp(q, sig));
    CHECK_OK(hcq_queue_finish(q, HCQ_TIMEOUT_DEFAULT_NS));
    CHECK(hcq_signal_value(sig) == 9);
    CHECK(hcq_signal_timestamp_ns(sig) >= ts1);
done:
    hcq_signal_destroy(sig);
    hcq_device_close(dev);
}

/* A graph with variables in a kernel argument, a grid size and signal values, replayed with
 * host checks after each replay, then 200 times back to back (double-buffered patching). */
static void
fake_graph_on(struct th *t, const char *arch)
{
    struct fake_kmd *k = NULL;
    struct hcq_device *dev = NULL;
    struct hcq_program *mul = NULL, *glog = NULL;
    struct hcq_queue *q;
    struct hcq_buf *b, *lg;
    struct hcq_signal *go = NULL, *done_sig = NULL;
    struct hcq_graph *g = NULL;
    uint32_t ref[FAKE_N];
    CHECK_OK(fake_open(arch, false, &k, &dev));
    CHECK_OK(fake_prog(dev, &muladd_desc, &mul));
    CHECK_OK(fake_prog(dev, &gridlog_desc, &glog));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    CHECK_OK(hcq_signal_create(dev, 0, &go));
    CHECK_OK(hcq_signal_create(dev, 0, &done_sig));
    CHECK_OK(hcq_buf_alloc(dev, FAKE_N * 4, HCQ_MEM_HOST, &b));
    CHECK_OK(hcq_buf_alloc(dev, 64, HCQ_MEM_HOST, &lg));
    uint32_t *x = fill_random(b, FAKE_N, ref);
    uint32_t *log = hcq_buf_map(lg);
    memset(log, 0, 64);
    uint32_t v_step, v_k, v_grid;
    CHECK_OK(hcq_graph_begin(q));
    CHECK_OK(hcq_graph_var(q, &v_step));
    CHECK_OK(hcq_graph_var(q, &v_k));
    CHECK_OK(hcq_graph_var(q, &v_grid));
    CHECK_OK(hcq_queue_wait_var(q, go, v_step, 0));
    struct muladd_params p = {hcq_buf_va(b), FAKE_N, 0};
    struct hcq_arg_patch patch = {v_k, offsetof(struct muladd_params, k), 4};
    struct hcq_launch l = {.prog = mul,
                           .grid = {1, 1, 1},
                           .block = {32, 1, 1},
                           .args = &p,
                           .args_B = sizeof p,
                           .grid_var = {HCQ_VAR_NONE, HCQ_VAR_NONE, HCQ_VAR_NONE},
                           .patches = &patch,
                           .patch_count = 1};
    CHECK_OK(hcq_queue_launch_ex(q, &l));
    CHECK_OK(hcq_queue_launch_ex(q, &l));
    struct gridlog_params gp = {hcq_buf_va(lg)};
    struct hcq_launch l2 = {.prog = glog,
                            .grid = {0, 1, 0},
                            .block = {8, 2, 1},
                            .args = &gp,
                            .args_B = sizeof gp,
                            .grid_var = {v_grid, HCQ_VAR_NONE, v_grid}};
    CHECK_OK(hcq_queue_launch_ex(q, &l2));
    CHECK_OK(hcq_queue_signal_var(q, done_sig, v_step, 1));
    CHECK_OK(hcq_graph_end(q, &g));
    for (uint32_t i = 1; i <= 240; i++) {
        uint32_t kk = (uint32_t)th_rand(), gsz = 1 + i % 7;
        CHECK_OK(hcq_graph_set(g, v_step, i));
        CHECK_OK(hcq_graph_set(g, v_k, kk));
        CHECK_OK(hcq_graph_set(g, v_grid, gsz));
        ref_muladd(ref, FAKE_N, kk);
        ref_muladd(ref, FAKE_N, kk);
        CHECK_OK(hcq_graph_replay(g));
        hcq_signal_set(go, i);
        if (i <= 40) {
            CHECK_OK(hcq_signal_wait(done_sig, i + 1, HCQ_TIMEOUT_DEFAULT_NS));
            CHECKF(log[0] == gsz && log[1] == 1 && log[2] == gsz && log[3] == 8 && log[4] == 2 && log[6] == i,
                   "replay %u: grid %u,%u,%u block %u,%u count %u (expected grid %u,1,%u block 8,2 count %u)",
                   i, log[0], log[1], log[2], log[3], log[4], log[6], gsz, gsz, i);
            for (uint32_t j = 0; j < FAKE_N; j++)
                CHECKF(x[j] == ref[j], "replay %u: x[%u] = 0x%08x (expected 0x%08x)", i, j, x[j], ref[j]);
        }
    }
    CHECK_OK(hcq_queue_finish(q, HCQ_TIMEOUT_DEFAULT_NS));
    CHECK(hcq_signal_value(done_sig) == 241);
    CHECK(log[6] == 240);
    /* cbuf0 prefetch: every QMD on V4 (gh100), none on V3 (no such field) */
    CHECKF(atomic_load(&k->cbuf0_prefetched) == (strcmp(arch, "gh100") ? 0u : 3u * 240u),
           "%s: %u QMDs with cbuf0 prefetch", arch, atomic_load(&k->cbuf0_prefetched));
    for (uint32_t j = 0; j < FAKE_N; j++)
        CHECKF(x[j] == ref[j], "x[%u] = 0x%08x (expected 0x%08x)", j, x[j], ref[j]);
done:
    hcq_graph_destroy(g);
    hcq_signal_destroy(go);
    hcq_signal_destroy(done_sig);
    fake_prog_free(mul);
    fake_prog_free(glog);
    hcq_device_close(dev);
}

TEST(fake_graph_v4)
{
    fake_graph_on(t, "gh100");
}

TEST(fake_graph_v3)
{
    fake_graph_on(t, "ga10b");
}

/* A graph that copies on a compute queue uses the copy helper channel at every replay. */
TEST(fake_graph_copies)
{
    struct fake_kmd *k = NULL;
    struct hcq_device *dev = NULL;
    struct hcq_program *mul = NULL;
    struct hcq_queue *q;
    struct hcq_buf *a, *b;
    struct hcq_graph *g = NULL;
    uint32_t ref[FAKE_N];
    CHECK_OK(fake_open("ga102", false, &k, &dev));
    CHECK_OK(fake_prog(dev, &muladd_desc, &mul));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    CHECK_OK(hcq_buf_alloc(dev, FAKE_N * 4, HCQ_MEM_HOST, &a));
    CHECK_OK(hcq_buf_alloc(dev, FAKE_N * 4, HCQ_MEM_HOST, &b));
    fill_random(a, FAKE_N, ref);
    CHECK_OK(hcq_graph_begin(q));
    struct muladd_params p = {hcq_buf_va(b), FAKE_N, 5};
    CHECK_OK(hcq_queue_copy(q, b, 0, a, 0, FAKE_N * 4));
    CHECK_OK(hcq_queue_launch(q, mul, one3, one3, &p, sizeof p));
    CHECK_OK(hcq_queue_copy(q, a, 0, b, 0, FAKE_N * 4));
    CHECK_OK(hcq_graph_end(q, &g));
    for (int i = 0; i < 50; i++) {
        CHECK_OK(hcq_graph_replay(g));
        ref_muladd(ref, FAKE_N, 5);
    }
    CHECK_OK(hcq_queue_finish(q, HCQ_TIMEOUT_DEFAULT_NS));
    const uint32_t *out = hcq_buf_map(a);
    for (uint32_t j = 0; j < FAKE_N; j++)
        CHECKF(out[j] == ref[j], "a[%u] = 0x%08x (expected 0x%08x)", j, out[j], ref[j]);
done:
    hcq_graph_destroy(g);
    fake_prog_free(mul);
    hcq_device_close(dev);
}

/* Queue order across submissions and channels: a copy recorded on a compute queue after a
 * launch (in a later submission) runs on the copy helper, yet not before the launch. */
TEST(fake_copy_after_launch_waits)
{
    struct fake_kmd *k = NULL;
    struct hcq_device *dev = NULL;
    struct hcq_program *prog = NULL;
    struct hcq_queue *q;
    struct hcq_buf *a, *b;
    uint32_t ref[64];
    CHECK_OK(fake_open("gh100", false, &k, &dev));
    CHECK_OK(fake_prog(dev, &muladd_desc, &prog));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    CHECK_OK(hcq_buf_alloc(dev, sizeof ref, HCQ_MEM_HOST, &a));
    CHECK_OK(hcq_buf_alloc(dev, sizeof ref, HCQ_MEM_HOST, &b));
    fill_random(a, 64, ref);
    memset(hcq_buf_map(b), 0x5A, sizeof ref);
    /* make the copy helper exist first, then hold the compute channel */
    CHECK_OK(hcq_queue_copy(q, b, 0, b, 0, 4));
    CHECK_OK(hcq_queue_finish(q, HCQ_TIMEOUT_DEFAULT_NS));
    struct pb_queue *pq = pb_queue(q);
    atomic_store(&k->hold_token, pq->main.kc->token);
    struct muladd_params p = {hcq_buf_va(a), 64, 77};
    CHECK_OK(hcq_queue_launch(q, prog, one3, one3, &p, sizeof p));
    CHECK_OK(hcq_queue_submit(q));
    CHECK_OK(hcq_queue_copy(q, b, 0, a, 0, sizeof ref));
    CHECK_OK(hcq_queue_submit(q));
    CHECK(hcq_queue_finish(q, 20 * 1000 * 1000) == HCQ_ERR_TIMEOUT);
    CHECKF(((uint32_t *)hcq_buf_map(b))[0] == 0x5A5A5A5Au, "the copy ran before the launch it follows");
    atomic_store(&k->hold_token, 0);
    CHECK_OK(hcq_queue_finish(q, HCQ_TIMEOUT_DEFAULT_NS));
    ref_muladd(ref, 64, 77);
    for (uint32_t i = 0; i < 64; i++)
        CHECKF(((uint32_t *)hcq_buf_map(b))[i] == ref[i], "b[%u] = 0x%08x (expected 0x%08x)", i,
               ((uint32_t *)hcq_buf_map(b))[i], ref[i]);
done:
    fake_prog_free(prog);
    hcq_device_close(dev);
}

/* Queues come and go; their channels are reused (no new kmd channel after the first). */
TEST(fake_channel_reuse)
{
    struct fake_kmd *k = NULL;
    struct hcq_device *dev = NULL;
    struct hcq_program *prog = NULL;
    struct hcq_buf *b;
    uint32_t ref[64];
    CHECK_OK(fake_open("gh100", false, &k, &dev));
    CHECK_OK(fake_prog(dev, &muladd_desc, &prog));
    CHECK_OK(hcq_buf_alloc(dev, sizeof ref, HCQ_MEM_HOST, &b));
    uint32_t *x = fill_random(b, 64, ref);
    for (int i = 0; i < 6; i++) {
        struct hcq_queue *q, *qc;
        CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
        CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COPY, &qc));
        struct muladd_params p = {hcq_buf_va(b), 64, (uint32_t)th_rand()};
        CHECK_OK(hcq_queue_launch(q, prog, one3, one3, &p, sizeof p));
        ref_muladd(ref, 64, p.k);
        CHECK_OK(hcq_queue_finish(q, HCQ_TIMEOUT_DEFAULT_NS));
        CHECK_OK(hcq_queue_barrier(qc));
        CHECK_OK(hcq_queue_finish(qc, HCQ_TIMEOUT_DEFAULT_NS));
        hcq_queue_destroy(q);
        hcq_queue_destroy(qc);
    }
    CHECKF(atomic_load(&k->chan_creates) == 2, "%u kmd channels created (expected 2)",
           atomic_load(&k->chan_creates));
    for (uint32_t i = 0; i < 64; i++)
        CHECKF(x[i] == ref[i], "x[%u] = 0x%08x (expected 0x%08x)", i, x[i], ref[i]);
done:
    fake_prog_free(prog);
    hcq_device_close(dev);
}

/* A short wait on a stalled GPU is a timeout naming the channel state, not a lost device;
 * a fault reported by the driver is a lost device with its reason. */
int
main(int argc, char **argv)
{
    static const struct th_case cases[] = {
        TH_CASE(gpfifo_free_wraparound),
        TH_CASE(ring_recycles_only_behind_fences),
        TH_CASE(ring_limits),
        TH_CASE(ring_fence_fifo_full),
        TH_CASE(fake_launch_chain),
        TH_CASE(fake_timestamp_launch_keeps_chain),
        TH_CASE(fake_huge_submission),
        TH_CASE(fake_stream_wraparound),
        TH_CASE(fake_gpfifo_full_waits),
        TH_CASE(fake_segment_end_by_qmd),
        TH_CASE(fake_launch_after_qmd_release_waits),
        TH_CASE(fake_copies),
        TH_CASE(fake_copies_by_cpu),
        TH_CASE(fake_copies_by_cpu_queue_order),
        TH_CASE(fake_signals_64bit),
        TH_CASE(fake_timestamp),
        TH_CASE(fake_graph_v4),
        TH_CASE(fake_graph_v3),
        TH_CASE(fake_graph_copies),
        TH_CASE(fake_copy_after_launch_waits),
        TH_CASE(fake_channel_reuse),
    };
    return th_run("engine", NULL, cases, TH_COUNT(cases), argc - 1, argv + 1) ? 1 : 0;
}
