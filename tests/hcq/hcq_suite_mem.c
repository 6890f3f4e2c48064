/* SPDX-License-Identifier: MIT */
/*
 * hcq_suite_mem.c - the HCQ suite's memory tests: copies (small and unaligned, 256 MiB,
 * > 4 GiB), many small copies out of pinned host memory and onwards through device
 * buffers, memory barriers before host reads and before copies, and imported host
 * memory. Every byte is compared with what the host expects; outside the written range
 * the poison must survive.
 */
#include "emu.h"
#include "hcq_suite.h"
#include "proc_count.h"

#include <stdio.h>

#include <stdlib.h>
#include <string.h>

/* ==== Copies ==== */

/* Copy size_B random bytes src -> dst on a copy queue and compare; the bytes around the
 * destination range must stay poisoned. */
static bool
copy_check(struct th *t, struct hcq_device *dev, uint64_t size_B, uint64_t src_off_B, uint64_t dst_off_B)
{
    bool ok = false;
    struct hcq_queue *q = NULL;
    struct hcq_buf *src = NULL, *dst = NULL;
    uint8_t *data = NULL, *got = NULL;
    const uint64_t dst_size_B = dst_off_B + size_B + 64;
    CHECK(data = malloc(src_off_B + size_B));
    CHECK(got = malloc(dst_size_B));
    suite_rand_bytes(data, src_off_B + size_B);
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COPY, &q));
    CHECK_OK(suite_buf(dev, src_off_B + size_B, HCQ_MEM_DEVICE, data, 0, &src));
    CHECK_OK(suite_buf(dev, dst_size_B, HCQ_MEM_DEVICE, NULL, SUITE_POISON, &dst));
    CHECK_OK(hcq_queue_copy(q, dst, dst_off_B, src, src_off_B, size_B));
    CHECK_OK(hcq_queue_finish(q, SUITE_TIMEOUT_NS));
    CHECK_OK(hcq_buf_read(dst, 0, got, dst_size_B));
    for (uint64_t i = 0; i < dst_size_B; i++) {
        bool in = i >= dst_off_B && i < dst_off_B + size_B;
        uint8_t want = in ? data[src_off_B + i - dst_off_B] : SUITE_POISON;
        CHECKF(got[i] == want, "copy of %llu B (+%llu -> +%llu): byte %llu = 0x%02x (expected 0x%02x)",
               (unsigned long long)size_B, (unsigned long long)src_off_B, (unsigned long long)dst_off_B,
               (unsigned long long)i, got[i], want);
    }
    ok = true;
done:
    hcq_buf_free(dst);
    hcq_buf_free(src);
    hcq_queue_destroy(q);
    free(got);
    free(data);
    return ok;
}

TEST(copy)
{
    struct hcq_device *dev = NULL;
    CHECK_OK(hcq_device_open(t->dev_spec, &dev));
    CHECK(copy_check(t, dev, 1 << 20, 0, 0));
    CHECK(copy_check(t, dev, 1 + th_rand() % 100000, th_rand() % 4096, th_rand() % 4096)); /* unaligned */
    CHECK(copy_check(t, dev, 1, 3, 5));
done:
    hcq_device_close(dev);
}

/* 256 MiB on a GPU (16 MiB on cpu/emu), checked in full. */
TEST(long_copy)
{
    struct hcq_device *dev = NULL;
    struct hcq_queue *q = NULL;
    struct hcq_buf *src = NULL, *dst = NULL;
    uint64_t *data = NULL, *got = NULL;
    CHECK_OK(hcq_device_open(t->dev_spec, &dev));
    const uint64_t size_B = suite_is_gpu(dev) ? 256ull << 20 : 16ull << 20;
    CHECK(data = malloc(size_B));
    CHECK(got = malloc(size_B));
    for (uint64_t i = 0; i < size_B / 8; i++) /* cheap, position-dependent, not periodic */
        data[i] = (i * 0x9E3779B97F4A7C15ull) ^ th_seed();
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COPY, &q));
    CHECK_OK(suite_buf(dev, size_B, HCQ_MEM_DEVICE, data, 0, &src));
    CHECK_OK(suite_buf(dev, size_B, HCQ_MEM_DEVICE, NULL, SUITE_POISON, &dst));
    CHECK_OK(hcq_queue_copy(q, dst, 0, src, 0, size_B));
    CHECK_OK(hcq_queue_finish(q, SUITE_TIMEOUT_NS));
    CHECK_OK(hcq_buf_read(dst, 0, got, size_B));
    for (uint64_t i = 0; i < size_B / 8; i++)
        CHECKF(got[i] == data[i], "word %llu of %llu MiB = 0x%llx (expected 0x%llx)", (unsigned long long)i,
               (unsigned long long)(size_B >> 20), (unsigned long long)got[i], (unsigned long long)data[i]);
done:
    hcq_buf_free(dst);
    hcq_buf_free(src);
    hcq_queue_destroy(q);
    free(got);
    free(data);
    hcq_device_close(dev);
}

/* A copy of more than 4 GiB (offsets and sizes past 32 bits), GPU devices only. Random
 * 1 MiB chunks are placed at the start, across the 4 GiB mark and at the end of the
 * source; the destination starts poisoned by a kernel. */
TEST(copy_over_4g)
{
    struct hcq_device *dev = NULL;
    struct hcq_queue *q = NULL;
    struct hcq_program *fill = NULL;
    struct hcq_buf *src = NULL, *dst = NULL;
    uint8_t *chunk = NULL, *got = NULL;
    const uint64_t size_B = (4ull << 30) + (64ull << 20), chunk_B = 1 << 20;
    const uint64_t at[3] = {0, (4ull << 30) - chunk_B / 2, size_B - chunk_B};
    CHECK_OK(hcq_device_open(t->dev_spec, &dev));
    if (!suite_is_gpu(dev))
        SKIP("needs 8.1 GiB of device memory: GPU devices only");
    struct hcq_device_info info;
    CHECK_OK(hcq_device_info(dev, &info));
    if (info.mem_B < 3 * size_B)
        SKIP("device has %llu MiB (needs ~%llu)", (unsigned long long)(info.mem_B >> 20),
             (unsigned long long)(3 * size_B >> 20));
    CHECK(chunk = malloc(3 * chunk_B));
    CHECK(got = malloc(chunk_B));
    suite_rand_bytes(chunk, 3 * chunk_B);
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    CHECK_OK(hcq_program_load(dev, "k_fill_u32", &fill));
    CHECK_OK(hcq_buf_alloc(dev, size_B, HCQ_MEM_DEVICE, &src));
    CHECK_OK(hcq_buf_alloc(dev, size_B, HCQ_MEM_DEVICE, &dst));
    for (int i = 0; i < 3; i++)
        CHECK_OK(hcq_buf_write(src, at[i], chunk + i * chunk_B, chunk_B));
    CHECK_OK(ops_launch_fill_u32(q, fill, dst, size_B / 4, 0xABABABABu));
    CHECK_OK(hcq_queue_barrier(q));
    CHECK_OK(hcq_queue_copy(q, dst, 0, src, 0, size_B));
    CHECK_OK(hcq_queue_finish(q, 4 * SUITE_TIMEOUT_NS));
    for (int i = 0; i < 3; i++) {
        CHECK_OK(hcq_buf_read(dst, at[i], got, chunk_B));
        CHECKF(!memcmp(got, chunk + i * chunk_B, chunk_B), "chunk at 0x%llx differs after the copy",
               (unsigned long long)at[i]);
    }
done:
    hcq_buf_free(dst);
    hcq_buf_free(src);
    hcq_program_destroy(fill);
    hcq_queue_destroy(q);
    free(got);
    free(chunk);
    hcq_device_close(dev);
}

/* Many small copies (1..64 B, any offset) out of a pinned host buffer, then the same
 * data onwards through an intermediate device buffer into a second host buffer. */
TEST(small_copies_from_host)
{
    struct hcq_device *dev = NULL;
    struct hcq_queue *q = NULL;
    struct hcq_buf *hsrc = NULL, *mid = NULL, *dev2 = NULL, *hdst = NULL;
    uint8_t *mirror = NULL, *got = NULL;
    const uint64_t size_B = 64 << 10;
    CHECK_OK(hcq_device_open(t->dev_spec, &dev));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COPY, &q));
    CHECK(mirror = malloc(size_B));
    CHECK(got = malloc(size_B));
    CHECK_OK(hcq_buf_alloc(dev, size_B, HCQ_MEM_HOST, &hsrc));
    CHECK(hcq_buf_map(hsrc));
    suite_rand_bytes(hcq_buf_map(hsrc), size_B);
    CHECK_OK(suite_buf(dev, size_B, HCQ_MEM_DEVICE, NULL, SUITE_POISON, &mid));
    CHECK_OK(suite_buf(dev, size_B, HCQ_MEM_DEVICE, NULL, SUITE_POISON, &dev2));
    CHECK_OK(hcq_buf_alloc(dev, size_B, HCQ_MEM_HOST, &hdst));
    memset(hcq_buf_map(hdst), SUITE_POISON, size_B);
    memset(mirror, SUITE_POISON, size_B);
    const uint8_t *hs = hcq_buf_map(hsrc);
    for (int i = 0; i < 300; i++) {
        uint64_t len = 1 + th_rand() % 64;
        uint64_t so = th_rand() % (size_B - len), d = th_rand() % (size_B - len);
        CHECK_OK(hcq_queue_copy(q, mid, d, hsrc, so, len));
        memmove(mirror + d, hs + so, len);
        if (i % 50 == 49)
            CHECK_OK(hcq_queue_submit(q)); /* several submissions, not one list */
    }
    CHECK_OK(hcq_queue_finish(q, SUITE_TIMEOUT_NS));
    CHECK_OK(hcq_buf_read(mid, 0, got, size_B));
    for (uint64_t i = 0; i < size_B; i++)
        CHECKF(got[i] == mirror[i], "byte %llu = 0x%02x (expected 0x%02x)", (unsigned long long)i, got[i],
               mirror[i]);
    /* host -> device -> device -> host, ordered on one queue */
    CHECK_OK(hcq_queue_copy(q, dev2, 0, mid, 0, size_B));
    CHECK_OK(hcq_queue_copy(q, hdst, 0, dev2, 0, size_B));
    CHECK_OK(hcq_queue_finish(q, SUITE_TIMEOUT_NS));
    CHECKF(!memcmp(hcq_buf_map(hdst), mirror, size_B), "host buffer after host->dev->dev->host differs");
done:
    hcq_buf_free(hdst);
    hcq_buf_free(dev2);
    hcq_buf_free(mid);
    hcq_buf_free(hsrc);
    hcq_queue_destroy(q);
    free(got);
    free(mirror);
    hcq_device_close(dev);
}

/* ==== Barriers and visibility ==== */

/* A kernel writes pinned host memory; after a barrier and a signal the host sees it. */
TEST(memory_barrier)
{
    struct hcq_device *dev = NULL;
    struct hcq_queue *q = NULL;
    struct hcq_program *fill = NULL;
    struct hcq_buf *hb = NULL;
    struct hcq_signal *s = NULL;
    const uint64_t n = 16384;
    CHECK_OK(hcq_device_open(t->dev_spec, &dev));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    CHECK_OK(hcq_program_load(dev, "k_fill_u32", &fill));
    CHECK_OK(hcq_signal_create(dev, 0, &s));
    CHECK_OK(hcq_buf_alloc(dev, n * 4, HCQ_MEM_HOST, &hb));
    volatile uint32_t *h = hcq_buf_map(hb);
    CHECK(h);
    for (uint64_t it = 1; it <= 20; it++) {
        uint32_t value = (uint32_t)th_rand() | 1;
        CHECK_OK(ops_launch_fill_u32(q, fill, hb, n, value));
        CHECK_OK(hcq_queue_barrier(q));
        CHECK_OK(hcq_queue_signal(q, s, it));
        CHECK_OK(hcq_queue_submit(q));
        CHECK_OK(hcq_signal_wait(s, it, SUITE_TIMEOUT_NS));
        /* check the last word first: the most likely to be late */
        CHECKF(h[n - 1] == value && h[0] == value,
               "iteration %llu: host sees 0x%08x..0x%08x (expected 0x%08x)", (unsigned long long)it, h[0],
               h[n - 1], value);
        for (uint64_t i = 0; i < n; i++)
            CHECKF(h[i] == value, "iteration %llu: word %llu = 0x%08x (expected 0x%08x)",
                   (unsigned long long)it, (unsigned long long)i, h[i], value);
    }
done:
    hcq_buf_free(hb);
    hcq_signal_destroy(s);
    hcq_program_destroy(fill);
    hcq_queue_destroy(q);
    hcq_device_close(dev);
}

/* A kernel's writes are seen by a copy recorded after a barrier on the same queue, and
 * by a copy on another queue ordered by a signal. */
TEST(memory_barrier_before_copy)
{
    struct hcq_device *dev = NULL;
    struct hcq_queue *q = NULL, *cq = NULL;
    struct hcq_program *fill = NULL;
    struct hcq_buf *db = NULL, *h1 = NULL, *h2 = NULL;
    struct hcq_signal *s = NULL, *s2 = NULL;
    const uint64_t n = 65536;
    CHECK_OK(hcq_device_open(t->dev_spec, &dev));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COPY, &cq));
    CHECK_OK(hcq_program_load(dev, "k_fill_u32", &fill));
    CHECK_OK(hcq_signal_create(dev, 0, &s));
    CHECK_OK(hcq_signal_create(dev, 0, &s2));
    CHECK_OK(suite_buf(dev, n * 4, HCQ_MEM_DEVICE, NULL, SUITE_POISON, &db));
    CHECK_OK(hcq_buf_alloc(dev, n * 4, HCQ_MEM_HOST, &h1));
    CHECK_OK(hcq_buf_alloc(dev, n * 4, HCQ_MEM_HOST, &h2));
    const uint32_t *m1 = hcq_buf_map(h1), *m2 = hcq_buf_map(h2);
    CHECK(m1 && m2);
    for (uint64_t it = 1; it <= 10; it++) {
        uint32_t value = (uint32_t)th_rand() | 1;
        CHECK_OK(ops_launch_fill_u32(q, fill, db, n, value));
        CHECK_OK(hcq_queue_barrier(q));
        CHECK_OK(hcq_queue_copy(q, h1, 0, db, 0, n * 4));
        CHECK_OK(hcq_queue_signal(q, s, it));
        CHECK_OK(hcq_queue_submit(q));
        CHECK_OK(hcq_queue_wait(cq, s, it));
        CHECK_OK(hcq_queue_copy(cq, h2, 0, db, 0, n * 4));
        CHECK_OK(hcq_queue_signal(cq, s2, it));
        CHECK_OK(hcq_queue_submit(cq));
        CHECK_OK(hcq_signal_wait(s2, it, SUITE_TIMEOUT_NS));
        CHECK_OK(hcq_signal_wait(s, it, SUITE_TIMEOUT_NS));
        for (uint64_t i = 0; i < n; i++) {
            CHECKF(m1[i] == value, "iteration %llu: same-queue copy word %llu = 0x%08x (expected 0x%08x)",
                   (unsigned long long)it, (unsigned long long)i, m1[i], value);
            CHECKF(m2[i] == value, "iteration %llu: other-queue copy word %llu = 0x%08x (expected 0x%08x)",
                   (unsigned long long)it, (unsigned long long)i, m2[i], value);
        }
    }
done:
    hcq_buf_free(h2);
    hcq_buf_free(h1);
    hcq_buf_free(db);
    hcq_signal_destroy(s2);
    hcq_signal_destroy(s);
    hcq_program_destroy(fill);
    hcq_queue_destroy(cq);
    hcq_queue_destroy(q);
    hcq_device_close(dev);
}

/* Existing page-aligned host memory made GPU-visible: kernels and copies use it in place. */
TEST(import_host)
{
    struct hcq_device *dev = NULL;
    struct hcq_queue *q = NULL;
    struct hcq_program *fill = NULL;
    struct hcq_buf *hb = NULL, *db = NULL;
    const uint64_t size_B = 256 << 10, n = size_B / 4;
    uint32_t *mem = aligned_alloc(4096, size_B), *back = malloc(size_B);
    CHECK(mem && back);
    memset(mem, SUITE_POISON, size_B);
    CHECK_OK(hcq_device_open(t->dev_spec, &dev));
    enum hcq_status st = hcq_buf_import_host(dev, mem, size_B, &hb);
    if (st == HCQ_ERR_UNSUPPORTED)
        SKIP("hcq_buf_import_host unsupported on %s: %s", t->dev_spec, hcq_last_error());
    CHECK_OK(st);
    CHECK(hcq_buf_map(hb) == mem);
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    CHECK_OK(hcq_program_load(dev, "k_fill_u32", &fill));
    uint32_t value = (uint32_t)th_rand();
    CHECK_OK(ops_launch_fill_u32(q, fill, hb, n - 7, value)); /* last 7 words untouched */
    CHECK_OK(hcq_queue_finish(q, SUITE_TIMEOUT_NS));
    for (uint64_t i = 0; i < n; i++)
        CHECKF(mem[i] == (i < n - 7 ? value : 0xABABABABu), "word %llu = 0x%08x", (unsigned long long)i,
               mem[i]);
    /* the host writes, the device copies out of the imported memory */
    suite_rand_bytes(mem, size_B);
    CHECK_OK(suite_buf(dev, size_B, HCQ_MEM_DEVICE, NULL, SUITE_POISON, &db));
    CHECK_OK(hcq_queue_copy(q, db, 0, hb, 0, size_B));
    CHECK_OK(hcq_queue_finish(q, SUITE_TIMEOUT_NS));
    CHECK_OK(hcq_buf_read(db, 0, back, size_B));
    CHECKF(!memcmp(back, mem, size_B), "copy out of imported host memory differs");
done:
    hcq_buf_free(db);
    hcq_buf_free(hb);
    hcq_program_destroy(fill);
    hcq_queue_destroy(q);
    hcq_device_close(dev);
    free(back);
    free(mem);
}

/* Open dev, create buffers, programs, signals, queues (one with unsubmitted commands) and
 * graphs, run some work, destroy one program and one signal, close with the rest alive. */
static void
close_with_everything_alive(struct th *t)
{
    struct hcq_device *dev = NULL;
    CHECK_OK(hcq_device_open(t->dev_spec, &dev));
    struct hcq_buf *b[3] = {0};
    CHECK_OK(hcq_buf_alloc(dev, 1 << 20, HCQ_MEM_DEVICE, &b[0]));
    CHECK_OK(hcq_buf_alloc(dev, 4096, HCQ_MEM_HOST, &b[1]));
    CHECK_OK(hcq_buf_alloc(dev, 3 << 20, HCQ_MEM_DEVICE, &b[2]));
    struct hcq_program *fill = NULL, *fill2 = NULL, *gone = NULL;
    CHECK_OK(hcq_program_load(dev, "k_fill_u32", &fill));
    CHECK_OK(hcq_program_load(dev, "k_fill_u32", &fill2));
    CHECK_OK(hcq_program_load(dev, "k_fill_u32", &gone));
    hcq_program_destroy(gone);
    struct hcq_signal *sig[3] = {0}, *sig_gone = NULL;
    for (int i = 0; i < 3; i++)
        CHECK_OK(hcq_signal_create(dev, 0, &sig[i]));
    CHECK_OK(hcq_signal_create(dev, 0, &sig_gone));
    hcq_signal_destroy(sig_gone);
    struct hcq_queue *q = NULL, *cq = NULL, *idle = NULL;
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COPY, &cq));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &idle));
    struct hcq_graph *g = NULL, *g2 = NULL;
    CHECK_OK(hcq_graph_begin(q));
    CHECK_OK(ops_launch_fill_u32(q, fill, b[0], 1024, 7));
    CHECK_OK(hcq_queue_signal(q, sig[0], 1));
    CHECK_OK(hcq_graph_end(q, &g));
    CHECK_OK(hcq_graph_begin(cq));
    CHECK_OK(hcq_queue_copy(cq, b[2], 0, b[0], 0, 4096));
    CHECK_OK(hcq_graph_end(cq, &g2));
    CHECK_OK(hcq_graph_replay(g));
    CHECK_OK(hcq_queue_wait(cq, sig[0], 1));
    CHECK_OK(hcq_queue_copy(cq, b[1], 0, b[0], 0, 4096));
    CHECK_OK(hcq_queue_signal(cq, sig[1], 1));
    CHECK_OK(hcq_queue_submit(cq));
    CHECK_OK(hcq_signal_wait(sig[1], 1, SUITE_TIMEOUT_NS));
    CHECK(((const uint32_t *)hcq_buf_map(b[1]))[1023] == 7);
    CHECK_OK(ops_launch_fill_u32(q, fill2, b[2], 4096, 9)); /* recorded, never submitted */
done:
    hcq_device_close(dev);
}

/* hcq_device_close frees every object still owned (include/hcq.h), and nothing twice: the
 * sanitizer pass of .ci/run reports any leak or double free. On emu the emulator's objects
 * and the process's fds and mappings are back to where they were: measured around a second
 * round, since the first sets up what lives as long as the process (worker threads' malloc
 * arenas, the emulator). */
TEST(close_frees_everything)
{
    close_with_everything_alive(t);
    CHECK(!t->failed);
    struct emu_stats base = {0}, now = {0};
    emu_stats_get(&base);
    int fds0 = proc_fds(), maps0 = proc_maps();
    close_with_everything_alive(t);
    CHECK(!t->failed);
    if (strncmp(t->dev_spec, "emu:", 4))
        goto done;
    emu_stats_get(&now);
    CHECKF(now.devs == base.devs && now.fds == base.fds && now.maps == base.maps && now.bos == base.bos &&
               now.vms == base.vms && now.chans == base.chans && now.threads == base.threads &&
               now.rm_objs == base.rm_objs,
           "emulator objects after close: devs %lld->%lld fds %lld->%lld maps %lld->%lld bos %lld->%lld "
           "vms %lld->%lld chans %lld->%lld threads %lld->%lld rm objects %lld->%lld",
           (long long)base.devs, (long long)now.devs, (long long)base.fds, (long long)now.fds,
           (long long)base.maps, (long long)now.maps, (long long)base.bos, (long long)now.bos,
           (long long)base.vms, (long long)now.vms, (long long)base.chans, (long long)now.chans,
           (long long)base.threads, (long long)now.threads, (long long)base.rm_objs, (long long)now.rm_objs);
    CHECK_PROC_COUNTS(fds0, maps0);
done:;
}

/* hcq_mem_stats.driver_free_B follows a 64 MiB device buffer down and back up (after the pool
 * gives it back): exactly on an emulated discrete GPU (its RM heap), at least 64 MiB down on a
 * real one (RM may add page-table pages; other processes may allocate meanwhile - a dedicated
 * GPU is assumed); skipped where the backend has no driver figure (cpu, nvgpu). */
TEST(mem_stats_driver_free)
{
    struct hcq_device *dev = NULL;
    struct hcq_buf *b = NULL;
    struct hcq_mem_stats s0, s1, s2;
    struct hcq_device_info di;
    const uint64_t size_B = 64ull << 20;
    CHECK_OK(hcq_device_open(t->dev_spec, &dev));
    CHECK_OK(hcq_device_info(dev, &di));
    (void)hcq_device_mem_trim(dev);
    CHECK_OK(hcq_device_mem_stats(dev, &s0));
    if (!s0.driver_free_B) {
        CHECKF(!suite_has_driver_free(&di), "%s: no driver free-memory figure", di.backend);
        SKIP("no driver free-memory figure on %s", di.backend);
    }
    CHECK_OK(hcq_buf_alloc(dev, size_B, HCQ_MEM_DEVICE, &b));
    CHECK_OK(hcq_device_mem_stats(dev, &s1));
    CHECKF(s1.driver_free_B + size_B <= s0.driver_free_B,
           "driver free %llu B with 64 MiB allocated (was %llu B)", (unsigned long long)s1.driver_free_B,
           (unsigned long long)s0.driver_free_B);
    CHECK(!di.emulated || s1.driver_free_B + size_B == s0.driver_free_B);
    hcq_buf_free(b);
    b = NULL;
    (void)hcq_device_mem_trim(dev);
    CHECK_OK(hcq_device_mem_stats(dev, &s2));
    CHECKF(di.emulated ? s2.driver_free_B == s0.driver_free_B
                       : s2.driver_free_B + (16ull << 20) >= s0.driver_free_B,
           "driver free %llu B after the free and trim (was %llu B)", (unsigned long long)s2.driver_free_B,
           (unsigned long long)s0.driver_free_B);
done:
    hcq_buf_free(b);
    hcq_device_close(dev);
}

/* hcq_mem_stats.driver_objects (the RM objects of the device's client) counts up with queues and
 * buffers and is back where it was once they are gone and the pool is trimmed; on an emulated
 * discrete GPU each change equals the emulated RM's own count of live objects, so the kmd's
 * bookkeeping is the driver's. Skipped where the backend does not count (cpu, cuda, nvgpu). */
TEST(mem_stats_driver_objects)
{
    static const uint64_t dev_B[] = {4096, 65536, 1 << 20, (3 << 20) + 4096, 32 << 20};
    static const uint64_t host_B[] = {4096, 1 << 20, 5 << 20};
    enum { NB = sizeof dev_B / sizeof dev_B[0] + sizeof host_B / sizeof host_B[0] };
    struct hcq_device *dev = NULL;
    struct hcq_queue *q = NULL, *cq = NULL;
    struct hcq_buf *b[NB] = {0};
    struct hcq_mem_stats s0, s1, s2;
    struct hcq_device_info di;
    struct emu_stats e0 = {0}, e1 = {0}, e2 = {0};
    CHECK_OK(hcq_device_open(t->dev_spec, &dev));
    CHECK_OK(hcq_device_info(dev, &di));
    /* what lives until close is made by the first queue and buffer (the channel group, staging):
     * make it before counting */
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COPY, &cq));
    CHECK_OK(hcq_buf_alloc(dev, 4096, HCQ_MEM_DEVICE, &b[0]));
    uint32_t v = 0x5eed;
    CHECK_OK(hcq_buf_write(b[0], 0, &v, 4));
    hcq_buf_free(b[0]);
    b[0] = NULL;
    hcq_queue_destroy(q);
    hcq_queue_destroy(cq);
    q = cq = NULL;
    (void)hcq_device_mem_trim(dev);
    CHECK_OK(hcq_device_mem_stats(dev, &s0));
    emu_stats_get(&e0);
    if (!s0.driver_objects) {
        CHECKF(!suite_has_driver_objects(&di), "%s: no driver object count", di.backend);
        SKIP("no driver object count on %s", di.backend);
    }
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COPY, &cq));
    int n = 0;
    for (size_t i = 0; i < sizeof dev_B / sizeof dev_B[0]; i++)
        CHECK_OK(hcq_buf_alloc(dev, dev_B[i], HCQ_MEM_DEVICE, &b[n++]));
    for (size_t i = 0; i < sizeof host_B / sizeof host_B[0]; i++)
        CHECK_OK(hcq_buf_alloc(dev, host_B[i], HCQ_MEM_HOST, &b[n++]));
    CHECK_OK(hcq_device_mem_stats(dev, &s1));
    emu_stats_get(&e1);
    /* two channels and their objects, and at least one memory object per size class */
    CHECKF(s1.driver_objects >= s0.driver_objects + 4,
           "%llu driver objects with 2 queues and %d buffers (%llu before)",
           (unsigned long long)s1.driver_objects, NB, (unsigned long long)s0.driver_objects);
    if (di.emulated)
        CHECKF((int64_t)(s1.driver_objects - s0.driver_objects) == e1.rm_objs - e0.rm_objs,
               "the kmd counts %+lld RM objects, the emulated RM %+lld",
               (long long)(s1.driver_objects - s0.driver_objects), (long long)(e1.rm_objs - e0.rm_objs));
    for (int i = 0; i < NB; i++) {
        hcq_buf_free(b[i]);
        b[i] = NULL;
    }
    hcq_queue_destroy(q);
    hcq_queue_destroy(cq);
    q = cq = NULL;
    (void)hcq_device_mem_trim(dev);
    CHECK_OK(hcq_device_mem_stats(dev, &s2));
    emu_stats_get(&e2);
    CHECKF(s2.driver_objects == s0.driver_objects,
           "%llu driver objects after everything was freed (%llu before)",
           (unsigned long long)s2.driver_objects, (unsigned long long)s0.driver_objects);
    if (di.emulated)
        CHECKF(e2.rm_objs == e0.rm_objs, "the emulated RM holds %lld objects (%lld before)",
               (long long)e2.rm_objs, (long long)e0.rm_objs);
done:
    for (int i = 0; i < NB; i++)
        hcq_buf_free(b[i]);
    hcq_queue_destroy(q);
    hcq_queue_destroy(cq);
    hcq_device_close(dev);
}

const struct th_case suite_mem_cases[] = {
    TH_CASE(mem_stats_driver_free),
    TH_CASE(mem_stats_driver_objects),
    TH_CASE(copy),
    TH_CASE(long_copy),
    TH_CASE_SLOW(copy_over_4g),
    TH_CASE(small_copies_from_host),
    TH_CASE(memory_barrier),
    TH_CASE(memory_barrier_before_copy),
    TH_CASE(import_host),
    TH_CASE(close_frees_everything),
};
const int suite_mem_case_count = TH_COUNT(suite_mem_cases);
