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
    };
    return th_run("pool", NULL, cases, TH_COUNT(cases), argc - 1, argv + 1);
}
