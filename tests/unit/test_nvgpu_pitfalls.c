/* SPDX-License-Identifier: MIT */
/*
 * test_nvgpu_pitfalls.c - the pitfalls of docs/jetson.md, each shown on the emulated Orin driver
 * (emu:ga10b) and avoided by the nvgpu backend: shader-window reservation, exactly-sized GPFIFO
 * buffer, AS-before-TSG bind order, nvmap heap/tag, pushbuffer signals, cross-queue copies.
 * Split from test_nvgpu.c (layouts, bring-up, submit, goldens, error paths).
 */
#include "emu.h"
#include "emu_nvgpu.h"
#include "harness.h"
#include "hcq_priv.h"
#include "k_params.h"
#include "nvgpu_kmd.h"
#include "nvgpu_tdev.h"
#include "klog.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* ==== The pitfalls of docs/jetson.md, each shown on the model and avoided by the backend ==== */

static bool
overlaps_window(uint64_t va, uint64_t size_B)
{
    uint64_t w[2] = {NVGPU_LOCAL_WINDOW_VA, NVGPU_SHARED_WINDOW_VA};
    for (int i = 0; i < 2; i++)
        if (va < w[i] + NVGPU_WINDOW_RESERVE_B && w[i] < va + size_B)
            return true;
    return false;
}

/* Consume VA top-down as ~7.4 GiB of model weights would (a non-fixed ALLOC_SPACE costs no
 * memory), leaving the next buffer where the P0 bug put it: inside the shared window. */
static int
fill_va(const struct tdev *t, int as_fd)
{
    uint64_t top = NVGPU_VA_RANGE_END - EMU_NVGPU_AS_TOP_GAP_B;
    struct nvgpu_as_alloc_space_args s = {.pages = (top - 0xFE24000000ull) / 4096, .page_size = 4096};
    return xio(t, as_fd, NVGPU_AS_IOCTL_ALLOC_SPACE, &s);
}

TEST(pitfall_window_reservation)
{
    struct tdev e = {0};
    struct raw r = {0};
    struct kmd *kmd = NULL;
    struct kmd_mem *m = NULL;
    void *cpu = MAP_FAILED;
    /* Without the reservations (what tinygrad did before the fix): collision, GPU can't reach it. */
    CHECK_OK(tdev_open(&e, "ga10b"));
    CHECK(raw_bringup(&e, &r, false) == 0);
    CHECK(fill_va(&e, r.as) == 0);
    int fd = raw_buf(&e, r.nvmap, 64u << 20, TAGGED(NVMAP_HANDLE_INNER_CACHEABLE), NVMAP_HEAP_IOVMM, NULL);
    CHECK(fd > 0);
    struct nvgpu_as_map_buffer_ex_args mb = {.compr_kind = -1, .dmabuf_fd = (uint32_t)fd, .page_size = 4096};
    CHECK(xio(&e, r.as, NVGPU_AS_IOCTL_MAP_BUFFER_EX, &mb) == 0);
    CHECKF(overlaps_window(mb.offset, 64u << 20), "VA 0x%llx", (unsigned long long)mb.offset);
    struct emu_nvgpu *em = emu_nvgpu_of(e.d);
    CHECK(em->window_collisions == 1 && strstr(emu_nvgpu_klog_text(e.d), "shared-memory window"));
    CHECK(klog_scan(emu_nvgpu_klog_text(e.d), NULL, NULL, 0) == 1); /* selftest would flag it */
    CHECK(emu_mem_ptr(emu_nvgpu_as_vm(emu_nvgpu_as_from_fd(em, r.as)), mb.offset, 4096) == NULL);
    cpu = e.sys->mmap(e.sys->ctx, NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    CHECK(cpu != MAP_FAILED); /* the CPU still sees it: only the GPU is misrouted */
    e.sys->munmap(e.sys->ctx, cpu, 4096);
    e.sys->close(e.sys->ctx, fd);
    raw_close(&e, &r);
    emu_dev_put(e.d);
    e.d = NULL;

    /* The backend reserves both windows first: the same pressure puts the buffer elsewhere. */
    CHECK_OK(tdev_open(&e, "ga10b"));
    CHECK_OK(nvgpu_kmd_create(e.sys, 0, &kmd));
    CHECK(fill_va(&e, nvgpu_kmd_from(kmd)->as_fd) == 0);
    CHECK_OK(kmd_mem_alloc(kmd, 64u << 20, 0, 0, &m));
    CHECKF(!overlaps_window(m->va, m->size_B), "VA 0x%llx", (unsigned long long)m->va);
    CHECK(emu_nvgpu_of(e.d)->window_collisions == 0);
    CHECK(!strstr(emu_nvgpu_klog_text(e.d), "window"));
    CHECK(klog_scan(emu_nvgpu_klog_text(e.d), NULL, NULL, 0) == 0);
done:
    kmd_mem_free(kmd, m);
    kmd_destroy(kmd);
    if (e.d)
        emu_dev_put(e.d);
}

/* The P0 bug end to end through the public API: ~7 GiB of "weights" (two 3.5 GiB buffers,
 * sparse, never touched), then an activation buffer and a kernel writing it. Unreserved,
 * the top-down allocator puts the weights and the activation inside the shader windows and
 * the kernel faults; with the backend's reservations all of it lands outside. */
TEST(pitfall_window_reservation_e2e)
{
    struct hcq_device *dev = NULL;
    struct hcq_buf *w[2] = {NULL, NULL}, *act = NULL;
    struct hcq_queue *q = NULL;
    struct hcq_program *prog = NULL;
    const uint64_t weights_B = 0xE0000000ull, act_B = 64ull << 20;
    CHECK_OK(hcq_device_open("emu:ga10b", &dev));
    for (int i = 0; i < 2; i++) {
        CHECK_OK(hcq_buf_alloc(dev, weights_B, HCQ_MEM_DEVICE, &w[i]));
        CHECKF(!overlaps_window(hcq_buf_va(w[i]), weights_B), "weights %d at 0x%llx", i,
               (unsigned long long)hcq_buf_va(w[i]));
    }
    CHECK_OK(hcq_buf_alloc(dev, act_B, HCQ_MEM_MAPPABLE, &act));
    CHECKF(!overlaps_window(hcq_buf_va(act), act_B), "activation at 0x%llx",
           (unsigned long long)hcq_buf_va(act));
    uint32_t *x = hcq_buf_map(act);
    const uint32_t n = 1u << 20, v = (uint32_t)th_rand() | 1u;
    for (uint32_t i = 0; i < n + 16; i++)
        x[i] = ~v;
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    CHECK_OK(hcq_program_load(dev, "k_fill_u32", &prog));
    struct k_fill_u32_params p = {.dst_va = hcq_buf_va(act), .n = n, .value = v};
    uint32_t grid[3] = {256, 1, 1}, block[3] = {256, 1, 1};
    CHECK_OK(hcq_queue_launch(q, prog, grid, block, &p, sizeof p));
    CHECK_OK(hcq_queue_finish(q, 10000000000ull));
    for (uint32_t i = 0; i < n + 16; i++)
        CHECKF(x[i] == (i < n ? v : ~v), "x[%u] = 0x%08x", i, x[i]);
done:
    hcq_program_destroy(prog);
    hcq_queue_destroy(q);
    hcq_buf_free(act);
    hcq_buf_free(w[0]);
    hcq_buf_free(w[1]);
    hcq_device_close(dev);
}

/* A channel up to (not including) SETUP_BIND; returns the channel fd or -errno. */
static int
raw_channel(const struct tdev *t, const struct raw *r)
{
    struct nvgpu_gpu_open_channel_args o = {.runlist_id = -1};
    int e = xio(t, r->ctrl, NVGPU_GPU_IOCTL_OPEN_CHANNEL, &o);
    if (e)
        return -e;
    struct nvgpu_as_bind_channel_args ab = {.channel_fd = (uint32_t)o.channel_fd};
    struct nvgpu_tsg_bind_channel_ex_args tb = {.channel_fd = o.channel_fd,
                                                .subcontext_id = (uint32_t)r->veid};
    struct nvgpu_channel_wdt_args w = {.wdt_status = NVGPU_IOCTL_CHANNEL_DISABLE_WDT};
    if ((e = xio(t, r->as, NVGPU_AS_IOCTL_BIND_CHANNEL, &ab)) ||
        (e = xio(t, r->tsg, NVGPU_TSG_IOCTL_BIND_CHANNEL_EX, &tb)) ||
        (e = xio(t, o.channel_fd, NVGPU_IOCTL_CHANNEL_WDT, &w)))
        return -e;
    return o.channel_fd;
}

TEST(pitfall_gpfifo_buffer_size)
{
    struct tdev e = {0};
    struct raw r = {0};
    CHECK_OK(tdev_open(&e, "ga10b"));
    CHECK(raw_bringup(&e, &r, true) == 0);
    int ch = raw_channel(&e, &r);
    CHECK(ch > 0);
    int big = raw_buf(&e, r.nvmap, 3u << 20, TAGGED(NVMAP_HANDLE_WRITE_COMBINE), NVMAP_HEAP_IOVMM, NULL);
    int ring = raw_buf(&e, r.nvmap, 8192, TAGGED(NVMAP_HANDLE_WRITE_COMBINE), NVMAP_HEAP_IOVMM, NULL);
    int userd = raw_buf(&e, r.nvmap, 4096, TAGGED(NVMAP_HANDLE_WRITE_COMBINE), NVMAP_HEAP_IOVMM, NULL);
    CHECK(big > 0 && ring > 0 && userd > 0);
    struct nvgpu_channel_setup_bind_args sb = {
        .num_gpfifo_entries = 1024, .flags = 0xA, .userd_dmabuf_fd = userd, .gpfifo_dmabuf_fd = big};
    /* tinygrad's 3 MiB shared gpfifo_area: passed SETUP_BIND on hardware, then froze the SoC */
    CHECK(xio(&e, ch, NVGPU_IOCTL_CHANNEL_SETUP_BIND, &sb) == EINVAL);
    CHECK(strstr(emu_nvgpu_klog_text(e.d), "ALLOC_OBJ_CTX hangs"));
    /* a ring at a non-zero offset of a shared buffer: EINVAL on hardware too */
    sb.gpfifo_dmabuf_fd = ring;
    sb.gpfifo_dmabuf_offset = 4096;
    CHECK(xio(&e, ch, NVGPU_IOCTL_CHANNEL_SETUP_BIND, &sb) == EINVAL);
    sb.gpfifo_dmabuf_offset = 0;
    sb.flags = NVGPU_CHANNEL_SETUP_BIND_FLAGS_USERMODE_SUPPORT; /* without DETERMINISTIC */
    CHECK(xio(&e, ch, NVGPU_IOCTL_CHANNEL_SETUP_BIND, &sb) == EINVAL);
    sb.flags = 0xA;
    CHECK(xio(&e, ch, NVGPU_IOCTL_CHANNEL_SETUP_BIND, &sb) == 0 && sb.work_submit_token == 511);
    CHECK(xio(&e, ch, NVGPU_IOCTL_CHANNEL_SETUP_BIND, &sb) == EEXIST);
    struct nvgpu_alloc_obj_ctx_args oc = {.class_num = AMPERE_COMPUTE_A}; /* not ga10b's class */
    CHECK(xio(&e, ch, NVGPU_IOCTL_CHANNEL_ALLOC_OBJ_CTX, &oc) == EINVAL);
    oc.class_num = AMPERE_COMPUTE_B;
    CHECK(xio(&e, ch, NVGPU_IOCTL_CHANNEL_ALLOC_OBJ_CTX, &oc) == 0);
    /* the backend's ring for the same channel is exactly entries * 8 */
    CHECK(nvgpu_chan_ring_bytes(1024) == 8192);
    int fds[] = {ch, big, ring, userd};
    for (int i = 0; i < 4; i++)
        e.sys->close(e.sys->ctx, fds[i]);
    raw_close(&e, &r);
done:
    if (e.d)
        emu_dev_put(e.d);
}

TEST(pitfall_bind_order)
{
    struct tdev e = {0};
    struct raw r = {0};
    CHECK_OK(tdev_open(&e, "ga10b"));
    CHECK(raw_bringup(&e, &r, true) == 0);
    struct nvgpu_gpu_open_channel_args o = {.runlist_id = -1};
    CHECK(xio(&e, r.ctrl, NVGPU_GPU_IOCTL_OPEN_CHANNEL, &o) == 0);
    struct nvgpu_tsg_bind_channel_ex_args tb = {.channel_fd = o.channel_fd,
                                                .subcontext_id = (uint32_t)r.veid};
    struct nvgpu_as_bind_channel_args ab = {.channel_fd = (uint32_t)o.channel_fd};
    CHECK(xio(&e, r.tsg, NVGPU_TSG_IOCTL_BIND_CHANNEL_EX, &tb) == EINVAL); /* TSG before AS */
    CHECK(xio(&e, r.as, NVGPU_AS_IOCTL_BIND_CHANNEL, &ab) == 0);
    CHECK(xio(&e, r.as, NVGPU_AS_IOCTL_BIND_CHANNEL, &ab) == EINVAL); /* no re-bind */
    CHECK(xio(&e, r.tsg, NVGPU_TSG_IOCTL_BIND_CHANNEL_EX, &tb) == 0);
    e.sys->close(e.sys->ctx, o.channel_fd);
    raw_close(&e, &r);
done:
    if (e.d)
        emu_dev_put(e.d);
}

TEST(pitfall_nvmap_and_abi)
{
    struct tdev e = {0};
    struct raw r = {0};
    CHECK_OK(tdev_open(&e, "ga10b"));
    CHECK(raw_bringup(&e, &r, true) == 0);
    /* untagged: the real kernel WARNs on every allocation, the model refuses (§2.3) */
    CHECK(raw_buf(&e, r.nvmap, 4096, NVMAP_HANDLE_INNER_CACHEABLE, NVMAP_HEAP_IOVMM, NULL) == -EINVAL);
    CHECK(emu_nvgpu_of(e.d)->tag_warnings == 1 && strstr(emu_nvgpu_klog_text(e.d), "tag not specified"));
    /* SYSMEM heap: ENOMEM; IOVMM is the heap that works (§2.2) */
    CHECK(raw_buf(&e, r.nvmap, 4096, TAGGED(2), NVMAP_HEAP_SYSMEM, NULL) == -ENOMEM);
    uint32_t h = 0;
    int fd = raw_buf(&e, r.nvmap, 4096, TAGGED(2), NVMAP_HEAP_IOVMM, &h);
    CHECK(fd > 0 && (h & 0x80000000u));
    /* FREE takes the handle by value; the dmabuf keeps the memory alive */
    CHECK(xio(&e, r.nvmap, NVMAP_IOC_FREE, (void *)(uintptr_t)h) == 0);
    CHECK(xio(&e, r.nvmap, NVMAP_IOC_FREE, (void *)(uintptr_t)h) == EINVAL);
    void *p = e.sys->mmap(e.sys->ctx, NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    CHECK(p != MAP_FAILED);
    e.sys->munmap(e.sys->ctx, p, 4096);
    e.sys->close(e.sys->ctx, fd);
    /* /dev/nvmap itself is not mappable */
    CHECK(e.sys->mmap(e.sys->ctx, NULL, 4096, PROT_READ, MAP_SHARED, r.nvmap, 0) == MAP_FAILED);
    /* a wrong struct size is a different ioctl number: ENOTTY (the 16-byte OPEN_CHANNEL, §4.2) */
    uint8_t big[16] = {0xFF, 0xFF, 0xFF, 0xFF};
    CHECK(xio(&e, r.ctrl, NVGPU_IOC(3, 'G', 11, 16), big) == ENOTTY);
    /* SUBMIT_GPFIFO does not exist for usermode channels (§4.8) */
    CHECK(xio(&e, r.ctrl, NVGPU_IOC(3, 'H', NVGPU_IOCTL_CHANNEL_SUBMIT_GPFIFO_NR, 32), big) == ENOTTY);
    /* ALLOC_AS: PDE (2 MiB) aligned, non-zero, split 0 (§3.1) */
    struct nvgpu_alloc_as_args as = {
        .flags = 2, .va_range_start = 0x1000, .va_range_end = NVGPU_VA_RANGE_END};
    CHECK(xio(&e, r.ctrl, NVGPU_GPU_IOCTL_ALLOC_AS, &as) == EINVAL);
    as.va_range_start = 0;
    CHECK(xio(&e, r.ctrl, NVGPU_GPU_IOCTL_ALLOC_AS, &as) == EINVAL);
    as.va_range_start = NVGPU_VA_RANGE_START;
    as.va_range_split = 1ull << 32;
    CHECK(xio(&e, r.ctrl, NVGPU_GPU_IOCTL_ALLOC_AS, &as) == EINVAL);
    /* a fixed reservation over a taken range */
    struct nvgpu_as_alloc_space_args s = {
        .pages = 16, .page_size = 4096, .flags = 1, .offset = NVGPU_SHARED_WINDOW_VA + 0x10000};
    CHECK(xio(&e, r.as, NVGPU_AS_IOCTL_ALLOC_SPACE, &s) == EBUSY);
    raw_close(&e, &r);
done:
    if (e.d)
        emu_dev_put(e.d);
}

/* The QMD-reuse race (§6.6) is avoided by releasing signals from the pushbuffer: the
 * backend must ask the engine for it, and the full runtime must complete signals on it. */
TEST(pitfall_pushbuffer_signals)
{
    struct tdev e = {0};
    struct kmd *kmd = NULL;
    struct hcq_device *dev = NULL;
    struct hcq_queue *q = NULL;
    struct hcq_signal *sig = NULL;
    struct hcq_program *prog = NULL;
    struct hcq_buf *buf = NULL;
    CHECK_OK(tdev_open(&e, "ga10b"));
    CHECK_OK(nvgpu_kmd_create(e.sys, 0, &kmd));
    CHECK(kmd->info.sem_release_in_push && kmd->info.copies_by_cpu && kmd->info.unified_memory);
    kmd_destroy(kmd);
    kmd = NULL;
    enum hcq_status st = hcq_device_open("emu:ga10b", &dev);
    if (st == HCQ_ERR_UNSUPPORTED)
        SKIP("emu:ga10b device not built yet: %s", hcq_last_error());
    CHECK_OK(st);
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    CHECK_OK(hcq_signal_create(dev, 0, &sig));
    uint64_t v = (th_rand() >> 8) | (1ull << 33); /* crosses 2^32: the 64-bit release */
    for (int i = 1; i <= 64; i++) {
        CHECK_OK(hcq_queue_signal(q, sig, v + (uint64_t)i));
        CHECK_OK(hcq_queue_submit(q));
    }
    CHECK_OK(hcq_signal_wait(sig, v + 64, 5000000000ull));
    CHECK(hcq_signal_value(sig) == v + 64);

    /* tinygrad's exec_2_kernels_100_times shape, the test that returned 198 for 200 on Orin:
     * launch + signal per submission, no waiting in between; every value the host sees must
     * be one that was submitted, in order, and the kernels must have run in order. */
    enum { N = 1000, R = 100 };
    CHECK_OK(hcq_program_load(dev, "k_axpb_u64", &prog));
    CHECK_OK(hcq_buf_alloc(dev, N * sizeof(uint64_t), HCQ_MEM_MAPPABLE, &buf));
    uint64_t *x = hcq_buf_map(buf), ref[N];
    CHECK(x);
    for (int i = 0; i < N; i++)
        ref[i] = x[i] = th_rand();
    uint64_t base = v + 64, seen = base;
    for (int r = 1; r <= R; r++) {
        struct k_axpb_u64_params p = {
            .x_va = hcq_buf_va(buf), .n = N, .mul = 2 * (uint64_t)r + 1, .add = (uint64_t)r};
        uint32_t grid[3] = {4, 1, 1}, block[3] = {256, 1, 1};
        CHECK_OK(hcq_queue_launch(q, prog, grid, block, &p, sizeof p));
        CHECK_OK(hcq_queue_signal(q, sig, base + (uint64_t)r));
        CHECK_OK(hcq_queue_submit(q));
        for (int i = 0; i < N; i++)
            ref[i] = ref[i] * p.mul + p.add;
        uint64_t now = hcq_signal_value(sig);
        CHECKF(now >= seen && now <= base + (uint64_t)r,
               "signal went 0x%llx -> 0x%llx (submitted up to 0x%llx)", (unsigned long long)seen,
               (unsigned long long)now, (unsigned long long)(base + (uint64_t)r));
        seen = now;
    }
    CHECK_OK(hcq_signal_wait(sig, base + R, 10000000000ull));
    CHECK(hcq_signal_value(sig) == base + R);
    for (int i = 0; i < N; i++)
        CHECKF(x[i] == ref[i], "x[%d] = 0x%llx (expected 0x%llx)", i, (unsigned long long)x[i],
               (unsigned long long)ref[i]);
done:
    hcq_buf_free(buf);
    hcq_program_destroy(prog);
    hcq_signal_destroy(sig);
    hcq_queue_destroy(q);
    hcq_device_close(dev);
    kmd_destroy(kmd);
    if (e.d)
        emu_dev_put(e.d);
}

/* Queue semantics on emu:ga10b: a copy queued behind a wait on a signal that another queue
 * sets later must not block the submitting thread. The engine's first copies_by_cpu path
 * turned the queued copy into a host memmove that waited for the copy queue to go idle
 * inside hcq_queue_submit (deadlock, then DEVICE_LOST after 10 s); now only a copy that can
 * run at once is a memmove, this one goes through the copy engine. */
TEST(cross_queue_copy)
{
    struct hcq_device *dev = NULL;
    struct hcq_queue *cq = NULL, *xq = NULL;
    struct hcq_signal *go = NULL, *done = NULL;
    struct hcq_buf *a = NULL, *b = NULL;
    enum { N = 4096 };
    CHECK_OK(hcq_device_open("emu:ga10b", &dev));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &cq));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COPY, &xq));
    CHECK_OK(hcq_signal_create(dev, 0, &go));
    CHECK_OK(hcq_signal_create(dev, 0, &done));
    CHECK_OK(hcq_buf_alloc(dev, N, HCQ_MEM_MAPPABLE, &a));
    CHECK_OK(hcq_buf_alloc(dev, N, HCQ_MEM_MAPPABLE, &b));
    uint8_t *pa = hcq_buf_map(a), *pb = hcq_buf_map(b);
    for (int i = 0; i < N; i++) {
        pa[i] = (uint8_t)th_rand();
        pb[i] = (uint8_t)~pa[i];
    }
    uint64_t t0 = hcq_time_ns();
    CHECK_OK(hcq_queue_wait(xq, go, 1));
    CHECK_OK(hcq_queue_copy(xq, b, 0, a, 0, N));
    CHECK_OK(hcq_queue_signal(xq, done, 1));
    CHECK_OK(hcq_queue_submit(xq));
    CHECKF(hcq_time_ns() - t0 < 1000000000ull, "hcq_queue_submit blocked %.1f s", (hcq_time_ns() - t0) / 1e9);
    CHECK(memcmp(pa, pb, N) != 0); /* the copy must not have run before the wait */
    CHECK_OK(hcq_queue_signal(cq, go, 1));
    CHECK_OK(hcq_queue_submit(cq));
    CHECK_OK(hcq_signal_wait(done, 1, 5000000000ull));
    CHECK(memcmp(pa, pb, N) == 0);
done:
    hcq_buf_free(a);
    hcq_buf_free(b);
    hcq_signal_destroy(go);
    hcq_signal_destroy(done);
    hcq_queue_destroy(xq);
    hcq_queue_destroy(cq);
    hcq_device_close(dev);
}

int
main(int argc, char **argv)
{
    static const struct th_case cases[] = {
        TH_CASE(pitfall_window_reservation), TH_CASE(pitfall_window_reservation_e2e),
        TH_CASE(pitfall_gpfifo_buffer_size), TH_CASE(pitfall_bind_order),
        TH_CASE(pitfall_nvmap_and_abi),      TH_CASE(pitfall_pushbuffer_signals),
        TH_CASE(cross_queue_copy),
    };
    return th_run("nvgpu_pitfalls", NULL, cases, TH_COUNT(cases), argc - 1, argv + 1) ? 1 : 0;
}
