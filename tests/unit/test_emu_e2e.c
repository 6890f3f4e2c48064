/* SPDX-License-Identifier: MIT */
/*
 * test_emu_e2e.c - the emulator through the public API: end-to-end runs on emu:gh100 and
 * emu:ga102, fault injection at every step with leak checks, golden ioctl traces
 * (tests/golden/emu_*.txt; GOLDEN_UPDATE=1 rewrites them) and program identification.
 * Split from test_emu.c (the GPU model under kmd/rm, lessons from hardware).
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

/* ==== End to end through the public API ==== */

static void
e2e_fill_add(struct th *t, const char *spec)
{
    struct hcq_device *dev = NULL;
    struct hcq_queue *q = NULL, *cq = NULL;
    struct hcq_program *pf = NULL, *pa = NULL;
    struct hcq_buf *a = NULL, *b = NULL, *c = NULL, *h = NULL;
    struct hcq_signal *sig = NULL;
    float *ha = NULL, *hb = NULL, *hc = NULL;
    uint32_t n = 1000 + (uint32_t)(th_rand() % 3000);
    CHECK_OPEN(hcq_device_open(spec, &dev));
    struct hcq_device_info info;
    CHECK_OK(hcq_device_info(dev, &info));
    CHECK(info.emulated && !strcmp(info.backend, "emu"));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COPY, &cq));
    CHECK_OK(hcq_program_load(dev, "k_add_f32", &pa));
    CHECK_OK(hcq_program_load(dev, "k_fill_f32", &pf));
    CHECK_OK(hcq_buf_alloc(dev, n * 4, HCQ_MEM_DEVICE, &a));
    CHECK_OK(hcq_buf_alloc(dev, n * 4, HCQ_MEM_DEVICE, &b));
    CHECK_OK(hcq_buf_alloc(dev, n * 4, HCQ_MEM_DEVICE, &c));
    CHECK_OK(hcq_buf_alloc(dev, n * 4, HCQ_MEM_HOST, &h));
    ha = malloc(n * 4);
    hb = malloc(n * 4);
    hc = malloc(n * 4);
    CHECK(ha && hb && hc);
    for (uint32_t i = 0; i < n; i++) {
        ha[i] = th_randf(-10, 10);
        hb[i] = th_randf(-10, 10);
    }
    CHECK_OK(hcq_buf_write(a, 0, ha, n * 4));
    CHECK_OK(hcq_buf_write(b, 0, hb, n * 4));
    CHECK_OK(ops_launch_fill_f32(q, pf, c, n, -777.0f)); /* poison c on the device first */
    CHECK_OK(ops_launch_binary_f32(q, pa, c, a, b, n));
    /* 64-bit timeline crossing 2^32: compute signals, copy waits then copies c to host */
    uint64_t v = 0xFFFFFFFFull + (th_rand() & 0xF) + 1;
    CHECK_OK(hcq_signal_create(dev, v - 1, &sig));
    CHECK_OK(hcq_queue_signal(q, sig, v));
    CHECK_OK(hcq_queue_wait(cq, sig, v));
    CHECK_OK(hcq_queue_copy(cq, h, 0, c, 0, n * 4));
    CHECK_OK(hcq_queue_signal(cq, sig, v + 1));
    CHECK_OK(hcq_queue_submit(q));
    CHECK_OK(hcq_queue_submit(cq));
    CHECK_OK(hcq_signal_wait(sig, v + 1, 5000 * MS));
    CHECK(hcq_signal_value(sig) == v + 1);
    memcpy(hc, hcq_buf_map(h), n * 4);
    for (uint32_t i = 0; i < n; i++)
        CHECKF(hc[i] == ha[i] + hb[i], "%s: c[%u] = %g (expected %g)", spec, i, hc[i], ha[i] + hb[i]);
    CHECK_OK(hcq_device_check(dev));
done:
    free(ha);
    free(hb);
    free(hc);
    hcq_signal_destroy(sig);
    hcq_buf_free(a);
    hcq_buf_free(b);
    hcq_buf_free(c);
    hcq_buf_free(h);
    hcq_program_destroy(pa);
    hcq_program_destroy(pf);
    hcq_queue_destroy(q);
    hcq_queue_destroy(cq);
    hcq_device_close(dev);
}

TEST(e2e_gh100)
{
    struct emu_stats base;
    emu_stats_get(&base);
    e2e_fill_add(t, "emu:gh100");
    CHECK_NO_LEAK(&base);
done:;
}

TEST(e2e_ga102)
{
    e2e_fill_add(t, "emu:ga102");
}

/* Buffers freed while the device stays open give their emulated memory back (no mapping or
 * buffer object kept alive until close). */
TEST(free_returns_memory_while_open)
{
    struct hcq_device *dev = NULL;
    struct hcq_buf *keep = NULL;
    CHECK_OPEN(hcq_device_open("emu:gh100", &dev));
    CHECK_OK(hcq_buf_alloc(dev, 4096, HCQ_MEM_HOST, &keep)); /* warm any lazy pools */
    struct emu_stats base;
    emu_stats_get(&base);
    for (int i = 0; i < 20; i++) {
        struct hcq_buf *a = NULL, *b = NULL;
        CHECK_OK(hcq_buf_alloc(dev, (1 + th_rand() % 64) << 16, HCQ_MEM_DEVICE | HCQ_MEM_MAPPABLE, &a));
        CHECK_OK(hcq_buf_alloc(dev, (1 + th_rand() % 64) << 12, HCQ_MEM_HOST, &b));
        hcq_buf_free(a);
        hcq_buf_free(b);
    }
    hcq_device_mem_trim(dev); /* the caching pool keeps freed blocks until trimmed */
    CHECK_NO_LEAK(&base);
done:
    hcq_buf_free(keep);
    hcq_device_close(dev);
}

/* The device's local memory is one grow-only store (docs/engine.md §3): a growth replaces the
 * store, and the replaced one is freed while the device stays open - but only once no kernel
 * can use it: not while another queue still has submitted work (which may start on it), and
 * then as soon as that work is done. Counted in emulated buffer objects. */
TEST(local_memory_replaced_store_freed)
{
    struct emu_stats before, base, now;
    emu_stats_get(&before);
    struct hcq_device *dev = NULL;
    struct hcq_queue *q1 = NULL, *q2 = NULL;
    struct hcq_program *mid = NULL, *big = NULL, *axpb = NULL;
    struct hcq_buf *out = NULL, *x = NULL;
    struct hcq_signal *go = NULL;
    CHECK_OPEN(hcq_device_open("emu:gh100", &dev));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q1));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q2));
    CHECK_OK(hcq_program_load(dev, "k_stack_u32", &mid));
    CHECK_OK(hcq_program_load(dev, "k_stack_big_u32", &big));
    CHECK_OK(hcq_program_load(dev, "k_axpb_u64", &axpb));
    CHECK_OK(hcq_signal_create(dev, 0, &go));
    CHECK_OK(hcq_buf_alloc(dev, 4096 * 4, HCQ_MEM_DEVICE, &out));
    CHECK_OK(hcq_buf_alloc(dev, 64 * 8, HCQ_MEM_DEVICE, &x));
    CHECK_OK(hcq_queue_finish(q1, 5000 * MS));
    CHECK_OK(hcq_queue_finish(q2, 5000 * MS));
    emu_stats_get(&base);
    /* q2 has work waiting for the host: the store q1's growth replaces must stay */
    CHECK_OK(hcq_queue_wait(q2, go, 1));
    CHECK_OK(ops_launch_axpb_u64(q2, axpb, x, 64, 3, 1));
    CHECK_OK(hcq_queue_submit(q2));
    CHECK_OK(ops_launch_stack_u32(q1, mid, out, 4096, 1));
    CHECK_OK(hcq_queue_finish(q1, 5000 * MS)); /* frees what it can (pb_queue_idle_wait) */
    emu_stats_get(&now);
    CHECKF(now.bos == base.bos + 1, "buffer objects: %lld (expected the new store beside the old, %lld)",
           (long long)now.bos, (long long)base.bos + 1);
    hcq_signal_set(go, 1);
    CHECK_OK(hcq_queue_finish(q2, 5000 * MS));
    CHECK_NO_LEAK(&base); /* the old store is gone, the new one took its place */
    /* a second growth, by the other queue, with nothing else in flight */
    CHECK_OK(ops_launch_stack_u32(q2, big, out, 4096, 2));
    CHECK_OK(hcq_queue_finish(q2, 5000 * MS));
    CHECK_NO_LEAK(&base);
    CHECK_OK(hcq_device_check(dev));
    hcq_device_close(dev); /* closes what it holds */
    dev = NULL;
    CHECK_NO_LEAK(&before);
done:
    if (dev) {
        hcq_signal_set(go, 1);
        hcq_device_close(dev);
    }
}

/* ==== Fault injection ==== */

/* Open a device through the same path as hcq_emu_open, keeping the emu_dev (trace). */
static enum hcq_status
open_traced(const char *spec, struct emu_dev **d_out, struct hcq_device **dev_out)
{
    struct emu_opts o;
    *d_out = NULL;
    *dev_out = NULL;
    enum hcq_status st = emu_opts_parse(spec, &o);
    if (st != HCQ_OK)
        return st;
    o.trace = true;
    if ((st = emu_dev_create(&o, d_out)) != HCQ_OK)
        return st;
    struct kmd *kmd = NULL;
    if ((st = rm_kmd_create(emu_dev_sys(*d_out), 0, &kmd)) != HCQ_OK)
        return st;
    emu_kmd_adopt(kmd, *d_out);
    return pb_device_create(kmd, "emu", spec, dev_out);
}

/* A device open + one launch + close; returns the first failing status. */
static enum hcq_status
open_launch_close(const char *spec, uint64_t timeout_ns, char *fault, size_t fault_B)
{
    struct hcq_device *dev = NULL;
    struct hcq_queue *q = NULL;
    struct hcq_program *prog = NULL;
    struct hcq_buf *buf = NULL;
    enum hcq_status st;
    if (fault)
        fault[0] = 0;
    if ((st = hcq_device_open(spec, &dev)) != HCQ_OK)
        return st;
    if ((st = hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q)) == HCQ_OK &&
        (st = hcq_program_load(dev, "k_fill_u32", &prog)) == HCQ_OK &&
        (st = hcq_buf_alloc(dev, 1 << 16, HCQ_MEM_HOST, &buf)) == HCQ_OK &&
        (st = ops_launch_fill_u32(q, prog, buf, 1 << 14, 0x5A5A)) == HCQ_OK)
        st = hcq_queue_finish(q, timeout_ns);
    if (st == HCQ_OK && ((uint32_t *)hcq_buf_map(buf))[(1 << 14) - 1] != 0x5A5A)
        st = HCQ_ERR_INVALID;
    if (fault && st != HCQ_OK)
        snprintf(fault, fault_B, "%s", hcq_last_error()); /* the failing call's message */
    hcq_buf_free(buf);
    hcq_program_destroy(prog);
    hcq_queue_destroy(q);
    hcq_device_close(dev);
    return st;
}

/* Every memory allocation of an open + launch fails once in turn: a clear status, nothing
 * leaked, and the next plain open works. */
TEST(inject_fail_alloc_every_step)
{
    struct emu_stats base;
    emu_stats_get(&base);
    int failed = 0;
    CHECK_OPEN(open_launch_close("emu:gh100", 5000 * MS, NULL, 0));
    for (int n = 1; n <= 40; n++) {
        char spec[64];
        snprintf(spec, sizeof spec, "emu:gh100,fail_alloc=%d", n);
        enum hcq_status st = open_launch_close(spec, 5000 * MS, NULL, 0);
        struct emu_stats now;
        emu_stats_get(&now);
        CHECKF(stats_equal(&base, &now), "fail_alloc=%d leaked (status %s)", n, hcq_status_str(st));
        if (st != HCQ_OK) {
            failed++;
            CHECKF(st == HCQ_ERR_DRIVER || st == HCQ_ERR_NOMEM, "fail_alloc=%d -> %s", n, hcq_status_str(st));
        }
    }
    CHECK(failed >= 5); /* the open path allocates memory several times */
    CHECK_OK(open_launch_close("emu:gh100", 5000 * MS, NULL, 0));
done:;
}

/* Each distinct call of a traced open fails once in turn (fail_ioctl=NAME). */
TEST(inject_fail_ioctl_each_call)
{
    struct emu_stats base;
    emu_stats_get(&base);
    struct emu_dev *d = NULL;
    struct hcq_device *dev = NULL;
    char *trace = NULL;
    CHECK_OPEN(open_traced("gh100", &d, &dev));
    hcq_device_close(dev);
    dev = NULL;
    trace = strdup(emu_dev_trace(d));
    emu_dev_put(d);
    d = NULL;
    CHECK(trace);
    int tried = 0;
    char done_names[64][64];
    int done_n = 0;
    for (char *line = strtok(trace, "\n"); line; line = strtok(NULL, "\n")) {
        char name[64];
        /* "NV_ESC_RM_ALLOC KEPLER_CHANNEL_GROUP_A ..." -> the class; "NV_ESC_RM_CONTROL X on ..." -> X;
         * "UVM_X -> ..." -> UVM_X */
        if (!strncmp(line, "NV_ESC_RM_ALLOC ", 16) || !strncmp(line, "NV_ESC_RM_CONTROL ", 18))
            sscanf(strchr(line, ' ') + 1, "%63s", name);
        else if (!strncmp(line, "UVM_", 4) || !strncmp(line, "NV_ESC_", 7))
            sscanf(line, "%63s", name);
        else
            continue;
        bool seen = false;
        for (int i = 0; i < done_n; i++)
            seen |= !strcmp(done_names[i], name);
        if (seen || done_n == 64 || !strcmp(name, "UVM_MM_INITIALIZE") || !strcmp(name, "NV01_ROOT_CLIENT"))
            continue; /* UVM_MM_INITIALIZE failures are ignored by design (rm.md §2 step 4) */
        snprintf(done_names[done_n++], sizeof done_names[0], "%s", name);
        char spec[128];
        snprintf(spec, sizeof spec, "emu:gh100,fail_ioctl=%s", name);
        enum hcq_status st = open_launch_close(spec, 3000 * MS, NULL, 0);
        tried++;
        struct emu_stats now;
        emu_stats_get(&now);
        CHECKF(stats_equal(&base, &now), "fail_ioctl=%s leaked", name);
        /* optional calls (informational controls, the copy-engine probe, teardown) may fail
         * without failing the open */
        CHECKF(st != HCQ_OK || !strcmp(name, "NV2080_CTRL_CMD_PERF_BOOST") ||
                   !strcmp(name, "NV2080_CTRL_CMD_GPU_GET_ENGINES_V2") ||
                   !strcmp(name, "NV2080_CTRL_CMD_CE_GET_CAPS_V2") ||
                   !strcmp(name, "NV2080_CTRL_CMD_CE_GET_CE_PCE_MASK") || !strcmp(name, "NV_ESC_RM_FREE") ||
                   !strcmp(name, "NV2080_CTRL_CMD_GPU_GET_NAME_STRING") ||
                   !strcmp(name, "NV2080_CTRL_CMD_FB_GET_INFO") || !strcmp(name, "NV_ESC_RM_UNMAP_MEMORY") ||
                   !strcmp(name, "NV_ESC_RM_UNMAP_MEMORY_DMA") || !strcmp(name, "UVM_FREE"),
               "fail_ioctl=%s: open + launch still succeeded", name);
    }
    CHECK(tried >= 10);
    CHECK_OK(open_launch_close("emu:gh100", 5000 * MS, NULL, 0));
done:
    hcq_device_close(dev);
    emu_dev_put(d);
    free(trace);
}

TEST(inject_corrupt_qmd)
{
    struct emu_stats base;
    emu_stats_get(&base);
    char fault[512];
    CHECK_OPEN(open_launch_close("emu:gh100", 5000 * MS, NULL, 0));
    enum hcq_status st = open_launch_close("emu:gh100,corrupt_qmd", 3000 * MS, fault, sizeof fault);
    CHECKF(st == HCQ_ERR_DEVICE_LOST, "corrupt_qmd -> %s", hcq_status_str(st));
    CHECKF(strstr(fault, "Xid") != NULL, "fault report: %s", fault);
    CHECK_NO_LEAK(&base);
    CHECK_OK(open_launch_close("emu:gh100", 5000 * MS, NULL, 0));
done:;
}

/* A kernel writing to a buffer that was freed faults (its VA is unmapped), as on hardware,
 * and the runtime reports DEVICE_LOST with the address. */
TEST(freed_va_faults)
{
    struct hcq_device *dev = NULL;
    struct hcq_queue *q = NULL;
    struct hcq_program *prog = NULL;
    struct hcq_buf *buf = NULL;
    CHECK_OPEN(hcq_device_open("emu:ga102", &dev));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    CHECK_OK(hcq_program_load(dev, "k_fill_u32", &prog));
    CHECK_OK(hcq_buf_alloc(dev, 1 << 20, HCQ_MEM_DEVICE, &buf));
    uint64_t va = hcq_buf_va(buf);
    hcq_buf_free(buf);
    buf = NULL;
    /* A freed buffer stays mapped in the device's caching pool until it is trimmed (or
     * reused); trimmed, its VA is gone and a kernel writing there faults. */
    CHECK(hcq_device_mem_trim(dev) >= (1u << 20));
    struct k_fill_u32_params p = {.dst_va = va, .n = 1024, .value = 7};
    const uint32_t grid[3] = {4, 1, 1}, block[3] = {256, 1, 1};
    CHECK_OK(hcq_queue_launch(q, prog, grid, block, &p, sizeof p));
    enum hcq_status st = hcq_queue_finish(q, 3000 * MS);
    CHECKF(st == HCQ_ERR_DEVICE_LOST, "finish -> %s", hcq_status_str(st));
    CHECKF(strstr(hcq_last_error(), "Xid 31") || strstr(hcq_last_error(), "MMU"), "error: %s",
           hcq_last_error());
done:
    hcq_program_destroy(prog);
    hcq_queue_destroy(q);
    hcq_device_close(dev);
}

/* A device node that cannot be opened (no UVM module, no permission): a clear status. */
TEST(inject_fail_open)
{
    struct emu_stats base;
    emu_stats_get(&base);
    const char *nodes[] = {"/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia0"};
    CHECK_OPEN(open_launch_close("emu:gh100", 5000 * MS, NULL, 0));
    for (int i = 0; i < 3; i++) {
        char spec[64];
        snprintf(spec, sizeof spec, "emu:gh100,fail_open=%s", nodes[i]);
        enum hcq_status st = open_launch_close(spec, 3000 * MS, NULL, 0);
        CHECKF(st != HCQ_OK, "%s: opened without %s", spec, nodes[i]);
        CHECK_NO_LEAK(&base);
    }
    CHECK_OK(open_launch_close("emu:gh100", 5000 * MS, NULL, 0));
done:;
}

/* ==== Golden ioctl traces ==== */

static void
golden_check(struct th *t, const char *path, const char *text)
{
    if (getenv("GOLDEN_UPDATE") && !strcmp(getenv("GOLDEN_UPDATE"), "1")) {
        FILE *f = fopen(path, "w");
        CHECKF(f, "cannot write %s", path);
        fputs(text, f);
        fclose(f);
        return;
    }
    FILE *f = fopen(path, "r");
    CHECKF(f, "%s missing (run with GOLDEN_UPDATE=1 and review the diff)", path);
    static char want[1 << 16];
    size_t n = fread(want, 1, sizeof want - 1, f);
    fclose(f);
    want[n] = 0;
    const char *a = want, *b = text;
    for (int line = 1; *a || *b; line++) {
        const char *ea = strchr(a, '\n'), *eb = strchr(b, '\n');
        size_t la = ea ? (size_t)(ea - a) : strlen(a), lb = eb ? (size_t)(eb - b) : strlen(b);
        CHECKF(la == lb && !memcmp(a, b, la), "%s:%d: expected '%.*s', got '%.*s' (GOLDEN_UPDATE=1 rewrites)",
               path, line, (int)la, a, (int)lb, b);
        a += la + (ea ? 1 : 0);
        b += lb + (eb ? 1 : 0);
    }
done:;
}

static void
golden_open_launch(struct th *t, const char *chip, const char *path)
{
    struct emu_dev *d = NULL;
    struct hcq_device *dev = NULL;
    struct hcq_queue *q = NULL;
    struct hcq_program *prog = NULL;
    struct hcq_buf *buf = NULL;
    CHECK_OPEN(open_traced(chip, &d, &dev));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    CHECK_OK(hcq_program_load(dev, "k_fill_u32", &prog));
    CHECK_OK(hcq_buf_alloc(dev, 1 << 16, HCQ_MEM_HOST, &buf));
    CHECK_OK(ops_launch_fill_u32(q, prog, buf, 1 << 14, 1));
    CHECK_OK(hcq_queue_finish(q, 5000 * MS));
    hcq_buf_free(buf);
    buf = NULL;
    hcq_program_destroy(prog);
    prog = NULL;
    hcq_queue_destroy(q);
    q = NULL;
    hcq_device_close(dev);
    dev = NULL;
    char *text = NULL;
    size_t text_B = 0;
    FILE *f = open_memstream(&text, &text_B);
    CHECK(f);
    fprintf(f,
            "# emu:%s ioctl trace: device open (kmd/rm + engine), k_fill_u32 launch, close\n"
            "# source: emulator trace (tests/unit/test_emu.c), reviewed; GOLDEN_UPDATE=1 rewrites\n%s",
            chip, emu_dev_trace(d));
    fclose(f);
    golden_check(t, path, text);
    free(text);
done:
    hcq_buf_free(buf);
    hcq_program_destroy(prog);
    hcq_queue_destroy(q);
    hcq_device_close(dev);
    emu_dev_put(d);
}

/* The engine rounds code memory to 64 KiB, so a cubin's code and the 128-byte emu
 * program stub (builds without nvcc) take the same allocation: one golden per chip. */
static void
golden_for_chip(struct th *t, const char *chip)
{
    char path[128];
    snprintf(path, sizeof path, "tests/golden/emu_%s_open_launch.txt", chip);
    golden_open_launch(t, chip, path);
}

TEST(golden_gh100_open_launch)
{
    golden_for_chip(t, "gh100");
}

TEST(golden_ga102_open_launch)
{
    golden_for_chip(t, "ga102");
}

/* Program identification: stub, the bytes of an embedded cubin's .text section, garbage. */
TEST(program_identify)
{
    struct emu_opts o;
    struct emu_dev *d = NULL;
    CHECK_OK(emu_opts_parse("gh100", &o));
    CHECK_OK(emu_dev_create(&o, &d));
    char why[200];
    struct emu_program_stub stub;
    CHECK(emu_program_stub_init(&stub, "k_fill_u32"));
    const struct hcq_kernel_desc *k =
        emu_prog_identify(d, (const uint8_t *)&stub, sizeof stub, NULL, why, sizeof why);
    CHECKF(k && !strcmp(k->name, "k_fill_u32"), "stub: %s", why);
    CHECK(emu_program_stub_init(&stub, "k_no_such_kernel"));
    CHECK(!emu_prog_identify(d, (const uint8_t *)&stub, sizeof stub, NULL, why, sizeof why) &&
          strstr(why, "no CPU twin"));
    uint8_t junk[256];
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = (uint8_t)th_rand();
    CHECK(!emu_prog_identify(d, junk, sizeof junk, NULL, why, sizeof why) &&
          strstr(why, "matches no embedded"));
    const struct hcq_kernel_desc *fill = hcq_kernel_find("k_fill_u32");
    const struct hcq_cubin *cb = fill ? hcq_cubin_find(fill->module, 90) : NULL;
    if (!cb)
        SKIP("no sm_90 cubin embedded (built without nvcc): stub path checked only");
    /* The ELF header is no kernel's code; the bytes at each .text section's file offset are.
     * Kernels compiled to identical SASS (k_fill_u32 / k_fill_f32) are indistinguishable and
     * either twin is right for them, so count kernels found, not names. */
    CHECK(!emu_prog_identify(d, cb->data, cb->size_B, NULL, why, sizeof why));
    int found = 0;
    for (size_t off = 16; off + 16 <= cb->size_B; off += 16)
        found += emu_prog_identify(d, cb->data + off, cb->size_B - off, NULL, why, sizeof why) != NULL;
    CHECKF(found >= 2, "%d kernels of %s.sm_90 recognised", found, fill->module);
done:
    emu_dev_put(d);
}

int
main(int argc, char **argv)
{
    static const struct th_case cases[] = {
        TH_CASE(e2e_gh100),
        TH_CASE(e2e_ga102),
        TH_CASE(free_returns_memory_while_open),
        TH_CASE(local_memory_replaced_store_freed),
        TH_CASE(inject_fail_alloc_every_step),
        TH_CASE(inject_fail_ioctl_each_call),
        TH_CASE(inject_corrupt_qmd),
        TH_CASE(inject_fail_open),
        TH_CASE(freed_va_faults),
        TH_CASE(golden_gh100_open_launch),
        TH_CASE(golden_ga102_open_launch),
        TH_CASE(program_identify),
    };
    return th_run("emu_e2e", NULL, cases, TH_COUNT(cases), argc - 1, argv + 1);
}
