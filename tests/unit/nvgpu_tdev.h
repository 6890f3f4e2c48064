/* SPDX-License-Identifier: MIT */
/*
 * nvgpu_tdev.h - helpers shared by the nvgpu unit tests (test_nvgpu.c, test_nvgpu_pitfalls.c):
 * an emulated Orin (emu:ga10b) with its sys table, raw ioctls, raw nvmap buffers and the
 * driver objects up to the TSG subcontext, leak-count comparison. Static inline: each test
 * file uses a different subset.
 */
#ifndef NVGPU_TDEV_H
#define NVGPU_TDEV_H

#include "emu.h"
#include "emu_nvgpu.h"
#include "nvgpu_kmd.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>

struct tdev {
    struct emu_dev *d;
    const struct sys *sys;
};

static inline enum hcq_status
tdev_open(struct tdev *t, const char *opts)
{
    struct emu_opts o;
    enum hcq_status st = emu_opts_parse(opts, &o);
    if (st != HCQ_OK)
        return st;
    if ((st = emu_dev_create(&o, &t->d)) != HCQ_OK)
        return st;
    t->sys = emu_dev_sys(t->d);
    return HCQ_OK;
}

/* 0 or errno */
static inline int
xio(const struct tdev *t, int fd, unsigned long req, void *arg)
{
    errno = 0;
    return t->sys->ioctl(t->sys->ctx, fd, req, arg) < 0 ? errno : 0;
}

/* An nvmap buffer through raw ioctls; returns the dmabuf fd or -errno. */
static inline int
raw_buf(const struct tdev *t, int nvmap, uint32_t size, uint32_t flags, uint32_t heap, uint32_t *handle_out)
{
    struct nvmap_create_handle c = {.size = size};
    int e = xio(t, nvmap, NVMAP_IOC_CREATE, &c);
    if (e)
        return -e;
    struct nvmap_alloc_handle a = {.handle = c.handle, .heap_mask = heap, .flags = flags, .align = 4096};
    if ((e = xio(t, nvmap, NVMAP_IOC_ALLOC, &a)))
        return -e;
    struct nvmap_create_handle g = {.handle = c.handle};
    if ((e = xio(t, nvmap, NVMAP_IOC_GET_FD, &g)))
        return -e;
    if (handle_out)
        *handle_out = c.handle;
    return g.fd;
}

#define TAGGED(cache) ((NVMAP_ALLOC_TAG_NVHCQ << NVMAP_HANDLE_TAG_SHIFT) | (cache))

struct raw {
    int nvmap, ctrl, as, tsg, veid;
};

/* The driver-level objects up to the TSG subcontext; reserve: also the two windows. */
static inline int
raw_bringup(const struct tdev *t, struct raw *r, bool reserve)
{
    r->nvmap = t->sys->open(t->sys->ctx, NVGPU_DEV_NVMAP, O_RDWR);
    r->ctrl = t->sys->open(t->sys->ctx, NVGPU_DEV_CTRL, O_RDWR);
    if (r->nvmap < 0 || r->ctrl < 0)
        return ENOENT;
    struct nvgpu_alloc_as_args as = {.flags = NVGPU_GPU_IOCTL_ALLOC_AS_FLAGS_UNIFIED_VA,
                                     .va_range_start = NVGPU_VA_RANGE_START,
                                     .va_range_end = NVGPU_VA_RANGE_END};
    int e = xio(t, r->ctrl, NVGPU_GPU_IOCTL_ALLOC_AS, &as);
    if (e)
        return e;
    r->as = as.as_fd;
    for (int i = 0; reserve && i < 2; i++) {
        struct nvgpu_as_alloc_space_args s = {.pages = NVGPU_WINDOW_RESERVE_B / 4096,
                                              .page_size = 4096,
                                              .flags = NVGPU_AS_ALLOC_SPACE_FLAGS_FIXED_OFFSET,
                                              .offset = i ? NVGPU_SHARED_WINDOW_VA : NVGPU_LOCAL_WINDOW_VA};
        if ((e = xio(t, r->as, NVGPU_AS_IOCTL_ALLOC_SPACE, &s)))
            return e;
    }
    struct nvgpu_gpu_open_tsg_args ts = {0};
    if ((e = xio(t, r->ctrl, NVGPU_GPU_IOCTL_OPEN_TSG, &ts)))
        return e;
    r->tsg = ts.tsg_fd;
    struct nvgpu_tsg_create_subcontext_args sc = {.type = NVGPU_TSG_SUBCONTEXT_TYPE_ASYNC, .as_fd = r->as};
    if ((e = xio(t, r->tsg, NVGPU_TSG_IOCTL_CREATE_SUBCONTEXT, &sc)))
        return e;
    r->veid = (int)sc.veid;
    return 0;
}

static inline void
raw_close(const struct tdev *t, const struct raw *r)
{
    int fds[] = {r->tsg, r->as, r->ctrl, r->nvmap};
    for (unsigned i = 0; i < 4; i++)
        if (fds[i] > 0)
            t->sys->close(t->sys->ctx, fds[i]);
}

static inline bool
stats_equal(const struct emu_stats *a, const struct emu_stats *b)
{
    return a->devs == b->devs && a->fds == b->fds && a->maps == b->maps && a->bos == b->bos &&
           a->vms == b->vms && a->chans == b->chans && a->threads == b->threads;
}

#endif /* NVGPU_TDEV_H */
