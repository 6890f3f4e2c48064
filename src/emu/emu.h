/* SPDX-License-Identifier: MIT */
/*
 * emu.h - the emulator's framework: an in-process stand-in for the kernel driver and the
 * GPU behind the struct sys seam (ARCHITECTURE §5, STYLE 2.8). Layer: emu.
 *
 * ==== Model ====
 * An emu_dev is one emulated machine: a chip (hcq_arch row), a driver model (RM+UVM for
 * gh100/ga102, nvmap+nvgpu for ga10b) and a GPU model. Its struct sys hands out real
 * file descriptor numbers (reserved on /dev/null, so they never collide with the
 * process's own) whose ioctl/mmap/close go to an emu_fd and its emu_fd_ops.
 *
 * Memory is an emu_bo: host memory backed by a memfd, so a CPU mmap() of it by the driver
 * under test aliases the very pages the GPU model reads (CPU writes through a mapping are
 * seen by the GPU), or wrapped user pages (RM OS descriptors, nvmap from host memory).
 * A GPU address space is an emu_vm: a sorted, page-granular map VA -> (bo, offset).
 * emu_mem_ptr() translates for the GPU model and the CPU twins; unmapped or freed VAs
 * return NULL and the GPU model reports an MMU fault.
 *
 * The GPU model runs one host thread per channel (emu_chan): it polls USERD GPPut and the
 * usermode doorbell word, fetches GPFIFO entries and interprets pushbuffers (host
 * semaphores, copy engine, QMD launches that run the kernel's CPU twin).
 *
 * ==== Plugging in a driver model (nvgpu helper: emu_nvgpu_model_create) ====
 * A model implements emu_model_ops.open (path -> emu_fd) and creates further fds itself
 * with emu_fd_create (AS, TSG, channel, dmabuf fds). It allocates memory with
 * emu_bo_create/emu_bo_wrap, maps GPU VAs with emu_vm_map, and creates channels with
 * emu_chan_create. Every ioctl it implements calls emu_inject_ioctl() first (fault
 * injection) and emu_trace() after (golden traces); every memory allocation calls
 * emu_inject_alloc(). All model entry points run under the device lock (serialised).
 *
 * ==== Programs (what the engine uploads when no cubin exists for the arch) ====
 * (The engine asks the kmd's program_stub hook, which emu_open.c sets to
 * emu_program_stub_write: the format lives here only.)
 * The GPU model identifies the program at a QMD's program address by matching the
 * uploaded bytes against the `.text.<kernel>` sections of the embedded cubins of the
 * chip's SM version, or by an emu program stub: struct emu_program_stub at the program
 * address (EMU_PROGRAM_MAGIC, then the kernel's NUL-terminated name). Either way the
 * kernel's CPU twin (hcq_kernel_find(name)->twin) runs over the grid.
 */
#ifndef EMU_H
#define EMU_H

#include "hcq.h"
#include "gpu_arch.h"
#include "sys.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct emu_dev;
struct emu_fd;
struct emu_bo;
struct emu_vm;
struct emu_chan;

/* ==== Program stub (uploaded through the kmd's program_stub hook when no cubin exists) ==== */

#define EMU_PROGRAM_MAGIC 0x00474F5250554D45ull /* the bytes "EMUPROG\0" read as a little-endian u64 */
#define EMU_PROGRAM_NAME_MAX 120u

struct emu_program_stub {
    uint64_t magic;                  /* EMU_PROGRAM_MAGIC */
    char name[EMU_PROGRAM_NAME_MAX]; /* extern "C" kernel name, NUL-terminated */
};
_Static_assert(sizeof(struct emu_program_stub) == 128, "emu program stub is 128 bytes");

/* Fill a stub for kernel `name` (truncated names are rejected: returns false). */
bool emu_program_stub_init(struct emu_program_stub *stub, const char *name);
/* The engine's hook (kmd.h, struct kmd.program_stub) for a kmd running on the emulated
 * driver: writes the stub for `name` at dst. HCQ_ERR_INVALID when the name does not fit
 * (or dst_B < 128). */
HCQ_MUST_CHECK enum hcq_status emu_program_stub_write(const char *name, void *dst, size_t dst_B);
/* Mark a kmd created on emulated device d's sys table as emulated and install
 * emu_program_stub_write as its program_stub hook and d's fault text as its fault_log hook
 * (emu_open.c; tests that build the kmd themselves). */
struct kmd;
void emu_kmd_adopt(struct kmd *kmd, struct emu_dev *d);

/* ==== Options (device spec "emu:<chip>[,opt[=v]]..." plus env HCQ_EMU_OPTS) ==== */

struct emu_opts {
    char chip[16];           /* "gh100", "ga102", "ga10b" */
    uint32_t fail_alloc;     /* the Nth memory allocation fails (1-based, 0 = never) */
    char fail_ioctl[64];     /* ioctl / class / control name or number that fails */
    uint32_t fail_ioctl_nth; /* ...its Nth occurrence (default 1) */
    char fail_open[64];      /* open() of this path fails with ENOENT */
    uint32_t hang;           /* the Nth QMD launch never completes: its channel stops (1-based) */
    uint32_t drop_doorbell;  /* doorbell rings from the Nth one seen on are ignored (1-based) */
    uint32_t corrupt_qmd;    /* the Nth QMD launch reads a corrupted program address */
    bool trace;              /* record the ioctl trace (emu_dev_trace) */
    uint32_t l4t;            /* ga10b: the L4T ABI the driver model speaks, 35 or 36 (0 = 36) */
    uint64_t nvmap_max;      /* ga10b: largest nvmap buffer CREATE accepts (0 = 4 GiB - 2 MiB) */
    uint64_t vram_mb;        /* gh100/ga102: video memory in MiB (>= 16; 0 = 8 GiB / 4 GiB) */
    bool l2_noncoherent;     /* ga10b: MAP_BUFFER_EX CACHEABLE mappings keep GPU writes in a modelled
                                L2 until an L2_FLUSH_DIRTY method (l2=noncoherent) */
    bool lces_set;           /* gh100/ga102: lces=N given */
    uint32_t lces;           /* ...asynchronous copy engines the engine list shows (0..8; default 4) */
    uint32_t p2p;            /* gh100/ga102: how this GPU reaches the other emulated GPUs of the
                                process (enum emu_p2p; p2p=nvlink|pcie|none, default nvlink) */
};

/* Peer links between emulated RM GPUs (the pair gets the weaker of its two options; GPUs of
 * different chips get none). */
enum emu_p2p { EMU_P2P_NVLINK = 0, EMU_P2P_PCIE = 1, EMU_P2P_NONE = 2 };

/* Parse "gh100,fail_alloc=3,hang" (the part after "emu:") into *opts. */
HCQ_MUST_CHECK enum hcq_status emu_opts_parse(const char *arg, struct emu_opts *opts);

/* ==== Devices ==== */

/* Create an emulated machine for opts->chip; *sys_out is its syscall table (owned by the
 * device). The caller holds one reference; the device also lives while any of its fds or
 * mappings are open, and frees itself when the last one goes (emu_dev_put). */
HCQ_MUST_CHECK enum hcq_status emu_dev_create(const struct emu_opts *opts, struct emu_dev **dev_out);
const struct sys *emu_dev_sys(struct emu_dev *d);
const struct hcq_arch *emu_dev_arch(const struct emu_dev *d);
const struct emu_opts *emu_dev_opts(const struct emu_dev *d);
/* Drop the creator's reference. */
void emu_dev_put(struct emu_dev *d);
/* The ioctl trace recorded so far ("" unless opts.trace), one line per call. Valid until
 * the device is freed; copy it while holding a reference. */
const char *emu_dev_trace(struct emu_dev *d);
/* First fault the GPU model reported on any channel ("" if none). */
void emu_dev_fault(struct emu_dev *d, char *buf, size_t buf_B);
/* RM model, for tests: the NV2080 engine type of the channel group of the channel with
 * work-submit token `token` (GR for a channel without a group; 0 when there is none). */
uint32_t emu_rm_chan_engine_type(struct emu_dev *d, uint32_t token);
/* RM model, for leak tests: live RM objects (clients and everything under them) and UVM
 * external ranges of all the device's UVM files. */
uint32_t emu_rm_live_objects(struct emu_dev *d);
uint32_t emu_rm_uvm_ranges(struct emu_dev *d);
/* QMDs the GPU silently ignored (wrong version/type), for tests and debugging. */
uint32_t emu_dev_ignored_qmds(struct emu_dev *d);
/* Cubin launches stopped because a per-kernel constant bank was not bound (they hang). */
uint32_t emu_dev_unbound_kbank_qmds(struct emu_dev *d);

/* Process-wide counts of live emulator resources, for leak checks in tests. */
struct emu_stats {
    int64_t devs, fds, maps, bos, vms, chans, threads;
    int64_t rm_objs; /* objects alive in the emulated RM drivers (every client) */
};
void emu_stats_get(struct emu_stats *out);

/* ==== Driver model plug-in ==== */

struct emu_model_ops {
    const char *name; /* "rm", "nvgpu" */
    /* open(path): create the emu_fd for a device node, or return -errno (-ENOENT for
     * paths the model does not know). */
    int (*open)(struct emu_dev *d, const char *path, int flags, struct emu_fd **f_out);
    /* Free the model (all fds are closed by then). */
    void (*destroy)(struct emu_dev *d);
};

/* Install the model (once, from its _create function). */
void emu_dev_set_model(struct emu_dev *d, const struct emu_model_ops *ops, void *model);
void *emu_dev_model(struct emu_dev *d);
/* The GR engine facts the GPU model checks local-memory launches against (emu_qmd.c), set by
 * the driver model from the values it reports to the kmd: warps per SM, SMs per TPC and the
 * TPCs present. */
void emu_dev_set_gr(struct emu_dev *d, uint32_t warps_per_sm, uint32_t sm_per_tpc, uint32_t tpc_count);

HCQ_MUST_CHECK enum hcq_status emu_rm_model_create(struct emu_dev *d);
/* Provided by helper "nvgpu" (nvmap + nvgpu model of Jetson Orin). */
HCQ_MUST_CHECK enum hcq_status emu_nvgpu_model_create(struct emu_dev *d);

/* ==== File descriptors ==== */

struct emu_fd_ops {
    const char *name; /* "nvidiactl", "nvidia-uvm", "dmabuf", ... (traces) */
    /* 0 or -errno. Required. */
    int (*ioctl)(struct emu_fd *f, unsigned long request, void *arg);
    /* Which memory backs mmap(len, offset) of this file: *bo_out, *bo_off_out (no reference
     * taken; the framework takes one for the mapping). 0 or -errno. NULL: -ENODEV. */
    int (*mmap)(struct emu_fd *f, uint64_t offset, uint64_t len, int prot, struct emu_bo **bo_out,
                uint64_t *bo_off_out);
    /* Last close: free priv. Optional. */
    void (*release)(struct emu_fd *f);
};

struct emu_fd {
    struct emu_dev *dev;
    int fd; /* the number user code sees */
    const struct emu_fd_ops *ops;
    void *priv;
};

/* New fd (>= 0) or -errno. */
int emu_fd_create(struct emu_dev *d, const struct emu_fd_ops *ops, void *priv, struct emu_fd **f_out);
/* The emu_fd behind `fd` on this device, or NULL. */
struct emu_fd *emu_fd_lookup(struct emu_dev *d, int fd);
/* Close from inside the model (e.g. the fd a failed ioctl created). */
void emu_fd_close(struct emu_fd *f);

/* ==== Memory ==== */

/* memfd-backed memory of size_B (rounded up to 4 KiB), zero-filled. 0 or -errno. */
int emu_bo_create(struct emu_dev *d, uint64_t size_B, struct emu_bo **bo_out);
/* Wrap existing user pages (not owned). 0 or -errno (-EFAULT: not mapped). */
int emu_bo_wrap(struct emu_dev *d, void *host, uint64_t size_B, struct emu_bo **bo_out);
void emu_bo_ref(struct emu_bo *bo);
void emu_bo_unref(struct emu_bo *bo);
uint64_t emu_bo_size(const struct emu_bo *bo);
/* Host pointer of byte 0 (what the GPU sees). */
void *emu_bo_host(const struct emu_bo *bo);
bool emu_bo_is_wrapped(const struct emu_bo *bo);

/* ==== GPU address spaces ==== */

#define EMU_PAGE_B 4096ull

/* An address space of va_bits (40 on Tegra, 49+ on RM). */
int emu_vm_create(struct emu_dev *d, uint32_t va_bits, struct emu_vm **vm_out);
void emu_vm_destroy(struct emu_vm *vm);
/* Map [va, va+size_B) -> bo[bo_off...]. Page-aligned; -EINVAL misaligned/out of range,
 * -EEXIST overlap. Takes a bo reference. */
int emu_vm_map(struct emu_vm *vm, uint64_t va, uint64_t size_B, struct emu_bo *bo, uint64_t bo_off);
/* Remove the mapping that starts at va (size_B 0 = whole mapping, else must match).
 * -ENOENT when none. */
int emu_vm_unmap(struct emu_vm *vm, uint64_t va, uint64_t size_B);
/* True when no byte of [va, va+size_B) is mapped. */
bool emu_vm_range_free(struct emu_vm *vm, uint64_t va, uint64_t size_B);
/* Lowest free VA in [lo, hi) aligned to align_B for size_B, or 0. */
uint64_t emu_vm_find_free(struct emu_vm *vm, uint64_t size_B, uint64_t align_B, uint64_t lo, uint64_t hi);
/* Host pointer for [va, va+size_B) when all of it lies in one mapping, else NULL. */
void *emu_mem_ptr(struct emu_vm *vm, uint64_t va, uint64_t size_B);
/* Non-coherent GPU L2 model (emu:ga10b,l2=noncoherent): the mapping that starts at va
 * keeps the GPU's writes in a modelled L2, invisible to the CPU's view of the buffer,
 * until emu_vm_l2_flush (the L2_FLUSH_DIRTY host method) or the unmap writes them back.
 * Lines are host pages in the model. -ENOENT no such mapping, -EINVAL not memfd-backed,
 * -errno from mmap. */
int emu_vm_set_l2(struct emu_vm *vm, uint64_t va);
/* Write back every dirty modelled-L2 page of vm and drop them (the L2 then holds no lines).
 * Caller holds the vm read lock (the channel thread does while running methods). */
void emu_vm_l2_flush_locked(struct emu_vm *vm);
uint32_t emu_vm_count(struct emu_vm *vm);

/* ==== GPU channels ==== */

/* Xid-style error codes a channel error reports (values as nvidia.ko's Xids). */
enum emu_chan_error {
    EMU_CHAN_ERR_NONE = 0,
    EMU_CHAN_ERR_GR_EXCEPTION = 13, /* Graphics engine exception (bad method/QMD/program) */
    EMU_CHAN_ERR_MMU_FAULT = 31,    /* GPU memory page fault */
    EMU_CHAN_ERR_PBDMA = 32,        /* invalid or corrupted push buffer stream */
};

struct emu_chan_desc {
    struct emu_vm *vm; /* the channel's address space */
    /* GPFIFO ring: either physical (ring_bo, as nvgpu maps it for the channel) or by VA in vm. */
    struct emu_bo *ring_bo;
    uint64_t ring_off;
    uint64_t ring_va;
    uint32_t entries;        /* power of two */
    struct emu_bo *userd_bo; /* USERD block (GPGet @0x88, GPPut @0x8C) */
    uint64_t userd_off;
    struct emu_bo *doorbell_bo; /* usermode page; doorbell word at doorbell_off */
    uint64_t doorbell_off;
    uint32_t token;      /* work-submit token */
    uint32_t gpfifo_cls; /* host class: semaphore address width */
    /* Called once on the first error, from the channel thread (write the notifier). */
    void (*on_error)(struct emu_chan *ch, enum emu_chan_error err, const char *why, void *user);
    void *user;
};

int emu_chan_create(struct emu_dev *d, const struct emu_chan_desc *desc, struct emu_chan **ch_out);
/* Stop the thread and free (drops the bo references). */
void emu_chan_destroy(struct emu_chan *ch);
/* Engine object classes SET_OBJECT may bind (allocated on the channel). */
void emu_chan_add_class(struct emu_chan *ch, uint32_t cls);
/* Runnable once its TSG is scheduled; before that GPFIFO entries wait. */
void emu_chan_set_runnable(struct emu_chan *ch, bool runnable);
uint32_t emu_chan_token(const struct emu_chan *ch);
/* The channel's error (EMU_CHAN_ERR_NONE while healthy), why written to buf. */
enum emu_chan_error emu_chan_error_get(struct emu_chan *ch, char *buf, size_t buf_B);

/* ==== Fault injection and traces (called by models) ==== */

/* True when this memory allocation must fail (counts allocations). */
bool emu_inject_alloc(struct emu_dev *d);
/* True when the call named `name` (escape/ioctl name, class or control name) or numbered
 * `code` must fail. */
bool emu_inject_ioctl(struct emu_dev *d, const char *name, uint64_t code);
/* Append one line to the trace (no-op unless tracing). */
void emu_trace(struct emu_dev *d, const char *fmt, ...) HCQ_PRINTF(2, 3);

#endif /* EMU_H */
