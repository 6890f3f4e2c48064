/* SPDX-License-Identifier: MIT */
/*
 * hcq_signal.c - 64-bit timeline signals: 16-byte slots (value, timestamp) carved from
 * pages of GPU-visible host memory, so every backend sees the same layout that a
 * semaphore release with timestamp writes (docs/hw/rm.md §5.6). Layer: core.
 */
#include "hcq_priv.h"

#include <stdlib.h>
#include <string.h>

#define SIG_SLOT_B 16u
#define SIG_PAGE_B 4096u
#define SIG_PER_PAGE (SIG_PAGE_B / SIG_SLOT_B)

struct hcq_signal_page {
    struct hcq_buf *buf;
    uint8_t used[SIG_PER_PAGE];
};

struct hcq_signal_pool {
    struct hcq_signal_page *pages;
    uint32_t count;
};

void hcq_signal_pool_destroy(struct hcq_device *dev);

void
hcq_signal_pool_destroy(struct hcq_device *dev)
{
    struct hcq_signal_pool *p = dev->sigpool;
    if (!p)
        return;
    for (uint32_t i = 0; i < p->count; i++)
        hcq_buf_free(p->pages[i].buf);
    free(p->pages);
    free(p);
    dev->sigpool = NULL;
}

/* Take a free slot, with dev->lock held. When every page is full: with `page` NULL,
 * report *need_page (the caller allocates one without the lock, since hcq_buf_alloc takes
 * it); with `page`, append it and take its first slot (*page_used). Appending only under the
 * lock keeps two threads that both ran out of slots from growing the array past each other. */
static enum hcq_status
pool_take(struct hcq_device *dev, struct hcq_buf *page, uint32_t *index_out, bool *need_page, bool *page_used)
{
    *need_page = false;
    if (!dev->sigpool) {
        dev->sigpool = calloc(1, sizeof *dev->sigpool);
        if (!dev->sigpool)
            return hcq_err(HCQ_ERR_NOMEM, "hcq_signal_create: out of host memory");
    }
    struct hcq_signal_pool *p = dev->sigpool;
    for (uint32_t i = 0; i < p->count; i++)
        for (uint32_t j = 0; j < SIG_PER_PAGE; j++)
            if (!p->pages[i].used[j]) {
                p->pages[i].used[j] = 1;
                *index_out = i * SIG_PER_PAGE + j;
                return HCQ_OK;
            }
    if (!page) {
        *need_page = true;
        return HCQ_OK;
    }
    struct hcq_signal_page *n = realloc(p->pages, (p->count + 1) * sizeof *n);
    if (!n)
        return hcq_err(HCQ_ERR_NOMEM, "hcq_signal_create: out of host memory");
    p->pages = n;
    memset(&p->pages[p->count], 0, sizeof p->pages[0]);
    memset(page->map, 0, SIG_PAGE_B);
    p->pages[p->count].buf = page;
    p->pages[p->count].used[0] = 1;
    *index_out = p->count * SIG_PER_PAGE;
    p->count++;
    *page_used = true;
    return HCQ_OK;
}

enum hcq_status
hcq_signal_create(struct hcq_device *dev, uint64_t initial, struct hcq_signal **sig_out)
{
    if (!dev || !sig_out)
        return hcq_err(HCQ_ERR_INVALID, "hcq_signal_create: NULL argument");
    *sig_out = NULL;
    struct hcq_signal *sig = calloc(1, sizeof *sig);
    if (!sig)
        return hcq_err(HCQ_ERR_NOMEM, "hcq_signal_create: out of host memory");
    uint32_t idx = 0;
    bool need_page = false, page_used = false;
    struct hcq_buf *page = NULL;
    pthread_mutex_lock(&dev->lock);
    enum hcq_status st = pool_take(dev, NULL, &idx, &need_page, &page_used);
    if (st == HCQ_OK && need_page) {
        pthread_mutex_unlock(&dev->lock);
        st = hcq_buf_alloc(dev, SIG_PAGE_B, HCQ_MEM_HOST, &page);
        pthread_mutex_lock(&dev->lock);
        if (st == HCQ_OK)
            st = pool_take(dev, page, &idx, &need_page, &page_used);
    }
    if (st == HCQ_OK) {
        struct hcq_buf *b = dev->sigpool->pages[idx / SIG_PER_PAGE].buf;
        uint32_t off = (idx % SIG_PER_PAGE) * SIG_SLOT_B;
        sig->slot = (volatile uint64_t *)((uint8_t *)b->map + off);
        sig->va = b->va + off;
    }
    pthread_mutex_unlock(&dev->lock);
    if (page && !page_used)
        hcq_buf_free(page); /* another thread freed a slot meanwhile, or the append failed */
    if (st != HCQ_OK) {
        free(sig);
        return st;
    }
    sig->dev = dev;
    sig->pool_index = idx;
    if ((st = hcq_obj_track(dev, &dev->sigs, sig)) != HCQ_OK) {
        hcq_signal_destroy(sig); /* gives the slot back; untracking a missing entry is a no-op */
        return st;
    }
    __atomic_store_n(&sig->slot[1], 0, __ATOMIC_RELAXED);
    __atomic_store_n(&sig->slot[0], initial, __ATOMIC_RELEASE);
    *sig_out = sig;
    return HCQ_OK;
}

struct hcq_buf *
hcq_signal_page_buf(const struct hcq_signal *sig)
{
    pthread_mutex_lock(&sig->dev->lock);
    struct hcq_buf *b = sig->dev->sigpool->pages[sig->pool_index / SIG_PER_PAGE].buf;
    pthread_mutex_unlock(&sig->dev->lock);
    return b;
}

void
hcq_signal_destroy(struct hcq_signal *sig)
{
    if (!sig)
        return;
    struct hcq_device *dev = sig->dev;
    hcq_obj_untrack(dev, &dev->sigs, sig);
    pthread_mutex_lock(&dev->lock);
    if (dev->sigpool)
        dev->sigpool->pages[sig->pool_index / SIG_PER_PAGE].used[sig->pool_index % SIG_PER_PAGE] = 0;
    pthread_mutex_unlock(&dev->lock);
    free(sig);
}

uint64_t
hcq_signal_value(const struct hcq_signal *sig)
{
    /* A caller polling this in a loop is waiting: start any deferred work first. */
    if (sig->dev && sig->dev->ops->flush)
        sig->dev->ops->flush(sig->dev);
    return __atomic_load_n(&sig->slot[0], __ATOMIC_ACQUIRE);
}

void
hcq_signal_set(struct hcq_signal *sig, uint64_t value)
{
    __atomic_store_n(&sig->slot[0], value, __ATOMIC_RELEASE);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

enum hcq_status
hcq_signal_wait(struct hcq_signal *sig, uint64_t value, uint64_t timeout_ns)
{
    if (!sig)
        return hcq_err(HCQ_ERR_INVALID, "hcq_signal_wait: sig is NULL");
    return hcq_wait_value64(sig->dev, sig->slot, value, timeout_ns);
}

uint64_t
hcq_signal_timestamp_ns(const struct hcq_signal *sig)
{
    return __atomic_load_n(&sig->slot[1], __ATOMIC_ACQUIRE);
}

uint64_t
hcq_signal_va(const struct hcq_signal *sig)
{
    return sig ? sig->va : 0;
}
