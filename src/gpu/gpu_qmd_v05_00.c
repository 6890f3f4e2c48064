/* SPDX-License-Identifier: MIT */
/*
 * gpu_qmd_v05_00.c - QMD version 05_00 (Blackwell, BLACKWELL_COMPUTE_A/B 0xCDC0/0xCEC0),
 * 384 bytes. Layer: gpu (pure). Field positions: docs/hw/rm.md §6.2 and §8.6.
 * NOT TESTED ON HARDWARE: written from the documented positions (tinygrad's V05_00 map);
 * the differences to V4 that matter are the shifted program address (>> 4), shared size
 * (>> 7) and local sizes (>> 4), and the relocated version/type fields. QMD_TYPE GRID_CTA
 * and PAYLOAD64B are carried over from the V4 findings (rm.md §0) by analogy.
 */
#include <string.h>

#include "gpu_qmd.h"
#include "gpu_qmd_limits.h"

static const struct gpu_qmd_limits v05_limits = {
    .name = "V05_00",
    .version = 0x0500,
    .program_va_bits = 4 + 32 + GPU_WIDTH(NVCDC0_QMDV05_00_PROGRAM_ADDRESS_UPPER_SHIFTED4),
    .program_shift = 4,
    .prefetch_va_bits = 40 + GPU_WIDTH(NVCDC0_QMDV05_00_PROGRAM_PREFETCH_ADDR_UPPER_SHIFTED),
    .shared_bits = GPU_WIDTH(NVCDC0_QMDV05_00_SHARED_MEMORY_SIZE_SHIFTED7),
    .shared_shift = 7,
    .local_bits = GPU_WIDTH(NVCDC0_QMDV05_00_SHADER_LOCAL_MEMORY_HIGH_SIZE_SHIFTED4),
    .local_shift = 4,
    .block_z_bits = GPU_WIDTH(NVCDC0_QMDV05_00_CTA_THREAD_DIMENSION2),
    .cbuf_va_bits = 6 + 32 + GPU_WIDTH(NVCDC0_QMDV05_00_CONSTANT_BUFFER_ADDR_UPPER_SHIFTED6(0)),
    .cbuf_shift = 6,
    .cbuf_prefetch = true,
    .release_va_bits = 32 + GPU_WIDTH(NVCDC0_QMDV05_00_RELEASE_SEMAPHORE0_ADDR_UPPER),
};

/* ==== Release slots (two sets of address/payload fields, control bits indexed) ==== */

static void
v05_release_write(uint32_t *q, uint32_t slot, const struct gpu_qmd_release *r)
{
    assert(slot < GPU_QMD_RELEASE_COUNT);
    QMD_SETI(q, NVCDC0_QMDV05_00, RELEASE_SEMAPHORE_ENABLE, slot, r->enable);
    QMD_SETI(q, NVCDC0_QMDV05_00, RELEASE_SEMAPHORE_STRUCTURE_SIZE, slot, r->structure_size);
    QMD_SETI(q, NVCDC0_QMDV05_00, RELEASE_SEMAPHORE_MEMBAR_TYPE, slot, r->membar_type);
    QMD_SETI(q, NVCDC0_QMDV05_00, RELEASE_SEMAPHORE_PAYLOAD64B, slot, r->payload64);
    if (slot == 0) {
        QMD_SET(q, NVCDC0_QMDV05_00, RELEASE_SEMAPHORE0_ADDR_LOWER, r->va & 0xFFFFFFFFu);
        QMD_SET(q, NVCDC0_QMDV05_00, RELEASE_SEMAPHORE0_ADDR_UPPER, r->va >> 32);
        QMD_SET(q, NVCDC0_QMDV05_00, RELEASE_SEMAPHORE0_PAYLOAD_LOWER, r->payload & 0xFFFFFFFFu);
        QMD_SET(q, NVCDC0_QMDV05_00, RELEASE_SEMAPHORE0_PAYLOAD_UPPER, r->payload >> 32);
    } else {
        QMD_SET(q, NVCDC0_QMDV05_00, RELEASE_SEMAPHORE1_ADDR_LOWER, r->va & 0xFFFFFFFFu);
        QMD_SET(q, NVCDC0_QMDV05_00, RELEASE_SEMAPHORE1_ADDR_UPPER, r->va >> 32);
        QMD_SET(q, NVCDC0_QMDV05_00, RELEASE_SEMAPHORE1_PAYLOAD_LOWER, r->payload & 0xFFFFFFFFu);
        QMD_SET(q, NVCDC0_QMDV05_00, RELEASE_SEMAPHORE1_PAYLOAD_UPPER, r->payload >> 32);
    }
}

static void
v05_release_read(const uint32_t *q, uint32_t slot, struct gpu_qmd_release *r)
{
    r->enable = QMD_GETI(q, NVCDC0_QMDV05_00, RELEASE_SEMAPHORE_ENABLE, slot);
    r->structure_size = (uint32_t)QMD_GETI(q, NVCDC0_QMDV05_00, RELEASE_SEMAPHORE_STRUCTURE_SIZE, slot);
    r->membar_type = (uint32_t)QMD_GETI(q, NVCDC0_QMDV05_00, RELEASE_SEMAPHORE_MEMBAR_TYPE, slot);
    r->payload64 = QMD_GETI(q, NVCDC0_QMDV05_00, RELEASE_SEMAPHORE_PAYLOAD64B, slot);
    if (slot == 0) {
        r->va = QMD_GET(q, NVCDC0_QMDV05_00, RELEASE_SEMAPHORE0_ADDR_LOWER) |
                QMD_GET(q, NVCDC0_QMDV05_00, RELEASE_SEMAPHORE0_ADDR_UPPER) << 32;
        r->payload = QMD_GET(q, NVCDC0_QMDV05_00, RELEASE_SEMAPHORE0_PAYLOAD_LOWER) |
                     QMD_GET(q, NVCDC0_QMDV05_00, RELEASE_SEMAPHORE0_PAYLOAD_UPPER) << 32;
    } else {
        r->va = QMD_GET(q, NVCDC0_QMDV05_00, RELEASE_SEMAPHORE1_ADDR_LOWER) |
                QMD_GET(q, NVCDC0_QMDV05_00, RELEASE_SEMAPHORE1_ADDR_UPPER) << 32;
        r->payload = QMD_GET(q, NVCDC0_QMDV05_00, RELEASE_SEMAPHORE1_PAYLOAD_LOWER) |
                     QMD_GET(q, NVCDC0_QMDV05_00, RELEASE_SEMAPHORE1_PAYLOAD_UPPER) << 32;
    }
}

static void
v05_dependent_write(uint32_t *q, const struct gpu_qmd_dependent *dep)
{
    QMD_SETI(q, NVCDC0_QMDV05_00, DEPENDENT_QMD_ENABLE, 0, dep->enable);
    QMD_SETI(q, NVCDC0_QMDV05_00, DEPENDENT_QMD_ACTION, 0, dep->action);
    QMD_SETI(q, NVCDC0_QMDV05_00, DEPENDENT_QMD_PREFETCH, 0, dep->prefetch);
    QMD_SET(q, NVCDC0_QMDV05_00, DEPENDENT_QMD0_POINTER, dep->qmd_va >> 8);
}

/* Constant buffer idx's address alone: encode writes it so, and pb_build.c's encode memo
 * rewrites it in a QMD otherwise kept (a launch like the last one
 * differs only in where its cbuf0 lies); va is 64-byte aligned (the fields hold va >> 6). */
static void
v05_cbuf_va_write(uint32_t *q, uint32_t idx, uint64_t va)
{
    QMD_SETI(q, NVCDC0_QMDV05_00, CONSTANT_BUFFER_ADDR_LOWER_SHIFTED6, idx, (va >> 6) & 0xFFFFFFFFu);
    QMD_SETI(q, NVCDC0_QMDV05_00, CONSTANT_BUFFER_ADDR_UPPER_SHIFTED6, idx, va >> 38);
}

/* ==== Encode / decode ==== */

static enum hcq_status
gpu_qmd_v05_00_encode(const struct gpu_qmd_desc *d, uint32_t *q)
{
    enum hcq_status st = gpu_qmd_check_desc(&v05_limits, d);
    if (st != HCQ_OK)
        return st;
    memset(q, 0, NVCDC0_QMDV05_00_SIZE_B);
    QMD_SET(q, NVCDC0_QMDV05_00, QMD_MAJOR_VERSION, 5);
    QMD_SET(q, NVCDC0_QMDV05_00, QMD_MINOR_VERSION, 0);
    /* Zero would be QUEUE: the launch hangs silently (rm.md §0 item 2; V5 by analogy). */
    QMD_SET(q, NVCDC0_QMDV05_00, QMD_TYPE, NVCDC0_QMDV05_00_QMD_TYPE_GRID_CTA);
    QMD_SET(q, NVCDC0_QMDV05_00, QMD_GROUP_ID, d->qmd_group_id);
    QMD_SET(q, NVCDC0_QMDV05_00, DEPENDENCE_COUNTER, d->dependence_counter);
    QMD_SET(q, NVCDC0_QMDV05_00, API_VISIBLE_CALL_LIMIT, d->api_visible_call_limit);
    QMD_SET(q, NVCDC0_QMDV05_00, SAMPLER_INDEX, d->sampler_index);
    QMD_SET(q, NVCDC0_QMDV05_00, SASS_VERSION, d->sass_version);

    QMD_SET(q, NVCDC0_QMDV05_00, PROGRAM_ADDRESS_LOWER_SHIFTED4, (d->program_va >> 4) & 0xFFFFFFFFu);
    QMD_SET(q, NVCDC0_QMDV05_00, PROGRAM_ADDRESS_UPPER_SHIFTED4, d->program_va >> 36);
    QMD_SET(q, NVCDC0_QMDV05_00, PROGRAM_PREFETCH_ADDR_LOWER_SHIFTED, (d->prefetch_va >> 8) & 0xFFFFFFFFu);
    QMD_SET(q, NVCDC0_QMDV05_00, PROGRAM_PREFETCH_ADDR_UPPER_SHIFTED, d->prefetch_va >> 40);
    QMD_SET(q, NVCDC0_QMDV05_00, PROGRAM_PREFETCH_SIZE, d->prefetch_size);

    QMD_SET(q, NVCDC0_QMDV05_00, REGISTER_COUNT, d->register_count);
    QMD_SET(q, NVCDC0_QMDV05_00, BARRIER_COUNT, d->barrier_count);
    QMD_SET(q, NVCDC0_QMDV05_00, SHARED_MEMORY_SIZE_SHIFTED7, d->shared_mem_B >> 7);
    QMD_SET(q, NVCDC0_QMDV05_00, MIN_SM_CONFIG_SHARED_MEM_SIZE, d->sm_config_min);
    QMD_SET(q, NVCDC0_QMDV05_00, TARGET_SM_CONFIG_SHARED_MEM_SIZE, d->sm_config_target);
    QMD_SET(q, NVCDC0_QMDV05_00, MAX_SM_CONFIG_SHARED_MEM_SIZE, d->sm_config_max);
    QMD_SET(q, NVCDC0_QMDV05_00, SHADER_LOCAL_MEMORY_LOW_SIZE_SHIFTED4, d->local_mem_low_B >> 4);
    QMD_SET(q, NVCDC0_QMDV05_00, SHADER_LOCAL_MEMORY_HIGH_SIZE_SHIFTED4, d->local_mem_high_B >> 4);

    QMD_SET(q, NVCDC0_QMDV05_00, INVALIDATE_TEXTURE_HEADER_CACHE,
            !!(d->invalidate & GPU_QMD_INVALIDATE_TEXTURE_HEADER));
    QMD_SET(q, NVCDC0_QMDV05_00, INVALIDATE_TEXTURE_SAMPLER_CACHE,
            !!(d->invalidate & GPU_QMD_INVALIDATE_TEXTURE_SAMPLER));
    QMD_SET(q, NVCDC0_QMDV05_00, INVALIDATE_TEXTURE_DATA_CACHE,
            !!(d->invalidate & GPU_QMD_INVALIDATE_TEXTURE_DATA));
    QMD_SET(q, NVCDC0_QMDV05_00, INVALIDATE_SHADER_DATA_CACHE,
            !!(d->invalidate & GPU_QMD_INVALIDATE_SHADER_DATA));
    QMD_SET(q, NVCDC0_QMDV05_00, INVALIDATE_INSTRUCTION_CACHE,
            !!(d->invalidate & GPU_QMD_INVALIDATE_INSTRUCTION));
    QMD_SET(q, NVCDC0_QMDV05_00, INVALIDATE_SHADER_CONSTANT_CACHE,
            !!(d->invalidate & GPU_QMD_INVALIDATE_SHADER_CONSTANT));
    QMD_SET(q, NVCDC0_QMDV05_00, CWD_MEMBAR_TYPE, d->cwd_membar_type);

    QMD_SET(q, NVCDC0_QMDV05_00, GRID_WIDTH, d->grid[0]);
    QMD_SET(q, NVCDC0_QMDV05_00, GRID_HEIGHT, d->grid[1]);
    QMD_SET(q, NVCDC0_QMDV05_00, GRID_DEPTH, d->grid[2]);
    QMD_SET(q, NVCDC0_QMDV05_00, CTA_THREAD_DIMENSION0, d->block[0]);
    QMD_SET(q, NVCDC0_QMDV05_00, CTA_THREAD_DIMENSION1, d->block[1]);
    QMD_SET(q, NVCDC0_QMDV05_00, CTA_THREAD_DIMENSION2, d->block[2]);

    for (uint32_t i = 0; i < GPU_QMD_CBUF_COUNT; i++) {
        const struct gpu_qmd_cbuf *c = &d->cbuf[i];
        v05_cbuf_va_write(q, i, c->va);
        QMD_SETI(q, NVCDC0_QMDV05_00, CONSTANT_BUFFER_SIZE_SHIFTED4, i, c->size_B >> 4);
        QMD_SETI(q, NVCDC0_QMDV05_00, CONSTANT_BUFFER_VALID, i, c->valid);
        QMD_SETI(q, NVCDC0_QMDV05_00, CONSTANT_BUFFER_INVALIDATE, i, c->invalidate);
        QMD_SETI(q, NVCDC0_QMDV05_00, CONSTANT_BUFFER_PREFETCH, i, c->prefetch);
    }
    for (uint32_t i = 0; i < GPU_QMD_RELEASE_COUNT; i++)
        v05_release_write(q, i, &d->release[i]);
    v05_dependent_write(q, &d->dependent);
    return HCQ_OK;
}

static enum hcq_status
gpu_qmd_v05_00_decode(const uint32_t *q, struct gpu_qmd_desc *d)
{
    uint32_t major = (uint32_t)QMD_GET(q, NVCDC0_QMDV05_00, QMD_MAJOR_VERSION);
    uint32_t minor = (uint32_t)QMD_GET(q, NVCDC0_QMDV05_00, QMD_MINOR_VERSION);
    enum hcq_status st = gpu_qmd_check_version(&v05_limits, major, minor);
    if (st != HCQ_OK)
        return st;
    memset(d, 0, sizeof *d);
    d->version = major << 8 | minor;
    d->qmd_type = (uint32_t)QMD_GET(q, NVCDC0_QMDV05_00, QMD_TYPE);
    d->qmd_group_id = (uint32_t)QMD_GET(q, NVCDC0_QMDV05_00, QMD_GROUP_ID);
    d->dependence_counter = (uint32_t)QMD_GET(q, NVCDC0_QMDV05_00, DEPENDENCE_COUNTER);
    d->api_visible_call_limit = (uint32_t)QMD_GET(q, NVCDC0_QMDV05_00, API_VISIBLE_CALL_LIMIT);
    d->sampler_index = (uint32_t)QMD_GET(q, NVCDC0_QMDV05_00, SAMPLER_INDEX);
    d->sass_version = (uint32_t)QMD_GET(q, NVCDC0_QMDV05_00, SASS_VERSION);

    d->program_va = QMD_GET(q, NVCDC0_QMDV05_00, PROGRAM_ADDRESS_LOWER_SHIFTED4) << 4 |
                    QMD_GET(q, NVCDC0_QMDV05_00, PROGRAM_ADDRESS_UPPER_SHIFTED4) << 36;
    d->prefetch_va = QMD_GET(q, NVCDC0_QMDV05_00, PROGRAM_PREFETCH_ADDR_LOWER_SHIFTED) << 8 |
                     QMD_GET(q, NVCDC0_QMDV05_00, PROGRAM_PREFETCH_ADDR_UPPER_SHIFTED) << 40;
    d->prefetch_size = (uint32_t)QMD_GET(q, NVCDC0_QMDV05_00, PROGRAM_PREFETCH_SIZE);

    d->register_count = (uint32_t)QMD_GET(q, NVCDC0_QMDV05_00, REGISTER_COUNT);
    d->barrier_count = (uint32_t)QMD_GET(q, NVCDC0_QMDV05_00, BARRIER_COUNT);
    d->shared_mem_B = (uint32_t)QMD_GET(q, NVCDC0_QMDV05_00, SHARED_MEMORY_SIZE_SHIFTED7) << 7;
    d->sm_config_min = (uint32_t)QMD_GET(q, NVCDC0_QMDV05_00, MIN_SM_CONFIG_SHARED_MEM_SIZE);
    d->sm_config_target = (uint32_t)QMD_GET(q, NVCDC0_QMDV05_00, TARGET_SM_CONFIG_SHARED_MEM_SIZE);
    d->sm_config_max = (uint32_t)QMD_GET(q, NVCDC0_QMDV05_00, MAX_SM_CONFIG_SHARED_MEM_SIZE);
    d->local_mem_low_B = (uint32_t)QMD_GET(q, NVCDC0_QMDV05_00, SHADER_LOCAL_MEMORY_LOW_SIZE_SHIFTED4) << 4;
    d->local_mem_high_B = (uint32_t)QMD_GET(q, NVCDC0_QMDV05_00, SHADER_LOCAL_MEMORY_HIGH_SIZE_SHIFTED4) << 4;

    d->invalidate =
        (QMD_GET(q, NVCDC0_QMDV05_00, INVALIDATE_TEXTURE_HEADER_CACHE) ? GPU_QMD_INVALIDATE_TEXTURE_HEADER
                                                                       : 0) |
        (QMD_GET(q, NVCDC0_QMDV05_00, INVALIDATE_TEXTURE_SAMPLER_CACHE) ? GPU_QMD_INVALIDATE_TEXTURE_SAMPLER
                                                                        : 0) |
        (QMD_GET(q, NVCDC0_QMDV05_00, INVALIDATE_TEXTURE_DATA_CACHE) ? GPU_QMD_INVALIDATE_TEXTURE_DATA : 0) |
        (QMD_GET(q, NVCDC0_QMDV05_00, INVALIDATE_SHADER_DATA_CACHE) ? GPU_QMD_INVALIDATE_SHADER_DATA : 0) |
        (QMD_GET(q, NVCDC0_QMDV05_00, INVALIDATE_INSTRUCTION_CACHE) ? GPU_QMD_INVALIDATE_INSTRUCTION : 0) |
        (QMD_GET(q, NVCDC0_QMDV05_00, INVALIDATE_SHADER_CONSTANT_CACHE) ? GPU_QMD_INVALIDATE_SHADER_CONSTANT
                                                                        : 0);
    d->cwd_membar_type = (uint32_t)QMD_GET(q, NVCDC0_QMDV05_00, CWD_MEMBAR_TYPE);

    d->grid[0] = (uint32_t)QMD_GET(q, NVCDC0_QMDV05_00, GRID_WIDTH);
    d->grid[1] = (uint32_t)QMD_GET(q, NVCDC0_QMDV05_00, GRID_HEIGHT);
    d->grid[2] = (uint32_t)QMD_GET(q, NVCDC0_QMDV05_00, GRID_DEPTH);
    d->block[0] = (uint32_t)QMD_GET(q, NVCDC0_QMDV05_00, CTA_THREAD_DIMENSION0);
    d->block[1] = (uint32_t)QMD_GET(q, NVCDC0_QMDV05_00, CTA_THREAD_DIMENSION1);
    d->block[2] = (uint32_t)QMD_GET(q, NVCDC0_QMDV05_00, CTA_THREAD_DIMENSION2);

    for (uint32_t i = 0; i < GPU_QMD_CBUF_COUNT; i++) {
        struct gpu_qmd_cbuf *c = &d->cbuf[i];
        c->va = QMD_GETI(q, NVCDC0_QMDV05_00, CONSTANT_BUFFER_ADDR_LOWER_SHIFTED6, i) << 6 |
                QMD_GETI(q, NVCDC0_QMDV05_00, CONSTANT_BUFFER_ADDR_UPPER_SHIFTED6, i) << 38;
        c->size_B = (uint32_t)QMD_GETI(q, NVCDC0_QMDV05_00, CONSTANT_BUFFER_SIZE_SHIFTED4, i) << 4;
        c->valid = QMD_GETI(q, NVCDC0_QMDV05_00, CONSTANT_BUFFER_VALID, i);
        c->invalidate = QMD_GETI(q, NVCDC0_QMDV05_00, CONSTANT_BUFFER_INVALIDATE, i);
        c->prefetch = (uint8_t)QMD_GETI(q, NVCDC0_QMDV05_00, CONSTANT_BUFFER_PREFETCH, i);
    }
    for (uint32_t i = 0; i < GPU_QMD_RELEASE_COUNT; i++)
        v05_release_read(q, i, &d->release[i]);
    d->dependent.enable = QMD_GETI(q, NVCDC0_QMDV05_00, DEPENDENT_QMD_ENABLE, 0);
    d->dependent.action = (uint32_t)QMD_GETI(q, NVCDC0_QMDV05_00, DEPENDENT_QMD_ACTION, 0);
    d->dependent.prefetch = QMD_GETI(q, NVCDC0_QMDV05_00, DEPENDENT_QMD_PREFETCH, 0);
    d->dependent.qmd_va = QMD_GET(q, NVCDC0_QMDV05_00, DEPENDENT_QMD0_POINTER) << 8;
    return HCQ_OK;
}

/* ==== Patchers (chaining, graph replay) ==== */

static size_t
gpu_qmd_v05_00_dump(const uint32_t *q, char *buf, size_t size)
{
    return gpu_qmd_dump(&gpu_qmd_v05_00_ops, q, buf, size);
}

static const struct gpu_qmd_field v05_fields[] = {
    GPU_QMD_F(NVCDC0_QMDV05_00, DEPENDENCE_COUNTER),
    GPU_QMD_F(NVCDC0_QMDV05_00, QMD_GROUP_ID),
    GPU_QMD_F(NVCDC0_QMDV05_00, QMD_TYPE),
    GPU_QMD_FI2(NVCDC0_QMDV05_00, RELEASE_SEMAPHORE_ENABLE),
    GPU_QMD_FI2(NVCDC0_QMDV05_00, RELEASE_SEMAPHORE_STRUCTURE_SIZE),
    GPU_QMD_FI2(NVCDC0_QMDV05_00, RELEASE_SEMAPHORE_MEMBAR_TYPE),
    GPU_QMD_FI2(NVCDC0_QMDV05_00, RELEASE_SEMAPHORE_PAYLOAD64B),
    GPU_QMD_FI2(NVCDC0_QMDV05_00, DEPENDENT_QMD_ENABLE),
    GPU_QMD_FI2(NVCDC0_QMDV05_00, DEPENDENT_QMD_ACTION),
    GPU_QMD_FI2(NVCDC0_QMDV05_00, DEPENDENT_QMD_PREFETCH),
    GPU_QMD_FI8(NVCDC0_QMDV05_00, CONSTANT_BUFFER_VALID),
    GPU_QMD_FI8(NVCDC0_QMDV05_00, CONSTANT_BUFFER_PREFETCH),
    GPU_QMD_FI8(NVCDC0_QMDV05_00, CONSTANT_BUFFER_INVALIDATE),
    GPU_QMD_F(NVCDC0_QMDV05_00, DEPENDENT_QMD0_POINTER),
    GPU_QMD_F(NVCDC0_QMDV05_00, SHADER_LOCAL_MEMORY_LOW_SIZE_SHIFTED4),
    GPU_QMD_F(NVCDC0_QMDV05_00, SASS_VERSION),
    GPU_QMD_F(NVCDC0_QMDV05_00, SHADER_LOCAL_MEMORY_HIGH_SIZE_SHIFTED4),
    GPU_QMD_F(NVCDC0_QMDV05_00, API_VISIBLE_CALL_LIMIT),
    GPU_QMD_F(NVCDC0_QMDV05_00, SAMPLER_INDEX),
    GPU_QMD_F(NVCDC0_QMDV05_00, QMD_MINOR_VERSION),
    GPU_QMD_F(NVCDC0_QMDV05_00, QMD_MAJOR_VERSION),
    GPU_QMD_F(NVCDC0_QMDV05_00, SHARED_MEMORY_SIZE_SHIFTED7),
    GPU_QMD_F(NVCDC0_QMDV05_00, INVALIDATE_TEXTURE_HEADER_CACHE),
    GPU_QMD_F(NVCDC0_QMDV05_00, INVALIDATE_TEXTURE_SAMPLER_CACHE),
    GPU_QMD_F(NVCDC0_QMDV05_00, INVALIDATE_TEXTURE_DATA_CACHE),
    GPU_QMD_F(NVCDC0_QMDV05_00, INVALIDATE_SHADER_DATA_CACHE),
    GPU_QMD_F(NVCDC0_QMDV05_00, INVALIDATE_INSTRUCTION_CACHE),
    GPU_QMD_F(NVCDC0_QMDV05_00, INVALIDATE_SHADER_CONSTANT_CACHE),
    GPU_QMD_F(NVCDC0_QMDV05_00, MIN_SM_CONFIG_SHARED_MEM_SIZE),
    GPU_QMD_F(NVCDC0_QMDV05_00, MAX_SM_CONFIG_SHARED_MEM_SIZE),
    GPU_QMD_F(NVCDC0_QMDV05_00, TARGET_SM_CONFIG_SHARED_MEM_SIZE),
    GPU_QMD_F(NVCDC0_QMDV05_00, RELEASE_SEMAPHORE0_ADDR_LOWER),
    GPU_QMD_F(NVCDC0_QMDV05_00, RELEASE_SEMAPHORE0_ADDR_UPPER),
    GPU_QMD_F(NVCDC0_QMDV05_00, RELEASE_SEMAPHORE0_PAYLOAD_LOWER),
    GPU_QMD_F(NVCDC0_QMDV05_00, RELEASE_SEMAPHORE0_PAYLOAD_UPPER),
    GPU_QMD_F(NVCDC0_QMDV05_00, RELEASE_SEMAPHORE1_ADDR_LOWER),
    GPU_QMD_F(NVCDC0_QMDV05_00, RELEASE_SEMAPHORE1_ADDR_UPPER),
    GPU_QMD_F(NVCDC0_QMDV05_00, RELEASE_SEMAPHORE1_PAYLOAD_LOWER),
    GPU_QMD_F(NVCDC0_QMDV05_00, RELEASE_SEMAPHORE1_PAYLOAD_UPPER),
    GPU_QMD_F(NVCDC0_QMDV05_00, GRID_WIDTH),
    GPU_QMD_F(NVCDC0_QMDV05_00, GRID_HEIGHT),
    GPU_QMD_F(NVCDC0_QMDV05_00, GRID_DEPTH),
    GPU_QMD_F(NVCDC0_QMDV05_00, CWD_MEMBAR_TYPE),
    GPU_QMD_F(NVCDC0_QMDV05_00, CTA_THREAD_DIMENSION0),
    GPU_QMD_F(NVCDC0_QMDV05_00, CTA_THREAD_DIMENSION1),
    GPU_QMD_F(NVCDC0_QMDV05_00, CTA_THREAD_DIMENSION2),
    GPU_QMD_F(NVCDC0_QMDV05_00, REGISTER_COUNT),
    GPU_QMD_F(NVCDC0_QMDV05_00, BARRIER_COUNT),
    GPU_QMD_F(NVCDC0_QMDV05_00, PROGRAM_ADDRESS_LOWER_SHIFTED4),
    GPU_QMD_F(NVCDC0_QMDV05_00, PROGRAM_ADDRESS_UPPER_SHIFTED4),
    GPU_QMD_F(NVCDC0_QMDV05_00, PROGRAM_PREFETCH_ADDR_LOWER_SHIFTED),
    GPU_QMD_F(NVCDC0_QMDV05_00, PROGRAM_PREFETCH_ADDR_UPPER_SHIFTED),
    GPU_QMD_F(NVCDC0_QMDV05_00, PROGRAM_PREFETCH_SIZE),
    GPU_QMD_FI8(NVCDC0_QMDV05_00, CONSTANT_BUFFER_ADDR_LOWER_SHIFTED6),
    GPU_QMD_FI8(NVCDC0_QMDV05_00, CONSTANT_BUFFER_ADDR_UPPER_SHIFTED6),
    GPU_QMD_FI8(NVCDC0_QMDV05_00, CONSTANT_BUFFER_SIZE_SHIFTED4),
};

const struct gpu_qmd_ops gpu_qmd_v05_00_ops = {
    .name = "V05_00",
    .prefix = "NVCDC0_QMDV05_00",
    .version = 0x0500,
    .size_B = NVCDC0_QMDV05_00_SIZE_B,
    .release_va_bits = 32 + GPU_WIDTH(NVCDC0_QMDV05_00_RELEASE_SEMAPHORE0_ADDR_UPPER),
    .tested_on_hw = false,
    .encode = gpu_qmd_v05_00_encode,
    .decode = gpu_qmd_v05_00_decode,
    .write_dependent = v05_dependent_write,
    .write_release = v05_release_write,
    .write_cbuf_va = v05_cbuf_va_write,
    .dump = gpu_qmd_v05_00_dump,
    .fields = v05_fields,
    .field_count = sizeof v05_fields / sizeof v05_fields[0],
};

_Static_assert(NVCDC0_QMDV05_00_SIZE_B == 96 * 4, "QMD V05_00 is 96 dwords (rm.md §6.1)");
_Static_assert(GPU_HI(NVCDC0_QMDV05_00_PROGRAM_PREFETCH_ADDR_UPPER_SHIFTED) < 8 * NVCDC0_QMDV05_00_SIZE_B,
               "QMD V05_00 fields lie inside the QMD");
