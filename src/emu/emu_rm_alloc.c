/* SPDX-License-Identifier: MIT */
/*
 * emu_rm_alloc.c - the objects the emulated RM creates and maps for its escapes: NV_ESC_RM_ALLOC
 * of every class (parent, parameter struct and order checks; memory, VA spaces, TSGs, context
 * shares, channels and their engine objects), NV_ESC_RM_FREE, OS-descriptor memory, and the
 * CPU and GPU mappings (RM_MAP_MEMORY, RM_MAP_MEMORY_DMA). Source of every rule:
 * docs/hw/rm.md §1.3, §2-§4 (cited). The escape dispatch, files and the object table are
 * emu_rm.c. Layer: emu.
 */
#include "emu_rm_priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool
emu_rm_is_usermode_class(uint32_t cls)
{
    return cls == TURING_USERMODE_A || cls == AMPERE_USERMODE_A || cls == HOPPER_USERMODE_A;
}

static bool
emu_rm_is_gpfifo_class(uint32_t cls)
{
    return cls == AMPERE_CHANNEL_GPFIFO_A || cls == HOPPER_CHANNEL_GPFIFO_A;
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
    uint64_t page_B =
        page == 3 && ((p->attr2 >> NVOS32_ATTR2_PAGE_SIZE_HUGE_SHIFT) & 3u) == 1 ? 2ull << 20 : 4096;
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
    bool ce_tsg = parent->cls == KEPLER_CHANNEL_GROUP_A && parent->engine_type != NV2080_ENGINE_TYPE_GRAPHICS;
    uint32_t h_vas = ctx ? ctx->h_vaspace : p->hVASpace;
    if (ce_tsg) {
        /* A copy engine's group: no subcontexts; the channel names the group's engine and
         * takes its VA space (UVM's copy channels: nv_gpu_ops.c channelAllocate). */
        if (p->hContextShare || p->hVASpace || p->engineType != parent->engine_type)
            return NV_ERR_INVALID_ARGUMENT;
        h_vas = parent->h_vaspace;
    } else if (parent->cls == KEPLER_CHANNEL_GROUP_A &&
               (!ctx || ctx->cls != FERMI_CONTEXT_SHARE_A || ctx->parent != parent->handle)) {
        return NV_ERR_INVALID_OBJECT_HANDLE; /* a channel needs its TSG's ctxshare first */
    }
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

uint32_t
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
        if (st != NV_OK)
            break;
        /* GR (compute and its copy engines, rm.md §2 step 17), or an asynchronous copy engine
         * of the engine list with a VA space; a GR copy engine has no group of its own. */
        int ce = emu_rm_ce_index(rm, p->engineType);
        struct emu_rm_obj *vas = p->hVASpace ? emu_rm_obj_find(rm, h_root, p->hVASpace) : NULL;
        if (p->engineType == NV2080_ENGINE_TYPE_GRAPHICS)
            o->engine_type = p->engineType;
        else if (ce < 0 || (rm->ce_caps[ce][0] & NV2080_CTRL_CE_CAPS_CE_GRCE))
            st = NV_ERR_INVALID_ARGUMENT;
        else if (!vas || vas->cls != FERMI_VASPACE_A)
            st = NV_ERR_INVALID_OBJECT_HANDLE;
        else {
            o->engine_type = p->engineType;
            o->h_vaspace = vas->handle;
        }
        break;
    }
    case FERMI_CONTEXT_SHARE_A: {
        st = emu_rm_params(params_ptr, params_B, sizeof(struct emu_nv_ctxshare_alloc), true, &params);
        if (st == NV_OK && parent->engine_type != NV2080_ENGINE_TYPE_GRAPHICS)
            st = NV_ERR_INVALID_ARGUMENT; /* subcontexts are GR's (our model) */
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
            /* engine object on a channel: one per channel, compute or copy of this chip; on a
             * copy engine's group only the copy class, naming that engine when it passes
             * NVB0B5 parameters (VERSION_1: an NV2080 engine type) */
            const struct emu_rm_obj *tsg = parent->h_tsg ? emu_rm_obj_find(rm, h_root, parent->h_tsg) : NULL;
            uint32_t et = tsg ? tsg->engine_type : NV2080_ENGINE_TYPE_GRAPHICS;
            st = emu_rm_params(params_ptr, params_B, sizeof(struct emu_nvb0b5_alloc), false, &params);
            const struct emu_nvb0b5_alloc *ce = params;
            if (st == NV_OK && parent->engine_cls)
                st = NV_ERR_INVALID_STATE;
            else if (st == NV_OK && cls != rm->d->arch->compute_cls && cls != rm->d->arch->copy_cls)
                st = NV_ERR_INVALID_CLASS;
            else if (st == NV_OK && et != NV2080_ENGINE_TYPE_GRAPHICS && cls != rm->d->arch->copy_cls)
                st = NV_ERR_INVALID_CLASS;
            else if (st == NV_OK && ce && cls == rm->d->arch->copy_cls && et != NV2080_ENGINE_TYPE_GRAPHICS &&
                     (ce->version != NVB0B5_ALLOCATION_PARAMETERS_VERSION_1 || ce->engineType != et))
                st = NV_ERR_INVALID_ARGUMENT;
            else if (st == NV_OK) {
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

uint32_t
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
uint32_t
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
uint32_t
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

uint32_t
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
