/* SPDX-License-Identifier: MIT */
/*
 * hcq_kernel.h - the built-in kernel library's contract: kernel descriptors (name,
 * parameter size, CPU twin) and the embedded cubins. Layer: core. The registry is core's
 * (hcq_kernel.c); the descriptors and twins are src/ops's, which registers its tables
 * (ops_registry.c); the cubins are generated (build/gen).
 *
 * A CPU twin computes what the CUDA kernel computes for the whole launch (all blocks),
 * given the same parameter struct. Device addresses in the parameters are translated
 * through l->ptr(): identity on `cpu`, the emulated VA map on `emu`. A twin that gets
 * NULL from it must set l->fault and return (the emulator reports an MMU fault).
 */
#ifndef HCQ_KERNEL_H
#define HCQ_KERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hcq_twin_launch {
    const void *params; /* the kernel's parameter struct */
    uint32_t grid[3];
    uint32_t block[3];
    /* Host pointer for [va, va+size_B), or NULL if any byte of it is unmapped. */
    void *(*ptr)(void *ctx, uint64_t va, uint64_t size_B);
    void *ctx;
    bool fault;        /* set by the twin when ptr() failed */
    uint64_t fault_va; /* the address that failed */
};

typedef void (*hcq_twin_fn)(struct hcq_twin_launch *l);

/* Translate or flag a fault; twins use it as `float *x = HCQ_TWIN_PTR(l, p->x_va, n * 4); if (!x) return;` */
static inline void *
hcq_twin_ptr(struct hcq_twin_launch *l, uint64_t va, uint64_t size_B)
{
    void *p = l->ptr(l->ctx, va, size_B ? size_B : 1);
    if (!p) {
        l->fault = true;
        l->fault_va = va;
    }
    return p;
}
#define HCQ_TWIN_PTR(l, va, size_B) hcq_twin_ptr((l), (va), (size_B))

struct hcq_kernel_desc {
    const char *name;   /* the extern "C" __global__ symbol */
    const char *module; /* the .cu file (basename without .cu) holding it */
    uint32_t params_B;  /* sizeof its parameter struct */
    hcq_twin_fn twin;
    /* Dynamic shared memory every launch of the kernel gets (bytes; 0: none): a property of
     * the kernel, like its register count, so backends set it up at program load (the CUDA
     * driver's opt-in above 48 KiB, the QMD's shared size and carve-out on rm). */
    uint32_t shared_dyn_B;
    /* 0: the module is built for every arch in CUARCH; else the one SM version it is built
     * for (arch-specific instructions: 90 for the sm_90a wgmma kernels). GPUs of other
     * archs have no code for it (hcq_program_load fails there; callers pick another). */
    uint32_t sm_only;
    /* Stack (local memory) per thread its code needs, as nvcc reports it (the cubin's
     * MIN_STACK_SIZE; 0: none). Used only where a program loads without a cubin (the
     * emulator's program stubs), so the engine sizes local memory as the cubin would make it. */
    uint32_t stack_B;
};

/* Most descriptor tables the registry holds. */
#define HCQ_KERNEL_TABLES_MAX 32u

/* Add a table of built-in kernels (terminated by an entry whose name is NULL; it must live
 * as long as the program). Kernels are numbered in registration order. Registering a table
 * again changes nothing. False for NULL or when HCQ_KERNEL_TABLES_MAX tables are held. */
bool hcq_kernel_register(const struct hcq_kernel_desc *table);
/* Built-in kernel by name (first registered wins), or NULL. */
const struct hcq_kernel_desc *hcq_kernel_find(const char *name);
/* i-th built-in kernel, NULL past the end. */
const struct hcq_kernel_desc *hcq_kernel_at(uint32_t i);

struct hcq_cubin {
    const char *module;  /* "k_elementwise" */
    uint32_t sm_version; /* 90 for sm_90 */
    const uint8_t *data;
    size_t size_B;
};

/* Embedded cubin of `module` for exactly `sm_version`, or NULL. */
const struct hcq_cubin *hcq_cubin_find(const char *module, uint32_t sm_version);
/* i-th embedded cubin, NULL past the end (generated at build time). */
const struct hcq_cubin *hcq_cubin_at(uint32_t i);

#endif /* HCQ_KERNEL_H */
