/* SPDX-License-Identifier: MIT */
/*
 * gpu_push.h - pushbuffer building: method headers, NVIDIA-named methods of the host
 * (GPFIFO), compute and copy classes, composite sequences (semaphores, launches, copies)
 * and the 8-byte GPFIFO entry. Layer: gpu (pure, no syscalls).
 *
 * ==== Model ====
 * A pushbuffer is an array of dwords: a method header (rm.md §5.1) naming a subchannel,
 * a method offset and a count, followed by that many data dwords. The channel binds an
 * engine object to a subchannel once with SET_OBJECT (rm.md §4.5): by convention here
 * subchannel 0 = host methods only, 1 = compute, 4 = copy (tinygrad/NVK convention). Host
 * methods (offsets < 0x100, the GPFIFO class) run on whatever subchannel is named.
 * A GPFIFO entry (rm.md §4.3) points the GPU at one pushbuffer segment.
 *
 * struct gpu_push writes into caller-owned memory and never overruns it: once full, further
 * writes are dropped and `overflow` is set; check it once after building.
 * Method offsets are identical across the classes of one kind (rm.md §5.2-5.4), so they are
 * defined once under the first class that has them (C56F host, C6C0 compute, C6B5 copy) and
 * Hopper-only ones under C86F / CBC0 / C8B5.
 */
#ifndef GPU_PUSH_H
#define GPU_PUSH_H

#include <stdbool.h>
#include <stdint.h>

#include "gpu_bits.h"
#include "util_log.h"

/* ==== Method header (rm.md §5.1; NVIDIA's NVC56F_DMA_* names) ==== */

#define NVC56F_DMA_METHOD_ADDRESS 11 : 0 /* method byte offset >> 2 */
#define NVC56F_DMA_METHOD_SUBCHANNEL 15 : 13
#define NVC56F_DMA_METHOD_COUNT 28 : 16
#define NVC56F_DMA_IMMD_DATA 28 : 16 /* immediate form: 13-bit data in the header */
#define NVC56F_DMA_SEC_OP 31 : 29
#define NVC56F_DMA_SEC_OP_INC_METHOD 1     /* data to method, method+4, ... */
#define NVC56F_DMA_SEC_OP_NON_INC_METHOD 3 /* all data to one method */
#define NVC56F_DMA_SEC_OP_IMMD_DATA_METHOD 4
#define NVC56F_DMA_SEC_OP_ONE_INC 5 /* first dword to method, the rest to method+4 */
#define NVC56F_DMA_SEC_OP_END_PB_SEGMENT 7

#define GPU_PUSH_MAX_COUNT 0x1FFFu /* 13-bit count */
#define GPU_PUSH_MAX_IMMD 0x1FFFu  /* 13-bit immediate data */

/* Subchannels used by this runtime (rm.md §4.5, nvgpu.md §6.1). */
#define GPU_SUBC_HOST 0u
#define GPU_SUBC_COMPUTE 1u
#define GPU_SUBC_COPY 4u
/* Subchannel per class prefix, for PUSH_MTHD(p, NVC6C0, ...). */
#define GPU_SUBC_NVC56F GPU_SUBC_HOST
#define GPU_SUBC_NVC86F GPU_SUBC_HOST
#define GPU_SUBC_NVC6C0 GPU_SUBC_COMPUTE
#define GPU_SUBC_NVCBC0 GPU_SUBC_COMPUTE
#define GPU_SUBC_NVC6B5 GPU_SUBC_COPY
#define GPU_SUBC_NVC8B5 GPU_SUBC_COPY

/* ==== Host / GPFIFO class methods (C56F, C86F, C96F, CA6F; rm.md §5.2, nvgpu.md §6.1) ==== */

#define NVC56F_SET_OBJECT 0x0000u
#define NVC56F_SET_OBJECT_NVCLASS 15 : 0
#define NVC56F_SET_OBJECT_ENGINE 20 : 16
#define NVC56F_NOP 0x0008u
#define NVC56F_NON_STALL_INTERRUPT 0x0020u
#define NVC56F_NON_STALL_INTERRUPT_HANDLE 31 : 0
#define NVC56F_FB_FLUSH 0x0024u
#define NVC56F_MEM_OP_A 0x0028u
#define NVC56F_MEM_OP_B 0x002Cu
#define NVC56F_MEM_OP_C 0x0030u
#define NVC56F_MEM_OP_D 0x0034u
#define NVC56F_MEM_OP_D_OPERATION 31 : 27
#define NVC56F_MEM_OP_D_OPERATION_MEMBAR 5
#define NVC56F_MEM_OP_D_OPERATION_MMU_TLB_INVALIDATE 9
#define NVC56F_MEM_OP_D_OPERATION_L2_PEERMEM_INVALIDATE 0xD
#define NVC56F_MEM_OP_D_OPERATION_L2_SYSMEM_INVALIDATE 0xE
#define NVC56F_MEM_OP_D_OPERATION_L2_FLUSH_DIRTY                                                             \
    0x10 /* NVIDIA clc56f.h; only emu:ga10b,l2=noncoherent uses it */
#define NVC56F_SET_REFERENCE 0x0050u
#define NVC56F_SEM_ADDR_LO 0x005Cu
#define NVC56F_SEM_ADDR_LO_OFFSET 31 : 2 /* VA bits 31:2 */
#define NVC56F_SEM_ADDR_HI 0x0060u
#define NVC56F_SEM_ADDR_HI_OFFSET 7 : 0  /* C56F: 40-bit VA */
#define NVC86F_SEM_ADDR_HI_OFFSET 24 : 0 /* C86F, C96F: 57-bit VA */
#define NVC56F_SEM_PAYLOAD_LO 0x0064u
#define NVC56F_SEM_PAYLOAD_HI 0x0068u
#define NVC56F_SEM_EXECUTE 0x006Cu
#define NVC56F_SEM_EXECUTE_OPERATION 2 : 0
#define NVC56F_SEM_EXECUTE_OPERATION_ACQUIRE 0
#define NVC56F_SEM_EXECUTE_OPERATION_RELEASE 1
#define NVC56F_SEM_EXECUTE_OPERATION_ACQ_STRICT_GEQ 2
#define NVC56F_SEM_EXECUTE_OPERATION_ACQ_CIRC_GEQ 3
#define NVC56F_SEM_EXECUTE_OPERATION_ACQ_AND 4
#define NVC56F_SEM_EXECUTE_OPERATION_ACQ_NOR 5
#define NVC56F_SEM_EXECUTE_OPERATION_REDUCTION 6
#define NVC56F_SEM_EXECUTE_ACQUIRE_SWITCH_TSG 12 : 12
#define NVC56F_SEM_EXECUTE_RELEASE_WFI 20 : 20
#define NVC56F_SEM_EXECUTE_PAYLOAD_SIZE 24 : 24
#define NVC56F_SEM_EXECUTE_PAYLOAD_SIZE_32BIT 0
#define NVC56F_SEM_EXECUTE_PAYLOAD_SIZE_64BIT 1
#define NVC56F_SEM_EXECUTE_RELEASE_TIMESTAMP 25 : 25 /* 16-byte record: payload, then ns timestamp */
#define NVC56F_SEM_EXECUTE_REDUCTION 30 : 27        /* 0 IMIN 1 IMAX 2 IXOR 3 IAND 4 IOR 5 IADD 6 INC 7 DEC */
#define NVC56F_SEM_EXECUTE_REDUCTION_FORMAT 31 : 31 /* 0 signed, 1 unsigned */
#define NVC56F_WFI 0x0078u
#define NVC56F_WFI_SCOPE 0 : 0
#define NVC56F_WFI_SCOPE_CURRENT_SCG_TYPE 0
#define NVC56F_WFI_SCOPE_ALL 1
#define NVC56F_YIELD 0x0080u

/* SEM_EXECUTE words used by tinygrad, verified on H200 and Orin (rm.md §5.2, nvgpu.md §6.1). */
#define GPU_SEM_EXECUTE_SIGNAL 0x03100001u /* RELEASE | RELEASE_WFI | 64BIT | RELEASE_TIMESTAMP */
#define GPU_SEM_EXECUTE_WAIT 0x01000003u   /* ACQ_CIRC_GEQ | 64BIT */

/* ==== Compute class methods (C6C0, C7C0, C9C0, CBC0, CDC0, CEC0; rm.md §5.3) ==== */

#define NVC6C0_SET_OBJECT 0x0000u
#define NVC6C0_SET_OBJECT_CLASS_ID 15 : 0
#define NVC6C0_NO_OPERATION 0x0100u
#define NVC6C0_WAIT_FOR_IDLE 0x0110u
#define NVC6C0_PM_TRIGGER 0x0140u
/* Hopper+ 64-bit-payload report semaphore (not in C6C0; its trigger method is not in our docs). */
#define NVCBC0_SET_REPORT_SEMAPHORE_PAYLOAD_LOWER 0x0158u
#define NVCBC0_SET_REPORT_SEMAPHORE_PAYLOAD_UPPER 0x015Cu
#define NVCBC0_SET_REPORT_SEMAPHORE_ADDRESS_LOWER 0x0160u
#define NVCBC0_SET_REPORT_SEMAPHORE_ADDRESS_UPPER 0x0164u
#define NVC6C0_SET_QMD_VIRTUALIZATION_BASE_A 0x0214u
#define NVC6C0_SET_QMD_VIRTUALIZATION_BASE_B 0x0218u
#define NVC6C0_INVALIDATE_SHADER_CACHES 0x021Cu /* waits for idle first */
#define NVC6C0_INVALIDATE_SHADER_CACHES_INSTRUCTION 0 : 0
#define NVC6C0_INVALIDATE_SHADER_CACHES_LOCKS 1 : 1
#define NVC6C0_INVALIDATE_SHADER_CACHES_FLUSH_DATA 2 : 2
#define NVC6C0_INVALIDATE_SHADER_CACHES_DATA 4 : 4
#define NVC6C0_INVALIDATE_SHADER_CACHES_CONSTANT 12 : 12
#define NVC6C0_SET_QMD_VERSION 0x0288u
#define NVC6C0_SET_QMD_VERSION_CURRENT 15 : 0
#define NVC6C0_SET_QMD_VERSION_OLDEST_SUPPORTED 31 : 16
#define NVC6C0_INVALIDATE_SKED_CACHES 0x0298u
#define NVC6C0_SET_SHADER_SHARED_MEMORY_WINDOW_A 0x02A0u
#define NVC6C0_SET_SHADER_SHARED_MEMORY_WINDOW_A_BASE_ADDRESS_UPPER 16 : 0
#define NVC6C0_SET_SHADER_SHARED_MEMORY_WINDOW_B 0x02A4u
#define NVC6C0_SET_SHADER_SHARED_MEMORY_WINDOW_B_BASE_ADDRESS 31 : 0
#define NVC6C0_SET_CWD_SLOT_COUNT 0x02B0u
#define NVC6C0_SEND_PCAS_A 0x02B4u
#define NVC6C0_SEND_PCAS_A_QMD_ADDRESS_SHIFTED8 31 : 0
#define NVC6C0_SEND_PCAS_B 0x02B8u
#define NVC6C0_SEND_PCAS_B_FROM 23 : 0
#define NVC6C0_SEND_PCAS_B_DELTA 31 : 24
#define NVC6C0_SEND_SIGNALING_PCAS_B 0x02BCu
#define NVC6C0_SEND_SIGNALING_PCAS_B_INVALIDATE 0 : 0
#define NVC6C0_SEND_SIGNALING_PCAS_B_SCHEDULE 1 : 1
#define NVC6C0_SEND_SIGNALING_PCAS2_B 0x02C0u
#define NVC6C0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION 3 : 0
#define NVC6C0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_NOP 0
#define NVC6C0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_INVALIDATE 1
#define NVC6C0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_SCHEDULE 2
#define NVC6C0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_INVALIDATE_COPY_SCHEDULE 3
#define NVC6C0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_INCREMENT_PUT 6
#define NVC6C0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_DECREMENT_DEPENDENCE 7
#define NVC6C0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_PREFETCH 8
#define NVC6C0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_PREFETCH_SCHEDULE 9
#define NVC6C0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_INVALIDATE_PREFETCH_COPY_SCHEDULE 0xA
#define NVC6C0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_INVALIDATE_PREFETCH_COPY_FORCE_REQUIRE_SCHEDULING 0xB
#define NVCBC0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_INCREMENT_DEPENDENCE 0xC
#define NVCBC0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_INCREMENT_CWD_REF_COUNTER 0xD
#define NVC6C0_SEND_SIGNALING_PCAS2_B_SELECT 13 : 8
#define NVC6C0_SEND_SIGNALING_PCAS2_B_OFFSET_MINUS_ONE 23 : 14
#define NVC6C0_SET_SKED_CACHE_CONTROL 0x02CCu
#define NVC6C0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A 0x02E4u
#define NVC6C0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A_SIZE_UPPER 7 : 0
#define NVC6C0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_B 0x02E8u
#define NVC6C0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_B_SIZE_LOWER 31 : 0
#define NVC6C0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_C 0x02ECu
#define NVC6C0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_C_MAX_SM_COUNT 8 : 0
#define NVC6C0_SET_SPA_VERSION 0x0310u
#define NVC6C0_SET_SPA_VERSION_MINOR 7 : 0
#define NVC6C0_SET_SPA_VERSION_MAJOR 15 : 8
#define NVC6C0_SET_INLINE_QMD_ADDRESS_A 0x0318u
#define NVC6C0_SET_INLINE_QMD_ADDRESS_B 0x031Cu
#define NVC6C0_SET_SHADER_LOCAL_MEMORY_A 0x0790u
#define NVC6C0_SET_SHADER_LOCAL_MEMORY_A_ADDRESS_UPPER 24 : 0
#define NVC6C0_SET_SHADER_LOCAL_MEMORY_B 0x0794u
#define NVC6C0_SET_SHADER_LOCAL_MEMORY_B_ADDRESS_LOWER 31 : 0
#define NVC6C0_SET_SHADER_LOCAL_MEMORY_WINDOW_A 0x07B0u
#define NVC6C0_SET_SHADER_LOCAL_MEMORY_WINDOW_A_BASE_ADDRESS_UPPER 16 : 0
#define NVC6C0_SET_SHADER_LOCAL_MEMORY_WINDOW_B 0x07B4u
#define NVC6C0_SET_SHADER_LOCAL_MEMORY_WINDOW_B_BASE_ADDRESS 31 : 0
#define NVC6C0_SET_SHADER_CACHE_CONTROL 0x0D94u
#define NVC6C0_SET_SHADER_CACHE_CONTROL_ICACHE_PREFETCH_ENABLE 0 : 0
#define NVC6C0_SET_SHADER_EXCEPTIONS 0x1528u
#define NVC6C0_SET_SHADER_EXCEPTIONS_ENABLE 0 : 0
#define NVC6C0_INVALIDATE_SHADER_CACHES_NO_WFI 0x1698u
#define NVC6C0_INVALIDATE_SHADER_CACHES_NO_WFI_INSTRUCTION 0 : 0
#define NVC6C0_INVALIDATE_SHADER_CACHES_NO_WFI_GLOBAL_DATA 4 : 4
#define NVC6C0_INVALIDATE_SHADER_CACHES_NO_WFI_CONSTANT 12 : 12
/* Legacy report semaphore: only D's fields are in our docs; no helper uses it. */
#define NVC6C0_SET_REPORT_SEMAPHORE_A 0x1B00u
#define NVC6C0_SET_REPORT_SEMAPHORE_B 0x1B04u
#define NVC6C0_SET_REPORT_SEMAPHORE_C 0x1B08u
#define NVC6C0_SET_REPORT_SEMAPHORE_D 0x1B0Cu
#define NVC6C0_SET_REPORT_SEMAPHORE_D_OPERATION 1 : 0
#define NVC6C0_SET_REPORT_SEMAPHORE_D_AWAKEN_ENABLE 20 : 20
#define NVC6C0_SET_REPORT_SEMAPHORE_D_STRUCTURE_SIZE 28 : 28

/* INVALIDATE_SHADER_CACHES_NO_WFI word tinygrad emits before each kernel (rm.md §5.3):
 * INSTRUCTION | GLOBAL_DATA | CONSTANT. */
#define GPU_INVALIDATE_SHADER_CACHES_ALL 0x1011u

/* ==== Copy engine methods (C6B5, C7B5, C8B5, C9B5, CAB5; rm.md §5.4, nvgpu.md §6.1) ==== */

#define NVC6B5_SET_OBJECT 0x0000u
#define NVC6B5_NOP 0x0100u
#define NVC6B5_SET_SEMAPHORE_A 0x0240u
#define NVC6B5_SET_SEMAPHORE_A_UPPER 16 : 0 /* C6B5/C7B5: 49-bit VA */
#define NVC8B5_SET_SEMAPHORE_A_UPPER 24 : 0 /* C8B5+: 57-bit VA */
#define NVC6B5_SET_SEMAPHORE_B 0x0244u
#define NVC6B5_SET_SEMAPHORE_B_LOWER 31 : 0
#define NVC6B5_SET_SEMAPHORE_PAYLOAD 0x0248u
#define NVC8B5_SET_SEMAPHORE_PAYLOAD_UPPER 0x024Cu /* Hopper+ only */
#define NVC6B5_SET_SRC_PHYS_MODE 0x0260u
#define NVC6B5_SET_DST_PHYS_MODE 0x0264u
#define NVC6B5_LAUNCH_DMA 0x0300u
#define NVC6B5_LAUNCH_DMA_DATA_TRANSFER_TYPE 1 : 0
#define NVC6B5_LAUNCH_DMA_DATA_TRANSFER_TYPE_NONE 0
#define NVC6B5_LAUNCH_DMA_DATA_TRANSFER_TYPE_PIPELINED 1
#define NVC6B5_LAUNCH_DMA_DATA_TRANSFER_TYPE_NON_PIPELINED 2
#define NVC6B5_LAUNCH_DMA_FLUSH_ENABLE 2 : 2
#define NVC6B5_LAUNCH_DMA_SEMAPHORE_TYPE 4 : 3
#define NVC6B5_LAUNCH_DMA_SEMAPHORE_TYPE_NONE 0
#define NVC6B5_LAUNCH_DMA_SEMAPHORE_TYPE_RELEASE_ONE_WORD_SEMAPHORE 1
#define NVC6B5_LAUNCH_DMA_SEMAPHORE_TYPE_RELEASE_FOUR_WORD_SEMAPHORE 2 /* payload + timestamp */
#define NVC6B5_LAUNCH_DMA_SEMAPHORE_TYPE_RELEASE_CONDITIONAL_INTR_SEMAPHORE 3
#define NVC6B5_LAUNCH_DMA_INTERRUPT_TYPE 6 : 5
#define NVC6B5_LAUNCH_DMA_SRC_MEMORY_LAYOUT 7 : 7
#define NVC6B5_LAUNCH_DMA_SRC_MEMORY_LAYOUT_BLOCKLINEAR 0
#define NVC6B5_LAUNCH_DMA_SRC_MEMORY_LAYOUT_PITCH 1
#define NVC6B5_LAUNCH_DMA_DST_MEMORY_LAYOUT 8 : 8
#define NVC6B5_LAUNCH_DMA_DST_MEMORY_LAYOUT_BLOCKLINEAR 0
#define NVC6B5_LAUNCH_DMA_DST_MEMORY_LAYOUT_PITCH 1
#define NVC6B5_LAUNCH_DMA_MULTI_LINE_ENABLE 9 : 9
#define NVC6B5_LAUNCH_DMA_REMAP_ENABLE 10 : 10
#define NVC6B5_LAUNCH_DMA_SRC_TYPE 12 : 12 /* 0 = virtual */
#define NVC6B5_LAUNCH_DMA_DST_TYPE 13 : 13
#define NVC6B5_LAUNCH_DMA_SEMAPHORE_REDUCTION 17 : 14
#define NVC6B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_SIGN 18 : 18
#define NVC6B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_ENABLE 19 : 19
#define NVC6B5_LAUNCH_DMA_FLUSH_TYPE 25 : 25 /* 0 SYS, 1 GL */
#define NVC6B5_LAUNCH_DMA_DISABLE_PLC 26 : 26
#define NVC8B5_LAUNCH_DMA_SEMAPHORE_PAYLOAD_SIZE 27 : 27 /* Hopper+: 1 = 64-bit payload */
#define NVC8B5_LAUNCH_DMA_SEMAPHORE_PAYLOAD_SIZE_32_BIT 0
#define NVC8B5_LAUNCH_DMA_SEMAPHORE_PAYLOAD_SIZE_64_BIT 1
#define NVC6B5_OFFSET_IN_UPPER 0x0400u
#define NVC6B5_OFFSET_IN_UPPER_UPPER 16 : 0 /* C8B5+: 24:0 */
#define NVC8B5_OFFSET_IN_UPPER_UPPER 24 : 0
#define NVC6B5_OFFSET_IN_LOWER 0x0404u
#define NVC6B5_OFFSET_OUT_UPPER 0x0408u
#define NVC6B5_OFFSET_OUT_UPPER_UPPER 16 : 0
#define NVC8B5_OFFSET_OUT_UPPER_UPPER 24 : 0
#define NVC6B5_OFFSET_OUT_LOWER 0x040Cu
#define NVC6B5_PITCH_IN 0x0410u
#define NVC6B5_PITCH_OUT 0x0414u
#define NVC6B5_LINE_LENGTH_IN 0x0418u
#define NVC6B5_LINE_COUNT 0x041Cu

/* LAUNCH_DMA words tinygrad uses (rm.md §5.4): a 1-D copy = NON_PIPELINED | SRC/DST PITCH,
 * a semaphore release = FLUSH_ENABLE | FOUR_WORD (payload + timestamp). */
#define GPU_LAUNCH_DMA_COPY_1D 0x182u
#define GPU_LAUNCH_DMA_SEM_RELEASE 0x14u
/* Largest LINE_LENGTH_IN one launch is given here (tinygrad splits at 2 GiB, rm.md §5.4). */
#define GPU_CE_MAX_LINE_B 0x80000000u

/* ==== GPFIFO entry (rm.md §4.3, nvgpu.md §4.9) ==== */

#define NVC56F_GP_ENTRY0_FETCH 0 : 0  /* 0 = unconditional */
#define NVC56F_GP_ENTRY0_GET 31 : 2   /* pushbuffer VA bits 31:2 */
#define NVC56F_GP_ENTRY1_GET_HI 7 : 0 /* pushbuffer VA bits 39:32 */
#define NVC56F_GP_ENTRY1_LEVEL 9 : 9
#define NVC56F_GP_ENTRY1_LEVEL_MAIN 0
#define NVC56F_GP_ENTRY1_LEVEL_SUBROUTINE 1
#define NVC56F_GP_ENTRY1_LENGTH 30 : 10 /* dwords */
#define NVC56F_GP_ENTRY1_SYNC 31 : 31   /* 1 = wait for the previous pushbuffer first */

struct gpu_gpfifo_entry {
    uint32_t entry0;
    uint32_t entry1;
};
_Static_assert(sizeof(struct gpu_gpfifo_entry) == 8, "GPFIFO entry is 8 bytes (rm.md §4.3)");

struct gpu_gpfifo_fields {
    uint64_t pb_va;    /* 4-byte aligned, < 2^40 */
    uint32_t dw_count; /* 1 .. 2^21-1 */
    bool subroutine;   /* LEVEL (tinygrad sets it, NVK does not; both work) */
    bool sync;
};

#define GPU_GPFIFO_MAX_DW 0x1FFFFFu
#define GPU_PB_VA_LIMIT (1ull << 40)

/* The 64-bit ring word (entry0 in the low half, as the GPU reads it little-endian).
 * Asserts the fields fit: callers validate VA and size first. */
uint64_t gpu_gpfifo_entry_encode(const struct gpu_gpfifo_fields *f);
/* Inverse; returns HCQ_ERR_FORMAT for a length-0 (control) entry or a conditional fetch. */
HCQ_MUST_CHECK enum hcq_status gpu_gpfifo_entry_decode(uint64_t entry, struct gpu_gpfifo_fields *out);

/* ==== Writer ==== */

struct gpu_push {
    uint32_t *dw;   /* caller-owned storage */
    uint32_t count; /* dwords written */
    uint32_t cap;   /* capacity in dwords */
    bool overflow;  /* a write did not fit; contents past `count` are missing */
};

static inline void
gpu_push_init(struct gpu_push *p, uint32_t *dw, uint32_t cap)
{
    p->dw = dw;
    p->count = 0;
    p->cap = cap;
    p->overflow = false;
}

static inline void
gpu_push_dw(struct gpu_push *p, uint32_t v)
{
    if (p->count < p->cap)
        p->dw[p->count++] = v;
    else
        p->overflow = true;
}

/* Method headers (rm.md §5.1). mthd_B is the byte offset; count 0..0x1FFF, data 0..0x1FFF. */
uint32_t gpu_push_hdr(uint32_t sec_op, uint32_t subc, uint32_t mthd_B, uint32_t count);
static inline uint32_t
gpu_push_hdr_inc(uint32_t subc, uint32_t mthd_B, uint32_t count)
{
    return gpu_push_hdr(NVC56F_DMA_SEC_OP_INC_METHOD, subc, mthd_B, count);
}
static inline uint32_t
gpu_push_hdr_non_inc(uint32_t subc, uint32_t mthd_B, uint32_t count)
{
    return gpu_push_hdr(NVC56F_DMA_SEC_OP_NON_INC_METHOD, subc, mthd_B, count);
}
static inline uint32_t
gpu_push_hdr_one_inc(uint32_t subc, uint32_t mthd_B, uint32_t count)
{
    return gpu_push_hdr(NVC56F_DMA_SEC_OP_ONE_INC, subc, mthd_B, count);
}
static inline uint32_t
gpu_push_hdr_immd(uint32_t subc, uint32_t mthd_B, uint32_t data)
{
    return gpu_push_hdr(NVC56F_DMA_SEC_OP_IMMD_DATA_METHOD, subc, mthd_B, data);
}

/* Header + n data dwords. */
void gpu_push_mthd(struct gpu_push *p, uint32_t sec_op, uint32_t subc, uint32_t mthd_B, const uint32_t *data,
                   uint32_t n);
/* Immediate-data method (data <= 0x1FFF, one dword in total). */
void gpu_push_immd(struct gpu_push *p, uint32_t subc, uint32_t mthd_B, uint32_t data);

#define GPU_NARGS32(...) ((uint32_t)(sizeof((const uint32_t[]){__VA_ARGS__}) / sizeof(uint32_t)))
/* PUSH_MTHD(p, NVC6C0, SEND_PCAS_A, qmd_va >> 8): incrementing method(s) from `mthd` on,
 * on the subchannel bound to that class kind. */
#define PUSH_MTHD(p, cls, mthd, ...)                                                                         \
    gpu_push_mthd((p), NVC56F_DMA_SEC_OP_INC_METHOD, GPU_SUBC_##cls, cls##_##mthd,                           \
                  (const uint32_t[]){__VA_ARGS__}, GPU_NARGS32(__VA_ARGS__))
#define PUSH_NINC(p, cls, mthd, ...)                                                                         \
    gpu_push_mthd((p), NVC56F_DMA_SEC_OP_NON_INC_METHOD, GPU_SUBC_##cls, cls##_##mthd,                       \
                  (const uint32_t[]){__VA_ARGS__}, GPU_NARGS32(__VA_ARGS__))
#define PUSH_IMMD(p, cls, mthd, v) gpu_push_immd((p), GPU_SUBC_##cls, cls##_##mthd, (v))

/* ==== Composite sequences (what the pushbuffer engine emits) ==== */

/* Dword counts, for reserving space. */
#define GPU_PUSH_SET_OBJECT_DW 2u
#define GPU_PUSH_SEM_DW 6u /* one 5-method block */
#define GPU_PUSH_NON_STALL_INTERRUPT_DW 2u
#define GPU_PUSH_LAUNCH_DW 4u
#define GPU_PUSH_INVALIDATE_DW 2u
#define GPU_PUSH_CE_SEM_DW 7u        /* worst case (Hopper+ 64-bit payload) */
#define GPU_PUSH_CE_COPY_CHUNK_DW 9u /* per chunk of <= GPU_CE_MAX_LINE_B */
#define GPU_PUSH_CE_COPY_2D_DW 12u

/* SET_OBJECT(cls) on subchannel subc. */
void gpu_push_set_object(struct gpu_push *p, uint32_t subc, uint32_t cls);

/* Host semaphore block: SEM_ADDR_LO..SEM_EXECUTE (5 methods, 6 dwords) with any execute
 * word. va 4-byte aligned (8 for 64-bit payloads), < 2^57 (< 2^40 on C56F: caller's job). */
void gpu_push_sem(struct gpu_push *p, uint64_t va, uint64_t payload, uint32_t execute);
/* Release a 64-bit value after the work before it is idle (RELEASE_WFI); with timestamp the
 * GPU also writes its ns clock at va+8 (the 16-byte signal slot, rm.md §5.6). */
void gpu_push_sem_release(struct gpu_push *p, uint64_t va, uint64_t value, bool timestamp);
/* Wait until the 64-bit value at va is >= value (circular compare, wrap-safe). */
void gpu_push_sem_acquire_geq(struct gpu_push *p, uint64_t va, uint64_t value);
/* NON_STALL_INTERRUPT(0): wakes CPU waiters that sleep on the channel's interrupt. */
void gpu_push_non_stall_interrupt(struct gpu_push *p);
/* Host WFI (scope: all). */
void gpu_push_wfi(struct gpu_push *p);

/* Compute channel setup: SET_OBJECT(compute_cls) on subchannel 1, then the local and shared
 * memory windows (mandatory before any dispatch, nvgpu.md §6.2). Window VAs < 2^49. */
void gpu_push_compute_init(struct gpu_push *p, uint32_t compute_cls, uint64_t local_window_va,
                           uint64_t shared_window_va);
/* Local-memory backing store (rm.md §8.3): SET_SHADER_LOCAL_MEMORY_A/B = backing_va,
 * NON_THROTTLED_A/B/C = bytes_per_tpc, max_sm_count (tinygrad 0xFF; 9 bits). */
void gpu_push_compute_local_memory(struct gpu_push *p, uint64_t backing_va, uint64_t bytes_per_tpc,
                                   uint32_t max_sm_count);
/* Invalidate instruction, data/global and constant caches: with wait_for_idle the
 * INVALIDATE_SHADER_CACHES method (waits for earlier work), else the _NO_WFI one (0x1011). */
void gpu_push_invalidate_shader_caches(struct gpu_push *p, bool wait_for_idle);
/* INVALIDATE_SHADER_CACHES_NO_WFI with only the caches in mask: bit 0 instruction, bit 1 global
 * data, bit 2 constant (gpu_push_invalidate_shader_caches(p, false) is mask 7). */
void gpu_push_invalidate_shader_caches_no_wfi(struct gpu_push *p, uint32_t mask);
/* Launch a QMD: SEND_PCAS_A = qmd_va >> 8, SEND_SIGNALING_PCAS2_B = PREFETCH_SCHEDULE.
 * qmd_va 256-byte aligned and < 2^40 (rm.md §6.4); asserted. */
void gpu_push_launch(struct gpu_push *p, uint64_t qmd_va);

/* Copy channel setup: SET_OBJECT(copy_cls) on subchannel 4. */
void gpu_push_copy_init(struct gpu_push *p, uint32_t copy_cls);
/* 1-D copy of size_B bytes, split into launches of <= GPU_CE_MAX_LINE_B. size_B 0 emits
 * nothing. VAs < 2^57 (< 2^49 on C6B5/C7B5: caller's job). Dwords needed:
 * gpu_push_ce_copy_dw(size_B). */
void gpu_push_ce_copy(struct gpu_push *p, uint64_t dst_va, uint64_t src_va, uint64_t size_B);
uint32_t gpu_push_ce_copy_dw(uint64_t size_B);
/* Rewrite one chunk that gpu_push_ce_copy emitted at `chunk` (chunks start every
 * GPU_PUSH_CE_COPY_CHUNK_DW dwords; graphs patch recorded copies this way): new addresses
 * and length (<= GPU_CE_MAX_LINE_B). size_B 0 keeps the chunk's methods but makes its
 * LAUNCH_DMA transfer nothing (DATA_TRANSFER_TYPE_NONE, no semaphore). */
void gpu_push_ce_copy_chunk_patch(uint32_t *chunk, uint64_t dst_va, uint64_t src_va, uint32_t size_B);
/* Pitched 2-D copy: height lines of width_B bytes (each < 2^32), lines pitch apart. */
void gpu_push_ce_copy_2d(struct gpu_push *p, uint64_t dst_va, uint32_t dst_pitch_B, uint64_t src_va,
                         uint32_t src_pitch_B, uint32_t width_B, uint32_t height);
/* Copy-engine semaphore release after the copies before it (FLUSH_ENABLE). 64-bit payloads
 * need a Hopper+ copy class (>= HOPPER_DMA_COPY_A, rm.md §9 item 4): on older classes a
 * value >= 2^32 returns HCQ_ERR_UNSUPPORTED and emits nothing (use a host semaphore). */
HCQ_MUST_CHECK enum hcq_status gpu_push_ce_sem_release(struct gpu_push *p, uint32_t copy_cls, uint64_t va,
                                                       uint64_t value, bool timestamp);

#endif /* GPU_PUSH_H */
