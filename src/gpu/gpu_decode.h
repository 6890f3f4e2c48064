/* SPDX-License-Identifier: MIT */
/*
 * gpu_decode.h - pushbuffer decoding: a structured iterator over method writes (what the
 * emulator's GPU model interprets) and a text decoder with NVIDIA's method and field names
 * (HCQ_DEBUG=push_dump, golden tests). Layer: gpu (pure, no syscalls).
 *
 * Method headers per rm.md §5.1. Host methods (offset < 0x100) are the GPFIFO class's on
 * any subchannel (rm.md §4.5); other offsets belong to the class bound to the subchannel
 * by SET_OBJECT, which the text decoder tracks.
 */
#ifndef GPU_DECODE_H
#define GPU_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpu_arch.h"
#include "util_log.h"

/* ==== Iterator: one step per data dword (method write) ==== */

struct gpu_push_write {
    uint32_t subc;   /* 0..7 */
    uint32_t mthd_B; /* byte offset of the method this dword goes to */
    uint32_t data;
    uint32_t sec_op;  /* NVC56F_DMA_SEC_OP_* of its header */
    uint32_t hdr_pos; /* dword index of its header */
    uint32_t index;   /* 0-based position within its header's data */
};

struct gpu_push_iter {
    const uint32_t *dw;
    uint32_t count;
    uint32_t pos; /* next dword to read */
    /* current header */
    uint32_t sec_op, subc, mthd_B, left, index, hdr_pos;
    enum hcq_status status; /* HCQ_OK, or HCQ_ERR_FORMAT after a malformed header */
    char error[96];         /* what was malformed, with the dword index */
};

void gpu_push_iter_init(struct gpu_push_iter *it, const uint32_t *dw, uint32_t count);
/* Next method write; false at the end (it->status HCQ_OK; an END_PB_SEGMENT header also
 * ends it) or on a malformed pushbuffer (it->status HCQ_ERR_FORMAT, it->error says why:
 * reserved SEC_OP, count running past the end, zero count). Does not log. */
bool gpu_push_iter_next(struct gpu_push_iter *it, struct gpu_push_write *w);

/* ==== Names ==== */

/* NVIDIA name without class prefix ("SEND_PCAS_A") of method mthd_B on class cls (a host,
 * compute or copy class of gpu_arch.h), or NULL if unknown. Host offsets < 0x100 are
 * looked up in the GPFIFO class whatever cls is. */
const char *gpu_decode_mthd_name(uint32_t cls, uint32_t mthd_B);
/* Kind of a class number: 'h' GPFIFO, 'c' compute, 'd' copy (DMA), 0 unknown. */
char gpu_decode_class_kind(uint32_t cls);

/* ==== Text decoder ==== */

struct gpu_decode_ctx {
    uint32_t gpfifo_cls;  /* prefix for host methods */
    uint32_t subc_cls[8]; /* class bound per subchannel (0 = none yet) */
};

/* Binding as the engine sets it up: host = arch->gpfifo_cls, subchannel 1 = compute,
 * 4 = copy (SET_OBJECT in the decoded stream rebinds). arch may be NULL (nothing bound). */
void gpu_decode_ctx_init(struct gpu_decode_ctx *c, const struct hcq_arch *arch);

/* Decode a pushbuffer to text, one line per header and per method write:
 *     # INC subc=0 count=5 hdr=0x20050017
 *     NVC86F_SEM_ADDR_LO  0x00001000
 *     NVC86F_SEM_EXECUTE  0x03100001 OPERATION=RELEASE RELEASE_WFI PAYLOAD_SIZE=64BIT RELEASE_TIMESTAMP
 * Fields of SEM_EXECUTE, LAUNCH_DMA, SEND_SIGNALING_PCAS2_B, INVALIDATE_SHADER_CACHES(_NO_WFI)
 * and SET_OBJECT are spelled out. A malformed stream ends with a "# ERROR ..." line.
 * Returns the length needed (snprintf-style; truncated to size, NUL-terminated if size > 0). */
size_t gpu_decode_push(struct gpu_decode_ctx *c, const uint32_t *dw, uint32_t count, char *buf, size_t size);

/* Decode one GPFIFO entry to text ("GP_ENTRY va=0x... dw=6 SUBROUTINE"). */
size_t gpu_decode_gpfifo_entry(uint64_t entry, char *buf, size_t size);

#endif /* GPU_DECODE_H */
