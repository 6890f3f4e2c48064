/* SPDX-License-Identifier: MIT */
/*
 * nvgpu_kmd.h - the Jetson Orin (ga10b) kernel-driver backend: struct kmd over
 * nvmap + nvgpu (docs/hw/nvgpu.md). Layer: kmd. Internal to kmd/nvgpu, also read by
 * tests/unit/test_nvgpu.c (which inspects the objects it builds).
 * Files: nvgpu_kmd.c (discovery, address space, TSG, open/destroy), nvgpu_mem.c (nvmap
 * buffers), nvgpu_chan.c (channels, usermode submit).
 */
#ifndef NVGPU_KMD_H
#define NVGPU_KMD_H

#include "kmd.h"
#include "sys.h"
#include "nvgpu_uapi.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define NVGPU_MAX_GPCS 32u /* TPC mask buffer entries (one u32 per GPC, nvgpu-ctrl.h) */

/* One nvmap buffer (nvgpu.md §2.1): handle -> dmabuf fd -> GPU VA (optional) + CPU map. */
struct nvgpu_mem {
    struct kmd_mem base;  /* base.handle = nvmap handle, base.va = GPU VA (0 if unmapped) */
    int dmabuf_fd;        /* -1 once closed */
    uint32_t nvmap_flags; /* the ALLOC flags word used (tag | cache policy) */
    bool gpu_mapped;      /* MAP_BUFFER_EX done: UNMAP_BUFFER on free */
    /* A span (device buffer above one nvmap buffer's cap): n_parts nvmap buffers mapped
     * back to back into one ALLOC_SPACE reservation and one CPU VA reservation. */
    struct nvgpu_mem **parts;
    uint32_t n_parts;
    uint64_t space_va;      /* the reservation (FREE_SPACE on free), 0 if none */
    struct nvgpu_mem *next; /* live list (freed by destroy if the caller forgot) */
};

/* One GPFIFO channel (nvgpu.md §4.2-4.5). */
struct nvgpu_chan {
    struct kmd_channel base;
    int fd;                     /* channel fd from OPEN_CHANNEL, -1 once closed */
    struct nvgpu_mem *ring;     /* dedicated ring buffer, exactly entries*8 B (min 4 KiB) */
    struct nvgpu_mem *userd;    /* dedicated 4 KiB USERD */
    struct nvgpu_mem *notifier; /* 4 KiB the kernel writes a struct nvgpu_notification to on error */
    atomic_uint unrung;         /* kicks whose doorbell was deferred (HCQ_NVGPU_DOORBELL_BATCH) */
    struct nvgpu_chan *next;
};

struct nvgpu_kmd {
    struct kmd base;
    const struct sys *sys;
    int nvmap_fd, ctrl_fd, as_fd, tsg_fd; /* -1 when not open */
    uint32_t veid;                        /* async subcontext of the TSG (§4.1) */
    enum nvgpu_l4t l4t;                   /* the L4T ABI the kernel speaks, from GET_CHARACTERISTICS */
    volatile uint8_t *usermode;           /* mapped ctrl region: the doorbell page (§4.8) */
    struct nvgpu_gpu_characteristics chars;
    uint32_t tpc_mask[NVGPU_MAX_GPCS]; /* GET_TPC_MASKS, one mask per GPC */
    uint32_t num_vsms;                 /* NUM_VSMS: the SM count the driver reports */
    bool windows_reserved;             /* both ALLOC_SPACE reservations done (§3.4) */
    uint32_t doorbell_batch;           /* ring once per this many kicks, or at a wait (default 1) */
    pthread_mutex_t lock;              /* guards the live lists */
    struct nvgpu_mem *mems;
    struct nvgpu_chan *chans;
};

/* Checked downcast (STYLE 2.4). */
struct nvgpu_kmd *nvgpu_kmd_from(struct kmd *kmd);

/* ioctl through the sys table: 0 or the errno; logs with HCQ_DEBUG=ioctl. */
int nvgpu_kmd_ioctl(struct nvgpu_kmd *k, int fd, unsigned long req, void *arg, const char *name);
/* The status an errno maps to (ENOMEM -> NOMEM, else DRIVER). */
enum hcq_status nvgpu_kmd_errno_status(int err);

/* ==== nvgpu_mem.c ==== */

/* nvmap buffer: CREATE, ALLOC (IOVMM, tag | cache), GET_FD, mmap; MAP_BUFFER_EX when gpu_map. */
HCQ_MUST_CHECK enum hcq_status nvgpu_mem_create(struct nvgpu_kmd *k, uint64_t size_B, uint64_t align_B,
                                                uint32_t cache, bool gpu_map, struct nvgpu_mem **mem_out);
/* The largest single nvmap buffer used: 4 GiB - 2 MiB, or HCQ_NVGPU_MAX_BUF_B if lower. */
uint64_t nvgpu_mem_max_buf(void);
/* UNMAP_BUFFER -> munmap -> close(dmabuf) -> FREE (the order of nvgpu.md §2.1). NULL ok. */
void nvgpu_mem_destroy(struct nvgpu_kmd *k, struct nvgpu_mem *m);
/* The kmd_ops members. */
enum hcq_status nvgpu_mem_alloc(struct kmd *kmd, uint64_t size_B, uint64_t align_B, uint32_t flags,
                                struct kmd_mem **mem_out);
void nvgpu_mem_free(struct kmd *kmd, struct kmd_mem *mem);
/* Size and alignment nvgpu_mem_create uses for a request (pure; tested). */
void nvgpu_mem_plan(uint64_t size_B, uint64_t align_B, uint32_t cache, uint64_t *size_out,
                    uint64_t *align_out);

/* ==== nvgpu_chan.c ==== */

enum hcq_status nvgpu_chan_create(struct kmd *kmd, enum kmd_engine engine, uint32_t entries,
                                  struct kmd_channel **chan_out);
void nvgpu_chan_destroy(struct kmd *kmd, struct kmd_channel *chan);
void nvgpu_chan_kick(struct kmd *kmd, struct kmd_channel *chan, uint32_t put);
/* Ring the doorbell of every channel with deferred kicks (kmd_ops.doorbell_flush). */
void nvgpu_chan_doorbell_flush(struct kmd *kmd);
/* Process-wide counts since start: kicks, and doorbell stores (tests of the batch knob). */
void nvgpu_chan_doorbell_stats(uint64_t *kicks, uint64_t *rings);
/* HCQ_NVGPU_DOORBELL_BATCH: 1 when unset; HCQ_ERR_INVALID outside [1, 1024]. */
HCQ_MUST_CHECK enum hcq_status nvgpu_chan_doorbell_batch(uint32_t *batch_out);
/* HCQ_ERR_DEVICE_LOST with the decoded reason when a channel's error notifier is set. */
enum hcq_status nvgpu_chan_check(struct kmd *kmd, char *reason, size_t reason_B);
/* Name of an NVGPU_CHANNEL_* error code ("MMU fault"), never NULL. */
const char *nvgpu_chan_error_name(uint32_t code);
/* Ring buffer bytes for `entries` GPFIFO entries: entries*8, at least 4 KiB (§4.4). */
uint64_t nvgpu_chan_ring_bytes(uint32_t entries);

#endif /* NVGPU_KMD_H */
