/* SPDX-License-Identifier: MIT */
/*
 * hcq_priv.h - definitions of the runtime's opaque objects and the backend table
 * (the "queue level" of ARCHITECTURE.md §2). Layer: core. Backends include this.
 *
 * Core records every queue command into a struct hcq_cmdlist, validating arguments once;
 * a backend's submit() turns a command list (plus graph variable values) into work on
 * its device. Graphs are command lists kept for replay; a backend may pre-build them.
 */
#ifndef HCQ_PRIV_H
#define HCQ_PRIV_H

#include "hcq.h"
#include "util_log.h"
#include "hcq_kernel.h"

#include <pthread.h>
#include <stdatomic.h>

/* container_of for the base-as-first-member pattern (STYLE 2.4). */
#define hcq_container_of(ptr, type, member) ((type *)((char *)(ptr)-offsetof(type, member)))

/* ==== Command lists ==== */

enum hcq_cmd_kind {
    HCQ_CMD_LAUNCH,
    HCQ_CMD_COPY,
    HCQ_CMD_SIGNAL,
    HCQ_CMD_WAIT,
    HCQ_CMD_TIMESTAMP,
    HCQ_CMD_BARRIER,
};

struct hcq_cmd {
    enum hcq_cmd_kind kind;
    union {
        struct {
            struct hcq_program *prog;
            uint32_t grid[3];
            uint32_t block[3];
            uint32_t grid_var[3]; /* HCQ_VAR_NONE or variable id */
            uint32_t args_off_B;  /* into hcq_cmdlist.args */
            uint32_t args_B;
            uint32_t patch_first; /* into hcq_cmdlist.patches */
            uint32_t patch_count;
            uint32_t flags; /* HCQ_LAUNCH_* */
        } launch;
        struct {
            struct hcq_buf *dst;
            struct hcq_buf *src;
            uint64_t dst_off_B;
            uint64_t src_off_B;
            uint64_t size_B;      /* with size_var: the largest size a replay may set */
            uint32_t dst_off_var; /* HCQ_VAR_NONE or the variable replacing dst_off_B */
            uint32_t src_off_var;
            uint32_t size_var;
        } copy;
        struct { /* SIGNAL and WAIT: value = (var == NONE ? 0 : vars[var]) + add */
            struct hcq_signal *sig;
            uint32_t var;
            uint64_t add;
        } sig;
        struct {
            struct hcq_signal *sig;
            bool of_launch; /* hcq_queue_timestamp_launch: the previous command is its launch */
        } ts;
    } u;
};

struct hcq_cmdlist {
    struct hcq_cmd *cmds;
    uint32_t count, cap;
    uint8_t *args; /* kernel argument blobs, each 16-byte aligned */
    uint32_t args_B, args_cap_B;
    struct hcq_arg_patch *patches;
    uint32_t patch_count, patch_cap;
    uint32_t var_count; /* variables declared (graphs) */
};

void hcq_cmdlist_init(struct hcq_cmdlist *cl);
void hcq_cmdlist_fini(struct hcq_cmdlist *cl);
void hcq_cmdlist_reset(struct hcq_cmdlist *cl);
HCQ_MUST_CHECK enum hcq_status hcq_cmdlist_push(struct hcq_cmdlist *cl, struct hcq_cmd **cmd_out);
HCQ_MUST_CHECK enum hcq_status hcq_cmdlist_push_args(struct hcq_cmdlist *cl, const void *args,
                                                     uint32_t args_B, uint32_t *off_out);
HCQ_MUST_CHECK enum hcq_status hcq_cmdlist_push_patches(struct hcq_cmdlist *cl, const struct hcq_arg_patch *p,
                                                        uint32_t n, uint32_t *first_out);

/* Resolve a (var, add) value against variable values (NULL when there are none). */
static inline uint64_t
hcq_cmd_value(uint32_t var, uint64_t add, const uint64_t *vars)
{
    return (var == HCQ_VAR_NONE || !vars) ? add : vars[var] + add;
}

/* Argument blob of launch `c` with variables applied, written to `out` (args_B bytes). */
void hcq_cmd_launch_args(const struct hcq_cmdlist *cl, const struct hcq_cmd *c, const uint64_t *vars,
                         void *out);
/* Grid of launch `c` with variables applied. */
void hcq_cmd_launch_grid(const struct hcq_cmd *c, const uint64_t *vars, uint32_t grid_out[3]);

/* Offsets and size of copy `c` with variables applied. */
void hcq_cmd_copy_resolve(const struct hcq_cmd *c, const uint64_t *vars, uint64_t *dst_off_B,
                          uint64_t *src_off_B, uint64_t *size_B);
/* Whether copy `c` takes an offset or its size from a variable. */
static inline bool
hcq_cmd_copy_is_variable(const struct hcq_cmd *c)
{
    return c->u.copy.dst_off_var != HCQ_VAR_NONE || c->u.copy.src_off_var != HCQ_VAR_NONE ||
           c->u.copy.size_var != HCQ_VAR_NONE;
}

/* ==== Objects ==== */

struct hcq_buf {
    struct hcq_device *dev;
    uint64_t size_B;
    uint32_t flags;  /* enum hcq_mem_flags */
    uint64_t va;     /* GPU virtual address */
    void *map;       /* CPU mapping or NULL */
    bool imported;   /* hcq_buf_import_host: memory not owned */
    void *priv;      /* backend data */
    uint64_t handle; /* backend handle (RM hMemory, nvmap handle, CUdeviceptr...) */
};

struct hcq_program {
    struct hcq_device *dev;
    struct hcq_program_info info;
    const struct hcq_kernel_desc *desc; /* built-in kernel (twin, params), NULL for user cubins */
    void *priv;                         /* backend data (CUfunction, code buffer, ...) */
};

/* A signal slot: 16 bytes in GPU-visible host memory (value @0, timestamp @8), as the
 * semaphore release-with-timestamp format writes it (docs/hw/rm.md §5.6). */
struct hcq_signal {
    struct hcq_device *dev;
    volatile uint64_t *slot; /* CPU pointer: slot[0] value, slot[1] timestamp ns */
    uint64_t va;             /* GPU address of slot[0] */
    uint32_t pool_index;
};

struct hcq_queue {
    struct hcq_device *dev;
    enum hcq_queue_kind kind;
    struct hcq_cmdlist pending;    /* recorded, not yet submitted */
    struct hcq_cmdlist *recording; /* non-NULL while a graph is being recorded */
    void *priv;                    /* backend data */
};

struct hcq_graph {
    struct hcq_queue *q;
    struct hcq_cmdlist cl;
    uint64_t *vars; /* cl.var_count values */
    bool grid_vars; /* some launch takes its grid from a variable (checked per replay) */
    bool copy_vars; /* some copy takes an offset or size from a variable (checked too) */
    void *priv;     /* backend-built replay object, NULL: replay = submit */
};

/* ==== Backend table ==== */

struct hcq_backend_ops {
    const char *name;
    /* Free everything the backend owns (objects were freed by core before). Required. */
    void (*device_destroy)(struct hcq_device *dev);
    /* Allocate a buffer, filling va/map/priv/handle of *buf (size/flags/dev set). Required.
     * HCQ_MEM_HOST buffers must be CPU-mapped. */
    enum hcq_status (*buf_alloc)(struct hcq_device *dev, struct hcq_buf *buf);
    void (*buf_free)(struct hcq_device *dev, struct hcq_buf *buf);
    /* (optional) Wrap page-aligned host memory (buf->map preset). NULL: UNSUPPORTED. */
    enum hcq_status (*buf_import_host)(struct hcq_device *dev, struct hcq_buf *buf);
    /* Load a program: from cubin bytes (cubin != NULL) and/or the built-in desc (twin).
     * Fills prog->info (native, regs...) and prog->priv. Required. */
    enum hcq_status (*program_load)(struct hcq_device *dev, const void *cubin, size_t cubin_B,
                                    const char *name, struct hcq_program *prog);
    void (*program_unload)(struct hcq_device *dev, struct hcq_program *prog);
    /* Create/destroy backend state of a queue (q->dev, q->kind set). Required. */
    enum hcq_status (*queue_create)(struct hcq_device *dev, struct hcq_queue *q);
    void (*queue_destroy)(struct hcq_queue *q);
    /* Execute a command list in order after earlier submissions of q. vars holds the
     * list's variable values (NULL when var_count is 0). Must copy what it needs: the
     * list is reset/reused after return. Required. */
    enum hcq_status (*queue_submit)(struct hcq_queue *q, const struct hcq_cmdlist *cl, const uint64_t *vars);
    /* Wait until everything submitted on q so far has completed. Required. */
    enum hcq_status (*queue_idle_wait)(struct hcq_queue *q, uint64_t timeout_ns);
    /* (optional) Pre-build a graph for fast replay; g->priv set. NULL: replay = queue_submit. */
    enum hcq_status (*graph_build)(struct hcq_graph *g);
    /* (optional, with graph_build) Submit one replay with g->vars. */
    enum hcq_status (*graph_replay)(struct hcq_graph *g);
    void (*graph_destroy)(struct hcq_graph *g);
    /* (optional) Make buffer `remote` of another device usable on dev (peer access): fill
     * va/map/priv/handle of alias (dev, size, flags set). HCQ_ERR_UNSUPPORTED: no peer path
     * (core then tries host-memory import). NULL: no peer path. */
    enum hcq_status (*buf_peer_map)(struct hcq_device *dev, struct hcq_buf *remote, struct hcq_buf *alias);
    /* (optional) Poll for asynchronous faults: HCQ_OK or HCQ_ERR_DEVICE_LOST. NULL: OK. */
    enum hcq_status (*check)(struct hcq_device *dev);
    /* (optional) Start all submitted work: ring doorbells the backend deferred (nvgpu's
     * HCQ_NVGPU_DOORBELL_BATCH). Core calls it before every CPU wait and signal read, so
     * no wait can depend on a doorbell that only comes later. NULL: nothing deferred. */
    void (*flush)(struct hcq_device *dev);
    /* (optional) Decoded fault text. NULL: "". */
    void (*fault_report)(struct hcq_device *dev, char *buf, size_t buf_B);
    /* (optional) Fill the pool part of *out (device, host). NULL: no pool. */
    void (*mem_stats)(struct hcq_device *dev, struct hcq_mem_stats *out);
    /* (optional) Free every cached block; returns bytes released. NULL: nothing cached. */
    uint64_t (*mem_trim)(struct hcq_device *dev);
    /* (optional) Device clock in ns comparable to timestamps. NULL: host clock. */
    uint64_t (*device_time_ns)(struct hcq_device *dev);
};

struct hcq_signal_pool;

/* Objects a device frees at close unless the user destroyed them first (the destroy
 * functions untrack them, so nothing is freed twice). Guarded by the device's lock. */
struct hcq_objlist {
    void **items;
    uint32_t count, cap;
};

struct hcq_device {
    const struct hcq_backend_ops *ops;
    struct hcq_device_info info;
    atomic_bool lost;
    char fault[512];      /* first fault's decoded text */
    pthread_mutex_t lock; /* guards the object lists and signal pool */
    struct hcq_signal_pool *sigpool;
    /* hcq_buf_read/write of unmapped buffers: created on first use, kept until close,
     * guarded by staging_lock (one staged transfer at a time per device). */
    pthread_mutex_t staging_lock;
    /* Held while a queue is unregistered and destroyed, and while hcq_device_synchronize or the
     * engine's pb_drain_all waits on a snapshot of the queue list: without it a queue destroyed by
     * another thread was waited on after it was freed (hcq suite queues_made_in_threads:
     * a program destroyed while another thread destroyed its queue). Never held with `lock`
     * taken first. */
    pthread_mutex_t life_lock;
    struct hcq_queue *internal_copy;
    struct hcq_buf *staging;        /* pinned, 2 halves used alternately */
    struct hcq_signal *staging_sig; /* completion of each half's copy */
    uint64_t staging_tick;
    /* live objects, freed at close */
    struct hcq_buf **bufs;
    uint32_t buf_count, buf_cap;
    struct hcq_queue **queues;
    uint32_t queue_count, queue_cap;
    struct hcq_objlist progs;    /* struct hcq_program * */
    struct hcq_objlist sigs;     /* struct hcq_signal * (peer aliases are hcq_peer.c's) */
    struct hcq_objlist graphs;   /* struct hcq_graph * */
    struct hcq_peer_cache *peer; /* other devices' signal pages imported here (hcq_peer.c) */
    void *priv;                  /* backend data */
};

/* Add obj to / remove it from one of dev's object lists (takes dev->lock). */
HCQ_MUST_CHECK enum hcq_status hcq_obj_track(struct hcq_device *dev, struct hcq_objlist *l, void *obj);
void hcq_obj_untrack(struct hcq_device *dev, struct hcq_objlist *l, void *obj);

/* Track a buffer the core built itself (peer aliases) for freeing at close. */
HCQ_MUST_CHECK enum hcq_status hcq_buf_track(struct hcq_device *dev, struct hcq_buf *buf);
/* The pool page (a 4 KiB HCQ_MEM_HOST buffer) holding sig's slot. */
struct hcq_buf *hcq_signal_page_buf(const struct hcq_signal *sig);
/* Signal `sig` of any device as a signal usable by dev's queues (itself when sig->dev == dev;
 * otherwise an alias kept until dev closes). */
HCQ_MUST_CHECK enum hcq_status hcq_signal_peer(struct hcq_device *dev, struct hcq_signal *sig,
                                               struct hcq_signal **alias_out);

/* Backend constructors, called by hcq_device_open with the part after "name:".
 * Each returns HCQ_ERR_NOT_FOUND when its driver/device is absent, HCQ_ERR_UNSUPPORTED
 * when not compiled in. The device struct is allocated by the backend (calloc, then
 * hcq_device_init_base). */
enum hcq_status hcq_cpu_open(const char *arg, struct hcq_device **dev_out);
enum hcq_status hcq_cuda_open(const char *arg, struct hcq_device **dev_out);
enum hcq_status hcq_rm_open(const char *arg, struct hcq_device **dev_out);
enum hcq_status hcq_nvgpu_open(const char *arg, struct hcq_device **dev_out);
enum hcq_status hcq_emu_open(const char *arg, struct hcq_device **dev_out);

/* Initialise the base part of a backend's freshly allocated device. */
HCQ_MUST_CHECK enum hcq_status hcq_device_init_base(struct hcq_device *dev,
                                                    const struct hcq_backend_ops *ops);
/* Mark the device lost with a decoded reason (first reason wins). Returns DEVICE_LOST. */
enum hcq_status hcq_device_mark_lost(struct hcq_device *dev, const char *fmt, ...) HCQ_PRINTF(2, 3);

/* Shared helper: wait until *slot >= value (64-bit), polling dev->ops->check, with timeout. */
HCQ_MUST_CHECK enum hcq_status hcq_wait_value64(struct hcq_device *dev, const volatile uint64_t *slot,
                                                uint64_t value, uint64_t timeout_ns);

#endif /* HCQ_PRIV_H */
