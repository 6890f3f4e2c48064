/* SPDX-License-Identifier: MIT */
/*
 * emu_rm.c - the emulated RM kernel driver (nvidia.ko, branch 580): device nodes, escape
 * ioctls, the object tree (client/device/subdevice/memory/VAS/TSG/ctxshare/channel) with
 * the checks the real driver makes (ioctl size, node, class, parent, parameter struct,
 * order) and the same NV_STATUS codes, CPU mappings (MAP_MEMORY + mmap). This file has the
 * chips, the object table, the files and the escape dispatch; the objects each escape creates
 * and maps are emu_rm_alloc.c, controls emu_rm_ctrl.c, UVM emu_uvm.c. Source of every
 * rule: docs/hw/rm.md (cited). Layer: emu.
 */
#include "emu_rm_priv.h"
#include "rm_status.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ==== Chips ==== */

/* Class list measured on H200 / 580.159.04 (rm.md §8.1). */
static const uint32_t emu_rm_gh100_classes[] = {
    0x0,    0x1,    0x2,    0x4,    0x5,    0xf,    0x20,   0x3e,   0x3f,   0x40,   0x41,   0x42,   0x50,
    0x60,   0x70,   0x71,   0x76,   0x78,   0x79,   0x7d,   0x7e,   0x80,   0x81,   0x82,   0x83,   0x90,
    0x92,   0xb1,   0xc2,   0xda,   0xdb,   0xde,   0xe0,   0xf1,   0xf3,   0xf8,   0xf9,   0xfb,   0xfd,
    0xfe,   0x100,  0x101,  0x2080, 0x2081, 0x2082, 0x208f, 0x30f1, 0x402c, 0x503b, 0x503c, 0x5080, 0x50a0,
    0x83de, 0x844c, 0x900e, 0x9010, 0x902d, 0x9067, 0x906f, 0x9074, 0x9096, 0x90cc, 0x90cd, 0x90ce, 0x90e6,
    0x90e7, 0x90f1, 0xa06c, 0xa080, 0xa081, 0xa084, 0xa0bc, 0xa0bd, 0xa140, 0xb1cc, 0xb2cc, 0xb8b0, 0xb8d1,
    0xb8fa, 0xc076, 0xc361, 0xc365, 0xc369, 0xc36f, 0xc461, 0xc46f, 0xc561, 0xc56f, 0xc574, 0xc637, 0xc638,
    0xc639, 0xc640, 0xc661, 0xc763, 0xc863, 0xc86f, 0xc8b5, 0xcb33, 0xcb97, 0xcba2, 0xcbc0, 0xcbca,
};
/* GA10x: the classes rm.md §8.1 lists for GA10x plus the RM object classes every GPU has
 * (§2); constructed, not a measured list. */
static const uint32_t emu_rm_ga102_classes[] = {
    0x0,    0x3e,   0x40,   0x41,   0x70,   0x71,   0x80,   0x83de, 0x2080, 0x9067,
    0x90f1, 0xa06c, 0xc36f, 0xc46f, 0xc56f, 0xc361, 0xc461, 0xc7c0, 0xc7b5,
};

/* Names for traces come from kmd/rm's tables (src/kmd/rm/rm_status.c): names carry no
 * layout, so sharing them keeps the model's own ABI (emu_rm_abi.h) independent. "?" and
 * "NV_ERR_?" for values those tables do not hold, as the traces always printed. */
const char *
emu_rm_class_name(uint32_t cls)
{
    const char *n = rm_class_lookup(cls);
    return n ? n : "?";
}

bool
emu_rm_has_class(const struct emu_rm *rm, uint32_t cls)
{
    for (uint32_t i = 0; i < rm->class_count; i++)
        if (rm->classes[i] == cls)
            return true;
    return false;
}

/* ==== Objects ==== */

struct emu_rm_obj *
emu_rm_obj_find(struct emu_rm *rm, uint32_t client, uint32_t handle)
{
    for (uint32_t i = 0; i < rm->obj_count; i++) {
        struct emu_rm_obj *o = rm->objs[i];
        if (o->handle == handle && (o->client == client || (o->cls == NV01_ROOT_CLIENT && handle == client)))
            return o;
    }
    return NULL;
}

struct emu_rm_obj *
emu_rm_obj_new(struct emu_rm *rm, uint32_t client, uint32_t handle, uint32_t parent, uint32_t cls)
{
    if (rm->obj_count == rm->obj_cap) {
        uint32_t cap = rm->obj_cap ? rm->obj_cap * 2 : 64;
        struct emu_rm_obj **n = realloc(rm->objs, cap * sizeof *n);
        if (!n)
            return NULL;
        rm->objs = n;
        rm->obj_cap = cap;
    }
    struct emu_rm_obj *o = calloc(1, sizeof *o);
    if (!o)
        return NULL;
    o->client = client;
    o->handle = handle;
    o->parent = parent;
    o->cls = cls;
    o->seq = rm->seq++;
    rm->objs[rm->obj_count++] = o;
    atomic_fetch_add(&emu_live_rm_objs, 1);
    return o;
}

/* Release what one object holds (not its children). */
void
emu_rm_obj_release(struct emu_rm *rm, struct emu_rm_obj *o)
{
    if (o->ch)
        emu_chan_destroy(o->ch);
    emu_bo_unref(o->notifier_bo);
    if (o->bo && (o->cls == NV1_MEMORY_USER))
        rm->vram_used_B -= emu_bo_size(o->bo);
    /* default-VAS mappings of this memory go with it (RM unmaps on free) */
    if (o->bo && rm->default_vas && o->bo != rm->usermode_bo)
        emu_vm_unmap_bo(rm->default_vas, o->bo);
    emu_bo_unref(o->bo);
    if (o->vm) {
        for (uint32_t i = 0; i < rm->file_count; i++)
            if (rm->files[i]->uvm_vas == o)
                rm->files[i]->uvm_vas = NULL; /* UVM forgets a freed VA space */
        emu_vm_destroy(o->vm);
    }
    for (uint32_t i = 0; i < rm->obj_count; i++) {
        if (rm->objs[i] == o) {
            memmove(&rm->objs[i], &rm->objs[i + 1], (rm->obj_count - i - 1) * sizeof *rm->objs);
            rm->obj_count--;
            break;
        }
    }
    atomic_fetch_sub(&emu_live_rm_objs, 1);
    free(o);
}

bool
emu_rm_is_descendant(struct emu_rm *rm, const struct emu_rm_obj *o, const struct emu_rm_obj *root)
{
    for (int depth = 0; o && depth < 16; depth++) {
        if (o == root)
            return true;
        if (o->cls == NV01_ROOT_CLIENT)
            return false;
        o = emu_rm_obj_find(rm, o->client, o->parent);
    }
    return false;
}

/* Free `root` and everything under it, newest first (children are always newer). */
void
emu_rm_obj_free_tree(struct emu_rm *rm, struct emu_rm_obj *root)
{
    for (uint32_t i = rm->obj_count; i-- > 0;) {
        if (i >= rm->obj_count)
            continue;
        struct emu_rm_obj *o = rm->objs[i];
        if (o != root && o->client == root->client && emu_rm_is_descendant(rm, o, root))
            emu_rm_obj_release(rm, o);
    }
    emu_rm_obj_release(rm, root);
}

/* ==== Files ==== */

struct emu_rm_file *
emu_rm_file_of_fd(struct emu_rm *rm, int fd, enum emu_rm_file_kind kind)
{
    struct emu_fd *f = emu_fd_lookup(rm->d, fd);
    if (!f)
        return NULL;
    for (uint32_t i = 0; i < rm->file_count; i++)
        if (rm->files[i]->f == f && rm->files[i]->kind == kind)
            return rm->files[i];
    return NULL;
}

static void
emu_rm_file_release(struct emu_fd *f)
{
    struct emu_rm_file *file = f->priv;
    struct emu_rm *rm = file->rm;
    if (file->kind == EMU_RM_CTL) {
        /* closing nvidiactl frees the clients allocated through it */
        for (uint32_t i = rm->obj_count; i-- > 0;)
            if (i < rm->obj_count && rm->objs[i]->cls == NV01_ROOT_CLIENT && rm->objs[i]->owner == file)
                emu_rm_obj_free_tree(rm, rm->objs[i]);
    }
    if (file->kind == EMU_RM_UVM)
        emu_uvm_release(file);
    emu_bo_unref(file->map_bo);
    for (uint32_t i = 0; i < rm->file_count; i++) {
        if (rm->files[i] == file) {
            rm->files[i] = rm->files[--rm->file_count];
            break;
        }
    }
    free(file->ranges);
    free(file);
}

/* ==== Escapes ==== */

static const char *
emu_rm_esc_name(uint32_t nr)
{
    switch (nr) {
    case NV_ESC_CARD_INFO:
        return "NV_ESC_CARD_INFO";
    case NV_ESC_REGISTER_FD:
        return "NV_ESC_REGISTER_FD";
    case NV_ESC_CHECK_VERSION_STR:
        return "NV_ESC_CHECK_VERSION_STR";
    case NV_ESC_RM_ALLOC_MEMORY:
        return "NV_ESC_RM_ALLOC_MEMORY";
    case NV_ESC_RM_FREE:
        return "NV_ESC_RM_FREE";
    case NV_ESC_RM_CONTROL:
        return "NV_ESC_RM_CONTROL";
    case NV_ESC_RM_ALLOC:
        return "NV_ESC_RM_ALLOC";
    case NV_ESC_RM_MAP_MEMORY:
        return "NV_ESC_RM_MAP_MEMORY";
    case NV_ESC_RM_UNMAP_MEMORY:
        return "NV_ESC_RM_UNMAP_MEMORY";
    case NV_ESC_RM_MAP_MEMORY_DMA:
        return "NV_ESC_RM_MAP_MEMORY_DMA";
    case NV_ESC_RM_UNMAP_MEMORY_DMA:
        return "NV_ESC_RM_UNMAP_MEMORY_DMA";
    default:
        return NULL;
    }
}

const char *
emu_rm_status_name(uint32_t st)
{
    const char *n = rm_status_lookup(st);
    return n ? n : "NV_ERR_?";
}

static uint32_t
emu_rm_escape(struct emu_rm *rm, struct emu_rm_file *file, uint32_t nr, uint32_t size_B, void *arg,
              char *what, size_t what_B)
{
    struct emu_dev *d = rm->d;
    switch (nr) {
    case NV_ESC_RM_ALLOC: {
        struct emu_nvos64 *p = arg; /* the first 16 bytes and pAllocParms agree in both forms */
        uint32_t params_B =
            size_B == sizeof(struct emu_nvos21) ? ((struct emu_nvos21 *)arg)->paramsSize : p->paramsSize;
        uint32_t *status =
            size_B == sizeof(struct emu_nvos21) ? &((struct emu_nvos21 *)arg)->status : &p->status;
        struct emu_rm_obj *parent = emu_rm_obj_find(rm, p->hRoot, p->hObjectParent);
        snprintf(what, what_B, "%s parent=%s",
                 emu_rm_class_name(p->hClass == NV01_ROOT ? NV01_ROOT_CLIENT : p->hClass),
                 parent ? emu_rm_class_name(parent->cls) : "-");
        if (emu_inject_ioctl(d, emu_rm_class_name(p->hClass), p->hClass))
            return *status = NV_ERR_GENERIC;
        return *status = emu_rm_alloc(rm, file, p->hRoot, p->hObjectParent, &p->hObjectNew, p->hClass,
                                      p->pAllocParms, params_B);
    }
    case NV_ESC_RM_FREE: {
        struct emu_nvos00 *p = arg;
        struct emu_rm_obj *o = emu_rm_obj_find(rm, p->hRoot, p->hObjectOld);
        snprintf(what, what_B, "%s", o ? emu_rm_class_name(o->cls) : "?");
        return p->status = emu_rm_free(rm, file, p);
    }
    case NV_ESC_RM_CONTROL: {
        struct emu_nvos54 *p = arg;
        return emu_rm_control(rm, file, p);
    }
    case NV_ESC_RM_ALLOC_MEMORY: {
        struct emu_nvos02_fd *p = arg;
        snprintf(what, what_B, "%s size=0x%llx", emu_rm_class_name(p->hClass),
                 (unsigned long long)(p->limit + 1));
        return p->status = emu_rm_alloc_os_desc(rm, file, p);
    }
    case NV_ESC_RM_MAP_MEMORY: {
        struct emu_nvos33_fd *p = arg;
        struct emu_rm_obj *o = emu_rm_obj_find(rm, p->hClient, p->hMemory);
        snprintf(what, what_B, "%s len=0x%llx", o ? emu_rm_class_name(o->cls) : "?",
                 (unsigned long long)p->length);
        return p->status = emu_rm_map_memory(rm, p);
    }
    case NV_ESC_RM_UNMAP_MEMORY: {
        struct emu_nvos34 *p = arg;
        struct emu_rm_obj *o = emu_rm_obj_find(rm, p->hClient, p->hMemory);
        snprintf(what, what_B, "%s", o ? emu_rm_class_name(o->cls) : "?");
        return p->status = o ? NV_OK : NV_ERR_INVALID_OBJECT_HANDLE;
    }
    case NV_ESC_RM_MAP_MEMORY_DMA: {
        struct emu_nvos46 *p = arg;
        struct emu_rm_obj *o = emu_rm_obj_find(rm, p->hClient, p->hMemory);
        snprintf(what, what_B, "%s len=0x%llx", o ? emu_rm_class_name(o->cls) : "?",
                 (unsigned long long)p->length);
        return p->status = emu_rm_map_memory_dma(rm, p);
    }
    case NV_ESC_RM_UNMAP_MEMORY_DMA: {
        struct emu_nvos47 *p = arg;
        return p->status =
                   emu_vm_unmap(rm->default_vas, p->dmaOffset, 0) == 0 ? NV_OK : NV_ERR_INVALID_ADDRESS;
    }
    case NV_ESC_CHECK_VERSION_STR: {
        struct emu_nv_version *p = arg;
        /* cmd '2' queries, '1' relaxed (major must match), 0 strict (rm.md §1.2) */
        const char *ours = "580.159.04";
        if (p->cmd == 0x32u)
            p->reply = 1;
        else if (p->cmd == 0x31u)
            p->reply = !strncmp(p->versionString, ours, 4);
        else
            p->reply = !strncmp(p->versionString, ours, sizeof p->versionString);
        snprintf(p->versionString, sizeof p->versionString, "%s", ours);
        return NV_OK;
    }
    case NV_ESC_CARD_INFO: {
        struct emu_nv_card_info *c = arg;
        memset(c, 0, size_B);
        c[0].valid = 1;
        c[0].pci_bus = 1;
        c[0].vendor_id = 0x10DE;
        c[0].device_id = (uint16_t)rm->pci_device_id;
        c[0].gpu_id = rm->gpu_id;
        c[0].fb_size = rm->vram_B;
        c[0].minor_number = 0;
        memcpy(c[0].dev_name, "nvidia0", 8);
        return NV_OK;
    }
    case NV_ESC_REGISTER_FD: {
        int ctl_fd = *(int *)arg;
        if (!emu_rm_file_of_fd(rm, ctl_fd, EMU_RM_CTL))
            return NV_ERR_INVALID_ARGUMENT;
        file->registered = true;
        return NV_OK;
    }
    default:
        return NV_ERR_NOT_SUPPORTED;
    }
}

/* Expected argument size of each escape (rm.md §1.2 table); 0 = any multiple (CARD_INFO). */
static uint32_t
emu_rm_esc_size(uint32_t nr, uint32_t size_B, enum emu_rm_file_kind *node)
{
    *node = EMU_RM_CTL;
    switch (nr) {
    case NV_ESC_CARD_INFO:
        return size_B && size_B % sizeof(struct emu_nv_card_info) == 0 ? size_B : 0;
    case NV_ESC_REGISTER_FD:
        *node = EMU_RM_GPU;
        return 4;
    case NV_ESC_CHECK_VERSION_STR:
        return sizeof(struct emu_nv_version);
    case NV_ESC_RM_ALLOC_MEMORY:
        *node = EMU_RM_GPU;
        return sizeof(struct emu_nvos02_fd);
    case NV_ESC_RM_FREE:
        return sizeof(struct emu_nvos00);
    case NV_ESC_RM_CONTROL:
        return sizeof(struct emu_nvos54);
    case NV_ESC_RM_ALLOC:
        return size_B == sizeof(struct emu_nvos21) || size_B == sizeof(struct emu_nvos64) ? size_B : 0;
    case NV_ESC_RM_MAP_MEMORY:
        return sizeof(struct emu_nvos33_fd);
    case NV_ESC_RM_UNMAP_MEMORY:
        return sizeof(struct emu_nvos34);
    case NV_ESC_RM_MAP_MEMORY_DMA:
        return sizeof(struct emu_nvos46);
    case NV_ESC_RM_UNMAP_MEMORY_DMA:
        return sizeof(struct emu_nvos47);
    default:
        return 0;
    }
}

static int
emu_rm_file_ioctl(struct emu_fd *f, unsigned long request, void *arg)
{
    struct emu_rm_file *file = f->priv;
    struct emu_rm *rm = file->rm;
    if (file->kind == EMU_RM_UVM)
        return emu_uvm_ioctl(file, request, arg);
    uint32_t nr = EMU_RM_IOC_NR(request), size_B = EMU_RM_IOC_SIZE(request);
    const char *name = emu_rm_esc_name(nr);
    enum emu_rm_file_kind node;
    uint32_t want_B = emu_rm_esc_size(nr, size_B, &node);
    /* _IOWR('F', nr, exact size) on the right node, else the ioctl itself fails (rm.md §1.2) */
    if (!name || EMU_RM_IOC_TYPE(request) != NV_IOCTL_MAGIC || EMU_RM_IOC_DIR(request) != 3 || !arg) {
        emu_trace(rm->d, "ioctl %s nr=0x%x -> EINVAL", f->ops->name, nr);
        return -EINVAL;
    }
    if (size_B != want_B || node != file->kind) {
        emu_trace(rm->d, "%s size=%u on %s -> EINVAL", name, size_B, f->ops->name);
        return -EINVAL;
    }
    char what[128] = "";
    uint32_t st;
    if (emu_inject_ioctl(rm->d, name, nr)) {
        st = NV_ERR_GENERIC;
        /* the status word is the last u32 of most escape structs; CARD_INFO/REGISTER_FD have none */
        if (nr != NV_ESC_CARD_INFO && nr != NV_ESC_REGISTER_FD && nr != NV_ESC_CHECK_VERSION_STR) {
            uint32_t off = nr == NV_ESC_RM_ALLOC && size_B == 48 ? 0x28
                           : nr == NV_ESC_RM_ALLOC_MEMORY        ? 0x28
                           : nr == NV_ESC_RM_MAP_MEMORY          ? 0x28
                           : nr == NV_ESC_RM_MAP_MEMORY_DMA      ? 0x38
                           : nr == NV_ESC_RM_UNMAP_MEMORY_DMA    ? 0x28
                           : nr == NV_ESC_RM_UNMAP_MEMORY        ? 0x18
                                                                 : size_B - 4;
            memcpy((uint8_t *)arg + off, &st, 4);
        }
        emu_trace(rm->d, "%s (injected) -> %s", name, emu_rm_status_name(st));
        return nr == NV_ESC_CARD_INFO || nr == NV_ESC_REGISTER_FD ? -EIO : 0;
    }
    st = emu_rm_escape(rm, file, nr, size_B, arg, what, sizeof what);
    if (nr == NV_ESC_RM_CONTROL)
        return 0; /* traced by emu_rm_control with the command's name */
    emu_trace(rm->d, "%s%s%s -> %s", name, what[0] ? " " : "", what, emu_rm_status_name(st));
    /* escapes without a status field report failure through the ioctl itself */
    if (st != NV_OK && (nr == NV_ESC_CARD_INFO || nr == NV_ESC_REGISTER_FD))
        return -EINVAL;
    return 0;
}

static int
emu_rm_file_mmap(struct emu_fd *f, uint64_t offset, uint64_t len, int prot, struct emu_bo **bo_out,
                 uint64_t *bo_off_out)
{
    struct emu_rm_file *file = f->priv;
    (void)prot;
    /* only an fd that NV_ESC_RM_MAP_MEMORY bound a context to can be mapped (rm.md §3.4) */
    if (!file->map_bo)
        return -EINVAL;
    if (offset + len > ((file->map_len + 4095) & ~4095ull))
        return -EINVAL;
    *bo_out = file->map_bo;
    *bo_off_out = file->map_off + offset;
    return 0;
}

static const struct emu_fd_ops emu_rm_ctl_ops = {"nvidiactl", emu_rm_file_ioctl, emu_rm_file_mmap,
                                                 emu_rm_file_release};
static const struct emu_fd_ops emu_rm_gpu_ops = {"nvidia0", emu_rm_file_ioctl, emu_rm_file_mmap,
                                                 emu_rm_file_release};
static const struct emu_fd_ops emu_rm_uvm_ops = {"nvidia-uvm", emu_rm_file_ioctl, NULL, emu_rm_file_release};

static int
emu_rm_open(struct emu_dev *d, const char *path, int flags, struct emu_fd **f_out)
{
    struct emu_rm *rm = emu_dev_model(d);
    const struct emu_fd_ops *ops;
    enum emu_rm_file_kind kind;
    (void)flags;
    if (!strcmp(path, "/dev/nvidiactl")) {
        ops = &emu_rm_ctl_ops;
        kind = EMU_RM_CTL;
    } else if (!strcmp(path, "/dev/nvidia0")) {
        ops = &emu_rm_gpu_ops;
        kind = EMU_RM_GPU;
    } else if (!strcmp(path, "/dev/nvidia-uvm")) {
        ops = &emu_rm_uvm_ops;
        kind = EMU_RM_UVM;
    } else {
        return -ENOENT;
    }
    if (rm->file_count == rm->file_cap) {
        uint32_t cap = rm->file_cap ? rm->file_cap * 2 : 16;
        struct emu_rm_file **n = realloc(rm->files, cap * sizeof *n);
        if (!n)
            return -ENOMEM;
        rm->files = n;
        rm->file_cap = cap;
    }
    struct emu_rm_file *file = calloc(1, sizeof *file);
    if (!file)
        return -ENOMEM;
    file->kind = kind;
    file->rm = rm;
    int fd = emu_fd_create(d, ops, file, &file->f);
    if (fd < 0) {
        free(file);
        return fd;
    }
    rm->files[rm->file_count++] = file;
    *f_out = file->f;
    return fd;
}

/* ==== Peers: the emulated RM GPUs of this process ==== */

/* Two emulated GPUs of one process stand for two GPUs of one machine under one driver: the
 * model of one answers for the other (P2P caps, UVM registration, peer mappings) through
 * this list. Lock order: a device lock, then this one, then at most a trylock of another
 * device's lock (emu_rm_peer_mem). */
static pthread_mutex_t emu_rm_gpus_lock = PTHREAD_MUTEX_INITIALIZER;
static struct emu_rm *emu_rm_gpus[EMU_RM_GPUS_MAX];

/* The weaker link of the two GPUs' p2p options; GPUs of different chips have none (our
 * model: mixed pairs stage through host memory). */
static enum emu_p2p
emu_rm_link(const struct emu_rm *a, const struct emu_rm *b)
{
    if (a->d->arch != b->d->arch)
        return EMU_P2P_NONE;
    uint32_t la = a->d->opts.p2p, lb = b->d->opts.p2p;
    return (enum emu_p2p)(la > lb ? la : lb);
}

bool
emu_rm_peer_by_gpu_id(const struct emu_rm *rm, uint32_t gpu_id, enum emu_p2p *link_out)
{
    bool found = false;
    pthread_mutex_lock(&emu_rm_gpus_lock);
    for (uint32_t i = 0; i < EMU_RM_GPUS_MAX && !found; i++) {
        const struct emu_rm *o = emu_rm_gpus[i];
        if (o && o != rm && o->gpu_id == gpu_id) {
            *link_out = emu_rm_link(rm, o);
            found = true;
        }
    }
    pthread_mutex_unlock(&emu_rm_gpus_lock);
    return found;
}

bool
emu_rm_peer_by_uuid(const struct emu_rm *rm, const uint8_t *uuid, enum emu_p2p *link_out)
{
    bool found = false;
    pthread_mutex_lock(&emu_rm_gpus_lock);
    for (uint32_t i = 0; i < EMU_RM_GPUS_MAX && !found; i++) {
        const struct emu_rm *o = emu_rm_gpus[i];
        if (o && o != rm && !memcmp(o->uuid, uuid, 16)) {
            *link_out = emu_rm_link(rm, o);
            found = true;
        }
    }
    pthread_mutex_unlock(&emu_rm_gpus_lock);
    return found;
}

int
emu_rm_peer_mem(const struct emu_rm *rm, int ctl_fd, uint32_t h_client, uint32_t h_memory,
                struct emu_bo **bo_out, bool *vidmem_out, uint8_t *uuid_out)
{
    int ret = -ENOENT;
    pthread_mutex_lock(&emu_rm_gpus_lock);
    for (uint32_t i = 0; i < EMU_RM_GPUS_MAX && ret == -ENOENT; i++) {
        struct emu_rm *o = emu_rm_gpus[i];
        if (!o || o == rm)
            continue;
        if (pthread_mutex_trylock(&o->d->lock) != 0) {
            ret = -EAGAIN;
            break;
        }
        struct emu_rm_file *ctl = emu_rm_file_of_fd(o, ctl_fd, EMU_RM_CTL);
        struct emu_rm_obj *mem = ctl ? emu_rm_obj_find(o, h_client, h_memory) : NULL;
        if (mem && mem->bo && mem->owner == ctl && mem->bo != o->usermode_bo) {
            emu_bo_ref(mem->bo);
            *bo_out = mem->bo;
            *vidmem_out = mem->cls == NV1_MEMORY_USER;
            memcpy(uuid_out, o->uuid, 16);
            ret = 0;
        }
        pthread_mutex_unlock(&o->d->lock);
    }
    pthread_mutex_unlock(&emu_rm_gpus_lock);
    return ret;
}

/* d's RM model, NULL when d runs another driver model (nvgpu). */
static struct emu_rm *
emu_rm_of(struct emu_dev *d)
{
    return d->model_ops && !strcmp(d->model_ops->name, "rm") ? emu_dev_model(d) : NULL;
}

uint32_t
emu_rm_live_objects(struct emu_dev *d)
{
    emu_dev_lock(d);
    struct emu_rm *rm = emu_rm_of(d);
    uint32_t n = rm ? rm->obj_count : 0;
    emu_dev_unlock(d);
    return n;
}

uint32_t
emu_rm_uvm_ranges(struct emu_dev *d)
{
    emu_dev_lock(d);
    struct emu_rm *rm = emu_rm_of(d);
    uint32_t n = 0;
    for (uint32_t i = 0; rm && i < rm->file_count; i++)
        if (rm->files[i]->kind == EMU_RM_UVM)
            n += rm->files[i]->range_count;
    emu_dev_unlock(d);
    return n;
}

static void
emu_rm_destroy(struct emu_dev *d)
{
    struct emu_rm *rm = emu_dev_model(d);
    if (!rm)
        return;
    pthread_mutex_lock(&emu_rm_gpus_lock);
    if (emu_rm_gpus[rm->slot] == rm)
        emu_rm_gpus[rm->slot] = NULL;
    pthread_mutex_unlock(&emu_rm_gpus_lock);
    while (rm->obj_count)
        emu_rm_obj_free_tree(rm, rm->objs[0]);
    emu_vm_destroy(rm->default_vas);
    emu_bo_unref(rm->usermode_bo);
    free(rm->objs);
    free(rm->files);
    free(rm);
    emu_dev_set_model(d, NULL, NULL);
}

static const struct emu_model_ops emu_rm_model_ops = {"rm", emu_rm_open, emu_rm_destroy};

/* The engine list of struct emu_rm (our model: docs/emulator.md "Copy engines"). */
static void
emu_rm_engines_init(struct emu_rm *rm, uint32_t lces)
{
    rm->engines[rm->engine_count++] = NV2080_ENGINE_TYPE_GRAPHICS;
    rm->ce_count = 2 + lces;
    for (uint32_t i = 0; i < rm->ce_count; i++) {
        rm->engines[rm->engine_count++] = NV2080_ENGINE_TYPE_COPY0 + i;
        if (i < 2) { /* GR copy engines: run in GR's group, on GR's PCE */
            rm->ce_caps[i][0] = NV2080_CTRL_CE_CAPS_CE_GRCE | NV2080_CTRL_CE_CAPS_CE_SHARED;
            rm->ce_pce_mask[i] = 0x1;
        } else if (i == 2) { /* one PCE, shared with the GR copy engines: ranked last */
            rm->ce_caps[i][0] = NV2080_CTRL_CE_CAPS_CE_SHARED;
            rm->ce_pce_mask[i] = 0x1;
        } else { /* two PCEs of its own */
            rm->ce_pce_mask[i] = 0x3u << (2 * (i - 3) + 1);
        }
    }
    rm->engines[rm->engine_count++] = NV2080_ENGINE_TYPE_NVDEC0;
}

int
emu_rm_ce_index(const struct emu_rm *rm, uint32_t engine_type)
{
    if (engine_type < NV2080_ENGINE_TYPE_COPY0 || engine_type >= NV2080_ENGINE_TYPE_COPY0 + rm->ce_count)
        return -1;
    return (int)(engine_type - NV2080_ENGINE_TYPE_COPY0);
}

uint32_t
emu_rm_chan_engine_type(struct emu_dev *d, uint32_t token)
{
    uint32_t et = 0;
    emu_dev_lock(d);
    struct emu_rm *rm = emu_dev_model(d);
    for (uint32_t i = 0; rm && i < rm->obj_count; i++) {
        const struct emu_rm_obj *c = rm->objs[i];
        if (c->ch && c->token == token) {
            const struct emu_rm_obj *tsg = c->h_tsg ? emu_rm_obj_find(rm, c->client, c->h_tsg) : NULL;
            et = tsg ? tsg->engine_type : NV2080_ENGINE_TYPE_GRAPHICS;
        }
    }
    emu_dev_unlock(d);
    return et;
}

enum hcq_status
emu_rm_model_create(struct emu_dev *d)
{
    struct emu_rm *rm = calloc(1, sizeof *rm);
    if (!rm)
        return hcq_err(HCQ_ERR_NOMEM, "emu_rm_model_create: out of host memory");
    rm->d = d;
    rm->next_client = 0xC1D00001u;
    rm->next_handle = 0xCAF00001u;
    rm->next_token = 0xA; /* H200 handed out 0xA and 0xB (rm.md §4.1) */
    rm->next_subctx = 0;
    if (d->arch->compute_cls == HOPPER_COMPUTE_A) {
        rm->classes = emu_rm_gh100_classes;
        rm->class_count = sizeof emu_rm_gh100_classes / sizeof emu_rm_gh100_classes[0];
        rm->pci_device_id = 0x2330; /* H100 SXM5 */
        rm->sm_version_code = 0x900;
        rm->litter_gpcs = 8;
        rm->litter_tpc_per_gpc = 9;
        rm->max_warps_per_sm = 64;
        rm->vram_B = 8ull << 30;
    } else {
        rm->classes = emu_rm_ga102_classes;
        rm->class_count = sizeof emu_rm_ga102_classes / sizeof emu_rm_ga102_classes[0];
        rm->pci_device_id = 0x2204; /* GA102 */
        rm->sm_version_code = 0x806;
        rm->litter_gpcs = 7;
        rm->litter_tpc_per_gpc = 6;
        rm->max_warps_per_sm = 48;
        rm->vram_B = 4ull << 30;
    }
    if (emu_dev_opts(d)->vram_mb) /* a smaller part: what does not fit must be refused cleanly */
        rm->vram_B = emu_dev_opts(d)->vram_mb << 20;
    /* A small emulated part: 2 GPCs x 2 TPCs x 2 SMs = 8 SMs (GR info, TPC masks). */
    rm->gpcs = 2;
    rm->tpc_mask = 0x3;
    /* what GR_GET_INFO reports (emu_rm_ctrl.c: LITTER_NUM_SM_PER_TPC 2) */
    emu_dev_set_gr(d, rm->max_warps_per_sm, 2, rm->gpcs * (uint32_t)__builtin_popcount(rm->tpc_mask));
    /* Each live emulated GPU gets its own slot, gpu id and UUID (a single one is 0x100 with
     * UUID E0..EF, as before peers existed). */
    pthread_mutex_lock(&emu_rm_gpus_lock);
    rm->slot = EMU_RM_GPUS_MAX;
    for (uint32_t i = 0; i < EMU_RM_GPUS_MAX && rm->slot == EMU_RM_GPUS_MAX; i++)
        if (!emu_rm_gpus[i]) {
            emu_rm_gpus[i] = rm;
            rm->slot = i;
        }
    pthread_mutex_unlock(&emu_rm_gpus_lock);
    if (rm->slot == EMU_RM_GPUS_MAX) {
        free(rm);
        return hcq_err(HCQ_ERR_NOMEM, "emu_rm_model_create: more than %u emulated RM GPUs", EMU_RM_GPUS_MAX);
    }
    rm->gpu_id = 0x100 + rm->slot;
    for (int i = 0; i < 16; i++)
        rm->uuid[i] = (uint8_t)(0xE0 + i);
    rm->uuid[15] = (uint8_t)(0xEF + rm->slot);
    const struct emu_opts *o = emu_dev_opts(d);
    emu_rm_engines_init(rm, o->lces_set ? o->lces : 4);
    emu_dev_set_model(d, &emu_rm_model_ops, rm);
    if (emu_bo_create(d, 0x10000, &rm->usermode_bo) < 0 || emu_vm_create(d, 49, &rm->default_vas) < 0) {
        emu_rm_destroy(d);
        return hcq_err(HCQ_ERR_NOMEM, "emu_rm_model_create: out of host memory");
    }
    return HCQ_OK;
}
