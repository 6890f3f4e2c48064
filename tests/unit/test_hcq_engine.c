/* SPDX-License-Identifier: MIT */
/*
 * test_hcq_engine.c - unit tests of the pushbuffer engine's ring arithmetic that need no
 * device: GPFIFO free-slot counting across wraparound, and the stream allocator (in-order
 * hand-out, recycling only behind timeline fences, never overlapping memory the simulated
 * GPU has not passed, never straddling the end of the ring).
 */
#include "harness.h"

#include "hcq_pb_ring.h"

#include <stdlib.h>
#include <string.h>

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
            CHECKF(hcq_pb_gpfifo_pending(put, get, n) == pending, "n %u put %u get %u: pending %u (expected %u)", n,
                   put, get, hcq_pb_gpfifo_pending(put, get, n), pending);
            CHECKF(hcq_pb_gpfifo_free(put, get, n) == n - 1 - pending, "n %u put %u get %u: free %u (expected %u)", n,
                   put, get, hcq_pb_gpfifo_free(put, get, n), n - 1 - pending);
        }
        /* Full ring: one slot stays empty so put == get always means "empty". */
        CHECK(hcq_pb_gpfifo_free(n - 1, 0, n) == 0);
        CHECK(hcq_pb_gpfifo_free(3 % n, (3 + 1) % n, n) == 0);
        CHECK(hcq_pb_gpfifo_free(5 % n, 5 % n, n) == n - 1);
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
    struct hcq_pb_ring r = {0};
    const uint64_t size = 64 * 1024;
    struct live_chunk *live = calloc(100000, sizeof(*live));
    CHECK_OK(hcq_pb_ring_init(&r, size, 64));
    uint32_t live_n = 0;
    uint64_t submitted = 0, completed = 0, handed_B = 0;
    uint32_t wraps = 0, waits = 0;
    uint64_t last_off = 0;
    CHECK(live);
    for (int step = 0; step < 20000; step++) {
        uint64_t n = 1 + th_rand() % 6000;
        uint64_t align = 1ull << (th_rand() % 9); /* 1 .. 256 */
        uint64_t off;
        while (!hcq_pb_ring_alloc(&r, n, align, &off)) {
            /* Full: what a queue does - retire what completed, else wait for the oldest fence
             * (here: the GPU completes it), else fence the unsubmitted part first. */
            uint64_t oldest;
            if (hcq_pb_ring_oldest(&r, &oldest)) {
                CHECK(oldest > completed);
                completed = oldest;
                hcq_pb_ring_retire(&r, completed);
                waits++;
            } else {
                CHECK(hcq_pb_ring_unfenced(&r) > 0); /* an empty ring always fits n <= size/2 */
                CHECK(hcq_pb_ring_fence(&r, ++submitted));
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
                   "step %d: chunk [0x%llx,+0x%llx) overlaps live [0x%llx,+0x%llx) of value %llu (completed %llu)",
                   step, (unsigned long long)off, (unsigned long long)n, (unsigned long long)live[i].off,
                   (unsigned long long)live[i].size, (unsigned long long)live[i].value,
                   (unsigned long long)completed);
        /* Unsubmitted chunks belong to the next fence. */
        live[live_n++] = (struct live_chunk){off, n, submitted + 1};
        handed_B += n;
        CHECK(hcq_pb_ring_used(&r) <= size);
        /* Submit now and then; the GPU completes now and then. */
        if (th_rand() % 3 == 0) {
            if (!hcq_pb_ring_fence(&r, submitted + 1)) {
                uint64_t oldest;
                CHECK(hcq_pb_ring_oldest(&r, &oldest));
                completed = oldest;
                hcq_pb_ring_retire(&r, completed);
                CHECK(hcq_pb_ring_fence(&r, submitted + 1));
            }
            submitted++;
            CHECK(hcq_pb_ring_unfenced(&r) == 0);
        }
        if (th_rand() % 4 == 0 && completed < submitted) {
            completed += 1 + th_rand() % (submitted - completed);
            hcq_pb_ring_retire(&r, completed);
        }
    }
    CHECKF(wraps > 10 && waits > 10, "the test did not exercise wraparound (%u) and waits (%u)", wraps, waits);
    CHECK(handed_B > 100 * size);
done:
    free(live);
    hcq_pb_ring_fini(&r);
}

TEST(ring_limits)
{
    struct hcq_pb_ring r;
    uint64_t off;
    CHECK(hcq_pb_ring_init(&r, 1000, 4) == HCQ_ERR_INVALID); /* not a 4 KiB multiple */
    CHECK(hcq_pb_ring_init(&r, 4096, 3) == HCQ_ERR_INVALID); /* fences not a power of two */
    CHECK_OK(hcq_pb_ring_init(&r, 8192, 4));
    CHECK(!hcq_pb_ring_alloc(&r, 4097, 4, &off));           /* more than half: never fits */
    CHECK(!hcq_pb_ring_alloc(&r, 0, 4, &off));
    CHECK(hcq_pb_ring_alloc(&r, 4096, 256, &off) && off == 0);
    CHECK(hcq_pb_ring_alloc(&r, 4000, 256, &off) && off == 4096);
    CHECK(!hcq_pb_ring_alloc(&r, 256, 256, &off));          /* 96 bytes left: in use */
    uint64_t v;
    CHECK(!hcq_pb_ring_oldest(&r, &v));
    /* Fence FIFO of 4: fifth fence refused until one retires. */
    for (uint64_t i = 1; i <= 4; i++) {
        CHECK(hcq_pb_ring_fence(&r, i));
        CHECK(hcq_pb_ring_fence(&r, i + 100)); /* nothing new handed out: no new fence */
        if (i < 4)
            CHECK(hcq_pb_ring_alloc(&r, 1, 1, &off));
    }
    CHECK(hcq_pb_ring_oldest(&r, &v) && v == 1);
    hcq_pb_ring_retire(&r, 0);
    CHECK(hcq_pb_ring_used(&r) > 8000);
    hcq_pb_ring_retire(&r, 4);
    CHECK(hcq_pb_ring_used(&r) == 0);
    CHECK(!hcq_pb_ring_oldest(&r, &v));
    /* After everything retired, the wrap skip still fits a half-ring request. */
    CHECK(hcq_pb_ring_alloc(&r, 4096, 4096, &off));
done:
    hcq_pb_ring_fini(&r);
}

TEST(ring_fence_fifo_full)
{
    struct hcq_pb_ring r;
    uint64_t off;
    CHECK_OK(hcq_pb_ring_init(&r, 1 << 20, 8));
    for (uint64_t i = 1; i <= 8; i++) {
        CHECK(hcq_pb_ring_alloc(&r, 64, 64, &off));
        CHECK(hcq_pb_ring_fence(&r, i));
    }
    CHECK(hcq_pb_ring_alloc(&r, 64, 64, &off));
    CHECK(!hcq_pb_ring_fence(&r, 9));
    CHECK(hcq_pb_ring_unfenced(&r) == 64);
    hcq_pb_ring_retire(&r, 3);
    CHECK(hcq_pb_ring_fence(&r, 9));
    CHECK(hcq_pb_ring_unfenced(&r) == 0);
    CHECK(hcq_pb_ring_used(&r) == 6 * 64);
done:
    hcq_pb_ring_fini(&r);
}

int
main(int argc, char **argv)
{
    static const struct th_case cases[] = {
        TH_CASE(gpfifo_free_wraparound),
        TH_CASE(ring_recycles_only_behind_fences),
        TH_CASE(ring_limits),
        TH_CASE(ring_fence_fifo_full),
    };
    return th_run("hcq_engine", NULL, cases, TH_COUNT(cases), argc - 1, argv + 1) ? 1 : 0;
}
