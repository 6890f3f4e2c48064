/* SPDX-License-Identifier: MIT */
/*
 * gpu_decode.c - pushbuffer decoding: the method-write iterator the emulator runs on and
 * the text decoder behind HCQ_DEBUG=push_dump and the golden tests. Every encoder of
 * gpu_push.c has its decoder here (STYLE 2.6). Layer: gpu (pure).
 * Facts: docs/hw/rm.md §4.3, §4.5, §5; docs/hw/nvgpu.md §6.1.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "gpu_decode.h"
#include "gpu_push.h"
#include "util_text.h"

/* ==== Iterator ==== */

void
gpu_push_iter_init(struct gpu_push_iter *it, const uint32_t *dw, uint32_t count)
{
    memset(it, 0, sizeof *it);
    it->dw = dw;
    it->count = count;
}

static bool
iter_fail(struct gpu_push_iter *it, const char *fmt, uint32_t a, uint32_t b)
{
    it->status = HCQ_ERR_FORMAT;
    snprintf(it->error, sizeof it->error, fmt, a, b);
    return false;
}

bool
gpu_push_iter_next(struct gpu_push_iter *it, struct gpu_push_write *w)
{
    if (it->status != HCQ_OK)
        return false;
    if (it->left == 0) {
        if (it->pos >= it->count)
            return false;
        uint32_t hdr = it->dw[it->pos];
        it->hdr_pos = it->pos++;
        it->sec_op = GPU_FLD_GET(NVC56F_DMA_SEC_OP, hdr);
        it->subc = GPU_FLD_GET(NVC56F_DMA_METHOD_SUBCHANNEL, hdr);
        it->mthd_B = GPU_FLD_GET(NVC56F_DMA_METHOD_ADDRESS, hdr) << 2;
        it->index = 0;
        switch (it->sec_op) {
        case NVC56F_DMA_SEC_OP_INC_METHOD:
        case NVC56F_DMA_SEC_OP_NON_INC_METHOD:
        case NVC56F_DMA_SEC_OP_ONE_INC:
            it->left = GPU_FLD_GET(NVC56F_DMA_METHOD_COUNT, hdr);
            if (it->left == 0)
                return iter_fail(it, "dword %u: header 0x%08x has count 0", it->hdr_pos, hdr);
            if (it->left > it->count - it->pos)
                return iter_fail(it, "dword %u: header 0x%08x runs past the end", it->hdr_pos, hdr);
            break;
        case NVC56F_DMA_SEC_OP_IMMD_DATA_METHOD:
            *w = (struct gpu_push_write){
                .subc = it->subc,
                .mthd_B = it->mthd_B,
                .data = GPU_FLD_GET(NVC56F_DMA_IMMD_DATA, hdr),
                .sec_op = it->sec_op,
                .hdr_pos = it->hdr_pos,
                .index = 0,
            };
            return true;
        case NVC56F_DMA_SEC_OP_END_PB_SEGMENT:
            it->pos = it->count;
            return false;
        default:
            return iter_fail(it, "dword %u: header 0x%08x has a reserved SEC_OP", it->hdr_pos, hdr);
        }
    }
    uint32_t m = it->mthd_B;
    if (it->sec_op == NVC56F_DMA_SEC_OP_INC_METHOD)
        m += 4 * it->index;
    else if (it->sec_op == NVC56F_DMA_SEC_OP_ONE_INC && it->index > 0)
        m += 4;
    *w = (struct gpu_push_write){
        .subc = it->subc,
        .mthd_B = m,
        .data = it->dw[it->pos++],
        .sec_op = it->sec_op,
        .hdr_pos = it->hdr_pos,
        .index = it->index,
    };
    it->index++;
    it->left--;
    return true;
}

/* ==== Names ==== */

struct name {
    uint32_t v;
    const char *s;
};

static const struct name host_mthds[] = {
    {NVC56F_SET_OBJECT, "SET_OBJECT"},
    {NVC56F_NOP, "NOP"},
    {NVC56F_NON_STALL_INTERRUPT, "NON_STALL_INTERRUPT"},
    {NVC56F_FB_FLUSH, "FB_FLUSH"},
    {NVC56F_MEM_OP_A, "MEM_OP_A"},
    {NVC56F_MEM_OP_B, "MEM_OP_B"},
    {NVC56F_MEM_OP_C, "MEM_OP_C"},
    {NVC56F_MEM_OP_D, "MEM_OP_D"},
    {NVC56F_SET_REFERENCE, "SET_REFERENCE"},
    {NVC56F_SEM_ADDR_LO, "SEM_ADDR_LO"},
    {NVC56F_SEM_ADDR_HI, "SEM_ADDR_HI"},
    {NVC56F_SEM_PAYLOAD_LO, "SEM_PAYLOAD_LO"},
    {NVC56F_SEM_PAYLOAD_HI, "SEM_PAYLOAD_HI"},
    {NVC56F_SEM_EXECUTE, "SEM_EXECUTE"},
    {NVC56F_WFI, "WFI"},
    {NVC56F_YIELD, "YIELD"},
};

static const struct name compute_mthds[] = {
    {NVC6C0_NO_OPERATION, "NO_OPERATION"},
    {NVC6C0_WAIT_FOR_IDLE, "WAIT_FOR_IDLE"},
    {NVC6C0_PM_TRIGGER, "PM_TRIGGER"},
    {NVC6C0_SET_QMD_VIRTUALIZATION_BASE_A, "SET_QMD_VIRTUALIZATION_BASE_A"},
    {NVC6C0_SET_QMD_VIRTUALIZATION_BASE_B, "SET_QMD_VIRTUALIZATION_BASE_B"},
    {NVC6C0_INVALIDATE_SHADER_CACHES, "INVALIDATE_SHADER_CACHES"},
    {NVC6C0_SET_QMD_VERSION, "SET_QMD_VERSION"},
    {NVC6C0_INVALIDATE_SKED_CACHES, "INVALIDATE_SKED_CACHES"},
    {NVC6C0_SET_SHADER_SHARED_MEMORY_WINDOW_A, "SET_SHADER_SHARED_MEMORY_WINDOW_A"},
    {NVC6C0_SET_SHADER_SHARED_MEMORY_WINDOW_B, "SET_SHADER_SHARED_MEMORY_WINDOW_B"},
    {NVC6C0_SET_CWD_SLOT_COUNT, "SET_CWD_SLOT_COUNT"},
    {NVC6C0_SEND_PCAS_A, "SEND_PCAS_A"},
    {NVC6C0_SEND_PCAS_B, "SEND_PCAS_B"},
    {NVC6C0_SEND_SIGNALING_PCAS_B, "SEND_SIGNALING_PCAS_B"},
    {NVC6C0_SEND_SIGNALING_PCAS2_B, "SEND_SIGNALING_PCAS2_B"},
    {NVC6C0_SET_SKED_CACHE_CONTROL, "SET_SKED_CACHE_CONTROL"},
    {NVC6C0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A, "SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A"},
    {NVC6C0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_B, "SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_B"},
    {NVC6C0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_C, "SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_C"},
    {NVC6C0_SET_SPA_VERSION, "SET_SPA_VERSION"},
    {NVC6C0_SET_INLINE_QMD_ADDRESS_A, "SET_INLINE_QMD_ADDRESS_A"},
    {NVC6C0_SET_INLINE_QMD_ADDRESS_B, "SET_INLINE_QMD_ADDRESS_B"},
    {NVC6C0_SET_SHADER_LOCAL_MEMORY_A, "SET_SHADER_LOCAL_MEMORY_A"},
    {NVC6C0_SET_SHADER_LOCAL_MEMORY_B, "SET_SHADER_LOCAL_MEMORY_B"},
    {NVC6C0_SET_SHADER_LOCAL_MEMORY_WINDOW_A, "SET_SHADER_LOCAL_MEMORY_WINDOW_A"},
    {NVC6C0_SET_SHADER_LOCAL_MEMORY_WINDOW_B, "SET_SHADER_LOCAL_MEMORY_WINDOW_B"},
    {NVC6C0_SET_SHADER_CACHE_CONTROL, "SET_SHADER_CACHE_CONTROL"},
    {NVC6C0_SET_SHADER_EXCEPTIONS, "SET_SHADER_EXCEPTIONS"},
    {NVC6C0_INVALIDATE_SHADER_CACHES_NO_WFI, "INVALIDATE_SHADER_CACHES_NO_WFI"},
    {NVC6C0_SET_REPORT_SEMAPHORE_A, "SET_REPORT_SEMAPHORE_A"},
    {NVC6C0_SET_REPORT_SEMAPHORE_B, "SET_REPORT_SEMAPHORE_B"},
    {NVC6C0_SET_REPORT_SEMAPHORE_C, "SET_REPORT_SEMAPHORE_C"},
    {NVC6C0_SET_REPORT_SEMAPHORE_D, "SET_REPORT_SEMAPHORE_D"},
};

static const struct name compute_hopper_mthds[] = {
    {NVCBC0_SET_REPORT_SEMAPHORE_PAYLOAD_LOWER, "SET_REPORT_SEMAPHORE_PAYLOAD_LOWER"},
    {NVCBC0_SET_REPORT_SEMAPHORE_PAYLOAD_UPPER, "SET_REPORT_SEMAPHORE_PAYLOAD_UPPER"},
    {NVCBC0_SET_REPORT_SEMAPHORE_ADDRESS_LOWER, "SET_REPORT_SEMAPHORE_ADDRESS_LOWER"},
    {NVCBC0_SET_REPORT_SEMAPHORE_ADDRESS_UPPER, "SET_REPORT_SEMAPHORE_ADDRESS_UPPER"},
};

static const struct name copy_mthds[] = {
    {NVC6B5_NOP, "NOP"},
    {NVC6B5_SET_SEMAPHORE_A, "SET_SEMAPHORE_A"},
    {NVC6B5_SET_SEMAPHORE_B, "SET_SEMAPHORE_B"},
    {NVC6B5_SET_SEMAPHORE_PAYLOAD, "SET_SEMAPHORE_PAYLOAD"},
    {NVC6B5_SET_SRC_PHYS_MODE, "SET_SRC_PHYS_MODE"},
    {NVC6B5_SET_DST_PHYS_MODE, "SET_DST_PHYS_MODE"},
    {NVC6B5_LAUNCH_DMA, "LAUNCH_DMA"},
    {NVC6B5_OFFSET_IN_UPPER, "OFFSET_IN_UPPER"},
    {NVC6B5_OFFSET_IN_LOWER, "OFFSET_IN_LOWER"},
    {NVC6B5_OFFSET_OUT_UPPER, "OFFSET_OUT_UPPER"},
    {NVC6B5_OFFSET_OUT_LOWER, "OFFSET_OUT_LOWER"},
    {NVC6B5_PITCH_IN, "PITCH_IN"},
    {NVC6B5_PITCH_OUT, "PITCH_OUT"},
    {NVC6B5_LINE_LENGTH_IN, "LINE_LENGTH_IN"},
    {NVC6B5_LINE_COUNT, "LINE_COUNT"},
};

static const struct name copy_hopper_mthds[] = {
    {NVC8B5_SET_SEMAPHORE_PAYLOAD_UPPER, "SET_SEMAPHORE_PAYLOAD_UPPER"},
};

static const struct name class_names[] = {
    {AMPERE_CHANNEL_GPFIFO_A, "AMPERE_CHANNEL_GPFIFO_A"},
    {AMPERE_CHANNEL_GPFIFO_B, "AMPERE_CHANNEL_GPFIFO_B"},
    {HOPPER_CHANNEL_GPFIFO_A, "HOPPER_CHANNEL_GPFIFO_A"},
    {BLACKWELL_CHANNEL_GPFIFO_A, "BLACKWELL_CHANNEL_GPFIFO_A"},
    {BLACKWELL_CHANNEL_GPFIFO_B, "BLACKWELL_CHANNEL_GPFIFO_B"},
    {AMPERE_COMPUTE_A, "AMPERE_COMPUTE_A"},
    {AMPERE_COMPUTE_B, "AMPERE_COMPUTE_B"},
    {ADA_COMPUTE_A, "ADA_COMPUTE_A"},
    {HOPPER_COMPUTE_A, "HOPPER_COMPUTE_A"},
    {BLACKWELL_COMPUTE_A, "BLACKWELL_COMPUTE_A"},
    {BLACKWELL_COMPUTE_B, "BLACKWELL_COMPUTE_B"},
    {AMPERE_DMA_COPY_A, "AMPERE_DMA_COPY_A"},
    {AMPERE_DMA_COPY_B, "AMPERE_DMA_COPY_B"},
    {HOPPER_DMA_COPY_A, "HOPPER_DMA_COPY_A"},
    {BLACKWELL_DMA_COPY_A, "BLACKWELL_DMA_COPY_A"},
    {BLACKWELL_DMA_COPY_B, "BLACKWELL_DMA_COPY_B"},
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static const char *
name_find(const struct name *t, size_t n, uint32_t v)
{
    for (size_t i = 0; i < n; i++)
        if (t[i].v == v)
            return t[i].s;
    return NULL;
}

char
gpu_decode_class_kind(uint32_t cls)
{
    switch (cls & 0xFF) {
    case 0x6F:
        return 'h';
    case 0xC0:
        return 'c';
    case 0xB5:
        return 'd';
    default:
        return 0;
    }
}

const char *
gpu_decode_mthd_name(uint32_t cls, uint32_t mthd_B)
{
    if (mthd_B < 0x100) /* host methods on any subchannel (rm.md §4.5) */
        return name_find(host_mthds, COUNT(host_mthds), mthd_B);
    const char *s = NULL;
    switch (gpu_decode_class_kind(cls)) {
    case 'c':
        s = name_find(compute_mthds, COUNT(compute_mthds), mthd_B);
        if (!s && cls >= HOPPER_COMPUTE_A)
            s = name_find(compute_hopper_mthds, COUNT(compute_hopper_mthds), mthd_B);
        break;
    case 'd':
        s = name_find(copy_mthds, COUNT(copy_mthds), mthd_B);
        if (!s && cls >= HOPPER_DMA_COPY_A)
            s = name_find(copy_hopper_mthds, COUNT(copy_hopper_mthds), mthd_B);
        break;
    default:
        break;
    }
    return s;
}

/* ==== Text ==== */

void
gpu_decode_ctx_init(struct gpu_decode_ctx *c, const struct hcq_arch *arch)
{
    memset(c, 0, sizeof *c);
    if (!arch)
        return;
    c->gpfifo_cls = arch->gpfifo_cls;
    c->subc_cls[GPU_SUBC_COMPUTE] = arch->compute_cls;
    c->subc_cls[GPU_SUBC_COPY] = arch->copy_cls;
}

static const char *const sem_ops[8] = {"ACQUIRE", "RELEASE", "ACQ_STRICT_GEQ", "ACQ_CIRC_GEQ",
                                       "ACQ_AND", "ACQ_NOR", "REDUCTION",      "7"};
static const char *const pcas_actions[16] = {"NOP",
                                             "INVALIDATE",
                                             "SCHEDULE",
                                             "INVALIDATE_COPY_SCHEDULE",
                                             "4",
                                             "5",
                                             "INCREMENT_PUT",
                                             "DECREMENT_DEPENDENCE",
                                             "PREFETCH",
                                             "PREFETCH_SCHEDULE",
                                             "INVALIDATE_PREFETCH_COPY_SCHEDULE",
                                             "INVALIDATE_PREFETCH_COPY_FORCE_REQUIRE_SCHEDULING",
                                             "INCREMENT_DEPENDENCE",
                                             "INCREMENT_CWD_REF_COUNTER",
                                             "14",
                                             "15"};
static const char *const ce_xfer[4] = {"NONE", "PIPELINED", "NON_PIPELINED", "3"};
static const char *const ce_sem[4] = {"NONE", "RELEASE_ONE_WORD_SEMAPHORE", "RELEASE_FOUR_WORD_SEMAPHORE",
                                      "RELEASE_CONDITIONAL_INTR_SEMAPHORE"};

static void
flag(struct util_text *o, uint32_t v, const char *range_name, uint32_t hi, uint32_t lo)
{
    uint32_t f = gpu_bits_get32(hi, lo, v);
    if (f == 1 && hi == lo)
        util_text_printf(o, " %s", range_name);
    else if (f)
        util_text_printf(o, " %s=%u", range_name, f);
}
#define FLAG(o, v, prefix, field) flag((o), (v), #field, GPU_HI(prefix##_##field), GPU_LO(prefix##_##field))

static void
fields_sem_execute(struct util_text *o, uint32_t v)
{
    uint32_t op = GPU_FLD_GET(NVC56F_SEM_EXECUTE_OPERATION, v);
    util_text_printf(o, " OPERATION=%s", sem_ops[op]);
    FLAG(o, v, NVC56F_SEM_EXECUTE, ACQUIRE_SWITCH_TSG);
    FLAG(o, v, NVC56F_SEM_EXECUTE, RELEASE_WFI);
    util_text_printf(o, " PAYLOAD_SIZE=%s",
                     GPU_FLD_GET(NVC56F_SEM_EXECUTE_PAYLOAD_SIZE, v) ? "64BIT" : "32BIT");
    FLAG(o, v, NVC56F_SEM_EXECUTE, RELEASE_TIMESTAMP);
    FLAG(o, v, NVC56F_SEM_EXECUTE, REDUCTION);
    FLAG(o, v, NVC56F_SEM_EXECUTE, REDUCTION_FORMAT);
    uint32_t known = 0x7u | 1u << 12 | 1u << 20 | 1u << 24 | 1u << 25 | 0xFu << 27 | 1u << 31;
    if (v & ~known)
        util_text_printf(o, " UNKNOWN_BITS=0x%08x", v & ~known);
}

static void
fields_launch_dma(struct util_text *o, uint32_t cls, uint32_t v)
{
    util_text_printf(o, " DATA_TRANSFER_TYPE=%s",
                     ce_xfer[GPU_FLD_GET(NVC6B5_LAUNCH_DMA_DATA_TRANSFER_TYPE, v)]);
    FLAG(o, v, NVC6B5_LAUNCH_DMA, FLUSH_ENABLE);
    uint32_t st = GPU_FLD_GET(NVC6B5_LAUNCH_DMA_SEMAPHORE_TYPE, v);
    if (st)
        util_text_printf(o, " SEMAPHORE_TYPE=%s", ce_sem[st]);
    FLAG(o, v, NVC6B5_LAUNCH_DMA, INTERRUPT_TYPE);
    util_text_printf(o, " SRC_MEMORY_LAYOUT=%s",
                     GPU_FLD_GET(NVC6B5_LAUNCH_DMA_SRC_MEMORY_LAYOUT, v) ? "PITCH" : "BLOCKLINEAR");
    util_text_printf(o, " DST_MEMORY_LAYOUT=%s",
                     GPU_FLD_GET(NVC6B5_LAUNCH_DMA_DST_MEMORY_LAYOUT, v) ? "PITCH" : "BLOCKLINEAR");
    FLAG(o, v, NVC6B5_LAUNCH_DMA, MULTI_LINE_ENABLE);
    FLAG(o, v, NVC6B5_LAUNCH_DMA, REMAP_ENABLE);
    FLAG(o, v, NVC6B5_LAUNCH_DMA, SRC_TYPE);
    FLAG(o, v, NVC6B5_LAUNCH_DMA, DST_TYPE);
    FLAG(o, v, NVC6B5_LAUNCH_DMA, SEMAPHORE_REDUCTION);
    FLAG(o, v, NVC6B5_LAUNCH_DMA, SEMAPHORE_REDUCTION_SIGN);
    FLAG(o, v, NVC6B5_LAUNCH_DMA, SEMAPHORE_REDUCTION_ENABLE);
    FLAG(o, v, NVC6B5_LAUNCH_DMA, FLUSH_TYPE);
    FLAG(o, v, NVC6B5_LAUNCH_DMA, DISABLE_PLC);
    uint32_t known = 0x7FFu | 0x3u << 12 | 0x3Fu << 14 | 0x3u << 25;
    if (cls >= HOPPER_DMA_COPY_A) {
        if (GPU_FLD_GET(NVC8B5_LAUNCH_DMA_SEMAPHORE_PAYLOAD_SIZE, v))
            util_text_printf(o, " SEMAPHORE_PAYLOAD_SIZE=64_BIT");
        known |= 1u << 27;
    }
    if (v & ~known)
        util_text_printf(o, " UNKNOWN_BITS=0x%08x", v & ~known);
}

static void
fields_write(struct util_text *o, uint32_t cls, uint32_t mthd_B, uint32_t v)
{
    char kind = gpu_decode_class_kind(cls);
    if (mthd_B == NVC56F_SET_OBJECT) {
        uint32_t c = GPU_FLD_GET(NVC56F_SET_OBJECT_NVCLASS, v);
        const char *n = name_find(class_names, COUNT(class_names), c);
        util_text_printf(o, " NVCLASS=%s", n ? n : "?");
        FLAG(o, v, NVC56F_SET_OBJECT, ENGINE);
    } else if (mthd_B == NVC56F_SEM_EXECUTE) {
        fields_sem_execute(o, v);
    } else if (mthd_B == NVC56F_WFI) {
        util_text_printf(o, " SCOPE=%s", GPU_FLD_GET(NVC56F_WFI_SCOPE, v) ? "ALL" : "CURRENT_SCG_TYPE");
    } else if (kind == 'c' && mthd_B == NVC6C0_SEND_SIGNALING_PCAS2_B) {
        util_text_printf(o, " PCAS_ACTION=%s",
                         pcas_actions[GPU_FLD_GET(NVC6C0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION, v)]);
        FLAG(o, v, NVC6C0_SEND_SIGNALING_PCAS2_B, SELECT);
        FLAG(o, v, NVC6C0_SEND_SIGNALING_PCAS2_B, OFFSET_MINUS_ONE);
    } else if (kind == 'c' && mthd_B == NVC6C0_SEND_PCAS_A) {
        util_text_printf(o, " QMD_VA=0x%" PRIx64, (uint64_t)v << 8);
    } else if (kind == 'c' && mthd_B == NVC6C0_INVALIDATE_SHADER_CACHES) {
        FLAG(o, v, NVC6C0_INVALIDATE_SHADER_CACHES, INSTRUCTION);
        FLAG(o, v, NVC6C0_INVALIDATE_SHADER_CACHES, LOCKS);
        FLAG(o, v, NVC6C0_INVALIDATE_SHADER_CACHES, FLUSH_DATA);
        FLAG(o, v, NVC6C0_INVALIDATE_SHADER_CACHES, DATA);
        FLAG(o, v, NVC6C0_INVALIDATE_SHADER_CACHES, CONSTANT);
    } else if (kind == 'c' && mthd_B == NVC6C0_INVALIDATE_SHADER_CACHES_NO_WFI) {
        FLAG(o, v, NVC6C0_INVALIDATE_SHADER_CACHES_NO_WFI, INSTRUCTION);
        FLAG(o, v, NVC6C0_INVALIDATE_SHADER_CACHES_NO_WFI, GLOBAL_DATA);
        FLAG(o, v, NVC6C0_INVALIDATE_SHADER_CACHES_NO_WFI, CONSTANT);
    } else if (kind == 'd' && mthd_B == NVC6B5_LAUNCH_DMA) {
        fields_launch_dma(o, cls, v);
    }
}

static const char *
sec_op_name(uint32_t sec_op)
{
    switch (sec_op) {
    case NVC56F_DMA_SEC_OP_INC_METHOD:
        return "INC";
    case NVC56F_DMA_SEC_OP_NON_INC_METHOD:
        return "NON_INC";
    case NVC56F_DMA_SEC_OP_IMMD_DATA_METHOD:
        return "IMMD";
    case NVC56F_DMA_SEC_OP_ONE_INC:
        return "ONE_INC";
    default:
        return "?";
    }
}

size_t
gpu_decode_push(struct gpu_decode_ctx *c, const uint32_t *dw, uint32_t count, char *buf, size_t size)
{
    struct util_text o = {buf, size, 0};
    if (size)
        buf[0] = '\0';
    struct gpu_push_iter it;
    struct gpu_push_write w;
    gpu_push_iter_init(&it, dw, count);
    while (gpu_push_iter_next(&it, &w)) {
        if (w.index == 0) {
            uint32_t n = w.sec_op == NVC56F_DMA_SEC_OP_IMMD_DATA_METHOD
                             ? 1
                             : GPU_FLD_GET(NVC56F_DMA_METHOD_COUNT, dw[w.hdr_pos]);
            util_text_printf(&o, "# %s subc=%u count=%u hdr=0x%08x\n", sec_op_name(w.sec_op), w.subc, n,
                             dw[w.hdr_pos]);
        }
        uint32_t cls = w.mthd_B < 0x100 ? c->gpfifo_cls : c->subc_cls[w.subc];
        const char *n = gpu_decode_mthd_name(cls, w.mthd_B);
        char name[80];
        if (n)
            snprintf(name, sizeof name, "NV%04X_%s", cls & 0xFFFF, n);
        else
            snprintf(name, sizeof name, "NV%04X_0x%04x", cls & 0xFFFF, w.mthd_B);
        util_text_printf(&o, "%-44s 0x%08x", name, w.data);
        fields_write(&o, cls, w.mthd_B, w.data);
        util_text_printf(&o, "\n");
        if (w.mthd_B == NVC56F_SET_OBJECT)
            c->subc_cls[w.subc] = GPU_FLD_GET(NVC56F_SET_OBJECT_NVCLASS, w.data);
    }
    if (it.status != HCQ_OK)
        util_text_printf(&o, "# ERROR %s\n", it.error);
    return o.len;
}

size_t
gpu_decode_gpfifo_entry(uint64_t entry, char *buf, size_t size)
{
    struct gpu_gpfifo_fields f;
    enum hcq_status st = gpu_gpfifo_entry_decode(entry, &f);
    int n = snprintf(buf, size, "GP_ENTRY 0x%016" PRIx64 " va=0x%" PRIx64 " dw=%u%s%s%s", entry, f.pb_va,
                     f.dw_count, f.subroutine ? " SUBROUTINE" : " MAIN", f.sync ? " SYNC" : "",
                     st != HCQ_OK ? " MALFORMED" : "");
    return n > 0 ? (size_t)n : 0;
}
