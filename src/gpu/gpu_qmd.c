/* SPDX-License-Identifier: MIT */
/*
 * gpu_qmd.c - what the QMD versions share: the default description, SM-config and
 * prefetch helpers, range checks against a version's limits, the text dump and the
 * version lookup. Layer: gpu (pure). Facts: docs/hw/rm.md §6.
 */
#include <assert.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "gpu_qmd.h"
#include "gpu_qmd_limits.h"
#include "util_text.h"

void
gpu_qmd_desc_init(struct gpu_qmd_desc *d)
{
    memset(d, 0, sizeof *d);
    /* rm.md §0 "minimal V4 QMD" and §6.3 (tinygrad's template, verified on H200/Orin) */
    d->qmd_group_id = 0x3f;
    d->api_visible_call_limit = 1; /* NO_CHECK */
    d->sampler_index = 1;          /* VIA_HEADER_INDEX */
    d->barrier_count = 1;
    d->cwd_membar_type = GPU_QMD_CWD_MEMBAR_TYPE_L1_SYSMEMBAR;
    d->invalidate = GPU_QMD_INVALIDATE_DEFAULT;
    d->sm_global_caching = true; /* V3 only */
}

uint32_t
gpu_qmd_prefetch_size(uint64_t code_B)
{
    uint64_t v = code_B >> 8; /* rm.md §6.2: min(code bytes >> 8, 0x1ff) */
    return v > 0x1FF ? 0x1FF : (uint32_t)v;
}

uint32_t
gpu_qmd_sm_config(uint32_t carveout_KiB)
{
    return carveout_KiB / 4 + 1; /* rm.md §6.7: value v means (v-1)*4 KiB */
}

uint32_t
gpu_qmd_carveout_KiB(uint32_t shared_B, uint32_t max_KiB)
{
    /* tinygrad's 32/64/100 KiB choices, then larger Hopper-class carve-outs (rm.md §6.7,
     * §9 item 11: > 100 KiB untested). */
    static const uint32_t choices_KiB[] = {32, 64, 100, 132, 164, 196, 228};
    for (size_t i = 0; i < sizeof choices_KiB / sizeof choices_KiB[0]; i++) {
        uint32_t c = choices_KiB[i];
        if (c > max_KiB)
            break;
        if ((uint64_t)c * 1024 >= shared_B)
            return c;
    }
    return 0;
}

/* ==== Range checks (shared by the version encoders) ==== */

static enum hcq_status
qmd_bad(const struct gpu_qmd_limits *lim, const char *field, uint64_t v, const char *why)
{
    return hcq_err(HCQ_ERR_INVALID, "gpu_qmd_encode: QMD %s %s: observed 0x%" PRIx64 " (%s)", lim->name,
                   field, v, why);
}

static bool
fits(uint64_t v, unsigned bits)
{
    return bits >= 64 || (v >> bits) == 0;
}

#define REQ(cond, field, v, why)                                                                             \
    do {                                                                                                     \
        if (!(cond))                                                                                         \
            return qmd_bad(lim, field, (v), why);                                                            \
    } while (0)

enum hcq_status
gpu_qmd_check_desc(const struct gpu_qmd_limits *lim, const struct gpu_qmd_desc *d)
{
    uint64_t pmask = ((uint64_t)1 << lim->program_shift) - 1;
    REQ(fits(d->program_va, lim->program_va_bits), "program_va", d->program_va, "too many bits");
    REQ((d->program_va & pmask) == 0, "program_va", d->program_va, "misaligned");
    REQ((d->prefetch_va & 0xFF) == 0, "prefetch_va", d->prefetch_va, "expected 256-byte aligned");
    REQ(fits(d->prefetch_va, lim->prefetch_va_bits), "prefetch_va", d->prefetch_va, "too many bits");
    REQ(d->prefetch_size <= 0x1FF, "prefetch_size", d->prefetch_size, "expected <= 0x1ff");
    REQ(d->register_count <= 511, "register_count", d->register_count, "expected <= 511");
    REQ(d->barrier_count <= 31, "barrier_count", d->barrier_count, "expected <= 31");
    REQ((d->shared_mem_B & ((1u << lim->shared_shift) - 1)) == 0, "shared_mem_B", d->shared_mem_B,
        "misaligned for this version");
    REQ(fits(d->shared_mem_B >> lim->shared_shift, lim->shared_bits), "shared_mem_B", d->shared_mem_B,
        "too large");
    REQ(d->sm_config_min < 64 && d->sm_config_target < 64 && d->sm_config_max < 64, "sm_config",
        (uint64_t)d->sm_config_min << 16 | d->sm_config_target << 8 | d->sm_config_max,
        "expected 6-bit values");
    REQ((d->local_mem_low_B & ((1u << lim->local_shift) - 1)) == 0, "local_mem_low_B", d->local_mem_low_B,
        "misaligned for this version");
    REQ((d->local_mem_high_B & ((1u << lim->local_shift) - 1)) == 0, "local_mem_high_B", d->local_mem_high_B,
        "misaligned for this version");
    REQ(fits(d->local_mem_low_B >> lim->local_shift, lim->local_bits), "local_mem_low_B", d->local_mem_low_B,
        "too large");
    REQ(fits(d->local_mem_high_B >> lim->local_shift, lim->local_bits), "local_mem_high_B",
        d->local_mem_high_B, "too large");
    REQ(d->grid[1] <= 0xFFFF && d->grid[2] <= 0xFFFF, "grid", (uint64_t)d->grid[1] << 32 | d->grid[2],
        "y and z must be < 65536");
    REQ(d->block[0] <= 0xFFFF && d->block[1] <= 0xFFFF, "block", (uint64_t)d->block[0] << 32 | d->block[1],
        "x and y must be < 65536");
    REQ(fits(d->block[2], lim->block_z_bits), "block[2]", d->block[2], "too large");
    for (uint32_t i = 0; i < GPU_QMD_CBUF_COUNT; i++) {
        const struct gpu_qmd_cbuf *c = &d->cbuf[i];
        uint64_t cmask = ((uint64_t)1 << lim->cbuf_shift) - 1;
        REQ(fits(c->va, lim->cbuf_va_bits), "cbuf va", c->va, "too many bits");
        REQ((c->va & cmask) == 0, "cbuf va", c->va, "misaligned for this version");
        REQ((c->size_B & 15) == 0 && (c->size_B >> 4) < (1u << 13), "cbuf size_B", c->size_B,
            "expected a multiple of 16 below 128 KiB");
        REQ(c->prefetch < 4 && (lim->cbuf_prefetch || !c->prefetch), "cbuf prefetch", c->prefetch,
            "expected < 4, and 0 where the version has no field");
    }
    for (uint32_t i = 0; i < GPU_QMD_RELEASE_COUNT; i++) {
        const struct gpu_qmd_release *r = &d->release[i];
        REQ(fits(r->va, lim->release_va_bits), "release va", r->va, "too many bits");
        REQ(r->structure_size < 4, "release structure_size", r->structure_size, "expected < 4");
        REQ(r->membar_type < 2, "release membar_type", r->membar_type, "expected < 2");
    }
    REQ((d->dependent.qmd_va & 0xFF) == 0 && d->dependent.qmd_va < GPU_QMD_VA_LIMIT, "dependent qmd_va",
        d->dependent.qmd_va, "expected 256-byte aligned below 2^40");
    REQ(d->dependent.action < 8, "dependent action", d->dependent.action, "expected < 8");
    REQ(d->dependence_counter <= 0xFFFF, "dependence_counter", d->dependence_counter, "expected < 2^16");
    REQ(d->sass_version <= 0xFF, "sass_version", d->sass_version, "expected 8 bits");
    REQ(d->invalidate <= GPU_QMD_INVALIDATE_ALL, "invalidate", d->invalidate, "unknown bits");
    REQ(d->cwd_membar_type < 4, "cwd_membar_type", d->cwd_membar_type, "expected < 4");
    REQ(d->qmd_group_id < 64, "qmd_group_id", d->qmd_group_id, "expected < 64");
    REQ(d->api_visible_call_limit < 2 && d->sampler_index < 2, "call limit / sampler index",
        (uint64_t)d->api_visible_call_limit << 8 | d->sampler_index, "expected 1-bit values");
    return HCQ_OK;
}

enum hcq_status
gpu_qmd_check_version(const struct gpu_qmd_limits *lim, uint32_t major, uint32_t minor)
{
    uint32_t want = lim->version;
    if (major != want >> 8 || minor != (want & 0xFF))
        return hcq_err_quiet(HCQ_ERR_FORMAT,
                             "gpu_qmd_decode: QMD version fields: observed %u.%u (expected %u.%u)", major,
                             minor, want >> 8, want & 0xFF);
    return HCQ_OK;
}

/* ==== Dump ==== */

size_t
gpu_qmd_dump(const struct gpu_qmd_ops *ops, const uint32_t *qmd_dw, char *buf, size_t size)
{
    struct util_text o = {buf, size, 0};
    if (size)
        buf[0] = '\0';
    util_text_printf(&o, "# QMD %s\n", ops->name);
    for (uint32_t i = 0; i < ops->field_count; i++) {
        const struct gpu_qmd_field *f = &ops->fields[i];
        uint64_t v = gpu_bits_get(qmd_dw, f->hi, f->lo);
        if (v)
            util_text_printf(&o, "%s_%s 0x%" PRIx64 "\n", ops->prefix, f->name, v);
    }
    return o.len;
}

const struct gpu_qmd_ops *
gpu_qmd_ops_by_version(uint32_t version)
{
    static const struct gpu_qmd_ops *const all[] = {
        &gpu_qmd_v03_00_ops,
        &gpu_qmd_v04_00_ops,
        &gpu_qmd_v05_00_ops,
    };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (all[i]->version == version)
            return all[i];
    return NULL;
}

/* ==== Patchers: one policy for every QMD version ==== */

void
gpu_qmd_set_cbuf_va(const struct gpu_qmd_ops *ops, uint32_t *qmd_dw, uint32_t idx, uint64_t va)
{
    assert(idx < GPU_QMD_CBUF_COUNT && (va & 0xFF) == 0 && va < GPU_QMD_VA_LIMIT);
    ops->write_cbuf_va(qmd_dw, idx, va);
}

void
gpu_qmd_set_dependent(const struct gpu_qmd_ops *ops, uint32_t *qmd_dw, uint64_t next_qmd_va)
{
    assert((next_qmd_va & 0xFF) == 0 && next_qmd_va < GPU_QMD_VA_LIMIT);
    struct gpu_qmd_dependent dep = {
        .enable = next_qmd_va != 0,
        .qmd_va = next_qmd_va,
        .action = next_qmd_va ? GPU_QMD_DEPENDENT_QMD_ACTION_QMD_SCHEDULE : 0,
        .prefetch = next_qmd_va != 0,
    };
    ops->write_dependent(qmd_dw, &dep);
}

void
gpu_qmd_set_release_membar(const struct gpu_qmd_ops *ops, uint32_t *qmd_dw, uint32_t slot, uint64_t va,
                           uint64_t payload, uint32_t membar_type)
{
    assert(slot < GPU_QMD_RELEASE_COUNT && (va & 7) == 0);
    struct gpu_qmd_release r = {
        .enable = true,
        .va = va,
        .payload = payload,
        .payload64 = true, /* else only the low 32 bits are written (rm.md §0 item 6) */
        .structure_size = GPU_QMD_RELEASE_STRUCTURE_SIZE_FOUR_WORDS,
        .membar_type = membar_type,
    };
    ops->write_release(qmd_dw, slot, &r);
}

void
gpu_qmd_set_release(const struct gpu_qmd_ops *ops, uint32_t *qmd_dw, uint32_t slot, uint64_t va,
                    uint64_t payload)
{
    gpu_qmd_set_release_membar(ops, qmd_dw, slot, va, payload, GPU_QMD_RELEASE_MEMBAR_TYPE_FE_SYSMEMBAR);
}

void
gpu_qmd_clear_release(const struct gpu_qmd_ops *ops, uint32_t *qmd_dw, uint32_t slot)
{
    static const struct gpu_qmd_release off;
    assert(slot < GPU_QMD_RELEASE_COUNT);
    ops->write_release(qmd_dw, slot, &off);
}
