/* SPDX-License-Identifier: MIT */
/*
 * emu_dev.c - the emulated machine behind struct sys: option parsing, the syscall
 * table (open/close/ioctl/mmap/munmap), file descriptors, CPU mappings, fault injection,
 * ioctl traces and leak counters. Layer: emu. Driver models plug in via emu.h.
 */
#include "emu_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

atomic_llong emu_live_devs, emu_live_fds, emu_live_maps, emu_live_bos, emu_live_vms, emu_live_chans,
    emu_live_threads, emu_live_rm_objs;

void
emu_stats_get(struct emu_stats *out)
{
    out->devs = atomic_load(&emu_live_devs);
    out->fds = atomic_load(&emu_live_fds);
    out->maps = atomic_load(&emu_live_maps);
    out->bos = atomic_load(&emu_live_bos);
    out->vms = atomic_load(&emu_live_vms);
    out->chans = atomic_load(&emu_live_chans);
    out->threads = atomic_load(&emu_live_threads);
    out->rm_objs = atomic_load(&emu_live_rm_objs);
}

uint64_t
emu_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void
emu_sleep_ns(uint64_t ns)
{
    struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000ull), .tv_nsec = (long)(ns % 1000000000ull)};
    nanosleep(&ts, NULL);
}

bool
emu_program_stub_init(struct emu_program_stub *stub, const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n >= sizeof stub->name)
        return false;
    memset(stub, 0, sizeof *stub);
    stub->magic = EMU_PROGRAM_MAGIC;
    memcpy(stub->name, name, n);
    return true;
}

enum hcq_status
emu_program_stub_write(const char *name, void *dst, size_t dst_B)
{
    struct emu_program_stub stub;
    if (dst_B < sizeof stub || !emu_program_stub_init(&stub, name))
        return hcq_err(HCQ_ERR_INVALID, "program_load: kernel name of %zu bytes (emulator stubs hold < %u)",
                       strlen(name), EMU_PROGRAM_NAME_MAX);
    memcpy(dst, &stub, sizeof stub);
    return HCQ_OK;
}

/* ==== Options ==== */

static enum hcq_status
emu_opts_parse_one(struct emu_opts *o, const char *tok, size_t n)
{
    char key[32], val[64] = "";
    const char *eq = memchr(tok, '=', n);
    size_t kn = eq ? (size_t)(eq - tok) : n;
    size_t vn = eq ? n - kn - 1 : 0;
    if (kn == 0 || kn >= sizeof key || vn >= sizeof val)
        return hcq_err(HCQ_ERR_INVALID, "emu_opts_parse: option '%.*s' too long or empty", (int)n, tok);
    memcpy(key, tok, kn);
    key[kn] = 0;
    if (eq)
        memcpy(val, eq + 1, vn);
    val[vn] = 0;
    char *end = NULL;
    unsigned long num = eq ? strtoul(val, &end, 0) : 1;
    bool numeric = !eq || (end && *end == 0 && vn > 0);

    if (!strcmp(key, "fail_alloc") && eq && numeric && num > 0) {
        o->fail_alloc = (uint32_t)num;
    } else if (!strcmp(key, "fail_ioctl") && eq && vn > 0) {
        char *at = strchr(val, '@');
        o->fail_ioctl_nth = 1;
        if (at) {
            *at = 0;
            o->fail_ioctl_nth = (uint32_t)strtoul(at + 1, NULL, 0);
            if (o->fail_ioctl_nth == 0)
                return hcq_err(HCQ_ERR_INVALID, "emu_opts_parse: fail_ioctl=%s: occurrence must be >= 1",
                               val);
        }
        snprintf(o->fail_ioctl, sizeof o->fail_ioctl, "%s", val);
    } else if (!strcmp(key, "fail_open") && eq && vn > 0) {
        snprintf(o->fail_open, sizeof o->fail_open, "%s", val);
    } else if (!strcmp(key, "hang") && numeric && num > 0) {
        o->hang = (uint32_t)num;
    } else if (!strcmp(key, "drop_doorbell") && numeric && num > 0) {
        o->drop_doorbell = (uint32_t)num;
    } else if (!strcmp(key, "corrupt_qmd") && numeric && num > 0) {
        o->corrupt_qmd = (uint32_t)num;
    } else if (!strcmp(key, "nvmap_max") && eq && numeric && num >= 4096) {
        o->nvmap_max = (uint64_t)num;
    } else if (!strcmp(key, "vram_mb") && eq && numeric && num >= 16) {
        o->vram_mb = (uint64_t)num;
    } else if (!strcmp(key, "l4t") && eq && numeric && (num == 35 || num == 36)) {
        o->l4t = (uint32_t)num;
    } else if (!strcmp(key, "l2") && eq && !strcmp(val, "noncoherent")) {
        o->l2_noncoherent = true;
    } else if (!strcmp(key, "lces") && eq && numeric && num <= 8) {
        o->lces_set = true;
        o->lces = (uint32_t)num;
    } else if (!strcmp(key, "p2p") && eq &&
               (!strcmp(val, "nvlink") || !strcmp(val, "pcie") || !strcmp(val, "none"))) {
        o->p2p = !strcmp(val, "nvlink") ? EMU_P2P_NVLINK : !strcmp(val, "pcie") ? EMU_P2P_PCIE : EMU_P2P_NONE;
    } else if (!strcmp(key, "trace") && !eq) {
        o->trace = true;
    } else {
        return hcq_err(HCQ_ERR_INVALID,
                       "emu_opts_parse: unknown option '%s' (expected fail_alloc=N, fail_ioctl=NAME[@N], "
                       "fail_open=PATH, hang[=N], drop_doorbell[=N], corrupt_qmd[=N], l4t=35|36, "
                       "nvmap_max=B, vram_mb=N, l2=noncoherent, lces=0..8, p2p=nvlink|pcie|none, "
                       "trace)",
                       tok[0] ? key : "");
    }
    return HCQ_OK;
}

static enum hcq_status
emu_opts_parse_list(struct emu_opts *o, const char *s, bool first_is_chip)
{
    while (s && *s) {
        const char *comma = strchr(s, ',');
        size_t n = comma ? (size_t)(comma - s) : strlen(s);
        if (first_is_chip) {
            if (n == 0 || n >= sizeof o->chip)
                return hcq_err(HCQ_ERR_INVALID, "emu_opts_parse: bad chip '%.*s'", (int)n, s);
            memcpy(o->chip, s, n);
            o->chip[n] = 0;
            first_is_chip = false;
        } else if (n > 0) {
            enum hcq_status st = emu_opts_parse_one(o, s, n);
            if (st != HCQ_OK)
                return st;
        }
        s = comma ? comma + 1 : NULL;
    }
    return HCQ_OK;
}

enum hcq_status
emu_opts_parse(const char *arg, struct emu_opts *opts)
{
    memset(opts, 0, sizeof *opts);
    enum hcq_status st = emu_opts_parse_list(opts, arg ? arg : "", true);
    if (st != HCQ_OK)
        return st;
    if (!opts->chip[0])
        snprintf(opts->chip, sizeof opts->chip, "gh100");
    if (strcmp(opts->chip, "gh100") && strcmp(opts->chip, "ga102") && strcmp(opts->chip, "ga10b"))
        return hcq_err(HCQ_ERR_NOT_FOUND, "emu_opts_parse: unknown chip '%s' (expected gh100, ga102, ga10b)",
                       opts->chip);
    /* HCQ_EMU_OPTS adds options to every emulated device (CI fault-injection runs). */
    return emu_opts_parse_list(opts, getenv("HCQ_EMU_OPTS"), false);
}

/* ==== Lifetime ==== */

void
emu_dev_lock(struct emu_dev *d)
{
    pthread_mutex_lock(&d->lock);
}

void
emu_dev_unlock(struct emu_dev *d)
{
    pthread_mutex_unlock(&d->lock);
}

static void
emu_dev_free(struct emu_dev *d)
{
    if (d->model_ops && d->model_ops->destroy)
        d->model_ops->destroy(d);
    emu_gpu_fini(d);
    emu_prog_fini(d);
    free(d->fds);
    free(d->maps);
    free(d->chans);
    free(d->trace);
    pthread_mutex_destroy(&d->gr_lock);
    pthread_mutex_destroy(&d->gpu_lock);
    pthread_mutex_destroy(&d->lock);
    free(d);
    atomic_fetch_sub(&emu_live_devs, 1);
}

/* Drop a reference with the lock held; frees (after unlocking) when it was the last. */
static void
emu_dev_unref_unlock(struct emu_dev *d)
{
    bool last = --d->refs == 0;
    emu_dev_unlock(d);
    if (last)
        emu_dev_free(d);
}

void
emu_dev_put(struct emu_dev *d)
{
    if (!d)
        return;
    emu_dev_lock(d);
    emu_dev_unref_unlock(d);
}

const struct sys *
emu_dev_sys(struct emu_dev *d)
{
    return &d->sys;
}

const struct hcq_arch *
emu_dev_arch(const struct emu_dev *d)
{
    return d->arch;
}

const struct emu_opts *
emu_dev_opts(const struct emu_dev *d)
{
    return &d->opts;
}

void
emu_dev_set_model(struct emu_dev *d, const struct emu_model_ops *ops, void *model)
{
    d->model_ops = ops;
    d->model = model;
}

void *
emu_dev_model(struct emu_dev *d)
{
    return d->model;
}

void
emu_dev_set_gr(struct emu_dev *d, uint32_t warps_per_sm, uint32_t sm_per_tpc, uint32_t tpc_count)
{
    d->gr_warps_per_sm = warps_per_sm;
    d->gr_sm_per_tpc = sm_per_tpc;
    d->gr_tpc_count = tpc_count;
}

const char *
emu_dev_trace(struct emu_dev *d)
{
    return d->trace ? d->trace : "";
}

void
emu_dev_fault_set(struct emu_dev *d, const char *why)
{
    pthread_mutex_lock(&d->gpu_lock);
    if (!d->fault[0])
        snprintf(d->fault, sizeof d->fault, "%s", why);
    pthread_mutex_unlock(&d->gpu_lock);
}

void
emu_dev_fault(struct emu_dev *d, char *buf, size_t buf_B)
{
    pthread_mutex_lock(&d->gpu_lock);
    snprintf(buf, buf_B, "%s", d->fault);
    pthread_mutex_unlock(&d->gpu_lock);
}

uint32_t
emu_dev_ignored_qmds(struct emu_dev *d)
{
    return atomic_load(&d->ignored_qmds);
}

uint32_t
emu_dev_unbound_kbank_qmds(struct emu_dev *d)
{
    return atomic_load(&d->unbound_kbank_qmds);
}

/* ==== Fault injection and traces ==== */

bool
emu_inject_alloc(struct emu_dev *d)
{
    d->alloc_seen++;
    return d->opts.fail_alloc && d->alloc_seen == d->opts.fail_alloc;
}

bool
emu_inject_ioctl(struct emu_dev *d, const char *name, uint64_t code)
{
    const char *want = d->opts.fail_ioctl;
    if (!want[0])
        return false;
    char *end = NULL;
    unsigned long long num = strtoull(want, &end, 0);
    bool match = (name && !strcmp(name, want)) || (end && *end == 0 && end != want && num == code);
    if (!match)
        return false;
    return ++d->ioctl_match_seen == d->opts.fail_ioctl_nth;
}

void
emu_trace(struct emu_dev *d, const char *fmt, ...)
{
    if (!d->opts.trace)
        return;
    char line[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n > sizeof line - 2)
        n = (int)sizeof line - 2;
    line[n++] = '\n';
    line[n] = 0;
    if (d->trace_B + (size_t)n + 1 > d->trace_cap) {
        size_t cap = d->trace_cap ? d->trace_cap * 2 : 4096;
        while (cap < d->trace_B + (size_t)n + 1)
            cap *= 2;
        char *t = realloc(d->trace, cap);
        if (!t)
            return; /* a trace is best effort; the golden test then fails visibly */
        d->trace = t;
        d->trace_cap = cap;
    }
    memcpy(d->trace + d->trace_B, line, (size_t)n + 1);
    d->trace_B += (size_t)n;
}

/* ==== File descriptors ==== */

int
emu_fd_create(struct emu_dev *d, const struct emu_fd_ops *ops, void *priv, struct emu_fd **f_out)
{
    if (d->fd_count == d->fd_cap) {
        uint32_t cap = d->fd_cap ? d->fd_cap * 2 : 16;
        struct emu_fd **n = realloc(d->fds, cap * sizeof *n);
        if (!n)
            return -ENOMEM;
        d->fds = n;
        d->fd_cap = cap;
    }
    struct emu_fd *f = calloc(1, sizeof *f);
    if (!f)
        return -ENOMEM;
    /* A real descriptor number, so it can never collide with one the process owns. */
    f->fd = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (f->fd < 0) {
        int e = errno;
        free(f);
        return -e;
    }
    f->dev = d;
    f->ops = ops;
    f->priv = priv;
    d->fds[d->fd_count++] = f;
    d->refs++;
    atomic_fetch_add(&emu_live_fds, 1);
    if (f_out)
        *f_out = f;
    return f->fd;
}

struct emu_fd *
emu_fd_lookup(struct emu_dev *d, int fd)
{
    for (uint32_t i = 0; i < d->fd_count; i++)
        if (d->fds[i]->fd == fd)
            return d->fds[i];
    return NULL;
}

/* Close with the lock held; the device reference it held is dropped by the caller's
 * emu_dev_unref_unlock (or kept when called from inside a model: see emu_fd_close). */
static void
emu_fd_close_locked(struct emu_fd *f)
{
    struct emu_dev *d = f->dev;
    for (uint32_t i = 0; i < d->fd_count; i++) {
        if (d->fds[i] == f) {
            d->fds[i] = d->fds[--d->fd_count];
            break;
        }
    }
    if (f->ops->release)
        f->ops->release(f);
    close(f->fd);
    free(f);
    atomic_fetch_sub(&emu_live_fds, 1);
}

void
emu_fd_close(struct emu_fd *f)
{
    struct emu_dev *d = f->dev;
    emu_fd_close_locked(f);
    d->refs--; /* never the last: the caller of the model entry point holds one */
}

/* ==== The syscall table ==== */

static int
emu_sys_open(void *ctx, const char *path, int flags)
{
    struct emu_dev *d = ctx;
    emu_dev_lock(d);
    int ret;
    struct emu_fd *f = NULL;
    if (d->opts.fail_open[0] && !strcmp(path, d->opts.fail_open))
        ret = -ENOENT;
    else if ((flags & O_ACCMODE) != O_RDWR)
        ret = -EACCES; /* every node the drivers use is opened read-write (rm.md §1.1) */
    else
        ret = d->model_ops->open(d, path, flags, &f);
    emu_trace(d, "open %s -> %s", path, ret >= 0 ? "ok" : strerror(-ret));
    emu_dev_unlock(d);
    if (ret < 0) {
        errno = -ret;
        return -1;
    }
    return ret;
}

static int
emu_sys_close(void *ctx, int fd)
{
    struct emu_dev *d = ctx;
    emu_dev_lock(d);
    struct emu_fd *f = emu_fd_lookup(d, fd);
    if (!f) {
        emu_dev_unlock(d);
        errno = EBADF;
        return -1;
    }
    emu_trace(d, "close %s", f->ops->name);
    emu_fd_close_locked(f);
    emu_dev_unref_unlock(d);
    return 0;
}

static int
emu_sys_ioctl(void *ctx, int fd, unsigned long request, void *arg)
{
    struct emu_dev *d = ctx;
    emu_dev_lock(d);
    struct emu_fd *f = emu_fd_lookup(d, fd);
    int ret = f ? f->ops->ioctl(f, request, arg) : -EBADF;
    emu_dev_unlock(d);
    if (ret < 0) {
        errno = -ret;
        return -1;
    }
    return ret;
}

/* Forget the tracked mappings overlapping [a, a+n) (munmap, or MAP_FIXED over them). */
static void
emu_maps_trim(struct emu_dev *d, uintptr_t a, size_t n)
{
    for (uint32_t i = 0; i < d->map_count;) {
        struct emu_map *m = &d->maps[i];
        uintptr_t lo = m->addr, hi = m->addr + m->len;
        if (hi <= a || lo >= a + n) {
            i++;
            continue;
        }
        if (lo < a && hi > a + n && d->map_count < d->map_cap) {
            /* split: keep the head here, the tail as a new record sharing the bo */
            struct emu_map tail = {a + n, hi - (a + n), m->bo};
            emu_bo_ref(m->bo);
            m->len = a - lo;
            d->maps[d->map_count++] = tail;
            d->refs++;
            atomic_fetch_add(&emu_live_maps, 1);
            i++;
        } else if (lo < a) {
            m->len = a - lo;
            i++;
        } else if (hi > a + n) {
            m->len = hi - (a + n);
            m->addr = a + n;
            i++;
        } else {
            emu_bo_unref(m->bo);
            *m = d->maps[--d->map_count];
            d->refs--;
            atomic_fetch_sub(&emu_live_maps, 1);
        }
    }
}

static void *
emu_sys_mmap(void *ctx, void *addr, size_t len, int prot, int flags, int fd, off_t offset)
{
    struct emu_dev *d = ctx;
    if (fd < 0 || (flags & MAP_ANONYMOUS)) {
        /* VA reservations: plain memory. MAP_FIXED over one of our mappings replaces it
         * (kmd/rm unmaps that way), so forget it like a munmap would. */
        void *p = mmap(addr, len, prot, flags, fd, offset);
        if (p != MAP_FAILED && (flags & MAP_FIXED)) {
            emu_dev_lock(d);
            if (d->map_count + 1 > d->map_cap) {
                struct emu_map *n = realloc(d->maps, (d->map_cap * 2 + 16) * sizeof *n);
                if (n) {
                    d->maps = n;
                    d->map_cap = d->map_cap * 2 + 16;
                }
            }
            uint32_t before = d->map_count;
            int refs_before = d->refs;
            emu_maps_trim(d, (uintptr_t)p, len);
            if (d->map_count != before || d->refs != refs_before)
                emu_trace(d, "cpu unmap len=0x%zx", len);
            d->refs++;
            emu_dev_unref_unlock(d);
        }
        return p;
    }
    emu_dev_lock(d);
    void *p = MAP_FAILED;
    int err = 0;
    struct emu_fd *f = emu_fd_lookup(d, fd);
    struct emu_bo *bo = NULL;
    uint64_t bo_off = 0;
    size_t len_r = (len + EMU_PAGE_B - 1) & ~(size_t)(EMU_PAGE_B - 1);
    if (!f) {
        err = EBADF;
    } else if (!f->ops->mmap) {
        err = ENODEV;
    } else if (len == 0 || (offset & (off_t)(EMU_PAGE_B - 1)) || !(flags & MAP_SHARED)) {
        err = EINVAL; /* device memory is shared, page-granular (the kernel's own rules) */
    } else if (d->map_count + 2 > d->map_cap &&
               !(d->maps = realloc(d->maps, (d->map_cap = d->map_cap * 2 + 16) * sizeof *d->maps))) {
        err = ENOMEM;
    } else {
        int r = f->ops->mmap(f, (uint64_t)offset, len_r, prot, &bo, &bo_off);
        if (r < 0)
            err = -r;
        else if (bo_off + len_r > bo->size_B || bo->memfd < 0)
            err = EINVAL;
    }
    if (!err) {
        p = mmap(addr, len_r, prot, flags, bo->memfd, (off_t)bo_off);
        if (p == MAP_FAILED) {
            err = errno;
        } else {
            emu_maps_trim(d, (uintptr_t)p, len_r);
            emu_bo_ref(bo);
            d->maps[d->map_count++] = (struct emu_map){(uintptr_t)p, len_r, bo};
            d->refs++;
            atomic_fetch_add(&emu_live_maps, 1);
        }
    }
    emu_trace(d, "mmap %s len=0x%zx -> %s", f ? f->ops->name : "?", len, err ? strerror(err) : "ok");
    emu_dev_unlock(d);
    if (err)
        errno = err;
    return p;
}

/* Advice on plain memory the kmd mapped (host buffers): the real kernel's. */
static int
emu_sys_madvise(void *ctx, void *addr, size_t len, int advice)
{
    (void)ctx;
    return madvise(addr, len, advice);
}

static int
emu_sys_munmap(void *ctx, void *addr, size_t len)
{
    struct emu_dev *d = ctx;
    emu_dev_lock(d);
    if (d->map_count + 1 > d->map_cap) { /* room for a split (unmapping the middle of a mapping) */
        struct emu_map *n = realloc(d->maps, (d->map_cap * 2 + 16) * sizeof *n);
        if (n) {
            d->maps = n;
            d->map_cap = d->map_cap * 2 + 16;
        }
    }
    uint32_t before = d->map_count;
    int refs_before = d->refs;
    emu_maps_trim(d, (uintptr_t)addr, len);
    int r = munmap(addr, len);
    int e = errno;
    if (d->map_count != before || d->refs != refs_before)
        emu_trace(d, "cpu unmap len=0x%zx", len);
    /* trimming may have dropped references: re-take one to release through the common path */
    d->refs++;
    emu_dev_unref_unlock(d);
    if (r < 0)
        errno = e;
    return r;
}

/* ==== Creation ==== */

enum hcq_status
emu_dev_create(const struct emu_opts *opts, struct emu_dev **dev_out)
{
    *dev_out = NULL;
    const struct hcq_arch *arch = hcq_arch_by_name(opts->chip);
    if (!arch)
        return hcq_err(HCQ_ERR_NOT_FOUND, "emu_dev_create: no arch row for chip '%s'", opts->chip);
    struct emu_dev *d = calloc(1, sizeof *d);
    if (!d)
        return hcq_err(HCQ_ERR_NOMEM, "emu_dev_create: out of host memory");
    d->opts = *opts;
    d->arch = arch;
    d->refs = 1;
    pthread_mutex_init(&d->lock, NULL);
    pthread_mutex_init(&d->gpu_lock, NULL);
    pthread_mutex_init(&d->gr_lock, NULL);
    d->sys = (struct sys){
        .open = emu_sys_open,
        .close = emu_sys_close,
        .ioctl = emu_sys_ioctl,
        .mmap = emu_sys_mmap,
        .munmap = emu_sys_munmap,
        .ctx = d,
        .madvise = emu_sys_madvise,
    };
    atomic_fetch_add(&emu_live_devs, 1);
    enum hcq_status st;
    if (!strcmp(opts->chip, "ga10b"))
        st = emu_nvgpu_model_create(d);
    else
        st = emu_rm_model_create(d);
    if (st != HCQ_OK) {
        emu_dev_put(d);
        return st;
    }
    *dev_out = d;
    return HCQ_OK;
}
