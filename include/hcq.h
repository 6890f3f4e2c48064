/* SPDX-License-Identifier: MIT */
/*
 * hcq.h - the nvhcq runtime: drive NVIDIA GPUs through the kernel driver's own
 * interfaces (rm, nvgpu), or through the CUDA driver API (cuda), or on the host (cpu).
 *
 * ==== Model ====
 *
 * Device.  One opened GPU (or the host), chosen by a spec string:
 *   "auto"        first that opens of nvgpu:0, rm:0, cuda:0, cpu
 *   "cpu"         C reference implementations on host threads
 *   "cuda:N"      CUDA driver API (libcuda.so.1 via dlopen), the reference to beat
 *   "rm:N"        desktop/datacenter kernel driver (/dev/nvidiactl, /dev/nvidia-uvm)
 *   "nvgpu:0"     Jetson Orin kernel driver (/dev/nvmap, /dev/nvgpu/igpu0/ctrl)
 *   "emu:gh100", "emu:ga102", "emu:ga10b"
 *                 the rm / nvgpu backends on an emulated kernel driver and GPU
 * The environment variable HCQ_DEV overrides "auto" (and only "auto").
 *
 * Memory.  A buffer has a GPU virtual address (va) usable in kernel arguments and,
 * when it is host memory or the backend can map it, a CPU pointer (map).  HCQ_MEM_HOST
 * buffers live in system memory, are always CPU-mapped and GPU-visible (pinned).
 * Device buffers may be CPU-mapped (HCQ_MEM_MAPPABLE) where the backend allows (always
 * on Tegra's unified memory).  hcq_buf_write/read copy synchronously and are not
 * ordered with queued GPU work: synchronize first.
 *
 * Queues.  Commands (launch, copy, signal, wait, timestamp, barrier) are recorded on a
 * queue and sent to the device by hcq_queue_submit().  Commands of one queue execute in
 * order and each sees the memory effects of the ones before it (a launch does not start
 * before the previous launch or copy on the same queue has finished).  Separate queues
 * run concurrently; order them with signals.
 *
 * Signals.  A 64-bit timeline in GPU-visible host memory.  Queues set it (signal) and
 * wait until it is >= a value (wait).  The host reads it, sets it and waits on it with
 * a timeout.  Values are full 64-bit: crossing 2^32 is supported on every backend.
 * A timestamp command writes the device clock (ns) next to the value.
 *
 * Graphs.  hcq_graph_begin(q) starts recording the commands of q into a graph instead
 * of the queue; hcq_graph_end() finishes it.  Variables declared while recording can
 * stand for kernel-argument fields, grid sizes and signal/wait values; replay sets
 * them and submits the whole graph (one GPFIFO entry / one doorbell on rm and nvgpu,
 * a CUDA graph launch on cuda).
 *
 * Errors.  Every fallible call returns enum hcq_status; hcq_last_error() gives the
 * message of the last failure on this thread.  Every wait takes a timeout.  A device
 * fault (MMU fault, channel error, hang) makes waits return HCQ_ERR_DEVICE_LOST, the
 * device stays lost, hcq_device_fault_report() decodes what happened; closing it and
 * opening a new one works.
 */
#ifndef HCQ_H
#define HCQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#define HCQ_MUST_CHECK __attribute__((warn_unused_result))
#define HCQ_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define HCQ_MUST_CHECK
#define HCQ_PRINTF(f, a)
#endif

/* ==== Status, errors, logging ==== */

enum hcq_status {
    HCQ_OK = 0,
    HCQ_ERR_NOMEM,       /* host or device memory exhausted */
    HCQ_ERR_INVALID,     /* bad argument, shape or state (caller's mistake) */
    HCQ_ERR_UNSUPPORTED, /* not available on this backend / build / hardware */
    HCQ_ERR_TIMEOUT,     /* a wait ran past its timeout; the device may still be fine */
    HCQ_ERR_DRIVER,      /* the kernel driver or CUDA refused a call */
    HCQ_ERR_DEVICE_LOST, /* the device faulted or hung; it stays lost */
    HCQ_ERR_NOT_FOUND,   /* no such device, kernel, file or key */
    HCQ_ERR_IO,          /* a file or OS operation failed */
    HCQ_ERR_FORMAT,      /* malformed input file (GGUF, cubin, ...) */
    HCQ_STATUS_COUNT
};

/* Name of a status ("HCQ_ERR_TIMEOUT"); never NULL. */
const char *hcq_status_str(enum hcq_status status);

/* Message of the last failure on the calling thread ("" if none). */
const char *hcq_last_error(void);

enum hcq_log_level { HCQ_LOG_LEVEL_ERROR, HCQ_LOG_LEVEL_WARN, HCQ_LOG_LEVEL_INFO, HCQ_LOG_LEVEL_DEBUG };
typedef void (*hcq_log_fn)(enum hcq_log_level level, const char *msg, void *user_data);

/* Redirect library messages (default: stderr, level <= HCQ_LOG, default WARN). NULL restores. */
void hcq_log_set(hcq_log_fn fn, void *user_data);
void hcq_log_level_set(enum hcq_log_level max_level);
/* Who prints an error: by default the library logs each error it records for
 * hcq_last_error() (level ERROR). A program that prints hcq_last_error() itself passes true
 * so each error appears once: errors recorded on the calling thread then log at DEBUG
 * (HCQ_LOG=debug still shows them). Other threads (queue workers) are unaffected. */
void hcq_log_errors_owned_by_caller(bool owned);

/* ==== Devices ==== */

struct hcq_device;
struct hcq_buf;
struct hcq_program;
struct hcq_queue;
struct hcq_signal;
struct hcq_graph;

struct hcq_device_info {
    char name[96];          /* "NVIDIA H100 80GB HBM3", "cpu (x86_64, 2 threads)" */
    char backend[16];       /* "cpu", "cuda", "rm", "nvgpu", "emu" */
    char spec[32];          /* the spec that opens this device again, "rm:0" */
    char arch[16];          /* "sm_90", "sm_87", "host" */
    uint32_t sm_version;    /* 90 for sm_90; 0 on cpu */
    uint32_t sm_count;      /* SMs (cpu: worker threads) */
    uint64_t mem_B;         /* device memory (cpu: host RAM) */
    char driver[64];        /* kernel driver / CUDA version string */
    uint32_t compute_class; /* NVIDIA compute class (0xCBC0 ...), 0 if not applicable */
    uint32_t copy_class;    /* NVIDIA copy class (0xC8B5 ...), 0 if not applicable */
    bool unified_memory;    /* device memory is host memory (Tegra, cpu) */
    bool has_kernels;       /* the built-in kernel library can run here */
    bool emulated;          /* emu:* device: functional model, timings mean nothing */
};

/* Open a device by spec (see the model above). */
HCQ_MUST_CHECK enum hcq_status hcq_device_open(const char *spec, struct hcq_device **dev_out);
/* The device "auto" stands for when the environment names one (HCQ_DEV, not "auto"), else NULL
 * (then "auto" tries the backends in order). */
const char *hcq_device_env_spec(void);
/* Close; waits (bounded) for outstanding work, frees everything still owned. NULL is a no-op. */
void hcq_device_close(struct hcq_device *dev);
HCQ_MUST_CHECK enum hcq_status hcq_device_info(struct hcq_device *dev, struct hcq_device_info *info_out);
/* Wait until every submitted command of every queue of dev has completed. */
HCQ_MUST_CHECK enum hcq_status hcq_device_synchronize(struct hcq_device *dev, uint64_t timeout_ns);
/* HCQ_OK, or HCQ_ERR_DEVICE_LOST once the device has faulted. Cheap; polls the driver. */
HCQ_MUST_CHECK enum hcq_status hcq_device_check(struct hcq_device *dev);
/* Decoded fault state (MMU fault, channel error, timeout) as text; "" if none. */
void hcq_device_fault_report(struct hcq_device *dev, char *buf, size_t buf_B);

/* Memory accounting of a device (hcq_device_mem_stats). rm/nvgpu/emu keep freed buffers in
 * a caching pool (size classes: powers of two up to 1 MiB, quarter octaves above) and hand
 * them to the next allocation of the same kind and class, as CUDA's stream-ordered
 * allocator does; the pool gives cached blocks back when an allocation runs out of memory,
 * past its cap (HCQ_POOL_MAX_MB, default 1/8 of device memory, 1 GiB of host memory), on
 * hcq_device_mem_trim and at close. HCQ_POOL=0 turns caching off. Blocks of classes up to
 * 1 MiB are slots of slabs (one driver allocation of max(2 MiB, 4 slots) per slab; a slab
 * goes back when all its slots are free); HCQ_POOL_SLAB=0 makes them whole blocks. Other
 * backends report only the live buffers. */
struct hcq_mem_pool_stats {
    uint64_t reserved_B; /* held from the driver: live blocks (class sizes) + cached */
    uint64_t cached_B;   /* freed blocks kept for reuse, free slab slots included */
    uint64_t peak_reserved_B;
    uint64_t cap_B;         /* most bytes the pool caches (0: caching off) */
    uint64_t hits;          /* allocations served from the cache or a slab's free slot */
    uint64_t driver_allocs; /* allocations that went to the kernel driver */
    uint64_t driver_frees;  /* blocks given back to the kernel driver */
    uint64_t trims;         /* times the cache was emptied (trim, OOM retry, close) */
    uint32_t cached_blocks; /* cached whole blocks and empty slabs */
};
struct hcq_mem_stats {
    uint64_t live_buffers;   /* hcq_buf objects alive */
    uint64_t in_use_B;       /* their sizes as requested */
    uint64_t device_total_B; /* device memory (hcq_device_info.mem_B) */
    uint64_t device_free_B;  /* device_total_B - device.reserved_B: what this device has not
                                taken (other processes and the runtime's rings not counted) */
    struct hcq_mem_pool_stats device, host;
    uint64_t driver_free_B;  /* free device memory as the kernel driver counts it, every process
                                and every allocation included (rm and the emulated GPUs: RM's heap
                                free; cuda: cuMemGetInfo); 0 where the backend cannot ask (cpu,
                                nvgpu) */
    uint64_t driver_objects; /* kernel-driver objects this device holds: on rm (and the emulated
                                discrete GPUs) the RM objects of its client - device, VA space,
                                channels, memory - counted at each allocation and free; 0 where
                                the backend does not count them (cpu, cuda, nvgpu) */
};
HCQ_MUST_CHECK enum hcq_status hcq_device_mem_stats(struct hcq_device *dev, struct hcq_mem_stats *out);
/* Give every cached block and empty slab back to the driver; returns the bytes released. */
uint64_t hcq_device_mem_trim(struct hcq_device *dev);

/* Backends compiled into this library, for `nvhcq info`: name i, or NULL past the end. */
const char *hcq_backend_name(int i);
/* Whether backend `name` can open device `index` here (no side effects beyond probing).
 * Returns HCQ_OK, HCQ_ERR_NOT_FOUND (no such device) or HCQ_ERR_UNSUPPORTED (not built). */
HCQ_MUST_CHECK enum hcq_status hcq_backend_probe(const char *name, int index);

/* Arch names for which the built-in kernel library has cubins ("sm_87,sm_90"), "" if none. */
const char *hcq_kernels_cubin_archs(void);

/* ==== Memory ==== */

enum hcq_mem_flags {
    HCQ_MEM_DEVICE = 0,        /* device memory (VRAM) */
    HCQ_MEM_HOST = 1 << 0,     /* pinned system memory, CPU-mapped, GPU-visible */
    HCQ_MEM_MAPPABLE = 1 << 1, /* device memory that must be CPU-mapped (else fail) */
};

HCQ_MUST_CHECK enum hcq_status hcq_buf_alloc(struct hcq_device *dev, uint64_t size_B, uint32_t flags,
                                             struct hcq_buf **buf_out);
/* Free a buffer. The caller ensures no queued command still uses it. NULL is a no-op. */
void hcq_buf_free(struct hcq_buf *buf);
/* Make existing page-aligned host memory GPU-visible (no copy). The memory must outlive buf. */
HCQ_MUST_CHECK enum hcq_status hcq_buf_import_host(struct hcq_device *dev, void *ptr, uint64_t size_B,
                                                   struct hcq_buf **buf_out);
/* Several devices in one process: make buffer `buf` of another device usable on `dev`
 * (copies and kernels of dev may use the returned alias; its va is dev's address for the
 * memory). Host memory (HCQ_MEM_HOST, imported, or a unified-memory device's) maps into any
 * device; another GPU's device memory needs peer access (cuda:N pairs that support it).
 * HCQ_ERR_UNSUPPORTED when dev cannot reach the memory: stage through host memory instead.
 * Free the alias (hcq_buf_free) before buf; an alias of host memory covers whole pages
 * (hcq_buf_size may be rounded up). Queues of one device may also wait on and signal
 * another device's signals (hcq_queue_wait/signal): close the waiting device first. */
HCQ_MUST_CHECK enum hcq_status hcq_buf_peer_map(struct hcq_device *dev, struct hcq_buf *buf,
                                                struct hcq_buf **alias_out);
uint64_t hcq_buf_va(const struct hcq_buf *buf);   /* GPU virtual address */
void *hcq_buf_map(const struct hcq_buf *buf);     /* CPU pointer, or NULL if not mapped */
uint64_t hcq_buf_size(const struct hcq_buf *buf); /* bytes */
/* Synchronous host <-> buffer copies (through a staging copy when the buffer is not mapped). */
HCQ_MUST_CHECK enum hcq_status hcq_buf_write(struct hcq_buf *buf, uint64_t offset_B, const void *src,
                                             uint64_t size_B);
HCQ_MUST_CHECK enum hcq_status hcq_buf_read(struct hcq_buf *buf, uint64_t offset_B, void *dst,
                                            uint64_t size_B);

/* ==== Programs ==== */

struct hcq_program_info {
    char name[64];
    uint32_t params_B;    /* size of the kernel's parameter struct */
    uint32_t regs;        /* registers per thread (0 on cpu) */
    uint32_t shared_B;    /* static shared memory per block */
    uint32_t local_B;     /* local (stack) memory per thread */
    uint32_t max_threads; /* max threads per block */
    uint32_t sm_count;    /* SMs of its device (persistent kernels size their grid by it) */
    bool native;          /* runs real GPU code (false: CPU twin) */
};

/* Load a kernel of the built-in library by name ("k_fill_f32"): the cubin for the device's
 * arch, or the CPU twin on cpu/emu devices without one. */
HCQ_MUST_CHECK enum hcq_status hcq_program_load(struct hcq_device *dev, const char *name,
                                                struct hcq_program **prog_out);
/* Load kernel `name` from a user cubin (ELF from nvcc -cubin). */
HCQ_MUST_CHECK enum hcq_status hcq_program_load_cubin(struct hcq_device *dev, const void *cubin,
                                                      size_t cubin_B, const char *name,
                                                      struct hcq_program **prog_out);
void hcq_program_destroy(struct hcq_program *prog);
HCQ_MUST_CHECK enum hcq_status hcq_program_info(const struct hcq_program *prog,
                                                struct hcq_program_info *info_out);

/* ==== Signals ==== */

HCQ_MUST_CHECK enum hcq_status hcq_signal_create(struct hcq_device *dev, uint64_t initial,
                                                 struct hcq_signal **sig_out);
void hcq_signal_destroy(struct hcq_signal *sig);
uint64_t hcq_signal_value(const struct hcq_signal *sig);
void hcq_signal_set(struct hcq_signal *sig, uint64_t value); /* host write */
/* Wait until value >= `value`. HCQ_ERR_TIMEOUT after timeout_ns, HCQ_ERR_DEVICE_LOST on fault. */
HCQ_MUST_CHECK enum hcq_status hcq_signal_wait(struct hcq_signal *sig, uint64_t value, uint64_t timeout_ns);
/* Device time (ns) written by the last timestamp command on this signal. */
uint64_t hcq_signal_timestamp_ns(const struct hcq_signal *sig);
uint64_t hcq_signal_va(const struct hcq_signal *sig); /* GPU address of the 64-bit value */

/* ==== Queues ==== */

enum hcq_queue_kind { HCQ_QUEUE_COMPUTE, HCQ_QUEUE_COPY };

/* Variable id in a graph being recorded; HCQ_VAR_NONE means "a constant". */
#define HCQ_VAR_NONE UINT32_MAX

/* A kernel-argument field replaced by a graph variable at replay: size_B is 4 or 8. */
struct hcq_arg_patch {
    uint32_t var;
    uint32_t offset_B;
    uint32_t size_B;
};

struct hcq_launch {
    struct hcq_program *prog;
    uint32_t grid[3];
    uint32_t block[3];
    const void *args;                    /* the kernel's parameter struct, copied at record time */
    uint32_t args_B;                     /* must equal the program's params_B */
    uint32_t grid_var[3];                /* graphs only: when grid[i] == 0, the variable giving grid[i] */
    const struct hcq_arg_patch *patches; /* graphs only */
    uint32_t patch_count;
    uint32_t flags; /* HCQ_LAUNCH_* */
};

/* hcq_launch.flags. HCQ_LAUNCH_DEP_WAIT: the kernel orders itself after the launch recorded
 * before it on the queue by executing griddepcontrol.wait (PTX, sm_90+) before it reads or
 * writes anything that launch (or an earlier one) may still touch; before that wait it may
 * only read memory no running kernel writes. The backend may then start its CTAs once the
 * previous grid's last CTA has launched (Hopper QMD latches on rm, programmatic stream
 * serialization on cuda) instead of when that grid completes; elsewhere the flag changes
 * nothing. A kernel launched with the flag that does not wait is a data race. On rm the
 * previous grid then ends with a memory barrier, so its writes are in L2 when the wait
 * returns (without it, H100 gave wrong results: docs/engine.md §2.1). */
#define HCQ_LAUNCH_DEP_WAIT (1u << 0)

HCQ_MUST_CHECK enum hcq_status hcq_queue_create(struct hcq_device *dev, enum hcq_queue_kind kind,
                                                struct hcq_queue **q_out);
/* Destroy; waits (bounded) for the queue's submitted work. NULL is a no-op. */
void hcq_queue_destroy(struct hcq_queue *q);

/* Record a kernel launch (compute queues). Checks grid/block limits and args_B. */
HCQ_MUST_CHECK enum hcq_status hcq_queue_launch(struct hcq_queue *q, struct hcq_program *prog,
                                                const uint32_t grid[3], const uint32_t block[3],
                                                const void *args, uint32_t args_B);
HCQ_MUST_CHECK enum hcq_status hcq_queue_launch_ex(struct hcq_queue *q, const struct hcq_launch *l);
/* Record a copy of size_B bytes between buffers (any queue kind). Ranges must be in bounds. */
HCQ_MUST_CHECK enum hcq_status hcq_queue_copy(struct hcq_queue *q, struct hcq_buf *dst, uint64_t dst_off_B,
                                              struct hcq_buf *src, uint64_t src_off_B, uint64_t size_B);
/* A copy whose offsets and size may be graph variables (each HCQ_VAR_NONE for a constant;
 * variables only while recording a graph). size_B is the recorded size and, with size_var,
 * the largest size a replay may set. A replay checks the values against the buffers and
 * refuses out-of-bounds ones (HCQ_ERR_INVALID, nothing submitted). Changing the offsets
 * moves the source/destination anywhere inside the recorded buffers. */
struct hcq_copy {
    struct hcq_buf *dst;
    uint64_t dst_off_B;
    struct hcq_buf *src;
    uint64_t src_off_B;
    uint64_t size_B;
    uint32_t dst_off_var;
    uint32_t src_off_var;
    uint32_t size_var;
};
HCQ_MUST_CHECK enum hcq_status hcq_queue_copy_ex(struct hcq_queue *q, const struct hcq_copy *c);
/* Record: set sig to value once everything before it on q has completed. */
HCQ_MUST_CHECK enum hcq_status hcq_queue_signal(struct hcq_queue *q, struct hcq_signal *sig, uint64_t value);
/* Record: do not start later commands until sig >= value. */
HCQ_MUST_CHECK enum hcq_status hcq_queue_wait(struct hcq_queue *q, struct hcq_signal *sig, uint64_t value);
/* Graph forms: the value is variable `var` plus `add`. */
HCQ_MUST_CHECK enum hcq_status hcq_queue_signal_var(struct hcq_queue *q, struct hcq_signal *sig, uint32_t var,
                                                    uint64_t add);
HCQ_MUST_CHECK enum hcq_status hcq_queue_wait_var(struct hcq_queue *q, struct hcq_signal *sig, uint32_t var,
                                                  uint64_t add);
/* Record: write the device time into sig's timestamp once earlier commands completed. */
HCQ_MUST_CHECK enum hcq_status hcq_queue_timestamp(struct hcq_queue *q, struct hcq_signal *sig);
/* Record: write the device time into sig's timestamp when the launch recorded just before
 * (the previous command; else HCQ_ERR_INVALID) completes; sig's value is left as it is. Unlike
 * hcq_queue_timestamp it waits for nothing else, so it profiles launches as they run: on rm
 * (stream mode) the grid's own QMD release writes it and the launch stays chained to its
 * neighbours, programmatic dependent launches included; elsewhere, and in graphs, it is
 * recorded as hcq_queue_timestamp. */
HCQ_MUST_CHECK enum hcq_status hcq_queue_timestamp_launch(struct hcq_queue *q, struct hcq_signal *sig);
/* Record: full memory barrier (earlier writes visible to later commands and the host). */
HCQ_MUST_CHECK enum hcq_status hcq_queue_barrier(struct hcq_queue *q);
/* Send everything recorded since the last submit. No-op when nothing is recorded. */
HCQ_MUST_CHECK enum hcq_status hcq_queue_submit(struct hcq_queue *q);
/* Submit, then wait until this queue is idle. */
HCQ_MUST_CHECK enum hcq_status hcq_queue_finish(struct hcq_queue *q, uint64_t timeout_ns);

/* ==== Graphs ==== */

/* Start recording q's commands into a graph (nothing recorded may be pending). */
HCQ_MUST_CHECK enum hcq_status hcq_graph_begin(struct hcq_queue *q);
/* Declare a variable (initial value 0) while recording. */
HCQ_MUST_CHECK enum hcq_status hcq_graph_var(struct hcq_queue *q, uint32_t *var_out);
/* Finish recording and build the graph for replay on q. */
HCQ_MUST_CHECK enum hcq_status hcq_graph_end(struct hcq_queue *q, struct hcq_graph **graph_out);
HCQ_MUST_CHECK enum hcq_status hcq_graph_set(struct hcq_graph *g, uint32_t var, uint64_t value);
/* Submit one replay with the current variable values. The caller orders replays with
 * signals (e.g. a wait on the previous replay's signal value, as a variable). */
HCQ_MUST_CHECK enum hcq_status hcq_graph_replay(struct hcq_graph *g);
uint32_t hcq_graph_command_count(const struct hcq_graph *g);
/* A graph uses its queue until destroyed: destroy it before hcq_queue_destroy of that queue
 * (or leave both to hcq_device_close, which frees graphs first). */
void hcq_graph_destroy(struct hcq_graph *g);

/* ==== Misc ==== */

/* Monotonic host clock in ns. */
uint64_t hcq_time_ns(void);

#define HCQ_TIMEOUT_DEFAULT_NS (10ull * 1000 * 1000 * 1000)

#ifdef __cplusplus
}
#endif
#endif /* HCQ_H */
