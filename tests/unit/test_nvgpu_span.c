/* SPDX-License-Identifier: MIT */
/*
 * test_nvgpu_span.c - nvgpu buffers larger than one nvmap buffer may be (HCQ_NVGPU_MAX_BUF_B): a
 * buffer spans several, works as one, and every failure point on the way leaks nothing.
 */
#include "emu.h"
#include "emu_nvgpu.h"
#include "gpu_push.h"
#include "harness.h"
#include "hcq_priv.h"
#include "k_params.h"
#include "nvgpu_kmd.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

TEST(span_buffer_across_nvmap_buffers)
{
    struct hcq_device *dev = NULL;
    struct hcq_buf *a = NULL, *b = NULL;
    struct hcq_queue *q = NULL, *cq = NULL;
    struct hcq_program *prog = NULL;
    struct emu_stats s0, s1;
    emu_stats_get(&s0);
    setenv("HCQ_NVGPU_MAX_BUF_B", "8388608", 1);
    CHECK_OK(hcq_device_open("emu:ga10b,nvmap_max=8388608", &dev));
    const uint64_t bytes = (20ull << 20) + 4096;
    const uint32_t n = (uint32_t)(bytes / 4), v = (uint32_t)th_rand() | 1u;
    CHECK_OK(hcq_buf_alloc(dev, bytes, HCQ_MEM_DEVICE, &a));
    CHECK_OK(hcq_buf_alloc(dev, bytes, HCQ_MEM_DEVICE, &b));
    uint32_t *x = hcq_buf_map(a), *y = hcq_buf_map(b);
    CHECK(x && y);
    for (uint32_t i = 0; i < n; i++) /* the CPU writes straight into the parts */
        x[i] = ~v, y[i] = i * 2654435761u;
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COPY, &cq));
    CHECK_OK(hcq_program_load(dev, "k_fill_u32", &prog));
    /* one kernel over the whole buffer: crosses both part boundaries (8 MiB, 16 MiB) */
    struct k_fill_u32_params p = {.dst_va = hcq_buf_va(a), .n = n - 1024, .value = v};
    uint32_t grid[3] = {(n + 255) / 256, 1, 1}, block[3] = {256, 1, 1};
    CHECK_OK(hcq_queue_launch(q, prog, grid, block, &p, sizeof p));
    CHECK_OK(hcq_queue_finish(q, 10000000000ull));
    for (uint32_t i = 0; i < n; i++)
        CHECKF(x[i] == (i < n - 1024 ? v : ~v), "x[%u] = 0x%08x", i, x[i]);
    /* a copy-engine copy across the boundaries, from b's parts into a's */
    const uint64_t off = (8ull << 20) - 4096, len = (9ull << 20);
    CHECK_OK(hcq_queue_copy(cq, a, off, b, off, len));
    CHECK_OK(hcq_queue_finish(cq, 10000000000ull));
    for (uint32_t i = 0; i < n; i++) {
        bool in = i >= off / 4 && i < (off + len) / 4;
        uint32_t want = in ? i * 2654435761u : (i < n - 1024 ? v : ~v);
        CHECKF(x[i] == want, "after copy x[%u] = 0x%08x want 0x%08x", i, x[i], want);
    }
done:
    unsetenv("HCQ_NVGPU_MAX_BUF_B");
    hcq_program_destroy(prog);
    hcq_queue_destroy(cq);
    hcq_queue_destroy(q);
    hcq_buf_free(b);
    hcq_buf_free(a);
    hcq_device_close(dev);
    emu_stats_get(&s1);
    if (!t->failed)
        CHECKF(s1.fds == s0.fds && s1.maps == s0.maps && s1.bos == s0.bos,
               "leak: fds %lld maps %lld bos %lld", (long long)(s1.fds - s0.fds),
               (long long)(s1.maps - s0.maps), (long long)(s1.bos - s0.bos));
}

/* Without the backend knowing the lower cap, the emulated driver refuses the one big
 * CREATE: proof the span test above really runs on several nvmap buffers. */
TEST(span_needed_above_the_cap)
{
    struct hcq_device *dev = NULL;
    struct hcq_buf *a = NULL;
    CHECK_OK(hcq_device_open("emu:ga10b,nvmap_max=8388608", &dev));
    CHECK(hcq_buf_alloc(dev, 20ull << 20, HCQ_MEM_DEVICE, &a) != HCQ_OK);
done:
    hcq_buf_free(a);
    hcq_device_close(dev);
}

/* Every failure point of a span (each part's CREATE/ALLOC/GET_FD/MAP_BUFFER_EX, the
 * reservation) leaves nothing behind: the failing allocation returns an error, the device
 * stays usable, and closing it frees every fd, mapping and buffer of the emulator. */
TEST(span_failure_points_leak_nothing)
{
    static const char *names[] = {"NVGPU_AS_IOCTL_ALLOC_SPACE", "NVGPU_AS_IOCTL_MAP_BUFFER_EX",
                                  "NVMAP_IOC_CREATE", "NVMAP_IOC_ALLOC", "NVMAP_IOC_GET_FD"};
    setenv("HCQ_NVGPU_MAX_BUF_B", "8388608", 1);
    unsigned failed_allocs = 0, opened = 0;
    for (unsigned k = 0; k < sizeof names / sizeof names[0]; k++) {
        for (unsigned nth = 1; nth <= 40; nth++) {
            struct emu_stats s0, s1;
            emu_stats_get(&s0);
            char spec[128];
            snprintf(spec, sizeof spec, "emu:ga10b,nvmap_max=8388608,fail_ioctl=%s@%u", names[k], nth);
            struct hcq_device *dev = NULL;
            struct hcq_buf *b = NULL;
            if (hcq_device_open(spec, &dev) == HCQ_OK) {
                opened++;
                if (hcq_buf_alloc(dev, 20ull << 20, HCQ_MEM_DEVICE, &b) != HCQ_OK)
                    failed_allocs++;
                hcq_buf_free(b);
                hcq_device_close(dev);
            }
            emu_stats_get(&s1);
            CHECKF(s1.fds == s0.fds && s1.maps == s0.maps && s1.bos == s0.bos && s1.vms == s0.vms,
                   "%s@%u: leak fds %lld maps %lld bos %lld vms %lld", names[k], nth,
                   (long long)(s1.fds - s0.fds), (long long)(s1.maps - s0.maps), (long long)(s1.bos - s0.bos),
                   (long long)(s1.vms - s0.vms));
        }
    }
    printf("    %u devices opened, %u span allocations hit an injected failure\n", opened, failed_allocs);
    CHECKF(failed_allocs >= 5, "only %u span allocations hit an injected failure", failed_allocs);
done:
    unsetenv("HCQ_NVGPU_MAX_BUF_B");
}

int
main(int argc, char **argv)
{
    static const struct th_case cases[] = {
        TH_CASE(span_buffer_across_nvmap_buffers),
        TH_CASE(span_needed_above_the_cap),
        TH_CASE(span_failure_points_leak_nothing),
    };
    return th_run("nvgpu_span", NULL, cases, TH_COUNT(cases), argc - 1, argv + 1) ? 1 : 0;
}
