/* SPDX-License-Identifier: MIT */
/*
 * test_nvgpu.c - the Jetson (nvgpu + nvmap) backend and its emulated driver (emu:ga10b):
 * every uapi layout and ioctl number, the bring-up sequence the backend issues, each
 * pitfall of docs/jetson.md shown to be avoided (shader-window reservation, exactly-sized
 * GPFIFO buffer, AS-before-TSG bind order, nvmap heap/tag, pushbuffer signals) and the
 * error paths, driven by the emulator's fault injection with leak checks.
 * There is no Jetson here: everything runs against the emulated driver (emu).
 */
#include "emu.h"
#include "emu_nvgpu.h"
#include "harness.h"
#include "hcq_priv.h"
#include "k_params.h"
#include "nvgpu_kmd.h"
#include "klog.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* ==== Helpers ==== */

struct tdev {
    struct emu_dev *d;
    const struct sys *sys;
};

static enum hcq_status
tdev_open(struct tdev *t, const char *opts)
{
    struct emu_opts o;
    enum hcq_status st = emu_opts_parse(opts, &o);
    if (st != HCQ_OK)
        return st;
    if ((st = emu_dev_create(&o, &t->d)) != HCQ_OK)
        return st;
    t->sys = emu_dev_sys(t->d);
    return HCQ_OK;
}

/* 0 or errno */
static int
xio(const struct tdev *t, int fd, unsigned long req, void *arg)
{
    errno = 0;
    return t->sys->ioctl(t->sys->ctx, fd, req, arg) < 0 ? errno : 0;
}

/* An nvmap buffer through raw ioctls; returns the dmabuf fd or -errno. */
static int
raw_buf(const struct tdev *t, int nvmap, uint32_t size, uint32_t flags, uint32_t heap, uint32_t *handle_out)
{
    struct nvmap_create_handle c = {.size = size};
    int e = xio(t, nvmap, NVMAP_IOC_CREATE, &c);
    if (e)
        return -e;
    struct nvmap_alloc_handle a = {.handle = c.handle, .heap_mask = heap, .flags = flags, .align = 4096};
    if ((e = xio(t, nvmap, NVMAP_IOC_ALLOC, &a)))
        return -e;
    struct nvmap_create_handle g = {.handle = c.handle};
    if ((e = xio(t, nvmap, NVMAP_IOC_GET_FD, &g)))
        return -e;
    if (handle_out)
        *handle_out = c.handle;
    return g.fd;
}

#define TAGGED(cache) ((NVMAP_ALLOC_TAG_NVHCQ << NVMAP_HANDLE_TAG_SHIFT) | (cache))

struct raw {
    int nvmap, ctrl, as, tsg, veid;
};

/* The driver-level objects up to the TSG subcontext; reserve: also the two windows. */
static int
raw_bringup(const struct tdev *t, struct raw *r, bool reserve)
{
    r->nvmap = t->sys->open(t->sys->ctx, NVGPU_DEV_NVMAP, O_RDWR);
    r->ctrl = t->sys->open(t->sys->ctx, NVGPU_DEV_CTRL, O_RDWR);
    if (r->nvmap < 0 || r->ctrl < 0)
        return ENOENT;
    struct nvgpu_alloc_as_args as = {.flags = NVGPU_GPU_IOCTL_ALLOC_AS_FLAGS_UNIFIED_VA,
                                     .va_range_start = NVGPU_VA_RANGE_START,
                                     .va_range_end = NVGPU_VA_RANGE_END};
    int e = xio(t, r->ctrl, NVGPU_GPU_IOCTL_ALLOC_AS, &as);
    if (e)
        return e;
    r->as = as.as_fd;
    for (int i = 0; reserve && i < 2; i++) {
        struct nvgpu_as_alloc_space_args s = {.pages = NVGPU_WINDOW_RESERVE_B / 4096, .page_size = 4096,
                                              .flags = NVGPU_AS_ALLOC_SPACE_FLAGS_FIXED_OFFSET,
                                              .offset = i ? NVGPU_SHARED_WINDOW_VA : NVGPU_LOCAL_WINDOW_VA};
        if ((e = xio(t, r->as, NVGPU_AS_IOCTL_ALLOC_SPACE, &s)))
            return e;
    }
    struct nvgpu_gpu_open_tsg_args ts = {0};
    if ((e = xio(t, r->ctrl, NVGPU_GPU_IOCTL_OPEN_TSG, &ts)))
        return e;
    r->tsg = ts.tsg_fd;
    struct nvgpu_tsg_create_subcontext_args sc = {.type = NVGPU_TSG_SUBCONTEXT_TYPE_ASYNC, .as_fd = r->as};
    if ((e = xio(t, r->tsg, NVGPU_TSG_IOCTL_CREATE_SUBCONTEXT, &sc)))
        return e;
    r->veid = (int)sc.veid;
    return 0;
}

static void
raw_close(const struct tdev *t, const struct raw *r)
{
    int fds[] = {r->tsg, r->as, r->ctrl, r->nvmap};
    for (unsigned i = 0; i < 4; i++)
        if (fds[i] > 0)
            t->sys->close(t->sys->ctx, fds[i]);
}

static bool
stats_equal(const struct emu_stats *a, const struct emu_stats *b)
{
    return a->devs == b->devs && a->fds == b->fds && a->maps == b->maps && a->bos == b->bos && a->vms == b->vms &&
           a->chans == b->chans && a->threads == b->threads;
}

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
    CHECKF(in->sm_count == 24 && in->tpc_count == 8 && in->gpc_count == 2, "sm %u tpc %u gpc %u", in->sm_count,
           in->tpc_count, in->gpc_count);
    CHECK(in->litter_sm_per_tpc == 3 && in->litter_tpc_per_gpc == 4 && in->litter_gpcs == 2);
    CHECK(in->max_warps_per_sm == 48);
    CHECK(in->unified_memory && in->sem_release_in_push && in->copies_by_cpu && !in->has_uvm);
    CHECK(in->shared_window_va == NVGPU_SHARED_WINDOW_VA && in->local_window_va == NVGPU_LOCAL_WINDOW_VA);
    CHECK(kmd->arch && kmd->arch->compute_cls == AMPERE_COMPUTE_B && kmd->arch->copy_cls == AMPERE_DMA_COPY_B);
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
    volatile uint32_t *bell = (volatile uint32_t *)(nvgpu_kmd_from(kmd)->usermode + NV_USERMODE_NOTIFY_CHANNEL_PENDING);
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
    while (*gp_get != 1 && hcq_time_ns() - (uint64_t)t0.tv_sec * 1000000000ull - (uint64_t)t0.tv_nsec < 5000000000ull)
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
    CHECK(!strcmp(nvgpu_chan_error_name(NVGPU_CHANNEL_PBDMA_ERROR), "PBDMA error (bad pushbuffer or GPFIFO entry)"));
done:
    kmd_destroy(kmd);
    if (e.d)
        emu_dev_put(e.d);
}

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
    CHECKF(!overlaps_window(hcq_buf_va(act), act_B), "activation at 0x%llx", (unsigned long long)hcq_buf_va(act));
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
    struct nvgpu_tsg_bind_channel_ex_args tb = {.channel_fd = o.channel_fd, .subcontext_id = (uint32_t)r->veid};
    struct nvgpu_channel_wdt_args w = {.wdt_status = NVGPU_IOCTL_CHANNEL_DISABLE_WDT};
    if ((e = xio(t, r->as, NVGPU_AS_IOCTL_BIND_CHANNEL, &ab)) || (e = xio(t, r->tsg, NVGPU_TSG_IOCTL_BIND_CHANNEL_EX, &tb)) ||
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
    struct nvgpu_channel_setup_bind_args sb = {.num_gpfifo_entries = 1024, .flags = 0xA,
                                               .userd_dmabuf_fd = userd, .gpfifo_dmabuf_fd = big};
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
    struct nvgpu_tsg_bind_channel_ex_args tb = {.channel_fd = o.channel_fd, .subcontext_id = (uint32_t)r.veid};
    struct nvgpu_as_bind_channel_args ab = {.channel_fd = (uint32_t)o.channel_fd};
    CHECK(xio(&e, r.tsg, NVGPU_TSG_IOCTL_BIND_CHANNEL_EX, &tb) == EINVAL); /* TSG before AS */
    CHECK(xio(&e, r.as, NVGPU_AS_IOCTL_BIND_CHANNEL, &ab) == 0);
    CHECK(xio(&e, r.as, NVGPU_AS_IOCTL_BIND_CHANNEL, &ab) == EINVAL);    /* no re-bind */
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
    struct nvgpu_alloc_as_args as = {.flags = 2, .va_range_start = 0x1000, .va_range_end = NVGPU_VA_RANGE_END};
    CHECK(xio(&e, r.ctrl, NVGPU_GPU_IOCTL_ALLOC_AS, &as) == EINVAL);
    as.va_range_start = 0;
    CHECK(xio(&e, r.ctrl, NVGPU_GPU_IOCTL_ALLOC_AS, &as) == EINVAL);
    as.va_range_start = NVGPU_VA_RANGE_START;
    as.va_range_split = 1ull << 32;
    CHECK(xio(&e, r.ctrl, NVGPU_GPU_IOCTL_ALLOC_AS, &as) == EINVAL);
    /* a fixed reservation over a taken range */
    struct nvgpu_as_alloc_space_args s = {.pages = 16, .page_size = 4096, .flags = 1,
                                          .offset = NVGPU_SHARED_WINDOW_VA + 0x10000};
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
        struct k_axpb_u64_params p = {.x_va = hcq_buf_va(buf), .n = N, .mul = 2 * (uint64_t)r + 1, .add = (uint64_t)r};
        uint32_t grid[3] = {4, 1, 1}, block[3] = {256, 1, 1};
        CHECK_OK(hcq_queue_launch(q, prog, grid, block, &p, sizeof p));
        CHECK_OK(hcq_queue_signal(q, sig, base + (uint64_t)r));
        CHECK_OK(hcq_queue_submit(q));
        for (int i = 0; i < N; i++)
            ref[i] = ref[i] * p.mul + p.add;
        uint64_t now = hcq_signal_value(sig);
        CHECKF(now >= seen && now <= base + (uint64_t)r, "signal went 0x%llx -> 0x%llx (submitted up to 0x%llx)",
               (unsigned long long)seen, (unsigned long long)now, (unsigned long long)(base + (uint64_t)r));
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
    emu_kmd_adopt(kmd);
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
        CHECKF(la == lb && !memcmp(a, b, la), "%s:%d: expected '%.*s', got '%.*s'", path, line, (int)la, a, (int)lb, b);
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
        "NVGPU_GPU_IOCTL_GET_CHARACTERISTICS", "NVGPU_GPU_IOCTL_GET_TPC_MASKS",
        "NVGPU_GPU_IOCTL_NUM_VSMS",            "NVGPU_GPU_IOCTL_ALLOC_AS",
        "NVGPU_AS_IOCTL_ALLOC_SPACE",          "NVGPU_AS_IOCTL_ALLOC_SPACE@2",
        "NVGPU_GPU_IOCTL_OPEN_TSG",            "NVGPU_TSG_IOCTL_CREATE_SUBCONTEXT",
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
               (long long)(now.fds - base.fds), (long long)(now.bos - base.bos), (long long)(now.vms - base.vms),
               (long long)(now.maps - base.maps));
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
        "NVGPU_GPU_IOCTL_OPEN_CHANNEL",    "NVGPU_AS_IOCTL_BIND_CHANNEL",       "NVGPU_TSG_IOCTL_BIND_CHANNEL_EX",
        "NVGPU_IOCTL_CHANNEL_WDT",         "NVMAP_IOC_CREATE",                  "NVMAP_IOC_ALLOC@2",
        "NVMAP_IOC_GET_FD@3",
        "NVGPU_IOCTL_CHANNEL_SETUP_BIND",  "NVGPU_IOCTL_CHANNEL_ALLOC_OBJ_CTX", "NVGPU_IOCTL_CHANNEL_SETUP_BIND@2",
    };
    struct emu_stats base, now;
    emu_stats_get(&base);
    for (unsigned i = 0; i < sizeof names / sizeof names[0] + 3; i++) {
        char opts[96];
        if (i < sizeof names / sizeof names[0])
            snprintf(opts, sizeof opts, "ga10b,fail_ioctl=%s", names[i]);
        else /* the error notifier's, the ring's, then the USERD's nvmap allocation fails */
            snprintf(opts, sizeof opts, "ga10b,fail_alloc=%u", i - (unsigned)(sizeof names / sizeof names[0]) + 1);
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
               (long long)(now.fds - base.fds), (long long)(now.bos - base.bos), (long long)(now.maps - base.maps),
               (long long)(now.chans - base.chans));
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
        {"[  812.1] nvgpu: 17000000.gpu     gv11b_gr_intr_handle_sked_exception: sked exception: esr 0x01000000", KLOG_ERROR, "SKED_EXCEPTION"},
        {"[  812.2] nvgpu: 17000000.gpu nvgpu_report_mmu_err: MMU Fault: engine gr, va 0xfe00200000", KLOG_ERROR, "MMU_FAULT"},
        {"[  812.3] nvgpu: 17000000.gpu gk20a_fifo_handle_pbdma_intr: fifo_pbdma_0 intr 0x00040000", KLOG_ERROR, "PBDMA_INTR"},
        {"[  812.4] nvgpu: 17000000.gpu   nvgpu_set_gr_exception: set gr exception notifier", KLOG_ERROR, "GR_EXCEPTION"},
        {"[  812.5] nvgpu: 17000000.gpu CE engine 2 is not idle", KLOG_ERROR, "CE_NOT_IDLE"},
        {"[  812.6] nvgpu: 17000000.gpu ctxsw_timeout detected on tsg 3", KLOG_ERROR, "CTXSW_TIMEOUT"},
        {"nvgpu: 17000000.gpu sm machine check err. gpc_id(0), tpc_id(0)", KLOG_ERROR, "SM_MACHINE_CHECK"},
        {"nvgpu: 17000000.gpu hww_warp_esr 0x10 (MISALIGNED_ADDR)", KLOG_ERROR, "HWW_WARP_ESR"},
        {"nvgpu: 17000000.gpu tu104_gr_init_commit_rtv_cb:100 [WARNING]", KLOG_HARMLESS, "RTV_CB"},
        {"WARNING: CPU: 3 PID: 812 at nvmap_alloc_handle+0x1c0: tag not specified", KLOG_WARNING, "NVMAP_TAG"},
        {"nvgpu: 17000000.gpu nvgpu_cic_mon_report_err: Error reporting is not supported", KLOG_WARNING, "ERR_REPORT_UNSUPPORTED"},
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
        TH_CASE(pitfall_window_reservation),
        TH_CASE(pitfall_window_reservation_e2e),
        TH_CASE(pitfall_gpfifo_buffer_size),
        TH_CASE(pitfall_bind_order),
        TH_CASE(pitfall_nvmap_and_abi),
        TH_CASE(pitfall_pushbuffer_signals),
        TH_CASE(cross_queue_copy),
        TH_CASE(golden_ga10b_open_launch),
        TH_CASE(fault_bringup),
        TH_CASE(fault_channel),
        TH_CASE(klog_classify),
    };
    return th_run("nvgpu", NULL, cases, TH_COUNT(cases), argc - 1, argv + 1) ? 1 : 0;
}
