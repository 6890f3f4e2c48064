/* SPDX-License-Identifier: MIT */
/*
 * pb_ring.h - the two pieces of ring arithmetic the pushbuffer engine lives on, kept
 * free of devices so they can be unit-tested (tests/unit/test_engine.c):
 *
 *  - the GPFIFO ring: how many entries may be written without overwriting one the GPU has
 *    not fetched yet (docs/hw/nvgpu.md §4.9 [REC]: block while (put - GPGet) mod N >= N - 1);
 *  - the stream allocator: a byte ring (pushbuffers, cbuf0s, QMDs) whose space is handed out
 *    in order and given back only when the GPU has passed it, tracked by queue-timeline
 *    fences (docs/hw/nvgpu.md §6.9: the Jetson port's bump allocator wrapped without a fence
 *    check and overran memory still in use).
 * Layer: hcq.
 */
#ifndef PB_RING_H
#define PB_RING_H

#include <stdbool.h>
#include <stdint.h>

#include "hcq.h"

/* ==== GPFIFO ring ==== */

/* Entries that may be written at `put` while the GPU's fetch pointer is `get` (ring of
 * `entries`, a power of two). One slot stays empty so put == get means "empty". */
static inline uint32_t
pb_gpfifo_free(uint32_t put, uint32_t get, uint32_t entries)
{
    return entries - 1 - ((put - get) & (entries - 1));
}

/* Entries the GPU has not fetched yet. */
static inline uint32_t
pb_gpfifo_pending(uint32_t put, uint32_t get, uint32_t entries)
{
    return (put - get) & (entries - 1);
}

/* ==== Stream allocator ==== */

/* Everything handed out before byte `end_B` (monotonic count) is free once the queue's
 * timeline reaches `value`. */
struct pb_fence {
    uint64_t end_B;
    uint64_t value;
};

struct pb_ring {
    uint64_t size_B;         /* capacity (multiple of the largest alignment asked for) */
    uint64_t head_B;         /* bytes handed out so far (monotonic, never wraps) */
    uint64_t tail_B;         /* bytes given back so far (<= head_B) */
    struct pb_fence *fences; /* FIFO of pending fences, fence_cap (power of two) slots */
    uint32_t fence_cap;
    uint32_t fence_rd, fence_wr; /* monotonic indices; count = wr - rd */
};

HCQ_MUST_CHECK enum hcq_status pb_ring_init(struct pb_ring *r, uint64_t size_B, uint32_t fence_cap);
void pb_ring_fini(struct pb_ring *r);

/* Carve size_B bytes aligned to align_B (power of two, <= 4096) without crossing the end of
 * the ring. Returns true and the offset into the ring, or false when the space is still in
 * use by the GPU (retire fences, then try again) or can never fit (size_B > size_B / 2 of
 * the ring: callers split their work). */
bool pb_ring_alloc(struct pb_ring *r, uint64_t size_B, uint64_t align_B, uint64_t *off_out);

/* Record that everything handed out so far is free once the timeline reaches value (values
 * increase). Returns false when the fence FIFO is full (retire or wait first); recording
 * nothing new (no bytes since the last fence) also returns true. */
bool pb_ring_fence(struct pb_ring *r, uint64_t value);

/* Give back the space of every fence whose value <= completed. */
void pb_ring_retire(struct pb_ring *r, uint64_t completed);

/* Value of the oldest pending fence; false when none is pending. */
bool pb_ring_oldest(const struct pb_ring *r, uint64_t *value_out);

/* Bytes handed out and not yet given back. */
static inline uint64_t
pb_ring_used(const struct pb_ring *r)
{
    return r->head_B - r->tail_B;
}

/* Bytes handed out since the last fence (the unsubmitted part). */
uint64_t pb_ring_unfenced(const struct pb_ring *r);

#endif /* PB_RING_H */
