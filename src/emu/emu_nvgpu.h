/* SPDX-License-Identifier: MIT */
/*
 * emu_nvgpu.h - the emulated Jetson Orin kernel driver (nvmap + nvgpu) for emu:ga10b:
 * objects shared by emu_nvgpu.c (model, ctrl fd, TSG), emu_nvgpu_as.c (address spaces),
 * emu_nvgpu_chan.c (channels) and emu_nvmap.c (nvmap handles, dmabuf fds). Layer: emu.
 * The model validates what the real driver validates and encodes the constraints learned
 * on hardware (docs/hw/nvgpu.md; each rule cites its section where it is enforced).
 * Where hardware misbehaves silently (a buffer in a shader window, an oversized ring) the
 * model refuses or faults loudly instead and writes an "emu-nvgpu:" line to its kernel log.
 */
#ifndef EMU_NVGPU_H
#define EMU_NVGPU_H

#include "emu.h"
#include "nvgpu_uapi.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#define EMU_NVGPU_GPFIFO_CLASS 0xC76Fu /* gpfifo_class observed on ga10b (nvgpu.md §1.2) */
#define EMU_NVGPU_FIRST_TOKEN 511u     /* first channel's work-submit token, then 510 (§1.3) */
#define EMU_NVGPU_MAX_VEIDS 64u
#define EMU_NVGPU_ZCULL_CTX_B 164352u       /* ZCULL_GET_CTX_SIZE observed (§1.2) */
#define EMU_NVGPU_AS_TOP_GAP_B (4ull << 20) /* first buffer of a fresh AS at end - 4 MiB (§3.2) */
#define EMU_NVGPU_KLOG_B 16384u

/* An nvmap handle (nvgpu.md §2.1). Lives while the handle (until FREE), a dmabuf fd, a GPU
 * mapping or a channel references it. */
struct emu_nvmap_handle {
    uint32_t id; /* bit 31 set, as on hardware (§2.1) */
    uint64_t size_B;
    bool allocated;
    uint32_t heap_mask, flags, align;
    struct emu_bo *bo; /* backing memory after ALLOC */
    int refs;
    bool freed; /* NVMAP_IOC_FREE done */
    struct emu_nvmap_handle *next;
};

struct emu_nvgpu {
    struct emu_dev *dev;
    const struct hcq_arch *arch;
    unsigned l4t;            /* 35 or 36: which L4T ABI the model speaks (emu opts l4t=) */
    uint32_t chars_B_report; /* tests: the struct size GET_CHARACTERISTICS reports (0 = the release's) */
    struct nvgpu_gpu_characteristics chars;
    uint32_t tpc_mask[2];
    uint32_t num_vsms;
    struct emu_bo *usermode_bo; /* the ctrl fd's mmap: doorbell word at 0x90 (§4.8) */
    struct emu_nvmap_handle *handles;
    uint32_t next_handle;
    uint32_t next_token;
    uint32_t tag_warnings;       /* allocations refused for a missing tag */
    uint32_t window_collisions;  /* buffers placed inside a shader window (§3.4) */
    pthread_mutex_t klog_lock;   /* channel threads log faults too */
    char klog[EMU_NVGPU_KLOG_B]; /* emulated kernel log, dmesg-style lines */
    size_t klog_B;
};

/* fd kinds (compared by ops pointer). */
extern const struct emu_fd_ops emu_nvmap_fd_ops;
extern const struct emu_fd_ops emu_nvmap_dmabuf_fd_ops;
extern const struct emu_fd_ops emu_nvgpu_as_fd_ops;
extern const struct emu_fd_ops emu_nvgpu_tsg_fd_ops;
extern const struct emu_fd_ops emu_nvgpu_chan_fd_ops;

/* One ioctl of a dispatch table. */
struct emu_nvgpu_ioctl {
    unsigned long request;
    const char *name;
    int (*fn)(struct emu_fd *f, void *arg);
    unsigned l4t; /* 0: every release; 35 / 36: only that L4T ABI (the number differs) */
};
/* The dispatch tables, for tests that compare them with NVIDIA's published numbers. */
extern const struct emu_nvgpu_ioctl emu_nvgpu_ctrl_ioctls[], emu_nvgpu_tsg_ioctls[], emu_nvgpu_as_ioctls[],
    emu_nvgpu_chan_ioctls[], emu_nvmap_ioctls[];
extern const int emu_nvgpu_ctrl_ioctls_n, emu_nvgpu_tsg_ioctls_n, emu_nvgpu_as_ioctls_n,
    emu_nvgpu_chan_ioctls_n, emu_nvmap_ioctls_n;
/* Dispatch `request` through `table` (n rows): -ENOTTY for an unknown number (which is
 * what a wrong struct size produces), fault injection before, trace after. */
int emu_nvgpu_dispatch(struct emu_fd *f, const struct emu_nvgpu_ioctl *table, int n, unsigned long request,
                       void *arg);

struct emu_nvgpu *emu_nvgpu_of(struct emu_dev *d);
/* Append a line to the emulated kernel log. */
void emu_nvgpu_klog(struct emu_nvgpu *m, const char *fmt, ...) HCQ_PRINTF(2, 3);
/* The emulated kernel log so far (for tests and `nvhcq selftest` on emu). */
const char *emu_nvgpu_klog_text(struct emu_dev *d);

/* ==== emu_nvmap.c ==== */
int emu_nvmap_open(struct emu_nvgpu *m, struct emu_fd **f_out);
/* The handle behind a dmabuf fd of this device, or NULL. */
struct emu_nvmap_handle *emu_nvmap_handle_from_fd(struct emu_nvgpu *m, int fd);
void emu_nvmap_handle_ref(struct emu_nvmap_handle *h);
void emu_nvmap_handle_unref(struct emu_nvgpu *m, struct emu_nvmap_handle *h);

/* ==== emu_nvgpu_as.c ==== */
struct emu_nvgpu_as;
int emu_nvgpu_as_create(struct emu_nvgpu *m, const struct nvgpu_alloc_as_args *a, int *fd_out);
struct emu_nvgpu_as *emu_nvgpu_as_from_fd(struct emu_nvgpu *m, int fd);
void emu_nvgpu_as_ref(struct emu_nvgpu_as *as);
void emu_nvgpu_as_unref(struct emu_nvgpu_as *as);
struct emu_vm *emu_nvgpu_as_vm(struct emu_nvgpu_as *as);
/* MAP_BUFFER_EX calls so far in this process, and those asking CACHEABLE or L3_ALLOC. */
void emu_nvgpu_map_flags_seen(uint32_t *maps, uint32_t *cached);

/* ==== emu_nvgpu_chan.c ==== */
struct emu_nvgpu_chan;
int emu_nvgpu_chan_open(struct emu_nvgpu *m, int *fd_out);
struct emu_nvgpu_chan *emu_nvgpu_chan_from_fd(struct emu_nvgpu *m, int fd);
/* AS bind (called by the AS fd's BIND_CHANNEL): -EINVAL when already bound. */
int emu_nvgpu_chan_bind_as(struct emu_nvgpu_chan *c, struct emu_nvgpu_as *as);
/* TSG bind (called by the TSG fd's BIND_CHANNEL_EX). */
int emu_nvgpu_chan_bind_tsg(struct emu_nvgpu_chan *c, void *tsg, struct emu_nvgpu_as *subctx_as,
                            uint32_t veid);
struct emu_nvgpu_as *emu_nvgpu_chan_as(struct emu_nvgpu_chan *c);
void emu_nvgpu_tsg_unref(void *tsg);

#endif /* EMU_NVGPU_H */
