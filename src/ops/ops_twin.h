/* SPDX-License-Identifier: MIT */
/*
 * ops_twin.h - helpers for writing CPU twins of the built-in kernels, and the per-module
 * descriptor tables ops_registry.c registers with core. Layer: ops (internal).
 *
 * A twin computes the whole launch exactly as the kernel does (hcq_kernel.h). Twins of
 * the built-in kernels translate each array once, up front, through ops_twin_array(),
 * and return at the first fault (the emulator then reports an MMU fault at fault_va).
 */
#ifndef OPS_TWIN_H
#define OPS_TWIN_H

#include "hcq_kernel.h"
#include "k_params.h"

#include <string.h>

/* Host pointer for count elements of elem_B bytes at va, or NULL with l->fault set
 * (also when count * elem_B overflows). count 0 never faults: callers return early. */
static inline void *
ops_twin_array(struct hcq_twin_launch *l, uint64_t va, uint64_t count, uint64_t elem_B)
{
    if (count > UINT64_MAX / elem_B) {
        l->fault = true;
        l->fault_va = va;
        return NULL;
    }
    return HCQ_TWIN_PTR(l, va, count * elem_B);
}

/* Copy the parameter struct out of the launch (the blob carries no alignment promise
 * beyond the cmdlist's 16 bytes, and a local copy reads like the kernel's `p`). */
#define OPS_TWIN_PARAMS(l, kname, p)                                                                         \
    struct kname##_params p;                                                                                 \
    memcpy(&p, (l)->params, sizeof p)

/* One descriptor line: kernel symbol, its .cu module, params size, twin. */
#define OPS_KERNEL(kname, module, twin)                                                                      \
    {                                                                                                        \
#kname, module, sizeof(struct kname##_params), twin                                                  \
    }

/* Per-module tables, each terminated by a zeroed entry. */
extern const struct hcq_kernel_desc ops_memory_kernels[];
extern const struct hcq_kernel_desc ops_elementwise_kernels[];
extern const struct hcq_kernel_desc ops_reduce_kernels[];
extern const struct hcq_kernel_desc ops_matmul_kernels[];
extern const struct hcq_kernel_desc ops_gemm_kernels[];
extern const struct hcq_kernel_desc ops_select_kernels[];
extern const struct hcq_kernel_desc ops_minmax_kernels[];
extern const struct hcq_kernel_desc ops_conv_kernels[];
extern const struct hcq_kernel_desc ops_pool_kernels[];

#endif /* OPS_TWIN_H */
