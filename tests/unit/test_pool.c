/* SPDX-License-Identifier: MIT */
/*
 * test_pool.c - the caching buffer pool of the pushbuffer engine (src/engine/pb_pool.c) on
 * emu:* devices: 10,000 mixed alloc/free cycles with live buffers never overlapping and
 * nothing leaked afterwards (emulator fds, mappings, buffer objects, VMs, channels, and
 * the process's own fds and mappings), statistics that add up, caps, HCQ_POOL=0, and out of
 * memory: the pool trims its cache and retries before a clean HCQ_ERR_NOMEM.
 */
#include "emu.h"
#include "harness.h"
#include "proc_count.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool
emu_equal(const struct emu_stats *a, const struct emu_stats *b)
{
    return a->devs == b->devs && a->fds == b->fds && a->maps == b->maps && a->bos == b->bos &&
           a->vms == b->vms && a->chans == b->chans && a->threads == b->threads;
}

#define LIVE_MAX 48

struct live {
    struct hcq_buf *b;
    uint64_t tag;
};

/* Log-uniform size from 1 byte to 64 MiB, biased to the small end as real workloads are. */
static uint64_t
rand_size(void)
{
    uint32_t bits = (uint32_t)(th_rand() % 27); /* up to 2^26 = 64 MiB */
    uint64_t lo = 1ull << bits;
    return lo + th_rand() % lo;
}

static void
cycles(struct th *t, const char *spec)
{
    struct hcq_device *dev = NULL;
    struct live live[LIVE_MAX] = {{0}};
    enum hcq_status ost = hcq_device_open(spec, &dev);
    if (ost == HCQ_ERR_NOT_FOUND || ost == HCQ_ERR_UNSUPPORTED)
        SKIP("%s: %s", spec, hcq_last_error());
    CHECK_OK(ost);
    struct emu_stats base;
    emu_stats_get(&base);
    int fds0 = proc_fds(), maps0 = proc_maps();
    uint64_t tag = 1;
    for (int i = 0; i < 10000; i++) {
        int slot = (int)(th_rand() % LIVE_MAX);
        struct live *l = &live[slot];
        if (l->b) {
            uint64_t *m = hcq_buf_map(l->b);
            if (m && hcq_buf_size(l->b) >= 8)
                CHECKF(*m == l->tag,
                       "cycle %d: buffer tag 0x%llx overwritten by 0x%llx (two live buffers share memory)", i,
                       (unsigned long long)l->tag, (unsigned long long)*m);
            hcq_buf_free(l->b);
            l->b = NULL;
            continue;
        }
        static const uint32_t kinds[3] = {HCQ_MEM_DEVICE, HCQ_MEM_DEVICE | HCQ_MEM_MAPPABLE, HCQ_MEM_HOST};
        uint32_t flags = kinds[th_rand() % 3];
        uint64_t size = rand_size();
        if (flags == HCQ_MEM_HOST && size > (8u << 20))
            size = 1 + size % (8u << 20); /* pinned host memory: smaller, as in practice */
        CHECK_OK(hcq_buf_alloc(dev, size, flags, &l->b));
        CHECK(hcq_buf_size(l->b) == size);
        l->tag = tag++;
        uint64_t *m = hcq_buf_map(l->b);
        if (m && size >= 8)
            *m = l->tag;
        /* no two live buffers overlap in GPU VA */
        for (int j = 0; j < LIVE_MAX && i % 97 == 0; j++) {
            if (j == slot || !live[j].b)
                continue;
            uint64_t a0 = hcq_buf_va(l->b), a1 = a0 + size, b0 = hcq_buf_va(live[j].b),
                     b1 = b0 + hcq_buf_size(live[j].b);
            CHECKF(a1 <= b0 || b1 <= a0, "cycle %d: live buffers overlap", i);
        }
        if (i % 500 == 0) {
            struct hcq_mem_stats s;
            CHECK_OK(hcq_device_mem_stats(dev, &s));
            CHECK(s.device.cached_B <= s.device.cap_B && s.host.cached_B <= s.host.cap_B);
            CHECK(s.device.reserved_B >= s.device.cached_B && s.host.reserved_B >= s.host.cached_B);
            CHECK(s.device_free_B + s.device.reserved_B == s.device_total_B);
        }
    }
    struct hcq_mem_stats s;
    CHECK_OK(hcq_device_mem_stats(dev, &s));
    CHECKF(s.device.hits + s.host.hits > 2000, "cache hits %llu + %llu", (unsigned long long)s.device.hits,
           (unsigned long long)s.host.hits);
    for (int j = 0; j < LIVE_MAX; j++) {
        hcq_buf_free(live[j].b);
        live[j].b = NULL;
    }
    CHECK_OK(hcq_device_mem_stats(dev, &s));
    CHECK(s.live_buffers == 0 && s.in_use_B == 0);
    /* everything held now is cache; trimming gives all of it back */
    CHECK(s.device.reserved_B == s.device.cached_B && s.host.reserved_B == s.host.cached_B);
    uint64_t cached = s.device.cached_B + s.host.cached_B;
    CHECK(hcq_device_mem_trim(dev) == cached);
    CHECK_OK(hcq_device_mem_stats(dev, &s));
    CHECK(s.device.reserved_B == 0 && s.host.reserved_B == 0 && s.device.cached_blocks == 0);
    CHECK(s.device.driver_allocs + s.host.driver_allocs == s.device.driver_frees + s.host.driver_frees);
    struct emu_stats now;
    emu_stats_get(&now);
    CHECKF(emu_equal(&base, &now), "emulator resources: fds %lld->%lld maps %lld->%lld bos %lld->%lld",
           (long long)base.fds, (long long)now.fds, (long long)base.maps, (long long)now.maps,
           (long long)base.bos, (long long)now.bos);
    CHECK_PROC_COUNTS(fds0, maps0);
done:
    for (int j = 0; j < LIVE_MAX; j++)
        hcq_buf_free(live[j].b);
    hcq_device_close(dev);
}

TEST(cycles_10000_gh100_no_leak)
{
    cycles(t, "emu:gh100");
}

TEST(cycles_10000_ga10b_no_leak)
{
    cycles(t, "emu:ga10b");
}

/* The same size again comes from the cache: no driver allocation, same memory. */
TEST(reuse_and_close)
{
    struct emu_stats base;
    emu_stats_get(&base);
    struct hcq_device *dev = NULL;
    struct hcq_buf *a = NULL, *b = NULL;
    CHECK_OK(hcq_device_open("emu:gh100", &dev));
    CHECK_OK(hcq_buf_alloc(dev, 3u << 20, HCQ_MEM_DEVICE, &a));
    uint64_t va = hcq_buf_va(a);
    hcq_buf_free(a);
    a = NULL;
    struct hcq_mem_stats s0, s1;
    CHECK_OK(hcq_device_mem_stats(dev, &s0));
    CHECK(s0.device.cached_blocks == 1);
    CHECK_OK(hcq_buf_alloc(dev, (3u << 20) - 100, HCQ_MEM_DEVICE, &b)); /* same class */
    CHECK_OK(hcq_device_mem_stats(dev, &s1));
    CHECK(hcq_buf_va(b) == va);
    CHECK(s1.device.hits == s0.device.hits + 1 && s1.device.driver_allocs == s0.device.driver_allocs);
    /* a host buffer never gets a device block */
    CHECK_OK(hcq_buf_alloc(dev, 3u << 20, HCQ_MEM_HOST, &a));
    CHECK(hcq_buf_va(a) != va && hcq_buf_map(a) != NULL);
    hcq_buf_free(a);
    a = NULL;
    hcq_buf_free(b);
    b = NULL;
done:
    hcq_buf_free(a);
    hcq_buf_free(b);
    hcq_device_close(dev); /* close trims: nothing left */
    struct emu_stats now;
    emu_stats_get(&now);
    CHECK(emu_equal(&base, &now));
}

/* Out of device memory: cached blocks are given back and the allocation retried; when even
 * that does not fit, a clean HCQ_ERR_NOMEM and the device stays usable. */
TEST(oom_trims_then_fails_cleanly)
{
    struct hcq_device *dev = NULL;
    struct hcq_buf *bufs[16] = {0};
    struct hcq_buf *big = NULL;
    CHECK_OK(hcq_device_open("emu:ga102", &dev)); /* 4 GiB of emulated VRAM */
    struct hcq_mem_stats s;
    CHECK_OK(hcq_device_mem_stats(dev, &s));
    CHECK(s.device_total_B == (4ull << 30));
    /* fill the cache: a 400 MiB block (class 448 MiB) sits there, within the 512 MiB cap */
    CHECK_OK(hcq_buf_alloc(dev, 400ull << 20, HCQ_MEM_DEVICE, &big));
    hcq_buf_free(big);
    big = NULL;
    CHECK_OK(hcq_device_mem_stats(dev, &s));
    CHECK(s.device.cached_B == (448ull << 20));
    /* now 1 GiB buffers until the device is full: the 4th fits only once the cached
     * block was given back */
    int n = 0;
    enum hcq_status st = HCQ_OK;
    while (n < 16 && (st = hcq_buf_alloc(dev, 1ull << 30, HCQ_MEM_DEVICE, &bufs[n])) == HCQ_OK)
        n++;
    CHECKF(st == HCQ_ERR_NOMEM, "full device -> %s (%s)", hcq_status_str(st), hcq_last_error());
    CHECKF(n == 4, "%d buffers of 1 GiB in 4 GiB", n);
    CHECK_OK(hcq_device_mem_stats(dev, &s));
    CHECKF(s.device.cached_B == 0 && s.device.trims >= 1, "cached %llu trims %llu",
           (unsigned long long)s.device.cached_B, (unsigned long long)s.device.trims);
    CHECK_OK(hcq_device_check(dev));
    /* rounding must not cost the last fitting allocation: with 912 MiB free, 900 MiB
     * (class 1 GiB) fits by falling back to the exact size */
    hcq_buf_free(bufs[3]); /* 1 GiB > cap: back to the driver at once */
    bufs[3] = NULL;
    CHECK_OK(hcq_buf_alloc(dev, 100ull << 20, HCQ_MEM_DEVICE, &bufs[3])); /* class 112 MiB */
    CHECK_OK(hcq_buf_alloc(dev, 900ull << 20, HCQ_MEM_DEVICE, &big));
    CHECK_OK(hcq_device_mem_stats(dev, &s));
    CHECK(s.device.reserved_B == (3ull << 30) + (112ull << 20) + (900ull << 20));
done:
    hcq_buf_free(big);
    for (int i = 0; i < 16; i++)
        hcq_buf_free(bufs[i]);
    hcq_device_close(dev);
}

/* Small blocks are slots of one slab (one driver allocation): 600 live 4 KiB buffers of each
 * kind take two slabs of 512 slots, each buffer its own memory (written through the GPU's
 * view of it: the copy engine), and giving them back leaves two empty slabs that a trim
 * returns; nothing of the emulator's is left. */
static void
slab_kind(struct th *t, uint32_t flags)
{
    enum { N = 600 };
    struct hcq_device *dev = NULL;
    struct hcq_buf **b = calloc(N, sizeof *b);
    struct emu_stats base, now;
    emu_stats_get(&base);
    unsetenv("HCQ_POOL_SLAB"); /* these tests are about the slabs */
    CHECK(b != NULL);
    CHECK_OK(hcq_device_open("emu:gh100", &dev));
    struct hcq_mem_stats s0, s1;
    CHECK_OK(hcq_device_mem_stats(dev, &s0));
    for (int i = 0; i < N; i++)
        CHECK_OK(hcq_buf_alloc(dev, 8 + th_rand() % 4089, flags, &b[i]));
    CHECK_OK(hcq_device_mem_stats(dev, &s1));
    const struct hcq_mem_pool_stats *p0 = flags & HCQ_MEM_HOST ? &s0.host : &s0.device;
    const struct hcq_mem_pool_stats *p1 = flags & HCQ_MEM_HOST ? &s1.host : &s1.device;
    CHECKF(p1->driver_allocs - p0->driver_allocs == 2 && p1->hits - p0->hits == N - 2,
           "%d buffers of <= 4 KiB: %llu driver allocations, %llu hits", N,
           (unsigned long long)(p1->driver_allocs - p0->driver_allocs),
           (unsigned long long)(p1->hits - p0->hits));
    CHECK(p1->reserved_B - p0->reserved_B == (4u << 20) && p1->cached_B - p0->cached_B == (1024u - N) * 4096);
    for (int i = 0; i < N; i++) {
        CHECKF(hcq_buf_va(b[i]) % 4096 == 0, "slot VA 0x%llx", (unsigned long long)hcq_buf_va(b[i]));
        for (int j = 0; j < i; j++)
            CHECK(hcq_buf_va(b[i]) != hcq_buf_va(b[j]));
        uint32_t v[2] = {0xc0de0000u + (uint32_t)i, (uint32_t)th_rand()};
        CHECK_OK(hcq_buf_write(b[i], 0, v, sizeof v));
        if (hcq_buf_map(b[i]))
            CHECK(memcmp(hcq_buf_map(b[i]), v, sizeof v) == 0);
    }
    for (int i = 0; i < N; i++) {
        uint32_t v[2] = {0};
        CHECK_OK(hcq_buf_read(b[i], 0, v, sizeof v));
        CHECKF(v[0] == 0xc0de0000u + (uint32_t)i, "buffer %d reads 0x%x", i, v[0]);
    }
    for (int i = 0; i < N; i++) {
        hcq_buf_free(b[i]);
        b[i] = NULL;
    }
    CHECK_OK(hcq_device_mem_stats(dev, &s1));
    CHECK(p1->reserved_B == p0->reserved_B + (4u << 20) && p1->cached_B == p0->cached_B + (4u << 20));
    CHECK(p1->cached_blocks == p0->cached_blocks + 2);
    CHECK(hcq_device_mem_trim(dev) >= (4u << 20));
    CHECK_OK(hcq_device_mem_stats(dev, &s1));
    CHECK(p1->reserved_B == 0 && p1->cached_B == 0 && p1->cached_blocks == 0);
done:
    for (int i = 0; b && i < N; i++)
        hcq_buf_free(b[i]);
    free(b);
    hcq_device_close(dev);
    emu_stats_get(&now);
    CHECK(emu_equal(&base, &now));
}

TEST(slab_device)
{
    slab_kind(t, HCQ_MEM_DEVICE);
}

TEST(slab_mappable)
{
    slab_kind(t, HCQ_MEM_DEVICE | HCQ_MEM_MAPPABLE);
}

TEST(slab_host)
{
    slab_kind(t, HCQ_MEM_HOST);
}

/* A slab is made only while its free slots fit under the cap: with a 1 MiB cap a 4 KiB buffer
 * is a whole block of its own, and 1 MiB buffers (slab of 4) are too. */
TEST(slab_respects_cap)
{
    struct hcq_device *dev = NULL;
    struct hcq_buf *a = NULL, *b = NULL;
    setenv("HCQ_POOL_MAX_MB", "1", 1);
    unsetenv("HCQ_POOL_SLAB");
    enum hcq_status ost = hcq_device_open("emu:gh100", &dev);
    unsetenv("HCQ_POOL_MAX_MB");
    CHECK_OK(ost);
    struct hcq_mem_stats s;
    CHECK_OK(hcq_buf_alloc(dev, 4096, HCQ_MEM_DEVICE, &a));
    CHECK_OK(hcq_buf_alloc(dev, 1 << 20, HCQ_MEM_DEVICE, &b));
    CHECK_OK(hcq_device_mem_stats(dev, &s));
    CHECKF(s.device.reserved_B == 4096 + (1u << 20) && s.device.cached_B == 0, "reserved %llu cached %llu",
           (unsigned long long)s.device.reserved_B, (unsigned long long)s.device.cached_B);
    hcq_buf_free(a);
    a = NULL;
    hcq_buf_free(b);
    b = NULL;
    CHECK_OK(hcq_device_mem_stats(dev, &s));
    CHECK(s.device.cached_B <= s.device.cap_B);
done:
    hcq_buf_free(a);
    hcq_buf_free(b);
    hcq_device_close(dev);
}

/* HCQ_POOL=0: every free goes back to the driver. */
TEST(pool_off)
{
    struct hcq_device *dev = NULL;
    struct hcq_buf *a = NULL;
    setenv("HCQ_POOL", "0", 1);
    enum hcq_status ost = hcq_device_open("emu:gh100", &dev);
    unsetenv("HCQ_POOL");
    CHECK_OK(ost);
    CHECK_OK(hcq_buf_alloc(dev, 5000, HCQ_MEM_DEVICE, &a));
    hcq_buf_free(a);
    a = NULL;
    struct hcq_mem_stats s;
    CHECK_OK(hcq_device_mem_stats(dev, &s));
    CHECK(s.device.cap_B == 0 && s.device.cached_B == 0 && s.device.reserved_B == 0 &&
          s.device.driver_frees == 1);
done:
    hcq_buf_free(a);
    hcq_device_close(dev);
}

int
main(int argc, char **argv)
{
    static const struct th_case cases[] = {
        TH_CASE(cycles_10000_gh100_no_leak),
        TH_CASE(cycles_10000_ga10b_no_leak),
        TH_CASE(reuse_and_close),
        TH_CASE(oom_trims_then_fails_cleanly),
        TH_CASE(pool_off),
        TH_CASE(slab_device),
        TH_CASE(slab_mappable),
        TH_CASE(slab_host),
        TH_CASE(slab_respects_cap),
    };
    return th_run("pool", NULL, cases, TH_COUNT(cases), argc - 1, argv + 1);
}
