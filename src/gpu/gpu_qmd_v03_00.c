/* SPDX-License-Identifier: MIT */
/*
 * gpu_qmd_v03_00.c - QMD version 03_00 (Ampere AMPERE_COMPUTE_A/B 0xC6C0/0xC7C0, Ada
 * ADA_COMPUTE_A 0xC9C0; also Jetson Orin ga10b), 256 bytes. Layer: gpu (pure).
 * Field positions: docs/hw/rm.md §6.2 and nvgpu.md §6.4 (both from clc6c0qmd.h).
 * Hopper does not run this version (rm.md §0 item 1). QMD_VERSION (the minor) must be 0:
 * writing 3 there caused a SKED exception on Orin (nvgpu.md §6.4).
 */
#include <string.h>

#include "gpu_qmd.h"
#include "gpu_qmd_limits.h"

static const struct gpu_qmd_limits v03_limits = {
    .name = "V03_00",
    .version = 0x0300,
    .program_va_bits = 32 + GPU_WIDTH(NVC6C0_QMDV03_00_PROGRAM_ADDRESS_UPPER),
    .program_shift = 0,
    .prefetch_va_bits = 40 + GPU_WIDTH(NVC6C0_QMDV03_00_PROGRAM_PREFETCH_ADDR_UPPER_SHIFTED),
    .shared_bits = GPU_WIDTH(NVC6C0_QMDV03_00_SHARED_MEMORY_SIZE),
    .shared_shift = 0,
    .local_bits = GPU_WIDTH(NVC6C0_QMDV03_00_SHADER_LOCAL_MEMORY_HIGH_SIZE),
    .local_shift = 0,
    .block_z_bits = GPU_WIDTH(NVC6C0_QMDV03_00_CTA_THREAD_DIMENSION2),
    .cbuf_va_bits = 32 + GPU_WIDTH(NVC6C0_QMDV03_00_CONSTANT_BUFFER_ADDR_UPPER(0)),
    .cbuf_shift = 0,
    .release_va_bits = 32 + GPU_WIDTH(NVC6C0_QMDV03_00_RELEASE_ADDRESS_UPPER(0)),
};

/* ==== Release slots (two sets of address/payload fields, control bits indexed) ==== */

static void
v03_release_write(uint32_t *q, uint32_t slot, const struct gpu_qmd_release *r)
{
    assert(slot < GPU_QMD_RELEASE_COUNT);
    QMD_SETI(q, NVC6C0_QMDV03_00, RELEASE_ENABLE, slot, r->enable);
    QMD_SETI(q, NVC6C0_QMDV03_00, RELEASE_STRUCTURE_SIZE, slot, r->structure_size);
    QMD_SETI(q, NVC6C0_QMDV03_00, RELEASE_MEMBAR_TYPE, slot, r->membar_type);
    QMD_SETI(q, NVC6C0_QMDV03_00, RELEASE_PAYLOAD64B, slot, r->payload64);
    if (slot == 0) {
        QMD_SETI(q, NVC6C0_QMDV03_00, RELEASE_ADDRESS_LOWER, 0, r->va & 0xFFFFFFFFu);
        QMD_SETI(q, NVC6C0_QMDV03_00, RELEASE_ADDRESS_UPPER, 0, r->va >> 32);
        QMD_SETI(q, NVC6C0_QMDV03_00, RELEASE_PAYLOAD_LOWER, 0, r->payload & 0xFFFFFFFFu);
        QMD_SETI(q, NVC6C0_QMDV03_00, RELEASE_PAYLOAD_UPPER, 0, r->payload >> 32);
    } else {
        QMD_SETI(q, NVC6C0_QMDV03_00, RELEASE_ADDRESS_LOWER, 1, r->va & 0xFFFFFFFFu);
        QMD_SETI(q, NVC6C0_QMDV03_00, RELEASE_ADDRESS_UPPER, 1, r->va >> 32);
        QMD_SETI(q, NVC6C0_QMDV03_00, RELEASE_PAYLOAD_LOWER, 1, r->payload & 0xFFFFFFFFu);
        QMD_SETI(q, NVC6C0_QMDV03_00, RELEASE_PAYLOAD_UPPER, 1, r->payload >> 32);
    }
}

static void
v03_release_read(const uint32_t *q, uint32_t slot, struct gpu_qmd_release *r)
{
    r->enable = QMD_GETI(q, NVC6C0_QMDV03_00, RELEASE_ENABLE, slot);
    r->structure_size = (uint32_t)QMD_GETI(q, NVC6C0_QMDV03_00, RELEASE_STRUCTURE_SIZE, slot);
    r->membar_type = (uint32_t)QMD_GETI(q, NVC6C0_QMDV03_00, RELEASE_MEMBAR_TYPE, slot);
    r->payload64 = QMD_GETI(q, NVC6C0_QMDV03_00, RELEASE_PAYLOAD64B, slot);
    if (slot == 0) {
        r->va = QMD_GETI(q, NVC6C0_QMDV03_00, RELEASE_ADDRESS_LOWER, 0) |
                QMD_GETI(q, NVC6C0_QMDV03_00, RELEASE_ADDRESS_UPPER, 0) << 32;
        r->payload = QMD_GETI(q, NVC6C0_QMDV03_00, RELEASE_PAYLOAD_LOWER, 0) |
                     QMD_GETI(q, NVC6C0_QMDV03_00, RELEASE_PAYLOAD_UPPER, 0) << 32;
    } else {
        r->va = QMD_GETI(q, NVC6C0_QMDV03_00, RELEASE_ADDRESS_LOWER, 1) |
                QMD_GETI(q, NVC6C0_QMDV03_00, RELEASE_ADDRESS_UPPER, 1) << 32;
        r->payload = QMD_GETI(q, NVC6C0_QMDV03_00, RELEASE_PAYLOAD_LOWER, 1) |
                     QMD_GETI(q, NVC6C0_QMDV03_00, RELEASE_PAYLOAD_UPPER, 1) << 32;
    }
}

static void
v03_dependent_write(uint32_t *q, const struct gpu_qmd_dependent *dep)
{
    QMD_SET(q, NVC6C0_QMDV03_00, DEPENDENT_QMD_ENABLE, dep->enable);
    QMD_SET(q, NVC6C0_QMDV03_00, DEPENDENT_QMD_ACTION, dep->action);
    QMD_SET(q, NVC6C0_QMDV03_00, DEPENDENT_QMD_PREFETCH, dep->prefetch);
    QMD_SET(q, NVC6C0_QMDV03_00, DEPENDENT_QMD_POINTER, dep->qmd_va >> 8);
}

/* Constant buffer idx's address alone: encode writes it so, and pb_build.c's encode memo
 * rewrites it in a QMD otherwise kept (a launch like the last one
 * differs only in where its cbuf0 lies). */
static void
v03_cbuf_va_write(uint32_t *q, uint32_t idx, uint64_t va)
{
    QMD_SETI(q, NVC6C0_QMDV03_00, CONSTANT_BUFFER_ADDR_LOWER, idx, va & 0xFFFFFFFFu);
    QMD_SETI(q, NVC6C0_QMDV03_00, CONSTANT_BUFFER_ADDR_UPPER, idx, va >> 32);
}

/* ==== Encode / decode ==== */

static enum hcq_status
gpu_qmd_v03_00_encode(const struct gpu_qmd_desc *d, uint32_t *q)
{
    enum hcq_status st = gpu_qmd_check_desc(&v03_limits, d);
    if (st != HCQ_OK)
        return st;
    memset(q, 0, NVC6C0_QMDV03_00_SIZE_B);
    QMD_SET(q, NVC6C0_QMDV03_00, QMD_MAJOR_VERSION, 3);
    QMD_SET(q, NVC6C0_QMDV03_00, QMD_VERSION, 0);
    QMD_SET(q, NVC6C0_QMDV03_00, IS_QUEUE, 0); /* a grid (rm.md §0 item 2) */
    QMD_SET(q, NVC6C0_QMDV03_00, SM_GLOBAL_CACHING_ENABLE, d->sm_global_caching);
    QMD_SET(q, NVC6C0_QMDV03_00, QMD_GROUP_ID, d->qmd_group_id);
    QMD_SET(q, NVC6C0_QMDV03_00, DEPENDENCE_COUNTER, d->dependence_counter);
    QMD_SET(q, NVC6C0_QMDV03_00, API_VISIBLE_CALL_LIMIT, d->api_visible_call_limit);
    QMD_SET(q, NVC6C0_QMDV03_00, SAMPLER_INDEX, d->sampler_index);
    QMD_SET(q, NVC6C0_QMDV03_00, SASS_VERSION, d->sass_version);

    QMD_SET(q, NVC6C0_QMDV03_00, PROGRAM_ADDRESS_LOWER, d->program_va & 0xFFFFFFFFu);
    QMD_SET(q, NVC6C0_QMDV03_00, PROGRAM_ADDRESS_UPPER, d->program_va >> 32);
    QMD_SET(q, NVC6C0_QMDV03_00, PROGRAM_PREFETCH_ADDR_LOWER_SHIFTED, (d->prefetch_va >> 8) & 0xFFFFFFFFu);
    QMD_SET(q, NVC6C0_QMDV03_00, PROGRAM_PREFETCH_ADDR_UPPER_SHIFTED, d->prefetch_va >> 40);
    QMD_SET(q, NVC6C0_QMDV03_00, PROGRAM_PREFETCH_SIZE, d->prefetch_size);

    QMD_SET(q, NVC6C0_QMDV03_00, REGISTER_COUNT_V, d->register_count);
    QMD_SET(q, NVC6C0_QMDV03_00, BARRIER_COUNT, d->barrier_count);
    QMD_SET(q, NVC6C0_QMDV03_00, SHARED_MEMORY_SIZE, d->shared_mem_B);
    QMD_SET(q, NVC6C0_QMDV03_00, MIN_SM_CONFIG_SHARED_MEM_SIZE, d->sm_config_min);
    QMD_SET(q, NVC6C0_QMDV03_00, TARGET_SM_CONFIG_SHARED_MEM_SIZE, d->sm_config_target);
    QMD_SET(q, NVC6C0_QMDV03_00, MAX_SM_CONFIG_SHARED_MEM_SIZE, d->sm_config_max);
    QMD_SET(q, NVC6C0_QMDV03_00, SHADER_LOCAL_MEMORY_LOW_SIZE, d->local_mem_low_B);
    QMD_SET(q, NVC6C0_QMDV03_00, SHADER_LOCAL_MEMORY_HIGH_SIZE, d->local_mem_high_B);

    QMD_SET(q, NVC6C0_QMDV03_00, INVALIDATE_TEXTURE_HEADER_CACHE,
            !!(d->invalidate & GPU_QMD_INVALIDATE_TEXTURE_HEADER));
    QMD_SET(q, NVC6C0_QMDV03_00, INVALIDATE_TEXTURE_SAMPLER_CACHE,
            !!(d->invalidate & GPU_QMD_INVALIDATE_TEXTURE_SAMPLER));
    QMD_SET(q, NVC6C0_QMDV03_00, INVALIDATE_TEXTURE_DATA_CACHE,
            !!(d->invalidate & GPU_QMD_INVALIDATE_TEXTURE_DATA));
    QMD_SET(q, NVC6C0_QMDV03_00, INVALIDATE_SHADER_DATA_CACHE,
            !!(d->invalidate & GPU_QMD_INVALIDATE_SHADER_DATA));
    QMD_SET(q, NVC6C0_QMDV03_00, INVALIDATE_INSTRUCTION_CACHE,
            !!(d->invalidate & GPU_QMD_INVALIDATE_INSTRUCTION));
    QMD_SET(q, NVC6C0_QMDV03_00, INVALIDATE_SHADER_CONSTANT_CACHE,
            !!(d->invalidate & GPU_QMD_INVALIDATE_SHADER_CONSTANT));
    QMD_SET(q, NVC6C0_QMDV03_00, CWD_MEMBAR_TYPE, d->cwd_membar_type);

    QMD_SET(q, NVC6C0_QMDV03_00, CTA_RASTER_WIDTH, d->grid[0]);
    QMD_SET(q, NVC6C0_QMDV03_00, CTA_RASTER_HEIGHT, d->grid[1]);
    QMD_SET(q, NVC6C0_QMDV03_00, CTA_RASTER_DEPTH, d->grid[2]);
    QMD_SET(q, NVC6C0_QMDV03_00, CTA_THREAD_DIMENSION0, d->block[0]);
    QMD_SET(q, NVC6C0_QMDV03_00, CTA_THREAD_DIMENSION1, d->block[1]);
    QMD_SET(q, NVC6C0_QMDV03_00, CTA_THREAD_DIMENSION2, d->block[2]);

    for (uint32_t i = 0; i < GPU_QMD_CBUF_COUNT; i++) {
        const struct gpu_qmd_cbuf *c = &d->cbuf[i];
        v03_cbuf_va_write(q, i, c->va);
        QMD_SETI(q, NVC6C0_QMDV03_00, CONSTANT_BUFFER_SIZE_SHIFTED4, i, c->size_B >> 4);
        QMD_SETI(q, NVC6C0_QMDV03_00, CONSTANT_BUFFER_VALID, i, c->valid);
        QMD_SETI(q, NVC6C0_QMDV03_00, CONSTANT_BUFFER_INVALIDATE, i, c->invalidate);
    }
    for (uint32_t i = 0; i < GPU_QMD_RELEASE_COUNT; i++)
        v03_release_write(q, i, &d->release[i]);
    v03_dependent_write(q, &d->dependent);
    return HCQ_OK;
}

static enum hcq_status
gpu_qmd_v03_00_decode(const uint32_t *q, struct gpu_qmd_desc *d)
{
    uint32_t major = (uint32_t)QMD_GET(q, NVC6C0_QMDV03_00, QMD_MAJOR_VERSION);
    uint32_t minor = (uint32_t)QMD_GET(q, NVC6C0_QMDV03_00, QMD_VERSION);
    enum hcq_status st = gpu_qmd_check_version(&v03_limits, major, minor);
    if (st != HCQ_OK)
        return st;
    memset(d, 0, sizeof *d);
    d->version = major << 8 | minor;
    d->qmd_type = (uint32_t)QMD_GET(q, NVC6C0_QMDV03_00, IS_QUEUE);
    d->sm_global_caching = QMD_GET(q, NVC6C0_QMDV03_00, SM_GLOBAL_CACHING_ENABLE);
    d->qmd_group_id = (uint32_t)QMD_GET(q, NVC6C0_QMDV03_00, QMD_GROUP_ID);
    d->dependence_counter = (uint32_t)QMD_GET(q, NVC6C0_QMDV03_00, DEPENDENCE_COUNTER);
    d->api_visible_call_limit = (uint32_t)QMD_GET(q, NVC6C0_QMDV03_00, API_VISIBLE_CALL_LIMIT);
    d->sampler_index = (uint32_t)QMD_GET(q, NVC6C0_QMDV03_00, SAMPLER_INDEX);
    d->sass_version = (uint32_t)QMD_GET(q, NVC6C0_QMDV03_00, SASS_VERSION);

    d->program_va = QMD_GET(q, NVC6C0_QMDV03_00, PROGRAM_ADDRESS_LOWER) |
                    QMD_GET(q, NVC6C0_QMDV03_00, PROGRAM_ADDRESS_UPPER) << 32;
    d->prefetch_va = QMD_GET(q, NVC6C0_QMDV03_00, PROGRAM_PREFETCH_ADDR_LOWER_SHIFTED) << 8 |
                     QMD_GET(q, NVC6C0_QMDV03_00, PROGRAM_PREFETCH_ADDR_UPPER_SHIFTED) << 40;
    d->prefetch_size = (uint32_t)QMD_GET(q, NVC6C0_QMDV03_00, PROGRAM_PREFETCH_SIZE);

    d->register_count = (uint32_t)QMD_GET(q, NVC6C0_QMDV03_00, REGISTER_COUNT_V);
    d->barrier_count = (uint32_t)QMD_GET(q, NVC6C0_QMDV03_00, BARRIER_COUNT);
    d->shared_mem_B = (uint32_t)QMD_GET(q, NVC6C0_QMDV03_00, SHARED_MEMORY_SIZE);
    d->sm_config_min = (uint32_t)QMD_GET(q, NVC6C0_QMDV03_00, MIN_SM_CONFIG_SHARED_MEM_SIZE);
    d->sm_config_target = (uint32_t)QMD_GET(q, NVC6C0_QMDV03_00, TARGET_SM_CONFIG_SHARED_MEM_SIZE);
    d->sm_config_max = (uint32_t)QMD_GET(q, NVC6C0_QMDV03_00, MAX_SM_CONFIG_SHARED_MEM_SIZE);
    d->local_mem_low_B = (uint32_t)QMD_GET(q, NVC6C0_QMDV03_00, SHADER_LOCAL_MEMORY_LOW_SIZE);
    d->local_mem_high_B = (uint32_t)QMD_GET(q, NVC6C0_QMDV03_00, SHADER_LOCAL_MEMORY_HIGH_SIZE);

    d->invalidate =
        (QMD_GET(q, NVC6C0_QMDV03_00, INVALIDATE_TEXTURE_HEADER_CACHE) ? GPU_QMD_INVALIDATE_TEXTURE_HEADER
                                                                       : 0) |
        (QMD_GET(q, NVC6C0_QMDV03_00, INVALIDATE_TEXTURE_SAMPLER_CACHE) ? GPU_QMD_INVALIDATE_TEXTURE_SAMPLER
                                                                        : 0) |
        (QMD_GET(q, NVC6C0_QMDV03_00, INVALIDATE_TEXTURE_DATA_CACHE) ? GPU_QMD_INVALIDATE_TEXTURE_DATA : 0) |
        (QMD_GET(q, NVC6C0_QMDV03_00, INVALIDATE_SHADER_DATA_CACHE) ? GPU_QMD_INVALIDATE_SHADER_DATA : 0) |
        (QMD_GET(q, NVC6C0_QMDV03_00, INVALIDATE_INSTRUCTION_CACHE) ? GPU_QMD_INVALIDATE_INSTRUCTION : 0) |
        (QMD_GET(q, NVC6C0_QMDV03_00, INVALIDATE_SHADER_CONSTANT_CACHE) ? GPU_QMD_INVALIDATE_SHADER_CONSTANT
                                                                        : 0);
    d->cwd_membar_type = (uint32_t)QMD_GET(q, NVC6C0_QMDV03_00, CWD_MEMBAR_TYPE);

    d->grid[0] = (uint32_t)QMD_GET(q, NVC6C0_QMDV03_00, CTA_RASTER_WIDTH);
    d->grid[1] = (uint32_t)QMD_GET(q, NVC6C0_QMDV03_00, CTA_RASTER_HEIGHT);
    d->grid[2] = (uint32_t)QMD_GET(q, NVC6C0_QMDV03_00, CTA_RASTER_DEPTH);
    d->block[0] = (uint32_t)QMD_GET(q, NVC6C0_QMDV03_00, CTA_THREAD_DIMENSION0);
    d->block[1] = (uint32_t)QMD_GET(q, NVC6C0_QMDV03_00, CTA_THREAD_DIMENSION1);
    d->block[2] = (uint32_t)QMD_GET(q, NVC6C0_QMDV03_00, CTA_THREAD_DIMENSION2);

    for (uint32_t i = 0; i < GPU_QMD_CBUF_COUNT; i++) {
        struct gpu_qmd_cbuf *c = &d->cbuf[i];
        c->va = QMD_GETI(q, NVC6C0_QMDV03_00, CONSTANT_BUFFER_ADDR_LOWER, i) |
                QMD_GETI(q, NVC6C0_QMDV03_00, CONSTANT_BUFFER_ADDR_UPPER, i) << 32;
        c->size_B = (uint32_t)QMD_GETI(q, NVC6C0_QMDV03_00, CONSTANT_BUFFER_SIZE_SHIFTED4, i) << 4;
        c->valid = QMD_GETI(q, NVC6C0_QMDV03_00, CONSTANT_BUFFER_VALID, i);
        c->invalidate = QMD_GETI(q, NVC6C0_QMDV03_00, CONSTANT_BUFFER_INVALIDATE, i);
    }
    for (uint32_t i = 0; i < GPU_QMD_RELEASE_COUNT; i++)
        v03_release_read(q, i, &d->release[i]);
    d->dependent.enable = QMD_GET(q, NVC6C0_QMDV03_00, DEPENDENT_QMD_ENABLE);
    d->dependent.action = (uint32_t)QMD_GET(q, NVC6C0_QMDV03_00, DEPENDENT_QMD_ACTION);
    d->dependent.prefetch = QMD_GET(q, NVC6C0_QMDV03_00, DEPENDENT_QMD_PREFETCH);
    d->dependent.qmd_va = QMD_GET(q, NVC6C0_QMDV03_00, DEPENDENT_QMD_POINTER) << 8;
    return HCQ_OK;
}

/* ==== Patchers (chaining, graph replay) ==== */

static size_t
gpu_qmd_v03_00_dump(const uint32_t *q, char *buf, size_t size)
{
    return gpu_qmd_dump(&gpu_qmd_v03_00_ops, q, buf, size);
}

static const struct gpu_qmd_field v03_fields[] = {
    GPU_QMD_F(NVC6C0_QMDV03_00, QMD_GROUP_ID),
    GPU_QMD_F(NVC6C0_QMDV03_00, SM_GLOBAL_CACHING_ENABLE),
    GPU_QMD_F(NVC6C0_QMDV03_00, IS_QUEUE),
    GPU_QMD_F(NVC6C0_QMDV03_00, DEPENDENCE_COUNTER),
    GPU_QMD_F(NVC6C0_QMDV03_00, INVALIDATE_TEXTURE_HEADER_CACHE),
    GPU_QMD_F(NVC6C0_QMDV03_00, INVALIDATE_TEXTURE_SAMPLER_CACHE),
    GPU_QMD_F(NVC6C0_QMDV03_00, INVALIDATE_TEXTURE_DATA_CACHE),
    GPU_QMD_F(NVC6C0_QMDV03_00, INVALIDATE_SHADER_DATA_CACHE),
    GPU_QMD_F(NVC6C0_QMDV03_00, INVALIDATE_INSTRUCTION_CACHE),
    GPU_QMD_F(NVC6C0_QMDV03_00, INVALIDATE_SHADER_CONSTANT_CACHE),
    GPU_QMD_F(NVC6C0_QMDV03_00, PROGRAM_PREFETCH_ADDR_LOWER_SHIFTED),
    GPU_QMD_F(NVC6C0_QMDV03_00, CWD_MEMBAR_TYPE),
    GPU_QMD_F(NVC6C0_QMDV03_00, API_VISIBLE_CALL_LIMIT),
    GPU_QMD_F(NVC6C0_QMDV03_00, SAMPLER_INDEX),
    GPU_QMD_F(NVC6C0_QMDV03_00, CTA_RASTER_WIDTH),
    GPU_QMD_F(NVC6C0_QMDV03_00, CTA_RASTER_HEIGHT),
    GPU_QMD_F(NVC6C0_QMDV03_00, CTA_RASTER_DEPTH),
    GPU_QMD_F(NVC6C0_QMDV03_00, DEPENDENT_QMD_POINTER),
    GPU_QMD_F(NVC6C0_QMDV03_00, DEPENDENT_QMD_ENABLE),
    GPU_QMD_F(NVC6C0_QMDV03_00, DEPENDENT_QMD_ACTION),
    GPU_QMD_F(NVC6C0_QMDV03_00, DEPENDENT_QMD_PREFETCH),
    GPU_QMD_F(NVC6C0_QMDV03_00, SHARED_MEMORY_SIZE),
    GPU_QMD_F(NVC6C0_QMDV03_00, MIN_SM_CONFIG_SHARED_MEM_SIZE),
    GPU_QMD_F(NVC6C0_QMDV03_00, MAX_SM_CONFIG_SHARED_MEM_SIZE),
    GPU_QMD_F(NVC6C0_QMDV03_00, QMD_VERSION),
    GPU_QMD_F(NVC6C0_QMDV03_00, QMD_MAJOR_VERSION),
    GPU_QMD_F(NVC6C0_QMDV03_00, CTA_THREAD_DIMENSION0),
    GPU_QMD_F(NVC6C0_QMDV03_00, CTA_THREAD_DIMENSION1),
    GPU_QMD_F(NVC6C0_QMDV03_00, CTA_THREAD_DIMENSION2),
    GPU_QMD_FI8(NVC6C0_QMDV03_00, CONSTANT_BUFFER_VALID),
    GPU_QMD_F(NVC6C0_QMDV03_00, REGISTER_COUNT_V),
    GPU_QMD_F(NVC6C0_QMDV03_00, TARGET_SM_CONFIG_SHARED_MEM_SIZE),
    GPU_QMD_F(NVC6C0_QMDV03_00, SHADER_LOCAL_MEMORY_LOW_SIZE),
    GPU_QMD_F(NVC6C0_QMDV03_00, BARRIER_COUNT),
    GPU_QMD_FI2(NVC6C0_QMDV03_00, RELEASE_ADDRESS_LOWER),
    GPU_QMD_FI2(NVC6C0_QMDV03_00, RELEASE_ADDRESS_UPPER),
    GPU_QMD_FI2(NVC6C0_QMDV03_00, RELEASE_MEMBAR_TYPE),
    GPU_QMD_FI2(NVC6C0_QMDV03_00, RELEASE_ENABLE),
    GPU_QMD_FI2(NVC6C0_QMDV03_00, RELEASE_PAYLOAD64B),
    GPU_QMD_FI2(NVC6C0_QMDV03_00, RELEASE_STRUCTURE_SIZE),
    GPU_QMD_FI2(NVC6C0_QMDV03_00, RELEASE_PAYLOAD_LOWER),
    GPU_QMD_FI2(NVC6C0_QMDV03_00, RELEASE_PAYLOAD_UPPER),
    GPU_QMD_FI8(NVC6C0_QMDV03_00, CONSTANT_BUFFER_ADDR_LOWER),
    GPU_QMD_FI8(NVC6C0_QMDV03_00, CONSTANT_BUFFER_ADDR_UPPER),
    GPU_QMD_FI8(NVC6C0_QMDV03_00, CONSTANT_BUFFER_INVALIDATE),
    GPU_QMD_FI8(NVC6C0_QMDV03_00, CONSTANT_BUFFER_SIZE_SHIFTED4),
    GPU_QMD_F(NVC6C0_QMDV03_00, PROGRAM_ADDRESS_LOWER),
    GPU_QMD_F(NVC6C0_QMDV03_00, PROGRAM_ADDRESS_UPPER),
    GPU_QMD_F(NVC6C0_QMDV03_00, SHADER_LOCAL_MEMORY_HIGH_SIZE),
    GPU_QMD_F(NVC6C0_QMDV03_00, PROGRAM_PREFETCH_ADDR_UPPER_SHIFTED),
    GPU_QMD_F(NVC6C0_QMDV03_00, PROGRAM_PREFETCH_SIZE),
    GPU_QMD_F(NVC6C0_QMDV03_00, SASS_VERSION),
};

const struct gpu_qmd_ops gpu_qmd_v03_00_ops = {
    .name = "V03_00",
    .prefix = "NVC6C0_QMDV03_00",
    .version = 0x0300,
    .size_B = NVC6C0_QMDV03_00_SIZE_B,
    .release_va_bits = 32 + GPU_WIDTH(NVC6C0_QMDV03_00_RELEASE_ADDRESS_UPPER(0)),
    .tested_on_hw = true,
    .encode = gpu_qmd_v03_00_encode,
    .decode = gpu_qmd_v03_00_decode,
    .write_dependent = v03_dependent_write,
    .write_release = v03_release_write,
    .write_cbuf_va = v03_cbuf_va_write,
    .dump = gpu_qmd_v03_00_dump,
    .fields = v03_fields,
    .field_count = sizeof v03_fields / sizeof v03_fields[0],
};

_Static_assert(NVC6C0_QMDV03_00_SIZE_B == 64 * 4, "QMD V03_00 is 64 dwords (rm.md §6.1)");
_Static_assert(GPU_HI(NVC6C0_QMDV03_00_SASS_VERSION) < 8 * NVC6C0_QMDV03_00_SIZE_B,
               "QMD V03_00 fields lie inside the QMD");
