/* SPDX-License-Identifier: MIT */
/*
 * test_nvgpu.c - the Jetson (nvgpu + nvmap) backend and its emulated driver (emu:ga10b):
 * every uapi layout and ioctl number, the bring-up sequence the backend issues, usermode
 * submit, the golden ioctl trace and the error paths, driven by the emulator's fault
 * injection with leak checks, and the kernel-log classifier. The pitfalls of docs/jetson.md
 * are test_nvgpu_pitfalls.c.
 * There is no Jetson here: everything runs against the emulated driver (emu).
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

/* ==== Layouts and numbers (nvgpu.md §5) ==== */

TEST(uapi_layouts)
{
    static const struct {
        const char *name;
        size_t got, want;
    } sz[] = {
        {"nvgpu_gpu_characteristics", sizeof(struct nvgpu_gpu_characteristics), 328},
        {"nvgpu_gpu_get_characteristics", sizeof(struct nvgpu_gpu_get_characteristics), 16},
        {"nvgpu_alloc_as_args", sizeof(struct nvgpu_alloc_as_args), 64},
        {"nvgpu_as_alloc_space_args", sizeof(struct nvgpu_as_alloc_space_args), 32},
        {"nvgpu_as_map_buffer_ex_args", sizeof(struct nvgpu_as_map_buffer_ex_args), 40},
        {"nvgpu_as_unmap_buffer_args", sizeof(struct nvgpu_as_unmap_buffer_args), 8},
        {"nvgpu_gpu_open_tsg_args", sizeof(struct nvgpu_gpu_open_tsg_args), 24},
        {"nvgpu_tsg_create_subcontext_args", sizeof(struct nvgpu_tsg_create_subcontext_args), 16},
        {"nvgpu_gpu_open_channel_args", sizeof(struct nvgpu_gpu_open_channel_args), 4},
        {"nvgpu_channel_setup_bind_args", sizeof(struct nvgpu_channel_setup_bind_args), 104},
        {"nvgpu_alloc_obj_ctx_args", sizeof(struct nvgpu_alloc_obj_ctx_args), 16},
        {"nvmap_alloc_handle", sizeof(struct nvmap_alloc_handle), 20},
        {"nvmap_create_handle", sizeof(struct nvmap_create_handle), 8},
        {"nvgpu_tsg_bind_channel_ex_args", sizeof(struct nvgpu_tsg_bind_channel_ex_args), 24},
        {"nvgpu_channel_wdt_args", sizeof(struct nvgpu_channel_wdt_args), 8},
        {"nvgpu_get_user_syncpoint_args", sizeof(struct nvgpu_get_user_syncpoint_args), 16},
        {"nvgpu_as_bind_channel_args", sizeof(struct nvgpu_as_bind_channel_args), 4},
        {"nvmap_rw_handle", sizeof(struct nvmap_rw_handle), 56},
    };
    for (unsigned i = 0; i < sizeof sz / sizeof sz[0]; i++)
        CHECKF(sz[i].got == sz[i].want, "sizeof %s = %zu (expected %zu)", sz[i].name, sz[i].got, sz[i].want);
    /* The alignment traps of §5.2, checked at run time too (aarch64 under qemu runs this). */
    CHECK(offsetof(struct nvgpu_gpu_characteristics, L2_cache_size) == 24);
    CHECK(offsetof(struct nvgpu_gpu_characteristics, gpc_mask) == 96);
    CHECK(offsetof(struct nvgpu_gpu_characteristics, gpu_va_bit_count) == 122);
    CHECK(offsetof(struct nvgpu_gpu_characteristics, max_gpfifo_entries) == 308);
    CHECK(offsetof(struct nvgpu_channel_setup_bind_args, work_submit_token) == 20);
    CHECK(offsetof(struct nvgpu_as_map_buffer_ex_args, offset) == 32);
    CHECK(offsetof(struct nvmap_alloc_handle, numa_nid) == 16);
done:;
}

TEST(ioctl_numbers)
{
    static const struct {
        const char *name;
        unsigned long got, want;
    } n[] = {
        {"GET_CHARACTERISTICS", NVGPU_GPU_IOCTL_GET_CHARACTERISTICS, 0xC0104705ul},
        {"ALLOC_AS", NVGPU_GPU_IOCTL_ALLOC_AS, 0xC0404708ul},
        {"OPEN_TSG", NVGPU_GPU_IOCTL_OPEN_TSG, 0xC0184709ul},
        {"OPEN_CHANNEL", NVGPU_GPU_IOCTL_OPEN_CHANNEL, 0xC004470Bul},
        {"ZCULL_GET_CTX_SIZE", NVGPU_GPU_IOCTL_ZCULL_GET_CTX_SIZE, 0x80044701ul},
        {"BIND_CHANNEL", NVGPU_AS_IOCTL_BIND_CHANNEL, 0xC0044101ul},
        {"UNMAP_BUFFER", NVGPU_AS_IOCTL_UNMAP_BUFFER, 0xC0084105ul},
        {"ALLOC_SPACE", NVGPU_AS_IOCTL_ALLOC_SPACE, 0xC0204106ul},
        {"MAP_BUFFER_EX", NVGPU_AS_IOCTL_MAP_BUFFER_EX, 0xC0284107ul},
        {"BIND_CHANNEL_EX", NVGPU_TSG_IOCTL_BIND_CHANNEL_EX, 0xC018540Bul},
        {"CREATE_SUBCONTEXT", NVGPU_TSG_IOCTL_CREATE_SUBCONTEXT, 0xC0105412ul},
        {"ALLOC_OBJ_CTX", NVGPU_IOCTL_CHANNEL_ALLOC_OBJ_CTX, 0xC010486Cul},
        {"SET_ERROR_NOTIFIER", NVGPU_IOCTL_CHANNEL_SET_ERROR_NOTIFIER, 0xC018486Ful},
        {"WDT", NVGPU_IOCTL_CHANNEL_WDT, 0x40084877ul},
        {"GET_USER_SYNCPOINT", NVGPU_IOCTL_CHANNEL_GET_USER_SYNCPOINT, 0x8010487Eul},
        {"SETUP_BIND", NVGPU_IOCTL_CHANNEL_SETUP_BIND, 0xC0684880ul},
        {"NVMAP CREATE", NVMAP_IOC_CREATE, 0xC0084E00ul},
        {"NVMAP ALLOC", NVMAP_IOC_ALLOC, 0x40144E03ul},
        {"NVMAP FREE", NVMAP_IOC_FREE, 0x00004E04ul},
        {"NVMAP WRITE", NVMAP_IOC_WRITE, 0x40384E06ul},
        {"NVMAP READ", NVMAP_IOC_READ, 0x40384E07ul},
        {"NVMAP GET_FD", NVMAP_IOC_GET_FD, 0xC0084E0Ful},
        {"NVMAP GET_AVAILABLE_HEAPS", NVMAP_IOC_GET_AVAILABLE_HEAPS, 0x80084E19ul},
    };
    for (unsigned i = 0; i < sizeof n / sizeof n[0]; i++)
        CHECKF(n[i].got == n[i].want, "%s = 0x%08lx (expected 0x%08lx)", n[i].name, n[i].got, n[i].want);
done:;
}

/* ==== Pure helpers ==== */

TEST(mem_plan)
{
    uint64_t s, a;
    nvgpu_mem_plan(1, 0, NVMAP_HANDLE_INNER_CACHEABLE, &s, &a);
    CHECK(s == 4096 && a == 4096);
    nvgpu_mem_plan(5000, 0, NVMAP_HANDLE_INNER_CACHEABLE, &s, &a);
    CHECK(s == 8192 && a == 4096);
    /* >= 8 MiB cacheable: 2 MiB size and alignment (§2.4) */
    nvgpu_mem_plan((8u << 20) + 1, 0, NVMAP_HANDLE_INNER_CACHEABLE, &s, &a);
    CHECK(s == (10u << 20) && a == (2u << 20));
    nvgpu_mem_plan((8u << 20) - 4096, 0, NVMAP_HANDLE_INNER_CACHEABLE, &s, &a);
    CHECK(s == (8u << 20) - 4096 && a == 4096);
    /* write-combined buffers keep 4 KiB */
    nvgpu_mem_plan(16u << 20, 0, NVMAP_HANDLE_WRITE_COMBINE, &s, &a);
    CHECK(s == (16u << 20) && a == 4096);
    nvgpu_mem_plan(4096, 65536, NVMAP_HANDLE_INNER_CACHEABLE, &s, &a);
    CHECK(s == 65536 && a == 65536);
done:;
}

TEST(ring_bytes)
{
    CHECK(nvgpu_chan_ring_bytes(1024) == 8192);
    CHECK(nvgpu_chan_ring_bytes(256) == 4096);
    CHECK(nvgpu_chan_ring_bytes(2) == 4096);
    CHECK(nvgpu_chan_ring_bytes(65536) == 524288);
done:;
}

/* ==== Bring-up on the emulated driver ==== */

/* Position of the n-th (0-based) occurrence of `what` in the trace, or -1. */
static long
trace_pos(const char *trace, const char *what, int nth)
{
    const char *p = trace;
    for (;;) {
        p = strstr(p, what);
        if (!p)
            return -1;
        if (nth-- == 0)
            return p - trace;
        p++;
    }
}

TEST(bringup_discovery)
{
    struct tdev e = {0};
    struct kmd *kmd = NULL;
    CHECK_OK(tdev_open(&e, "ga10b,trace"));
    /* Report a topology where SMs per TPC is not 2: the backend must not assume it (§6.11). */
    struct emu_nvgpu *m = emu_nvgpu_of(e.d);
    m->num_vsms = 24;
    CHECK_OK(nvgpu_kmd_create(e.sys, 0, &kmd));
    const struct kmd_info *in = &kmd->info;
    CHECKF(in->sm_count == 24 && in->tpc_count == 8 && in->gpc_count == 2, "sm %u tpc %u gpc %u",
           in->sm_count, in->tpc_count, in->gpc_count);
    CHECK(in->litter_sm_per_tpc == 3 && in->litter_tpc_per_gpc == 4 && in->litter_gpcs == 2);
    CHECK(in->max_warps_per_sm == 48);
    CHECK(in->unified_memory && in->sem_release_in_push && in->copies_by_cpu && !in->has_uvm);
    CHECK(in->shared_window_va == NVGPU_SHARED_WINDOW_VA && in->local_window_va == NVGPU_LOCAL_WINDOW_VA);
    CHECK(kmd->arch && kmd->arch->compute_cls == AMPERE_COMPUTE_B &&
          kmd->arch->copy_cls == AMPERE_DMA_COPY_B);
    CHECKF(kmd->arch->sm_version == 87 && !strcmp(kmd->arch->name, "ga10b"), "arch %s sm_%u", kmd->arch->name,
           kmd->arch->sm_version); /* not ga102, which has the same classes */
    CHECK(strstr(in->name, "ga10b"));
    struct nvgpu_kmd *k = nvgpu_kmd_from(kmd);
    CHECK(k->windows_reserved && k->veid == 1 && k->usermode);

    /* Order (§1.3): characteristics, AS, both reservations, doorbell page, TSG, subcontext. */
    const char *tr = emu_dev_trace(e.d);
    long ch = trace_pos(tr, "GET_CHARACTERISTICS", 0), as = trace_pos(tr, "ALLOC_AS", 0);
    long r1 = trace_pos(tr, "ALLOC_SPACE", 0), r2 = trace_pos(tr, "ALLOC_SPACE", 1);
    long tsg = trace_pos(tr, "OPEN_TSG", 0), sub = trace_pos(tr, "CREATE_SUBCONTEXT", 0);
    CHECKF(ch >= 0 && ch < as && as < r1 && r1 < r2 && r2 < tsg && tsg < sub, "trace order:\n%s", tr);
    CHECK(trace_pos(tr, "NUM_VSMS", 0) >= 0 && trace_pos(tr, "GET_TPC_MASKS", 0) >= 0);
    CHECK(trace_pos(tr, "MAP_BUFFER_EX", 0) < 0);
done:
    kmd_destroy(kmd);
    if (e.d)
        emu_dev_put(e.d);
}

TEST(channel_bringup)
{
    struct tdev e = {0};
    struct kmd *kmd = NULL;
    struct kmd_channel *cc = NULL, *dc = NULL;
    CHECK_OK(tdev_open(&e, "ga10b,trace"));
    CHECK_OK(nvgpu_kmd_create(e.sys, 0, &kmd));
    CHECK_OK(kmd_channel_create(kmd, KMD_ENGINE_COMPUTE, 1024, &cc));
    CHECK_OK(kmd_channel_create(kmd, KMD_ENGINE_COPY, 1024, &dc));
    CHECK(cc->token == 511 && dc->token == 510); /* §1.3 */
    CHECK(cc->obj_cls == AMPERE_COMPUTE_B && dc->obj_cls == AMPERE_DMA_COPY_B);
    CHECK(cc->entries == 1024 && cc->ring && cc->userd);
    /* Dedicated, exactly sized ring (8 KiB for 1024 entries) and 4 KiB USERD (§4.4). */
    struct nvgpu_chan *c = hcq_container_of(cc, struct nvgpu_chan, base);
    CHECK(c->ring->base.size_B == 8192 && c->userd->base.size_B == 4096);
    CHECK(!c->ring->gpu_mapped && c->ring->nvmap_flags == TAGGED(NVMAP_HANDLE_WRITE_COMBINE));
    /* Per channel: OPEN_CHANNEL, AS bind, TSG bind, WDT, SETUP_BIND, ALLOC_OBJ_CTX (§4.2-4.5). */
    const char *tr = emu_dev_trace(e.d);
    for (int i = 0; i < 2; i++) {
        long o = trace_pos(tr, "OPEN_CHANNEL", i), a = trace_pos(tr, "AS_IOCTL_BIND_CHANNEL", i);
        long b = trace_pos(tr, "BIND_CHANNEL_EX", i), w = trace_pos(tr, "CHANNEL_WDT", i);
        long n = trace_pos(tr, "SET_ERROR_NOTIFIER", i);
        long s = trace_pos(tr, "SETUP_BIND", i), x = trace_pos(tr, "ALLOC_OBJ_CTX", i);
        CHECKF(o >= 0 && o < a && a < b && b < w && w < n && n < s && s < x, "channel %d order:\n%s", i, tr);
    }
    struct kmd_channel *bad = NULL;
    CHECK(kmd_channel_create(kmd, KMD_ENGINE_COMPUTE, 1000, &bad) == HCQ_ERR_INVALID && !bad);
done:
    kmd_destroy(kmd); /* frees the channels too */
    if (e.d)
        emu_dev_put(e.d);
}

/* Memory: tagged IOVMM allocations, CPU map aliases what the GPU reads, 2 MiB for big ones. */
TEST(memory)
{
    struct tdev e = {0};
    struct kmd *kmd = NULL;
    struct kmd_mem *a = NULL, *b = NULL;
    CHECK_OK(tdev_open(&e, "ga10b"));
    CHECK_OK(nvgpu_kmd_create(e.sys, 0, &kmd));
    CHECK_OK(kmd_mem_alloc(kmd, 12345, 0, 0, &a));
    CHECK_OK(kmd_mem_alloc(kmd, 9u << 20, 0, 0, &b));
    CHECK(a->size_B == 16384 && a->map && a->va && a->va + a->size_B <= (1ull << 40));
    CHECK((uintptr_t)a->map != a->va); /* no MAP_FIXED at the GPU VA (§2.5 [REC]) */
    CHECK(b->size_B == (10u << 20) && b->va % (2u << 20) == 0);
    struct nvgpu_mem *na = hcq_container_of(a, struct nvgpu_mem, base);
    CHECK(na->nvmap_flags == TAGGED(NVMAP_HANDLE_INNER_CACHEABLE));
    CHECK((a->handle & 0x80000000u) != 0);
    /* The GPU's view (emulated page tables) is the CPU mapping's memory. */
    struct emu_vm *vm = emu_nvgpu_as_vm(emu_nvgpu_as_from_fd(emu_nvgpu_of(e.d), nvgpu_kmd_from(kmd)->as_fd));
    uint32_t *gpu = emu_mem_ptr(vm, a->va, a->size_B);
    CHECK(gpu);
    uint32_t v = (uint32_t)th_rand();
    ((volatile uint32_t *)a->map)[100] = v;
    CHECK(gpu[100] == v);
    gpu[101] = ~v;
    CHECK(((volatile uint32_t *)a->map)[101] == ~v);
    /* VAs come top-down (§3.2): the later, bigger buffer sits below the first */
    CHECK(b->va + b->size_B <= a->va);
    uint64_t a_va = a->va;
    kmd_mem_free(kmd, a);
    a = NULL;
    CHECK(emu_mem_ptr(vm, a_va, 4096) == NULL); /* unmapped from the GPU on free */
    CHECK(emu_mem_ptr(vm, b->va, 4096) != NULL);
done:
    kmd_mem_free(kmd, a);
    kmd_mem_free(kmd, b);
    kmd_destroy(kmd);
    if (e.d)
        emu_dev_put(e.d);
}

/* ==== Usermode submit (§4.8-4.9) ==== */

/* A host semaphore release (the §4.9 worked example) through the backend's channel: ring
 * entry, GP_PUT, doorbell; the emulated GPU must write the 64-bit payload. */
TEST(usermode_submit)
{
    struct tdev e = {0};
    struct kmd *kmd = NULL;
    struct kmd_channel *ch = NULL;
    struct kmd_mem *pb = NULL, *sem = NULL;
    CHECK_OK(tdev_open(&e, "ga10b"));
    CHECK_OK(nvgpu_kmd_create(e.sys, 0, &kmd));
    CHECK_OK(kmd_channel_create(kmd, KMD_ENGINE_COMPUTE, 1024, &ch));
    CHECK_OK(kmd_mem_alloc(kmd, 4096, 0, 0, &pb));
    CHECK_OK(kmd_mem_alloc(kmd, 4096, 0, KMD_MEM_UNCACHED, &sem));
    volatile uint64_t *sv = sem->map;
    sv[0] = 0;
    uint64_t payload = (th_rand() | 1) & 0xFFFFFFFFFFull;
    uint32_t *w = pb->map;
    w[0] = (2u << 28) | (5u << 16) | (0u << 13) | (0x05Cu >> 2); /* SEM_ADDR_LO.. x5, subchannel 0 */
    w[1] = (uint32_t)sem->va;
    w[2] = (uint32_t)(sem->va >> 32) & 0xFF;
    w[3] = (uint32_t)payload;
    w[4] = (uint32_t)(payload >> 32);
    w[5] = 0x03100001u; /* release | WFI | 64-bit | timestamp (§6.1) */
    ch->ring[0] = (pb->va & ~3ull) | (6ull << 42) | (1ull << 41);
    /* GP_PUT alone does nothing: the GPU does not poll USERD (§4.8); nor does a doorbell
     * carrying another channel's token. */
    volatile uint32_t *gp_put = (volatile uint32_t *)(ch->userd + NVC56F_GP_PUT);
    volatile uint32_t *gp_get = (volatile uint32_t *)(ch->userd + NVC56F_GP_GET);
    volatile uint32_t *bell =
        (volatile uint32_t *)(nvgpu_kmd_from(kmd)->usermode + NV_USERMODE_NOTIFY_CHANNEL_PENDING);
    *gp_put = 1;
    usleep(100000);
    CHECKF(sv[0] == 0 && *gp_get == 0, "work ran without a doorbell (GPGet %u)", *gp_get);
    *bell = ch->token ^ 0x40u;
    usleep(50000);
    CHECKF(sv[0] == 0 && *gp_get == 0, "work ran on a wrong token (GPGet %u)", *gp_get);
    kmd_channel_kick(kmd, ch, 1);
    CHECK(*(volatile uint32_t *)(ch->userd + NVC56F_GP_PUT) == 1);
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        if (sv[0] == payload)
            break;
        clock_gettime(CLOCK_MONOTONIC, &now);
        CHECKF((now.tv_sec - t0.tv_sec) < 5, "semaphore 0x%llx after 5 s (expected 0x%llx)",
               (unsigned long long)sv[0], (unsigned long long)payload);
        usleep(100);
    }
    CHECK(sv[1] != 0); /* timestamp */
    /* GP_GET advances once the entry is done, which may be just after the release landed */
    while (*gp_get != 1 &&
           hcq_time_ns() - (uint64_t)t0.tv_sec * 1000000000ull - (uint64_t)t0.tv_nsec < 5000000000ull)
        usleep(100);
    CHECKF(*gp_get == 1, "GPGet %u (expected 1)", *gp_get);
done:
    kmd_mem_free(kmd, pb);
    kmd_mem_free(kmd, sem);
    kmd_channel_destroy(kmd, ch);
    kmd_destroy(kmd);
    if (e.d)
        emu_dev_put(e.d);
}

/* A channel fault reaches the process through the error notifier (SET_ERROR_NOTIFIER):
 * check() reports DEVICE_LOST with the decoded code instead of a wait running into its
 * timeout, and the kernel log gets a line selftest classifies as an error. */
TEST(channel_fault_notifier)
{
    struct tdev e = {0};
    struct kmd *kmd = NULL;
    struct kmd_channel *ch = NULL, *other = NULL;
    char why[256] = "";
    CHECK_OK(tdev_open(&e, "ga10b"));
    CHECK_OK(nvgpu_kmd_create(e.sys, 0, &kmd));
    CHECK_OK(kmd_channel_create(kmd, KMD_ENGINE_COPY, 256, &other));
    CHECK_OK(kmd_channel_create(kmd, KMD_ENGINE_COMPUTE, 256, &ch));
    CHECK(kmd_check(kmd, why, sizeof why) == HCQ_OK);
    /* a GPFIFO entry pointing at a pushbuffer VA nobody mapped (inside the reserved window) */
    ch->ring[0] = (NVGPU_SHARED_WINDOW_VA + 0x1000) | (4ull << 42) | (1ull << 41);
    kmd_channel_kick(kmd, ch, 1);
    uint64_t t0 = hcq_time_ns();
    enum hcq_status st;
    while ((st = kmd_check(kmd, why, sizeof why)) == HCQ_OK && hcq_time_ns() - t0 < 5000000000ull)
        usleep(1000);
    CHECKF(st == HCQ_ERR_DEVICE_LOST, "check: %d after %.1f s", st, (hcq_time_ns() - t0) / 1e9);
    CHECKF(strstr(why, "MMU fault") && strstr(why, "compute") && strstr(why, "token 511") == NULL &&
               strstr(why, "token 510"),
           "reason: %s", why);
    struct klog_report n;
    CHECK(klog_scan(emu_nvgpu_klog_text(e.d), &n, NULL, 0) >= 1);
    CHECK(!strcmp(nvgpu_chan_error_name(NVGPU_CHANNEL_PBDMA_ERROR),
                  "PBDMA error (bad pushbuffer or GPFIFO entry)"));
done:
    kmd_destroy(kmd);
    if (e.d)
        emu_dev_put(e.d);
}
/* ==== Golden ioctl trace of a device open + launch + close on emu:ga10b ==== */

/* The trace without mapping lengths: the code buffer's size depends on whether the build
 * embeds cubins (nvcc) or the engine uploads an emulator program stub (NOCUDA=1). */
static void
golden_normalize(const char *in, char *out, size_t out_B)
{
    size_t o = 0;
    while (*in && o + 1 < out_B) {
        if (!strncmp(in, " len=0x", 7)) {
            in += 7;
            while ((*in >= '0' && *in <= '9') || (*in >= 'a' && *in <= 'f'))
                in++;
            continue;
        }
        out[o++] = *in++;
    }
    out[o] = 0;
}

/* tests/golden/emu_ga10b_open_launch.txt is the sequence of nvgpu.md §1.3/§10 as this
 * backend issues it; GOLDEN_UPDATE=1 rewrites it (review the diff). */
TEST(golden_ga10b_open_launch)
{
    const char *path = "tests/golden/emu_ga10b_open_launch.txt";
    struct tdev e = {0};
    struct kmd *kmd = NULL;
    struct hcq_device *dev = NULL;
    struct hcq_queue *q = NULL;
    struct hcq_program *prog = NULL;
    struct hcq_buf *buf = NULL;
    static char want[1 << 16], got[1 << 16];
    CHECK_OK(tdev_open(&e, "ga10b,trace"));
    CHECK_OK(nvgpu_kmd_create(e.sys, 0, &kmd));
    emu_kmd_adopt(kmd, e.d);
    struct kmd *owned = kmd;
    kmd = NULL; /* the engine owns it from here, also on failure */
    CHECK_OK(pb_device_create(owned, "emu", "emu:ga10b", &dev));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    CHECK_OK(hcq_program_load(dev, "k_fill_u32", &prog));
    CHECK_OK(hcq_buf_alloc(dev, 1 << 16, HCQ_MEM_HOST, &buf));
    struct k_fill_u32_params p = {.dst_va = hcq_buf_va(buf), .n = 1 << 14, .value = 0x600DF00Du};
    uint32_t grid[3] = {64, 1, 1}, block[3] = {256, 1, 1};
    CHECK_OK(hcq_queue_launch(q, prog, grid, block, &p, sizeof p));
    CHECK_OK(hcq_queue_finish(q, 5000000000ull));
    CHECK(((uint32_t *)hcq_buf_map(buf))[(1 << 14) - 1] == 0x600DF00Du);
    hcq_buf_free(buf);
    buf = NULL;
    hcq_program_destroy(prog);
    prog = NULL;
    hcq_queue_destroy(q);
    q = NULL;
    hcq_device_close(dev);
    dev = NULL;
    golden_normalize(emu_dev_trace(e.d), got, sizeof got);
    if (getenv("GOLDEN_UPDATE") && !strcmp(getenv("GOLDEN_UPDATE"), "1")) {
        FILE *f = fopen(path, "w");
        CHECKF(f, "cannot write %s", path);
        fputs(got, f);
        fclose(f);
        goto done;
    }
    FILE *f = fopen(path, "r");
    CHECKF(f, "%s missing (run from the repository root; GOLDEN_UPDATE=1 writes it)", path);
    size_t n = fread(want, 1, sizeof want - 1, f);
    fclose(f);
    want[n] = 0;
    const char *a = want, *b = got;
    for (int line = 1; *a || *b; line++) {
        const char *ea = strchr(a, '\n'), *eb = strchr(b, '\n');
        size_t la = ea ? (size_t)(ea - a) : strlen(a), lb = eb ? (size_t)(eb - b) : strlen(b);
        CHECKF(la == lb && !memcmp(a, b, la), "%s:%d: expected '%.*s', got '%.*s'", path, line, (int)la, a,
               (int)lb, b);
        a += la + (ea ? 1 : 0);
        b += lb + (eb ? 1 : 0);
    }
done:
    hcq_buf_free(buf);
    hcq_program_destroy(prog);
    hcq_queue_destroy(q);
    hcq_device_close(dev);
    kmd_destroy(kmd);
    if (e.d)
        emu_dev_put(e.d);
}

/* ==== Error paths (fault injection), with leak checks ==== */

/* Every ioctl of the bring-up fails once in turn: create must fail cleanly and leave no
 * emulator resource (fd, mapping, bo, vm, channel) behind. */
TEST(fault_bringup)
{
    static const char *names[] = {
        "NVGPU_GPU_IOCTL_GET_CHARACTERISTICS",
        "NVGPU_GPU_IOCTL_GET_TPC_MASKS",
        "NVGPU_GPU_IOCTL_NUM_VSMS",
        "NVGPU_GPU_IOCTL_ALLOC_AS",
        "NVGPU_AS_IOCTL_ALLOC_SPACE",
        "NVGPU_AS_IOCTL_ALLOC_SPACE@2",
        "NVGPU_GPU_IOCTL_OPEN_TSG",
        "NVGPU_TSG_IOCTL_CREATE_SUBCONTEXT",
    };
    struct emu_stats base, now;
    emu_stats_get(&base);
    for (unsigned i = 0; i < sizeof names / sizeof names[0]; i++) {
        char opts[96];
        snprintf(opts, sizeof opts, "ga10b,fail_ioctl=%s", names[i]);
        struct tdev e = {0};
        struct kmd *kmd = (struct kmd *)1;
        CHECK_OK(tdev_open(&e, opts));
        enum hcq_status st = nvgpu_kmd_create(e.sys, 0, &kmd);
        emu_dev_put(e.d);
        CHECKF(st == HCQ_ERR_DRIVER && kmd == NULL, "%s: status %d", names[i], st);
        CHECKF(strstr(hcq_last_error(), "nvgpu_kmd") || strstr(hcq_last_error(), "NVGPU") ||
                   strstr(hcq_last_error(), "ALLOC_SPACE"),
               "%s: message '%s'", names[i], hcq_last_error());
        emu_stats_get(&now);
        CHECKF(stats_equal(&base, &now), "%s: leaked fds %lld bos %lld vms %lld maps %lld", names[i],
               (long long)(now.fds - base.fds), (long long)(now.bos - base.bos),
               (long long)(now.vms - base.vms), (long long)(now.maps - base.maps));
    }
    /* /dev/nvmap absent: a quiet NOT_FOUND (how `auto` skips nvgpu off Jetson) */
    struct tdev e = {0};
    struct kmd *kmd = NULL;
    CHECK_OK(tdev_open(&e, "ga10b,fail_open=/dev/nvmap"));
    enum hcq_status st = nvgpu_kmd_create(e.sys, 0, &kmd);
    emu_dev_put(e.d);
    CHECK(st == HCQ_ERR_NOT_FOUND && !kmd);
    if (access(NVGPU_DEV_NVMAP, F_OK) != 0) {
        struct hcq_device *dev = NULL;
        CHECK(hcq_nvgpu_open("0", &dev) == HCQ_ERR_NOT_FOUND && !dev);
    }
    emu_stats_get(&now);
    CHECK(stats_equal(&base, &now));
done:;
}

/* Channel creation fails at each step (ioctls and each nvmap allocation). */
TEST(fault_channel)
{
    static const char *names[] = {
        "NVGPU_GPU_IOCTL_OPEN_CHANNEL",
        "NVGPU_AS_IOCTL_BIND_CHANNEL",
        "NVGPU_TSG_IOCTL_BIND_CHANNEL_EX",
        "NVGPU_IOCTL_CHANNEL_WDT",
        "NVMAP_IOC_CREATE",
        "NVMAP_IOC_ALLOC@2",
        "NVMAP_IOC_GET_FD@3",
        "NVGPU_IOCTL_CHANNEL_SETUP_BIND",
        "NVGPU_IOCTL_CHANNEL_ALLOC_OBJ_CTX",
        "NVGPU_IOCTL_CHANNEL_SETUP_BIND@2",
    };
    struct emu_stats base, now;
    emu_stats_get(&base);
    for (unsigned i = 0; i < sizeof names / sizeof names[0] + 3; i++) {
        char opts[96];
        if (i < sizeof names / sizeof names[0])
            snprintf(opts, sizeof opts, "ga10b,fail_ioctl=%s", names[i]);
        else /* the error notifier's, the ring's, then the USERD's nvmap allocation fails */
            snprintf(opts, sizeof opts, "ga10b,fail_alloc=%u",
                     i - (unsigned)(sizeof names / sizeof names[0]) + 1);
        struct tdev e = {0};
        struct kmd *kmd = NULL;
        struct kmd_channel *a = NULL, *b = (struct kmd_channel *)1;
        CHECK_OK(tdev_open(&e, opts));
        CHECK_OK(nvgpu_kmd_create(e.sys, 0, &kmd));
        enum hcq_status st = kmd_channel_create(kmd, KMD_ENGINE_COMPUTE, 1024, &a);
        if (st == HCQ_OK) /* the @2 cases hit the second channel */
            st = kmd_channel_create(kmd, KMD_ENGINE_COPY, 1024, &b);
        else
            b = NULL;
        enum hcq_status want = strstr(opts, "fail_alloc") ? HCQ_ERR_NOMEM : HCQ_ERR_DRIVER;
        CHECKF(st == want && b == NULL, "%s: status %d (expected %d)", opts, st, want);
        kmd_destroy(kmd);
        emu_dev_put(e.d);
        emu_stats_get(&now);
        CHECKF(stats_equal(&base, &now), "%s: leaked fds %lld bos %lld maps %lld chans %lld", opts,
               (long long)(now.fds - base.fds), (long long)(now.bos - base.bos),
               (long long)(now.maps - base.maps), (long long)(now.chans - base.chans));
    }
    /* a kernel refusing SET_ERROR_NOTIFIER (unproven on hardware) costs fault reporting only */
    {
        struct tdev e = {0};
        struct kmd *kmd = NULL;
        struct kmd_channel *c = NULL;
        CHECK_OK(tdev_open(&e, "ga10b,fail_ioctl=NVGPU_IOCTL_CHANNEL_SET_ERROR_NOTIFIER"));
        CHECK_OK(nvgpu_kmd_create(e.sys, 0, &kmd));
        enum hcq_status st = kmd_channel_create(kmd, KMD_ENGINE_COMPUTE, 1024, &c);
        bool no_notifier = st == HCQ_OK && !hcq_container_of(c, struct nvgpu_chan, base)->notifier;
        kmd_destroy(kmd);
        emu_dev_put(e.d);
        CHECKF(no_notifier, "channel without notifier: status %d", st);
        emu_stats_get(&now);
        CHECK(stats_equal(&base, &now));
    }
    /* memory: the GPU map fails -> everything before it undone */
    struct tdev e = {0};
    struct kmd *kmd = NULL;
    struct kmd_mem *m = (struct kmd_mem *)1;
    CHECK_OK(tdev_open(&e, "ga10b,fail_ioctl=NVGPU_AS_IOCTL_MAP_BUFFER_EX"));
    CHECK_OK(nvgpu_kmd_create(e.sys, 0, &kmd));
    CHECK(kmd_mem_alloc(kmd, 4096, 0, 0, &m) == HCQ_ERR_DRIVER && m == NULL);
    kmd_destroy(kmd);
    emu_dev_put(e.d);
    emu_stats_get(&now);
    CHECK(stats_equal(&base, &now));
done:;
}

/* ==== Kernel log classification (nvgpu.md §8.3), used by `nvhcq selftest` ==== */

TEST(klog_classify)
{
    static const struct {
        const char *line;
        enum klog_level level;
        const char *name;
    } v[] = {
        {"[  812.1] nvgpu: 17000000.gpu     gv11b_gr_intr_handle_sked_exception: sked exception: esr "
         "0x01000000",
         KLOG_ERROR, "SKED_EXCEPTION"},
        {"[  812.2] nvgpu: 17000000.gpu nvgpu_report_mmu_err: MMU Fault: engine gr, va 0xfe00200000",
         KLOG_ERROR, "MMU_FAULT"},
        {"[  812.3] nvgpu: 17000000.gpu gk20a_fifo_handle_pbdma_intr: fifo_pbdma_0 intr 0x00040000",
         KLOG_ERROR, "PBDMA_INTR"},
        {"[  812.4] nvgpu: 17000000.gpu   nvgpu_set_gr_exception: set gr exception notifier", KLOG_ERROR,
         "GR_EXCEPTION"},
        {"[  812.5] nvgpu: 17000000.gpu CE engine 2 is not idle", KLOG_ERROR, "CE_NOT_IDLE"},
        {"[  812.6] nvgpu: 17000000.gpu ctxsw_timeout detected on tsg 3", KLOG_ERROR, "CTXSW_TIMEOUT"},
        {"nvgpu: 17000000.gpu sm machine check err. gpc_id(0), tpc_id(0)", KLOG_ERROR, "SM_MACHINE_CHECK"},
        {"nvgpu: 17000000.gpu hww_warp_esr 0x10 (MISALIGNED_ADDR)", KLOG_ERROR, "HWW_WARP_ESR"},
        {"nvgpu: 17000000.gpu tu104_gr_init_commit_rtv_cb:100 [WARNING]", KLOG_HARMLESS, "RTV_CB"},
        {"WARNING: CPU: 3 PID: 812 at nvmap_alloc_handle+0x1c0: tag not specified", KLOG_WARNING,
         "NVMAP_TAG"},
        {"nvgpu: 17000000.gpu nvgpu_cic_mon_report_err: Error reporting is not supported", KLOG_WARNING,
         "ERR_REPORT_UNSUPPORTED"},
        {"nvgpu: 17000000.gpu gk20a_channel_open_ioctl: channel 511", KLOG_NOTICE, "INFO"},
        {"usb 1-2: new high-speed USB device number 3 using tegra-xusb", KLOG_UNRELATED, ""},
        {"EXT4-fs (nvme0n1p1): mmu fault-free remount", KLOG_UNRELATED, ""},
    };
    for (unsigned i = 0; i < sizeof v / sizeof v[0]; i++) {
        struct klog_hit c;
        klog_classify(v[i].line, strlen(v[i].line), &c);
        CHECKF(c.cls == v[i].level && !strcmp(c.name, v[i].name), "'%s' -> %d %s (expected %d %s)", v[i].line,
               c.cls, c.name, v[i].level, v[i].name);
    }
    struct klog_report n;
    char rep[1024];
    const char *text = "nvgpu: a tu104_gr_init_commit_rtv_cb\nnvgpu: sked exception: esr 0x1\nhello\n"
                       "nvmap: WARNING: nvmap_alloc_handle: allocation tag not specified\nnvgpu: open";
    CHECK(klog_scan(text, &n, rep, sizeof rep) == 1);
    CHECK(n.errors == 1 && n.warnings == 1 && n.harmless == 1 && n.notices == 1);
    CHECK(strstr(rep, "ERROR SKED_EXCEPTION: nvgpu: sked exception") && strstr(rep, "WARNING NVMAP_TAG"));
    CHECK(!strstr(rep, "rtv_cb") && !strstr(rep, "hello"));
done:;
}

int
main(int argc, char **argv)
{
    static const struct th_case cases[] = {
        TH_CASE(uapi_layouts),
        TH_CASE(ioctl_numbers),
        TH_CASE(mem_plan),
        TH_CASE(ring_bytes),
        TH_CASE(bringup_discovery),
        TH_CASE(channel_bringup),
        TH_CASE(memory),
        TH_CASE(usermode_submit),
        TH_CASE(channel_fault_notifier),
        TH_CASE(golden_ga10b_open_launch),
        TH_CASE(fault_bringup),
        TH_CASE(fault_channel),
        TH_CASE(klog_classify),
    };
    return th_run("nvgpu", NULL, cases, TH_COUNT(cases), argc - 1, argv + 1) ? 1 : 0;
}
