/* SPDX-License-Identifier: MIT */
/*
 * emu_priv.h - internals shared by the emulator's own files (device, memory, GPU model).
 * Driver models use emu.h only. Layer: emu.
 */
#ifndef EMU_PRIV_H
#define EMU_PRIV_H

#include "emu.h"
#include "util_log.h"

#include <pthread.h>
#include <stdatomic.h>

/* A CPU mapping handed out by the emulated mmap (tracked for leak checks and munmap). */
struct emu_map {
    uintptr_t addr;
    size_t len;
    struct emu_bo *bo;
};

struct emu_bo {
    struct emu_dev *dev;
    atomic_int refs;
    uint64_t size_B;
    int memfd;  /* -1 for wrapped user pages */
    void *host; /* GPU-side view: our own mapping of memfd, or the user pages */
};

struct emu_vm_range {
    uint64_t va, size_B;
    struct emu_bo *bo;
    uint64_t bo_off;
    /* Non-coherent GPU L2 model (emu_vm_set_l2): a MAP_PRIVATE view of the bo's memfd.
     * GPU accesses go through it; pages the GPU has not written read through to memory,
     * pages it wrote are private copies (dirty L2 lines) the CPU does not see until
     * emu_vm_l2_flush writes them back. NULL: the GPU sees memory directly. */
    uint8_t *l2;
};

struct emu_vm {
    struct emu_dev *dev;
    uint32_t va_bits;
    pthread_rwlock_t lock;  /* readers: GPU model lookups; writers: map/unmap */
    struct emu_vm_range *r; /* sorted by va, non-overlapping */
    uint32_t count, cap;
    /* Host views of accesses that span several VA-adjacent mappings (e.g. nvgpu spans of
     * several nvmap buffers): the pieces' memfds mapped back to back. Dropped on unmap. */
    pthread_mutex_t alias_lock;
    struct emu_vm_alias *aliases;
};

struct emu_dev {
    struct sys sys; /* ctx = this */
    struct emu_opts opts;
    const struct hcq_arch *arch;
    pthread_mutex_t lock; /* serialises every syscall and model entry point */
    int refs;             /* creator + open fds + live CPU mappings */

    struct emu_fd **fds;
    uint32_t fd_count, fd_cap;
    struct emu_map *maps;
    uint32_t map_count, map_cap;

    const struct emu_model_ops *model_ops;
    void *model;

    /* fault injection */
    uint32_t alloc_seen;
    uint32_t ioctl_match_seen;
    atomic_uint qmd_seen;
    uint32_t doorbells_seen; /* guarded by gpu_lock */

    /* trace */
    char *trace;
    size_t trace_B, trace_cap;

    /* GPU model: channels (doorbell attribution), faults, program cache */
    pthread_mutex_t gpu_lock;
    struct emu_chan **chans;
    uint32_t chan_count, chan_cap;
    char fault[256];
    atomic_uint ignored_qmds;
    atomic_uint unbound_kbank_qmds; /* launches stopped for an unbound per-kernel bank */
    struct emu_prog_cache *progs;

    /* GR context state shared by every compute channel: the kmds put all of them into one
     * TSG with one subcontext (kmd/rm rm_chan.c, kmd/nvgpu nvgpu_chan.c), so the context, and
     * with it the local-memory store that SET_SHADER_LOCAL_MEMORY* programs, is one per device
     * here; the last values any channel executed hold (emu_qmd.c). Under gr_lock. */
    pthread_mutex_t gr_lock;
    uint64_t gr_lmem_va;        /* SET_SHADER_LOCAL_MEMORY_A/B: backing store VA (0: never set) */
    uint64_t gr_lmem_per_tpc_B; /* SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A/B: bytes per TPC */
    /* the chip's GR facts launches are checked against (emu_dev_set_gr; 0: not given) */
    uint32_t gr_warps_per_sm, gr_sm_per_tpc, gr_tpc_count;
};

/* Device lock helpers (models are entered with it held). */
void emu_dev_lock(struct emu_dev *d);
void emu_dev_unlock(struct emu_dev *d);
/* Record the first GPU fault text. */
void emu_dev_fault_set(struct emu_dev *d, const char *why);

/* Like emu_mem_ptr for one byte, also giving the bytes left in that mapping. */
void *emu_mem_ptr_extent(struct emu_vm *vm, uint64_t va, size_t *avail_out);
/* True when the program came from a cubin (not an emu program stub). */
bool emu_prog_is_cubin_code(const uint8_t *code, size_t n);
/* Remove every mapping of bo from vm (the memory was freed). */
void emu_vm_unmap_bo(struct emu_vm *vm, struct emu_bo *bo);
/* Hold vm's read lock across a stretch of emu_mem_ptr() uses (pointers stay valid). */
void emu_vm_read_lock(struct emu_vm *vm);
void emu_vm_read_unlock(struct emu_vm *vm);

/* GPU model hooks (emu_gpu.c). */
void emu_gpu_fini(struct emu_dev *d);

/* A kernel's own constant bank `.nv.constantN.<kernel>` (N != 0) of its cubin: nvcc puts
 * e.g. a `switch` jump table there (BRX reads c[0x2][...]); the launch must bind it as QMD
 * constant buffer N (docs/emulator.md, lesson_kernel_constant_bank_must_be_bound). */
#define EMU_PROG_KBANK_MAX 4
struct emu_prog_kbank {
    uint32_t index;       /* N */
    const uint8_t *bytes; /* the section's bytes inside the embedded cubin */
    uint32_t size_B;
    bool relocated; /* a non-empty .rela section patches it: bytes differ once placed */
};
struct emu_prog_kbanks {
    uint32_t count;
    struct emu_prog_kbank b[EMU_PROG_KBANK_MAX];
    uint32_t param_lead; /* the first parameter's offset in the window (gpu_cubin_kernel_param_lead) */
};

/* Program identification (emu_prog.c): the built-in kernel whose code is at `code`
 * (n readable bytes), or NULL with why written. For cubin code, *kbanks_out (when not
 * NULL) is set to the kernel's per-kernel constant banks (NULL for an emu program stub). */
struct hcq_kernel_desc;
const struct hcq_kernel_desc *emu_prog_identify(struct emu_dev *d, const uint8_t *code, size_t n,
                                                const struct emu_prog_kbanks **kbanks_out, char *why,
                                                size_t why_B);
void emu_prog_fini(struct emu_dev *d);

/* Process-wide live counters (emu_stats_get). */
extern atomic_llong emu_live_devs, emu_live_fds, emu_live_maps, emu_live_bos, emu_live_vms, emu_live_chans,
    emu_live_threads, emu_live_rm_objs;

/* Monotonic ns (GPU timestamps are host time: hcq_time_ns compatible). */
uint64_t emu_now_ns(void);
void emu_sleep_ns(uint64_t ns);

#endif /* EMU_PRIV_H */
