/* SPDX-License-Identifier: MIT */
/*
 * rm_kmd.c - the RM kernel-driver level (struct kmd_ops) for desktop and datacenter
 * GPUs: opening the device nodes, the object tree and init sequence of docs/hw/rm.md §2
 * in its order, device information, teardown, and the ioctl helpers the other rm_*.c
 * files use. Layer: kmd. Every syscall goes through the struct sys it was given,
 * so the emulator (emu) can stand in for the kernel.
 */
#include "rm_priv.h"
#include "rm_status.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

const struct kmd_ops rm_kmd_ops;

/* ==== ioctl helpers ==== */

int
rm_ioctl_raw(struct rm_kmd *k, int fd, unsigned long req, void *arg, const char *what, const uint32_t *status)
{
    int rc;
    /* HCQ_DEBUG=ioctl logs each call with its duration: where a slow allocation or open spends
     * its time (which RM or UVM call) */
    const bool dbg = hcq_debug_flags() & HCQ_DEBUG_IOCTL;
    const uint64_t t0 = dbg ? hcq_time_ns() : 0;
    do {
        rc = k->sys->ioctl(k->sys->ctx, fd, req, arg);
    } while (rc < 0 && (errno == EINTR || errno == EAGAIN));
    if (dbg) {
        const int saved = errno;
        HCQ_LOG_DEBUG("rm: ioctl fd %d req 0x%lx (%s) -> %d%s%s in %.1f us", fd, req, what, rc,
                      status ? ", " : "", status ? rm_status_name(*status) : "",
                      (double)(hcq_time_ns() - t0) / 1e3);
        errno = saved;
    }
    return rc;
}

enum hcq_status
rm_ioctl(struct rm_kmd *k, int fd, unsigned long req, void *arg, const char *what)
{
    if (rm_ioctl_raw(k, fd, req, arg, what, NULL) < 0)
        return hcq_err(HCQ_ERR_DRIVER, "%s: ioctl 0x%lx on fd %d failed: %s", what, req, fd, strerror(errno));
    return HCQ_OK;
}

enum hcq_status
rm_alloc(struct rm_kmd *k, uint32_t parent, uint32_t cls, void *params, uint32_t params_B, uint32_t *h_inout)
{
    /* paramsSize 0 is what rm.md §1.3 verified on 580 (RM uses the class's own size); we
     * pass the real size, which the escape accepts for every class we allocate. */
    NVOS21_PARAMETERS p = {
        .hRoot = k->hclient ? k->hclient : 0,
        .hObjectParent = parent,
        .hObjectNew = *h_inout,
        .hClass = cls,
        .pAllocParms = rm_p64(params),
        .paramsSize = params ? params_B : 0,
    };
    enum hcq_status st =
        rm_ioctl(k, k->fd_ctl, NV_ESC_IOWR(NV_ESC_RM_ALLOC, sizeof p), &p, "NV_ESC_RM_ALLOC");
    if (st != HCQ_OK)
        return st;
    if (p.status != 0)
        /* out of memory stays HCQ_ERR_NOMEM, so the buffer pool can trim and retry */
        return hcq_err(p.status == RM_NV_ERR_NO_MEMORY || p.status == RM_NV_ERR_INSUFFICIENT_RESOURCES
                           ? HCQ_ERR_NOMEM
                           : HCQ_ERR_DRIVER,
                       "NV_ESC_RM_ALLOC class %s (0x%04x) under 0x%x: %s (0x%x)", rm_class_name(cls), cls,
                       parent, rm_status_name(p.status), p.status);
    *h_inout = p.hObjectNew;
    atomic_fetch_add(&k->objects, 1);
    return HCQ_OK;
}

enum hcq_status
rm_control(struct rm_kmd *k, uint32_t obj, uint32_t cmd, void *params, uint32_t params_B, const char *name,
           bool quiet)
{
    NVOS54_PARAMETERS p = {
        .hClient = k->hclient,
        .hObject = obj,
        .cmd = cmd,
        .params = rm_p64(params),
        .paramsSize = params_B,
    };
    const int rc = rm_ioctl_raw(k, k->fd_ctl, NV_ESC_IOWR(NV_ESC_RM_CONTROL, sizeof p), &p, name, &p.status);
    if (rc < 0 || p.status != 0) {
        if (quiet)
            return HCQ_ERR_DRIVER;
        if (rc < 0)
            return hcq_err(HCQ_ERR_DRIVER, "NV_ESC_RM_CONTROL %s (0x%x) on 0x%x: ioctl failed: %s", name, cmd,
                           obj, strerror(errno));
        return hcq_err(HCQ_ERR_DRIVER, "NV_ESC_RM_CONTROL %s (0x%x) on 0x%x: %s (0x%x)", name, cmd, obj,
                       rm_status_name(p.status), p.status);
    }
    return HCQ_OK;
}

void
rm_free(struct rm_kmd *k, uint32_t parent, uint32_t h)
{
    NVOS00_PARAMETERS p = {.hRoot = k->hclient, .hObjectParent = parent, .hObjectOld = h};
    if (!h || k->fd_ctl < 0)
        return;
    const int rc =
        rm_ioctl_raw(k, k->fd_ctl, NV_ESC_IOWR(NV_ESC_RM_FREE, sizeof p), &p, "NV_ESC_RM_FREE", &p.status);
    if (rc < 0 || p.status != 0)
        HCQ_LOG_WARN("rm: NV_ESC_RM_FREE 0x%x under 0x%x: %s (0x%x)", h, parent,
                     rc < 0 ? strerror(errno) : rm_status_name(p.status), p.status);
    else
        atomic_fetch_sub(&k->objects, 1);
}

enum hcq_status
rm_uvm(struct rm_kmd *k, int fd, unsigned long req, void *params, const uint32_t *status, const char *name)
{
    enum hcq_status st = rm_ioctl(k, fd, req, params, name);
    if (st != HCQ_OK)
        return st;
    if (*status != 0)
        return hcq_err(HCQ_ERR_DRIVER, "%s: %s (0x%x)", name, rm_status_name(*status), *status);
    return HCQ_OK;
}

static int
rm_open_node(struct rm_kmd *k, const char *path)
{
    return k->sys->open(k->sys->ctx, path, O_RDWR | O_CLOEXEC);
}

static void
rm_close_fd(struct rm_kmd *k, int *fd)
{
    if (*fd >= 0)
        k->sys->close(k->sys->ctx, *fd);
    *fd = -1;
}

/* ==== Init sequence (rm.md §2, steps in order) ==== */

/* Steps 1 and 4's nodes: /dev/nvidiactl and /dev/nvidia-uvm twice. */
static enum hcq_status
rm_nodes_open(struct rm_kmd *k)
{
    k->fd_ctl = rm_open_node(k, "/dev/nvidiactl");
    if (k->fd_ctl < 0) {
        if (errno == ENOENT || errno == ENXIO || errno == ENODEV)
            return hcq_err_quiet(HCQ_ERR_NOT_FOUND, "rm: /dev/nvidiactl: %s (no NVIDIA driver here)",
                                 strerror(errno));
        return hcq_err(HCQ_ERR_IO, "rm: open /dev/nvidiactl: %s", strerror(errno));
    }
    k->fd_uvm = rm_open_node(k, "/dev/nvidia-uvm");
    if (k->fd_uvm < 0)
        return hcq_err(HCQ_ERR_NOT_FOUND, "rm: open /dev/nvidia-uvm: %s (is nvidia-uvm loaded?)",
                       strerror(errno));
    k->fd_uvm2 = rm_open_node(k, "/dev/nvidia-uvm");
    if (k->fd_uvm2 < 0)
        return hcq_err(HCQ_ERR_IO, "rm: open /dev/nvidia-uvm (second fd): %s", strerror(errno));
    return HCQ_OK;
}

/* Major version of a "580.159.04" string, 0 if it does not start with digits. */
static unsigned
rm_version_major(const char *v)
{
    unsigned major = 0;
    for (; *v >= '0' && *v <= '9'; v++)
        major = major * 10 + (unsigned)(*v - '0');
    return major;
}

/* Step 3: struct layouts of rm_abi.h are those of branch 580 (rm.md §9.6). */
static enum hcq_status
rm_version_check(struct rm_kmd *k)
{
    NV0000_CTRL_SYSTEM_GET_BUILD_VERSION_V2_PARAMS *v = calloc(1, sizeof *v);
    if (!v)
        return hcq_err(HCQ_ERR_NOMEM, "rm: build version buffer");
    enum hcq_status st = rm_control(k, k->hclient, NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2, v, sizeof *v,
                                    "NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2", false);
    if (st == HCQ_OK) {
        v->driverVersionBuffer[sizeof v->driverVersionBuffer - 1] = '\0';
        snprintf(k->base.info.driver, sizeof k->base.info.driver, "%.63s", v->driverVersionBuffer);
        unsigned major = rm_version_major(v->driverVersionBuffer);
        const char *allow = getenv("HCQ_RM_ALLOW_UNKNOWN");
        if (major != 580) {
            if (allow && strcmp(allow, "1") == 0)
                HCQ_LOG_WARN("rm: driver %s: struct layouts verified for 580.x only; going on "
                             "(HCQ_RM_ALLOW_UNKNOWN=1)",
                             v->driverVersionBuffer);
            else
                st = hcq_err(HCQ_ERR_UNSUPPORTED,
                             "rm: driver version %s: struct layouts verified for 580.x "
                             "only (set HCQ_RM_ALLOW_UNKNOWN=1 to try anyway)",
                             v->driverVersionBuffer);
        }
    }
    free(v);
    return st;
}

/* Step 4: UVM_INITIALIZE, then UVM_MM_INITIALIZE on the second fd (failure ignored, as
 * tinygrad and CUDA do: rm.md §1.4). */
static enum hcq_status
rm_uvm_init(struct rm_kmd *k)
{
    UVM_INITIALIZE_PARAMS ini = {.flags = 0};
    enum hcq_status st = rm_uvm(k, k->fd_uvm, UVM_INITIALIZE, &ini, &ini.rmStatus, "UVM_INITIALIZE");
    if (st != HCQ_OK)
        return st;
    k->uvm_initialized = true;
    UVM_MM_INITIALIZE_PARAMS mm = {.uvmFd = k->fd_uvm};
    if (k->sys->ioctl(k->sys->ctx, k->fd_uvm2, UVM_MM_INITIALIZE, &mm) < 0 || mm.rmStatus != 0)
        HCQ_LOG_DEBUG("rm: UVM_MM_INITIALIZE: %s (ignored)", rm_status_name(mm.rmStatus));
    return HCQ_OK;
}

/* Steps 5-6: the index-th valid CARD_INFO entry, its /dev/nvidiaN, REGISTER_FD. */
static enum hcq_status
rm_card_open(struct rm_kmd *k)
{
    nv_ioctl_card_info_t *cards = calloc(RM_CARD_INFO_MAX, sizeof *cards);
    if (!cards)
        return hcq_err(HCQ_ERR_NOMEM, "rm: card info buffer");
    enum hcq_status st =
        rm_ioctl(k, k->fd_ctl, NV_ESC_IOWR(NV_ESC_CARD_INFO, RM_CARD_INFO_MAX * sizeof *cards), cards,
                 "NV_ESC_CARD_INFO");
    int seen = 0;
    bool found = false;
    for (uint32_t i = 0; st == HCQ_OK && i < RM_CARD_INFO_MAX; i++) {
        if (!cards[i].valid)
            continue;
        if (seen++ == k->index) {
            k->gpu_id = cards[i].gpu_id;
            k->minor = cards[i].minor_number;
            k->pci_device_id = cards[i].pci_info.device_id;
            found = true;
            break;
        }
    }
    free(cards);
    if (st != HCQ_OK)
        return st;
    if (!found)
        return hcq_err_quiet(HCQ_ERR_NOT_FOUND, "rm: GPU index %d: only %d GPU(s) in NV_ESC_CARD_INFO",
                             k->index, seen);

    snprintf(k->dev_path, sizeof k->dev_path, "/dev/nvidia%u", k->minor);
    k->fd_dev = rm_open_node(k, k->dev_path);
    if (k->fd_dev < 0)
        return hcq_err(HCQ_ERR_IO, "rm: open %s: %s", k->dev_path, strerror(errno));
    nv_ioctl_register_fd_t reg = {.ctl_fd = k->fd_ctl};
    return rm_ioctl(k, k->fd_dev, NV_ESC_IOWR(NV_ESC_REGISTER_FD, sizeof reg), &reg, "NV_ESC_REGISTER_FD");
}

/* Steps 7-10: device instance, device, subdevice, virtmem. */
static enum hcq_status
rm_device_alloc(struct rm_kmd *k)
{
    NV0000_CTRL_GPU_GET_ID_INFO_V2_PARAMS id = {.gpuId = k->gpu_id};
    enum hcq_status st = rm_control(k, k->hclient, NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2, &id, sizeof id,
                                    "NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2", false);
    if (st != HCQ_OK)
        return st;
    NV0080_ALLOC_PARAMETERS dev = {.deviceId = id.deviceInstance, .hClientShare = k->hclient, .vaMode = 0};
    if ((st = rm_alloc(k, k->hclient, NV01_DEVICE_0, &dev, sizeof dev, &k->hdevice)) != HCQ_OK)
        return st;
    NV2080_ALLOC_PARAMETERS sub = {.subDeviceId = 0};
    if ((st = rm_alloc(k, k->hdevice, NV20_SUBDEVICE_0, &sub, sizeof sub, &k->hsubdevice)) != HCQ_OK)
        return st;
    NV_MEMORY_VIRTUAL_ALLOCATION_PARAMS vm = {.offset = 0, .limit = RM_VIRTMEM_LIMIT, .hVASpace = 0};
    return rm_alloc(k, k->hdevice, NV01_MEMORY_VIRTUAL, &vm, sizeof vm, &k->hvirtmem);
}

static bool
rm_class_has(const uint32_t *list, uint32_t n, uint32_t cls)
{
    for (uint32_t i = 0; i < n; i++)
        if (list[i] == cls)
            return true;
    return false;
}

/* Newest (first) of `cands` present in the list, 0 if none. */
static uint32_t
rm_class_pick(const uint32_t *list, uint32_t n, const uint32_t *cands, size_t ncands)
{
    for (size_t i = 0; i < ncands; i++)
        if (rm_class_has(list, n, cands[i]))
            return cands[i];
    return 0;
}

/* Step 11: class list, newest classes first (rm.md §8.1), arch row from the compute class. */
static enum hcq_status
rm_classes_pick(struct rm_kmd *k)
{
    static const uint32_t compute[] = {BLACKWELL_COMPUTE_B, BLACKWELL_COMPUTE_A, HOPPER_COMPUTE_A,
                                       ADA_COMPUTE_A,       AMPERE_COMPUTE_B,    AMPERE_COMPUTE_A};
    static const uint32_t gpfifo[] = {BLACKWELL_CHANNEL_GPFIFO_B, BLACKWELL_CHANNEL_GPFIFO_A,
                                      HOPPER_CHANNEL_GPFIFO_A, AMPERE_CHANNEL_GPFIFO_A};
    static const uint32_t copy[] = {BLACKWELL_DMA_COPY_B, BLACKWELL_DMA_COPY_A, HOPPER_DMA_COPY_A,
                                    AMPERE_DMA_COPY_B, AMPERE_DMA_COPY_A};
    static const uint32_t usermode[] = {HOPPER_USERMODE_A, AMPERE_USERMODE_A, TURING_USERMODE_A};
    NV0080_CTRL_GPU_GET_CLASSLIST_PARAMS cl = {0};
    enum hcq_status st = rm_control(k, k->hdevice, NV0080_CTRL_CMD_GPU_GET_CLASSLIST, &cl, sizeof cl,
                                    "NV0080_CTRL_CMD_GPU_GET_CLASSLIST", false);
    if (st != HCQ_OK)
        return st;
    if (cl.numClasses == 0 || cl.numClasses > 4096)
        return hcq_err(HCQ_ERR_DRIVER, "rm: NV0080_CTRL_CMD_GPU_GET_CLASSLIST: %u classes (expected 1..4096)",
                       cl.numClasses);
    uint32_t n = cl.numClasses;
    uint32_t *list = calloc(n, sizeof *list);
    if (!list)
        return hcq_err(HCQ_ERR_NOMEM, "rm: class list of %u", n);
    cl.classList = rm_p64(list);
    st = rm_control(k, k->hdevice, NV0080_CTRL_CMD_GPU_GET_CLASSLIST, &cl, sizeof cl,
                    "NV0080_CTRL_CMD_GPU_GET_CLASSLIST", false);
    if (st == HCQ_OK) {
        n = cl.numClasses < n ? cl.numClasses : n;
        k->compute_cls = rm_class_pick(list, n, compute, sizeof compute / sizeof compute[0]);
        k->gpfifo_cls = rm_class_pick(list, n, gpfifo, sizeof gpfifo / sizeof gpfifo[0]);
        k->copy_cls = rm_class_pick(list, n, copy, sizeof copy / sizeof copy[0]);
        k->usermode_cls = rm_class_pick(list, n, usermode, sizeof usermode / sizeof usermode[0]);
    }
    free(list);
    if (st != HCQ_OK)
        return st;
    if (!k->compute_cls || !k->gpfifo_cls || !k->copy_cls || !k->usermode_cls)
        return hcq_err(HCQ_ERR_UNSUPPORTED,
                       "rm: GPU %04x: no known class in the class list for %s%s%s%s "
                       "(supported: Ampere, Ada, Hopper, Blackwell)",
                       k->pci_device_id, k->compute_cls ? "" : "compute ", k->gpfifo_cls ? "" : "gpfifo ",
                       k->copy_cls ? "" : "copy ", k->usermode_cls ? "" : "usermode");
    k->base.arch = hcq_arch_by_compute_class(k->compute_cls);
    if (!k->base.arch)
        return hcq_err(HCQ_ERR_UNSUPPORTED, "rm: compute class %s (0x%04x) has no row in hcq_archs[]",
                       rm_class_name(k->compute_cls), k->compute_cls);
    if (k->base.arch->gpfifo_cls != k->gpfifo_cls || k->base.arch->copy_cls != k->copy_cls)
        HCQ_LOG_INFO("rm: arch %s lists gpfifo 0x%04x copy 0x%04x; using the GPU's newest 0x%04x / 0x%04x",
                     k->base.arch->name, k->base.arch->gpfifo_cls, k->base.arch->copy_cls, k->gpfifo_cls,
                     k->copy_cls);
    return HCQ_OK;
}

/* Step 12: the usermode object and its doorbell page. tinygrad maps it with NVOS33 flags 2
 * (ACCESS write-only; tinygrad ops_nv.py `_gpu_map_to_cpu(self.usermode, 0x10000, flags=2)`). */
static enum hcq_status
rm_usermode_map(struct rm_kmd *k)
{
    enum hcq_status st = rm_alloc(k, k->hsubdevice, k->usermode_cls, NULL, 0, &k->husermode);
    if (st != HCQ_OK)
        return st;
    int fd = rm_open_node(k, k->dev_path);
    if (fd < 0)
        return hcq_err(HCQ_ERR_IO, "rm: open %s for the doorbell: %s", k->dev_path, strerror(errno));
    nv_ioctl_register_fd_t reg = {.ctl_fd = k->fd_ctl};
    nv_ioctl_nvos33_parameters_with_fd m = {
        .params = {.hClient = k->hclient,
                   .hDevice = k->hdevice,
                   .hMemory = k->husermode,
                   .length = RM_USERMODE_MAP_B,
                   .flags = 2},
        .fd = fd,
    };
    st = rm_ioctl(k, fd, NV_ESC_IOWR(NV_ESC_REGISTER_FD, sizeof reg), &reg, "NV_ESC_REGISTER_FD");
    if (st == HCQ_OK)
        st = rm_ioctl(k, k->fd_ctl, NV_ESC_IOWR(NV_ESC_RM_MAP_MEMORY, sizeof m), &m, "NV_ESC_RM_MAP_MEMORY");
    if (st == HCQ_OK && m.params.status != 0)
        st = hcq_err(HCQ_ERR_DRIVER, "NV_ESC_RM_MAP_MEMORY %s: %s (0x%x)", rm_class_name(k->usermode_cls),
                     rm_status_name(m.params.status), m.params.status);
    if (st == HCQ_OK) {
        void *p =
            k->sys->mmap(k->sys->ctx, NULL, RM_USERMODE_MAP_B, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED)
            st = hcq_err(HCQ_ERR_DRIVER, "rm: mmap of the usermode (doorbell) page: %s", strerror(errno));
        else
            k->usermode = p;
        k->usermode_cookie = m.params.pLinearAddress;
    }
    k->sys->close(k->sys->ctx, fd); /* the mapping keeps the file alive */
    return st;
}

/* Steps 14-16: GPU VA space, GPU UUID, UVM registration of GPU and VA space. */
static enum hcq_status
rm_vaspace_alloc(struct rm_kmd *k)
{
    NV_VASPACE_ALLOCATION_PARAMETERS vas = {
        .flags = NV_VASPACE_ALLOCATION_FLAGS_ENABLE_PAGE_FAULTING |
                 NV_VASPACE_ALLOCATION_FLAGS_IS_EXTERNALLY_OWNED,
        .vaSize = RM_VASPACE_SIZE,
        .vaBase = RM_VASPACE_BASE,
    };
    enum hcq_status st = rm_alloc(k, k->hdevice, FERMI_VASPACE_A, &vas, sizeof vas, &k->hvaspace);
    if (st != HCQ_OK)
        return st;
    NV2080_CTRL_GPU_GET_GID_INFO_PARAMS gid = {.flags = NV2080_GPU_CMD_GPU_GET_GID_FLAGS_FORMAT_BINARY,
                                               .length = 16};
    st = rm_control(k, k->hsubdevice, NV2080_CTRL_CMD_GPU_GET_GID_INFO, &gid, sizeof gid,
                    "NV2080_CTRL_CMD_GPU_GET_GID_INFO", false);
    if (st != HCQ_OK)
        return st;
    memcpy(k->uuid, gid.data, sizeof k->uuid);

    UVM_REGISTER_GPU_PARAMS rg = {.rmCtrlFd = -1};
    memcpy(rg.gpu_uuid, k->uuid, sizeof k->uuid);
    if ((st = rm_uvm(k, k->fd_uvm, UVM_REGISTER_GPU, &rg, &rg.rmStatus, "UVM_REGISTER_GPU")) != HCQ_OK)
        return st;
    k->uvm_gpu = true;
    UVM_REGISTER_GPU_VASPACE_PARAMS rv = {
        .rmCtrlFd = k->fd_ctl, .hClient = k->hclient, .hVaSpace = k->hvaspace};
    memcpy(rv.gpuUuid, k->uuid, sizeof k->uuid);
    if ((st = rm_uvm(k, k->fd_uvm, UVM_REGISTER_GPU_VASPACE, &rv, &rv.rmStatus,
                     "UVM_REGISTER_GPU_VASPACE")) != HCQ_OK)
        return st;
    k->uvm_vaspace = true;
    return HCQ_OK;
}

/* Step 23 (done at open, before any channel): GR info and the exact SM count from the
 * GPC/TPC masks (rm.md §8.4). */
static enum hcq_status
rm_gr_info(struct rm_kmd *k)
{
    NV2080_CTRL_GR_INFO gi[] = {
        {NV2080_CTRL_GR_INFO_INDEX_SHADER_PIPE_COUNT, 0},
        {NV2080_CTRL_GR_INFO_INDEX_SHADER_PIPE_SUB_COUNT, 0},
        {NV2080_CTRL_GR_INFO_INDEX_SM_VERSION, 0},
        {NV2080_CTRL_GR_INFO_INDEX_MAX_WARPS_PER_SM, 0},
        {NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_GPCS, 0},
        {NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_TPC_PER_GPC, 0},
        {NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_SM_PER_TPC, 0},
    };
    NV2080_CTRL_GR_GET_INFO_PARAMS p = {.grInfoListSize = sizeof gi / sizeof gi[0], .grInfoList = rm_p64(gi)};
    enum hcq_status st = rm_control(k, k->hsubdevice, NV2080_CTRL_CMD_GR_GET_INFO, &p, sizeof p,
                                    "NV2080_CTRL_CMD_GR_GET_INFO", false);
    if (st != HCQ_OK)
        return st;
    struct kmd_info *in = &k->base.info;
    uint32_t sm_version = gi[2].data;
    in->max_warps_per_sm = gi[3].data;
    in->litter_gpcs = gi[4].data;
    in->litter_tpc_per_gpc = gi[5].data;
    in->litter_sm_per_tpc = gi[6].data;
    if (in->litter_sm_per_tpc == 0 || in->litter_sm_per_tpc > 8)
        return hcq_err(HCQ_ERR_DRIVER, "rm: GR info LITTER_NUM_SM_PER_TPC = %u (expected 1..8)",
                       in->litter_sm_per_tpc);

    NV2080_CTRL_GR_GET_GPC_MASK_PARAMS gm = {0};
    if ((st = rm_control(k, k->hsubdevice, NV2080_CTRL_CMD_GR_GET_GPC_MASK, &gm, sizeof gm,
                         "NV2080_CTRL_CMD_GR_GET_GPC_MASK", false)) != HCQ_OK)
        return st;
    uint32_t gpcs = 0, tpcs = 0;
    for (uint32_t g = 0; g < 32; g++) {
        if (!(gm.gpcMask & (1u << g)))
            continue;
        NV2080_CTRL_GR_GET_TPC_MASK_PARAMS tm = {.gpcId = g};
        if ((st = rm_control(k, k->hsubdevice, NV2080_CTRL_CMD_GR_GET_TPC_MASK, &tm, sizeof tm,
                             "NV2080_CTRL_CMD_GR_GET_TPC_MASK", false)) != HCQ_OK)
            return st;
        gpcs++;
        tpcs += (uint32_t)__builtin_popcount(tm.tpcMask);
    }
    in->gpc_count = gpcs;
    in->tpc_count = tpcs;
    in->sm_count = tpcs * in->litter_sm_per_tpc;
    if (in->sm_count == 0)
        return hcq_err(HCQ_ERR_DRIVER, "rm: GPC mask 0x%x gave 0 TPCs (expected > 0)", gm.gpcMask);
    if (gi[0].data != gpcs || gi[1].data != tpcs)
        HCQ_LOG_DEBUG("rm: GR info says %u GPCs / %u TPCs, masks say %u / %u (masks win, rm.md §9.8)",
                      gi[0].data, gi[1].data, gpcs, tpcs);
    /* SM_VERSION 0xMmm (rm.md §6.6): cross-check against the arch row picked by class. */
    uint32_t sm = (sm_version >> 8) * 10 + (sm_version & 0xF);
    if (k->base.arch && sm != k->base.arch->sm_version)
        HCQ_LOG_INFO("rm: GR SM_VERSION 0x%x (sm_%u) differs from arch %s (sm_%u)", sm_version, sm,
                     k->base.arch->name, k->base.arch->sm_version);
    return HCQ_OK;
}

/* GPU name and VRAM size: informational controls outside rm.md (rm_abi.h cites them); a
 * driver (or emulator) that refuses them costs only the nicer text. */
static void
rm_name_vram(struct rm_kmd *k)
{
    struct kmd_info *in = &k->base.info;
    NV2080_CTRL_GPU_GET_NAME_STRING_PARAMS np = {.gpuNameStringFlags = 0};
    if (rm_control(k, k->hsubdevice, NV2080_CTRL_CMD_GPU_GET_NAME_STRING, &np, sizeof np,
                   "NV2080_CTRL_CMD_GPU_GET_NAME_STRING", true) == HCQ_OK &&
        np.ascii[0]) {
        np.ascii[sizeof np.ascii - 1] = '\0';
        snprintf(in->name, sizeof in->name, "%.95s", (const char *)np.ascii);
    } else {
        snprintf(in->name, sizeof in->name, "NVIDIA %s [10de:%04x]", k->base.arch->name, k->pci_device_id);
    }
    NV2080_CTRL_FB_INFO fi = {NV2080_CTRL_FB_INFO_INDEX_TOTAL_RAM_SIZE, 0};
    NV2080_CTRL_FB_GET_INFO_PARAMS fp = {.fbInfoListSize = 1, .fbInfoList = rm_p64(&fi)};
    if (rm_control(k, k->hsubdevice, NV2080_CTRL_CMD_FB_GET_INFO, &fp, sizeof fp,
                   "NV2080_CTRL_CMD_FB_GET_INFO", true) == HCQ_OK)
        in->vram_B = (uint64_t)fi.data << 10; /* KiB */
    else
        HCQ_LOG_DEBUG("rm: NV2080_CTRL_CMD_FB_GET_INFO refused; VRAM size unknown");
}

/* ==== kmd ops ==== */

/* Free video memory as RM counts it (FB_GET_INFO HEAP_FREE, KiB): what nvidia-smi reports,
 * every process's allocations included (hcq_mem_stats.driver_free_B). */
static enum hcq_status
rm_mem_free_query(struct kmd *kmd, uint64_t *free_B)
{
    struct rm_kmd *k = rm_kmd_from(kmd);
    NV2080_CTRL_FB_INFO fi = {NV2080_CTRL_FB_INFO_INDEX_HEAP_FREE, 0};
    NV2080_CTRL_FB_GET_INFO_PARAMS fp = {.fbInfoListSize = 1, .fbInfoList = rm_p64(&fi)};
    enum hcq_status st = rm_control(k, k->hsubdevice, NV2080_CTRL_CMD_FB_GET_INFO, &fp, sizeof fp,
                                    "NV2080_CTRL_CMD_FB_GET_INFO (HEAP_FREE)", true);
    if (st == HCQ_OK)
        *free_B = (uint64_t)fi.data << 10;
    return st;
}

/* RM objects this client holds (struct rm_kmd.objects; hcq_mem_stats.driver_objects). */
static enum hcq_status
rm_objects_query(struct kmd *kmd, uint64_t *objects)
{
    long long n = atomic_load(&rm_kmd_from(kmd)->objects);
    *objects = n > 0 ? (uint64_t)n : 0;
    return HCQ_OK;
}

static void
rm_kmd_destroy(struct kmd *kmd)
{
    struct rm_kmd *k = rm_kmd_from(kmd);
    while (k->chans)
        rm_chan_destroy(kmd, &k->chans->base);
    while (k->mems)
        rm_mem_free(kmd, &k->mems->base);
    if (k->usermode) {
        k->sys->munmap(k->sys->ctx, (void *)k->usermode, RM_USERMODE_MAP_B);
        NVOS34_PARAMETERS um = {.hClient = k->hclient,
                                .hDevice = k->hdevice,
                                .hMemory = k->husermode,
                                .pLinearAddress = k->usermode_cookie};
        if (k->sys->ioctl(k->sys->ctx, k->fd_ctl, NV_ESC_IOWR(NV_ESC_RM_UNMAP_MEMORY, sizeof um), &um) < 0 ||
            um.status != 0)
            HCQ_LOG_DEBUG("rm: NV_ESC_RM_UNMAP_MEMORY (doorbell): %s", rm_status_name(um.status));
    }
    /* Closing the UVM fds unregisters the GPU, its VA space and the channels (UVM tears its
     * va_space down on release); then freeing the client frees every RM object under it. */
    rm_close_fd(k, &k->fd_uvm2);
    rm_close_fd(k, &k->fd_uvm);
    if (k->hclient)
        rm_free(k, 0, k->hclient);
    rm_mem_fini(k);
    rm_close_fd(k, &k->fd_dev);
    rm_close_fd(k, &k->fd_ctl);
    if (k->lock_init)
        pthread_mutex_destroy(&k->lock);
    if (k->peer_lock_init)
        pthread_mutex_destroy(&k->peer_lock);
    if (k->chan_lock_init)
        pthread_mutex_destroy(&k->chan_lock);
    free(k);
}

const struct kmd_ops rm_kmd_ops = {
    .destroy = rm_kmd_destroy,
    .mem_alloc = rm_mem_alloc,
    .mem_free = rm_mem_free,
    .mem_import_host = rm_mem_import_host,
    .mem_peer_map = rm_peer_map,
    .channel_create = rm_chan_create,
    .channel_destroy = rm_chan_destroy,
    .channel_kick = rm_chan_kick,
    .check = rm_chan_check,
    .mem_free_query = rm_mem_free_query,
    .objects_query = rm_objects_query,
};

enum hcq_status
rm_kmd_create(const struct sys *sys, int index, struct kmd **kmd_out)
{
    *kmd_out = NULL;
    if (!sys || index < 0 || index >= (int)RM_CARD_INFO_MAX)
        return hcq_err(HCQ_ERR_INVALID, "rm_kmd_create: GPU index %d (expected 0..%u)", index,
                       RM_CARD_INFO_MAX - 1);
    struct rm_kmd *k = calloc(1, sizeof *k);
    if (!k)
        return hcq_err(HCQ_ERR_NOMEM, "rm_kmd_create: %zu bytes", sizeof *k);
    k->base.ops = &rm_kmd_ops;
    k->sys = sys;
    k->index = index;
    k->fd_ctl = k->fd_uvm = k->fd_uvm2 = k->fd_dev = -1;
    k->next_handle = RM_CLIENT_HANDLE_FIRST;
    if (pthread_mutex_init(&k->lock, NULL) != 0) {
        free(k);
        return hcq_err(HCQ_ERR_NOMEM, "rm_kmd_create: mutex");
    }
    k->lock_init = true;
    if (pthread_mutex_init(&k->chan_lock, NULL) != 0) {
        rm_kmd_destroy(&k->base);
        return hcq_err(HCQ_ERR_NOMEM, "rm_kmd_create: mutex");
    }
    k->chan_lock_init = true;
    if (pthread_mutex_init(&k->peer_lock, NULL) != 0) {
        rm_kmd_destroy(&k->base);
        return hcq_err(HCQ_ERR_NOMEM, "rm_kmd_create: mutex");
    }
    k->peer_lock_init = true;

    enum hcq_status st = rm_nodes_open(k);
    if (st == HCQ_OK) /* step 2: root client, hRoot = parent = 0 */
        st = rm_alloc(k, 0, NV01_ROOT_CLIENT, NULL, 0, &k->hclient);
    if (st == HCQ_OK)
        st = rm_version_check(k);
    if (st == HCQ_OK)
        st = rm_uvm_init(k);
    if (st == HCQ_OK)
        st = rm_card_open(k);
    if (st == HCQ_OK)
        st = rm_device_alloc(k);
    if (st == HCQ_OK)
        st = rm_classes_pick(k);
    if (st == HCQ_OK)
        st = rm_usermode_map(k);
    if (st == HCQ_OK)
        st = rm_vaspace_alloc(k);
    if (st == HCQ_OK)
        st = rm_mem_init(k);
    if (st == HCQ_OK)
        st = rm_gr_info(k);
    if (st != HCQ_OK) {
        rm_kmd_destroy(&k->base);
        return st;
    }
    rm_name_vram(k);
    rm_lce_probe(k);
    k->base.info.has_uvm = true;
    HCQ_LOG_INFO("rm: %s (%s, sm_%u, %u SMs, %llu MiB) driver %s, classes gpfifo 0x%04x compute 0x%04x copy "
                 "0x%04x usermode 0x%04x",
                 k->base.info.name, k->base.arch->name, k->base.arch->sm_version, k->base.info.sm_count,
                 (unsigned long long)(k->base.info.vram_B >> 20), k->base.info.driver, k->gpfifo_cls,
                 k->compute_cls, k->copy_cls, k->usermode_cls);
    *kmd_out = &k->base;
    return HCQ_OK;
}
