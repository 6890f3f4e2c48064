/* SPDX-License-Identifier: MIT */
/*
 * pb_ring.c - the stream allocator of the pushbuffer engine: a byte ring handed out
 * in order and recycled only behind timeline fences (see pb_ring.h for why).
 * Layer: hcq. No device access: waiting for a fence is the caller's business.
 */
#include "pb_ring.h"

#include "util_log.h"

#include <stdlib.h>

enum hcq_status
pb_ring_init(struct pb_ring *r, uint64_t size_B, uint32_t fence_cap)
{
    *r = (struct pb_ring){0};
    if (size_B == 0 || (size_B & 4095) != 0 || fence_cap == 0 || (fence_cap & (fence_cap - 1)) != 0)
        return hcq_err(HCQ_ERR_INVALID,
                       "pb_ring_init: size 0x%llx / fences %u (expected a 4 KiB multiple and a power of two)",
                       (unsigned long long)size_B, fence_cap);
    r->fences = calloc(fence_cap, sizeof(*r->fences));
    if (!r->fences)
        return hcq_err(HCQ_ERR_NOMEM, "pb_ring_init: %u fences", fence_cap);
    r->size_B = size_B;
    r->fence_cap = fence_cap;
    return HCQ_OK;
}

void
pb_ring_fini(struct pb_ring *r)
{
    free(r->fences);
    *r = (struct pb_ring){0};
}

bool
pb_ring_alloc(struct pb_ring *r, uint64_t size_B, uint64_t align_B, uint64_t *off_out)
{
    if (size_B == 0 || size_B > r->size_B / 2)
        return false;
    uint64_t start = (r->head_B + align_B - 1) & ~(align_B - 1);
    uint64_t pos = start % r->size_B;
    if (pos + size_B > r->size_B) {
        /* Never straddle the end: skip to the start of the ring. The skipped bytes belong to
         * this allocation and come back with it. */
        start += r->size_B - pos;
        pos = 0;
    }
    if (start + size_B - r->tail_B > r->size_B)
        return false;
    r->head_B = start + size_B;
    *off_out = pos;
    return true;
}

uint64_t
pb_ring_unfenced(const struct pb_ring *r)
{
    uint64_t fenced =
        r->fence_wr != r->fence_rd ? r->fences[(r->fence_wr - 1) & (r->fence_cap - 1)].end_B : r->tail_B;
    return r->head_B - fenced;
}

bool
pb_ring_fence(struct pb_ring *r, uint64_t value)
{
    if (pb_ring_unfenced(r) == 0)
        return true;
    if (r->fence_wr - r->fence_rd == r->fence_cap)
        return false;
    r->fences[r->fence_wr & (r->fence_cap - 1)] = (struct pb_fence){.end_B = r->head_B, .value = value};
    r->fence_wr++;
    return true;
}

void
pb_ring_retire(struct pb_ring *r, uint64_t completed)
{
    while (r->fence_rd != r->fence_wr) {
        const struct pb_fence *f = &r->fences[r->fence_rd & (r->fence_cap - 1)];
        if (f->value > completed)
            break;
        r->tail_B = f->end_B;
        r->fence_rd++;
    }
}

bool
pb_ring_oldest(const struct pb_ring *r, uint64_t *value_out)
{
    if (r->fence_rd == r->fence_wr)
        return false;
    *value_out = r->fences[r->fence_rd & (r->fence_cap - 1)].value;
    return true;
}
