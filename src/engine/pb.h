/* SPDX-License-Identifier: MIT */
/*
 * pb.h - internals of the pushbuffer engine shared by the rm and nvgpu backends (and by
 * emu:*, which runs them on an emulated driver). It implements the runtime's backend table
 * (struct hcq_backend_ops, src/core/hcq_priv.h) on a kernel-driver table (struct kmd,
 * kmd.h), encoding everything with src/gpu. Layer: hcq. docs/engine.md describes it.
 *
 * Objects:
 *   pb_dev     the device: kmd, arch row, memory windows, clock calibration
 *   pb_queue   a queue: one kmd channel (compute, or a copy engine for Tegra's copy queues), a
 *                  lazily created copy helper channel for copies the compute channel does not
 *                  run as a kernel, a stream ring (pushbuffers, cbuf0s, QMDs) recycled behind
 *                  the queue timeline, local memory
 *   pb_chan    one channel: GPFIFO put index, 64-bit timeline slot, scratch pushbuffer
 *   pb_program code in device memory (or the kmd's program stub) + launch facts
 *   pb_graph   persistent, double-buffered pushbuffers/cbuf0s/QMDs + patch locations
 */
#ifndef PB_H
#define PB_H

#include "kmd.h"
#include "pb_ring.h"
#include "hcq_priv.h"

#include "gpu_push.h"
#include "gpu_qmd.h"

/* ==== Constants (each with its source) ==== */

/* GPFIFO entries per channel: a power of two; 1024 as on Orin (nvgpu.md §4.6). */
#define PB_GPFIFO_ENTRIES 1024u
/* Stream ring per queue (pushbuffers, cbuf0s, QMDs): ~1 KiB per launch, so thousands of
 * launches in flight before the allocator waits on the timeline. */
#define PB_STREAM_B (4u << 20)
#define PB_STREAM_FENCES 4096u
/* Scratch pushbuffer words a channel starts with (grown when a submission needs more). */
#define PB_SCRATCH_DW 16384u
/* Per-queue system page: timeline slots and scratch semaphores (offsets below). */
#define PB_SYS_B 4096u
#define PB_SYS_MAIN_TL 0x00u  /* main channel timeline: u64 value, u64 timestamp */
#define PB_SYS_AUX_TL 0x10u   /* helper copy channel timeline */
#define PB_SYS_CE_FLUSH 0x20u /* copy-engine flush semaphore scratch (value ignored) */
/* Fixed memory windows programmed into every compute channel (mandatory before any
 * dispatch, nvgpu.md §6.2). Desktop: rm.md §3.6 (4 GiB aligned, away from allocations);
 * Tegra: nvgpu.md §6.2 (inside its 40-bit VA space). */
#define PB_RM_LOCAL_WINDOW_VA 0x729300000000ull
#define PB_RM_SHARED_WINDOW_VA 0x729400000000ull
#define PB_TEGRA_LOCAL_WINDOW_VA 0xFD00000000ull
#define PB_TEGRA_SHARED_WINDOW_VA 0xFE00000000ull
/* Local memory headroom above the kernel's MIN_STACK_SIZE: the initial stack pointer is
 * 16 MiB - 0x240 (rm.md §8.3, §6.5 c[0][0x28] = 0xFFFDC0). */
#define PB_LOCAL_HEADROOM_B 0x240u
#define PB_STACK_INIT 0xFFFDC0u
/* Idle channels kept per engine for reuse. */
#define PB_CHAN_POOL 8u
/* Dwords of one local-memory emission (pb_queue.c "Local memory"): the emission-counter
 * acquire (6), SET_SHADER_LOCAL_MEMORY_A/B (3), _NON_THROTTLED_A/B/C (4), the counter release (6). */
#define PB_LMEM_EMIT_DW 19u
/* GPU waits: how long a wait the engine starts on its own (ring full, setup) may take
 * before the device is declared hung. */
#define PB_HANG_NS HCQ_TIMEOUT_DEFAULT_NS

/* Code memory taken by a program stub (kmd.h, struct kmd.program_stub). */
#define PB_STUB_CODE_B 4096u

/* ==== Objects ==== */

/* Caching pool of buffer memory (pb_pool.c): kinds of blocks, per-side statistics. */
enum { PB_POOL_DEVICE, PB_POOL_MAPPED, PB_POOL_HOST, PB_POOL_KINDS };
struct pb_block;
struct pb_slab;
struct pb_pool_side {
    struct hcq_mem_pool_stats st;
};
struct pb_pool {
    pthread_mutex_t lock;
    bool enabled;
    bool slab_on;                          /* small classes from slabs (HCQ_POOL_SLAB, on unless 0) */
    struct pb_block *cache[PB_POOL_KINDS]; /* freed blocks, most recent first */
    struct pb_slab *slabs[PB_POOL_KINDS];  /* sub-allocation slabs of small classes */
    uint32_t cache_count[PB_POOL_KINDS];
    struct pb_pool_side device, host; /* device: DEVICE + MAPPED kinds */
};

/* The device's local (stack) memory (pb_queue.c "Local memory"): one grow-only store for
 * every queue, since all compute channels share one GR context. */
struct pb_queue;
struct pb_lmem_wait {
    struct pb_queue *pq;
    uint64_t value; /* its main timeline must reach this */
};
struct pb_lmem_old {
    struct kmd_mem *mem;        /* a replaced store */
    uint64_t seq;               /* (1) the emission counter reaching this takes it out of the context */
    bool armed;                 /* (1) was seen: waits[] holds what each queue had submitted then */
    struct pb_lmem_wait *waits; /* (2) kernels that may still use it */
    uint32_t wait_count;
};
struct pb_lmem {
    pthread_mutex_t lock;     /* everything below, and each queue's lm_pos/local_flushed_B at submission */
    struct kmd_mem *mem;      /* the current store (NULL until a queue needs one) */
    uint32_t per_thread_B;    /* what it holds per thread */
    uint64_t per_tpc_B;       /* SET_SHADER_LOCAL_MEMORY_NON_THROTTLED: bytes per TPC */
    uint32_t gen;             /* +1 per store (logs) */
    struct kmd_mem *sem;      /* system page: the u64 emission counter at 0, released by emissions */
    uint64_t seq_next;        /* the sequence number the next submitted emission gets (from 1) */
    struct pb_queue **queues; /* queues with a compute main channel (their kernels use the store) */
    uint32_t queue_count, queue_cap;
    struct pb_lmem_old *old; /* replaced stores not freed yet */
    uint32_t old_count, old_cap;
    atomic_uint old_pending; /* old_count, read without the lock on submit */
};

struct pb_dev {
    struct hcq_device base;     /* first: core's view */
    struct hcq_backend_ops ops; /* the engine's table with .name = backend name */
    struct kmd *kmd;
    const struct hcq_arch *arch;
    uint32_t debug; /* hcq_debug_flags() at open */
    uint64_t local_window_va, shared_window_va;
    uint32_t stream_flags;           /* kmd flags of stream rings and graph arenas */
    _Atomic int64_t clock_offset_ns; /* GPU timestamp - host clock, once calibrated */
    _Atomic uint32_t pdl_seq;        /* the next QMD latch id (programmatic dependent links) */
    uint32_t pdl_seq0;               /* its random start (pb_device.c) */
    atomic_bool clock_calibrated;
    /* Channels of destroyed queues, kept for the next queue of that engine: creating a
     * channel is slow (GR context: ~1 s on Orin, nvgpu.md §7.1) and RM refused channels
     * added to a TSG after others were freed (H200 run, NV_ERR_INVALID_STATE). */
    pthread_mutex_t pool_lock;
    struct kmd_channel *pool[KMD_ENGINE_KINDS][PB_CHAN_POOL]; /* by the kind asked for */
    uint32_t pool_count[KMD_ENGINE_KINDS];
    struct pb_pool pool_mem; /* buffer memory cache (pb_pool.c) */
    /* k_copy_bytes, loaded at the first device-to-device copy on a compute queue (copies
     * by kernel, pb_build.c); copy_prog_failed: it could not be, use the copy engine. */
    struct hcq_program *copy_prog;
    bool copy_prog_failed;
    struct pb_lmem lmem; /* local memory of every queue */
};

struct pb_chan {
    struct kmd_channel *kc;
    enum kmd_engine engine;
    uint32_t put;          /* next GPFIFO index (CPU's copy of GPPut) */
    uint32_t get_seen;     /* GPGet as last read: behind or equal to the GPU's (pb_chan_kick) */
    volatile uint64_t *tl; /* timeline slot: value @0, timestamp @8 */
    uint64_t tl_va;
    uint64_t tl_last;     /* last value released by work submitted (or being built) */
    uint64_t tl_flushed;  /* last value actually submitted */
    struct gpu_push push; /* scratch pushbuffer being built (CPU memory) */
    uint32_t *scratch;
    bool busy; /* compute: a launch may be running (no WFI since); copy: copies
                  not flushed since the last release */
};

struct pb_queue {
    struct pb_dev *pd;
    struct hcq_queue *q;
    struct pb_chan main; /* compute (copy queues too, on a dGPU), or a copy engine (pb_queue_create) */
    struct pb_chan *aux; /* compute main: copy helper made at the first copy it cannot run */
    /* main has run or been given work the helper has not waited for (pb_build.c pb_handover);
     * set whenever in doubt: creation of the helper, graph replays, failed builds */
    bool main_work;
    struct kmd_mem *sys;    /* PB_SYS_B: timeline slots */
    struct kmd_mem *stream; /* PB_STREAM_B, CPU-mapped, VA < 2^40 */
    struct pb_ring ring;
    /* Local (stack) memory: the device's store (pd->lmem) as this queue's emissions set it
     * (pb_queue.c "Local memory"). A launch needing more than local_per_thread_B emits first. */
    uint32_t local_per_thread_B; /* per thread in the store of its latest emission (0: none) */
    uint32_t local_flushed_B;    /* ... of its latest submitted one: a failed build goes back to it */
    uint32_t *lm_pos;            /* main.push dword offsets of emissions not submitted yet */
    uint32_t lm_pos_n, lm_pos_cap;
    _Atomic uint64_t lm_sub; /* main timeline value of its last submission, set before the doorbell */
    bool lm_registered;      /* on pd->lmem.queues */
    uint8_t *argbuf;         /* kernel arguments with graph variables applied */
    uint32_t argbuf_B;
    /* pb_build's per-command choice, made once in its prepare pass: copy i runs as the
     * copy kernel on the main channel (1) or on a copy engine (0) */
    uint8_t *copy_by_kernel;
    uint32_t copy_by_kernel_n;
    /* pb_build.c pb_qmd_encode_memo: the last launch's QMD description (cbuf0 address 0) and
     * its encoding, reused when the next launch's description is the same */
    bool qmd_memo_valid;
    struct gpu_qmd_desc qmd_memo_desc;
    uint32_t qmd_memo_dw[GPU_QMD_MAX_DW];
};

struct gpu_cubin_image;
struct gpu_cubin_kernel;

struct pb_program {
    struct kmd_mem *code;             /* image (or stub) in device memory */
    struct gpu_cubin_image *img;      /* parsed cubin (NULL for a stub) */
    const struct gpu_cubin_kernel *k; /* the kernel in img (NULL for a stub) */
    struct gpu_qmd_desc desc;         /* QMD template: everything but grid, block and cbuf0 */
    uint32_t local_B;                 /* local memory per thread the kernel needs, with headroom */
    uint32_t cbuf0_B;                 /* bytes of cbuf0 to build per launch (16-byte multiple) */
    uint32_t param_off_B, param_B;    /* kernel parameters in cbuf0 */
    uint32_t kargs_B;                 /* stream bytes per launch: cbuf0 and QMD, 256-aligned */
    bool stub;                        /* the kmd's program stub, no real code */
    bool launched;                    /* recorded into a submission or graph at least once */
};

/* ==== Downcasts ==== */

static inline struct pb_dev *
pb_dev(struct hcq_device *dev)
{
    return hcq_container_of(dev, struct pb_dev, base);
}

static inline struct pb_queue *
pb_queue(struct hcq_queue *q)
{
    return (struct pb_queue *)q->priv;
}

/* ==== pb_device.c ==== */

/* Memory for pushbuffers, cbuf0s and QMDs (stream rings, graph arenas): pd->stream_flags,
 * falling back to CPU-mapped system memory below 2^40. */
HCQ_MUST_CHECK enum hcq_status pb_stream_alloc(struct pb_dev *pd, uint64_t size_B, struct kmd_mem **mem_out);

/* Poll the kmd's error notifiers; marks the device lost (returns DEVICE_LOST) on a fault. */
HCQ_MUST_CHECK enum hcq_status pb_check(struct hcq_device *dev);
/* Allocate memory for engine use (CPU-mapped system memory below 2^40 unless flags say
 * otherwise). */
HCQ_MUST_CHECK enum hcq_status pb_mem_alloc(struct pb_dev *pd, uint64_t size_B, uint32_t kmd_flags,
                                            struct kmd_mem **mem_out);
/* Wait until every queue of the device has completed what was submitted to it. */
HCQ_MUST_CHECK enum hcq_status pb_drain_all(struct pb_dev *pd, uint64_t timeout_ns);
/* Record GPU time - host time from a timestamp the GPU just wrote (first call wins). */
void pb_clock_calibrate(struct pb_dev *pd, uint64_t gpu_ns, uint64_t host_ns);

/* ==== pb_pool.c ==== */
void pb_pool_init(struct pb_pool *p, uint64_t device_mem_B);
/* A block of `kind` holding at least size_B bytes (cached or new); *mem_out its memory. */
HCQ_MUST_CHECK enum hcq_status pb_pool_alloc(struct pb_dev *pd, uint32_t kind, uint64_t size_B,
                                             struct pb_block **out, struct kmd_mem **mem_out);
/* The driver memory behind a block (buf->priv of a pool buffer) and the block's offset in it
 * (a slab's slot: not 0). */
struct kmd_mem *pb_block_mem(struct pb_block *b, uint64_t *offset_out);
/* Keep the block for reuse, or give it back to the driver (past the cap, device lost). */
void pb_pool_free(struct pb_dev *pd, struct pb_block *b);
/* Give every cached block back; returns the bytes. */
uint64_t pb_pool_trim(struct pb_dev *pd);
void pb_pool_stats(struct pb_dev *pd, struct hcq_mem_stats *out);
/* Trim and free the pool's own state (before the kmd is destroyed). */
void pb_pool_destroy(struct pb_dev *pd);

/* ==== pb_program.c ==== */
/* Load pd->copy_prog once (under pool_lock); HCQ_OK when it is there. */
HCQ_MUST_CHECK enum hcq_status pb_copy_prog_get(struct pb_dev *pd);

HCQ_MUST_CHECK enum hcq_status pb_program_load(struct hcq_device *dev, const void *cubin, size_t cubin_B,
                                               const char *name, struct hcq_program *prog);
void pb_program_unload(struct hcq_device *dev, struct hcq_program *prog);

/* ==== pb_queue.c ==== */

HCQ_MUST_CHECK enum hcq_status pb_queue_create(struct hcq_device *dev, struct hcq_queue *q);
void pb_queue_destroy(struct hcq_queue *q);
HCQ_MUST_CHECK enum hcq_status pb_queue_submit(struct hcq_queue *q, const struct hcq_cmdlist *cl,
                                               const uint64_t *vars);
HCQ_MUST_CHECK enum hcq_status pb_queue_idle_wait(struct hcq_queue *q, uint64_t timeout_ns);
/* Append one line per channel (timeline expected vs seen, GPGet/GPPut) to buf. */
void pb_queue_describe(struct pb_queue *pq, char *buf, size_t buf_B);

/* Submit what the channels' scratch pushbuffers hold (copy helper first, then main) and
 * fence the stream ring with the main timeline's last value. */
HCQ_MUST_CHECK enum hcq_status pb_queue_flush(struct pb_queue *pq);
/* Resize ch's scratch pushbuffer to cap_dw dwords (its contents kept). */
HCQ_MUST_CHECK enum hcq_status pb_push_grow(struct pb_chan *ch, uint32_t cap_dw);
/* Wait until chan's timeline >= value. timeout_ns past hang_ns (or an engine-internal wait)
 * marks the device lost with the decoded state; shorter ones return HCQ_ERR_TIMEOUT. */
HCQ_MUST_CHECK enum hcq_status pb_chan_wait(struct pb_queue *pq, struct pb_chan *ch, uint64_t value,
                                            uint64_t timeout_ns);
/* Put one GPFIFO entry (pushbuffer at pb_va, dw_count dwords) on ch and ring the doorbell;
 * waits (bounded) while the ring is full. */
HCQ_MUST_CHECK enum hcq_status pb_chan_kick(struct pb_queue *pq, struct pb_chan *ch, uint64_t pb_va,
                                            uint32_t dw_count);
/* Local memory (pb_queue.c "Local memory"). pb_lmem_emit: make the device's store hold
 * local_B per thread (growing it, grow-only) and append an emission of it to main.push - the
 * caller has the compute engine idle (WFI) and no chain open, and main.push has room for
 * PB_LMEM_EMIT_DW dwords; its final words are written when main.push is submitted
 * (pb_lmem_flush). Afterwards pq->local_per_thread_B >= local_B. */
HCQ_MUST_CHECK enum hcq_status pb_lmem_emit(struct pb_queue *pq, uint32_t local_B);
/* A build failed and main.push was dropped: forget its emissions. */
void pb_lmem_drop(struct pb_queue *pq);
/* Free replaced stores no kernel can use any more (all: every one, at device close). */
void pb_lmem_retire(struct pb_dev *pd, bool all);
/* Add the queue to the device's list (queue creation) / take it off (destroy, once idle). */
HCQ_MUST_CHECK enum hcq_status pb_lmem_register(struct pb_queue *pq);
void pb_lmem_unregister(struct pb_queue *pq);
/* Device close: free the store, the counter page and every replaced store. */
void pb_lmem_fini(struct pb_dev *pd);
/* Log a decoded pushbuffer (HCQ_DEBUG=push_dump, hang reports). */
void pb_dump_push(struct pb_queue *pq, const struct pb_chan *ch, uint64_t va, const uint32_t *dw, uint32_t n,
                  enum hcq_log_level level);
/* Create the helper copy channel of a compute queue if not there yet. */
HCQ_MUST_CHECK enum hcq_status pb_aux_get(struct pb_queue *pq);

/* ==== pb_build.c: cmdlist -> pushbuffers ==== */

/* Graph mode of the builder: per-launch memory (cbuf0 + QMD) and the final pushbuffers come
 * from a persistent arena, and every variable location is recorded as a patch. */
struct pb_patch;
struct pb_build_target {
    uint8_t *arena_map;
    uint64_t arena_va;
    uint64_t arena_B, arena_used_B;
    struct pb_patch *patches;
    uint32_t patch_count, patch_cap;
    uint64_t main_base, aux_base;   /* timeline values when building started */
    uint32_t main_count, aux_count; /* timeline values one replay consumes */
    uint64_t main_pb_va, aux_pb_va; /* the laid-out pushbuffers */
    uint32_t main_pb_dw, aux_pb_dw;
};

/* Translate a command list into pushbuffers and submit them (stream mode), or lay it out
 * into a graph arena recording every variable location (graph mode; nothing submitted). */
HCQ_MUST_CHECK enum hcq_status pb_build(struct pb_queue *pq, const struct hcq_cmdlist *cl,
                                        const uint64_t *vars, struct pb_build_target *graph);

/* Graph patch location kinds. */
enum pb_patch_kind {
    PB_PATCH_ARG32,    /* u32 at map = (u32)vars[var] (kernel argument) */
    PB_PATCH_ARG64,    /* u64 at map = vars[var] */
    PB_PATCH_GRID,     /* QMD dword at map: grid dim `dim` = vars[var]; cbuf0 gridDim too (aux_map) */
    PB_PATCH_SEM,      /* semaphore payload (lo @map, hi @map+4) = vars[var] + add */
    PB_PATCH_SEM_MAIN, /* payload = main timeline base + add */
    PB_PATCH_SEM_AUX,  /* payload = aux timeline base + add */
    PB_PATCH_SEM_NOW,  /* payload = current host-visible value of the signal at sig_slot */
    PB_PATCH_COPY,     /* copy-engine chunk `dim` of copy command `cmd` (offsets/size variables) */
};

struct pb_patch {
    enum pb_patch_kind kind;
    uint32_t var;
    uint32_t dim;
    uint64_t add;
    uint32_t *map;           /* where (dword pointer into the arena; see pb_chan/pb_dw) */
    struct pb_chan *pb_chan; /* while building: the payload is in this channel's scratch */
    uint32_t pb_dw;          /*   at this dword index (resolved to map when laid out) */
    uint32_t *aux_map;       /* GRID: cbuf0 gridDim dword */
    uint32_t qmd_hi, qmd_lo; /* GRID: the QMD's grid field (absolute bits, within one dword) */
    uint32_t qmd_word;       /* GRID: that dword as built (the other bits of it) */
    const volatile uint64_t *sig_slot;
    const struct hcq_cmd *cmd; /* COPY: the graph's copy command (its buffers and variables) */
};

/* ==== pb_graph.c ==== */

HCQ_MUST_CHECK enum hcq_status pb_graph_build(struct hcq_graph *g);
HCQ_MUST_CHECK enum hcq_status pb_graph_replay(struct hcq_graph *g);
void pb_graph_destroy(struct hcq_graph *g);

#endif /* PB_H */
