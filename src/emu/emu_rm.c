/* SPDX-License-Identifier: MIT */
/*
 * emu_rm.c - the emulated RM kernel driver (nvidia.ko, branch 580): device nodes, escape
 * ioctls, the object tree (client/device/subdevice/memory/VAS/TSG/ctxshare/channel) with
 * the checks the real driver makes (ioctl size, node, class, parent, parameter struct,
 * order) and the same NV_STATUS codes, CPU mappings (MAP_MEMORY + mmap). Controls are in
 * emu_rm_ctrl.c, UVM in emu_uvm.c. Source of every rule: docs/hw/rm.md (cited).
 * Layer: emu.
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
    0x0, 0x1, 0x2, 0x4, 0x5, 0xf, 0x20, 0x3e, 0x3f, 0x40, 0x41, 0x42, 0x50, 0x60, 0x70, 0x71, 0x76, 0x78,
    0x79, 0x7d, 0x7e, 0x80, 0x81, 0x82, 0x83, 0x90, 0x92, 0xb1, 0xc2, 0xda, 0xdb, 0xde, 0xe0, 0xf1, 0xf3,
    0xf8, 0xf9, 0xfb, 0xfd, 0xfe, 0x100, 0x101, 0x2080, 0x2081, 0x2082, 0x208f, 0x30f1, 0x402c, 0x503b,
    0x503c, 0x5080, 0x50a0, 0x83de, 0x844c, 0x900e, 0x9010, 0x902d, 0x9067, 0x906f, 0x9074, 0x9096, 0x90cc,
    0x90cd, 0x90ce, 0x90e6, 0x90e7, 0x90f1, 0xa06c, 0xa080, 0xa081, 0xa084, 0xa0bc, 0xa0bd, 0xa140, 0xb1cc,
    0xb2cc, 0xb8b0, 0xb8d1, 0xb8fa, 0xc076, 0xc361, 0xc365, 0xc369, 0xc36f, 0xc461, 0xc46f, 0xc561, 0xc56f,
    0xc574, 0xc637, 0xc638, 0xc639, 0xc640, 0xc661, 0xc763, 0xc863, 0xc86f, 0xc8b5, 0xcb33, 0xcb97, 0xcba2,
    0xcbc0, 0xcbca,
};
/* GA10x: the classes rm.md §8.1 lists for GA10x plus the RM object classes every GPU has
 * (§2); constructed, not a measured list. */
static const uint32_t emu_rm_ga102_classes[] = {
    0x0, 0x3e, 0x40, 0x41, 0x70, 0x71, 0x80, 0x83de, 0x2080, 0x9067, 0x90f1, 0xa06c,
    0xc36f, 0xc46f, 0xc56f, 0xc361, 0xc461, 0xc7c0, 0xc7b5,
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

static bool
emu_rm_is_gpfifo_class(uint32_t cls)
{
    return cls == AMPERE_CHANNEL_GPFIFO_A || cls == HOPPER_CHANNEL_GPFIFO_A;
}

static bool
emu_rm_is_usermode_class(uint32_t cls)
{
    return cls == TURING_USERMODE_A || cls == AMPERE_USERMODE_A || cls == HOPPER_USERMODE_A;
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

static struct emu_rm_obj *
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
    return o;
}

/* Release what one object holds (not its children). */
static void
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
    free(o);
}

static bool
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
static void
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
    case NV_ESC_CARD_INFO: return "NV_ESC_CARD_INFO";
    case NV_ESC_REGISTER_FD: return "NV_ESC_REGISTER_FD";
    case NV_ESC_CHECK_VERSION_STR: return "NV_ESC_CHECK_VERSION_STR";
    case NV_ESC_RM_ALLOC_MEMORY: return "NV_ESC_RM_ALLOC_MEMORY";
    case NV_ESC_RM_FREE: return "NV_ESC_RM_FREE";
    case NV_ESC_RM_CONTROL: return "NV_ESC_RM_CONTROL";
    case NV_ESC_RM_ALLOC: return "NV_ESC_RM_ALLOC";
    case NV_ESC_RM_MAP_MEMORY: return "NV_ESC_RM_MAP_MEMORY";
    case NV_ESC_RM_UNMAP_MEMORY: return "NV_ESC_RM_UNMAP_MEMORY";
    case NV_ESC_RM_MAP_MEMORY_DMA: return "NV_ESC_RM_MAP_MEMORY_DMA";
    case NV_ESC_RM_UNMAP_MEMORY_DMA: return "NV_ESC_RM_UNMAP_MEMORY_DMA";
    default: return NULL;
    }
}

const char *
emu_rm_status_name(uint32_t st)
{
    const char *n = rm_status_lookup(st);
    return n ? n : "NV_ERR_?";
}

/* Parameter block of an RM_ALLOC: required with the class's exact size; paramsSize 0 means
 * "the class's own size" (tinygrad leaves 0, rm.md §1.3). */
static uint32_t
emu_rm_params(uint64_t ptr, uint32_t params_B, uint32_t want_B, bool required, void **out)
{
    *out = (void *)(uintptr_t)ptr;
    if (!ptr)
        return required ? NV_ERR_INVALID_ARGUMENT : NV_OK;
    if (params_B != 0 && params_B != want_B)
        return NV_ERR_INVALID_PARAM_STRUCT;
    return NV_OK;
}

static uint32_t
emu_rm_alloc_memory_obj(struct emu_rm *rm, struct emu_rm_obj *o, struct emu_nv_memory_alloc *p)
{
    /* rm.md §3.1: size > 0; alignment a power of two; page size and physicality from attr */
    if (p->size == 0 || (p->alignment & (p->alignment - 1)))
        return NV_ERR_INVALID_ARGUMENT;
    uint32_t page = (p->attr >> NVOS32_ATTR_PAGE_SIZE_SHIFT) & 3u;
    uint64_t page_B = page == 3 && ((p->attr2 >> NVOS32_ATTR2_PAGE_SIZE_HUGE_SHIFT) & 3u) == 1 ? 2ull << 20 : 4096;
    if ((p->flags & NVOS32_ALLOC_FLAGS_ALIGNMENT_FORCE) && p->alignment && p->alignment < page_B)
        return NV_ERR_INVALID_ARGUMENT;
    uint64_t size_B = (p->size + page_B - 1) & ~(page_B - 1);
    bool sysmem = o->cls == NV1_MEMORY_SYSTEM;
    if (!sysmem && rm->vram_used_B + size_B > rm->vram_B)
        return NV_ERR_NO_MEMORY;
    if (emu_inject_alloc(rm->d))
        return NV_ERR_NO_MEMORY;
    if (emu_bo_create(rm->d, size_B, &o->bo) < 0)
        return NV_ERR_NO_MEMORY;
    o->sysmem = sysmem;
    if (!sysmem)
        rm->vram_used_B += size_B;
    p->size = size_B;
    p->limit = size_B - 1;
    return NV_OK;
}

static uint32_t
emu_rm_alloc_channel(struct emu_rm *rm, struct emu_rm_obj *o, struct emu_rm_obj *parent,
                     struct emu_nv_channel_alloc *p)
{
    uint32_t c = o->client;
    /* rm.md §4.1: the ring is a power of two; the channel lives on a ctxshare of its TSG
     * (the VAS comes from the ctxshare); ring area, USERD and error notifier are memory
     * objects of this client. */
    if (p->gpFifoEntries < 2 || (p->gpFifoEntries & (p->gpFifoEntries - 1)) || (p->gpFifoOffset & 7))
        return NV_ERR_INVALID_ARGUMENT;
    struct emu_rm_obj *ctx = p->hContextShare ? emu_rm_obj_find(rm, c, p->hContextShare) : NULL;
    if (parent->cls == KEPLER_CHANNEL_GROUP_A && (!ctx || ctx->cls != FERMI_CONTEXT_SHARE_A || ctx->parent != parent->handle))
        return NV_ERR_INVALID_OBJECT_HANDLE; /* a channel needs its TSG's ctxshare first */
    uint32_t h_vas = ctx ? ctx->h_vaspace : p->hVASpace;
    struct emu_rm_obj *vas = emu_rm_obj_find(rm, c, h_vas);
    if (!vas || vas->cls != FERMI_VASPACE_A)
        return NV_ERR_INVALID_OBJECT_HANDLE;
    struct emu_rm_obj *ring = emu_rm_obj_find(rm, c, p->hObjectBuffer);
    struct emu_rm_obj *userd = emu_rm_obj_find(rm, c, p->hUserdMemory[0]);
    struct emu_rm_obj *err = p->hObjectError ? emu_rm_obj_find(rm, c, p->hObjectError) : NULL;
    if (!ring || !ring->bo || !userd || !userd->bo || (p->hObjectError && (!err || !err->bo)))
        return NV_ERR_INVALID_OBJECT_HANDLE;
    /* USERD: a 512-byte block inside its memory (rm.md §4.2) */
    if ((p->userdOffset[0] & 511) || p->userdOffset[0] + 512 > emu_bo_size(userd->bo))
        return NV_ERR_INVALID_ARGUMENT;
    if (err && emu_bo_size(err->bo) < sizeof(struct emu_nv_notification))
        return NV_ERR_INVALID_ARGUMENT;
    o->h_vaspace = h_vas;
    o->h_ctxshare = ctx ? ctx->handle : 0;
    o->h_tsg = parent->cls == KEPLER_CHANNEL_GROUP_A ? parent->handle : 0;
    o->token = rm->next_token++;
    if (err) {
        emu_bo_ref(err->bo);
        o->notifier_bo = err->bo;
    }
    return NV_OK;
}

static void
emu_rm_channel_error(struct emu_chan *ch, enum emu_chan_error xid, const char *why, void *user)
{
    struct emu_bo *bo = user;
    (void)ch;
    (void)why;
    if (!bo)
        return;
    struct emu_nv_notification *n = emu_bo_host(bo);
    n->timeStamp = emu_now_ns();
    n->info32 = (uint32_t)xid;
    n->info16 = 0;
    __atomic_store_n(&n->status, (uint16_t)EMU_NV_NOTIFICATION_STATUS_ERROR, __ATOMIC_RELEASE);
}

/* The engine object makes the channel real: create the GPU model's channel. */
static uint32_t
emu_rm_channel_start(struct emu_rm *rm, struct emu_rm_obj *chan, struct emu_nv_channel_alloc *p)
{
    struct emu_rm_obj *vas = emu_rm_obj_find(rm, chan->client, chan->h_vaspace);
    struct emu_rm_obj *userd = emu_rm_obj_find(rm, chan->client, p->hUserdMemory[0]);
    struct emu_chan_desc desc = {
        .vm = vas->vm,
        .ring_va = p->gpFifoOffset,
        .entries = p->gpFifoEntries,
        .userd_bo = userd->bo,
        .userd_off = p->userdOffset[0],
        .doorbell_bo = rm->usermode_bo,
        .doorbell_off = 0x90, /* NVC361_NOTIFY_CHANNEL_PENDING (rm.md §2 step 12) */
        .token = chan->token,
        .gpfifo_cls = chan->cls,
        .on_error = emu_rm_channel_error,
        .user = chan->notifier_bo,
    };
    if (emu_chan_create(rm->d, &desc, &chan->ch) < 0)
        return NV_ERR_NO_MEMORY;
    emu_rm_channel_update(rm, chan);
    return NV_OK;
}

void
emu_rm_channel_update(struct emu_rm *rm, struct emu_rm_obj *chan)
{
    if (!chan->ch)
        return;
    struct emu_rm_obj *vas = emu_rm_obj_find(rm, chan->client, chan->h_vaspace);
    struct emu_rm_obj *tsg = chan->h_tsg ? emu_rm_obj_find(rm, chan->client, chan->h_tsg) : chan;
    bool external = vas && (vas->va_flags & NV_VASPACE_ALLOCATION_FLAGS_IS_EXTERNALLY_OWNED);
    /* A TSG runs once scheduled (rm.md §2 step 21); a channel on a UVM-owned VAS needs
     * UVM_REGISTER_CHANNEL for its context buffers (§4.1 step 4). */
    emu_chan_set_runnable(chan->ch, tsg && tsg->scheduled && (!external || chan->uvm_registered));
}

static uint32_t
emu_rm_alloc(struct emu_rm *rm, struct emu_rm_file *file, uint32_t h_root, uint32_t h_parent, uint32_t *h_new,
             uint32_t cls, uint64_t params_ptr, uint32_t params_B)
{
    void *params = NULL;
    uint32_t st;
    if (cls == NV01_ROOT || cls == NV01_ROOT_CLIENT) {
        /* NV01_ROOT from user space is rewritten to NV01_ROOT_CLIENT (rm.md §2 step 2) */
        uint32_t h = *h_new ? *h_new : rm->next_client++;
        if (emu_rm_obj_find(rm, h, h))
            return NV_ERR_INVALID_OBJECT_HANDLE;
        struct emu_rm_obj *o = emu_rm_obj_new(rm, h, h, 0, NV01_ROOT_CLIENT);
        if (!o)
            return NV_ERR_NO_MEMORY;
        o->owner = file;
        *h_new = h;
        return NV_OK;
    }
    struct emu_rm_obj *client = emu_rm_obj_find(rm, h_root, h_root);
    if (!client || client->cls != NV01_ROOT_CLIENT || client->owner != file)
        return NV_ERR_INVALID_OBJECT_HANDLE;
    struct emu_rm_obj *parent = emu_rm_obj_find(rm, h_root, h_parent);
    if (!parent)
        return NV_ERR_INVALID_OBJECT_PARENT;
    if (!emu_rm_has_class(rm, cls) || cls == NV01_MEMORY_SYSTEM_OS_DESCRIPTOR)
        return NV_ERR_INVALID_CLASS;
    /* Parent class each class must be allocated under (rm.md §2 object tree). */
    uint32_t want_parent;
    if (cls == NV01_DEVICE_0)
        want_parent = NV01_ROOT_CLIENT;
    else if (emu_rm_is_usermode_class(cls))
        want_parent = NV20_SUBDEVICE_0;
    else if (cls == FERMI_CONTEXT_SHARE_A)
        want_parent = KEPLER_CHANNEL_GROUP_A;
    else if (emu_rm_is_gpfifo_class(cls))
        want_parent = parent->cls == KEPLER_CHANNEL_GROUP_A ? KEPLER_CHANNEL_GROUP_A : NV01_DEVICE_0;
    else if (cls == rm->d->arch->compute_cls || cls == rm->d->arch->copy_cls || cls == AMPERE_COMPUTE_A ||
             cls == AMPERE_DMA_COPY_A)
        want_parent = emu_rm_is_gpfifo_class(parent->cls) ? parent->cls : 0xFFFFFFFFu;
    else if (cls == NV20_SUBDEVICE_0 || cls == NV01_MEMORY_VIRTUAL || cls == FERMI_VASPACE_A ||
             cls == NV1_MEMORY_USER || cls == NV1_MEMORY_SYSTEM || cls == KEPLER_CHANNEL_GROUP_A ||
             cls == GT200_DEBUGGER)
        want_parent = NV01_DEVICE_0;
    else
        return NV_ERR_NOT_SUPPORTED; /* a class the emulator does not model */
    if (parent->cls != want_parent)
        return NV_ERR_INVALID_OBJECT_PARENT;

    uint32_t h = *h_new;
    if (h == 0)
        h = rm->next_handle++;
    else if (emu_rm_obj_find(rm, h_root, h))
        return NV_ERR_INVALID_OBJECT_HANDLE; /* handle already in use in this client */
    struct emu_rm_obj *o = emu_rm_obj_new(rm, h_root, h, h_parent, cls);
    if (!o)
        return NV_ERR_NO_MEMORY;
    o->owner = file;

    switch (cls) {
    case NV01_DEVICE_0: {
        st = emu_rm_params(params_ptr, params_B, sizeof(struct emu_nv0080_alloc), false, &params);
        struct emu_nv0080_alloc *p = params;
        if (st == NV_OK && p && p->deviceId != 0)
            st = NV_ERR_INVALID_ARGUMENT; /* one GPU: deviceInstance 0 (rm.md §2 step 7) */
        break;
    }
    case NV20_SUBDEVICE_0: {
        st = emu_rm_params(params_ptr, params_B, 4, false, &params);
        if (st == NV_OK && params && *(uint32_t *)params != 0)
            st = NV_ERR_INVALID_ARGUMENT;
        break;
    }
    case NV01_MEMORY_VIRTUAL:
        st = emu_rm_params(params_ptr, params_B, sizeof(struct emu_nv_memory_virtual_alloc), false, &params);
        break;
    case FERMI_VASPACE_A: {
        st = emu_rm_params(params_ptr, params_B, sizeof(struct emu_nv_vaspace_alloc), true, &params);
        if (st != NV_OK)
            break;
        struct emu_nv_vaspace_alloc *p = params;
        o->va_flags = p->flags;
        st = emu_vm_create(rm->d, 49, &o->vm) < 0 ? NV_ERR_NO_MEMORY : NV_OK;
        break;
    }
    case NV1_MEMORY_USER:
    case NV1_MEMORY_SYSTEM:
        st = emu_rm_params(params_ptr, params_B, sizeof(struct emu_nv_memory_alloc), true, &params);
        if (st == NV_OK)
            st = emu_rm_alloc_memory_obj(rm, o, params);
        break;
    case KEPLER_CHANNEL_GROUP_A: {
        st = emu_rm_params(params_ptr, params_B, sizeof(struct emu_nv_channel_group_alloc), true, &params);
        struct emu_nv_channel_group_alloc *p = params;
        if (st == NV_OK && p->engineType != NV2080_ENGINE_TYPE_GRAPHICS)
            st = NV_ERR_INVALID_ARGUMENT; /* compute and copy channels share a GR TSG (rm.md §2 step 17) */
        break;
    }
    case FERMI_CONTEXT_SHARE_A: {
        st = emu_rm_params(params_ptr, params_B, sizeof(struct emu_nv_ctxshare_alloc), true, &params);
        if (st != NV_OK)
            break;
        struct emu_nv_ctxshare_alloc *p = params;
        struct emu_rm_obj *vas = emu_rm_obj_find(rm, h_root, p->hVASpace);
        if (!vas || vas->cls != FERMI_VASPACE_A) {
            st = NV_ERR_INVALID_OBJECT_HANDLE;
            break;
        }
        o->h_vaspace = vas->handle;
        p->subctxId = rm->next_subctx++;
        break;
    }
    case GT200_DEBUGGER: {
        st = emu_rm_params(params_ptr, params_B, sizeof(struct emu_nv83de_alloc), true, &params);
        struct emu_nv83de_alloc *p = params;
        struct emu_rm_obj *gr = st == NV_OK ? emu_rm_obj_find(rm, p->hAppClient, p->hClass3dObject) : NULL;
        if (st == NV_OK && (!gr || gr->cls != rm->d->arch->compute_cls))
            st = NV_ERR_INVALID_OBJECT_HANDLE;
        break;
    }
    default:
        if (emu_rm_is_usermode_class(cls)) {
            emu_bo_ref(rm->usermode_bo);
            o->bo = rm->usermode_bo;
            st = NV_OK;
        } else if (emu_rm_is_gpfifo_class(cls)) {
            st = emu_rm_params(params_ptr, params_B, sizeof(struct emu_nv_channel_alloc), true, &params);
            if (st == NV_OK)
                st = emu_rm_alloc_channel(rm, o, parent, params);
            if (st == NV_OK)
                st = emu_rm_channel_start(rm, o, params);
        } else {
            /* engine object on a channel: one per channel, compute or copy of this chip */
            if (parent->engine_cls)
                st = NV_ERR_INVALID_STATE;
            else if (cls != rm->d->arch->compute_cls && cls != rm->d->arch->copy_cls)
                st = NV_ERR_INVALID_CLASS;
            else {
                parent->engine_cls = cls;
                emu_chan_add_class(parent->ch, cls);
                st = NV_OK;
            }
        }
        break;
    }
    if (st != NV_OK) {
        emu_rm_obj_release(rm, o);
        return st;
    }
    *h_new = h;
    return NV_OK;
}

static uint32_t
emu_rm_free(struct emu_rm *rm, struct emu_rm_file *file, struct emu_nvos00 *p)
{
    struct emu_rm_obj *o = emu_rm_obj_find(rm, p->hRoot, p->hObjectOld);
    if (!o || o->owner != file)
        return NV_ERR_INVALID_OBJECT_HANDLE;
    if (o->cls != NV01_ROOT_CLIENT && o->parent != p->hObjectParent)
        return NV_ERR_INVALID_OBJECT_PARENT;
    if (o->cls == FERMI_VASPACE_A) {
        for (uint32_t i = 0; i < rm->obj_count; i++)
            if (rm->objs[i]->client == o->client && rm->objs[i]->h_vaspace == o->handle &&
                !emu_rm_is_descendant(rm, rm->objs[i], o))
                return NV_ERR_INVALID_STATE; /* still used by a ctxshare/channel */
    }
    emu_rm_obj_free_tree(rm, o);
    return NV_OK;
}

/* OS-descriptor memory on /dev/nvidiaN (rm.md §3.3): wrap the user's pages. */
static uint32_t
emu_rm_alloc_os_desc(struct emu_rm *rm, struct emu_rm_file *file, struct emu_nvos02_fd *p)
{
    struct emu_rm_obj *client = emu_rm_obj_find(rm, p->hRoot, p->hRoot);
    if (!file->registered || !client || client->cls != NV01_ROOT_CLIENT)
        return NV_ERR_INVALID_OBJECT_HANDLE;
    struct emu_rm_obj *dev = emu_rm_obj_find(rm, p->hRoot, p->hObjectParent);
    if (!dev || dev->cls != NV01_DEVICE_0)
        return NV_ERR_INVALID_OBJECT_PARENT;
    if (p->hClass != NV01_MEMORY_SYSTEM_OS_DESCRIPTOR)
        return NV_ERR_INVALID_CLASS;
    /* the handle must be client-chosen (rm.md §1.3 NVOS02) and unused */
    if (p->hObjectNew == 0 || emu_rm_obj_find(rm, p->hRoot, p->hObjectNew))
        return NV_ERR_INVALID_OBJECT_HANDLE;
    uint64_t size_B = p->limit + 1;
    if (!p->pMemory || (p->pMemory & 4095) || (size_B & 4095) || size_B == 0)
        return NV_ERR_INVALID_ARGUMENT;
    if (emu_inject_alloc(rm->d))
        return NV_ERR_NO_MEMORY;
    struct emu_bo *bo;
    int r = emu_bo_wrap(rm->d, (void *)(uintptr_t)p->pMemory, size_B, &bo);
    if (r < 0)
        return r == -EFAULT ? NV_ERR_INVALID_ADDRESS : NV_ERR_NO_MEMORY;
    struct emu_rm_obj *o = emu_rm_obj_new(rm, p->hRoot, p->hObjectNew, p->hObjectParent, p->hClass);
    if (!o) {
        emu_bo_unref(bo);
        return NV_ERR_NO_MEMORY;
    }
    o->owner = client->owner;
    o->bo = bo;
    o->sysmem = o->os_desc = true;
    return NV_OK;
}

/* NV_ESC_RM_MAP_MEMORY: bind an mmap context to the fd the caller will mmap (rm.md §3.4). */
static uint32_t
emu_rm_map_memory(struct emu_rm *rm, struct emu_nvos33_fd *p)
{
    struct emu_rm_obj *dev = emu_rm_obj_find(rm, p->hClient, p->hDevice);
    struct emu_rm_obj *mem = emu_rm_obj_find(rm, p->hClient, p->hMemory);
    if (!dev || dev->cls != NV01_DEVICE_0 || !mem)
        return NV_ERR_INVALID_OBJECT_HANDLE;
    if (!mem->bo || mem->os_desc)
        return NV_ERR_INVALID_ARGUMENT; /* OS descriptors are NO_MAP: the caller owns the pages */
    if (p->length == 0 || p->offset + p->length > emu_bo_size(mem->bo) || (p->offset & 4095))
        return NV_ERR_INVALID_LIMIT;
    /* sysmem maps through an nvidiactl fd, vidmem and usermode through a registered nvidiaN fd */
    struct emu_rm_file *target = emu_rm_file_of_fd(rm, p->fd, mem->sysmem ? EMU_RM_CTL : EMU_RM_GPU);
    if (!target || (target->kind == EMU_RM_GPU && !target->registered))
        return NV_ERR_INVALID_ARGUMENT;
    if (target->map_bo)
        return NV_ERR_INVALID_STATE; /* one mapping per fd */
    emu_bo_ref(mem->bo);
    target->map_bo = mem->bo;
    target->map_off = p->offset;
    target->map_len = p->length;
    p->pLinearAddress = 0x100000000ull + p->offset; /* an opaque cookie, not a pointer */
    return NV_OK;
}

static uint32_t
emu_rm_map_memory_dma(struct emu_rm *rm, struct emu_nvos46 *p)
{
    struct emu_rm_obj *dev = emu_rm_obj_find(rm, p->hClient, p->hDevice);
    struct emu_rm_obj *dma = emu_rm_obj_find(rm, p->hClient, p->hDma);
    struct emu_rm_obj *mem = emu_rm_obj_find(rm, p->hClient, p->hMemory);
    if (!dev || dev->cls != NV01_DEVICE_0 || !dma || dma->cls != NV01_MEMORY_VIRTUAL || !mem || !mem->bo ||
        mem->bo == rm->usermode_bo)
        return NV_ERR_INVALID_OBJECT_HANDLE;
    uint64_t len = p->length ? p->length : emu_bo_size(mem->bo) - p->offset;
    if (p->offset + len > emu_bo_size(mem->bo) || (p->offset & 4095) || (len & 4095))
        return NV_ERR_INVALID_LIMIT;
    uint64_t va = p->dmaOffset;
    if (!(p->flags & NVOS46_FLAGS_DMA_OFFSET_FIXED))
        va = emu_vm_find_free(rm->default_vas, len, 1ull << 21, 1ull << 32, 1ull << 48);
    int r = emu_vm_map(rm->default_vas, va, len, mem->bo, p->offset);
    if (r == -EINVAL)
        return NV_ERR_INVALID_ADDRESS;
    if (r == -EEXIST)
        return NV_ERR_INVALID_ADDRESS; /* overlapping an existing mapping of this VAS */
    if (r < 0)
        return NV_ERR_NO_MEMORY;
    p->dmaOffset = va;
    return NV_OK;
}

static uint32_t
emu_rm_escape(struct emu_rm *rm, struct emu_rm_file *file, uint32_t nr, uint32_t size_B, void *arg,
              char *what, size_t what_B)
{
    struct emu_dev *d = rm->d;
    switch (nr) {
    case NV_ESC_RM_ALLOC: {
        struct emu_nvos64 *p = arg; /* the first 16 bytes and pAllocParms agree in both forms */
        uint32_t params_B = size_B == sizeof(struct emu_nvos21) ? ((struct emu_nvos21 *)arg)->paramsSize
                                                                : p->paramsSize;
        uint32_t *status = size_B == sizeof(struct emu_nvos21) ? &((struct emu_nvos21 *)arg)->status : &p->status;
        struct emu_rm_obj *parent = emu_rm_obj_find(rm, p->hRoot, p->hObjectParent);
        snprintf(what, what_B, "%s parent=%s", emu_rm_class_name(p->hClass == NV01_ROOT ? NV01_ROOT_CLIENT : p->hClass),
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
        snprintf(what, what_B, "%s size=0x%llx", emu_rm_class_name(p->hClass), (unsigned long long)(p->limit + 1));
        return p->status = emu_rm_alloc_os_desc(rm, file, p);
    }
    case NV_ESC_RM_MAP_MEMORY: {
        struct emu_nvos33_fd *p = arg;
        struct emu_rm_obj *o = emu_rm_obj_find(rm, p->hClient, p->hMemory);
        snprintf(what, what_B, "%s len=0x%llx", o ? emu_rm_class_name(o->cls) : "?", (unsigned long long)p->length);
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
        snprintf(what, what_B, "%s len=0x%llx", o ? emu_rm_class_name(o->cls) : "?", (unsigned long long)p->length);
        return p->status = emu_rm_map_memory_dma(rm, p);
    }
    case NV_ESC_RM_UNMAP_MEMORY_DMA: {
        struct emu_nvos47 *p = arg;
        return p->status = emu_vm_unmap(rm->default_vas, p->dmaOffset, 0) == 0 ? NV_OK : NV_ERR_INVALID_ADDRESS;
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
    case NV_ESC_CARD_INFO: return size_B && size_B % sizeof(struct emu_nv_card_info) == 0 ? size_B : 0;
    case NV_ESC_REGISTER_FD: *node = EMU_RM_GPU; return 4;
    case NV_ESC_CHECK_VERSION_STR: return sizeof(struct emu_nv_version);
    case NV_ESC_RM_ALLOC_MEMORY: *node = EMU_RM_GPU; return sizeof(struct emu_nvos02_fd);
    case NV_ESC_RM_FREE: return sizeof(struct emu_nvos00);
    case NV_ESC_RM_CONTROL: return sizeof(struct emu_nvos54);
    case NV_ESC_RM_ALLOC:
        return size_B == sizeof(struct emu_nvos21) || size_B == sizeof(struct emu_nvos64) ? size_B : 0;
    case NV_ESC_RM_MAP_MEMORY: return sizeof(struct emu_nvos33_fd);
    case NV_ESC_RM_UNMAP_MEMORY: return sizeof(struct emu_nvos34);
    case NV_ESC_RM_MAP_MEMORY_DMA: return sizeof(struct emu_nvos46);
    case NV_ESC_RM_UNMAP_MEMORY_DMA: return sizeof(struct emu_nvos47);
    default: return 0;
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

static const struct emu_fd_ops emu_rm_ctl_ops = { "nvidiactl", emu_rm_file_ioctl, emu_rm_file_mmap,
                                                  emu_rm_file_release };
static const struct emu_fd_ops emu_rm_gpu_ops = { "nvidia0", emu_rm_file_ioctl, emu_rm_file_mmap,
                                                  emu_rm_file_release };
static const struct emu_fd_ops emu_rm_uvm_ops = { "nvidia-uvm", emu_rm_file_ioctl, NULL, emu_rm_file_release };

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

static void
emu_rm_destroy(struct emu_dev *d)
{
    struct emu_rm *rm = emu_dev_model(d);
    if (!rm)
        return;
    while (rm->obj_count)
        emu_rm_obj_free_tree(rm, rm->objs[0]);
    emu_vm_destroy(rm->default_vas);
    emu_bo_unref(rm->usermode_bo);
    free(rm->objs);
    free(rm->files);
    free(rm);
    emu_dev_set_model(d, NULL, NULL);
}

static const struct emu_model_ops emu_rm_model_ops = { "rm", emu_rm_open, emu_rm_destroy };

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
    /* A small emulated part: 2 GPCs x 2 TPCs x 2 SMs = 8 SMs (GR info, TPC masks). */
    rm->gpcs = 2;
    rm->tpc_mask = 0x3;
    rm->gpu_id = 0x100;
    for (int i = 0; i < 16; i++)
        rm->uuid[i] = (uint8_t)(0xE0 + i);
    emu_dev_set_model(d, &emu_rm_model_ops, rm);
    if (emu_bo_create(d, 0x10000, &rm->usermode_bo) < 0 || emu_vm_create(d, 49, &rm->default_vas) < 0) {
        emu_rm_destroy(d);
        return hcq_err(HCQ_ERR_NOMEM, "emu_rm_model_create: out of host memory");
    }
    return HCQ_OK;
}
