/* SPDX-License-Identifier: MIT */
/* hcq_suite_util.c - helpers shared by the HCQ suite's test files (hcq_suite.h). */
#include "hcq_suite.h"

#include <stdlib.h>
#include <string.h>

const char *
suite_backend(struct hcq_device *dev)
{
    static _Thread_local struct hcq_device_info info;
    if (hcq_device_info(dev, &info) != HCQ_OK)
        return "?";
    return info.backend;
}

bool
suite_is_cpu(struct hcq_device *dev)
{
    return !strcmp(suite_backend(dev), "cpu");
}

bool
suite_has_driver_objects(const struct hcq_device_info *info)
{
    return !strcmp(info->backend, "rm") || (!strcmp(info->backend, "emu") && !info->unified_memory);
}

bool
suite_has_driver_free(const struct hcq_device_info *info)
{
    /* the RM-backed ones, and CUDA's cuMemGetInfo */
    return suite_has_driver_objects(info) || !strcmp(info->backend, "cuda");
}

bool
suite_is_gpu(struct hcq_device *dev)
{
    struct hcq_device_info info;
    if (hcq_device_info(dev, &info) != HCQ_OK)
        return false;
    return !info.emulated && strcmp(info.backend, "cpu") != 0;
}

void
suite_rand_bytes(void *dst, size_t size_B)
{
    uint8_t *p = dst;
    size_t i = 0;
    for (; i + 8 <= size_B; i += 8) {
        uint64_t r = th_rand();
        memcpy(p + i, &r, 8);
    }
    uint64_t r = th_rand();
    for (; i < size_B; i++, r >>= 8)
        p[i] = (uint8_t)r;
}

enum hcq_status
suite_buf(struct hcq_device *dev, uint64_t size_B, uint32_t flags, const void *data, uint8_t poison,
          struct hcq_buf **buf_out)
{
    enum hcq_status st = hcq_buf_alloc(dev, size_B, flags, buf_out);
    if (st != HCQ_OK)
        return st;
    if (data)
        return hcq_buf_write(*buf_out, 0, data, size_B);
    /* poison in 1 MiB steps: bounded staging memory for any buffer size */
    const uint64_t step_B = 1 << 20;
    uint8_t *tmp = malloc(size_B < step_B ? size_B : step_B);
    if (!tmp)
        return HCQ_ERR_NOMEM;
    memset(tmp, poison, size_B < step_B ? size_B : step_B);
    for (uint64_t off = 0; off < size_B && st == HCQ_OK; off += step_B)
        st = hcq_buf_write(*buf_out, off, tmp, size_B - off < step_B ? size_B - off : step_B);
    free(tmp);
    return st;
}

void
suite_mirror_add(struct suite_mirror *m, uint64_t va, uint64_t size_B, void *host)
{
    if (m->count >= SUITE_MIRROR_MAX)
        return; /* a test bug; the twin then faults and the test fails */
    m->va[m->count] = va;
    m->size_B[m->count] = size_B;
    m->host[m->count] = host;
    m->count++;
}

static void *
suite_mirror_ptr(void *ctx, uint64_t va, uint64_t size_B)
{
    struct suite_mirror *m = ctx;
    for (int i = 0; i < m->count; i++)
        if (va >= m->va[i] && va - m->va[i] <= m->size_B[i] && size_B <= m->size_B[i] - (va - m->va[i]))
            return (uint8_t *)m->host[i] + (va - m->va[i]);
    return NULL;
}

bool
suite_twin_run(const char *name, const void *params, const uint32_t grid[3], const uint32_t block[3],
               struct suite_mirror *m)
{
    const struct hcq_kernel_desc *d = hcq_kernel_find(name);
    if (!d || !d->twin)
        return false;
    struct hcq_twin_launch l = {.params = params, .ptr = suite_mirror_ptr, .ctx = m};
    memcpy(l.grid, grid, sizeof l.grid);
    memcpy(l.block, block, sizeof l.block);
    d->twin(&l);
    return !l.fault;
}
