/* SPDX-License-Identifier: MIT */
/*
 * gpu_qmd_limits.h - internal to the QMD version files: the value ranges of one version
 * (derived from its field widths) and the shared checks, plus macros that build the
 * per-version field tables used by dump and tests. Layer: gpu (pure).
 */
#ifndef GPU_QMD_LIMITS_H
#define GPU_QMD_LIMITS_H

#include "gpu_qmd.h"

struct gpu_qmd_limits {
    const char *name;          /* "V04_00" */
    uint32_t version;          /* 0x0400 */
    unsigned program_va_bits;  /* address bits the program fields hold */
    unsigned program_shift;    /* V5 stores VA >> 4 */
    unsigned prefetch_va_bits; /* 40 + width of the UPPER_SHIFTED field */
    unsigned shared_bits, shared_shift;
    unsigned local_bits, local_shift;
    unsigned block_z_bits;
    unsigned cbuf_va_bits, cbuf_shift;
    bool cbuf_prefetch; /* the version has CONSTANT_BUFFER_PREFETCH(i) */
    unsigned release_va_bits;
};

/* HCQ_ERR_INVALID (logged, naming the field) if d does not fit lim. */
enum hcq_status gpu_qmd_check_desc(const struct gpu_qmd_limits *lim, const struct gpu_qmd_desc *d);
/* HCQ_ERR_FORMAT (quiet) unless major.minor is lim's version. */
enum hcq_status gpu_qmd_check_version(const struct gpu_qmd_limits *lim, uint32_t major, uint32_t minor);

/* Field-table entries: GPU_QMD_F(NVCBC0_QMDV04_00, GRID_WIDTH),
 * GPU_QMD_FI(NVCBC0_QMDV04_00, CONSTANT_BUFFER_VALID, 3). */
#define GPU_QMD_F(ver, n)                                                                                    \
    {                                                                                                        \
#n, GPU_HI(ver##_##n), GPU_LO(ver##_##n)                                                             \
    }
#define GPU_QMD_FI(ver, n, i)                                                                                \
    {                                                                                                        \
#n "(" #i ")", GPU_HI(ver##_##n(i)), GPU_LO(ver##_##n(i))                                            \
    }
#define GPU_QMD_FI2(ver, n) GPU_QMD_FI(ver, n, 0), GPU_QMD_FI(ver, n, 1)
#define GPU_QMD_FI8(ver, n)                                                                                  \
    GPU_QMD_FI(ver, n, 0), GPU_QMD_FI(ver, n, 1), GPU_QMD_FI(ver, n, 2), GPU_QMD_FI(ver, n, 3),              \
        GPU_QMD_FI(ver, n, 4), GPU_QMD_FI(ver, n, 5), GPU_QMD_FI(ver, n, 6), GPU_QMD_FI(ver, n, 7)

#endif /* GPU_QMD_LIMITS_H */
