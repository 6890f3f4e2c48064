/* SPDX-License-Identifier: MIT */
/*
 * cpu_dev.c - the `cpu` backend: buffers are host memory (va == host address), each
 * queue is a worker thread executing its submissions in order, kernels run as their CPU
 * twins. Cross-queue signals and waits behave as on a GPU: a queue blocked in a wait
 * resumes when another queue or the host sets the signal. Layer: backend.
 */
#include "hcq_priv.h"
#include "hcq_kernel.h"
#include "ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* ==== Executable form of a submission ==== */

struct cpu_item {
    enum hcq_cmd_kind kind;
    union {
        struct {
            hcq_twin_fn twin;
            uint32_t args_off_B;
            uint32_t grid[3], block[3];
            const char *name;
        } launch;
        struct {
            uint64_t dst_va, src_va, size_B;
        } copy;
        struct {
            volatile uint64_t *slot;
            uint64_t value;
        } sig;
    } u;
};

struct cpu_batch {
    struct cpu_batch *next;
    struct cpu_item *items;
    uint32_t count;
    uint8_t *args;
};

struct cpu_queue {
    struct hcq_queue *q;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond; /* new work or stop */
    pthread_cond_t idle; /* completed advanced */
    struct cpu_batch *head, *tail;
    uint64_t submitted, completed;
    bool stop;
    bool thread_started;
};

struct cpu_device {
    struct hcq_device base;
};

/* ==== Address translation for twins: va must lie inside one live buffer ==== */

static void *
cpu_ptr(void *ctx, uint64_t va, uint64_t size_B)
{
    struct hcq_device *dev = ctx;
    void *p = NULL;
    pthread_mutex_lock(&dev->lock);
    for (uint32_t i = 0; i < dev->buf_count; i++) {
        const struct hcq_buf *b = dev->bufs[i];
        if (va >= b->va && va - b->va <= b->size_B && size_B <= b->size_B - (va - b->va)) {
            p = (void *)(uintptr_t)va;
            break;
        }
    }
    pthread_mutex_unlock(&dev->lock);
    return p;
}

static void
batch_free(struct cpu_batch *b)
{
    if (!b)
        return;
    free(b->items);
    free(b->args);
    free(b);
}

static void
wait_signal(struct cpu_queue *cq, volatile uint64_t *slot, uint64_t value)
{
    uint32_t spins = 0;
    while (__atomic_load_n(slot, __ATOMIC_ACQUIRE) < value) {
        pthread_mutex_lock(&cq->lock);
        bool stop = cq->stop;
        pthread_mutex_unlock(&cq->lock);
        if (stop)
            return;
        if (++spins < 1000)
            continue;
        struct timespec ts = {0, spins < 5000 ? 10000 : 100000};
        nanosleep(&ts, NULL);
    }
}

static void
run_item(struct cpu_queue *cq, const struct cpu_batch *b, const struct cpu_item *it)
{
    struct hcq_device *dev = cq->q->dev;
    switch (it->kind) {
    case HCQ_CMD_LAUNCH: {
        struct hcq_twin_launch l = {.params = b->args + it->u.launch.args_off_B, .ptr = cpu_ptr, .ctx = dev};
        memcpy(l.grid, it->u.launch.grid, sizeof l.grid);
        memcpy(l.block, it->u.launch.block, sizeof l.block);
        it->u.launch.twin(&l);
        if (l.fault)
            hcq_device_mark_lost(dev, "cpu: kernel %s accessed unmapped address 0x%llx", it->u.launch.name,
                                 (unsigned long long)l.fault_va);
        break;
    }
    case HCQ_CMD_COPY: {
        void *d = cpu_ptr(dev, it->u.copy.dst_va, it->u.copy.size_B);
        void *s = cpu_ptr(dev, it->u.copy.src_va, it->u.copy.size_B);
        if (!d || !s)
            hcq_device_mark_lost(dev, "cpu: copy of 0x%llx bytes to a freed buffer",
                                 (unsigned long long)it->u.copy.size_B);
        else
            memmove(d, s, it->u.copy.size_B);
        break;
    }
    case HCQ_CMD_SIGNAL:
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        __atomic_store_n(it->u.sig.slot, it->u.sig.value, __ATOMIC_RELEASE);
        break;
    case HCQ_CMD_WAIT:
        wait_signal(cq, it->u.sig.slot, it->u.sig.value);
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        break;
    case HCQ_CMD_TIMESTAMP:
        __atomic_store_n(&it->u.sig.slot[1], hcq_time_ns(), __ATOMIC_RELEASE);
        break;
    case HCQ_CMD_BARRIER:
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        break;
    }
}

static void *
worker(void *arg)
{
    struct cpu_queue *cq = arg;
    pthread_mutex_lock(&cq->lock);
    for (;;) {
        while (!cq->head && !cq->stop)
            pthread_cond_wait(&cq->cond, &cq->lock);
        if (cq->stop)
            break;
        struct cpu_batch *b = cq->head;
        pthread_mutex_unlock(&cq->lock);
        bool lost = atomic_load(&cq->q->dev->lost);
        for (uint32_t i = 0; i < b->count && !lost; i++) {
            run_item(cq, b, &b->items[i]);
            lost = atomic_load(&cq->q->dev->lost);
        }
        pthread_mutex_lock(&cq->lock);
        cq->head = b->next;
        if (!cq->head)
            cq->tail = NULL;
        if (!lost)
            cq->completed++;
        pthread_cond_broadcast(&cq->idle);
        pthread_mutex_unlock(&cq->lock);
        batch_free(b);
        pthread_mutex_lock(&cq->lock);
    }
    pthread_mutex_unlock(&cq->lock);
    return NULL;
}

/* ==== Backend ops ==== */

static void
cpu_device_destroy(struct hcq_device *dev)
{
    free(hcq_container_of(dev, struct cpu_device, base));
}

static enum hcq_status
cpu_buf_alloc(struct hcq_device *dev, struct hcq_buf *buf)
{
    (void)dev;
    uint64_t size = (buf->size_B + 4095) & ~4095ull;
    /* mmap: large buffers get lazily zeroed pages, and the >4 GiB copy test stays cheap. */
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return hcq_err(HCQ_ERR_NOMEM, "cpu: mmap of 0x%llx bytes failed", (unsigned long long)size);
    buf->map = p;
    buf->va = (uint64_t)(uintptr_t)p;
    return HCQ_OK;
}

static void
cpu_buf_free(struct hcq_device *dev, struct hcq_buf *buf)
{
    (void)dev;
    if (!buf->imported && buf->map)
        munmap(buf->map, (buf->size_B + 4095) & ~4095ull);
}

static enum hcq_status
cpu_buf_import_host(struct hcq_device *dev, struct hcq_buf *buf)
{
    (void)dev;
    buf->va = (uint64_t)(uintptr_t)buf->map;
    return HCQ_OK;
}

static enum hcq_status
cpu_program_load(struct hcq_device *dev, const void *cubin, size_t cubin_B, const char *name,
                 struct hcq_program *prog)
{
    (void)dev;
    (void)cubin;
    (void)cubin_B;
    if (!prog->desc || !prog->desc->twin)
        return hcq_err(HCQ_ERR_UNSUPPORTED,
                       "cpu: kernel '%s' has no CPU twin (user cubins cannot run on cpu)", name);
    prog->info.native = false;
    return HCQ_OK;
}

static enum hcq_status
cpu_queue_create(struct hcq_device *dev, struct hcq_queue *q)
{
    (void)dev;
    struct cpu_queue *cq = calloc(1, sizeof *cq);
    if (!cq)
        return hcq_err(HCQ_ERR_NOMEM, "cpu: out of host memory for a queue");
    cq->q = q;
    pthread_mutex_init(&cq->lock, NULL);
    pthread_cond_init(&cq->cond, NULL);
    pthread_cond_init(&cq->idle, NULL);
    if (pthread_create(&cq->thread, NULL, worker, cq) != 0) {
        pthread_cond_destroy(&cq->idle);
        pthread_cond_destroy(&cq->cond);
        pthread_mutex_destroy(&cq->lock);
        free(cq);
        return hcq_err(HCQ_ERR_NOMEM, "cpu: pthread_create failed for a queue worker");
    }
    cq->thread_started = true;
    q->priv = cq;
    return HCQ_OK;
}

static void
cpu_queue_destroy(struct hcq_queue *q)
{
    struct cpu_queue *cq = q->priv;
    if (!cq)
        return;
    pthread_mutex_lock(&cq->lock);
    cq->stop = true;
    pthread_cond_broadcast(&cq->cond);
    pthread_mutex_unlock(&cq->lock);
    if (cq->thread_started)
        pthread_join(cq->thread, NULL);
    while (cq->head) {
        struct cpu_batch *b = cq->head;
        cq->head = b->next;
        batch_free(b);
    }
    pthread_cond_destroy(&cq->idle);
    pthread_cond_destroy(&cq->cond);
    pthread_mutex_destroy(&cq->lock);
    free(cq);
    q->priv = NULL;
}

static enum hcq_status
cpu_queue_submit(struct hcq_queue *q, const struct hcq_cmdlist *cl, const uint64_t *vars)
{
    struct cpu_queue *cq = q->priv;
    struct cpu_batch *b = calloc(1, sizeof *b);
    if (!b)
        return hcq_err(HCQ_ERR_NOMEM, "cpu: out of host memory for a submission");
    b->items = calloc(cl->count, sizeof *b->items);
    b->args = malloc(cl->args_B ? cl->args_B : 1);
    if (!b->items || !b->args) {
        batch_free(b);
        return hcq_err(HCQ_ERR_NOMEM, "cpu: out of host memory for a submission");
    }
    for (uint32_t i = 0; i < cl->count; i++) {
        const struct hcq_cmd *c = &cl->cmds[i];
        struct cpu_item *it = &b->items[i];
        it->kind = c->kind;
        switch (c->kind) {
        case HCQ_CMD_LAUNCH:
            it->u.launch.twin = c->u.launch.prog->desc->twin;
            it->u.launch.name = c->u.launch.prog->info.name;
            it->u.launch.args_off_B = c->u.launch.args_off_B;
            hcq_cmd_launch_args(cl, c, vars, b->args + c->u.launch.args_off_B);
            hcq_cmd_launch_grid(c, vars, it->u.launch.grid);
            memcpy(it->u.launch.block, c->u.launch.block, sizeof it->u.launch.block);
            break;
        case HCQ_CMD_COPY: {
            uint64_t doff, soff;
            hcq_cmd_copy_resolve(c, vars, &doff, &soff, &it->u.copy.size_B);
            it->u.copy.dst_va = c->u.copy.dst->va + doff;
            it->u.copy.src_va = c->u.copy.src->va + soff;
        } break;
        case HCQ_CMD_SIGNAL:
        case HCQ_CMD_WAIT:
            it->u.sig.slot = c->u.sig.sig->slot;
            it->u.sig.value = hcq_cmd_value(c->u.sig.var, c->u.sig.add, vars);
            break;
        case HCQ_CMD_TIMESTAMP:
            it->u.sig.slot = c->u.ts.sig->slot;
            break;
        case HCQ_CMD_BARRIER:
            break;
        }
    }
    b->count = cl->count;
    pthread_mutex_lock(&cq->lock);
    if (cq->tail)
        cq->tail->next = b;
    else
        cq->head = b;
    cq->tail = b;
    cq->submitted++;
    pthread_cond_signal(&cq->cond);
    pthread_mutex_unlock(&cq->lock);
    return HCQ_OK;
}

static enum hcq_status
cpu_queue_idle_wait(struct hcq_queue *q, uint64_t timeout_ns)
{
    struct cpu_queue *cq = q->priv;
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    uint64_t ns = (uint64_t)dl.tv_nsec + timeout_ns % 1000000000ull;
    dl.tv_sec += (time_t)(timeout_ns / 1000000000ull + ns / 1000000000ull);
    dl.tv_nsec = (long)(ns % 1000000000ull);
    enum hcq_status st = HCQ_OK;
    pthread_mutex_lock(&cq->lock);
    while (cq->completed < cq->submitted) {
        if (atomic_load(&q->dev->lost)) {
            st = HCQ_ERR_DEVICE_LOST;
            break;
        }
        /* A lost device stops completing work: wake up periodically to notice it. */
        struct timespec step;
        clock_gettime(CLOCK_REALTIME, &step);
        step.tv_nsec += 5000000;
        if (step.tv_nsec >= 1000000000) {
            step.tv_sec++;
            step.tv_nsec -= 1000000000;
        }
        bool last = step.tv_sec > dl.tv_sec || (step.tv_sec == dl.tv_sec && step.tv_nsec >= dl.tv_nsec);
        int rc = pthread_cond_timedwait(&cq->idle, &cq->lock, last ? &dl : &step);
        if (rc != 0 && last && cq->completed < cq->submitted) {
            st = HCQ_ERR_TIMEOUT;
            break;
        }
    }
    uint64_t sub = cq->submitted, done = cq->completed;
    pthread_mutex_unlock(&cq->lock);
    if (st == HCQ_ERR_TIMEOUT)
        return hcq_err(st, "cpu: queue idle wait: %llu of %llu submissions done after %.3f ms",
                       (unsigned long long)done, (unsigned long long)sub, timeout_ns / 1e6);
    if (st == HCQ_ERR_DEVICE_LOST)
        return hcq_err(st, "cpu: device lost: %s", q->dev->fault);
    return HCQ_OK;
}

static const struct hcq_backend_ops cpu_ops = {
    .name = "cpu",
    .device_destroy = cpu_device_destroy,
    .buf_alloc = cpu_buf_alloc,
    .buf_free = cpu_buf_free,
    .buf_import_host = cpu_buf_import_host,
    .program_load = cpu_program_load,
    .queue_create = cpu_queue_create,
    .queue_destroy = cpu_queue_destroy,
    .queue_submit = cpu_queue_submit,
    .queue_idle_wait = cpu_queue_idle_wait,
};

enum hcq_status
hcq_cpu_open(const char *arg, struct hcq_device **dev_out)
{
    if (arg && *arg && strcmp(arg, "0") != 0)
        return hcq_err(HCQ_ERR_NOT_FOUND, "cpu: no device '%s' (only cpu or cpu:0)", arg);
    struct cpu_device *cd = calloc(1, sizeof *cd);
    if (!cd)
        return hcq_err(HCQ_ERR_NOMEM, "cpu: out of host memory");
    enum hcq_status st = hcq_device_init_base(&cd->base, &cpu_ops);
    if (st != HCQ_OK) {
        free(cd);
        return st;
    }
    struct hcq_device_info *in = &cd->base.info;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    long pages = sysconf(_SC_PHYS_PAGES), page_B = sysconf(_SC_PAGESIZE);
#if defined(__x86_64__)
    const char *isa = "x86_64";
#elif defined(__aarch64__)
    const char *isa = "aarch64";
#else
    const char *isa = "host";
#endif
    snprintf(in->name, sizeof in->name, "cpu (%s, %ld threads)", isa, ncpu);
    snprintf(in->spec, sizeof in->spec, "cpu");
    snprintf(in->arch, sizeof in->arch, "host");
    snprintf(in->driver, sizeof in->driver, "C reference (CPU twins)");
    in->sm_count = ncpu > 0 ? (uint32_t)ncpu : 1;
    in->mem_B = (pages > 0 && page_B > 0) ? (uint64_t)pages * (uint64_t)page_B : 0;
    in->unified_memory = true;
    /* Already done at load; the call is also the reference that links src/ops's
     * registration into every program (ops_registry.c). */
    ops_kernels_register();
    in->has_kernels = hcq_kernel_at(0) != NULL;
    *dev_out = &cd->base;
    return HCQ_OK;
}
