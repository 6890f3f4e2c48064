/* SPDX-License-Identifier: MIT */
/*
 * hcq_device.c - device open by spec, backend dispatch table, info, synchronisation,
 * lost-device state, and the shared 64-bit wait loop. Layer: core.
 */
#include "hcq_priv.h"

#include <ctype.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void hcq_signal_pool_destroy(struct hcq_device *dev); /* hcq_signal.c */

/* Backends, probed in this order by "auto" (ARCHITECTURE §3). */
static const struct {
    const char *name;
    enum hcq_status (*open)(const char *arg, struct hcq_device **dev_out);
    bool in_auto;
} backends[] = {
    {"nvgpu", hcq_nvgpu_open, true}, {"rm", hcq_rm_open, true},    {"cuda", hcq_cuda_open, true},
    {"cpu", hcq_cpu_open, true},     {"emu", hcq_emu_open, false},
};
#define BACKEND_COUNT (sizeof backends / sizeof backends[0])

const char *
hcq_backend_name(int i)
{
    return (i >= 0 && (size_t)i < BACKEND_COUNT) ? backends[i].name : NULL;
}

enum hcq_status
hcq_backend_probe(const char *name, int index)
{
    char spec[64];
    struct hcq_device *dev = NULL;
    if (!strcmp(name, "cpu"))
        snprintf(spec, sizeof spec, "cpu");
    else if (!strcmp(name, "emu"))
        snprintf(spec, sizeof spec, "emu:gh100");
    else
        snprintf(spec, sizeof spec, "%s:%d", name, index);
    enum hcq_status st = hcq_device_open(spec, &dev);
    hcq_device_close(dev);
    return st;
}

static enum hcq_status
open_one(const char *spec, struct hcq_device **dev_out)
{
    const char *colon = strchr(spec, ':');
    size_t name_len = colon ? (size_t)(colon - spec) : strlen(spec);
    const char *arg = colon ? colon + 1 : "";
    for (size_t i = 0; i < BACKEND_COUNT; i++) {
        if (strlen(backends[i].name) == name_len && !strncmp(spec, backends[i].name, name_len))
            return backends[i].open(arg, dev_out);
    }
    return hcq_err(HCQ_ERR_INVALID,
                   "hcq_device_open: unknown backend in spec '%s' (expected auto, cpu, "
                   "cuda:N, rm:N, nvgpu:0, emu:gh100|ga102|ga10b)",
                   spec);
}

const char *
hcq_device_env_spec(void)
{
    const char *env = getenv("HCQ_DEV");
    return env && *env && strcmp(env, "auto") != 0 ? env : NULL;
}

enum hcq_status
hcq_device_open(const char *spec, struct hcq_device **dev_out)
{
    if (!dev_out)
        return hcq_err(HCQ_ERR_INVALID, "hcq_device_open: dev_out is NULL");
    *dev_out = NULL;
    if (!spec || !*spec)
        spec = "auto";
    if (strcmp(spec, "auto") != 0)
        return open_one(spec, dev_out);
    const char *env = hcq_device_env_spec();
    if (env)
        return open_one(env, dev_out);
    for (size_t i = 0; i < BACKEND_COUNT; i++) {
        if (!backends[i].in_auto)
            continue;
        char s[32];
        snprintf(s, sizeof s, "%s%s", backends[i].name, strcmp(backends[i].name, "cpu") ? ":0" : "");
        enum hcq_status st = open_one(s, dev_out);
        if (st == HCQ_OK)
            return HCQ_OK;
        if (st != HCQ_ERR_NOT_FOUND && st != HCQ_ERR_UNSUPPORTED)
            HCQ_LOG_WARN("hcq_device_open(auto): %s failed: %s; trying the next backend", s,
                         hcq_last_error());
    }
    return hcq_err(HCQ_ERR_NOT_FOUND, "hcq_device_open(auto): no backend could open a device");
}

enum hcq_status
hcq_device_init_base(struct hcq_device *dev, const struct hcq_backend_ops *ops)
{
    dev->ops = ops;
    atomic_init(&dev->lost, false);
    if (pthread_mutex_init(&dev->lock, NULL) != 0)
        return hcq_err(HCQ_ERR_NOMEM, "hcq_device_init_base: pthread_mutex_init failed");
    if (pthread_mutex_init(&dev->staging_lock, NULL) != 0) {
        pthread_mutex_destroy(&dev->lock);
        return hcq_err(HCQ_ERR_NOMEM, "hcq_device_init_base: pthread_mutex_init failed");
    }
    if (pthread_mutex_init(&dev->life_lock, NULL) != 0) {
        pthread_mutex_destroy(&dev->staging_lock);
        pthread_mutex_destroy(&dev->lock);
        return hcq_err(HCQ_ERR_NOMEM, "hcq_device_init_base: pthread_mutex_init failed");
    }
    snprintf(dev->info.backend, sizeof dev->info.backend, "%s", ops->name);
    return HCQ_OK;
}

enum hcq_status
hcq_device_mark_lost(struct hcq_device *dev, const char *fmt, ...)
{
    bool expected = false;
    if (atomic_compare_exchange_strong(&dev->lost, &expected, true)) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(dev->fault, sizeof dev->fault, fmt, ap);
        va_end(ap);
        HCQ_LOG_ERROR("device %s lost: %s", dev->info.spec, dev->fault);
    }
    return hcq_err(HCQ_ERR_DEVICE_LOST, "%s lost: %s", dev->info.spec, dev->fault);
}

enum hcq_status
hcq_obj_track(struct hcq_device *dev, struct hcq_objlist *l, void *obj)
{
    enum hcq_status st = HCQ_OK;
    pthread_mutex_lock(&dev->lock);
    if (l->count == l->cap) {
        uint32_t cap = l->cap ? l->cap * 2 : 16;
        void **n = realloc(l->items, cap * sizeof *n);
        if (!n) {
            st = hcq_err(HCQ_ERR_NOMEM, "out of host memory for the device's object list");
            goto out;
        }
        l->items = n;
        l->cap = cap;
    }
    l->items[l->count++] = obj;
out:
    pthread_mutex_unlock(&dev->lock);
    return st;
}

void
hcq_obj_untrack(struct hcq_device *dev, struct hcq_objlist *l, void *obj)
{
    pthread_mutex_lock(&dev->lock);
    /* From the end: objects are mostly destroyed in reverse order of creation. */
    for (uint32_t i = l->count; i-- > 0;)
        if (l->items[i] == obj) {
            l->items[i] = l->items[--l->count];
            break;
        }
    pthread_mutex_unlock(&dev->lock);
}

/* Destroy every object still on l (each destroy untracks it, shrinking the list). */
static void
objs_destroy_all(struct hcq_objlist *l, void (*destroy)(void *obj))
{
    while (l->count)
        destroy(l->items[l->count - 1]);
    free(l->items);
    memset(l, 0, sizeof *l);
}

static void
graph_destroy_cb(void *g)
{
    hcq_graph_destroy(g);
}

static void
program_destroy_cb(void *p)
{
    hcq_program_destroy(p);
}

static void
signal_destroy_cb(void *s)
{
    hcq_signal_destroy(s);
}

void hcq_queue_destroy_all(struct hcq_device *dev); /* hcq_queue.c */
void hcq_buf_free_all(struct hcq_device *dev);      /* hcq_buf.c */
void hcq_peer_destroy(struct hcq_device *dev);      /* hcq_peer.c */

void
hcq_device_close(struct hcq_device *dev)
{
    if (!dev)
        return;
    /* Graphs hold their queue and (rm/nvgpu) push-buffer memory the GPU may still read:
     * let submitted work finish (bounded), then free graphs before their queues, programs
     * and signals after every queue is idle, the signal pool's pages and buffers last. */
    if (!atomic_load(&dev->lost) && dev->queue_count &&
        hcq_device_synchronize(dev, HCQ_TIMEOUT_DEFAULT_NS) != HCQ_OK)
        HCQ_LOG_WARN("hcq_device_close: outstanding work did not finish; freeing anyway");
    objs_destroy_all(&dev->graphs, graph_destroy_cb);
    if (dev->internal_copy) {
        hcq_queue_destroy(dev->internal_copy);
        dev->internal_copy = NULL;
    }
    hcq_signal_destroy(dev->staging_sig);
    dev->staging_sig = NULL;
    dev->staging = NULL; /* freed with every other buffer below */
    pthread_mutex_destroy(&dev->staging_lock);
    hcq_queue_destroy_all(dev);
    objs_destroy_all(&dev->progs, program_destroy_cb);
    objs_destroy_all(&dev->sigs, signal_destroy_cb);
    hcq_signal_pool_destroy(dev);
    hcq_peer_destroy(dev);
    hcq_buf_free_all(dev);
    free(dev->bufs);
    free(dev->queues);
    pthread_mutex_destroy(&dev->life_lock);
    pthread_mutex_destroy(&dev->lock);
    dev->ops->device_destroy(dev); /* frees dev */
}

enum hcq_status
hcq_device_info(struct hcq_device *dev, struct hcq_device_info *info_out)
{
    if (!dev || !info_out)
        return hcq_err(HCQ_ERR_INVALID, "hcq_device_info: NULL argument");
    *info_out = dev->info;
    return HCQ_OK;
}

enum hcq_status
hcq_device_check(struct hcq_device *dev)
{
    if (atomic_load(&dev->lost))
        return hcq_err(HCQ_ERR_DEVICE_LOST, "%s is lost: %s", dev->info.spec, dev->fault);
    if (dev->ops->check)
        return dev->ops->check(dev);
    return HCQ_OK;
}

void
hcq_device_fault_report(struct hcq_device *dev, char *buf, size_t buf_B)
{
    if (!buf || !buf_B)
        return;
    buf[0] = 0;
    if (!dev)
        return;
    if (dev->ops->fault_report)
        dev->ops->fault_report(dev, buf, buf_B);
    if (!buf[0] && atomic_load(&dev->lost))
        snprintf(buf, buf_B, "%s", dev->fault);
}

enum hcq_status
hcq_device_synchronize(struct hcq_device *dev, uint64_t timeout_ns)
{
    if (!dev)
        return hcq_err(HCQ_ERR_INVALID, "hcq_device_synchronize: dev is NULL");
    uint64_t deadline = hcq_time_ns() + timeout_ns;
    pthread_mutex_lock(&dev->life_lock); /* no queue of the snapshot is freed while we wait */
    pthread_mutex_lock(&dev->lock);
    uint32_t n = dev->queue_count;
    struct hcq_queue **qs = n ? malloc(n * sizeof *qs) : NULL;
    if (n && !qs) {
        pthread_mutex_unlock(&dev->lock);
        pthread_mutex_unlock(&dev->life_lock);
        return hcq_err(HCQ_ERR_NOMEM, "hcq_device_synchronize: out of memory");
    }
    if (n)
        memcpy(qs, dev->queues, n * sizeof *qs);
    pthread_mutex_unlock(&dev->lock);
    enum hcq_status st = HCQ_OK;
    for (uint32_t i = 0; i < n && st == HCQ_OK; i++) {
        uint64_t now = hcq_time_ns();
        st = dev->ops->queue_idle_wait(qs[i], now < deadline ? deadline - now : 0);
    }
    pthread_mutex_unlock(&dev->life_lock);
    free(qs);
    if (st == HCQ_OK)
        st = hcq_device_check(dev);
    return st;
}

/* How long a wait spins before it yields: HCQ_WAIT_SPIN_US, else 2 ms on a GPU (rm, nvgpu,
 * cuda) and 0.2 ms on cpu and emu devices (the work there runs on the host's cores, which a
 * spinning waiter would take from it). Why 2 ms: the spin phase used to be 20000
 * polls (~0.3-0.5 ms), then 1000 yields, then 20 us sleeps - a decode step of ~0.6-1 ms (a 1B
 * model at depth, larger models) ended in the sleeps, each waking late by the timer slack. */
static uint64_t
wait_spin_ns(const struct hcq_device *dev)
{
    static int64_t env_us = -2;
    if (env_us == -2) {
        const char *e = getenv("HCQ_WAIT_SPIN_US");
        env_us = e && *e ? atoll(e) : -1;
    }
    if (env_us >= 0)
        return (uint64_t)env_us * 1000;
    const bool host = dev && (dev->info.emulated || !strcmp(dev->info.backend, "cpu"));
    return host ? 200000 : 2000000;
}

/* Spin (a GPU round trip is microseconds, a decode step under a few ms), then yield, then sleep
 * with backoff; poll the backend for faults every ~1 ms so a dead device ends the wait early. */
enum hcq_status
hcq_wait_value64(struct hcq_device *dev, const volatile uint64_t *slot, uint64_t value, uint64_t timeout_ns)
{
    uint64_t start = hcq_time_ns(), last_check = start;
    const uint64_t spin_ns = wait_spin_ns(dev);
    uint32_t yields = 0;
    if (dev && dev->ops->flush && __atomic_load_n(slot, __ATOMIC_ACQUIRE) < value)
        dev->ops->flush(dev);
    for (;;) {
        if (__atomic_load_n(slot, __ATOMIC_ACQUIRE) >= value)
            return HCQ_OK;
        uint64_t now = hcq_time_ns();
        if (dev && now - last_check > 1000000) {
            last_check = now;
            if (atomic_load(&dev->lost))
                return hcq_err(HCQ_ERR_DEVICE_LOST, "%s is lost: %s", dev->info.spec, dev->fault);
            if (dev->ops->check && dev->ops->check(dev) != HCQ_OK)
                return HCQ_ERR_DEVICE_LOST;
        }
        if (now - start >= timeout_ns) {
            if (__atomic_load_n(slot, __ATOMIC_ACQUIRE) >= value)
                return HCQ_OK;
            return hcq_err(HCQ_ERR_TIMEOUT, "wait: value 0x%llx still below 0x%llx after %.3f ms",
                           (unsigned long long)*slot, (unsigned long long)value, (now - start) / 1e6);
        }
        if (now - start < spin_ns)
            continue;
        if (yields < 1000) {
            yields++;
            sched_yield();
            continue;
        }
        struct timespec ts = {0, now - start < 100000000ull ? 20000 : 200000};
        nanosleep(&ts, NULL);
    }
}
