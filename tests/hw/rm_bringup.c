/* SPDX-License-Identifier: MIT */
/*
 * rm_bringup.c - hardware bring-up of kmd/rm on a real GPU (not part of `make test`).
 * Opens rm:N through rm_kmd_create(), prints the kmd info, allocates each kind of memory
 * and checks CPU writes/reads through the mappings, creates a compute and a copy channel
 * and runs hand-written pushbuffers on them (host semaphore releases with timestamp,
 * SET_OBJECT of both engine classes, one copy-engine transfer vidmem -> sysmem), then
 * then opens the same GPU as a runtime device (hcq_device_open("rm:N"), the pushbuffer
 * engine on top of this kmd) for signal, copy and round-trip checks, and optionally
 * (--fault) provokes an MMU fault and checks that check() decodes it. --cycles N repeats
 * open / allocate every kind / two channels / free / close N times and checks that the
 * process's fds and mappings come back to their count (leaks the fake kernel cannot see).
 *
 * Build (from the repository root, after `make`): sh tests/hw/rm_bringup_build.sh OUT
 * Usage: rm_bringup [--index N] [--fault] [--cycles N]
 */
#include "hcq.h"
#include "kmd.h"
#include "util_log.h"
#include "sys.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Host (GPFIFO class) methods, rm.md §5.2; copy-engine methods, §5.4. */
#define NVC86F_SEM_ADDR_LO 0x005Cu
#define SEM_EXECUTE_RELEASE_WFI_64_TS 0x03100001u /* RELEASE | RELEASE_WFI | 64-bit | TIMESTAMP */
#define NVC8B5_OFFSET_IN_UPPER 0x0400u
#define NVC8B5_LINE_LENGTH_IN 0x0418u
#define NVC8B5_LAUNCH_DMA 0x0300u
#define LAUNCH_DMA_NON_PIPELINED_PITCH 0x182u /* NON_PIPELINED | SRC pitch | DST pitch */
#define SUBC_COMPUTE 1u
#define SUBC_COPY 4u

static int failures;

#define EXPECT(cond, ...)                                                                                    \
    do {                                                                                                     \
        if (!(cond)) {                                                                                       \
            failures++;                                                                                      \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                                      \
            printf(__VA_ARGS__);                                                                             \
            printf("  [%s]\n", hcq_last_error());                                                            \
        }                                                                                                    \
    } while (0)

static uint64_t
now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Incrementing method header (rm.md §5.1). */
static uint32_t
mthd(uint32_t subc, uint32_t method, uint32_t count)
{
    return (2u << 28) | (count << 16) | (subc << 13) | (method >> 2);
}

struct pb {
    uint32_t *map;
    uint64_t va;
    uint32_t dw;
};

static void
pb_sem_release(struct pb *p, uint64_t va, uint64_t value)
{
    p->map[p->dw++] = mthd(0, NVC86F_SEM_ADDR_LO, 5);
    p->map[p->dw++] = (uint32_t)va & ~3u;
    p->map[p->dw++] = (uint32_t)(va >> 32);
    p->map[p->dw++] = (uint32_t)value;
    p->map[p->dw++] = (uint32_t)(value >> 32);
    p->map[p->dw++] = SEM_EXECUTE_RELEASE_WFI_64_TS;
}

/* Submit pushbuffer words [start, p->dw) as one GPFIFO entry (rm.md §4.3-4.4). */
static void
submit(struct kmd *kmd, struct kmd_channel *ch, uint32_t *put, struct pb *p, uint32_t start)
{
    uint64_t va = p->va + 4ull * start;
    uint64_t entry = (va & ~3ull) | ((uint64_t)(p->dw - start) << 42);
    ch->ring[*put % ch->entries] = entry;
    *put += 1;
    kmd_channel_kick(kmd, ch, *put);
}

static int
wait64(struct kmd *kmd, volatile uint64_t *slot, uint64_t value, uint64_t timeout_ns)
{
    uint64_t t0 = now_ns();
    while (*slot < value) {
        char why[256] = "";
        if (kmd_check(kmd, why, sizeof why) != HCQ_OK) {
            printf("  check(): %s\n", why);
            return -2;
        }
        if (now_ns() - t0 > timeout_ns)
            return -1;
    }
    return 0;
}

static void
test_memory(struct kmd *kmd)
{
    static const struct {
        const char *what;
        uint64_t size;
        uint32_t flags;
    } cases[] = {
        {"vidmem 64 KiB cpu-mapped", 64 << 10, KMD_MEM_VRAM | KMD_MEM_CPU_MAP},
        {"vidmem 16 MiB cpu-mapped (2 MiB pages)", 16 << 20, KMD_MEM_VRAM | KMD_MEM_CPU_MAP},
        {"vidmem 4 MiB gpu-only", 4 << 20, KMD_MEM_VRAM},
        {"vidmem 1 MiB low-va contig", 1 << 20,
         KMD_MEM_VRAM | KMD_MEM_LOW_VA | KMD_MEM_CONTIG | KMD_MEM_CPU_MAP},
        {"sysmem 1 MiB cpu-mapped", 1 << 20, KMD_MEM_SYSMEM | KMD_MEM_CPU_MAP},
        {"sysmem 256 KiB rm-owned", 256 << 10, KMD_MEM_SYSMEM},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct kmd_mem *m = NULL;
        enum hcq_status st = kmd_mem_alloc(kmd, cases[i].size, 0, cases[i].flags, &m);
        EXPECT(st == HCQ_OK, "mem_alloc %s -> %d\n", cases[i].what, st);
        if (st != HCQ_OK)
            continue;
        int ok = 1;
        if (m->map) {
            uint64_t *p = m->map, n = m->size_B / 8, seed = now_ns() | 1;
            for (uint64_t j = 0; j < n; j++)
                p[j] = seed * (j + 1);
            for (uint64_t j = 0; j < n; j++)
                ok &= p[j] == seed * (j + 1);
        }
        EXPECT(ok, "%s: CPU readback mismatch\n", cases[i].what);
        EXPECT(!(cases[i].flags & KMD_MEM_CPU_MAP) || m->map, "%s: no CPU map\n", cases[i].what);
        EXPECT(!(cases[i].flags & (KMD_MEM_CPU_MAP | KMD_MEM_LOW_VA)) || m->va < (1ull << 40),
               "%s: va 0x%llx >= 2^40\n", cases[i].what, (unsigned long long)m->va);
        printf("  %-40s va 0x%012llx size 0x%llx map %p %s\n", cases[i].what, (unsigned long long)m->va,
               (unsigned long long)m->size_B, m->map, ok ? "ok" : "BAD");
        kmd_mem_free(kmd, m);
    }
    void *host = aligned_alloc(4096, 1 << 20);
    struct kmd_mem *im = NULL;
    memset(host, 0x5A, 1 << 20);
    enum hcq_status st = kmd_mem_import_host(kmd, host, 1 << 20, &im);
    EXPECT(st == HCQ_OK, "mem_import_host -> %d\n", st);
    if (im) {
        printf("  %-40s va 0x%012llx\n", "host import 1 MiB", (unsigned long long)im->va);
        kmd_mem_free(kmd, im);
    }
    free(host);
}

/* Compute + copy channels: SET_OBJECT, semaphore releases, one CE copy. */
static void
test_channels(struct kmd *kmd)
{
    struct kmd_channel *cc = NULL, *ce = NULL;
    struct kmd_mem *pbm = NULL, *sig = NULL, *src = NULL, *dst = NULL;
    enum hcq_status st = kmd_channel_create(kmd, KMD_ENGINE_COMPUTE, 1024, &cc);
    EXPECT(st == HCQ_OK, "compute channel -> %d\n", st);
    st = kmd_channel_create(kmd, KMD_ENGINE_COPY, 1024, &ce);
    EXPECT(st == HCQ_OK, "copy channel -> %d\n", st);
    if (!cc || !ce)
        goto done;
    printf("  compute channel token 0x%x class 0x%04x; copy channel token 0x%x class 0x%04x\n", cc->token,
           cc->obj_cls, ce->token, ce->obj_cls);
    if (kmd_mem_alloc(kmd, 64 << 10, 0, KMD_MEM_SYSMEM | KMD_MEM_CPU_MAP | KMD_MEM_LOW_VA, &pbm) ||
        kmd_mem_alloc(kmd, 4096, 0, KMD_MEM_SYSMEM | KMD_MEM_CPU_MAP | KMD_MEM_LOW_VA, &sig) ||
        kmd_mem_alloc(kmd, 1 << 20, 0, KMD_MEM_VRAM | KMD_MEM_CPU_MAP, &src) ||
        kmd_mem_alloc(kmd, 1 << 20, 0, KMD_MEM_SYSMEM | KMD_MEM_CPU_MAP, &dst)) {
        EXPECT(0, "buffers for the channel test\n");
        goto done;
    }
    volatile uint64_t *slot = sig->map;
    memset(sig->map, 0, 4096);
    struct pb p = {pbm->map, pbm->va, 0};
    uint32_t put_c = 0, put_e = 0;

    /* compute channel: bind the compute class, release 2^32 + 7 (64-bit payload) */
    uint32_t s0 = p.dw;
    p.map[p.dw++] = mthd(SUBC_COMPUTE, 0, 1);
    p.map[p.dw++] = cc->obj_cls;
    pb_sem_release(&p, sig->va, 0x100000007ull);
    uint64_t t0 = now_ns();
    submit(kmd, cc, &put_c, &p, s0);
    int w = wait64(kmd, &slot[0], 0x100000007ull, 2000000000ull);
    EXPECT(w == 0, "compute channel semaphore: slot 0x%llx (expected 0x100000007), GPGet %u\n",
           (unsigned long long)slot[0], *(volatile uint32_t *)(cc->userd + 0x88));
    printf("  compute release: %.1f us, GPU timestamp %llu ns, GPGet %u\n", (now_ns() - t0) / 1e3,
           (unsigned long long)slot[1], *(volatile uint32_t *)(cc->userd + 0x88));

    /* copy channel: bind the copy class, copy 1 MiB vidmem -> sysmem, release */
    uint32_t *sv = src->map, *dv = dst->map;
    for (uint32_t i = 0; i < (1u << 18); i++) {
        sv[i] = 0x9E3779B9u * (i + 1);
        dv[i] = 0xDEADBEEFu;
    }
    uint32_t s1 = p.dw;
    p.map[p.dw++] = mthd(SUBC_COPY, 0, 1);
    p.map[p.dw++] = ce->obj_cls;
    p.map[p.dw++] = mthd(SUBC_COPY, NVC8B5_OFFSET_IN_UPPER, 4);
    p.map[p.dw++] = (uint32_t)(src->va >> 32);
    p.map[p.dw++] = (uint32_t)src->va;
    p.map[p.dw++] = (uint32_t)(dst->va >> 32);
    p.map[p.dw++] = (uint32_t)dst->va;
    p.map[p.dw++] = mthd(SUBC_COPY, NVC8B5_LINE_LENGTH_IN, 1);
    p.map[p.dw++] = 1u << 20;
    p.map[p.dw++] = mthd(SUBC_COPY, NVC8B5_LAUNCH_DMA, 1);
    p.map[p.dw++] = LAUNCH_DMA_NON_PIPELINED_PITCH;
    pb_sem_release(&p, sig->va + 16, 42);
    t0 = now_ns();
    submit(kmd, ce, &put_e, &p, s1);
    w = wait64(kmd, &slot[2], 42, 2000000000ull);
    EXPECT(w == 0, "copy channel semaphore: slot 0x%llx (expected 42)\n", (unsigned long long)slot[2]);
    int same = memcmp(src->map, dst->map, 1u << 20) == 0;
    EXPECT(same, "copy engine: destination differs from source (dst[0] 0x%x src[0] 0x%x)\n", dv[0], sv[0]);
    printf("  copy 1 MiB vidmem->sysmem + release: %.1f us, data %s\n", (now_ns() - t0) / 1e3,
           same ? "ok" : "BAD");

    /* 100 back-to-back releases on the compute channel: doorbell round trips */
    t0 = now_ns();
    for (uint64_t v = 1; v <= 100; v++) {
        if (p.dw > 15000)
            p.dw = 0;
        uint32_t s = p.dw;
        pb_sem_release(&p, sig->va + 32, v);
        submit(kmd, cc, &put_c, &p, s);
        if (wait64(kmd, &slot[4], v, 1000000000ull) != 0) {
            EXPECT(0, "round trip %llu stuck at %llu\n", (unsigned long long)v, (unsigned long long)slot[4]);
            break;
        }
    }
    printf("  100 submit+release round trips: %.2f us each\n", (now_ns() - t0) / 1e3 / 100);
    char why[256] = "";
    EXPECT(kmd_check(kmd, why, sizeof why) == HCQ_OK, "check() after clean work: %s\n", why);
done:
    kmd_mem_free(kmd, dst);
    kmd_mem_free(kmd, src);
    kmd_mem_free(kmd, sig);
    kmd_mem_free(kmd, pbm);
    kmd_channel_destroy(kmd, ce);
    kmd_channel_destroy(kmd, cc);
}

/* A semaphore release to an unmapped VA: expect an MMU fault reported through check(). */
static void
test_fault(struct kmd *kmd)
{
    struct kmd_channel *cc = NULL;
    struct kmd_mem *pbm = NULL;
    if (kmd_channel_create(kmd, KMD_ENGINE_COMPUTE, 256, &cc) ||
        kmd_mem_alloc(kmd, 4096, 0, KMD_MEM_SYSMEM | KMD_MEM_CPU_MAP, &pbm)) {
        EXPECT(0, "fault test setup\n");
        goto done;
    }
    struct pb p = {pbm->map, pbm->va, 0};
    uint32_t put = 0;
    pb_sem_release(&p, 0x7000000000ull, 1); /* inside no mapping */
    submit(kmd, cc, &put, &p, 0);
    char why[256] = "";
    uint64_t t0 = now_ns();
    enum hcq_status st = HCQ_OK;
    while (now_ns() - t0 < 5000000000ull && (st = kmd_check(kmd, why, sizeof why)) == HCQ_OK)
        ;
    EXPECT(st == HCQ_ERR_DEVICE_LOST, "fault not reported by check() within 5 s\n");
    printf("  fault: check() -> %d after %.1f ms: %s\n", st, (now_ns() - t0) / 1e6, why);
done:
    kmd_mem_free(kmd, pbm);
    kmd_channel_destroy(kmd, cc);
}

/* The runtime on top: signals on both queue kinds, a host->device->host copy, and the
 * submit->signal->host round trip through the whole stack. */
static void
test_device(int index)
{
    char spec[16];
    snprintf(spec, sizeof spec, "rm:%d", index);
    struct hcq_device *dev = NULL;
    struct hcq_queue *q = NULL, *cq = NULL;
    struct hcq_signal *sig = NULL;
    struct hcq_buf *d = NULL, *h0 = NULL, *h1 = NULL;
    enum hcq_status st = hcq_device_open(spec, &dev);
    EXPECT(st == HCQ_OK, "hcq_device_open(%s) -> %d\n", spec, st);
    if (st != HCQ_OK)
        return;
    struct hcq_device_info di;
    if (hcq_device_info(dev, &di) == HCQ_OK)
        printf("  %s: %s, %s, %u SMs, %llu MiB, driver %s, backend %s, kernels %s\n", di.spec, di.name,
               di.arch, di.sm_count, (unsigned long long)(di.mem_B >> 20), di.driver, di.backend,
               di.has_kernels ? "yes" : "no");
    const uint64_t n = 4 << 20;
    if (hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q) || hcq_queue_create(dev, HCQ_QUEUE_COPY, &cq) ||
        hcq_signal_create(dev, 0, &sig) || hcq_buf_alloc(dev, n, HCQ_MEM_DEVICE, &d) ||
        hcq_buf_alloc(dev, n, HCQ_MEM_HOST, &h0) || hcq_buf_alloc(dev, n, HCQ_MEM_HOST, &h1)) {
        EXPECT(0, "device objects\n");
        goto done;
    }
    EXPECT(hcq_queue_signal(q, sig, 1) == HCQ_OK && hcq_queue_submit(q) == HCQ_OK &&
               hcq_signal_wait(sig, 1, 2000000000ull) == HCQ_OK,
           "compute queue signal 1: value %llu\n", (unsigned long long)hcq_signal_value(sig));
    uint32_t *a = hcq_buf_map(h0), *b = hcq_buf_map(h1);
    uint64_t seed = now_ns() | 1;
    for (uint64_t i = 0; i < n / 4; i++) {
        a[i] = (uint32_t)(seed * (i + 7) >> 17);
        b[i] = ~a[i];
    }
    uint64_t t0 = now_ns();
    EXPECT(hcq_queue_copy(cq, d, 0, h0, 0, n) == HCQ_OK && hcq_queue_copy(cq, h1, 0, d, 0, n) == HCQ_OK &&
               hcq_queue_signal(cq, sig, 2) == HCQ_OK && hcq_queue_submit(cq) == HCQ_OK &&
               hcq_signal_wait(sig, 2, 2000000000ull) == HCQ_OK,
           "copy queue round trip: signal %llu\n", (unsigned long long)hcq_signal_value(sig));
    int same = memcmp(a, b, n) == 0;
    EXPECT(same, "host->device->host copy of 4 MiB differs\n");
    printf("  4 MiB host->device->host on the copy queue: %.1f us, data %s\n", (now_ns() - t0) / 1e3,
           same ? "ok" : "BAD");
    t0 = now_ns();
    uint64_t v = 3;
    for (int i = 0; i < 1000; i++, v++) {
        if (hcq_queue_signal(q, sig, v) != HCQ_OK || hcq_queue_submit(q) != HCQ_OK ||
            hcq_signal_wait(sig, v, 1000000000ull) != HCQ_OK) {
            EXPECT(0, "round trip %d\n", i);
            break;
        }
    }
    printf("  1000 x (signal, submit, host wait) on the compute queue: %.2f us each\n",
           (now_ns() - t0) / 1e3 / 1000);
    EXPECT(hcq_device_check(dev) == HCQ_OK, "device check after clean work\n");
done:
    hcq_buf_free(h1);
    hcq_buf_free(h0);
    hcq_buf_free(d);
    hcq_signal_destroy(sig);
    hcq_queue_destroy(cq);
    hcq_queue_destroy(q);
    hcq_device_close(dev);
}

static int
count_lines(const char *path)
{
    FILE *f = fopen(path, "r");
    int n = 0, c;
    if (!f)
        return -1;
    while ((c = fgetc(f)) != EOF)
        n += c == '\n';
    fclose(f);
    return n;
}

static int
count_fds(void)
{
    char cmd[64];
    snprintf(cmd, sizeof cmd, "ls /proc/%d/fd | wc -l", (int)getpid());
    FILE *p = popen(cmd, "r");
    int n = -1;
    if (p) {
        if (fscanf(p, "%d", &n) != 1)
            n = -1;
        pclose(p);
    }
    return n;
}

/* open -> every memory kind + compute/copy channels (copy first: GR anchor) -> free -> close */
static void
test_cycles(int index, int cycles)
{
    int fds0 = -1, maps0 = -1;
    uint64_t t0 = now_ns();
    for (int i = 0; i < cycles; i++) {
        struct kmd *kmd = NULL;
        enum hcq_status st = rm_kmd_create(&sys_os, index, &kmd);
        EXPECT(st == HCQ_OK, "cycle %d: rm_kmd_create -> %d\n", i, st);
        if (st != HCQ_OK)
            return;
        struct kmd_mem *m[4] = {0};
        struct kmd_channel *ce = NULL, *cc = NULL;
        EXPECT(kmd_mem_alloc(kmd, 32 << 20, 0, KMD_MEM_VRAM | KMD_MEM_CPU_MAP, &m[0]) == HCQ_OK &&
                   kmd_mem_alloc(kmd, 1 << 20, 0, KMD_MEM_SYSMEM | KMD_MEM_CPU_MAP, &m[1]) == HCQ_OK &&
                   kmd_mem_alloc(kmd, 1 << 20, 0, KMD_MEM_SYSMEM, &m[2]) == HCQ_OK &&
                   kmd_mem_alloc(kmd, 8 << 20, 0, KMD_MEM_VRAM, &m[3]) == HCQ_OK &&
                   kmd_channel_create(kmd, KMD_ENGINE_COPY, 512, &ce) == HCQ_OK &&
                   kmd_channel_create(kmd, KMD_ENGINE_COMPUTE, 512, &cc) == HCQ_OK,
               "cycle %d: allocations\n", i);
        kmd_channel_destroy(kmd, ce); /* and a second copy channel after destroying one */
        ce = NULL;
        EXPECT(kmd_channel_create(kmd, KMD_ENGINE_COPY, 512, &ce) == HCQ_OK, "cycle %d: copy again\n", i);
        for (int j = 0; j < 4; j++)
            kmd_mem_free(kmd, m[j]);
        kmd_channel_destroy(kmd, ce);
        kmd_channel_destroy(kmd, cc);
        kmd_destroy(kmd);
        int fds = count_fds(), maps = count_lines("/proc/self/maps");
        if (i == 0) {
            fds0 = fds;
            maps0 = maps;
        } else {
            EXPECT(fds == fds0 && maps == maps0, "cycle %d: %d fds, %d mappings (after cycle 0: %d, %d)\n", i,
                   fds, maps, fds0, maps0);
        }
    }
    printf("  %d cycles: %.1f ms each; fds %d, mappings %d after the first and after the last\n", cycles,
           (now_ns() - t0) / 1e6 / cycles, fds0, maps0);
}

int
main(int argc, char **argv)
{
    int index = 0, fault = 0, cycles = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--index") && i + 1 < argc)
            index = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--fault"))
            fault = 1;
        else if (!strcmp(argv[i], "--cycles") && i + 1 < argc)
            cycles = atoi(argv[++i]);
    }
    uint64_t t0 = now_ns();
    struct kmd *kmd = NULL;
    enum hcq_status st = rm_kmd_create(&sys_os, index, &kmd);
    if (st != HCQ_OK) {
        printf("FAIL rm_kmd_create -> %d: %s\n", st, hcq_last_error());
        return 1;
    }
    const struct kmd_info *in = &kmd->info;
    printf("rm_kmd_create: %.1f ms\n", (now_ns() - t0) / 1e6);
    printf("  name   %s\n  driver %s\n  arch   %s (sm_%u)\n  SMs    %u (%u TPCs, %u GPCs; litter %u/%u/%u, "
           "%u warps/SM)\n"
           "  VRAM   %llu MiB\n",
           in->name, in->driver, kmd->arch->name, kmd->arch->sm_version, in->sm_count, in->tpc_count,
           in->gpc_count, in->litter_gpcs, in->litter_tpc_per_gpc, in->litter_sm_per_tpc,
           in->max_warps_per_sm, (unsigned long long)(in->vram_B >> 20));
    EXPECT(in->sm_count == 132 || kmd->arch->sm_version != 90,
           "SM count %u on sm_90 (expected 132 on H100 SXM/H200)\n", in->sm_count);
    printf("memory:\n");
    test_memory(kmd);
    printf("channels:\n");
    test_channels(kmd);
    kmd_destroy(kmd);
    printf("device (pushbuffer engine on this kmd):\n");
    test_device(index);
    if (cycles > 0) {
        printf("cycles:\n");
        test_cycles(index, cycles);
    }
    if (fault) {
        printf("fault:\n");
        if (rm_kmd_create(&sys_os, index, &kmd) == HCQ_OK) {
            test_fault(kmd);
            kmd_destroy(kmd);
        }
    }
    printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
    return failures ? 1 : 0;
}
