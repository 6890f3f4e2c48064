/* SPDX-License-Identifier: MIT */
/*
 * test_emu_rm.c - the emulated RM + UVM driver model on its own: raw ioctls through the
 * sys seam following docs/hw/rm.md §2 (no kmd/rm involved), checking the rules the
 * real driver enforces and the status codes it returns; option parsing. The GPU model,
 * lessons, fault injection and golden traces are in test_emu.c.
 */
#include "emu.h"
#include "emu_rm_abi.h"
#include "emu_tcheck.h"
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* ==== Helpers ==== */

/* An emulated machine with a raw view of its syscall table (driver-model tests). */
struct raw {
    struct emu_dev *d;
    const struct sys *sys;
    int ctl, gpu, uvm;
    uint32_t client, device, subdevice;
};

static unsigned long
esc(uint32_t nr, uint32_t size_B)
{
    return 0xC0000000ul | ((unsigned long)size_B << 16) | ((unsigned long)'F' << 8) | nr;
}

static int
raw_ioctl(struct raw *r, int fd, uint32_t nr, void *arg, uint32_t size_B)
{
    return r->sys->ioctl(r->sys->ctx, fd, esc(nr, size_B), arg);
}

static uint32_t
raw_alloc(struct raw *r, uint32_t parent, uint32_t *h, uint32_t cls, void *params, uint32_t params_B)
{
    struct emu_nvos21 a = {.hRoot = r->client,
                           .hObjectParent = parent,
                           .hObjectNew = h ? *h : 0,
                           .hClass = cls,
                           .pAllocParms = (uintptr_t)params,
                           .paramsSize = params_B,
                           .status = 0xDEAD};
    if (raw_ioctl(r, r->ctl, NV_ESC_RM_ALLOC, &a, sizeof a) != 0)
        return 0xBAD0;
    if (h)
        *h = a.hObjectNew;
    return a.status;
}

static uint32_t
raw_control(struct raw *r, uint32_t obj, uint32_t cmd, void *params, uint32_t params_B)
{
    struct emu_nvos54 c = {.hClient = r->client,
                           .hObject = obj,
                           .cmd = cmd,
                           .params = (uintptr_t)params,
                           .paramsSize = params_B,
                           .status = 0xDEAD};
    if (raw_ioctl(r, r->ctl, NV_ESC_RM_CONTROL, &c, sizeof c) != 0)
        return 0xBAD0;
    return c.status;
}

/* rm.md §2 steps 1-9: nodes, client, device, subdevice. */
static enum hcq_status
raw_open(struct raw *r, const char *spec)
{
    memset(r, 0, sizeof *r);
    r->ctl = r->gpu = r->uvm = -1;
    struct emu_opts o;
    enum hcq_status st = emu_opts_parse(spec, &o);
    if (st == HCQ_OK)
        st = emu_dev_create(&o, &r->d);
    if (st != HCQ_OK)
        return st;
    r->sys = emu_dev_sys(r->d);
    r->ctl = r->sys->open(r->sys->ctx, "/dev/nvidiactl", O_RDWR | O_CLOEXEC);
    r->gpu = r->sys->open(r->sys->ctx, "/dev/nvidia0", O_RDWR | O_CLOEXEC);
    r->uvm = r->sys->open(r->sys->ctx, "/dev/nvidia-uvm", O_RDWR | O_CLOEXEC);
    if (r->ctl < 0 || r->gpu < 0 || r->uvm < 0)
        return HCQ_ERR_IO;
    if (raw_alloc(r, 0, &r->client, NV01_ROOT_CLIENT, NULL, 0) != NV_OK)
        return HCQ_ERR_DRIVER;
    struct emu_nv0080_alloc dp = {.hClientShare = r->client};
    if (raw_alloc(r, r->client, &r->device, NV01_DEVICE_0, &dp, sizeof dp) != NV_OK)
        return HCQ_ERR_DRIVER;
    uint32_t sub = 0;
    if (raw_alloc(r, r->device, &r->subdevice, NV20_SUBDEVICE_0, &sub, sizeof sub) != NV_OK)
        return HCQ_ERR_DRIVER;
    return HCQ_OK;
}

static void
raw_close(struct raw *r)
{
    if (!r->d)
        return;
    if (r->uvm >= 0)
        r->sys->close(r->sys->ctx, r->uvm);
    if (r->gpu >= 0)
        r->sys->close(r->sys->ctx, r->gpu);
    if (r->ctl >= 0)
        r->sys->close(r->sys->ctx, r->ctl);
    emu_dev_put(r->d);
    r->d = NULL;
}

/* ==== Options ==== */

TEST(opts_parse)
{
    struct emu_opts o;
    CHECK_OK(emu_opts_parse("ga102,fail_alloc=3,fail_ioctl=UVM_REGISTER_GPU@2,hang,trace", &o));
    CHECK(!strcmp(o.chip, "ga102") && o.fail_alloc == 3 && o.fail_ioctl_nth == 2 && o.hang == 1 && o.trace);
    CHECK(!strcmp(o.fail_ioctl, "UVM_REGISTER_GPU") && !o.drop_doorbell && o.corrupt_qmd == 0);
    CHECK_OK(emu_opts_parse("gh100,corrupt_qmd,drop_doorbell=4", &o));
    CHECK(o.corrupt_qmd == 1 && o.drop_doorbell == 4);
    CHECK(emu_opts_parse("gh100,bogus", &o) == HCQ_ERR_INVALID);
    CHECK(emu_opts_parse("gh100,fail_alloc=x", &o) == HCQ_ERR_INVALID);
    CHECK(emu_opts_parse("gk104", &o) == HCQ_ERR_NOT_FOUND);
    struct emu_program_stub s;
    CHECK(emu_program_stub_init(&s, "k_fill_u32") && s.magic == EMU_PROGRAM_MAGIC);
    CHECK(!memcmp(&s.magic, "EMUPROG", 8)); /* the documented byte sequence */
done:;
}

/* ==== Driver model rules (raw ioctls) ==== */

TEST(rm_escape_rules)
{
    struct emu_stats base, now;
    emu_stats_get(&base);
    struct raw r;
    CHECK_OK(raw_open(&r, "gh100"));
    /* wrong argument size: the ioctl itself fails (rm.md §1.2) */
    struct emu_nvos21 a = {.hRoot = r.client, .hObjectParent = r.device, .hClass = NV01_MEMORY_VIRTUAL};
    errno = 0;
    CHECK(raw_ioctl(&r, r.ctl, NV_ESC_RM_ALLOC, &a, 40) == -1 && errno == EINVAL);
    /* RM_ALLOC_MEMORY belongs on /dev/nvidiaN, not nvidiactl */
    struct emu_nvos02_fd m = {0};
    CHECK(raw_ioctl(&r, r.ctl, NV_ESC_RM_ALLOC_MEMORY, &m, sizeof m) == -1 && errno == EINVAL);
    /* parent rules */
    uint32_t h = 0;
    struct emu_nv0080_alloc dp = {0};
    CHECK(raw_alloc(&r, r.device, &h, NV01_DEVICE_0, &dp, sizeof dp) == NV_ERR_INVALID_OBJECT_PARENT);
    CHECK(raw_alloc(&r, r.device, &h, HOPPER_USERMODE_A, NULL, 0) == NV_ERR_INVALID_OBJECT_PARENT);
    /* classes: Ampere compute is not in GH100's list */
    CHECK(raw_alloc(&r, r.device, &h, AMPERE_COMPUTE_B, NULL, 0) == NV_ERR_INVALID_CLASS);
    /* a parameter struct of the wrong declared size */
    struct emu_nv_memory_alloc mp = {.size = 4096};
    CHECK(raw_alloc(&r, r.device, &h, NV1_MEMORY_USER, &mp, 64) == NV_ERR_INVALID_PARAM_STRUCT);
    CHECK(raw_alloc(&r, r.device, &h, NV1_MEMORY_USER, NULL, 0) == NV_ERR_INVALID_ARGUMENT);
    /* controls: exact params size, the right object class */
    struct emu_nv0000_build_version bv;
    CHECK(raw_control(&r, r.client, NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2, &bv, 1000) ==
          NV_ERR_INVALID_PARAM_STRUCT);
    CHECK(raw_control(&r, r.client, NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2, &bv, sizeof bv) == NV_OK);
    CHECK(!strncmp(bv.driverVersionBuffer, "580.", 4));
    struct emu_nv2080_gpc_mask gm = {0};
    CHECK(raw_control(&r, r.device, NV2080_CTRL_CMD_GR_GET_GPC_MASK, &gm, sizeof gm) == NV_ERR_NOT_SUPPORTED);
    CHECK(raw_control(&r, r.subdevice, NV2080_CTRL_CMD_GR_GET_GPC_MASK, &gm, sizeof gm) == NV_OK &&
          gm.gpcMask);
    /* class list, two-phase (rm.md §2 step 11) */
    struct emu_nv0080_classlist cl = {0};
    CHECK(raw_control(&r, r.device, NV0080_CTRL_CMD_GPU_GET_CLASSLIST, &cl, sizeof cl) == NV_OK);
    CHECK(cl.numClasses > 10);
    uint32_t *classes = calloc(cl.numClasses, 4);
    cl.classList = (uintptr_t)classes;
    uint32_t st = raw_control(&r, r.device, NV0080_CTRL_CMD_GPU_GET_CLASSLIST, &cl, sizeof cl);
    bool has_cbc0 = false;
    for (uint32_t i = 0; classes && i < cl.numClasses; i++)
        has_cbc0 |= classes[i] == HOPPER_COMPUTE_A;
    free(classes);
    CHECK(st == NV_OK && has_cbc0);
    /* a handle of another client / a freed handle */
    CHECK(raw_control(&r, 0xC1D0FFFFu, NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2, &bv, sizeof bv) ==
          NV_ERR_INVALID_OBJECT_HANDLE);
    struct emu_nvos00 fr = {.hRoot = r.client, .hObjectParent = r.device, .hObjectOld = r.subdevice};
    CHECK(raw_ioctl(&r, r.ctl, NV_ESC_RM_FREE, &fr, sizeof fr) == 0 && fr.status == NV_OK);
    CHECK(raw_control(&r, r.subdevice, NV2080_CTRL_CMD_GR_GET_GPC_MASK, &gm, sizeof gm) ==
          NV_ERR_INVALID_OBJECT_HANDLE);
done:
    raw_close(&r);
    emu_stats_get(&now);
    if (!stats_equal(&base, &now)) {
        stats_print("before", &base);
        stats_print("after", &now);
        th_fail(t, __FILE__, __LINE__, "emulator resources leaked");
    }
}

TEST(rm_channel_order_rules)
{
    struct raw r;
    CHECK_OK(raw_open(&r, "gh100"));
    /* memory for ring/USERD and an error notifier */
    uint32_t area = 0, notif = 0, vas = 0, tsg = 0, ctx = 0, ch = 0;
    struct emu_nv_memory_alloc mp = {.owner = r.client, .size = 0x10000, .alignment = 4096};
    CHECK(raw_alloc(&r, r.device, &area, NV1_MEMORY_USER, &mp, sizeof mp) == NV_OK);
    struct emu_nv_memory_alloc np = {.owner = r.client, .type = 0xD, .size = 4096, .attr = 1u << 25};
    CHECK(raw_alloc(&r, r.device, &notif, NV1_MEMORY_SYSTEM, &np, sizeof np) == NV_OK);
    struct emu_nv_vaspace_alloc vp = {.flags = 0x48, .vaSize = 0x1FFFFFB000000ull, .vaBase = 0x1000};
    CHECK(raw_alloc(&r, r.device, &vas, FERMI_VASPACE_A, &vp, sizeof vp) == NV_OK);
    /* a ctxshare needs its TSG: not under the device */
    struct emu_nv_ctxshare_alloc cp = {.hVASpace = vas, .flags = 1};
    CHECK(raw_alloc(&r, r.device, &ctx, FERMI_CONTEXT_SHARE_A, &cp, sizeof cp) ==
          NV_ERR_INVALID_OBJECT_PARENT);
    struct emu_nv_channel_group_alloc gp = {.engineType = 0};
    CHECK(raw_alloc(&r, r.device, &tsg, KEPLER_CHANNEL_GROUP_A, &gp, sizeof gp) == NV_ERR_INVALID_ARGUMENT);
    gp.engineType = NV2080_ENGINE_TYPE_GRAPHICS;
    tsg = 0;
    CHECK(raw_alloc(&r, r.device, &tsg, KEPLER_CHANNEL_GROUP_A, &gp, sizeof gp) == NV_OK);
    /* a channel before its ctxshare is refused */
    struct emu_nv_channel_alloc chp = {.hObjectError = notif,
                                       .hObjectBuffer = area,
                                       .gpFifoOffset = 0x100000000ull,
                                       .gpFifoEntries = 64,
                                       .hUserdMemory = {area},
                                       .userdOffset = {0x1000}};
    CHECK(raw_alloc(&r, tsg, &ch, HOPPER_CHANNEL_GPFIFO_A, &chp, sizeof chp) == NV_ERR_INVALID_OBJECT_HANDLE);
    ctx = 0;
    CHECK(raw_alloc(&r, tsg, &ctx, FERMI_CONTEXT_SHARE_A, &cp, sizeof cp) == NV_OK);
    chp.hContextShare = ctx;
    chp.gpFifoEntries = 48; /* not a power of two */
    ch = 0;
    CHECK(raw_alloc(&r, tsg, &ch, HOPPER_CHANNEL_GPFIFO_A, &chp, sizeof chp) == NV_ERR_INVALID_ARGUMENT);
    chp.gpFifoEntries = 64;
    chp.userdOffset[0] = 0x1100; /* USERD not 512-byte aligned */
    CHECK(raw_alloc(&r, tsg, &ch, HOPPER_CHANNEL_GPFIFO_A, &chp, sizeof chp) == NV_ERR_INVALID_ARGUMENT);
    chp.userdOffset[0] = 0x1000;
    CHECK(raw_alloc(&r, tsg, &ch, HOPPER_CHANNEL_GPFIFO_A, &chp, 100) == NV_ERR_INVALID_PARAM_STRUCT);
    CHECK(raw_alloc(&r, tsg, &ch, HOPPER_CHANNEL_GPFIFO_A, &chp, sizeof chp) == NV_OK);
    /* engine objects: the chip's classes only, one per channel */
    uint32_t obj = 0;
    CHECK(raw_alloc(&r, ch, &obj, AMPERE_DMA_COPY_B, NULL, 0) == NV_ERR_INVALID_CLASS);
    CHECK(raw_alloc(&r, ch, &obj, HOPPER_COMPUTE_A, NULL, 0) == NV_OK);
    uint32_t obj2 = 0;
    CHECK(raw_alloc(&r, ch, &obj2, HOPPER_DMA_COPY_A, NULL, 0) == NV_ERR_INVALID_STATE);
    /* the token query (rm.md §4.1 step 3) and the channel-only controls */
    struct emu_nvc36f_token tok = {0xFFFFFFFFu};
    CHECK(raw_control(&r, ch, NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN, &tok, sizeof tok) == NV_OK);
    CHECK(tok.workSubmitToken != 0xFFFFFFFFu);
    CHECK(raw_control(&r, tsg, NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN, &tok, sizeof tok) ==
          NV_ERR_NOT_SUPPORTED);
    /* a VA space in use by a ctxshare cannot be freed on its own */
    struct emu_nvos00 fr = {.hRoot = r.client, .hObjectParent = r.device, .hObjectOld = vas};
    CHECK(raw_ioctl(&r, r.ctl, NV_ESC_RM_FREE, &fr, sizeof fr) == 0 && fr.status == NV_ERR_INVALID_STATE);
    struct emu_nva06c_schedule sch = {1, 0, 0};
    CHECK(raw_control(&r, tsg, NVA06C_CTRL_CMD_GPFIFO_SCHEDULE, &sch, sizeof sch) == NV_OK);
done:
    raw_close(&r);
}

TEST(uvm_rules)
{
    struct raw r;
    CHECK_OK(raw_open(&r, "gh100"));
    const struct sys *s = r.sys;
    struct emu_uvm_range rg = {.base = 0x1000000000ull, .length = 0x200000};
    /* everything but INITIALIZE needs INITIALIZE first */
    CHECK(s->ioctl(s->ctx, r.uvm, UVM_CREATE_EXTERNAL_RANGE, &rg) == 0 &&
          rg.rmStatus == NV_ERR_INVALID_STATE);
    struct emu_uvm_initialize in = {0};
    CHECK(s->ioctl(s->ctx, r.uvm, UVM_INITIALIZE, &in) == 0 && in.rmStatus == NV_OK);
    CHECK(s->ioctl(s->ctx, r.uvm, 0x1234, &in) == -1 && errno == EINVAL);
    CHECK(s->ioctl(s->ctx, r.uvm, UVM_CREATE_EXTERNAL_RANGE, &rg) == 0 && rg.rmStatus == NV_OK);
    struct emu_uvm_range rg2 = {.base = 0x1000100000ull, .length = 0x200000};
    CHECK(s->ioctl(s->ctx, r.uvm, UVM_CREATE_EXTERNAL_RANGE, &rg2) == 0 &&
          rg2.rmStatus == NV_ERR_UVM_ADDRESS_IN_USE);
    /* the VA space needs the GPU registered first */
    struct emu_nv2080_gid_info gid = {.flags = 2, .length = 16};
    CHECK(raw_control(&r, r.subdevice, NV2080_CTRL_CMD_GPU_GET_GID_INFO, &gid, sizeof gid) == NV_OK);
    uint32_t vas = 0;
    struct emu_nv_vaspace_alloc vp = {.flags = 0x48, .vaSize = 0x1FFFFFB000000ull, .vaBase = 0x1000};
    CHECK(raw_alloc(&r, r.device, &vas, FERMI_VASPACE_A, &vp, sizeof vp) == NV_OK);
    struct emu_uvm_register_gpu_vaspace rv = {.rmCtrlFd = r.ctl, .hClient = r.client, .hVaSpace = vas};
    memcpy(rv.uuid, gid.data, 16);
    CHECK(s->ioctl(s->ctx, r.uvm, UVM_REGISTER_GPU_VASPACE, &rv) == 0 &&
          rv.rmStatus == NV_ERR_INVALID_DEVICE);
    struct emu_uvm_register_gpu rgp = {.rmCtrlFd = -1};
    memcpy(rgp.uuid, gid.data, 16);
    CHECK(s->ioctl(s->ctx, r.uvm, UVM_REGISTER_GPU, &rgp) == 0 && rgp.rmStatus == NV_OK);
    CHECK(s->ioctl(s->ctx, r.uvm, UVM_REGISTER_GPU_VASPACE, &rv) == 0 && rv.rmStatus == NV_OK);
    /* mapping: inside a created range only */
    uint32_t mem = 0;
    struct emu_nv_memory_alloc mp = {.owner = r.client, .size = 0x200000, .alignment = 4096};
    CHECK(raw_alloc(&r, r.device, &mem, NV1_MEMORY_USER, &mp, sizeof mp) == NV_OK);
    struct emu_uvm_map_external *mx = calloc(1, sizeof *mx);
    CHECK(mx);
    mx->base = 0x2000000000ull;
    mx->length = 0x200000;
    mx->gpuAttributesCount = 1;
    memcpy(mx->perGpuAttributes[0].uuid, gid.data, 16);
    mx->perGpuAttributes[0].gpuMappingType = 1;
    mx->rmCtrlFd = r.ctl;
    mx->hClient = r.client;
    mx->hMemory = mem;
    int rc = s->ioctl(s->ctx, r.uvm, UVM_MAP_EXTERNAL_ALLOCATION, mx);
    uint32_t st1 = mx->rmStatus;
    mx->base = rg.base;
    rc |= s->ioctl(s->ctx, r.uvm, UVM_MAP_EXTERNAL_ALLOCATION, mx);
    uint32_t st2 = mx->rmStatus;
    rc |= s->ioctl(s->ctx, r.uvm, UVM_MAP_EXTERNAL_ALLOCATION, mx);
    uint32_t st3 = mx->rmStatus;
    free(mx);
    CHECK(rc == 0 && st1 == NV_ERR_INVALID_ADDRESS && st2 == NV_OK && st3 == NV_ERR_UVM_ADDRESS_IN_USE);
    struct emu_uvm_range fr = {.base = rg.base, .length = rg.length};
    CHECK(s->ioctl(s->ctx, r.uvm, UVM_FREE, &fr) == 0 && fr.rmStatus == NV_OK);
    CHECK(s->ioctl(s->ctx, r.uvm, UVM_FREE, &fr) == 0 && fr.rmStatus == NV_ERR_INVALID_ADDRESS);
done:
    raw_close(&r);
}

TEST(cpu_mapping_rules)
{
    struct raw r;
    CHECK_OK(raw_open(&r, "gh100"));
    const struct sys *s = r.sys;
    uint32_t mem = 0;
    struct emu_nv_memory_alloc mp = {.owner = r.client, .size = 0x4000, .alignment = 4096};
    CHECK(raw_alloc(&r, r.device, &mem, NV1_MEMORY_USER, &mp, sizeof mp) == NV_OK);
    int mfd = s->open(s->ctx, "/dev/nvidia0", O_RDWR | O_CLOEXEC);
    CHECK(mfd >= 0);
    /* mmap needs a mapping context from NV_ESC_RM_MAP_MEMORY */
    CHECK(s->mmap(s->ctx, NULL, 0x4000, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0) == MAP_FAILED &&
          errno == EINVAL);
    struct emu_nvos33_fd mm = {
        .hClient = r.client, .hDevice = r.device, .hMemory = mem, .length = 0x4000, .fd = mfd};
    CHECK(raw_ioctl(&r, r.ctl, NV_ESC_RM_MAP_MEMORY, &mm, sizeof mm) == 0 &&
          mm.status == NV_ERR_INVALID_ARGUMENT);
    int ctl = r.ctl;
    CHECK(s->ioctl(s->ctx, mfd, esc(NV_ESC_REGISTER_FD, 4), &ctl) == 0);
    CHECK(raw_ioctl(&r, r.ctl, NV_ESC_RM_MAP_MEMORY, &mm, sizeof mm) == 0 && mm.status == NV_OK);
    CHECK(raw_ioctl(&r, r.ctl, NV_ESC_RM_MAP_MEMORY, &mm, sizeof mm) == 0 &&
          mm.status == NV_ERR_INVALID_STATE);
    /* two CPU mappings of the same memory alias the same pages */
    uint32_t *a = s->mmap(s->ctx, NULL, 0x4000, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
    uint32_t *b = s->mmap(s->ctx, NULL, 0x4000, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
    CHECK(a != MAP_FAILED && b != MAP_FAILED && a != b);
    uint32_t v = (uint32_t)th_rand();
    a[0x3FFC / 4] = v;
    CHECK(b[0x3FFC / 4] == v);
    CHECK(s->mmap(s->ctx, NULL, 0x8000, PROT_READ, MAP_SHARED, mfd, 0) == MAP_FAILED);
    CHECK(s->munmap(s->ctx, a, 0x4000) == 0 && s->munmap(s->ctx, b, 0x4000) == 0);
    CHECK(s->close(s->ctx, mfd) == 0);
    CHECK(s->close(s->ctx, mfd) == -1 && errno == EBADF);
done:
    raw_close(&r);
}

/* Map `mem` for the CPU through a fresh registered nvidia0 fd (rm.md §3.4). */
static void *
raw_cpu_map(struct raw *r, uint32_t mem, uint64_t len)
{
    const struct sys *s = r->sys;
    int fd = s->open(s->ctx, "/dev/nvidia0", O_RDWR | O_CLOEXEC);
    int ctl = r->ctl;
    if (fd < 0 || s->ioctl(s->ctx, fd, esc(NV_ESC_REGISTER_FD, 4), &ctl) != 0)
        return MAP_FAILED;
    struct emu_nvos33_fd mm = {
        .hClient = r->client, .hDevice = r->device, .hMemory = mem, .length = len, .fd = fd};
    void *p = MAP_FAILED;
    if (raw_ioctl(r, r->ctl, NV_ESC_RM_MAP_MEMORY, &mm, sizeof mm) == 0 && mm.status == NV_OK)
        p = s->mmap(s->ctx, NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    s->close(s->ctx, fd); /* the mapping keeps what it needs */
    return p;
}

static bool
raw_wait64(const volatile uint64_t *p, uint64_t want, uint64_t timeout_ms)
{
    for (uint64_t i = 0; i < timeout_ms * 10; i++) {
        if (__atomic_load_n(p, __ATOMIC_ACQUIRE) == want)
            return true;
        usleep(100);
    }
    return false;
}

/* rm.md §2 steps 14-21 by hand: a channel runs only once its TSG is scheduled AND (on the
 * UVM-owned VA space) UVM_REGISTER_CHANNEL was done; its ring and pushbuffer must be mapped
 * through UVM (a RM_MAP_MEMORY_DMA mapping alone is the device's default VAS). */
TEST(channel_runs_after_schedule_and_uvm_registration)
{
    struct emu_stats base;
    emu_stats_get(&base);
    struct raw r;
    const struct sys *s = NULL;
    uint8_t *area = MAP_FAILED, *um = MAP_FAILED;
    struct emu_uvm_map_external *mx = calloc(1, sizeof *mx);
    CHECK(mx);
    CHECK_OK(raw_open(&r, "gh100"));
    s = r.sys;
    const uint64_t va = 0x1000000000ull, len = 0x10000;
    struct emu_uvm_initialize in = {0};
    CHECK(s->ioctl(s->ctx, r.uvm, UVM_INITIALIZE, &in) == 0 && in.rmStatus == NV_OK);
    struct emu_nv2080_gid_info gid = {.flags = 2, .length = 16};
    CHECK(raw_control(&r, r.subdevice, NV2080_CTRL_CMD_GPU_GET_GID_INFO, &gid, sizeof gid) == NV_OK);
    struct emu_uvm_register_gpu rg = {.rmCtrlFd = -1};
    memcpy(rg.uuid, gid.data, 16);
    CHECK(s->ioctl(s->ctx, r.uvm, UVM_REGISTER_GPU, &rg) == 0 && rg.rmStatus == NV_OK);
    uint32_t vas = 0, mem = 0, umode = 0, tsg = 0, ctx = 0, ch = 0, obj = 0;
    struct emu_nv_vaspace_alloc vp = {.flags = 0x48, .vaSize = 0x1FFFFFB000000ull, .vaBase = 0x1000};
    CHECK(raw_alloc(&r, r.device, &vas, FERMI_VASPACE_A, &vp, sizeof vp) == NV_OK);
    struct emu_uvm_register_gpu_vaspace rv = {.rmCtrlFd = r.ctl, .hClient = r.client, .hVaSpace = vas};
    memcpy(rv.uuid, gid.data, 16);
    CHECK(s->ioctl(s->ctx, r.uvm, UVM_REGISTER_GPU_VASPACE, &rv) == 0 && rv.rmStatus == NV_OK);
    /* one vidmem area: ring @0, USERD @0x1000, pushbuffer @0x2000, semaphore @0x3000 */
    struct emu_nv_memory_alloc mp = {.owner = r.client, .size = len, .alignment = 4096};
    CHECK(raw_alloc(&r, r.device, &mem, NV1_MEMORY_USER, &mp, sizeof mp) == NV_OK);
    struct emu_uvm_range rgn = {.base = va, .length = len};
    CHECK(s->ioctl(s->ctx, r.uvm, UVM_CREATE_EXTERNAL_RANGE, &rgn) == 0 && rgn.rmStatus == NV_OK);
    *mx = (struct emu_uvm_map_external){.base = va,
                                        .length = len,
                                        .gpuAttributesCount = 1,
                                        .rmCtrlFd = r.ctl,
                                        .hClient = r.client,
                                        .hMemory = mem};
    memcpy(mx->perGpuAttributes[0].uuid, gid.data, 16);
    CHECK(s->ioctl(s->ctx, r.uvm, UVM_MAP_EXTERNAL_ALLOCATION, mx) == 0 && mx->rmStatus == NV_OK);
    area = raw_cpu_map(&r, mem, len);
    CHECK(area != MAP_FAILED);
    CHECK(raw_alloc(&r, r.subdevice, &umode, HOPPER_USERMODE_A, NULL, 0) == NV_OK);
    um = raw_cpu_map(&r, umode, 0x10000);
    CHECK(um != MAP_FAILED);
    struct emu_nv_channel_group_alloc gp = {.engineType = NV2080_ENGINE_TYPE_GRAPHICS};
    CHECK(raw_alloc(&r, r.device, &tsg, KEPLER_CHANNEL_GROUP_A, &gp, sizeof gp) == NV_OK);
    struct emu_nv_ctxshare_alloc cp = {.hVASpace = vas, .flags = 1};
    CHECK(raw_alloc(&r, tsg, &ctx, FERMI_CONTEXT_SHARE_A, &cp, sizeof cp) == NV_OK);
    struct emu_nv_channel_alloc chp = {.hObjectBuffer = mem,
                                       .gpFifoOffset = va,
                                       .gpFifoEntries = 64,
                                       .hContextShare = ctx,
                                       .hUserdMemory = {mem},
                                       .userdOffset = {0x1000}};
    CHECK(raw_alloc(&r, tsg, &ch, HOPPER_CHANNEL_GPFIFO_A, &chp, sizeof chp) == NV_OK);
    CHECK(raw_alloc(&r, ch, &obj, HOPPER_COMPUTE_A, NULL, 0) == NV_OK);
    struct emu_nvc36f_token tok = {0xFFFFFFFFu};
    CHECK(raw_control(&r, ch, NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN, &tok, sizeof tok) == NV_OK);
    /* pushbuffer: 64-bit host semaphore release (rm.md §5.2), then submit (§4.4) */
    uint64_t v = 0x100000000ull | (uint32_t)th_rand();
    uint32_t pb[] = {0x20050017u, (uint32_t)(va + 0x3000), (uint32_t)((va + 0x3000) >> 32),
                     (uint32_t)v, (uint32_t)(v >> 32),     0x01100001u};
    memcpy(area + 0x2000, pb, sizeof pb);
    uint64_t entry = ((va + 0x2000) & ~3ull) | (1ull << 41) | ((uint64_t)(sizeof pb / 4) << 42);
    memcpy(area, &entry, 8);
    volatile uint64_t *sem = (volatile uint64_t *)(area + 0x3000);
    __atomic_store_n((uint32_t *)(area + 0x1000 + 0x8C), 1u, __ATOMIC_RELEASE);
    __atomic_store_n((uint32_t *)(um + 0x90), tok.workSubmitToken, __ATOMIC_RELEASE);
    CHECK(!raw_wait64(sem, v, 100)); /* the TSG is not scheduled */
    struct emu_nva06c_schedule sch = {1, 0, 0};
    CHECK(raw_control(&r, tsg, NVA06C_CTRL_CMD_GPFIFO_SCHEDULE, &sch, sizeof sch) == NV_OK);
    __atomic_store_n((uint32_t *)(um + 0x90), tok.workSubmitToken, __ATOMIC_RELEASE);
    CHECK(!raw_wait64(sem, v, 100)); /* scheduled, but not registered with UVM */
    struct emu_uvm_register_channel rc = {
        .rmCtrlFd = r.ctl, .hClient = r.client, .hChannel = ch, .base = 0x2000000000ull, .length = 0x4000000};
    memcpy(rc.uuid, gid.data, 16);
    CHECK(s->ioctl(s->ctx, r.uvm, UVM_REGISTER_CHANNEL, &rc) == 0 && rc.rmStatus == NV_OK);
    __atomic_store_n((uint32_t *)(um + 0x90), tok.workSubmitToken, __ATOMIC_RELEASE);
    CHECK(raw_wait64(sem, v, 2000));
    /* GPGet moves once the entry is done, a moment after the release it contains */
    uint32_t gpget = 0;
    for (int i = 0;
         i < 20000 && (gpget = __atomic_load_n((uint32_t *)(area + 0x1000 + 0x88), __ATOMIC_ACQUIRE)) != 1;
         i++)
        usleep(100);
    CHECK(gpget == 1);
done:
    free(mx);
    if (area != MAP_FAILED)
        s->munmap(s->ctx, area, len);
    if (um != MAP_FAILED)
        s->munmap(s->ctx, um, 0x10000);
    raw_close(&r);
    struct emu_stats now;
    emu_stats_get(&now);
    if (!stats_equal(&base, &now)) {
        stats_print("before", &base);
        stats_print("after", &now);
        th_fail(t, __FILE__, __LINE__, "emulator resources leaked");
    }
}

int
main(int argc, char **argv)
{
    static const struct th_case cases[] = {
        TH_CASE(opts_parse),
        TH_CASE(rm_escape_rules),
        TH_CASE(rm_channel_order_rules),
        TH_CASE(uvm_rules),
        TH_CASE(cpu_mapping_rules),
        TH_CASE(channel_runs_after_schedule_and_uvm_registration),
    };
    return th_run("emu_rm", NULL, cases, TH_COUNT(cases), argc - 1, argv + 1);
}
