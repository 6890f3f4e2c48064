/* SPDX-License-Identifier: MIT */
/*
 * hcq_buf.c - buffers: allocation through the backend, CPU access helpers with a
 * staging path for unmapped device memory. Layer: core.
 */
#include "hcq_priv.h"

#include <stdlib.h>
#include <string.h>

#define STAGING_CHUNK_B (16ull << 20)

static enum hcq_status
buf_track(struct hcq_device *dev, struct hcq_buf *buf)
{
    enum hcq_status st = HCQ_OK;
    pthread_mutex_lock(&dev->lock);
    if (dev->buf_count == dev->buf_cap) {
        uint32_t cap = dev->buf_cap ? dev->buf_cap * 2 : 64;
        struct hcq_buf **n = realloc(dev->bufs, cap * sizeof *n);
        if (!n) {
            st = hcq_err(HCQ_ERR_NOMEM, "hcq_buf_alloc: out of host memory for the buffer list");
            goto out;
        }
        dev->bufs = n;
        dev->buf_cap = cap;
    }
    dev->bufs[dev->buf_count++] = buf;
out:
    pthread_mutex_unlock(&dev->lock);
    return st;
}

static void
buf_untrack(struct hcq_device *dev, struct hcq_buf *buf)
{
    pthread_mutex_lock(&dev->lock);
    for (uint32_t i = 0; i < dev->buf_count; i++) {
        if (dev->bufs[i] == buf) {
            dev->bufs[i] = dev->bufs[--dev->buf_count];
            break;
        }
    }
    pthread_mutex_unlock(&dev->lock);
}

static enum hcq_status
buf_create(struct hcq_device *dev, uint64_t size_B, uint32_t flags, void *host_ptr, struct hcq_buf **buf_out)
{
    enum hcq_status st;
    if (!dev || !buf_out)
        return hcq_err(HCQ_ERR_INVALID, "hcq_buf_alloc: NULL argument");
    *buf_out = NULL;
    if (size_B == 0)
        return hcq_err(HCQ_ERR_INVALID, "hcq_buf_alloc: size 0");
    if (flags & ~(uint32_t)(HCQ_MEM_HOST | HCQ_MEM_MAPPABLE))
        return hcq_err(HCQ_ERR_INVALID, "hcq_buf_alloc: unknown flags 0x%x", flags);
    if (atomic_load(&dev->lost))
        return hcq_err(HCQ_ERR_DEVICE_LOST, "hcq_buf_alloc: %s is lost: %s", dev->info.spec, dev->fault);
    struct hcq_buf *buf = calloc(1, sizeof *buf);
    if (!buf)
        return hcq_err(HCQ_ERR_NOMEM, "hcq_buf_alloc: out of host memory");
    buf->dev = dev;
    buf->size_B = size_B;
    buf->flags = host_ptr ? HCQ_MEM_HOST : flags;
    if (host_ptr) {
        if (!dev->ops->buf_import_host) {
            st = hcq_err(HCQ_ERR_UNSUPPORTED, "hcq_buf_import_host: not supported by backend %s",
                         dev->ops->name);
            goto fail_buf;
        }
        buf->map = host_ptr;
        buf->imported = true;
        st = dev->ops->buf_import_host(dev, buf);
    } else {
        st = dev->ops->buf_alloc(dev, buf);
    }
    if (st != HCQ_OK)
        goto fail_buf;
    if ((flags & (HCQ_MEM_HOST | HCQ_MEM_MAPPABLE)) && !buf->map) {
        st = hcq_err(HCQ_ERR_UNSUPPORTED,
                     "hcq_buf_alloc: backend %s returned an unmapped buffer for flags 0x%x", dev->ops->name,
                     flags);
        goto fail_alloc;
    }
    if (buf->map && !host_ptr) {
        uint32_t dbg = hcq_debug_flags();
        if (dbg & HCQ_DEBUG_TRASH_MEM)
            memset(buf->map, 0xAB, size_B);
        else if (dbg & HCQ_DEBUG_ZERO_MEM)
            memset(buf->map, 0, size_B);
    }
    st = buf_track(dev, buf);
    if (st != HCQ_OK)
        goto fail_alloc;
    *buf_out = buf;
    return HCQ_OK;

fail_alloc:
    dev->ops->buf_free(dev, buf);
fail_buf:
    free(buf);
    return st;
}

enum hcq_status
hcq_buf_track(struct hcq_device *dev, struct hcq_buf *buf)
{
    return buf_track(dev, buf);
}

enum hcq_status
hcq_buf_alloc(struct hcq_device *dev, uint64_t size_B, uint32_t flags, struct hcq_buf **buf_out)
{
    return buf_create(dev, size_B, flags, NULL, buf_out);
}

enum hcq_status
hcq_buf_import_host(struct hcq_device *dev, void *ptr, uint64_t size_B, struct hcq_buf **buf_out)
{
    if (!ptr || ((uintptr_t)ptr & 4095) || (size_B & 4095))
        return hcq_err(HCQ_ERR_INVALID, "hcq_buf_import_host: ptr %p / size 0x%llx must be 4 KiB aligned",
                       ptr, (unsigned long long)size_B);
    return buf_create(dev, size_B, HCQ_MEM_HOST, ptr, buf_out);
}

void
hcq_buf_free(struct hcq_buf *buf)
{
    if (!buf)
        return;
    buf_untrack(buf->dev, buf);
    buf->dev->ops->buf_free(buf->dev, buf);
    free(buf);
}

void
hcq_buf_free_all(struct hcq_device *dev)
{
    while (dev->buf_count) {
        struct hcq_buf *b = dev->bufs[dev->buf_count - 1];
        hcq_buf_free(b);
    }
}

enum hcq_status
hcq_device_mem_stats(struct hcq_device *dev, struct hcq_mem_stats *out)
{
    if (!dev || !out)
        return hcq_err(HCQ_ERR_INVALID, "hcq_device_mem_stats: NULL argument");
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&dev->lock);
    out->live_buffers = dev->buf_count;
    for (uint32_t i = 0; i < dev->buf_count; i++)
        out->in_use_B += dev->bufs[i]->size_B;
    pthread_mutex_unlock(&dev->lock);
    if (dev->ops->mem_stats)
        dev->ops->mem_stats(dev, out);
    out->device_total_B = dev->info.mem_B;
    out->device_free_B =
        out->device_total_B > out->device.reserved_B ? out->device_total_B - out->device.reserved_B : 0;
    return HCQ_OK;
}

uint64_t
hcq_device_mem_trim(struct hcq_device *dev)
{
    return dev && dev->ops->mem_trim ? dev->ops->mem_trim(dev) : 0;
}

uint64_t
hcq_buf_va(const struct hcq_buf *buf)
{
    return buf ? buf->va : 0;
}

void *
hcq_buf_map(const struct hcq_buf *buf)
{
    return buf ? buf->map : NULL;
}

uint64_t
hcq_buf_size(const struct hcq_buf *buf)
{
    return buf ? buf->size_B : 0;
}

static enum hcq_status
check_range(const struct hcq_buf *buf, uint64_t off, uint64_t size_B, const char *what)
{
    if (!buf)
        return hcq_err(HCQ_ERR_INVALID, "%s: buffer is NULL", what);
    if (off > buf->size_B || size_B > buf->size_B - off)
        return hcq_err(HCQ_ERR_INVALID, "%s: range [0x%llx, +0x%llx) outside buffer of 0x%llx bytes", what,
                       (unsigned long long)off, (unsigned long long)size_B, (unsigned long long)buf->size_B);
    return HCQ_OK;
}

/* Copy between an unmapped buffer and host memory through the device's pinned staging
 * buffer, in chunks, double-buffered: the CPU fills (or drains) one half while the copy
 * engine works on the other. The staging buffer, queue and signal are created on first
 * use and kept until the device closes (allocating pinned memory per call cost more than
 * the copy). Caller holds dev->staging_lock. */
static enum hcq_status
staging_init(struct hcq_device *dev)
{
    enum hcq_status st = HCQ_OK;
    if (!dev->internal_copy && (st = hcq_queue_create(dev, HCQ_QUEUE_COPY, &dev->internal_copy)) != HCQ_OK)
        return st;
    if (!dev->staging_sig && (st = hcq_signal_create(dev, 0, &dev->staging_sig)) != HCQ_OK)
        return st;
    if (!dev->staging &&
        (st = hcq_buf_alloc(dev, 2 * STAGING_CHUNK_B, HCQ_MEM_HOST, &dev->staging)) != HCQ_OK)
        return st;
    return HCQ_OK;
}

static enum hcq_status
staged_copy(struct hcq_buf *buf, uint64_t off, void *host, uint64_t size_B, bool to_device)
{
    struct hcq_device *dev = buf->dev;
    pthread_mutex_lock(&dev->staging_lock);
    enum hcq_status st = staging_init(dev);
    uint64_t n_chunks = (size_B + STAGING_CHUNK_B - 1) / STAGING_CHUNK_B;
    uint64_t tick0 = dev->staging_tick; /* chunk i completes at tick0 + i + 1 */
    uint8_t *half[2] = {NULL, NULL};
    if (st == HCQ_OK) {
        half[0] = dev->staging->map;
        half[1] = (uint8_t *)dev->staging->map + STAGING_CHUNK_B;
    }
    /* Reads keep up to two copies in flight and drain chunk i - 1 in iteration i. */
    for (uint64_t i = 0; i < n_chunks + (to_device ? 0 : 1) && st == HCQ_OK; i++) {
        if (i < n_chunks) {
            uint64_t done = i * STAGING_CHUNK_B;
            uint64_t n = size_B - done < STAGING_CHUNK_B ? size_B - done : STAGING_CHUNK_B;
            uint32_t h = (uint32_t)(i & 1);
            /* the half is free once the copy that used it two chunks ago completed */
            if (i >= 2)
                st = hcq_signal_wait(dev->staging_sig, tick0 + i - 1, HCQ_TIMEOUT_DEFAULT_NS);
            if (st == HCQ_OK && to_device)
                memcpy(half[h], (const uint8_t *)host + done, n);
            if (st == HCQ_OK)
                st = to_device ? hcq_queue_copy(dev->internal_copy, buf, off + done, dev->staging,
                                                h * STAGING_CHUNK_B, n)
                               : hcq_queue_copy(dev->internal_copy, dev->staging, h * STAGING_CHUNK_B, buf,
                                                off + done, n);
            if (st == HCQ_OK)
                st = hcq_queue_signal(dev->internal_copy, dev->staging_sig, tick0 + i + 1);
            if (st == HCQ_OK)
                st = hcq_queue_submit(dev->internal_copy);
        }
        if (!to_device && i >= 1 && st == HCQ_OK) {
            uint64_t c = i - 1;
            uint64_t done = c * STAGING_CHUNK_B;
            uint64_t n = size_B - done < STAGING_CHUNK_B ? size_B - done : STAGING_CHUNK_B;
            st = hcq_signal_wait(dev->staging_sig, tick0 + c + 1, HCQ_TIMEOUT_DEFAULT_NS);
            if (st == HCQ_OK)
                memcpy((uint8_t *)host + done, half[c & 1], n);
        }
    }
    if (st == HCQ_OK)
        st = hcq_signal_wait(dev->staging_sig, tick0 + n_chunks, HCQ_TIMEOUT_DEFAULT_NS);
    dev->staging_tick = tick0 + n_chunks;
    if (st != HCQ_OK && dev->staging_sig) {
        /* leave the timeline consistent for the next call: drain the queue, then resync */
        if (dev->internal_copy && hcq_queue_finish(dev->internal_copy, HCQ_TIMEOUT_DEFAULT_NS) != HCQ_OK)
            HCQ_LOG_WARN("hcq_buf staging: copy queue did not drain after a failure");
        dev->staging_tick = hcq_signal_value(dev->staging_sig);
    }
    pthread_mutex_unlock(&dev->staging_lock);
    return st;
}

enum hcq_status
hcq_buf_write(struct hcq_buf *buf, uint64_t offset_B, const void *src, uint64_t size_B)
{
    enum hcq_status st = check_range(buf, offset_B, size_B, "hcq_buf_write");
    if (st != HCQ_OK || size_B == 0)
        return st;
    if (buf->map) {
        memcpy((uint8_t *)buf->map + offset_B, src, size_B);
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        return HCQ_OK;
    }
    return staged_copy(buf, offset_B, (void *)src, size_B, true);
}

enum hcq_status
hcq_buf_read(struct hcq_buf *buf, uint64_t offset_B, void *dst, uint64_t size_B)
{
    enum hcq_status st = check_range(buf, offset_B, size_B, "hcq_buf_read");
    if (st != HCQ_OK || size_B == 0)
        return st;
    if (buf->map) {
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        memcpy(dst, (const uint8_t *)buf->map + offset_B, size_B);
        return HCQ_OK;
    }
    return staged_copy(buf, offset_B, dst, size_B, false);
}
