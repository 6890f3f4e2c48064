/* SPDX-License-Identifier: MIT */
/*
 * rm_priv.h - private state of the RM kernel-driver level (kmd/rm): the kmd, its memory
 * objects and channels, the GPU VA allocator, and the small ioctl helpers shared by
 * rm_kmd.c (init sequence), rm_mem.c (memory) and rm_chan.c (channels). Layer: kmd.
 */
#ifndef RM_PRIV_H
#define RM_PRIV_H

#include "kmd.h"
#include "util_log.h"
#include "sys.h"
#include "rm_abi.h"
#include "rm_status.h"

#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

/* ==== GPU VA allocator (rm_mem.c) ==== */

struct rm_va_range {
    uint64_t start;
    uint64_t size_B;
};

/* First-fit allocator over [base, base + size_B): a sorted, coalesced free list. */
struct rm_va_heap {
    uint64_t base;
    uint64_t size_B;
    struct rm_va_range *free;
    uint32_t count, cap;
};

HCQ_MUST_CHECK enum hcq_status rm_va_heap_init(struct rm_va_heap *h, uint64_t base, uint64_t size_B);
void rm_va_heap_fini(struct rm_va_heap *h);
/* Allocate size_B at align_B (power of two); HCQ_ERR_NOMEM when no range fits. */
HCQ_MUST_CHECK enum hcq_status rm_va_alloc(struct rm_va_heap *h, uint64_t size_B, uint64_t align_B,
                                           uint64_t *va_out);
/* Return a range obtained from rm_va_alloc (exact start and size). */
void rm_va_free(struct rm_va_heap *h, uint64_t va, uint64_t size_B);
/* Bytes currently free (tests). */
uint64_t rm_va_heap_free_B(const struct rm_va_heap *h);

/*
 * VA layout (rm.md §3.6, §8.2). The low region holds everything CPU-visible or needing
 * a VA below 2^40 (pushbuffers, QMDs, signals, GPFIFO rings): CPU pointer == GPU VA there,
 * and the whole region is reserved PROT_NONE first so nothing else lands in it (when the
 * range is taken, e.g. by AddressSanitizer's shadow gap, CPU maps go elsewhere). Each kmd
 * takes the first free 64 GiB slot of [2^36, 2^40), so several devices (or an emulated
 * one next to a real one) can live in one process. GPU-only buffers take VAs from
 * [2^40, 2^45), away from where Linux places CPU mappings on x86-64 and aarch64.
 */
/* NV_STATUS codes that mean "out of memory" (rm.md §1.5). */
#define RM_NV_ERR_INSUFFICIENT_RESOURCES 0x1Au
#define RM_NV_ERR_NO_MEMORY 0x51u
#define RM_VA_LOW_FIRST 0x1000000000ull  /* 2^36 */
#define RM_VA_LOW_SLOT_B 0x1000000000ull /* 64 GiB */
#define RM_VA_LOW_END 0x10000000000ull   /* 2^40 */
#define RM_VA_HIGH_BASE 0x10000000000ull /* 2^40 */
#define RM_VA_HIGH_END 0x200000000000ull /* 2^45 */

/* ==== Objects ==== */

enum rm_mem_kind {
    RM_MEM_VIDMEM,      /* NV1_MEMORY_USER (rm.md §3.1) */
    RM_MEM_SYSMEM_RM,   /* NV1_MEMORY_SYSTEM, RM-owned pages (rm.md §3.2) */
    RM_MEM_OSDESC_ANON, /* our anonymous pages at the VA, wrapped (rm.md §3.3) */
    RM_MEM_OSDESC_USER, /* caller's pages (mem_import_host), wrapped */
    RM_MEM_PEER,        /* another kmd's vidmem mapped here through UVM (rm_peer.c) */
};

struct rm_mem {
    struct kmd_mem base;
    struct rm_mem *prev, *next; /* live list of the kmd */
    enum rm_mem_kind kind;
    uint32_t hmem;           /* RM memory handle, 0 when none */
    struct rm_va_heap *heap; /* heap the VA came from, NULL when none */
    uint64_t cpu_cookie;     /* RM_MAP_MEMORY pLinearAddress */
    bool cpu_map_rm;         /* RM_MAP_MEMORY context exists */
    bool cpu_map_own;        /* base.map is our anonymous mapping (OS-descriptor memory) */
    bool uvm_range;          /* UVM_CREATE_EXTERNAL_RANGE done */
    bool dma_mapped;         /* RM_MAP_MEMORY_DMA done */
};

/* Another GPU this kmd maps memory of (rm_peer.c): set up once per pair, kept until the
 * kmd closes (closing the UVM fd drops the registration and the peer enablement). */
struct rm_peer {
    uint32_t gpu_id;  /* NV_ESC_CARD_INFO gpu_id of the other GPU */
    uint8_t uuid[16]; /* its UUID (UVM names GPUs by UUID) */
    uint32_t p2p_caps;
    bool ready;        /* registered in our UVM VA space, peer access on */
    char refused[192]; /* why not ("" when ready or not tried) */
};
#define RM_PEER_MAX 8u

/* An asynchronous copy engine (LCE) a copy queue's channel may run on (rm_chan.c). */
struct rm_lce {
    uint32_t engine_type; /* NV2080_ENGINE_TYPE_COPY(i) */
    uint32_t pce_mask;    /* physical engines behind it (0: the driver did not say) */
    uint8_t caps[2];      /* NV2080_CTRL_CE_GET_CAPS_V2 capsTbl */
    uint32_t chans;       /* live channels of ours on it */
    bool failed;          /* making a channel on it failed: not tried again */
};
#define RM_LCE_MAX 20u /* COPY0..COPY19 */

struct rm_chan {
    struct kmd_channel base;
    struct rm_chan *prev, *next;
    uint32_t htsg;           /* the channel's group: the kmd's GR TSG, or its own on an LCE */
    int lce;                 /* index into rm_kmd.lces, -1 on the GR TSG */
    uint32_t hchan;          /* GPFIFO channel */
    uint32_t hobj;           /* engine object (compute or copy class) */
    struct rm_mem *area;     /* ring + USERD, vidmem, contiguous, CPU-mapped */
    struct rm_mem *notifier; /* error notifier, RM sysmem, CPU-mapped */
    uint64_t uvm_va;         /* UVM_REGISTER_CHANNEL range (kept until the kmd dies) */
    uint32_t index;          /* creation order, for messages */
    bool internal;           /* the kmd's own GR anchor channel (rm_chan.c) */
};

struct rm_kmd {
    struct kmd base;
    const struct sys *sys;
    int index;
    char dev_path[32]; /* /dev/nvidiaN */
    int fd_ctl, fd_uvm, fd_uvm2, fd_dev;
    uint32_t gpu_id, minor;
    uint16_t pci_device_id;
    uint32_t hclient, hdevice, hsubdevice, hvirtmem, husermode, hvaspace, htsg, hctxshare;
    uint32_t next_handle; /* client-chosen handles (OS descriptors) */
    uint8_t uuid[16];
    uint32_t gpfifo_cls, usermode_cls, compute_cls, copy_cls;
    volatile uint8_t *usermode; /* doorbell page (RM_USERMODE_MAP_B bytes) */
    uint64_t usermode_cookie;
    void *low_reserve; /* the PROT_NONE reservation of the low region */
    struct rm_va_heap va_low, va_high;
    bool uvm_initialized, uvm_gpu, uvm_vaspace;
    uint32_t chan_count; /* channels created so far (naming) */
    uint32_t gr_objects; /* live compute-class objects in the TSG */
    /* Asynchronous copy engines, best first (rm_lce_probe); lce_off: COPY_ASYNC channels go
     * to the GR copy engine (HCQ_RM_COPY_ENGINE=grce, or none usable), lce_why says why. */
    struct rm_lce lces[RM_LCE_MAX];
    uint32_t lce_count;
    bool lce_off;
    char lce_why[160];
    struct rm_peer peers[RM_PEER_MAX]; /* rm_peer.c, under peer_lock */
    uint32_t peer_count;
    pthread_mutex_t peer_lock;
    bool peer_lock_init;
    pthread_mutex_t lock; /* VA heaps, live lists, next_handle */
    bool lock_init;
    /* Channel creation and destruction (the TSG made at the first, gr_objects, the GR anchor,
     * the group schedule that walks the members existing at the call): queues may be created
     * from several threads. Held around rm_alloc, so never under `lock` (rm_alloc takes it). */
    pthread_mutex_t chan_lock;
    bool chan_lock_init;
    struct rm_mem *mems;
    struct rm_chan *chans;
    /* RM objects this client allocated and has not freed (hcq_mem_stats.driver_objects):
     * +1 for each NV_ESC_RM_ALLOC / NV_ESC_RM_ALLOC_MEMORY that succeeded, -1 for each
     * NV_ESC_RM_FREE that succeeded. Every object is freed on its own (children first), so the
     * count is exact while the client lives; the emulated RM's own count checks it in the
     * HCQ suite's mem_stats_driver_objects. */
    atomic_llong objects;
};

extern const struct kmd_ops rm_kmd_ops;

/* Downcast with the ops check of STYLE 2.4. */
static inline struct rm_kmd *
rm_kmd_from(struct kmd *k)
{
    assert(k->ops == &rm_kmd_ops);
    return (struct rm_kmd *)((char *)k - offsetof(struct rm_kmd, base));
}

/* ==== ioctl helpers (rm_kmd.c) ==== */

/* Every RM and UVM ioctl goes through here: through k->sys, retried on EINTR/EAGAIN, logged
 * with its duration (and *status when given) under HCQ_DEBUG=ioctl. Returns the ioctl's rc,
 * errno as the ioctl left it. */
int rm_ioctl_raw(struct rm_kmd *k, int fd, unsigned long req, void *arg, const char *what,
                 const uint32_t *status);
/* ioctl through k->sys; HCQ_ERR_DRIVER naming `what` and errno on transport failure. */
HCQ_MUST_CHECK enum hcq_status rm_ioctl(struct rm_kmd *k, int fd, unsigned long req, void *arg,
                                        const char *what);
/* NV_ESC_RM_ALLOC of class `cls` under `parent`; *h_inout: 0 = RM picks, else client handle. */
HCQ_MUST_CHECK enum hcq_status rm_alloc(struct rm_kmd *k, uint32_t parent, uint32_t cls, void *params,
                                        uint32_t params_B, uint32_t *h_inout);
/* NV_ESC_RM_CONTROL; quiet: return the status without logging (optional controls). */
HCQ_MUST_CHECK enum hcq_status rm_control(struct rm_kmd *k, uint32_t obj, uint32_t cmd, void *params,
                                          uint32_t params_B, const char *name, bool quiet);
/* NV_ESC_RM_FREE; failures are logged as warnings (teardown never fails). */
void rm_free(struct rm_kmd *k, uint32_t parent, uint32_t h);
/* A UVM ioctl whose NV_STATUS sits at `status` inside `params`. */
HCQ_MUST_CHECK enum hcq_status rm_uvm(struct rm_kmd *k, int fd, unsigned long req, void *params,
                                      const uint32_t *status, const char *name);

/* ==== Memory (rm_mem.c) ==== */

HCQ_MUST_CHECK enum hcq_status rm_mem_alloc(struct kmd *kmd, uint64_t size_B, uint64_t align_B,
                                            uint32_t flags, struct kmd_mem **mem_out);
void rm_mem_free(struct kmd *kmd, struct kmd_mem *mem);
HCQ_MUST_CHECK enum hcq_status rm_mem_import_host(struct kmd *kmd, void *ptr, uint64_t size_B,
                                                  struct kmd_mem **mem_out);
/* RM-owned sysmem without a GPU mapping, CPU-mapped through nvidiactl (error notifiers). */
HCQ_MUST_CHECK enum hcq_status rm_mem_alloc_notifier(struct rm_kmd *k, uint64_t size_B,
                                                     struct rm_mem **mem_out);
/* Reserve the low region and set up both heaps (rm_kmd_create); undone by rm_mem_fini. */
HCQ_MUST_CHECK enum hcq_status rm_mem_init(struct rm_kmd *k);
void rm_mem_fini(struct rm_kmd *k);
/* Map `size_B` of RM memory `hmem` for the CPU through a fresh fd (rm.md §3.4), at the
 * address `va` when it lies in our reservation; via_ctl selects /dev/nvidiactl (RM
 * sysmem) over /dev/nvidiaN. */
HCQ_MUST_CHECK enum hcq_status rm_mem_cpu_map(struct rm_kmd *k, uint32_t hmem, uint64_t size_B, uint64_t va,
                                              bool via_ctl, void **map_out, uint64_t *cookie_out);
/* Undo rm_mem_cpu_map: reservation back over the mapping (or munmap), RM_UNMAP_MEMORY. */
void rm_mem_cpu_unmap(struct rm_kmd *k, uint32_t hmem, uint64_t size_B, void *map, uint64_t cookie);

/* Steps shared with rm_peer.c: a VA for m from the low or high heap, the live-list insert,
 * and the release that undoes exactly the steps m's flags say were done (then frees m). */
HCQ_MUST_CHECK enum hcq_status rm_mem_va(struct rm_kmd *k, struct rm_mem *m, bool low, uint64_t align_B);
void rm_mem_publish(struct rm_kmd *k, struct rm_mem *m);
void rm_mem_release(struct rm_kmd *k, struct rm_mem *m);

/* ==== Peers (rm_peer.c) ==== */

/* kmd_ops.mem_peer_map: owner's vidmem into k's VA space (HCQ_RM_PEER=1 only, see there). */
HCQ_MUST_CHECK enum hcq_status rm_peer_map(struct kmd *kmd, struct kmd *owner, struct kmd_mem *mem,
                                           struct kmd_mem **mem_out);

/* ==== Channels (rm_chan.c) ==== */

HCQ_MUST_CHECK enum hcq_status rm_chan_create(struct kmd *kmd, enum kmd_engine engine, uint32_t entries,
                                              struct kmd_channel **chan_out);
void rm_chan_destroy(struct kmd *kmd, struct kmd_channel *chan);
void rm_chan_kick(struct kmd *kmd, struct kmd_channel *chan, uint32_t put);
/* Read the engine list and rank the asynchronous copy engines (rm_kmd_create; never fails:
 * a driver that refuses the controls leaves COPY_ASYNC channels on the GR copy engine). */
void rm_lce_probe(struct rm_kmd *k);
HCQ_MUST_CHECK enum hcq_status rm_chan_check(struct kmd *kmd, char *reason, size_t reason_B);

#endif /* RM_PRIV_H */
