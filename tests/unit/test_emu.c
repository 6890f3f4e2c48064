/* SPDX-License-Identifier: MIT */
/*
 * test_emu.c - the emulator: the GPU model under the real kmd/rm code (kmd level: hand-built
 * pushbuffers and QMDs), lessons learned on hardware (rm.md §0, §9; nvgpu.md §3.4), doorbell
 * and injected-hang behaviour, copy queues on the asynchronous copy engines. End-to-end runs, fault
 * injection and golden traces are in test_emu_e2e.c; the driver-model rules on raw ioctls in
 * test_emu_rm.c; peer mappings between two emulated GPUs in test_emu_peer.c.
 */
#include "emu.h"
#include "emu_priv.h"
#include "hcq_kernel.h"
#include "emu_rm_abi.h"
#include "emu_tcheck.h"
#include "gpu_cubin.h"
#include "gpu_push.h"
#include "gpu_qmd.h"
#include "harness.h"
#include "kmd.h"
#include "k_llm_params.h"
#include "k_params.h"
#include "ops.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* ==== The GPU model under the real kmd/rm kmd (hand-built pushbuffers) ==== */

struct kt {
    struct emu_dev *d;
    struct kmd *kmd;
    struct kmd_channel *ch;
    struct kmd_mem *pb, *mem; /* pushbuffer + QMD/cbuf/stub area, data area */
    struct kmd_mem *lmem;     /* local-memory store (kt_local_memory), or NULL */
    uint32_t put, pb_off;
    const struct hcq_arch *arch;
};

static enum hcq_status
kt_open(struct kt *k, const char *spec, enum kmd_engine engine)
{
    memset(k, 0, sizeof *k);
    struct emu_opts o;
    enum hcq_status st = emu_opts_parse(spec, &o);
    if (st == HCQ_OK)
        st = emu_dev_create(&o, &k->d);
    if (st == HCQ_OK)
        st = rm_kmd_create(emu_dev_sys(k->d), 0, &k->kmd);
    if (st != HCQ_OK)
        return st;
    k->arch = emu_dev_arch(k->d);
    uint32_t fl = KMD_MEM_SYSMEM | KMD_MEM_CPU_MAP | KMD_MEM_LOW_VA;
    if ((st = kmd_channel_create(k->kmd, engine, 64, &k->ch)) != HCQ_OK ||
        (st = kmd_mem_alloc(k->kmd, 0x10000, 0, fl, &k->pb)) != HCQ_OK ||
        (st = kmd_mem_alloc(k->kmd, 0x100000, 0, fl, &k->mem)) != HCQ_OK)
        return st;
    return HCQ_OK;
}

static void
kt_close(struct kt *k)
{
    if (k->kmd) {
        kmd_mem_free(k->kmd, k->lmem);
        kmd_mem_free(k->kmd, k->mem);
        kmd_mem_free(k->kmd, k->pb);
        kmd_channel_destroy(k->kmd, k->ch);
        kmd_destroy(k->kmd);
    }
    emu_dev_put(k->d);
    memset(k, 0, sizeof *k);
}

/* Copy a pushbuffer in and ring the doorbell of ch (rm.md §4.4); *put is ch's GPPut. */
static void
kt_submit_on(struct kt *k, struct kmd_channel *ch, uint32_t *put, const uint32_t *dw, uint32_t n)
{
    if (k->pb_off + n * 4 > k->pb->size_B)
        k->pb_off = 0;
    memcpy((uint8_t *)k->pb->map + k->pb_off, dw, n * 4);
    struct gpu_gpfifo_fields f = {.pb_va = k->pb->va + k->pb_off, .dw_count = n, .subroutine = true};
    ch->ring[*put % ch->entries] = gpu_gpfifo_entry_encode(&f);
    k->pb_off += (n * 4 + 255) & ~255u;
    ++*put;
    kmd_channel_kick(k->kmd, ch, *put % ch->entries);
}

static void
kt_submit(struct kt *k, const uint32_t *dw, uint32_t n)
{
    kt_submit_on(k, k->ch, &k->put, dw, n);
}

/* A pushbuffer in dw[16] of one host semaphore release (value to va, no timestamp); returns
 * its length in dwords. */
static uint32_t
kt_release_push(uint32_t *dw, uint64_t va, uint64_t value)
{
    struct gpu_push p;
    gpu_push_init(&p, dw, 16);
    gpu_push_sem_release(&p, va, value, false);
    return p.count;
}

/* Poll a 64-bit word until it equals want (or timeout). */
static bool
kt_wait64(const volatile uint64_t *p, uint64_t want, uint64_t timeout_ns)
{
    uint64_t t0 = hcq_time_ns();
    while (__atomic_load_n(p, __ATOMIC_ACQUIRE) != want)
        if (hcq_time_ns() - t0 > timeout_ns)
            return false;
        else
            usleep(100);
    return true;
}

/* Poll k's kmd until it reports a fault or 2 s pass: its status (HCQ_OK: none), the reason in why. */
static enum hcq_status
kt_wait_fault(struct kt *k, char *why, size_t why_B)
{
    uint64_t t0 = hcq_time_ns();
    enum hcq_status st;
    while ((st = kmd_check(k->kmd, why, why_B)) == HCQ_OK && hcq_time_ns() - t0 < 2000 * MS)
        usleep(1000);
    return st;
}

/* Areas inside k->mem */
#define KT_STUB 0x0000u
#define KT_CBUF 0x1000u
#define KT_QMD 0x2000u
#define KT_SEM 0x3000u
#define KT_DATA 0x10000u

/* A fill_u32 QMD of `version` (0x300 / 0x400) for n elements of value, releasing payload
 * into KT_SEM through slot 0. */
static enum hcq_status
kt_fill_qmd(struct kt *k, uint32_t version, uint32_t qmd_type, uint32_t n, uint32_t value, uint64_t payload,
            bool payload64, uint64_t qmd_off)
{
    uint8_t *m = k->mem->map;
    struct emu_program_stub stub;
    if (!emu_program_stub_init(&stub, "k_fill_u32"))
        return HCQ_ERR_INVALID;
    memcpy(m + KT_STUB, &stub, sizeof stub);
    uint32_t *cb = (uint32_t *)(m + KT_CBUF);
    memset(cb, 0, 0x400);
    struct k_fill_u32_params p = {.dst_va = k->mem->va + KT_DATA, .n = n, .value = value};
    memcpy((uint8_t *)cb + k->arch->cbuf0_params_off_B, &p, sizeof p);
    struct gpu_qmd_desc q;
    gpu_qmd_desc_init(&q);
    q.version = version;
    q.qmd_type = qmd_type;
    q.program_va = k->mem->va + KT_STUB;
    q.grid[0] = 2;
    q.grid[1] = q.grid[2] = 1;
    q.block[0] = 64;
    q.block[1] = q.block[2] = 1;
    q.cbuf[0] = (struct gpu_qmd_cbuf){.va = k->mem->va + KT_CBUF, .size_B = 0x400, .valid = true};
    q.release[0] = (struct gpu_qmd_release){.enable = true,
                                            .va = k->mem->va + KT_SEM,
                                            .payload = payload,
                                            .payload64 = payload64,
                                            .structure_size = 0};
    q.sass_version = k->arch->sm_version == 90 ? 0x90 : 0x86;
    q.api_visible_call_limit = 1;
    q.barrier_count = 1;
    const struct gpu_qmd_ops *ops = gpu_qmd_ops_by_version(version);
    return ops ? gpu_qmd_encode(ops, &q, (uint32_t *)(m + qmd_off)) : HCQ_ERR_INVALID;
}

static void
kt_launch(struct kt *k, uint64_t qmd_off, uint64_t shared_window)
{
    uint32_t dw[64];
    struct gpu_push p;
    gpu_push_init(&p, dw, 64);
    gpu_push_compute_init(&p, k->arch->compute_cls, 0x729300000000ull, shared_window);
    gpu_push_launch(&p, k->mem->va + qmd_off);
    kt_submit(k, dw, p.count);
}

/* Give the device's GR context a local-memory store for local_B bytes per thread (rm.md §8.3,
 * with the emulated chip's counts), set on k's channel, for QMDs of cubin code (their
 * SHADER_LOCAL_MEMORY_HIGH_SIZE is the kernel's stack + headroom). */
static enum hcq_status
kt_local_memory(struct kt *k, uint32_t local_B)
{
    uint64_t warp_B = ((uint64_t)local_B * 32 + 0x1FF) & ~0x1FFull;
    uint64_t per_tpc = (warp_B * k->d->gr_warps_per_sm * k->d->gr_sm_per_tpc + 0x7FFF) & ~0x7FFFull;
    enum hcq_status st = kmd_mem_alloc(k->kmd, per_tpc * k->d->gr_tpc_count, 0, KMD_MEM_VRAM, &k->lmem);
    if (st != HCQ_OK)
        return st;
    uint32_t dw[16];
    struct gpu_push p;
    gpu_push_init(&p, dw, 16);
    gpu_push_set_object(&p, GPU_SUBC_COMPUTE, k->arch->compute_cls);
    gpu_push_compute_local_memory(&p, k->lmem->va, per_tpc, 0xFF);
    kt_submit(k, dw, p.count);
    return HCQ_OK;
}

TEST(gpu_fill_and_semaphores)
{
    const char *specs[] = {"gh100", "ga102"};
    struct kt k = {0};
    for (int s = 0; s < 2; s++) {
        CHECK_OPEN(kt_open(&k, specs[s], KMD_ENGINE_COMPUTE));
        volatile uint64_t *sem = (volatile uint64_t *)((uint8_t *)k.mem->map + KT_SEM);
        uint32_t *data = (uint32_t *)((uint8_t *)k.mem->map + KT_DATA);
        uint32_t n = 100 + (uint32_t)(th_rand() % 200), v = (uint32_t)th_rand() | 1;
        for (uint32_t i = 0; i < n + 16; i++)
            data[i] = 0xDEADBEEF; /* poison */
        CHECK_OK(kt_fill_qmd(&k, k.arch->qmd_version, 2, n, v, 7, true, KT_QMD));
        kt_launch(&k, KT_QMD, 0x729400000000ull);
        CHECK(kt_wait64(sem, 7, 2000 * MS));
        for (uint32_t i = 0; i < n; i++)
            CHECKF(data[i] == v, "%s: data[%u] = 0x%x (expected 0x%x)", specs[s], i, data[i], v);
        CHECK(data[n] == 0xDEADBEEF); /* nothing past n */
        /* host semaphore: 64-bit release with timestamp, then acquire-GEQ that waits */
        uint64_t big = 0x100000000ull + (th_rand() & 0xFFFF);
        uint32_t dw[64];
        struct gpu_push p;
        gpu_push_init(&p, dw, 64);
        gpu_push_sem_acquire_geq(&p, k.mem->va + KT_SEM + 0x100, big);
        gpu_push_sem_release(&p, k.mem->va + KT_SEM, big + 1, true);
        kt_submit(&k, dw, p.count);
        usleep(20000);
        CHECK(*sem == 7); /* still waiting on the acquire */
        uint64_t t0 = hcq_time_ns();
        __atomic_store_n((uint64_t *)((uint8_t *)k.mem->map + KT_SEM + 0x100), big, __ATOMIC_RELEASE);
        CHECK(kt_wait64(sem, big + 1, 2000 * MS));
        CHECK(sem[1] >= t0 && sem[1] <= hcq_time_ns()); /* the timestamp word */
        char why[256];
        CHECK_OK(kmd_check(k.kmd, why, sizeof why));
        kt_close(&k);
    }
done:
    kt_close(&k);
}

/* rm.md §0 items 1-2 (H200): a V3 QMD or a V4 QMD with QMD_TYPE 0 on a Hopper channel is
 * ignored: no completion, no error. The waiter times out. */
TEST(lesson_v3_qmd_on_hopper_never_completes)
{
    struct kt k;
    CHECK_OPEN(kt_open(&k, "gh100", KMD_ENGINE_COMPUTE));
    volatile uint64_t *sem = (volatile uint64_t *)((uint8_t *)k.mem->map + KT_SEM);
    CHECK_OK(kt_fill_qmd(&k, 0x0300, 0, 64, 1, 1, true, KT_QMD));
    kt_launch(&k, KT_QMD, 0x729400000000ull);
    CHECK(!kt_wait64(sem, 1, 200 * MS));
    CHECK(emu_dev_ignored_qmds(k.d) == 1);
    char why[256];
    CHECK_OK(kmd_check(k.kmd, why, sizeof why)); /* silent: no Xid, no notifier */
    CHECK_OK(kt_fill_qmd(&k, 0x0400, 2, 64, 1, 2, true, KT_QMD + 0x200));
    /* NVK's Qmd4_0 leaves QMD_TYPE (bits 25:23) 0; our encoder always writes 2, so clear it by hand */
    ((uint32_t *)((uint8_t *)k.mem->map + KT_QMD + 0x200))[0] &= ~(7u << 23);
    kt_launch(&k, KT_QMD + 0x200, 0x729400000000ull);
    CHECK(!kt_wait64(sem, 2, 200 * MS));
    CHECK(emu_dev_ignored_qmds(k.d) == 2);
    CHECK_OK(kt_fill_qmd(&k, 0x0400, 2, 64, 1, 3, true, KT_QMD + 0x400)); /* the fix */
    kt_launch(&k, KT_QMD + 0x400, 0x729400000000ull);
    CHECK(kt_wait64(sem, 3, 2000 * MS));
done:
    kt_close(&k);
}

/* k_llm_matmul f32 W [MM_R][MM_K] . x [MM_N][MM_K] -> y [MM_N][MM_R]: random inputs, poisoned y. */
enum { MM_R = 16, MM_K = 64, MM_N = 2 };
static void
mm_fill(float *w, float *x, float *y)
{
    for (int i = 0; i < MM_R * MM_K; i++)
        w[i] = th_randf(-1, 1);
    for (int i = 0; i < MM_N * MM_K; i++)
        x[i] = th_randf(-1, 1);
    for (int i = 0; i < MM_N * MM_R; i++)
        y[i] = -12345.0f; /* poison */
}
static bool
mm_right(const float *w, const float *x, const float *y)
{
    for (int i = 0; i < MM_N; i++)
        for (int r = 0; r < MM_R; r++) {
            double s = 0;
            for (int j = 0; j < MM_K; j++)
                s += (double)w[r * MM_K + j] * x[i * MM_K + j];
            if (fabs(y[i * MM_R + r] - s) > 1e-4 * (1 + fabs(s)))
                return false;
        }
    return true;
}

/* Learned on H200 (2026-11-22): nvcc puts k_llm_matmul's switch jump table in
 * .nv.constant2.k_llm_matmul (BRX reads c[0x2][...]); a QMD without that bank bound as
 * constant buffer 2 never completes (no Xid). Through the API (the loader binds it) the
 * kernel completes and is right; hand-patched QMDs without the bank (VALID 0, too small,
 * other bytes) hang, silently, as on rm:0. */
TEST(lesson_kernel_constant_bank_must_be_bound)
{
    struct hcq_device *dev = NULL;
    struct hcq_queue *q = NULL;
    struct hcq_program *prog = NULL;
    struct hcq_buf *buf = NULL;
    struct gpu_cubin_image *img = NULL;
    struct kmd_mem *im = NULL;
    struct kt k = {0};
    const struct hcq_kernel_desc *kd = hcq_kernel_find("k_llm_matmul");
    const struct hcq_cubin *cb = kd ? hcq_cubin_find(kd->module, 90) : NULL;
    if (!cb)
        SKIP("no sm_90 k_llm_ops cubin embedded (built without nvcc): nothing binds a constant bank");
    CHECK_OPEN(hcq_device_open("emu:gh100", &dev));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    CHECK_OK(hcq_program_load(dev, "k_llm_matmul", &prog));
    CHECK_OK(hcq_buf_alloc(dev, 0x10000, HCQ_MEM_HOST, &buf));
    float *w = hcq_buf_map(buf), *x = w + MM_R * MM_K, *y = x + MM_N * MM_K;
    mm_fill(w, x, y);
    uint64_t va = hcq_buf_va(buf);
    struct k_llm_matmul_params p = {.w_va = va,
                                    .x_va = va + 4 * MM_R * MM_K,
                                    .y_va = va + 4 * (MM_R + MM_N) * MM_K,
                                    .type = 0,
                                    .k = MM_K,
                                    .rows = MM_R,
                                    .n = MM_N,
                                    .x_stride = MM_K,
                                    .y_stride = MM_R};
    uint32_t grid[3] = {MM_R / K_LLM_MATMUL_ROWS, 1, 1}, block[3] = {K_LLM_BLOCK, 1, 1};
    CHECK_OK(hcq_queue_launch(q, prog, grid, block, &p, sizeof p));
    CHECK_OK(hcq_queue_finish(q, 5000 * MS));
    CHECK(mm_right(w, x, y));

    /* kmd level: the loader's QMD (v 0), then without the bank: VALID 0, size 0x10, other bytes */
    CHECK_OK(gpu_cubin_load(cb->data, cb->size_B, &img));
    const struct gpu_cubin_kernel *gk = gpu_cubin_kernel_find(img, "k_llm_matmul");
    CHECKF(gk && gk->kbank_count == 1 && gk->kbanks[0].index == 2,
           "the lesson's premise: k_llm_matmul.sm_90 has "
           "one per-kernel bank, .nv.constant2 (nvcc changed?)");
    for (int v = 0; v < 4; v++) {
        CHECK_OPEN(kt_open(&k, "gh100", KMD_ENGINE_COMPUTE));
        CHECK_OK(kt_local_memory(&k, gpu_cubin_kernel_local_B(gk))); /* the QMD asks for its stack */
        uint8_t *m = k.mem->map;
        CHECK_OK(
            kmd_mem_alloc(k.kmd, img->alloc_B, 0, KMD_MEM_SYSMEM | KMD_MEM_CPU_MAP | KMD_MEM_LOW_VA, &im));
        CHECK_OK(gpu_cubin_relocate(img, im->va));
        memcpy(im->map, img->data, img->size_B);
        w = (float *)(m + KT_DATA), x = w + MM_R * MM_K, y = x + MM_N * MM_K;
        mm_fill(w, x, y);
        va = k.mem->va + KT_DATA;
        p.w_va = va, p.x_va = va + 4 * MM_R * MM_K, p.y_va = va + 4 * (MM_R + MM_N) * MM_K;
        uint32_t cb0_B = gpu_cbuf0_size(k.arch, gk, sizeof p);
        CHECK(cb0_B <= KT_QMD - KT_CBUF);
        CHECK_OK(gpu_cbuf0_build(k.arch, gk, grid, block, 0x729300000000ull, 0x729400000000ull, &p, sizeof p,
                                 m + KT_CBUF, cb0_B));
        struct gpu_qmd_desc d;
        CHECK_OK(gpu_cubin_qmd_desc(&d, k.arch, img, gk, im->va, grid, block, 0, gpu_cubin_kernel_local_B(gk),
                                    k.mem->va + KT_CBUF, cb0_B));
        d.release[0] = (struct gpu_qmd_release){
            .enable = true, .va = k.mem->va + KT_SEM, .payload = 7, .payload64 = true};
        struct gpu_qmd_cbuf *c2 = &d.cbuf[2];
        CHECK(c2->valid && c2->size_B >= gk->kbanks[0].size_B);
        if (v == 1)
            c2->valid = false;
        if (v == 2)
            c2->size_B = 0x10;
        if (v == 3) { /* a copy of the bank with one entry changed: a wrong jump target */
            memcpy(m + KT_STUB, img->data + gk->kbanks[0].off_B, gk->kbanks[0].size_B);
            m[KT_STUB + 4 * (th_rand() % (gk->kbanks[0].size_B / 4))] ^= 0x10;
            c2->va = k.mem->va + KT_STUB;
        }
        const struct gpu_qmd_ops *ops =
            k.arch->qmd ? k.arch->qmd : gpu_qmd_ops_by_version(k.arch->qmd_version);
        CHECK_OK(gpu_qmd_encode(ops, &d, (uint32_t *)(m + KT_QMD)));
        kt_launch(&k, KT_QMD, 0x729400000000ull);
        volatile uint64_t *sem = (volatile uint64_t *)(m + KT_SEM);
        char why[256];
        if (v == 0) {
            CHECKF(kt_wait64(sem, 7, 5000 * MS), "the loader's QMD did not complete");
            CHECK(mm_right(w, x, y));
        } else {
            CHECKF(!kt_wait64(sem, 7, 200 * MS), "variant %d completed without its constant bank", v);
            CHECK(y[0] == -12345.0f); /* nothing ran */
        }
        CHECK(emu_dev_unbound_kbank_qmds(k.d) == (v != 0));
        CHECK_OK(kmd_check(k.kmd, why, sizeof why)); /* no Xid, no notifier: a silent hang */
        kmd_mem_free(k.kmd, im);
        im = NULL;
        kt_close(&k);
    }
done:
    if (im)
        kmd_mem_free(k.kmd, im);
    kt_close(&k);
    gpu_cubin_destroy(img);
    hcq_buf_free(buf);
    hcq_program_destroy(prog);
    hcq_queue_destroy(q);
    hcq_device_close(dev);
}

/* Through the runtime: the waiter sees TIMEOUT (not a hang) and the device can be closed. */
TEST(inject_hang_times_out_in_runtime)
{
    /* The engine builds V4 QMDs for gh100; what we check here is that a launch the GPU never
     * completes (hang injection stands in for the ignored QMD) surfaces as TIMEOUT or
     * DEVICE_LOST within the timeout and leaks nothing. */
    struct emu_stats base;
    emu_stats_get(&base);
    struct hcq_device *dev = NULL;
    struct hcq_queue *q = NULL;
    struct hcq_program *prog = NULL;
    struct hcq_buf *buf = NULL;
    CHECK_OPEN(hcq_device_open("emu:gh100,hang=1", &dev));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    CHECK_OK(hcq_program_load(dev, "k_fill_u32", &prog));
    CHECK_OK(hcq_buf_alloc(dev, 4096, HCQ_MEM_HOST, &buf));
    CHECK_OK(ops_launch_fill_u32(q, prog, buf, 1024, 5));
    uint64_t t0 = hcq_time_ns();
    enum hcq_status st = hcq_queue_finish(q, 300 * MS);
    CHECKF(st == HCQ_ERR_TIMEOUT || st == HCQ_ERR_DEVICE_LOST, "finish -> %s", hcq_status_str(st));
    CHECK(hcq_time_ns() - t0 < 5000 * MS);
done:
    hcq_buf_free(buf);
    hcq_program_destroy(prog);
    hcq_queue_destroy(q);
    hcq_device_close(dev);
    CHECK_NO_LEAK(&base);
}

/* rm.md §5.2 / §8.2: SEM_ADDR_HI is 8 bits on the Ampere host class (40-bit VAs), 25 on
 * Hopper's. A semaphore above 2^40 on Ampere silently lands on the aliased low address; on
 * Hopper the same address is what it says (here: unmapped, an MMU fault). */
TEST(lesson_ampere_host_semaphore_is_40bit)
{
    struct kt k = {0};
    const char *chips[] = {"ga102", "gh100"};
    for (int c = 0; c < 2; c++) {
        CHECK_OPEN(kt_open(&k, chips[c], KMD_ENGINE_COMPUTE));
        volatile uint64_t *sem = (volatile uint64_t *)((uint8_t *)k.mem->map + KT_SEM);
        uint64_t v = th_rand() | 1;
        uint32_t dw[16], n = kt_release_push(dw, (k.mem->va + KT_SEM) | (1ull << 44), v);
        kt_submit(&k, dw, n);
        char why[256], fault[256];
        if (c == 0) {
            CHECK(kt_wait64(sem, v, 2000 * MS)); /* aliased onto the low 40 bits */
            CHECK_OK(kmd_check(k.kmd, why, sizeof why));
        } else {
            enum hcq_status st = kt_wait_fault(&k, why, sizeof why);
            CHECK(st == HCQ_ERR_DEVICE_LOST && *sem == 0);
            emu_dev_fault(k.d, fault, sizeof fault);
            CHECKF(strstr(fault, "Xid 31") != NULL, "fault: %s", fault);
        }
        kt_close(&k);
    }
done:
    kt_close(&k);
}

/* rm.md §0 item 6: a QMD release without RELEASE_PAYLOAD64B writes only the low 32 bits,
 * so a 64-bit timeline crossing 2^32 reads 0 and the waiter hangs. */
TEST(lesson_qmd_release_32bit_loses_high_word)
{
    struct kt k;
    CHECK_OPEN(kt_open(&k, "gh100", KMD_ENGINE_COMPUTE));
    volatile uint64_t *sem = (volatile uint64_t *)((uint8_t *)k.mem->map + KT_SEM);
    *sem = 0xFFFFFFFFull;
    CHECK_OK(kt_fill_qmd(&k, 0x0400, 2, 64, 1, 0x100000000ull, false, KT_QMD));
    kt_launch(&k, KT_QMD, 0x729400000000ull);
    CHECK(kt_wait64(sem, 0, 2000 * MS)); /* H200: "memory became 0" */
    CHECK_OK(kt_fill_qmd(&k, 0x0400, 2, 64, 1, 0x100000001ull, true, KT_QMD + 0x200));
    kt_launch(&k, KT_QMD + 0x200, 0x729400000000ull);
    CHECK(kt_wait64(sem, 0x100000001ull, 2000 * MS));
done:
    kt_close(&k);
}

/* rm.md §5.4 / §9 item 4: Ampere copy engines have no SET_SEMAPHORE_PAYLOAD_UPPER; using it
 * is a method error that the driver reports (Xid 13), and the runtime sees DEVICE_LOST. */
TEST(lesson_ampere_copy_engine_has_no_64bit_semaphore)
{
    struct kt k;
    CHECK_OPEN(kt_open(&k, "ga102", KMD_ENGINE_COPY));
    uint32_t dw[32];
    struct gpu_push p;
    gpu_push_init(&p, dw, 32);
    gpu_push_copy_init(&p, k.arch->copy_cls);
    CHECK(gpu_push_ce_sem_release(&p, k.arch->copy_cls, k.mem->va + KT_SEM, 1ull << 32, false) ==
          HCQ_ERR_UNSUPPORTED); /* the encoder knows */
    const uint32_t upper = 1;
    gpu_push_mthd(&p, 1, 4, 0x24C, &upper, 1); /* SET_SEMAPHORE_PAYLOAD_UPPER on C7B5 */
    kt_submit(&k, dw, p.count);
    char why[256] = "";
    enum hcq_status st = kt_wait_fault(&k, why, sizeof why);
    CHECK(st == HCQ_ERR_DEVICE_LOST);
    char fault[256];
    emu_dev_fault(k.d, fault, sizeof fault);
    CHECKF(strstr(fault, "0x024c") != NULL, "fault: %s", fault);
done:
    kt_close(&k);
}

/* nvgpu.md §3.4 (P0 bug): a buffer inside the shared-memory window is redirected to shared
 * memory by the hardware; the model reports the access as a fault naming the window. */
TEST(lesson_shared_window_collision)
{
    struct kt k;
    CHECK_OPEN(kt_open(&k, "gh100", KMD_ENGINE_COMPUTE));
    CHECK_OK(kt_fill_qmd(&k, 0x0400, 2, 64, 1, 1, true, KT_QMD));
    kt_launch(&k, KT_QMD, (k.mem->va + KT_DATA) & ~0xFFFFFFFFull); /* window over the data */
    char why[256] = "";
    enum hcq_status st = kt_wait_fault(&k, why, sizeof why);
    CHECK(st == HCQ_ERR_DEVICE_LOST);
    char fault[256];
    emu_dev_fault(k.d, fault, sizeof fault);
    CHECKF(strstr(fault, "shared-memory window") != NULL, "fault: %s", fault);
done:
    kt_close(&k);
}

/* Lesson (H100, 2026-11-27): the
 * hardware places a grid by the QMD's FREE_CTA_SLOTS_EMPTY_SM as given. Within what an SM holds
 * and on a grid one wave at the value holds, the grid runs; a value above what an SM holds (32
 * for 256-thread CTAs) or a grid of more than one wave at it faulted (Xid 13) - the model
 * faults both every time. The emulated gh100 has 8 SMs. */
static enum hcq_status
kt_free_cta_qmd(struct kt *k, uint32_t grid, uint32_t threads, uint32_t free_slots)
{
    enum hcq_status st = kt_fill_qmd(k, 0x0400, 2, 64, 1, 1, true, KT_QMD);
    const struct gpu_qmd_ops *ops = gpu_qmd_ops_by_version(0x0400);
    uint32_t *q = (uint32_t *)((uint8_t *)k->mem->map + KT_QMD);
    struct gpu_qmd_desc d;
    if (st == HCQ_OK)
        st = gpu_qmd_decode(ops, q, &d);
    d.grid[0] = grid;
    d.block[0] = threads;
    d.free_cta_slots = free_slots;
    return st == HCQ_OK ? gpu_qmd_encode(ops, &d, q) : st;
}

TEST(lesson_free_cta_slots_are_trusted)
{
    static const struct {
        uint32_t grid, threads, free_slots;
        const char *fault; /* NULL: runs */
    } c[] = {
        {8, 64, 1, NULL},                 /* one CTA on each of the 8 SMs */
        {24, 256, 3, NULL},               /* three each, within the 8 an SM holds */
        {9, 64, 1, "more than one wave"}, /* a ninth CTA: a second wave at 1 */
        {2, 256, 32, "above the 8 CTAs"}, /* 256 threads: 8 CTAs of 64 warps */
        {64, 256, 0, NULL},               /* 0: the hardware's placement, any grid */
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        struct kt k;
        char fault[256] = "";
        CHECK_OPEN(kt_open(&k, "gh100", KMD_ENGINE_COMPUTE));
        volatile uint64_t *sem = (volatile uint64_t *)((uint8_t *)k.mem->map + KT_SEM);
        *sem = 0;
        bool ok = kt_free_cta_qmd(&k, c[i].grid, c[i].threads, c[i].free_slots) == HCQ_OK;
        if (ok) {
            kt_launch(&k, KT_QMD, 0x729400000000ull);
            if (!c[i].fault) {
                ok = kt_wait64(sem, 1, 2000 * MS);
            } else {
                char why[256] = "";
                enum hcq_status st = kt_wait_fault(&k, why, sizeof why);
                emu_dev_fault(k.d, fault, sizeof fault);
                ok = st == HCQ_ERR_DEVICE_LOST && strstr(fault, c[i].fault) != NULL;
            }
        }
        kt_close(&k);
        CHECKF(ok, "case %zu: grid %u x %u threads at FREE_CTA_SLOTS_EMPTY_SM %u (expected %s; fault: %s)", i,
               c[i].grid, c[i].threads, c[i].free_slots, c[i].fault ? c[i].fault : "to run", fault);
    }
done:;
}

/* Lesson (H100, docs/status.md known issues): SET_SHADER_LOCAL_MEMORY* is GR context
 * state, shared by every channel of the TSG - the store one channel sets is the store another
 * channel's next grid runs on. A grid whose threads need more local memory (the QMD's
 * SHADER_LOCAL_MEMORY sizes) than that store holds per TPC is a GR exception, Xid 13
 * SKEDCHECK05_LOCAL_MEMORY_TOTAL_SIZE: what two queues with stores of their own did on rm:0. */
TEST(lesson_local_memory_is_context_state)
{
    struct kt k = {0};
    struct kmd_channel *ch2 = NULL;
    struct kmd_mem *big = NULL, *small = NULL;
    uint32_t put2 = 0;
    CHECK_OPEN(kt_open(&k, "gh100", KMD_ENGINE_COMPUTE));
    CHECK_OK(kmd_channel_create(k.kmd, KMD_ENGINE_COMPUTE, 64, &ch2));
    /* rm.md §8.3 for 0x640 / 0x240 bytes per thread on the emulated gh100 (64 warps per SM, 2 SMs
     * per TPC, 4 TPCs): 0x640 * 32 per warp, x 128 = 0x640000 per TPC; 0x240000 */
    const uint64_t big_tpc = 0x640000, small_tpc = 0x240000;
    CHECK_OK(kmd_mem_alloc(k.kmd, big_tpc * 4, 0, KMD_MEM_VRAM, &big));
    CHECK_OK(kmd_mem_alloc(k.kmd, small_tpc * 4, 0, KMD_MEM_VRAM, &small));
    const struct gpu_qmd_ops *ops = gpu_qmd_ops_by_version(0x0400);
    struct gpu_qmd_desc q;
    uint32_t *qmd[2] = {(uint32_t *)((uint8_t *)k.mem->map + KT_QMD),
                        (uint32_t *)((uint8_t *)k.mem->map + KT_QMD + 0x200)};
    for (int i = 0; i < 2; i++) { /* a fill that needs 0x640 bytes of local memory per thread */
        CHECK_OK(kt_fill_qmd(&k, 0x0400, 2, 64, 7, 1 + i, true, KT_QMD + 0x200 * i));
        CHECK_OK(gpu_qmd_decode(ops, qmd[i], &q));
        q.local_mem_high_B = 0x640;
        CHECK_OK(gpu_qmd_encode(ops, &q, qmd[i]));
    }
    volatile uint64_t *sem = (volatile uint64_t *)((uint8_t *)k.mem->map + KT_SEM);
    uint32_t dw[64];
    struct gpu_push p;
    /* channel 1 sets the large store and runs the grid */
    gpu_push_init(&p, dw, 64);
    gpu_push_compute_init(&p, k.arch->compute_cls, 0x729300000000ull, 0x729400000000ull);
    gpu_push_compute_local_memory(&p, big->va, big_tpc, 0xFF);
    gpu_push_launch(&p, k.mem->va + KT_QMD);
    kt_submit(&k, dw, p.count);
    CHECK(kt_wait64(sem, 1, 2000 * MS));
    /* channel 2 sets a smaller one (its own "queue's" store) */
    gpu_push_init(&p, dw, 64);
    gpu_push_compute_init(&p, k.arch->compute_cls, 0x729300000000ull, 0x729400000000ull);
    gpu_push_compute_local_memory(&p, small->va, small_tpc, 0xFF);
    gpu_push_sem_release(&p, k.mem->va + KT_SEM + 0x100, 5, false);
    kt_submit_on(&k, ch2, &put2, dw, p.count);
    CHECK(kt_wait64(sem + 0x20, 5, 2000 * MS));
    /* channel 1's next grid runs on channel 2's store: too small */
    gpu_push_init(&p, dw, 64);
    gpu_push_launch(&p, k.mem->va + KT_QMD + 0x200);
    kt_submit(&k, dw, p.count);
    char why[256] = "", fault[256] = "";
    enum hcq_status st = kt_wait_fault(&k, why, sizeof why);
    CHECK(st == HCQ_ERR_DEVICE_LOST && strstr(why, "Xid 13"));
    emu_dev_fault(k.d, fault, sizeof fault);
    CHECKF(strstr(fault, "SKEDCHECK05_LOCAL_MEMORY_TOTAL_SIZE") != NULL, "fault: %s", fault);
    CHECK(*sem == 1); /* the second grid never completed */
done:
    if (k.kmd) {
        kmd_mem_free(k.kmd, small);
        kmd_mem_free(k.kmd, big);
        kmd_channel_destroy(k.kmd, ch2);
    }
    kt_close(&k);
}

/* rm.md §6.7: the emulator decodes SHARED_MEMORY_SIZE and the SM-config carve-outs. A CTA that
 * fits MIN with MIN <= TARGET <= MAX runs (the encoder's choice for a 49 KiB GEMM CTA: 64 KiB
 * MIN, 228 KiB TARGET); one larger than the MIN carve-out is refused with Xid 13. */
TEST(qmd_shared_memory_config)
{
    struct kt k = {0};
    CHECK_OPEN(kt_open(&k, "gh100", KMD_ENGINE_COMPUTE));
    volatile uint64_t *sem = (volatile uint64_t *)((uint8_t *)k.mem->map + KT_SEM);
    const struct gpu_qmd_ops *ops = gpu_qmd_ops_by_version(0x0400);
    uint32_t *q = (uint32_t *)((uint8_t *)k.mem->map + KT_QMD);
    CHECK(ops);
    for (int bad = 0; bad < 2; bad++) { /* the good launch first: the bad one stops the channel */
        struct gpu_qmd_desc d;
        CHECK_OK(kt_fill_qmd(&k, 0x0400, 2, 64, 1, 5 + bad, true, KT_QMD));
        CHECK_OK(gpu_qmd_decode(ops, q, &d));
        d.shared_mem_B = 0xC400;
        d.sm_config_min = gpu_qmd_sm_config(bad ? 32 : 64);
        d.sm_config_target = d.sm_config_max = gpu_qmd_sm_config(228);
        CHECK_OK(gpu_qmd_encode(ops, &d, q));
        kt_launch(&k, KT_QMD, 0x729400000000ull);
        if (!bad) {
            CHECK(kt_wait64(sem, 5, 2000 * MS));
            continue;
        }
        char why[256] = "", fault[256];
        enum hcq_status st = kt_wait_fault(&k, why, sizeof why);
        CHECK(st == HCQ_ERR_DEVICE_LOST);
        emu_dev_fault(k.d, fault, sizeof fault);
        CHECKF(strstr(fault, "shared memory 50176 B") != NULL, "fault: %s", fault);
    }
done:
    kt_close(&k);
}

TEST(gpu_malformed_and_unmapped)
{
    struct kt k;
    CHECK_OPEN(kt_open(&k, "gh100", KMD_ENGINE_COMPUTE));
    /* a method on a subchannel with no object */
    uint32_t bad[] = {gpu_push_hdr_inc(1, 0x2B4, 1), 0x1234};
    kt_submit(&k, bad, 2);
    char why[256];
    (void)kt_wait_fault(&k, why, sizeof why); /* the fault text is checked below */
    char fault[256];
    emu_dev_fault(k.d, fault, sizeof fault);
    CHECKF(strstr(fault, "no object bound") != NULL, "fault: %s", fault);
    kt_close(&k);
    /* a semaphore release to an unmapped VA */
    CHECK_OPEN(kt_open(&k, "ga102", KMD_ENGINE_COMPUTE));
    uint32_t dw[16], n = kt_release_push(dw, 0xFF00000000ull, 1);
    kt_submit(&k, dw, n);
    (void)kt_wait_fault(&k, why, sizeof why); /* the fault text is checked below */
    emu_dev_fault(k.d, fault, sizeof fault);
    CHECKF(strstr(fault, "not mapped") != NULL && strstr(fault, "Xid 31") != NULL, "fault: %s", fault);
done:
    kt_close(&k);
}

/* drop_doorbell: GPPut moves, nothing runs (the GPU does not poll USERD, nvgpu.md §4.8). */
TEST(inject_drop_doorbell)
{
    struct kt k;
    CHECK_OPEN(kt_open(&k, "gh100,drop_doorbell", KMD_ENGINE_COMPUTE));
    volatile uint64_t *sem = (volatile uint64_t *)((uint8_t *)k.mem->map + KT_SEM);
    uint32_t dw[16], n = kt_release_push(dw, k.mem->va + KT_SEM, 9);
    kt_submit(&k, dw, n);
    CHECK(!kt_wait64(sem, 9, 200 * MS));
    CHECK(*(volatile uint32_t *)(k.ch->userd + 0x88) == 0); /* GPGet never moved */
    char why[256];
    CHECK_OK(kmd_check(k.kmd, why, sizeof why));
done:
    kt_close(&k);
}

/* rm_chan_kick reads GPGet back through BAR1 after its doorbell (that read makes the GPPut
 * store land, PCIe ordering) and rings again while the GPU has not fetched up to the new
 * GPPut: the hardware can miss a ring that beats the GPPut store. With
 * every doorbell dropped the GPU fetches nothing, so each kick must ring twice. */
TEST(kick_rings_again_until_fetched)
{
    struct kt k;
    CHECK_OPEN(kt_open(&k, "gh100,drop_doorbell=1", KMD_ENGINE_COMPUTE));
    volatile uint64_t *sem = (volatile uint64_t *)((uint8_t *)k.mem->map + KT_SEM);
    uint32_t dw[16], n = kt_release_push(dw, k.mem->va + KT_SEM, 7);
    uint64_t r0 = k.ch->rings;
    kt_submit(&k, dw, n);
    CHECKF(k.ch->rings - r0 == 2, "one kick rang %llu times (expected 2: GPGet had not moved)",
           (unsigned long long)(k.ch->rings - r0));
    CHECK(!kt_wait64(sem, 7, 50 * MS));
    CHECK(*(volatile uint32_t *)(k.ch->userd + 0x88) == 0);
done:
    kt_close(&k);
}

/* A doorbell with a token no channel owns does not run ours (one with an idle channel's token
 * does since 2026-11-29: doorbell_overwritten_by_idle_channel). */
TEST(doorbell_wrong_token_does_not_run)
{
    struct kt k;
    CHECK_OPEN(kt_open(&k, "gh100", KMD_ENGINE_COMPUTE));
    volatile uint64_t *sem = (volatile uint64_t *)((uint8_t *)k.mem->map + KT_SEM);
    uint32_t dw[16], n = kt_release_push(dw, k.mem->va + KT_SEM, 5);
    memcpy((uint8_t *)k.pb->map, dw, n * 4);
    struct gpu_gpfifo_fields f = {.pb_va = k.pb->va, .dw_count = n, .subroutine = true};
    k.ch->ring[0] = gpu_gpfifo_entry_encode(&f);
    __atomic_store_n((uint32_t *)(k.ch->userd + 0x8C), 1u, __ATOMIC_RELEASE);
    /* ring with a token no channel owns: ignored */
    struct kmd_channel fake = *k.ch;
    fake.token = k.ch->token + 0x100;
    kmd_channel_kick(k.kmd, &fake, 1);
    CHECK(!kt_wait64(sem, 5, 200 * MS));
    kmd_channel_kick(k.kmd, k.ch, 1);
    CHECK(kt_wait64(sem, 5, 2000 * MS));
done:
    kt_close(&k);
}

/* Two doorbells back to back, b's then a's, with a idle: the emulator's doorbell word may keep
 * only a's token, and b's work must still run (the store was b's ring; hardware delivers every
 * doorbell). Before the fix b's release never came whenever the two stores met in the word. */
TEST(doorbell_overwritten_by_idle_channel)
{
    struct kt k;
    struct kmd_channel *b = NULL;
    uint32_t put_b = 0;
    CHECK_OPEN(kt_open(&k, "gh100", KMD_ENGINE_COMPUTE));
    CHECK_OK(kmd_channel_create(k.kmd, KMD_ENGINE_COMPUTE, 64, &b));
    volatile uint64_t *sem = (volatile uint64_t *)((uint8_t *)k.mem->map + KT_SEM);
    for (uint64_t v = 1; v <= 20; v++) {
        uint32_t dw[16], n = kt_release_push(dw, k.mem->va + KT_SEM, v);
        kt_submit_on(&k, b, &put_b, dw, n);   /* b: GPPut, then b's token */
        kmd_channel_kick(k.kmd, k.ch, k.put); /* a (k.ch, idle): its token right after */
        CHECKF(kt_wait64(sem, v, 2000 * MS), "b's release %llu did not run", (unsigned long long)v);
    }
done:
    if (k.kmd && b)
        kmd_channel_destroy(k.kmd, b);
    kt_close(&k);
}

/* ==== Copy queues on asynchronous copy engines (docs/rm-backend.md "Copy engines") ==== */

/* The engine type of k's channel's group (the emulated RM's record). */
static uint32_t
kt_engine_type(struct kt *k, const struct kmd_channel *ch)
{
    return emu_rm_chan_engine_type(k->d, ch->token);
}

/* A hand-built copy-engine copy of n bytes inside k->mem, then a host release of `payload`
 * into KT_SEM; true when it completed with the data in place. */
static bool
kt_ce_copy_runs(struct kt *k, struct kmd_channel *ch, uint32_t n, uint64_t payload)
{
    uint8_t *m = k->mem->map;
    for (uint32_t i = 0; i < n; i++)
        m[KT_DATA + i] = (uint8_t)(i * 7 + 1);
    memset(m + KT_DATA + n, 0, n);
    uint32_t dw[64];
    struct gpu_push p;
    gpu_push_init(&p, dw, 64);
    gpu_push_copy_init(&p, k->arch->copy_cls);
    gpu_push_ce_copy(&p, k->mem->va + KT_DATA + n, k->mem->va + KT_DATA, n);
    if (gpu_push_ce_sem_release(&p, k->arch->copy_cls, k->mem->va + KT_SEM + 8, 0, true) != HCQ_OK)
        return false; /* the CE flush before the host release (pb_build.c pb_ce_flush) */
    gpu_push_sem_release(&p, k->mem->va + KT_SEM, payload, false);
    struct kmd_channel *saved = k->ch;
    k->ch = ch;
    kt_submit(k, dw, p.count);
    k->ch = saved;
    return kt_wait64((volatile uint64_t *)(m + KT_SEM), payload, 2000 * MS) &&
           !memcmp(m + KT_DATA, m + KT_DATA + n, n);
}

/* COPY_ASYNC channels land on the asynchronous copy engines of the engine list in UVM's
 * order (most PCEs, then unshared, then index: the model's COPY3, COPY4, COPY5 with two
 * PCEs, COPY2 with one shared), each in a group of its own, spread by use; COPY channels
 * stay in the GR group; copies run on them. */
TEST(lce_selection)
{
    struct kt k;
    struct kmd_channel *more[4] = {NULL};
    CHECK_OPEN(kt_open(&k, "gh100", KMD_ENGINE_COPY_ASYNC));
    CHECK(k.kmd->info.async_copy_engines == 4);
    CHECK(k.ch->engine == KMD_ENGINE_COPY_ASYNC && k.ch->obj_cls == k.arch->copy_cls);
    CHECKF(kt_engine_type(&k, k.ch) == NV2080_ENGINE_TYPE_COPY0 + 3, "engine 0x%x", kt_engine_type(&k, k.ch));
    static const uint32_t next[] = {4, 5, 2, 3}; /* fewest channels first, ties by rank */
    for (int i = 0; i < 4; i++) {
        CHECK_OK(kmd_channel_create(k.kmd, KMD_ENGINE_COPY_ASYNC, 64, &more[i]));
        CHECKF(kt_engine_type(&k, more[i]) == NV2080_ENGINE_TYPE_COPY0 + next[i], "channel %d: engine 0x%x",
               i, kt_engine_type(&k, more[i]));
    }
    CHECK(kt_ce_copy_runs(&k, k.ch, 4096, 1));
    CHECK(kt_ce_copy_runs(&k, more[2], 8192, 2));
    struct kmd_channel *gr = NULL;
    CHECK_OK(kmd_channel_create(k.kmd, KMD_ENGINE_COPY, 64, &gr));
    CHECK(gr->engine == KMD_ENGINE_COPY && kt_engine_type(&k, gr) == NV2080_ENGINE_TYPE_GRAPHICS);
    kmd_channel_destroy(k.kmd, gr);
    char why[256];
    CHECK_OK(kmd_check(k.kmd, why, sizeof why));
done:
    for (int i = 0; i < 4; i++)
        if (more[i])
            kmd_channel_destroy(k.kmd, more[i]);
    kt_close(&k);
}

/* No asynchronous copy engine in the list (lces=0), the knob HCQ_RM_COPY_ENGINE=grce, or a
 * group the driver refuses on every LCE: COPY_ASYNC channels come back as COPY channels in
 * the GR group and still copy. One refused LCE only moves the channel to the next one. */
TEST(lce_fallback)
{
    struct kt k;
    CHECK_OPEN(kt_open(&k, "gh100,lces=0", KMD_ENGINE_COPY_ASYNC));
    CHECK(k.kmd->info.async_copy_engines == 0);
    CHECK(k.ch->engine == KMD_ENGINE_COPY && kt_engine_type(&k, k.ch) == NV2080_ENGINE_TYPE_GRAPHICS);
    CHECK(kt_ce_copy_runs(&k, k.ch, 4096, 1));
    kt_close(&k);

    setenv("HCQ_RM_COPY_ENGINE", "grce", 1);
    enum hcq_status st = kt_open(&k, "gh100", KMD_ENGINE_COPY_ASYNC);
    unsetenv("HCQ_RM_COPY_ENGINE");
    CHECK_OPEN(st);
    CHECK(k.kmd->info.async_copy_engines == 0);
    CHECK(k.ch->engine == KMD_ENGINE_COPY && kt_engine_type(&k, k.ch) == NV2080_ENGINE_TYPE_GRAPHICS);
    kt_close(&k);

    /* the first group made is the LCE one: refused, the next LCE takes the channel */
    CHECK_OPEN(kt_open(&k, "gh100,fail_ioctl=KEPLER_CHANNEL_GROUP_A@1", KMD_ENGINE_COPY_ASYNC));
    CHECK(k.ch->engine == KMD_ENGINE_COPY_ASYNC && kt_engine_type(&k, k.ch) == NV2080_ENGINE_TYPE_COPY0 + 4);
    CHECK(k.kmd->info.async_copy_engines == 3);
    kt_close(&k);

    /* one LCE, refused: the GR copy engine */
    CHECK_OPEN(kt_open(&k, "gh100,lces=1,fail_ioctl=UVM_REGISTER_CHANNEL@1", KMD_ENGINE_COPY_ASYNC));
    CHECK(k.ch->engine == KMD_ENGINE_COPY && kt_engine_type(&k, k.ch) == NV2080_ENGINE_TYPE_GRAPHICS);
    CHECK(k.kmd->info.async_copy_engines == 0);
    CHECK(kt_ce_copy_runs(&k, k.ch, 4096, 3));
done:
    unsetenv("HCQ_RM_COPY_ENGINE");
    kt_close(&k);
}

/* A fault on an LCE channel (a release to an unmapped VA) reaches its error notifier; check()
 * reports the device lost, naming the channel's engine and the Xid. */
TEST(lce_fault_is_device_lost)
{
    struct kt k;
    CHECK_OPEN(kt_open(&k, "gh100", KMD_ENGINE_COPY_ASYNC));
    CHECK(k.ch->engine == KMD_ENGINE_COPY_ASYNC);
    uint32_t dw[16];
    struct gpu_push p;
    gpu_push_init(&p, dw, 16);
    gpu_push_copy_init(&p, k.arch->copy_cls);
    gpu_push_sem_release(&p, 0xFF00000000ull, 1, false);
    kt_submit(&k, dw, p.count);
    char why[256] = "";
    enum hcq_status st = kt_wait_fault(&k, why, sizeof why);
    CHECK(st == HCQ_ERR_DEVICE_LOST);
    CHECKF(strstr(why, "on COPY3") && strstr(why, "Xid 31"), "reason: %s", why);
done:
    kt_close(&k);
}

int
main(int argc, char **argv)
{
    static const struct th_case cases[] = {
        TH_CASE(gpu_fill_and_semaphores),
        TH_CASE(lesson_v3_qmd_on_hopper_never_completes),
        TH_CASE(lesson_kernel_constant_bank_must_be_bound),
        TH_CASE(inject_hang_times_out_in_runtime),
        TH_CASE(lesson_qmd_release_32bit_loses_high_word),
        TH_CASE(lesson_ampere_host_semaphore_is_40bit),
        TH_CASE(lesson_ampere_copy_engine_has_no_64bit_semaphore),
        TH_CASE(lesson_shared_window_collision),
        TH_CASE(lesson_local_memory_is_context_state),
        TH_CASE(qmd_shared_memory_config),
        TH_CASE(gpu_malformed_and_unmapped),
        TH_CASE(inject_drop_doorbell),
        TH_CASE(doorbell_overwritten_by_idle_channel),
        TH_CASE(kick_rings_again_until_fetched),
        TH_CASE(doorbell_wrong_token_does_not_run),
        TH_CASE(lesson_free_cta_slots_are_trusted),
        TH_CASE(lce_selection),
        TH_CASE(lce_fallback),
        TH_CASE(lce_fault_is_device_lost),
    };
    return th_run("emu", NULL, cases, TH_COUNT(cases), argc - 1, argv + 1);
}
