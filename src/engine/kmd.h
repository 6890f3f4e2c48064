/* SPDX-License-Identifier: MIT */
/*
 * kmd.h - the kernel-driver level (ARCHITECTURE §2, STYLE 2.4 "struct kmd_ops"):
 * what the shared pushbuffer engine (src/engine) needs from a kernel driver. Implemented
 * by kmd/rm and kmd/nvgpu (both also running on emu through struct sys).
 * RM and nvgpu differ only below this line: how memory is obtained and mapped, how a
 * channel is created and how its doorbell is rung.
 */
#ifndef KMD_H
#define KMD_H

#include "hcq.h"
#include "gpu_arch.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct kmd;

enum kmd_mem_flags {
    KMD_MEM_VRAM = 0,          /* device memory (on Tegra: IOVMM, same thing) */
    KMD_MEM_SYSMEM = 1 << 0,   /* system memory (pinned), GPU-visible */
    KMD_MEM_CPU_MAP = 1 << 1,  /* must be CPU-mapped (BAR1 for VRAM on rm) */
    KMD_MEM_CONTIG = 1 << 2,   /* physically contiguous (GPFIFO/USERD on rm) */
    KMD_MEM_LOW_VA = 1 << 3,   /* VA below 2^40 (pushbuffers, QMDs, signals: rm.md §8.2) */
    KMD_MEM_UNCACHED = 1 << 4, /* CPU mapping write-combined / uncached (rings, USERD) */
};

struct kmd_mem {
    uint64_t size_B;
    uint64_t va; /* GPU VA */
    void *map;   /* CPU mapping or NULL */
    uint32_t flags;
    uint64_t handle; /* RM memory handle / nvmap handle */
    void *priv;
};

/*
 * What a channel runs. COPY is the copy engine next to compute (rm: the GR copy engine, in
 * the compute channel group: copies on compute queues hand over to it by semaphore).
 * COPY_ASYNC is a copy queue's own channel: on rm an asynchronous copy engine in a channel
 * group of its own (docs/rm-backend.md "Copy engines"); a kmd without such engines, or
 * one that cannot make the channel there, gives a COPY channel instead (kmd_channel.engine
 * says which it made). Both take the same copy-class methods.
 */
enum kmd_engine { KMD_ENGINE_COMPUTE, KMD_ENGINE_COPY, KMD_ENGINE_COPY_ASYNC, KMD_ENGINE_KINDS };

/* A GPFIFO channel as the pushbuffer engine sees it (rm.md §4.2-4.4, nvgpu.md §4.7-4.9). */
struct kmd_channel {
    enum kmd_engine engine;  /* what the kmd made (COPY_ASYNC may come back as COPY) */
    volatile uint64_t *ring; /* CPU view of the GPFIFO ring */
    uint32_t entries;        /* ring entries, power of two */
    volatile uint8_t *userd; /* CPU view of USERD (GPPut @0x8C, GPGet @0x88) */
    uint32_t token;          /* work-submit token written to the doorbell */
    uint32_t obj_cls;        /* engine class bound (compute or copy) */
    uint64_t rings;          /* doorbell stores so far (rm: a kick may ring twice, rm_chan_kick) */
    void *priv;
};

struct kmd_info {
    char name[96];   /* GPU name */
    char driver[64]; /* driver version string */
    uint64_t vram_B;
    uint32_t sm_count; /* from TPC masks / characteristics, never assumed */
    uint32_t tpc_count;
    uint32_t gpc_count;
    uint32_t max_warps_per_sm;
    /* chip maxima used for local-memory sizing (rm.md §8.3) */
    uint32_t litter_gpcs, litter_tpc_per_gpc, litter_sm_per_tpc;
    bool unified_memory; /* Tegra: device memory is CPU memory */
    bool has_uvm;
    bool sem_release_in_push; /* Tegra: release signals from the pushbuffer, not the QMD
                                 (nvgpu.md §6.6, the QMD-reuse race) */
    bool copies_by_cpu;       /* Tegra: host<->device copies as memcpy after a sync */
    bool emulated;
    /* Asynchronous copy engines a COPY_ASYNC channel may land on (rm: from the engine list,
     * GR copy engines excluded; 0 when there are none, they are switched off, or making a
     * channel on one failed). The engine splits large copies over up to this many. */
    uint32_t async_copy_engines;
    /* Shader shared/local memory windows the kmd reserved in the GPU VA space, for
     * SET_SHADER_{SHARED,LOCAL}_MEMORY_WINDOW and cbuf0 (nvgpu.md §3.4: on Tegra's 40-bit
     * AS they must be reserved or buffers land inside them). 0: the engine's default. */
    uint64_t shared_window_va, local_window_va;
};

struct kmd_ops {
    /* Close channels, free memory, close fds. Accepts partially built objects. Required. */
    void (*destroy)(struct kmd *kmd);
    /* Allocate + map memory (align_B power of two, 0 = default). Required. */
    enum hcq_status (*mem_alloc)(struct kmd *kmd, uint64_t size_B, uint64_t align_B, uint32_t flags,
                                 struct kmd_mem **mem_out);
    void (*mem_free)(struct kmd *kmd, struct kmd_mem *mem);
    /* (optional) Map page-aligned host memory for the GPU. NULL: HCQ_ERR_UNSUPPORTED. */
    enum hcq_status (*mem_import_host)(struct kmd *kmd, void *ptr, uint64_t size_B, struct kmd_mem **mem_out);
    /* (optional) Map `mem`, device memory of another kmd `owner` of the same kind in this
     * process, into this kmd's GPU VA space (peer-to-peer over NVLink or PCIe): *mem_out is a
     * kmd_mem of this kmd (va reaches owner's memory, map NULL), freed with mem_free before
     * `owner` goes. HCQ_ERR_UNSUPPORTED (reason recorded quietly) when the pair cannot, so
     * callers stage through host memory. NULL: HCQ_ERR_UNSUPPORTED. */
    enum hcq_status (*mem_peer_map)(struct kmd *kmd, struct kmd *owner, struct kmd_mem *mem,
                                    struct kmd_mem **mem_out);
    /* Create a channel (GPFIFO ring of `entries`, USERD, engine object bound). Required. */
    enum hcq_status (*channel_create)(struct kmd *kmd, enum kmd_engine engine, uint32_t entries,
                                      struct kmd_channel **chan_out);
    void (*channel_destroy)(struct kmd *kmd, struct kmd_channel *chan);
    /* Publish GPPut = put (ring index) and ring the doorbell, with the store fence the
     * driver needs before it (rm.md §4.4). Required. */
    void (*channel_kick)(struct kmd *kmd, struct kmd_channel *chan, uint32_t put);
    /* (optional) Poll the driver's error notifiers: HCQ_OK or HCQ_ERR_DEVICE_LOST with
     * the decoded reason written to reason (Xid, MMU fault, channel error). NULL: OK. */
    enum hcq_status (*check)(struct kmd *kmd, char *reason, size_t reason_B);
    /* (optional) Ring every doorbell channel_kick deferred (nvgpu's HCQ_NVGPU_DOORBELL_BATCH).
     * The engine calls it before every wait, so deferred work never waits for a doorbell
     * that would only come after the wait. NULL: kicks always ring. */
    void (*doorbell_flush)(struct kmd *kmd);
    /* (optional) Free device memory as the kernel driver counts it (hcq_mem_stats
     * .driver_free_B). NULL: HCQ_ERR_UNSUPPORTED. */
    enum hcq_status (*mem_free_query)(struct kmd *kmd, uint64_t *free_B);
    /* (optional) Kernel-driver objects this device holds (hcq_mem_stats.driver_objects: RM
     * objects of its client). NULL: HCQ_ERR_UNSUPPORTED. */
    enum hcq_status (*objects_query)(struct kmd *kmd, uint64_t *objects);
};

/* Code that stands for a kernel without a cubin for the chip: write it for kernel `name`
 * into dst (dst_B bytes, zero-filled, CPU-mapped device memory at the program address).
 * HCQ_ERR_INVALID when `name` does not fit. */
typedef enum hcq_status (*kmd_program_stub_fn)(const char *name, void *dst, size_t dst_B);

struct kmd {
    const struct kmd_ops *ops;
    const struct hcq_arch *arch;
    struct kmd_info info;
    /* (optional) Set by whoever runs a kmd on an emulated GPU (src/emu/emu_open.c): the GPU
     * model there recognises this code and runs the kernel's CPU twin, so programs load
     * without a cubin. NULL on a real driver: loading a program then needs a cubin. The
     * engine knows nothing of the format; it only uploads these bytes. */
    kmd_program_stub_fn program_stub;
    /* (optional) What the kernel log says about the device's first fault, where the kmd runs on
     * an emulated GPU (src/emu: the GPU model's text, e.g. "Xid 13: QMD ...:
     * SKEDCHECK05_LOCAL_MEMORY_TOTAL_SIZE ..."). A real driver writes such detail to the kernel
     * log only (dmesg), not to the error notifiers check() reads, so it is NULL there. The
     * engine appends it to a lost device's reason. */
    void (*fault_log)(void *ctx, char *buf, size_t buf_B);
    void *fault_log_ctx;
};

/* ==== Wrappers (callers never use ->ops-> directly) ==== */

static inline void
kmd_destroy(struct kmd *kmd)
{
    if (kmd)
        kmd->ops->destroy(kmd);
}

static inline HCQ_MUST_CHECK enum hcq_status
kmd_mem_alloc(struct kmd *kmd, uint64_t size_B, uint64_t align_B, uint32_t flags, struct kmd_mem **mem_out)
{
    return kmd->ops->mem_alloc(kmd, size_B, align_B, flags, mem_out);
}

static inline void
kmd_mem_free(struct kmd *kmd, struct kmd_mem *mem)
{
    if (mem)
        kmd->ops->mem_free(kmd, mem);
}

static inline HCQ_MUST_CHECK enum hcq_status
kmd_mem_import_host(struct kmd *kmd, void *ptr, uint64_t size_B, struct kmd_mem **mem_out)
{
    if (!kmd->ops->mem_import_host)
        return HCQ_ERR_UNSUPPORTED;
    return kmd->ops->mem_import_host(kmd, ptr, size_B, mem_out);
}

static inline HCQ_MUST_CHECK enum hcq_status
kmd_mem_free_query(struct kmd *kmd, uint64_t *free_B)
{
    *free_B = 0;
    if (!kmd->ops->mem_free_query)
        return HCQ_ERR_UNSUPPORTED;
    return kmd->ops->mem_free_query(kmd, free_B);
}

static inline HCQ_MUST_CHECK enum hcq_status
kmd_objects_query(struct kmd *kmd, uint64_t *objects)
{
    *objects = 0;
    if (!kmd->ops->objects_query)
        return HCQ_ERR_UNSUPPORTED;
    return kmd->ops->objects_query(kmd, objects);
}

static inline HCQ_MUST_CHECK enum hcq_status
kmd_mem_peer_map(struct kmd *kmd, struct kmd *owner, struct kmd_mem *mem, struct kmd_mem **mem_out)
{
    if (!kmd->ops->mem_peer_map || owner->ops != kmd->ops)
        return HCQ_ERR_UNSUPPORTED; /* the caller says why */
    return kmd->ops->mem_peer_map(kmd, owner, mem, mem_out);
}

static inline HCQ_MUST_CHECK enum hcq_status
kmd_channel_create(struct kmd *kmd, enum kmd_engine engine, uint32_t entries, struct kmd_channel **chan_out)
{
    return kmd->ops->channel_create(kmd, engine, entries, chan_out);
}

static inline void
kmd_channel_destroy(struct kmd *kmd, struct kmd_channel *chan)
{
    if (chan)
        kmd->ops->channel_destroy(kmd, chan);
}

static inline void
kmd_channel_kick(struct kmd *kmd, struct kmd_channel *chan, uint32_t put)
{
    kmd->ops->channel_kick(kmd, chan, put);
}

static inline void
kmd_doorbell_flush(struct kmd *kmd)
{
    if (kmd->ops->doorbell_flush)
        kmd->ops->doorbell_flush(kmd);
}

static inline HCQ_MUST_CHECK enum hcq_status
kmd_check(struct kmd *kmd, char *reason, size_t reason_B)
{
    if (!kmd->ops->check)
        return HCQ_OK;
    return kmd->ops->check(kmd, reason, reason_B);
}

/* Constructors (kmd/rm, kmd/nvgpu). `sys` is the syscall table (sys_os or the
 * emulator's); `index` the GPU index. Return HCQ_ERR_NOT_FOUND without the device nodes. */
struct sys;
HCQ_MUST_CHECK enum hcq_status rm_kmd_create(const struct sys *sys, int index, struct kmd **kmd_out);
HCQ_MUST_CHECK enum hcq_status nvgpu_kmd_create(const struct sys *sys, int index, struct kmd **kmd_out);

/* The pushbuffer engine (src/engine): wrap a kmd into a runtime device (takes ownership of
 * kmd, also on failure). backend_name is "rm", "nvgpu" or "emu"; spec as reported. */
HCQ_MUST_CHECK enum hcq_status pb_device_create(struct kmd *kmd, const char *backend_name, const char *spec,
                                                struct hcq_device **dev_out);

#endif /* KMD_H */
