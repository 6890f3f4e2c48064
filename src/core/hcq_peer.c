/* SPDX-License-Identifier: MIT */
/*
 * hcq_peer.c - several devices in one process: a buffer of one device mapped into
 * another (hcq_buf_peer_map) and queues waiting on / signalling another device's timeline
 * signals. Layer: core.
 *
 * Host memory (HCQ_MEM_HOST buffers, imported host memory, device memory of unified-memory
 * devices) reaches any device: its pages are imported into the other device like any
 * host memory. Device memory (VRAM) of another GPU needs the backend's peer path
 * (buf_peer_map: CUDA peer access, rm peer mappings: NVLink pairs, PCIe with HCQ_RM_PEER=1); without one the
 * map is refused with HCQ_ERR_UNSUPPORTED and callers stage through host memory.
 *
 * Signals live in pages of host memory (hcq_signal.c), so a queue of device B uses a
 * signal of device A through an alias: a signal object of B whose slot is A's slot and
 * whose GPU address is that slot's page imported into B. Aliases and imported pages are
 * kept per device (one import per page) until the device closes; a device must close
 * before the devices whose signals or buffers it uses (their memory backs its imports).
 */
#include "hcq_priv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PEER_PAGE_B 4096u

struct hcq_peer_page {
    uintptr_t host;      /* page-aligned host address */
    struct hcq_buf *buf; /* that page imported into the device */
};

struct hcq_peer_cache {
    struct hcq_peer_page *pages;
    uint32_t page_count, page_cap;
    struct hcq_signal **aliases;
    uint32_t alias_count, alias_cap;
};

void hcq_peer_destroy(struct hcq_device *dev);

void
hcq_peer_destroy(struct hcq_device *dev)
{
    struct hcq_peer_cache *pc = dev->peer;
    if (!pc)
        return;
    /* the imported pages are buffers of dev: hcq_buf_free_all frees them */
    for (uint32_t i = 0; i < pc->alias_count; i++)
        free(pc->aliases[i]);
    free(pc->aliases);
    free(pc->pages);
    free(pc);
    dev->peer = NULL;
}

static struct hcq_peer_cache *
peer_cache(struct hcq_device *dev)
{
    if (!dev->peer)
        dev->peer = calloc(1, sizeof *dev->peer);
    return dev->peer;
}

/* GPU address in dev of another device's signal page (mapped once), dev->lock not held. */
static enum hcq_status
peer_page_va(struct hcq_device *dev, struct hcq_buf *page, uint64_t *va_out)
{
    uintptr_t host = (uintptr_t)page->map;
    pthread_mutex_lock(&dev->lock);
    struct hcq_peer_cache *pc = peer_cache(dev);
    if (!pc) {
        pthread_mutex_unlock(&dev->lock);
        return hcq_err(HCQ_ERR_NOMEM, "peer: out of host memory");
    }
    for (uint32_t i = 0; i < pc->page_count; i++)
        if (pc->pages[i].host == host) {
            *va_out = pc->pages[i].buf->va;
            pthread_mutex_unlock(&dev->lock);
            return HCQ_OK;
        }
    pthread_mutex_unlock(&dev->lock);
    struct hcq_buf *buf = NULL;
    enum hcq_status st = hcq_buf_peer_map(dev, page, &buf);
    if (st != HCQ_OK)
        return st;
    pthread_mutex_lock(&dev->lock);
    if (pc->page_count == pc->page_cap) {
        uint32_t cap = pc->page_cap ? 2 * pc->page_cap : 8;
        struct hcq_peer_page *n = realloc(pc->pages, cap * sizeof *n);
        if (!n) {
            pthread_mutex_unlock(&dev->lock);
            hcq_buf_free(buf);
            return hcq_err(HCQ_ERR_NOMEM, "peer: out of host memory");
        }
        pc->pages = n;
        pc->page_cap = cap;
    }
    pc->pages[pc->page_count++] = (struct hcq_peer_page){.host = host, .buf = buf};
    *va_out = buf->va;
    pthread_mutex_unlock(&dev->lock);
    return HCQ_OK;
}

enum hcq_status
hcq_signal_peer(struct hcq_device *dev, struct hcq_signal *sig, struct hcq_signal **alias_out)
{
    if (sig->dev == dev) {
        *alias_out = sig;
        return HCQ_OK;
    }
    pthread_mutex_lock(&dev->lock);
    struct hcq_peer_cache *pc = peer_cache(dev);
    for (uint32_t i = 0; pc && i < pc->alias_count; i++)
        if (pc->aliases[i]->slot == sig->slot) {
            *alias_out = pc->aliases[i];
            pthread_mutex_unlock(&dev->lock);
            return HCQ_OK;
        }
    pthread_mutex_unlock(&dev->lock);
    if (!pc)
        return hcq_err(HCQ_ERR_NOMEM, "peer: out of host memory");
    struct hcq_buf *page = hcq_signal_page_buf(sig);
    uintptr_t host = (uintptr_t)page->map;
    uint64_t page_va = 0;
    enum hcq_status st = peer_page_va(dev, page, &page_va);
    if (st != HCQ_OK)
        return hcq_err(st, "signal of %s used on %s: its page is not reachable there: %s",
                       sig->dev->info.spec, dev->info.spec, hcq_last_error());
    struct hcq_signal *a = calloc(1, sizeof *a);
    if (!a)
        return hcq_err(HCQ_ERR_NOMEM, "peer: out of host memory");
    a->dev = dev;
    a->slot = sig->slot;
    a->va = page_va + ((uintptr_t)sig->slot - host);
    a->pool_index = UINT32_MAX; /* not from dev's pool: never returned to it */
    pthread_mutex_lock(&dev->lock);
    if (pc->alias_count == pc->alias_cap) {
        uint32_t cap = pc->alias_cap ? 2 * pc->alias_cap : 8;
        struct hcq_signal **n = realloc(pc->aliases, cap * sizeof *n);
        if (!n) {
            pthread_mutex_unlock(&dev->lock);
            free(a);
            return hcq_err(HCQ_ERR_NOMEM, "peer: out of host memory");
        }
        pc->aliases = n;
        pc->alias_cap = cap;
    }
    pc->aliases[pc->alias_count++] = a;
    pthread_mutex_unlock(&dev->lock);
    *alias_out = a;
    return HCQ_OK;
}

enum hcq_status
hcq_buf_peer_map(struct hcq_device *dev, struct hcq_buf *buf, struct hcq_buf **alias_out)
{
    if (!dev || !buf || !alias_out)
        return hcq_err(HCQ_ERR_INVALID, "hcq_buf_peer_map: NULL argument");
    *alias_out = NULL;
    if (buf->dev == dev)
        return hcq_err(HCQ_ERR_INVALID, "hcq_buf_peer_map: the buffer already belongs to %s", dev->info.spec);
    char why[256] = ""; /* the backend's reason for refusing a peer path */
    if (dev->ops->buf_peer_map) {
        struct hcq_buf *a = calloc(1, sizeof *a);
        if (!a)
            return hcq_err(HCQ_ERR_NOMEM, "hcq_buf_peer_map: out of host memory");
        a->dev = dev;
        a->size_B = buf->size_B;
        a->flags = buf->flags;
        a->imported = true;
        enum hcq_status st = dev->ops->buf_peer_map(dev, buf, a);
        if (st == HCQ_OK)
            st = hcq_buf_track(dev, a);
        if (st == HCQ_OK) {
            *alias_out = a;
            return HCQ_OK;
        }
        free(a);
        if (st != HCQ_ERR_UNSUPPORTED)
            return st;
        snprintf(why, sizeof why, "%s", hcq_last_error());
    }
    bool host_memory = (buf->flags & HCQ_MEM_HOST) || buf->imported || buf->dev->info.unified_memory;
    if (!host_memory || !buf->map)
        return hcq_err(
            HCQ_ERR_UNSUPPORTED,
            "hcq_buf_peer_map: device memory of %s is not reachable from %s (no peer access between "
            "them%s%s); stage through host memory",
            buf->dev->info.spec, dev->info.spec, why[0] ? ": " : "", why);
    /* Host memory: import its pages (allocations are whole pages; imports must be). */
    uintptr_t host = (uintptr_t)buf->map & ~(uintptr_t)(PEER_PAGE_B - 1);
    uint64_t lead_B = (uintptr_t)buf->map - host;
    uint64_t size_B = (lead_B + buf->size_B + PEER_PAGE_B - 1) & ~(uint64_t)(PEER_PAGE_B - 1);
    if (lead_B != 0)
        return hcq_err(HCQ_ERR_UNSUPPORTED, "hcq_buf_peer_map: host buffer at %p is not page-aligned",
                       buf->map);
    enum hcq_status st = hcq_buf_import_host(dev, (void *)host, size_B, alias_out);
    if (st != HCQ_OK)
        return hcq_err(st, "hcq_buf_peer_map: importing %s's host memory into %s: %s", buf->dev->info.spec,
                       dev->info.spec, hcq_last_error());
    return HCQ_OK;
}
