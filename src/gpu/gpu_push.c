/* SPDX-License-Identifier: MIT */
/*
 * gpu_push.c - pushbuffer encoders: method headers, GPFIFO entries and the composite
 * sequences the pushbuffer engine emits (semaphores, launches, copies).
 * Layer: gpu (pure). Facts: docs/hw/rm.md §4.3, §5; docs/hw/nvgpu.md §4.9, §6.1.
 */
#include "gpu_push.h"
#include "gpu_arch.h"

/* ==== GPFIFO entry ==== */

uint64_t
gpu_gpfifo_entry_encode(const struct gpu_gpfifo_fields *f)
{
    assert((f->pb_va & 3) == 0 && f->pb_va < GPU_PB_VA_LIMIT);
    assert(f->dw_count >= 1 && f->dw_count <= GPU_GPFIFO_MAX_DW);
    struct gpu_gpfifo_entry e = {
        .entry0 =
            GPU_FLD(NVC56F_GP_ENTRY0_FETCH, 0) | GPU_FLD(NVC56F_GP_ENTRY0_GET, (f->pb_va & 0xFFFFFFFFu) >> 2),
        .entry1 = GPU_FLD(NVC56F_GP_ENTRY1_GET_HI, f->pb_va >> 32) |
                  GPU_FLD(NVC56F_GP_ENTRY1_LEVEL,
                          f->subroutine ? NVC56F_GP_ENTRY1_LEVEL_SUBROUTINE : NVC56F_GP_ENTRY1_LEVEL_MAIN) |
                  GPU_FLD(NVC56F_GP_ENTRY1_LENGTH, f->dw_count) | GPU_FLD(NVC56F_GP_ENTRY1_SYNC, f->sync),
    };
    return (uint64_t)e.entry1 << 32 | e.entry0;
}

enum hcq_status
gpu_gpfifo_entry_decode(uint64_t entry, struct gpu_gpfifo_fields *out)
{
    uint32_t e0 = (uint32_t)entry, e1 = (uint32_t)(entry >> 32);
    out->pb_va = (uint64_t)GPU_FLD_GET(NVC56F_GP_ENTRY0_GET, e0) << 2 |
                 (uint64_t)GPU_FLD_GET(NVC56F_GP_ENTRY1_GET_HI, e1) << 32;
    out->dw_count = GPU_FLD_GET(NVC56F_GP_ENTRY1_LENGTH, e1);
    out->subroutine = GPU_FLD_GET(NVC56F_GP_ENTRY1_LEVEL, e1) == NVC56F_GP_ENTRY1_LEVEL_SUBROUTINE;
    out->sync = GPU_FLD_GET(NVC56F_GP_ENTRY1_SYNC, e1);
    if (GPU_FLD_GET(NVC56F_GP_ENTRY0_FETCH, e0) != 0)
        return hcq_err_quiet(HCQ_ERR_FORMAT, "gpu_gpfifo_entry_decode: FETCH: observed 1 "
                                             "(expected 0 = unconditional)");
    if (out->dw_count == 0)
        return hcq_err_quiet(HCQ_ERR_FORMAT,
                             "gpu_gpfifo_entry_decode: LENGTH 0 (control entry, "
                             "not produced by this runtime): 0x%016llx",
                             (unsigned long long)entry);
    /* bit 1 of entry0 and bit 8 of entry1 are outside every field we define */
    if ((e0 & 2) || (e1 & 0x100))
        return hcq_err_quiet(HCQ_ERR_FORMAT, "gpu_gpfifo_entry_decode: reserved bits set: 0x%016llx",
                             (unsigned long long)entry);
    return HCQ_OK;
}

/* ==== Methods ==== */

uint32_t
gpu_push_hdr(uint32_t sec_op, uint32_t subc, uint32_t mthd_B, uint32_t count)
{
    assert((mthd_B & 3) == 0);
    return GPU_FLD(NVC56F_DMA_SEC_OP, sec_op) | GPU_FLD(NVC56F_DMA_METHOD_COUNT, count) |
           GPU_FLD(NVC56F_DMA_METHOD_SUBCHANNEL, subc) | GPU_FLD(NVC56F_DMA_METHOD_ADDRESS, mthd_B >> 2);
}

void
gpu_push_mthd(struct gpu_push *p, uint32_t sec_op, uint32_t subc, uint32_t mthd_B, const uint32_t *data,
              uint32_t n)
{
    assert(n >= 1 && n <= GPU_PUSH_MAX_COUNT);
    if (p->count + 1 + (uint64_t)n > p->cap) {
        /* all or nothing, so a truncated buffer never ends in a header missing its data */
        p->overflow = true;
        return;
    }
    p->dw[p->count++] = gpu_push_hdr(sec_op, subc, mthd_B, n);
    for (uint32_t i = 0; i < n; i++)
        p->dw[p->count++] = data[i];
}

void
gpu_push_immd(struct gpu_push *p, uint32_t subc, uint32_t mthd_B, uint32_t data)
{
    gpu_push_dw(p, gpu_push_hdr_immd(subc, mthd_B, data));
}

void
gpu_push_set_object(struct gpu_push *p, uint32_t subc, uint32_t cls)
{
    gpu_push_mthd(p, NVC56F_DMA_SEC_OP_INC_METHOD, subc, NVC56F_SET_OBJECT,
                  (const uint32_t[]){GPU_FLD(NVC56F_SET_OBJECT_NVCLASS, cls)}, 1);
}

/* ==== Host semaphores (rm.md §5.2, §5.6) ==== */

void
gpu_push_sem(struct gpu_push *p, uint64_t va, uint64_t payload, uint32_t execute)
{
    assert((va & 3) == 0);
    /* 25 bits of upper address on C86F+; the C56F field is 8 bits: 40-bit VAs there are the
     * caller's job (rm.md §8.2). */
    PUSH_MTHD(p, NVC56F, SEM_ADDR_LO, GPU_FLD(NVC56F_SEM_ADDR_LO_OFFSET, (va & 0xFFFFFFFFu) >> 2),
              GPU_FLD(NVC86F_SEM_ADDR_HI_OFFSET, va >> 32), (uint32_t)payload, (uint32_t)(payload >> 32),
              execute);
}

void
gpu_push_sem_release(struct gpu_push *p, uint64_t va, uint64_t value, bool timestamp)
{
    assert((va & 7) == 0);
    uint32_t exec = GPU_FLD_DEF(NVC56F_SEM_EXECUTE, OPERATION, RELEASE) |
                    GPU_FLD(NVC56F_SEM_EXECUTE_RELEASE_WFI, 1) |
                    GPU_FLD_DEF(NVC56F_SEM_EXECUTE, PAYLOAD_SIZE, 64BIT) |
                    GPU_FLD(NVC56F_SEM_EXECUTE_RELEASE_TIMESTAMP, timestamp);
    gpu_push_sem(p, va, value, exec);
}

void
gpu_push_sem_acquire_geq(struct gpu_push *p, uint64_t va, uint64_t value)
{
    assert((va & 7) == 0);
    /* circular >=: (int64)(mem - value) >= 0, so a timeline survives wrap (rm.md §5.2) */
    uint32_t exec = GPU_FLD_DEF(NVC56F_SEM_EXECUTE, OPERATION, ACQ_CIRC_GEQ) |
                    GPU_FLD_DEF(NVC56F_SEM_EXECUTE, PAYLOAD_SIZE, 64BIT);
    gpu_push_sem(p, va, value, exec);
}

void
gpu_push_non_stall_interrupt(struct gpu_push *p)
{
    PUSH_MTHD(p, NVC56F, NON_STALL_INTERRUPT, 0);
}

void
gpu_push_wfi(struct gpu_push *p)
{
    PUSH_MTHD(p, NVC56F, WFI, GPU_FLD_DEF(NVC56F_WFI, SCOPE, ALL));
}

/* ==== Compute (rm.md §5.3, §5.5) ==== */

void
gpu_push_compute_init(struct gpu_push *p, uint32_t compute_cls, uint64_t local_window_va,
                      uint64_t shared_window_va)
{
    gpu_push_set_object(p, GPU_SUBC_COMPUTE, compute_cls);
    /* upper word first for windows (nvgpu.md §6.1 operand-order note) */
    PUSH_MTHD(p, NVC6C0, SET_SHADER_LOCAL_MEMORY_WINDOW_A,
              GPU_FLD(NVC6C0_SET_SHADER_LOCAL_MEMORY_WINDOW_A_BASE_ADDRESS_UPPER, local_window_va >> 32),
              (uint32_t)local_window_va);
    PUSH_MTHD(p, NVC6C0, SET_SHADER_SHARED_MEMORY_WINDOW_A,
              GPU_FLD(NVC6C0_SET_SHADER_SHARED_MEMORY_WINDOW_A_BASE_ADDRESS_UPPER, shared_window_va >> 32),
              (uint32_t)shared_window_va);
}

void
gpu_push_compute_local_memory(struct gpu_push *p, uint64_t backing_va, uint64_t bytes_per_tpc,
                              uint32_t max_sm_count)
{
    PUSH_MTHD(p, NVC6C0, SET_SHADER_LOCAL_MEMORY_A,
              GPU_FLD(NVC6C0_SET_SHADER_LOCAL_MEMORY_A_ADDRESS_UPPER, backing_va >> 32),
              (uint32_t)backing_va);
    PUSH_MTHD(p, NVC6C0, SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A,
              GPU_FLD(NVC6C0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A_SIZE_UPPER, bytes_per_tpc >> 32),
              (uint32_t)bytes_per_tpc,
              GPU_FLD(NVC6C0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_C_MAX_SM_COUNT, max_sm_count));
}

void
gpu_push_invalidate_shader_caches(struct gpu_push *p, bool wait_for_idle)
{
    if (wait_for_idle)
        PUSH_MTHD(p, NVC6C0, INVALIDATE_SHADER_CACHES,
                  GPU_FLD(NVC6C0_INVALIDATE_SHADER_CACHES_INSTRUCTION, 1) |
                      GPU_FLD(NVC6C0_INVALIDATE_SHADER_CACHES_DATA, 1) |
                      GPU_FLD(NVC6C0_INVALIDATE_SHADER_CACHES_CONSTANT, 1));
    else
        gpu_push_invalidate_shader_caches_no_wfi(p, 7);
}

void
gpu_push_invalidate_shader_caches_no_wfi(struct gpu_push *p, uint32_t mask)
{
    PUSH_MTHD(p, NVC6C0, INVALIDATE_SHADER_CACHES_NO_WFI,
              GPU_FLD(NVC6C0_INVALIDATE_SHADER_CACHES_NO_WFI_INSTRUCTION, mask & 1) |
                  GPU_FLD(NVC6C0_INVALIDATE_SHADER_CACHES_NO_WFI_GLOBAL_DATA, (mask >> 1) & 1) |
                  GPU_FLD(NVC6C0_INVALIDATE_SHADER_CACHES_NO_WFI_CONSTANT, (mask >> 2) & 1));
}

void
gpu_push_launch(struct gpu_push *p, uint64_t qmd_va)
{
    assert((qmd_va & 0xFF) == 0 && qmd_va < (1ull << 40)); /* rm.md §6.4 */
    PUSH_MTHD(p, NVC6C0, SEND_PCAS_A, GPU_FLD(NVC6C0_SEND_PCAS_A_QMD_ADDRESS_SHIFTED8, qmd_va >> 8));
    /* PREFETCH_SCHEDULE: tinygrad's choice, verified on H200 and Orin (rm.md §0 item 4) */
    PUSH_MTHD(p, NVC6C0, SEND_SIGNALING_PCAS2_B,
              GPU_FLD_DEF(NVC6C0_SEND_SIGNALING_PCAS2_B, PCAS_ACTION, PREFETCH_SCHEDULE));
}

/* ==== Copy engine (rm.md §5.4) ==== */

void
gpu_push_copy_init(struct gpu_push *p, uint32_t copy_cls)
{
    gpu_push_set_object(p, GPU_SUBC_COPY, copy_cls);
}

uint32_t
gpu_push_ce_copy_dw(uint64_t size_B)
{
    uint64_t chunks = (size_B + GPU_CE_MAX_LINE_B - 1) / GPU_CE_MAX_LINE_B;
    return (uint32_t)(chunks * GPU_PUSH_CE_COPY_CHUNK_DW);
}

static void
ce_offsets(struct gpu_push *p, uint64_t dst_va, uint64_t src_va)
{
    /* upper before lower (rm.md §5.4); 25-bit uppers on C8B5+, 17-bit on C6B5 (caller's job) */
    PUSH_MTHD(p, NVC6B5, OFFSET_IN_UPPER, GPU_FLD(NVC8B5_OFFSET_IN_UPPER_UPPER, src_va >> 32),
              (uint32_t)src_va, GPU_FLD(NVC8B5_OFFSET_OUT_UPPER_UPPER, dst_va >> 32), (uint32_t)dst_va);
}

static uint32_t
ce_copy_launch(void)
{
    return GPU_FLD_DEF(NVC6B5_LAUNCH_DMA, DATA_TRANSFER_TYPE, NON_PIPELINED) |
           GPU_FLD_DEF(NVC6B5_LAUNCH_DMA, SRC_MEMORY_LAYOUT, PITCH) |
           GPU_FLD_DEF(NVC6B5_LAUNCH_DMA, DST_MEMORY_LAYOUT, PITCH);
}

void
gpu_push_ce_copy_chunk_patch(uint32_t *chunk, uint64_t dst_va, uint64_t src_va, uint32_t size_B)
{
    /* A chunk is [OFFSET_IN_UPPER header, src hi, src lo, dst hi, dst lo] [LINE_LENGTH_IN
     * header, length] [LAUNCH_DMA header, launch word]: see gpu_push_ce_copy. */
    chunk[1] = GPU_FLD(NVC8B5_OFFSET_IN_UPPER_UPPER, src_va >> 32);
    chunk[2] = (uint32_t)src_va;
    chunk[3] = GPU_FLD(NVC8B5_OFFSET_OUT_UPPER_UPPER, dst_va >> 32);
    chunk[4] = (uint32_t)dst_va;
    chunk[6] = size_B;
    chunk[8] = size_B ? ce_copy_launch() : GPU_FLD_DEF(NVC6B5_LAUNCH_DMA, DATA_TRANSFER_TYPE, NONE);
}

void
gpu_push_ce_copy(struct gpu_push *p, uint64_t dst_va, uint64_t src_va, uint64_t size_B)
{
    const uint32_t launch = ce_copy_launch();
    while (size_B) {
        uint32_t n = size_B > GPU_CE_MAX_LINE_B ? GPU_CE_MAX_LINE_B : (uint32_t)size_B;
        ce_offsets(p, dst_va, src_va);
        PUSH_MTHD(p, NVC6B5, LINE_LENGTH_IN, n);
        PUSH_MTHD(p, NVC6B5, LAUNCH_DMA, launch);
        dst_va += n;
        src_va += n;
        size_B -= n;
    }
}

void
gpu_push_ce_copy_2d(struct gpu_push *p, uint64_t dst_va, uint32_t dst_pitch_B, uint64_t src_va,
                    uint32_t src_pitch_B, uint32_t width_B, uint32_t height)
{
    if (width_B == 0 || height == 0)
        return;
    ce_offsets(p, dst_va, src_va);
    PUSH_MTHD(p, NVC6B5, PITCH_IN, src_pitch_B, dst_pitch_B, width_B, height);
    PUSH_MTHD(p, NVC6B5, LAUNCH_DMA,
              GPU_FLD_DEF(NVC6B5_LAUNCH_DMA, DATA_TRANSFER_TYPE, NON_PIPELINED) |
                  GPU_FLD_DEF(NVC6B5_LAUNCH_DMA, SRC_MEMORY_LAYOUT, PITCH) |
                  GPU_FLD_DEF(NVC6B5_LAUNCH_DMA, DST_MEMORY_LAYOUT, PITCH) |
                  GPU_FLD(NVC6B5_LAUNCH_DMA_MULTI_LINE_ENABLE, 1));
}

enum hcq_status
gpu_push_ce_sem_release(struct gpu_push *p, uint32_t copy_cls, uint64_t va, uint64_t value, bool timestamp)
{
    bool payload64 = copy_cls >= HOPPER_DMA_COPY_A; /* SET_SEMAPHORE_PAYLOAD_UPPER: C8B5+ */
    if (!payload64 && value > 0xFFFFFFFFu)
        return hcq_err(HCQ_ERR_UNSUPPORTED,
                       "gpu_push_ce_sem_release: copy class 0x%04x releases 32-bit payloads: "
                       "observed value 0x%llx (use a host semaphore)",
                       copy_cls, (unsigned long long)value);
    assert((va & 7) == 0);
    if (payload64)
        PUSH_MTHD(p, NVC6B5, SET_SEMAPHORE_A, GPU_FLD(NVC8B5_SET_SEMAPHORE_A_UPPER, va >> 32), (uint32_t)va,
                  (uint32_t)value, (uint32_t)(value >> 32));
    else
        PUSH_MTHD(p, NVC6B5, SET_SEMAPHORE_A, GPU_FLD(NVC6B5_SET_SEMAPHORE_A_UPPER, va >> 32), (uint32_t)va,
                  (uint32_t)value);
    uint32_t launch = GPU_FLD_DEF(NVC6B5_LAUNCH_DMA, DATA_TRANSFER_TYPE, NONE) |
                      GPU_FLD(NVC6B5_LAUNCH_DMA_FLUSH_ENABLE, 1) |
                      GPU_FLD(NVC6B5_LAUNCH_DMA_SEMAPHORE_TYPE,
                              timestamp ? NVC6B5_LAUNCH_DMA_SEMAPHORE_TYPE_RELEASE_FOUR_WORD_SEMAPHORE
                                        : NVC6B5_LAUNCH_DMA_SEMAPHORE_TYPE_RELEASE_ONE_WORD_SEMAPHORE);
    if (payload64)
        launch |= GPU_FLD_DEF(NVC8B5_LAUNCH_DMA, SEMAPHORE_PAYLOAD_SIZE, 64_BIT);
    PUSH_MTHD(p, NVC6B5, LAUNCH_DMA, launch);
    return HCQ_OK;
}
