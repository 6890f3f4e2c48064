/* SPDX-License-Identifier: MIT */
/*
 * test_core.c - unit tests of the backend-neutral core on the cpu device: argument
 * validation, command recording, graphs with signal variables, status names, errors.
 * Kernel launches are covered by the HCQ suite (tests/hcq/).
 */
#include "harness.h"
#include "hcq_priv.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

TEST(status_names)
{
    for (int s = 0; s < HCQ_STATUS_COUNT; s++)
        CHECKF(strncmp(hcq_status_str((enum hcq_status)s), "HCQ_", 4) == 0 &&
                   !strstr(hcq_status_str((enum hcq_status)s), "unknown"),
               "status %d has no name", s);
    CHECK(strstr(hcq_status_str((enum hcq_status)99), "unknown"));
done:;
}

TEST(open_bad_spec)
{
    struct hcq_device *dev = (struct hcq_device *)1;
    CHECK(hcq_device_open("nosuch:0", &dev) == HCQ_ERR_INVALID);
    CHECK(dev == NULL);
    CHECK(strstr(hcq_last_error(), "nosuch"));
    CHECK(hcq_device_open("cpu:7", &dev) == HCQ_ERR_NOT_FOUND);
done:;
}

TEST(buffer_bounds)
{
    struct hcq_device *dev = NULL;
    struct hcq_buf *a = NULL, *b = NULL;
    struct hcq_queue *q = NULL;
    CHECK_OK(hcq_device_open("cpu", &dev));
    CHECK(hcq_buf_alloc(dev, 0, 0, &a) == HCQ_ERR_INVALID);
    CHECK(hcq_buf_alloc(dev, 64, 0x80, &a) == HCQ_ERR_INVALID);
    CHECK_OK(hcq_buf_alloc(dev, 4096, HCQ_MEM_HOST, &a));
    CHECK_OK(hcq_buf_alloc(dev, 4096, 0, &b));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COPY, &q));
    CHECK(hcq_queue_copy(q, a, 4000, b, 0, 97) == HCQ_ERR_INVALID);
    CHECK(hcq_queue_copy(q, a, 0, b, UINT64_MAX, 2) == HCQ_ERR_INVALID);
    CHECK(hcq_buf_write(a, 4095, "xy", 2) == HCQ_ERR_INVALID);
    uint8_t src[4096], dst[4096];
    for (size_t i = 0; i < sizeof src; i++)
        src[i] = (uint8_t)th_rand();
    memset(dst, 0xAB, sizeof dst);
    CHECK_OK(hcq_buf_write(a, 0, src, sizeof src));
    CHECK_OK(hcq_queue_copy(q, b, 0, a, 0, sizeof src));
    CHECK_OK(hcq_queue_finish(q, HCQ_TIMEOUT_DEFAULT_NS));
    CHECK_OK(hcq_buf_read(b, 0, dst, sizeof dst));
    CHECK(memcmp(src, dst, sizeof src) == 0);
done:
    hcq_queue_destroy(q);
    hcq_buf_free(a);
    hcq_buf_free(b);
    hcq_device_close(dev);
}

/* A graph waits on var0 and signals var0+1 on another signal: replayed 1000 times, each
 * replay released by the host, so ordering and variable patching are both checked. */
TEST(graph_signal_vars)
{
    struct hcq_device *dev = NULL;
    struct hcq_queue *q = NULL;
    struct hcq_signal *in = NULL, *out = NULL;
    struct hcq_graph *g = NULL;
    uint32_t v = 0, unused = 0;
    CHECK_OK(hcq_device_open("cpu", &dev));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    CHECK_OK(hcq_signal_create(dev, 0, &in));
    CHECK_OK(hcq_signal_create(dev, 0, &out));
    CHECK(hcq_graph_var(q, &v) == HCQ_ERR_INVALID);
    CHECK(hcq_queue_signal_var(q, out, 0, 0) == HCQ_ERR_INVALID); /* not recording */
    CHECK_OK(hcq_graph_begin(q));
    CHECK(hcq_graph_begin(q) == HCQ_ERR_INVALID);
    CHECK_OK(hcq_graph_var(q, &v));
    CHECK_OK(hcq_graph_var(q, &unused));
    CHECK(hcq_queue_signal_var(q, out, 7, 0) == HCQ_ERR_INVALID); /* undeclared */
    CHECK_OK(hcq_queue_wait_var(q, in, v, 0));
    CHECK_OK(hcq_queue_barrier(q));
    CHECK_OK(hcq_queue_signal_var(q, out, v, 1));
    CHECK(hcq_queue_submit(q) == HCQ_ERR_INVALID); /* recording */
    CHECK_OK(hcq_graph_end(q, &g));
    CHECK(hcq_graph_command_count(g) == 3);
    CHECK(hcq_graph_set(g, 2, 1) == HCQ_ERR_INVALID);
    uint64_t base = 0xFFFFFF00ull; /* crosses 2^32 during the loop */
    for (uint64_t i = 0; i < 1000; i++) {
        uint64_t val = base + 2 * i;
        CHECK_OK(hcq_graph_set(g, v, val));
        CHECK_OK(hcq_graph_replay(g));
        CHECK(hcq_signal_value(out) < val + 1);
        hcq_signal_set(in, val);
        CHECK_OK(hcq_signal_wait(out, val + 1, HCQ_TIMEOUT_DEFAULT_NS));
    }
    CHECK(hcq_signal_value(out) == base + 2 * 999 + 1);
done:
    hcq_graph_destroy(g);
    hcq_signal_destroy(in);
    hcq_signal_destroy(out);
    hcq_queue_destroy(q);
    hcq_device_close(dev);
}

TEST(wait_timeout)
{
    struct hcq_device *dev = NULL;
    struct hcq_signal *s = NULL;
    CHECK_OK(hcq_device_open("cpu", &dev));
    CHECK_OK(hcq_signal_create(dev, 5, &s));
    uint64_t t0 = hcq_time_ns();
    CHECK(hcq_signal_wait(s, 6, 20 * 1000 * 1000) == HCQ_ERR_TIMEOUT);
    uint64_t dt = hcq_time_ns() - t0;
    CHECKF(dt >= 20000000 && dt < 2000000000, "timeout took %llu ns", (unsigned long long)dt);
    CHECK(strstr(hcq_last_error(), "0x5"));
done:
    hcq_signal_destroy(s);
    hcq_device_close(dev);
}

TEST(import_host)
{
    struct hcq_device *dev = NULL;
    struct hcq_buf *h = NULL, *d = NULL;
    struct hcq_queue *q = NULL;
    uint8_t *mem = aligned_alloc(4096, 8192);
    CHECK(mem);
    for (int i = 0; i < 8192; i++)
        mem[i] = (uint8_t)th_rand();
    CHECK_OK(hcq_device_open("cpu", &dev));
    CHECK(hcq_buf_import_host(dev, mem + 1, 4096, &h) == HCQ_ERR_INVALID);
    CHECK_OK(hcq_buf_import_host(dev, mem, 8192, &h));
    CHECK_OK(hcq_buf_alloc(dev, 8192, 0, &d));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COPY, &q));
    CHECK_OK(hcq_queue_copy(q, d, 0, h, 0, 8192));
    CHECK_OK(hcq_queue_finish(q, HCQ_TIMEOUT_DEFAULT_NS));
    CHECK(memcmp(hcq_buf_map(d), mem, 8192) == 0);
done:
    hcq_queue_destroy(q);
    hcq_buf_free(h);
    hcq_buf_free(d);
    hcq_device_close(dev);
    free(mem);
}

/* Objects left open are freed by hcq_device_close (ASan checks for leaks). */
TEST(close_frees_everything)
{
    struct hcq_device *dev = NULL;
    struct hcq_buf *b;
    struct hcq_queue *q;
    CHECK_OK(hcq_device_open("cpu", &dev));
    for (int i = 0; i < 10; i++)
        CHECK_OK(hcq_buf_alloc(dev, 1 << 16, i & 1 ? HCQ_MEM_HOST : 0, &b));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    CHECK_OK(hcq_queue_barrier(q));
done:
    hcq_device_close(dev);
}

/* A grid taken from a graph variable is range-checked at every replay. */
TEST(graph_grid_var_checked)
{
    struct hcq_device *dev = NULL;
    struct hcq_queue *q = NULL;
    struct hcq_program *prog = NULL;
    struct hcq_graph *g = NULL;
    struct hcq_program_info pi;
    uint8_t args[256] = {0};
    uint32_t v = 0;
    CHECK_OK(hcq_device_open("cpu", &dev));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    CHECK_OK(hcq_program_load(dev, "k_empty", &prog));
    CHECK_OK(hcq_program_info(prog, &pi));
    CHECK(pi.params_B <= sizeof args);
    CHECK_OK(hcq_graph_begin(q));
    CHECK_OK(hcq_graph_var(q, &v));
    struct hcq_launch l = {.prog = prog,
                           .grid = {0, 1, 1},
                           .block = {32, 1, 1},
                           .args = args,
                           .args_B = pi.params_B,
                           .grid_var = {v, HCQ_VAR_NONE, HCQ_VAR_NONE}};
    CHECK_OK(hcq_queue_launch_ex(q, &l));
    CHECK_OK(hcq_graph_end(q, &g));
    CHECK(hcq_graph_replay(g) == HCQ_ERR_INVALID); /* variable still 0 */
    CHECK_OK(hcq_graph_set(g, v, 0x80000000ull));
    CHECK(hcq_graph_replay(g) == HCQ_ERR_INVALID);
    CHECK_OK(hcq_graph_set(g, v, 3));
    CHECK_OK(hcq_graph_replay(g));
    CHECK_OK(hcq_queue_finish(q, HCQ_TIMEOUT_DEFAULT_NS));
done:
    hcq_graph_destroy(g);
    hcq_program_destroy(prog);
    hcq_queue_destroy(q);
    hcq_device_close(dev);
}

/* Threads that run out of signal slots at the same moment each add a page under the lock
 * (ASan catches an array grown past another thread's append). */
struct sig_thread {
    struct hcq_device *dev;
    int failures;
};

static void *
sig_thread_main(void *arg)
{
    struct sig_thread *st = arg;
    struct hcq_signal *sigs[300];
    for (int i = 0; i < 300; i++)
        if (hcq_signal_create(st->dev, (uint64_t)i, &sigs[i]) != HCQ_OK)
            sigs[i] = NULL, st->failures++;
    for (int i = 0; i < 300; i++) {
        if (sigs[i] && hcq_signal_value(sigs[i]) != (uint64_t)i)
            st->failures++;
        hcq_signal_destroy(sigs[i]);
    }
    return NULL;
}

TEST(signals_from_threads)
{
    struct hcq_device *dev = NULL;
    pthread_t th[4];
    struct sig_thread args[4];
    int started = 0;
    CHECK_OK(hcq_device_open("cpu", &dev));
    for (int rep = 0; rep < 3; rep++) {
        for (started = 0; started < 4; started++) {
            args[started] = (struct sig_thread){.dev = dev};
            CHECK(pthread_create(&th[started], NULL, sig_thread_main, &args[started]) == 0);
        }
        for (int i = 0; i < 4; i++)
            pthread_join(th[i], NULL);
        started = 0;
        for (int i = 0; i < 4; i++)
            CHECKF(args[i].failures == 0, "thread %d: %d failures", i, args[i].failures);
    }
done:
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    hcq_device_close(dev);
}

/* hcq_buf_write/read of an unmapped device buffer go through the double-buffered staging
 * path: sizes over two 16 MiB chunks, odd offsets, on the emulated RM device. */
TEST(staged_read_write)
{
    struct hcq_device *dev = NULL;
    struct hcq_buf *b = NULL;
    const uint64_t n = (40ull << 20) + 4093, off = 3;
    uint8_t *src = malloc(n), *dst = malloc(n);
    CHECK(src && dst);
    if (hcq_device_open("emu:gh100", &dev) != HCQ_OK)
        SKIP("emu:gh100 does not open here: %s", hcq_last_error());
    CHECK_OK(hcq_buf_alloc(dev, n + off, HCQ_MEM_DEVICE, &b));
    if (hcq_buf_map(b))
        SKIP("device buffers are CPU-mapped on this device");
    for (int rep = 0; rep < 2; rep++) {
        for (uint64_t i = 0; i < n; i++)
            src[i] = (uint8_t)(th_rand() >> 13);
        memset(dst, 0xAB, n);
        CHECK_OK(hcq_buf_write(b, off, src, n));
        CHECK_OK(hcq_buf_read(b, off, dst, n));
        CHECKF(memcmp(src, dst, n) == 0, "staged round trip %d differs", rep);
    }
done:
    hcq_buf_free(b);
    hcq_device_close(dev);
    free(src);
    free(dst);
}

int
main(int argc, char **argv)
{
    static const struct th_case cases[] = {
        TH_CASE(status_names),           TH_CASE(open_bad_spec),     TH_CASE(buffer_bounds),
        TH_CASE(graph_signal_vars),      TH_CASE(wait_timeout),      TH_CASE(import_host),
        TH_CASE(close_frees_everything), TH_CASE(staged_read_write), TH_CASE(signals_from_threads),
        TH_CASE(graph_grid_var_checked),
    };
    return th_run("core", NULL, cases, TH_COUNT(cases), argc - 1, argv + 1) ? 1 : 0;
}
