/* SPDX-License-Identifier: MIT */
/*
 * hcq_suite.c - the HCQ suite: the runtime's behaviour on one device, named by
 * `--dev SPEC` (cpu, emu:gh100, cuda:0, rm:0, ...), one body per test, as tinygrad's
 * test_hcq covers it: signals, waits (also set late), kernel execution and ordering,
 * argument updates (graph patches, fuzzed against the CPU twin), copies (small, long,
 * > 4 GiB, from host memory), barriers, 64-bit timelines, host memory import, graphs,
 * cross-queue hand-offs. Error paths and device loss: hcq_suite_errors.c. Copies, barriers and host memory:
 * hcq_suite_mem.c; kernel-library tests: hcq_suite_kernels.c. Every result is compared with a host-computed
 * expectation.
 *
 *   build/tests/hcq_suite --dev SPEC [--dev2 SPEC] [--slow] [--klog] [name-filter...]
 * Graph-copy and pruning tests: hcq_suite_graph.c; device-pair tests: hcq_suite_multi.c;
 * selection/comparison/integer kernels and max/min reductions: hcq_suite_ops.c; conv2d,
 * pooling and the small models: hcq_suite_conv.c; local memory shared by a device's queues:
 * hcq_suite_lmem.c; opt-in stress tests: hcq_suite_stress.c;
 * the per-test kernel-log check: hcq_suite_klog.c.
 */
#include "hcq_suite.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *suite_dev2_spec;

static void
suite_sleep_ms(unsigned ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* ==== Signals and waits ==== */

TEST(signal)
{
    struct hcq_device *dev = NULL;
    struct hcq_queue *q = NULL, *cq = NULL;
    struct hcq_signal *s = NULL, *ts = NULL;
    CHECK_OK(hcq_device_open(t->dev_spec, &dev));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COPY, &cq));
    CHECK_OK(hcq_signal_create(dev, 0, &s));
    CHECK_OK(hcq_signal_create(dev, 0, &ts));
    uint64_t v = 1 + (th_rand() >> 8);
    CHECK_OK(hcq_queue_signal(q, s, v));
    CHECK_OK(hcq_queue_submit(q));
    CHECK_OK(hcq_signal_wait(s, v, SUITE_TIMEOUT_NS));
    CHECKF(hcq_signal_value(s) == v, "compute queue signal: 0x%llx (expected 0x%llx)",
           (unsigned long long)hcq_signal_value(s), (unsigned long long)v);
    /* copy queues signal too */
    CHECK_OK(hcq_queue_signal(cq, s, v + 1));
    CHECK_OK(hcq_queue_submit(cq));
    CHECK_OK(hcq_signal_wait(s, v + 1, SUITE_TIMEOUT_NS));
    CHECK(hcq_signal_value(s) == v + 1);
    /* timestamps: written after earlier work, non-zero, monotonic */
    CHECK_OK(hcq_queue_timestamp(q, ts));
    CHECK_OK(hcq_queue_signal(q, ts, 1));
    CHECK_OK(hcq_queue_finish(q, SUITE_TIMEOUT_NS));
    uint64_t t0 = hcq_signal_timestamp_ns(ts);
    CHECK_OK(hcq_queue_timestamp(q, ts));
    CHECK_OK(hcq_queue_signal(q, ts, 2));
    CHECK_OK(hcq_queue_finish(q, SUITE_TIMEOUT_NS));
    uint64_t t1 = hcq_signal_timestamp_ns(ts);
    CHECKF(t0 != 0 && t1 >= t0, "timestamps 0x%llx then 0x%llx (expected non-zero, monotonic)",
           (unsigned long long)t0, (unsigned long long)t1);
done:
    hcq_signal_destroy(ts);
    hcq_signal_destroy(s);
    hcq_queue_destroy(cq);
    hcq_queue_destroy(q);
    hcq_device_close(dev);
}

/* The field's 40bit_va_boundary: many signals (several pages of the signal pool) and many
 * buffers of mixed sizes. Every signal is released by a queue and seen by the host, and on
 * rm, nvgpu and the emulators its address is below 2^40 (Ampere host semaphores carry 40 address bits,
 * rm.md §5.4, so the pool must stay low however far it grows); every buffer gets a VA range
 * of its own (no overlap) and a kernel fill reaches its first and last word. */
TEST(va_40bit_many)
{
    enum { NS = 700, NB = 96 };
    struct hcq_device *dev = NULL;
    struct hcq_queue *q = NULL;
    struct hcq_program *fill = NULL;
    struct hcq_signal *sig[NS] = {0};
    struct hcq_buf *buf[NB] = {0};
    uint64_t size[NB];
    struct hcq_device_info info;
    CHECK_OK(hcq_device_open(t->dev_spec, &dev));
    CHECK_OK(hcq_device_info(dev, &info));
    /* the pushbuffer engine's backends (cuda signals are host memory at its UVA address) */
    const bool gpu_va =
        !strcmp(info.backend, "rm") || !strcmp(info.backend, "nvgpu") || !strcmp(info.backend, "emu");
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    CHECK_OK(hcq_program_load(dev, "k_fill_u32", &fill));
    for (int i = 0; i < NS; i++) {
        CHECK_OK(hcq_signal_create(dev, 0, &sig[i]));
        CHECK_OK(hcq_queue_signal(q, sig[i], 1000 + (uint64_t)i));
        if (gpu_va)
            CHECKF(hcq_signal_va(sig[i]) >> 40 == 0, "signal %d at 0x%llx (>= 2^40)", i,
                   (unsigned long long)hcq_signal_va(sig[i]));
    }
    for (int i = 0; i < NB; i++) {
        size[i] = 4ull << (th_rand() % 20); /* 4 B .. 2 MiB */
        size[i] += 4 * (th_rand() % 64);
        CHECK_OK(hcq_buf_alloc(dev, size[i], HCQ_MEM_DEVICE, &buf[i]));
        CHECK_OK(ops_launch_fill_u32(q, fill, buf[i], size[i] / 4, 0xC0DE0000u + (uint32_t)i));
        for (int j = 0; j < i; j++) {
            uint64_t a = hcq_buf_va(buf[i]), b = hcq_buf_va(buf[j]);
            CHECKF(a + size[i] <= b || b + size[j] <= a,
                   "buffers %d and %d overlap: 0x%llx+%llu, 0x%llx+%llu", i, j, (unsigned long long)a,
                   (unsigned long long)size[i], (unsigned long long)b, (unsigned long long)size[j]);
        }
    }
    CHECK_OK(hcq_queue_finish(q, SUITE_TIMEOUT_NS));
    for (int i = 0; i < NS; i++)
        CHECKF(hcq_signal_value(sig[i]) == 1000 + (uint64_t)i, "signal %d = %llu", i,
               (unsigned long long)hcq_signal_value(sig[i]));
    for (int i = 0; i < NB; i++) {
        uint32_t first = 0, last = 0;
        CHECK_OK(hcq_buf_read(buf[i], 0, &first, 4));
        CHECK_OK(hcq_buf_read(buf[i], size[i] - 4, &last, 4));
        CHECKF(first == 0xC0DE0000u + (uint32_t)i && last == first, "buffer %d (%llu B): 0x%08x .. 0x%08x", i,
               (unsigned long long)size[i], first, last);
    }
done:
    for (int i = 0; i < NB; i++)
        hcq_buf_free(buf[i]);
    for (int i = 0; i < NS; i++)
        hcq_signal_destroy(sig[i]);
    hcq_program_destroy(fill);
    hcq_queue_destroy(q);
    hcq_device_close(dev);
}

/* The same queue signals a new value each submission; the host sees each exactly. */
TEST(signal_update)
{
    struct hcq_device *dev = NULL;
    struct hcq_queue *q = NULL;
    struct hcq_signal *s = NULL;
    CHECK_OK(hcq_device_open(t->dev_spec, &dev));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    CHECK_OK(hcq_signal_create(dev, 0, &s));
    for (uint64_t i = 1; i <= 200; i++) {
        CHECK_OK(hcq_queue_signal(q, s, i * 3));
        CHECK_OK(hcq_queue_submit(q));
        CHECK_OK(hcq_signal_wait(s, i * 3, SUITE_TIMEOUT_NS));
        CHECKF(hcq_signal_value(s) == i * 3, "step %llu: value %llu (expected %llu)", (unsigned long long)i,
               (unsigned long long)hcq_signal_value(s), (unsigned long long)(i * 3));
    }
    /* a host write is seen by the next queue wait and signal */
    hcq_signal_set(s, 7);
    CHECK(hcq_signal_value(s) == 7);
done:
    hcq_signal_destroy(s);
    hcq_queue_destroy(q);
    hcq_device_close(dev);
}

/* The host sets the signal first; the queue's wait passes at once. */
TEST(wait)
{
    struct hcq_device *dev = NULL;
    struct hcq_queue *q = NULL;
    struct hcq_signal *s = NULL, *done_sig = NULL;
    CHECK_OK(hcq_device_open(t->dev_spec, &dev));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    CHECK_OK(hcq_signal_create(dev, 0, &s));
    CHECK_OK(hcq_signal_create(dev, 0, &done_sig));
    hcq_signal_set(s, 1);
    CHECK_OK(hcq_queue_wait(q, s, 1));
    CHECK_OK(hcq_queue_signal(q, done_sig, 1));
    CHECK_OK(hcq_queue_submit(q));
    CHECK_OK(hcq_signal_wait(done_sig, 1, SUITE_TIMEOUT_NS));
    /* a wait for an already exceeded value passes too (>=, not ==) */
    hcq_signal_set(s, 100);
    CHECK_OK(hcq_queue_wait(q, s, 50));
    CHECK_OK(hcq_queue_signal(q, done_sig, 2));
    CHECK_OK(hcq_queue_submit(q));
    CHECK_OK(hcq_signal_wait(done_sig, 2, SUITE_TIMEOUT_NS));
done:
    hcq_signal_destroy(done_sig);
    hcq_signal_destroy(s);
    hcq_queue_destroy(q);
    hcq_device_close(dev);
}

/* The queue waits on a value the host, then another queue, sets only later. */
TEST(wait_late_set)
{
    struct hcq_device *dev = NULL;
    struct hcq_queue *q = NULL, *q2 = NULL;
    struct hcq_signal *s = NULL, *done_sig = NULL;
    CHECK_OK(hcq_device_open(t->dev_spec, &dev));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q2));
    CHECK_OK(hcq_signal_create(dev, 0, &s));
    CHECK_OK(hcq_signal_create(dev, 0, &done_sig));
    CHECK_OK(hcq_queue_wait(q, s, 5));
    CHECK_OK(hcq_queue_signal(q, done_sig, 1));
    CHECK_OK(hcq_queue_submit(q));
    suite_sleep_ms(30);
    CHECKF(hcq_signal_value(done_sig) == 0, "queue passed a wait for 5 while the signal was %llu",
           (unsigned long long)hcq_signal_value(s));
    hcq_signal_set(s, 4); /* not enough */
    suite_sleep_ms(20);
    CHECK(hcq_signal_value(done_sig) == 0);
    hcq_signal_set(s, 5);
    CHECK_OK(hcq_signal_wait(done_sig, 1, SUITE_TIMEOUT_NS));
    /* set by another queue, submitted after the waiter */
    CHECK_OK(hcq_queue_wait(q, s, 10));
    CHECK_OK(hcq_queue_signal(q, done_sig, 2));
    CHECK_OK(hcq_queue_submit(q));
    suite_sleep_ms(20);
    CHECK(hcq_signal_value(done_sig) == 1);
    CHECK_OK(hcq_queue_signal(q2, s, 10));
    CHECK_OK(hcq_queue_submit(q2));
    CHECK_OK(hcq_signal_wait(done_sig, 2, SUITE_TIMEOUT_NS));
done:
    hcq_signal_destroy(done_sig);
    hcq_signal_destroy(s);
    hcq_queue_destroy(q2);
    hcq_queue_destroy(q);
    hcq_device_close(dev);
}

/* 64-bit timeline values: signalling across 2^32, and a wait that a 32-bit comparison
 * would pass too early (low word of the signal above the low word of the target). */
TEST(timeline_cross_2_32)
{
    struct hcq_device *dev = NULL;
    struct hcq_queue *q = NULL;
    struct hcq_signal *s = NULL, *done_sig = NULL;
    const uint64_t base = (1ull << 32) - 2;
    CHECK_OK(hcq_device_open(t->dev_spec, &dev));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    CHECK_OK(hcq_signal_create(dev, base, &s));
    CHECK_OK(hcq_signal_create(dev, 0, &done_sig));
    for (uint64_t v = base + 1; v <= base + 4; v++) {
        CHECK_OK(hcq_queue_signal(q, s, v));
        CHECK_OK(hcq_queue_submit(q));
        CHECK_OK(hcq_signal_wait(s, v, SUITE_TIMEOUT_NS));
        CHECKF(hcq_signal_value(s) == v, "signal 0x%llx (expected 0x%llx)",
               (unsigned long long)hcq_signal_value(s), (unsigned long long)v);
    }
    hcq_signal_set(s, 0xfffffff0ull);
    CHECK_OK(hcq_queue_wait(q, s, (1ull << 32) + 1));
    CHECK_OK(hcq_queue_signal(q, done_sig, (3ull << 32) + 7));
    CHECK_OK(hcq_queue_submit(q));
    suite_sleep_ms(30);
    CHECKF(hcq_signal_value(done_sig) == 0, "wait for 0x100000001 passed at 0xfffffff0 (32-bit compare?)");
    /* the host's own wait must not pass early either */
    CHECK(hcq_signal_wait(s, (1ull << 32) + 1, 1000000) == HCQ_ERR_TIMEOUT);
    hcq_signal_set(s, (1ull << 32) + 1);
    CHECK_OK(hcq_signal_wait(done_sig, (3ull << 32) + 7, SUITE_TIMEOUT_NS));
    CHECK(hcq_signal_value(done_sig) == (3ull << 32) + 7);
done:
    hcq_signal_destroy(done_sig);
    hcq_signal_destroy(s);
    hcq_queue_destroy(q);
    hcq_device_close(dev);
}

/* ==== Kernel execution ==== */

TEST(exec_one_kernel)
{
    struct hcq_device *dev = NULL;
    struct hcq_queue *q = NULL;
    struct hcq_program *prog = NULL;
    struct hcq_buf *b = NULL;
    uint32_t *host = NULL;
    const uint64_t n = 1000 + th_rand() % 5000;
    const uint32_t value = (uint32_t)th_rand();
    CHECK_OK(hcq_device_open(t->dev_spec, &dev));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    CHECK_OK(hcq_program_load(dev, "k_fill_u32", &prog));
    CHECK_OK(suite_buf(dev, (n + 64) * 4, HCQ_MEM_DEVICE, NULL, SUITE_POISON, &b));
    CHECK_OK(ops_launch_fill_u32(q, prog, b, n, value));
    CHECK_OK(hcq_queue_finish(q, SUITE_TIMEOUT_NS));
    CHECK(host = malloc((n + 64) * 4));
    CHECK_OK(hcq_buf_read(b, 0, host, (n + 64) * 4));
    for (uint64_t i = 0; i < n + 64; i++) {
        uint32_t want = i < n ? value : 0xABABABABu;
        CHECKF(host[i] == want, "x[%llu] = 0x%08x (expected 0x%08x)", (unsigned long long)i, host[i], want);
    }
done:
    free(host);
    hcq_buf_free(b);
    hcq_program_destroy(prog);
    hcq_queue_destroy(q);
    hcq_device_close(dev);
}

/* hcq_queue_timestamp_launch: 40 launches in one submission (x*3+i, non-commuting, so the
 * result proves order), each stamped: every stamp is set, in launch order, between a
 * timestamp before and one after; stamped signals keep their values (7 + i, set by the host, and one set by a
 * queue signal earlier in the same submission); refusals when the previous command is no
 * launch. On rm the stamps ride in the QMDs' releases (chains kept), elsewhere they are
 * timestamps. */
TEST(timestamp_launch)
{
    enum { N = 40 };
    struct hcq_device *dev = NULL;
    struct hcq_queue *q = NULL;
    struct hcq_program *pa = NULL;
    struct hcq_buf *x = NULL;
    struct hcq_signal *st[N] = {0}, *t0 = NULL, *t1 = NULL;
    uint64_t *init = NULL, *want = NULL, *got = NULL;
    const uint64_t n = 513 + th_rand() % 1000;
    CHECK_OK(hcq_device_open(t->dev_spec, &dev));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    CHECK_OK(hcq_program_load(dev, "k_axpb_u64", &pa));
    CHECK(init = malloc(n * 8));
    CHECK(want = malloc(n * 8));
    CHECK(got = malloc(n * 8));
    for (uint64_t i = 0; i < n; i++)
        init[i] = want[i] = th_rand();
    CHECK_OK(suite_buf(dev, n * 8, HCQ_MEM_DEVICE, init, 0, &x));
    CHECK_OK(hcq_signal_create(dev, 0, &t0));
    CHECK_OK(hcq_signal_create(dev, 0, &t1));
    for (int i = 0; i < N; i++)
        CHECK_OK(hcq_signal_create(dev, 7 + (uint64_t)i, &st[i]));
    CHECK(hcq_queue_timestamp_launch(q, st[0]) == HCQ_ERR_INVALID);
    CHECK_OK(hcq_queue_timestamp(q, t0));
    CHECK(hcq_queue_timestamp_launch(q, st[0]) == HCQ_ERR_INVALID);
    CHECK_OK(hcq_queue_signal(q, st[N - 1], 1000));
    for (int i = 0; i < N; i++) {
        CHECK_OK(ops_launch_axpb_u64(q, pa, x, n, 3, (uint64_t)i));
        CHECK_OK(hcq_queue_timestamp_launch(q, st[i]));
        for (uint64_t j = 0; j < n; j++)
            want[j] = want[j] * 3 + (uint64_t)i;
    }
    CHECK_OK(hcq_queue_timestamp(q, t1));
    CHECK_OK(hcq_queue_finish(q, SUITE_TIMEOUT_NS));
    CHECK_OK(hcq_buf_read(x, 0, got, n * 8));
    for (uint64_t j = 0; j < n; j++)
        CHECKF(got[j] == want[j], "x[%llu] = %llu (expected %llu)", (unsigned long long)j,
               (unsigned long long)got[j], (unsigned long long)want[j]);
    uint64_t prev = hcq_signal_timestamp_ns(t0), end = hcq_signal_timestamp_ns(t1);
    CHECKF(prev && end >= prev, "timestamps before %llu, after %llu", (unsigned long long)prev,
           (unsigned long long)end);
    for (int i = 0; i < N; i++) {
        uint64_t ts = hcq_signal_timestamp_ns(st[i]), v = hcq_signal_value(st[i]);
        CHECKF(ts >= prev && ts <= end, "launch %d: stamp %llu outside [%llu, %llu] (or before the previous)",
               i, (unsigned long long)ts, (unsigned long long)prev, (unsigned long long)end);
        CHECKF(v == (i == N - 1 ? 1000 : 7 + (uint64_t)i), "launch %d: stamped signal's value %llu", i,
               (unsigned long long)v);
        prev = ts;
    }
done:
    for (int i = 0; i < N; i++)
        hcq_signal_destroy(st[i]);
    hcq_signal_destroy(t0);
    hcq_signal_destroy(t1);
    free(init), free(want), free(got);
    hcq_buf_free(x);
    hcq_program_destroy(pa);
    hcq_queue_destroy(q);
    hcq_device_close(dev);
}

/* Two programs alternating 100 times (200 launches, 100 submissions): x*3+1 and x*5+i do
 * not commute, so the result proves every launch ran once, in order, after the last. */
TEST(exec_2_kernels_100_times)
{
    struct hcq_device *dev = NULL;
    struct hcq_queue *q = NULL;
    struct hcq_program *pa = NULL, *pb = NULL;
    struct hcq_buf *x = NULL;
    struct hcq_signal *s = NULL;
    uint64_t *init = NULL, *got = NULL;
    const uint64_t n = 257 + th_rand() % 2000;
    CHECK_OK(hcq_device_open(t->dev_spec, &dev));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    CHECK_OK(hcq_program_load(dev, "k_axpb_u64", &pa));
    CHECK_OK(hcq_program_load(dev, "k_axpb_u64", &pb));
    CHECK_OK(hcq_signal_create(dev, 0, &s));
    CHECK(init = malloc(n * 8));
    CHECK(got = malloc(n * 8));
    suite_rand_bytes(init, n * 8);
    CHECK_OK(suite_buf(dev, n * 8, HCQ_MEM_DEVICE, init, 0, &x));
    for (uint64_t i = 1; i <= 100; i++) {
        CHECK_OK(ops_launch_axpb_u64(q, pa, x, n, 3, 1));
        CHECK_OK(ops_launch_axpb_u64(q, pb, x, n, 5, i));
        CHECK_OK(hcq_queue_signal(q, s, i));
        CHECK_OK(hcq_queue_submit(q));
    }
    CHECK_OK(hcq_signal_wait(s, 100, SUITE_TIMEOUT_NS));
    CHECK_OK(hcq_buf_read(x, 0, got, n * 8));
    for (uint64_t j = 0; j < n; j++) {
        uint64_t v = init[j];
        for (uint64_t i = 1; i <= 100; i++)
            v = (v * 3 + 1) * 5 + i;
        CHECKF(got[j] == v, "x[%llu] = 0x%llx (expected 0x%llx)", (unsigned long long)j,
               (unsigned long long)got[j], (unsigned long long)v);
    }
done:
    free(got);
    free(init);
    hcq_buf_free(x);
    hcq_signal_destroy(s);
    hcq_program_destroy(pb);
    hcq_program_destroy(pa);
    hcq_queue_destroy(q);
    hcq_device_close(dev);
}

/* One program, launched from several queues (tinygrad's test_bind: a program is not tied
 * to the queue that first used it). */
TEST(bind)
{
    enum { NQ = 3 };
    struct hcq_device *dev = NULL;
    struct hcq_queue *q[NQ] = {0};
    struct hcq_buf *x[NQ] = {0};
    struct hcq_program *prog = NULL;
    uint64_t *got = NULL;
    const uint64_t n = 4096;
    CHECK_OK(hcq_device_open(t->dev_spec, &dev));
    CHECK_OK(hcq_program_load(dev, "k_axpb_u64", &prog));
    CHECK(got = malloc(n * 8));
    for (int i = 0; i < NQ; i++) {
        CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q[i]));
        CHECK_OK(suite_buf(dev, n * 8, HCQ_MEM_DEVICE, NULL, 0, &x[i])); /* zeros: x = add */
    }
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < NQ; i++)
            CHECK_OK(ops_launch_axpb_u64(q[i], prog, x[i], n, 0, 1000 * (uint64_t)round + (uint64_t)i));
        for (int i = 0; i < NQ; i++)
            CHECK_OK(hcq_queue_submit(q[i]));
        for (int i = 0; i < NQ; i++) {
            CHECK_OK(hcq_queue_finish(q[i], SUITE_TIMEOUT_NS));
            CHECK_OK(hcq_buf_read(x[i], 0, got, n * 8));
            for (uint64_t j = 0; j < n; j++)
                CHECKF(got[j] == 1000 * (uint64_t)round + (uint64_t)i, "round %d queue %d x[%llu] = %llu",
                       round, i, (unsigned long long)j, (unsigned long long)got[j]);
        }
    }
done:
    free(got);
    for (int i = 0; i < NQ; i++) {
        hcq_buf_free(x[i]);
        hcq_queue_destroy(q[i]);
    }
    hcq_program_destroy(prog);
    hcq_device_close(dev);
}

/* Patch a recorded launch's arguments (value, count, destination address) and grid
 * through graph variables, resubmit, and check each result (tinygrad test_exec_update). */
TEST(exec_update)
{
    enum { NB = 3 };
    struct hcq_device *dev = NULL;
    struct hcq_queue *q = NULL;
    struct hcq_program *prog = NULL;
    struct hcq_buf *b[NB] = {0};
    struct hcq_graph *g = NULL;
    uint32_t *host = NULL, *mirror[NB] = {0};
    const uint64_t cap = 3000;
    uint32_t v_val, v_n, v_dst, v_grid;
    CHECK_OK(hcq_device_open(t->dev_spec, &dev));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    CHECK_OK(hcq_program_load(dev, "k_fill_u32", &prog));
    CHECK(host = malloc(cap * 4));
    for (int i = 0; i < NB; i++) {
        CHECK_OK(suite_buf(dev, cap * 4, HCQ_MEM_DEVICE, NULL, SUITE_POISON, &b[i]));
        CHECK(mirror[i] = malloc(cap * 4));
        memset(mirror[i], SUITE_POISON, cap * 4);
    }
    CHECK_OK(hcq_graph_begin(q));
    CHECK_OK(hcq_graph_var(q, &v_val));
    CHECK_OK(hcq_graph_var(q, &v_n));
    CHECK_OK(hcq_graph_var(q, &v_dst));
    CHECK_OK(hcq_graph_var(q, &v_grid));
    struct k_fill_u32_params p = {.dst_va = hcq_buf_va(b[0]), .n = 1, .value = 0};
    const struct hcq_arg_patch patches[] = {
        {v_val, offsetof(struct k_fill_u32_params, value), 4},
        {v_n, offsetof(struct k_fill_u32_params, n), 8},
        {v_dst, offsetof(struct k_fill_u32_params, dst_va), 8},
    };
    struct hcq_launch l = {
        .prog = prog,
        .grid = {0, 1, 1}, /* 0: grid[0] is v_grid's value at each replay */
        .block = {64, 1, 1},
        .args = &p,
        .args_B = sizeof p,
        .grid_var = {v_grid, HCQ_VAR_NONE, HCQ_VAR_NONE},
        .patches = patches,
        .patch_count = 3,
    };
    CHECK_OK(hcq_queue_launch_ex(q, &l));
    CHECK_OK(hcq_graph_end(q, &g));
    for (int it = 0; it < 24; it++) {
        int which = (int)(th_rand() % NB);
        uint64_t n = 1 + th_rand() % cap;
        uint32_t value = (uint32_t)th_rand();
        CHECK_OK(hcq_graph_set(g, v_val, value));
        CHECK_OK(hcq_graph_set(g, v_n, n));
        CHECK_OK(hcq_graph_set(g, v_dst, hcq_buf_va(b[which])));
        CHECK_OK(hcq_graph_set(g, v_grid, 1 + th_rand() % 40));
        CHECK_OK(hcq_graph_replay(g));
        CHECK_OK(hcq_queue_finish(q, SUITE_TIMEOUT_NS));
        for (uint64_t i = 0; i < n; i++)
            mirror[which][i] = value;
        for (int k = 0; k < NB; k++) {
            CHECK_OK(hcq_buf_read(b[k], 0, host, cap * 4));
            for (uint64_t i = 0; i < cap; i++)
                CHECKF(host[i] == mirror[k][i],
                       "replay %d (buffer %d, n %llu): buffer %d [%llu] = 0x%08x "
                       "(expected 0x%08x)",
                       it, which, (unsigned long long)n, k, (unsigned long long)i, host[i], mirror[k][i]);
        }
    }
done:
    hcq_graph_destroy(g);
    free(host);
    for (int i = 0; i < NB; i++) {
        free(mirror[i]);
        hcq_buf_free(b[i]);
    }
    hcq_program_destroy(prog);
    hcq_queue_destroy(q);
    hcq_device_close(dev);
}

/* Random kernels, grids, blocks, counts and offsets; every launch is replayed on host
 * copies of the buffers by the kernel's twin and the device must agree bit for bit. */
enum { FUZZ_BUFS = 3, FUZZ_WORDS = 8192 };

/* One random launch of a flat kernel: params into `p`, returns the kernel name.
 * Buffer 0 holds finite floats and is only read: k_mul_f32 reads its inputs there, so
 * no NaN arises (NaN bit patterns may legitimately differ between GPU and host). */
static const char *
fuzz_pick(const uint64_t va[FUZZ_BUFS], void *p, uint32_t *p_B)
{
    int dst = 1 + (int)(th_rand() % (FUZZ_BUFS - 1)), src = (int)(th_rand() % FUZZ_BUFS);
    if (src == dst)
        src = 0;
    uint64_t off = th_rand() % 64, n = th_rand() % (FUZZ_WORDS / 2 - 64);
    switch (th_rand() % 4) {
    case 0: {
        struct k_fill_u32_params f = {.dst_va = va[dst] + off * 4, .n = n, .value = (uint32_t)th_rand()};
        memcpy(p, &f, *p_B = sizeof f);
        return "k_fill_u32";
    }
    case 1: {
        struct k_axpb_u64_params f = {
            .x_va = va[dst] + off * 8, .n = n / 2, .mul = th_rand(), .add = th_rand()};
        memcpy(p, &f, *p_B = sizeof f);
        return "k_axpb_u64";
    }
    case 2: { /* any alignment: exercises the vector, word and byte paths */
        struct k_copy_bytes_params f = {.dst_va = va[dst] + th_rand() % 256,
                                        .src_va = va[src] + th_rand() % 256,
                                        .size_B = th_rand() % (FUZZ_WORDS * 4 - 256)};
        memcpy(p, &f, *p_B = sizeof f);
        return "k_copy_bytes";
    }
    default: {
        struct k_mul_f32_params f = {.c_va = va[dst] + off * 4,
                                     .a_va = va[0] + 4 * (th_rand() % 64),
                                     .b_va = va[0] + 4 * (th_rand() % 64),
                                     .n = n};
        memcpy(p, &f, *p_B = sizeof f);
        return "k_mul_f32";
    }
    }
}

TEST(exec_update_fuzz)
{
    static const char *const names[] = {"k_fill_u32", "k_axpb_u64", "k_copy_bytes", "k_mul_f32"};
    struct hcq_device *dev = NULL;
    struct hcq_queue *q = NULL;
    struct hcq_program *prog[4] = {0};
    struct hcq_buf *b[FUZZ_BUFS] = {0};
    uint32_t *mirror[FUZZ_BUFS] = {0}, *host = NULL;
    struct suite_mirror m = {0};
    uint64_t va[FUZZ_BUFS];
    CHECK_OK(hcq_device_open(t->dev_spec, &dev));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    for (int i = 0; i < 4; i++)
        CHECK_OK(hcq_program_load(dev, names[i], &prog[i]));
    CHECK(host = malloc(FUZZ_WORDS * 4));
    for (int i = 0; i < FUZZ_BUFS; i++) {
        CHECK(mirror[i] = malloc(FUZZ_WORDS * 4));
        /* small random floats: products stay finite, and NaN payloads (which the
         * hardware may canonicalise) do not arise from random bits */
        for (int j = 0; j < FUZZ_WORDS; j++) {
            float f = th_randf(-4.0f, 4.0f);
            memcpy(&mirror[i][j], &f, 4);
        }
        CHECK_OK(suite_buf(dev, FUZZ_WORDS * 4, HCQ_MEM_DEVICE, mirror[i], 0, &b[i]));
        va[i] = hcq_buf_va(b[i]);
        suite_mirror_add(&m, va[i], FUZZ_WORDS * 4, mirror[i]);
    }
    for (int batch = 0; batch < 12; batch++) {
        char what[8][96];
        int count = 1 + (int)(th_rand() % 8);
        for (int i = 0; i < count; i++) {
            uint64_t p[8];
            uint32_t p_B = 0;
            const char *name = fuzz_pick(va, p, &p_B);
            uint32_t block[3] = {1 + (uint32_t)(th_rand() % 128), 1 + (uint32_t)(th_rand() % 4),
                                 1 + (uint32_t)(th_rand() % 2)};
            uint32_t grid[3] = {1 + (uint32_t)(th_rand() % 20), 1 + (uint32_t)(th_rand() % 3),
                                1 + (uint32_t)(th_rand() % 2)};
            int k = 0;
            while (strcmp(names[k], name))
                k++;
            snprintf(what[i], sizeof what[i], "%s grid %ux%ux%u block %ux%ux%u", name, grid[0], grid[1],
                     grid[2], block[0], block[1], block[2]);
            CHECK_OK(hcq_queue_launch(q, prog[k], grid, block, p, p_B));
            CHECKF(suite_twin_run(name, p, grid, block, &m), "twin of %s faulted", what[i]);
        }
        CHECK_OK(hcq_queue_finish(q, SUITE_TIMEOUT_NS));
        for (int i = 0; i < FUZZ_BUFS; i++) {
            CHECK_OK(hcq_buf_read(b[i], 0, host, FUZZ_WORDS * 4));
            for (int j = 0; j < FUZZ_WORDS; j++)
                CHECKF(host[j] == mirror[i][j],
                       "batch %d (%d launches, last %s): buffer %d word %d = 0x%08x "
                       "(twin 0x%08x)",
                       batch, count, what[count - 1], i, j, host[j], mirror[i][j]);
        }
    }
done:
    free(host);
    for (int i = 0; i < FUZZ_BUFS; i++) {
        hcq_buf_free(b[i]);
        free(mirror[i]);
    }
    for (int i = 0; i < 4; i++)
        hcq_program_destroy(prog[i]);
    hcq_queue_destroy(q);
    hcq_device_close(dev);
}

/* ==== Graphs ==== */

/* Record wait -> axpb -> fill -> signal once, with variables for the wait and signal
 * values, two kernel arguments of each launch and the fill's grid; replay 1000 times
 * with fresh values and check both outputs after every replay. Half of the replays
 * find their wait already satisfied, half get it set by the host afterwards. */
TEST(graphs)
{
    struct hcq_device *dev = NULL;
    struct hcq_queue *q = NULL;
    struct hcq_program *axpb = NULL, *fill = NULL;
    struct hcq_buf *x = NULL, *y = NULL;
    struct hcq_signal *go = NULL, *fin = NULL;
    struct hcq_graph *g = NULL;
    uint64_t *expect = NULL, *got = NULL;
    const uint64_t n = 512, ny = 3000;
    uint32_t v_iter, v_mul, v_add, v_val, v_grid;
    CHECK_OK(hcq_device_open(t->dev_spec, &dev));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    CHECK_OK(hcq_program_load(dev, "k_axpb_u64", &axpb));
    CHECK_OK(hcq_program_load(dev, "k_fill_u32", &fill));
    CHECK_OK(hcq_signal_create(dev, 0, &go));
    CHECK_OK(hcq_signal_create(dev, 0, &fin));
    CHECK(expect = malloc(n * 8));
    CHECK(got = malloc(n * 8));
    suite_rand_bytes(expect, n * 8);
    CHECK_OK(suite_buf(dev, n * 8, HCQ_MEM_DEVICE, expect, 0, &x));
    CHECK_OK(hcq_buf_alloc(dev, ny * 4, HCQ_MEM_HOST, &y));
    uint32_t *ym = hcq_buf_map(y);
    CHECK(ym);
    memset(ym, SUITE_POISON, ny * 4);

    CHECK_OK(hcq_graph_begin(q));
    CHECK_OK(hcq_graph_var(q, &v_iter));
    CHECK_OK(hcq_graph_var(q, &v_mul));
    CHECK_OK(hcq_graph_var(q, &v_add));
    CHECK_OK(hcq_graph_var(q, &v_val));
    CHECK_OK(hcq_graph_var(q, &v_grid));
    CHECK_OK(hcq_queue_wait_var(q, go, v_iter, 0));
    struct k_axpb_u64_params pa = {.x_va = hcq_buf_va(x), .n = n, .mul = 1, .add = 0};
    const struct hcq_arg_patch patch_a[] = {
        {v_mul, offsetof(struct k_axpb_u64_params, mul), 8},
        {v_add, offsetof(struct k_axpb_u64_params, add), 8},
    };
    struct hcq_launch la = {.prog = axpb,
                            .grid = {2, 1, 1},
                            .block = {128, 1, 1},
                            .args = &pa,
                            .args_B = sizeof pa,
                            .grid_var = {HCQ_VAR_NONE, HCQ_VAR_NONE, HCQ_VAR_NONE},
                            .patches = patch_a,
                            .patch_count = 2};
    CHECK_OK(hcq_queue_launch_ex(q, &la));
    struct k_fill_u32_params pf = {.dst_va = hcq_buf_va(y), .n = ny, .value = 0};
    const struct hcq_arg_patch patch_f[] = {{v_val, offsetof(struct k_fill_u32_params, value), 4}};
    struct hcq_launch lf = {.prog = fill,
                            .grid = {0, 1, 1}, /* 0: grid[0] from v_grid */
                            .block = {32, 1, 1},
                            .args = &pf,
                            .args_B = sizeof pf,
                            .grid_var = {v_grid, HCQ_VAR_NONE, HCQ_VAR_NONE},
                            .patches = patch_f,
                            .patch_count = 1};
    CHECK_OK(hcq_queue_launch_ex(q, &lf));
    CHECK_OK(hcq_queue_barrier(q));
    CHECK_OK(hcq_queue_signal_var(q, fin, v_iter, 0));
    CHECK_OK(hcq_graph_end(q, &g));
    CHECK(hcq_graph_command_count(g) >= 4);

    for (uint64_t i = 1; i <= 1000; i++) {
        uint64_t mul = th_rand() | 1, add = th_rand();
        uint32_t val = (uint32_t)th_rand();
        CHECK_OK(hcq_graph_set(g, v_iter, i));
        CHECK_OK(hcq_graph_set(g, v_mul, mul));
        CHECK_OK(hcq_graph_set(g, v_add, add));
        CHECK_OK(hcq_graph_set(g, v_val, val));
        CHECK_OK(hcq_graph_set(g, v_grid, 1 + th_rand() % 16));
        if (i % 2 == 0)
            hcq_signal_set(go, i);
        CHECK_OK(hcq_graph_replay(g));
        if (i % 2 == 1)
            hcq_signal_set(go, i);
        CHECK_OK(hcq_signal_wait(fin, i, SUITE_TIMEOUT_NS));
        CHECKF(hcq_signal_value(fin) == i, "replay %llu signalled %llu", (unsigned long long)i,
               (unsigned long long)hcq_signal_value(fin));
        for (uint64_t j = 0; j < n; j++)
            expect[j] = expect[j] * mul + add;
        CHECK_OK(hcq_buf_read(x, 0, got, n * 8));
        for (uint64_t j = 0; j < n; j++)
            CHECKF(got[j] == expect[j], "replay %llu: x[%llu] = 0x%llx (expected 0x%llx)",
                   (unsigned long long)i, (unsigned long long)j, (unsigned long long)got[j],
                   (unsigned long long)expect[j]);
        for (uint64_t j = 0; j < ny; j++)
            CHECKF(ym[j] == val, "replay %llu: y[%llu] = 0x%08x (expected 0x%08x)", (unsigned long long)i,
                   (unsigned long long)j, ym[j], val);
    }
done:
    hcq_graph_destroy(g);
    hcq_buf_free(y);
    hcq_buf_free(x);
    free(got);
    free(expect);
    hcq_signal_destroy(fin);
    hcq_signal_destroy(go);
    hcq_program_destroy(fill);
    hcq_program_destroy(axpb);
    hcq_queue_destroy(q);
    hcq_device_close(dev);
}

/* ==== Cross-queue hand-off ==== */

/* Per round: copy queue uploads a and b, signals; compute queue waits, adds, signals;
 * copy queue waits, downloads c. All rounds are submitted before the host waits. */
TEST(cross_queue_handoff)
{
    enum { ROUNDS = 4 };
    struct hcq_device *dev = NULL;
    struct hcq_queue *q = NULL, *cq = NULL;
    struct hcq_program *add = NULL;
    struct hcq_buf *ha[ROUNDS] = {0}, *hb[ROUNDS] = {0}, *hc[ROUNDS] = {0};
    struct hcq_buf *a = NULL, *b = NULL, *c = NULL;
    struct hcq_signal *up = NULL, *done_c = NULL, *down = NULL;
    const uint64_t n = 100000;
    CHECK_OK(hcq_device_open(t->dev_spec, &dev));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COPY, &cq));
    CHECK_OK(hcq_program_load(dev, "k_add_f32", &add));
    CHECK_OK(hcq_signal_create(dev, 0, &up));
    CHECK_OK(hcq_signal_create(dev, 0, &done_c));
    CHECK_OK(hcq_signal_create(dev, 0, &down));
    CHECK_OK(suite_buf(dev, n * 4, HCQ_MEM_DEVICE, NULL, SUITE_POISON, &a));
    CHECK_OK(suite_buf(dev, n * 4, HCQ_MEM_DEVICE, NULL, SUITE_POISON, &b));
    CHECK_OK(suite_buf(dev, n * 4, HCQ_MEM_DEVICE, NULL, SUITE_POISON, &c));
    for (int r = 0; r < ROUNDS; r++) {
        CHECK_OK(hcq_buf_alloc(dev, n * 4, HCQ_MEM_HOST, &ha[r]));
        CHECK_OK(hcq_buf_alloc(dev, n * 4, HCQ_MEM_HOST, &hb[r]));
        CHECK_OK(hcq_buf_alloc(dev, n * 4, HCQ_MEM_HOST, &hc[r]));
        float *pa = hcq_buf_map(ha[r]), *pb = hcq_buf_map(hb[r]);
        for (uint64_t i = 0; i < n; i++) {
            pa[i] = th_randf(-1e3f, 1e3f);
            pb[i] = th_randf(-1e3f, 1e3f);
        }
        memset(hcq_buf_map(hc[r]), SUITE_POISON, n * 4);
    }
    for (uint64_t r = 0; r < ROUNDS; r++) {
        /* round r may overwrite a and b only once round r-1's add has consumed them */
        if (r > 0)
            CHECK_OK(hcq_queue_wait(cq, done_c, r));
        CHECK_OK(hcq_queue_copy(cq, a, 0, ha[r], 0, n * 4));
        CHECK_OK(hcq_queue_copy(cq, b, 0, hb[r], 0, n * 4));
        CHECK_OK(hcq_queue_signal(cq, up, r + 1));
        CHECK_OK(hcq_queue_wait(q, up, r + 1));
        /* ... and the add may overwrite c only once round r-1's download is done */
        if (r > 0)
            CHECK_OK(hcq_queue_wait(q, down, r));
        CHECK_OK(ops_launch_binary_f32(q, add, c, a, b, n));
        CHECK_OK(hcq_queue_signal(q, done_c, r + 1));
        CHECK_OK(hcq_queue_wait(cq, done_c, r + 1));
        CHECK_OK(hcq_queue_copy(cq, hc[r], 0, c, 0, n * 4));
        CHECK_OK(hcq_queue_signal(cq, down, r + 1));
        CHECK_OK(hcq_queue_submit(q));
        CHECK_OK(hcq_queue_submit(cq));
    }
    CHECK_OK(hcq_signal_wait(down, ROUNDS, SUITE_TIMEOUT_NS));
    for (int r = 0; r < ROUNDS; r++) {
        const float *pa = hcq_buf_map(ha[r]), *pb = hcq_buf_map(hb[r]), *pc = hcq_buf_map(hc[r]);
        for (uint64_t i = 0; i < n; i++) {
            float want = pa[i] + pb[i];
            CHECKF(!memcmp(&pc[i], &want, 4), "round %d: c[%llu] = %a (expected %a)", r,
                   (unsigned long long)i, (double)pc[i], (double)want);
        }
    }
done:
    for (int r = 0; r < ROUNDS; r++) {
        hcq_buf_free(ha[r]);
        hcq_buf_free(hb[r]);
        hcq_buf_free(hc[r]);
    }
    hcq_buf_free(c);
    hcq_buf_free(b);
    hcq_buf_free(a);
    hcq_signal_destroy(down);
    hcq_signal_destroy(done_c);
    hcq_signal_destroy(up);
    hcq_program_destroy(add);
    hcq_queue_destroy(cq);
    hcq_queue_destroy(q);
    hcq_device_close(dev);
}

/* ==== Error paths ==== */

/* ==== Main ==== */

static const struct th_case runtime_cases[] = {
    TH_CASE(signal),
    TH_CASE(signal_update),
    TH_CASE(timestamp_launch),
    TH_CASE(va_40bit_many),
    TH_CASE(wait),
    TH_CASE(wait_late_set),
    TH_CASE(timeline_cross_2_32),
    TH_CASE(exec_one_kernel),
    TH_CASE(exec_2_kernels_100_times),
    TH_CASE(bind),
    TH_CASE(exec_update),
    TH_CASE(exec_update_fuzz),
    TH_CASE(graphs),
    TH_CASE(cross_queue_handoff),
};

int
main(int argc, char **argv)
{
    const char *spec = getenv("HCQ_DEV") ? getenv("HCQ_DEV") : "cpu";
    char **rest = calloc((size_t)argc + 1, sizeof *rest);
    int nrest = 0;
    if (!rest)
        return 2;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--dev") && i + 1 < argc)
            spec = argv[++i];
        else if (!strcmp(argv[i], "--dev2") && i + 1 < argc)
            suite_dev2_spec = argv[++i];
        else if (!strcmp(argv[i], "--klog"))
            suite_klog_enable();
        else if (!strcmp(argv[i], "--help")) {
            printf("usage: %s --dev SPEC [--dev2 SPEC] [--slow] [--klog] [name-filter...]\n"
                   "  --slow  also the slow tests (> 4 GiB copy, stress_*: `make test-stress`)\n"
                   "  --klog  check the kernel log around every test (an Xid fails that test)\n",
                   argv[0]);
            free(rest);
            return 0;
        } else
            rest[nrest++] = argv[i];
    }
    if (!suite_dev2_spec)
        suite_dev2_spec = spec;
    int n = TH_COUNT(runtime_cases) + suite_error_case_count + suite_graph_case_count +
            suite_multi_case_count + suite_mem_case_count + suite_kernel_case_count + suite_ops_case_count +
            suite_conv_case_count + suite_lmem_case_count + suite_stress_case_count + suite_lost_case_count;
    int k = 0;
    struct th_case *cases = calloc((size_t)n, sizeof *cases);
    if (!cases) {
        free(rest);
        return 2;
    }
    for (int i = 0; i < TH_COUNT(runtime_cases); i++)
        cases[k++] = runtime_cases[i];
    for (int i = 0; i < suite_error_case_count; i++)
        cases[k++] = suite_error_cases[i];
    for (int i = 0; i < suite_graph_case_count; i++)
        cases[k++] = suite_graph_cases[i];
    for (int i = 0; i < suite_multi_case_count; i++)
        cases[k++] = suite_multi_cases[i];
    for (int i = 0; i < suite_mem_case_count; i++)
        cases[k++] = suite_mem_cases[i];
    for (int i = 0; i < suite_kernel_case_count; i++)
        cases[k++] = suite_kernel_cases[i];
    for (int i = 0; i < suite_ops_case_count; i++)
        cases[k++] = suite_ops_cases[i];
    for (int i = 0; i < suite_conv_case_count; i++)
        cases[k++] = suite_conv_cases[i];
    for (int i = 0; i < suite_lmem_case_count; i++)
        cases[k++] = suite_lmem_cases[i];
    for (int i = 0; i < suite_stress_case_count; i++)
        cases[k++] = suite_stress_cases[i];
    for (int i = 0; i < suite_lost_case_count; i++) /* last: it leaves a faulted context behind */
        cases[k++] = suite_lost_cases[i];
    int failed = th_run("hcq", spec, cases, n, nrest, rest);
    free(cases);
    free(rest);
    return failed ? 1 : 0;
}
