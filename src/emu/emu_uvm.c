/* SPDX-License-Identifier: MIT */
/*
 * emu_uvm.c - the emulated /dev/nvidia-uvm (rm.md §1.4, §3.5, §4.1): initialisation,
 * GPU and VA-space registration, external ranges and mappings into the registered
 * FERMI_VASPACE_A (the address space the channels see), channel registration, and peers:
 * other emulated GPUs registered here, peer access, their video memory mapped into our VA
 * space (the GPU model then reads and writes the other GPU's pages). Order is
 * enforced as UVM does: INITIALIZE first, GPU before its VA space, a range before the
 * mapping inside it. Results in rmStatus; unknown requests fail with EINVAL.
 * Layer: emu.
 */
#include "emu_rm_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char *
emu_uvm_name(unsigned long req)
{
    switch (req) {
    case UVM_INITIALIZE:
        return "UVM_INITIALIZE";
    case UVM_DEINITIALIZE:
        return "UVM_DEINITIALIZE";
    case UVM_MM_INITIALIZE:
        return "UVM_MM_INITIALIZE";
    case UVM_REGISTER_GPU:
        return "UVM_REGISTER_GPU";
    case UVM_REGISTER_GPU_VASPACE:
        return "UVM_REGISTER_GPU_VASPACE";
    case UVM_REGISTER_CHANNEL:
        return "UVM_REGISTER_CHANNEL";
    case UVM_ENABLE_PEER_ACCESS:
        return "UVM_ENABLE_PEER_ACCESS";
    case UVM_MAP_EXTERNAL_ALLOCATION:
        return "UVM_MAP_EXTERNAL_ALLOCATION";
    case UVM_FREE:
        return "UVM_FREE";
    case UVM_CREATE_EXTERNAL_RANGE:
        return "UVM_CREATE_EXTERNAL_RANGE";
    case UVM_UNMAP_EXTERNAL:
        return "UVM_UNMAP_EXTERNAL";
    default:
        return NULL;
    }
}

/* Offset of rmStatus in each request's struct. */
static size_t
emu_uvm_status_off(unsigned long req)
{
    switch (req) {
    case UVM_INITIALIZE:
        return offsetof(struct emu_uvm_initialize, rmStatus);
    case UVM_MM_INITIALIZE:
        return offsetof(struct emu_uvm_mm_initialize, rmStatus);
    case UVM_REGISTER_GPU:
        return offsetof(struct emu_uvm_register_gpu, rmStatus);
    case UVM_REGISTER_GPU_VASPACE:
        return offsetof(struct emu_uvm_register_gpu_vaspace, rmStatus);
    case UVM_REGISTER_CHANNEL:
        return offsetof(struct emu_uvm_register_channel, rmStatus);
    case UVM_MAP_EXTERNAL_ALLOCATION:
        return offsetof(struct emu_uvm_map_external, rmStatus);
    case UVM_FREE:
    case UVM_CREATE_EXTERNAL_RANGE:
        return offsetof(struct emu_uvm_range, rmStatus);
    case UVM_UNMAP_EXTERNAL:
        return offsetof(struct emu_uvm_unmap_external, rmStatus);
    case UVM_ENABLE_PEER_ACCESS:
        return offsetof(struct emu_uvm_enable_peer_access, rmStatus);
    default:
        return 0;
    }
}

static struct emu_rm_range *
emu_uvm_range_find(struct emu_rm_file *u, uint64_t base, uint64_t length)
{
    for (uint32_t i = 0; i < u->range_count; i++) {
        struct emu_rm_range *r = &u->ranges[i];
        if (base >= r->base && base + length <= r->base + r->length && base + length > base)
            return r;
    }
    return NULL;
}

static bool
emu_uvm_range_overlaps(struct emu_rm_file *u, uint64_t base, uint64_t length)
{
    for (uint32_t i = 0; i < u->range_count; i++) {
        struct emu_rm_range *r = &u->ranges[i];
        if (base < r->base + r->length && r->base < base + length)
            return true;
    }
    return false;
}

static uint32_t
emu_uvm_range_add(struct emu_rm_file *u, uint64_t base, uint64_t length, bool channel)
{
    if (!length || (base & 4095) || (length & 4095) || base + length < base || base + length > (1ull << 49))
        return NV_ERR_INVALID_ADDRESS;
    if (emu_uvm_range_overlaps(u, base, length))
        return NV_ERR_UVM_ADDRESS_IN_USE;
    if (u->range_count == u->range_cap) {
        uint32_t cap = u->range_cap ? u->range_cap * 2 : 32;
        struct emu_rm_range *n = realloc(u->ranges, cap * sizeof *n);
        if (!n)
            return NV_ERR_NO_MEMORY;
        u->ranges = n;
        u->range_cap = cap;
    }
    u->ranges[u->range_count++] = (struct emu_rm_range){base, length, channel};
    return NV_OK;
}

/* Unmap every mapping of the registered VAS inside [base, base+length). */
static void
emu_uvm_unmap_range(struct emu_rm_file *u, uint64_t base, uint64_t length)
{
    if (!u->uvm_vas)
        return;
    struct emu_vm *vm = u->uvm_vas->vm;
    for (uint64_t va = base; va < base + length;) {
        uint64_t start = 0;
        /* find the next mapping start >= va: walk by lookups on the sorted ranges */
        emu_vm_read_lock(vm);
        for (uint32_t i = 0; i < vm->count; i++) {
            if (vm->r[i].va >= va && vm->r[i].va < base + length) {
                start = vm->r[i].va;
                break;
            }
        }
        emu_vm_read_unlock(vm);
        if (!start)
            break;
        emu_vm_unmap(vm, start, 0);
        va = start + 1;
    }
}

static bool
emu_uvm_uuid_ok(struct emu_rm *rm, const uint8_t *uuid)
{
    return !memcmp(uuid, rm->uuid, 16);
}

/* Internal result of emu_uvm_run, never an NV_STATUS: another GPU's model was busy, so the
 * ioctl fails with EAGAIN and kmd/rm issues it again (emu_rm_peer_mem). */
#define EMU_UVM_RETRY 0xFFFFFFFFu

/* Index of another GPU registered in this VA space, -1 if none. */
static int
emu_uvm_peer_find(struct emu_rm_file *u, const uint8_t *uuid)
{
    for (uint32_t i = 0; i < u->peer_count; i++)
        if (!memcmp(u->peers[i].uuid, uuid, 16))
            return (int)i;
    return -1;
}

/* UVM_REGISTER_GPU of another emulated GPU: UVM turns NVLink peer access on by itself once
 * both GPUs of the pair are registered (open-gpu-kernel-modules uvm_va_space.c: "NVLink and
 * BAR1 peers are automatically enabled in the VA space at VA space registration time"). */
static uint32_t
emu_uvm_register_peer(struct emu_rm_file *u, const uint8_t *uuid)
{
    enum emu_p2p link;
    if (!emu_rm_peer_by_uuid(u->rm, uuid, &link))
        return NV_ERR_INVALID_DEVICE; /* no such GPU in the machine */
    if (emu_uvm_peer_find(u, uuid) >= 0)
        return NV_ERR_INVALID_DEVICE; /* registered twice (our choice of status) */
    if (u->peer_count == EMU_RM_PEERS_MAX)
        return NV_ERR_INSUFFICIENT_RESOURCES;
    memcpy(u->peers[u->peer_count].uuid, uuid, 16);
    u->peers[u->peer_count].link = link;
    u->peers[u->peer_count].enabled = link == EMU_P2P_NVLINK && u->gpu_registered;
    u->peer_count++;
    return NV_OK;
}

/* UVM_ENABLE_PEER_ACCESS: both GPUs registered here, PCIe peers only (UVM answers
 * NV_ERR_INVALID_DEVICE for NVLink pairs, which are on already, and for a pair enabled
 * twice: uvm_va_space.c retain_pcie_peers_from_uuids, uvm_api_enable_peer_access). A pair
 * without any link: NV_ERR_NOT_SUPPORTED (our choice). */
static uint32_t
emu_uvm_enable_peer(struct emu_rm_file *u, const struct emu_uvm_enable_peer_access *p)
{
    bool a_own = emu_uvm_uuid_ok(u->rm, p->gpuUuidA), b_own = emu_uvm_uuid_ok(u->rm, p->gpuUuidB);
    int i = a_own ? emu_uvm_peer_find(u, p->gpuUuidB) : b_own ? emu_uvm_peer_find(u, p->gpuUuidA) : -1;
    if (a_own == b_own || !u->gpu_registered || i < 0)
        return NV_ERR_INVALID_DEVICE;
    if (u->peers[i].link == EMU_P2P_NONE)
        return NV_ERR_NOT_SUPPORTED;
    if (u->peers[i].link != EMU_P2P_PCIE || u->peers[i].enabled)
        return NV_ERR_INVALID_DEVICE;
    u->peers[i].enabled = true;
    return NV_OK;
}

/* The memory of a UVM_MAP_EXTERNAL_ALLOCATION whose control fd is another GPU's: its video
 * memory only with that GPU registered here and peer access on (uvm_map_external.c: the
 * owning GPU must be in the VA space, then uvm_va_space_peer_enabled, else
 * NV_ERR_INVALID_DEVICE). *bo_out holds a reference. */
static uint32_t
emu_uvm_peer_mem(struct emu_rm_file *u, const struct emu_uvm_map_external *p, struct emu_bo **bo_out)
{
    bool vidmem = false;
    uint8_t uuid[16];
    int e = emu_rm_peer_mem(u->rm, p->rmCtrlFd, p->hClient, p->hMemory, bo_out, &vidmem, uuid);
    if (e == -EAGAIN)
        return EMU_UVM_RETRY;
    if (e < 0)
        return NV_ERR_OBJECT_NOT_FOUND;
    int i = emu_uvm_peer_find(u, uuid);
    if (vidmem && (i < 0 || !u->peers[i].enabled)) {
        emu_bo_unref(*bo_out);
        *bo_out = NULL;
        return NV_ERR_INVALID_DEVICE;
    }
    return NV_OK;
}

static uint32_t
emu_uvm_run(struct emu_rm_file *u, unsigned long req, void *arg)
{
    struct emu_rm *rm = u->rm;
    if (req == UVM_INITIALIZE) {
        if (u->uvm_init)
            return NV_ERR_INVALID_STATE;
        u->uvm_init = true;
        return NV_OK;
    }
    if (req == UVM_MM_INITIALIZE) {
        /* issued on a second fd, naming the first (rm.md §2 step 4); tinygrad ignores failures */
        struct emu_uvm_mm_initialize *p = arg;
        struct emu_rm_file *first = emu_rm_file_of_fd(rm, p->uvmFd, EMU_RM_UVM);
        return first && first->uvm_init && first != u ? NV_OK : NV_ERR_INVALID_ARGUMENT;
    }
    if (!u->uvm_init)
        return NV_ERR_INVALID_STATE; /* every other UVM call needs UVM_INITIALIZE first */
    switch (req) {
    case UVM_DEINITIALIZE:
        return NV_OK;
    case UVM_REGISTER_GPU: {
        struct emu_uvm_register_gpu *p = arg;
        if (p->rmCtrlFd != -1 && !emu_rm_file_of_fd(rm, p->rmCtrlFd, EMU_RM_CTL))
            return NV_ERR_INVALID_ARGUMENT;
        if (!emu_uvm_uuid_ok(rm, p->uuid)) {
            uint32_t st = emu_uvm_register_peer(u, p->uuid);
            if (st == NV_OK) {
                p->numaEnabled = 0;
                p->numaNodeId = -1;
            }
            return st;
        }
        u->gpu_registered = true;
        for (uint32_t i = 0; i < u->peer_count; i++) /* NVLink peers registered before us */
            u->peers[i].enabled |= u->peers[i].link == EMU_P2P_NVLINK;
        p->numaEnabled = 0;
        p->numaNodeId = -1;
        return NV_OK;
    }
    case UVM_REGISTER_GPU_VASPACE: {
        struct emu_uvm_register_gpu_vaspace *p = arg;
        if (!emu_uvm_uuid_ok(rm, p->uuid) || !u->gpu_registered)
            return NV_ERR_INVALID_DEVICE; /* the GPU must be registered before its VA space */
        struct emu_rm_file *ctl = emu_rm_file_of_fd(rm, p->rmCtrlFd, EMU_RM_CTL);
        struct emu_rm_obj *vas = emu_rm_obj_find(rm, p->hClient, p->hVaSpace);
        if (!ctl || !vas || vas->cls != FERMI_VASPACE_A || vas->owner != ctl)
            return NV_ERR_INVALID_OBJECT_HANDLE;
        if (!(vas->va_flags & NV_VASPACE_ALLOCATION_FLAGS_IS_EXTERNALLY_OWNED))
            return NV_ERR_INVALID_ARGUMENT; /* UVM manages only externally owned VA spaces */
        if (u->uvm_vas)
            return NV_ERR_INVALID_STATE;
        u->uvm_vas = vas;
        return NV_OK;
    }
    case UVM_CREATE_EXTERNAL_RANGE: {
        struct emu_uvm_range *p = arg;
        return emu_uvm_range_add(u, p->base, p->length, false);
    }
    case UVM_MAP_EXTERNAL_ALLOCATION: {
        struct emu_uvm_map_external *p = arg;
        if (!u->uvm_vas)
            return NV_ERR_INVALID_DEVICE; /* no registered VA space to map into */
        if (p->gpuAttributesCount == 0 || p->gpuAttributesCount > 256)
            return NV_ERR_INVALID_ARGUMENT;
        for (uint64_t i = 0; i < p->gpuAttributesCount; i++)
            if (!emu_uvm_uuid_ok(rm, p->perGpuAttributes[i].uuid) ||
                p->perGpuAttributes[i].gpuMappingType > 3)
                return NV_ERR_INVALID_DEVICE;
        struct emu_rm_range *r = emu_uvm_range_find(u, p->base, p->length);
        if (!r || r->channel || (p->base & 4095) || (p->length & 4095) || !p->length)
            return NV_ERR_INVALID_ADDRESS; /* must lie inside a UVM_CREATE_EXTERNAL_RANGE */
        struct emu_rm_file *ctl = emu_rm_file_of_fd(rm, p->rmCtrlFd, EMU_RM_CTL);
        struct emu_bo *bo = NULL;
        if (ctl) { /* our own GPU's memory */
            struct emu_rm_obj *mem = emu_rm_obj_find(rm, p->hClient, p->hMemory);
            if (!mem || !mem->bo || mem->owner != ctl || mem->bo == rm->usermode_bo)
                return NV_ERR_OBJECT_NOT_FOUND;
            bo = mem->bo;
            emu_bo_ref(bo);
        } else { /* another GPU's: UVM dups it, so the pages live as long as the mapping */
            uint32_t st = emu_uvm_peer_mem(u, p, &bo);
            if (st != NV_OK)
                return st;
        }
        int e = (p->offset + p->length > emu_bo_size(bo) || (p->offset & 4095))
                    ? -ERANGE
                    : emu_vm_map(u->uvm_vas->vm, p->base, p->length, bo, p->offset);
        emu_bo_unref(bo); /* the mapping holds its own reference */
        return e == 0         ? NV_OK
               : e == -ERANGE ? NV_ERR_INVALID_LIMIT
               : e == -EEXIST ? NV_ERR_UVM_ADDRESS_IN_USE
                              : NV_ERR_INVALID_ADDRESS;
    }
    case UVM_UNMAP_EXTERNAL: {
        struct emu_uvm_unmap_external *p = arg;
        if (!u->uvm_vas || emu_vm_unmap(u->uvm_vas->vm, p->base, p->length) < 0)
            return NV_ERR_INVALID_ADDRESS;
        return NV_OK;
    }
    case UVM_FREE: {
        struct emu_uvm_range *p = arg;
        for (uint32_t i = 0; i < u->range_count; i++) {
            if (u->ranges[i].base == p->base && !u->ranges[i].channel) {
                emu_uvm_unmap_range(u, u->ranges[i].base, u->ranges[i].length);
                u->ranges[i] = u->ranges[--u->range_count];
                return NV_OK;
            }
        }
        return NV_ERR_INVALID_ADDRESS;
    }
    case UVM_REGISTER_CHANNEL: {
        struct emu_uvm_register_channel *p = arg;
        if (!emu_uvm_uuid_ok(rm, p->uuid) || !u->gpu_registered)
            return NV_ERR_INVALID_DEVICE;
        struct emu_rm_file *ctl = emu_rm_file_of_fd(rm, p->rmCtrlFd, EMU_RM_CTL);
        struct emu_rm_obj *ch = emu_rm_obj_find(rm, p->hClient, p->hChannel);
        if (!ctl || !ch || !ch->ch || ch->owner != ctl)
            return NV_ERR_INVALID_OBJECT_HANDLE;
        if (!u->uvm_vas || u->uvm_vas->handle != ch->h_vaspace)
            return NV_ERR_INVALID_STATE; /* the channel's VA space must be registered first */
        if (ch->uvm_registered)
            return NV_ERR_INVALID_STATE;
        uint32_t st = emu_uvm_range_add(u, p->base, p->length, true);
        if (st != NV_OK)
            return st;
        ch->uvm_registered = true;
        emu_rm_channel_update(rm, ch);
        return NV_OK;
    }
    case UVM_ENABLE_PEER_ACCESS:
        return emu_uvm_enable_peer(u, arg);
    default:
        return NV_ERR_NOT_SUPPORTED;
    }
}

int
emu_uvm_ioctl(struct emu_rm_file *u, unsigned long req, void *arg)
{
    struct emu_dev *d = u->rm->d;
    const char *name = emu_uvm_name(req);
    if (!name || !arg) {
        emu_trace(d, "uvm ioctl 0x%lx -> EINVAL", req);
        return -EINVAL;
    }
    uint32_t st = emu_inject_ioctl(d, name, req) ? NV_ERR_GENERIC : emu_uvm_run(u, req, arg);
    if (st == EMU_UVM_RETRY)
        return -EAGAIN;
    if (req != UVM_DEINITIALIZE)
        memcpy((uint8_t *)arg + emu_uvm_status_off(req), &st, 4);
    if (req == UVM_MAP_EXTERNAL_ALLOCATION || req == UVM_CREATE_EXTERNAL_RANGE || req == UVM_FREE)
        emu_trace(d, "%s len=0x%llx -> %s", name, (unsigned long long)((uint64_t *)arg)[1],
                  emu_rm_status_name(st));
    else
        emu_trace(d, "%s -> %s", name, emu_rm_status_name(st));
    return 0;
}

void
emu_uvm_release(struct emu_rm_file *u)
{
    /* closing the UVM fd tears down its VA space's external mappings */
    for (uint32_t i = 0; i < u->range_count; i++)
        if (!u->ranges[i].channel)
            emu_uvm_unmap_range(u, u->ranges[i].base, u->ranges[i].length);
    for (uint32_t i = 0; i < u->rm->obj_count; i++) {
        struct emu_rm_obj *o = u->rm->objs[i];
        if (o->ch && o->uvm_registered && u->uvm_vas && o->h_vaspace == u->uvm_vas->handle) {
            o->uvm_registered = false;
            emu_rm_channel_update(u->rm, o);
        }
    }
    u->range_count = 0;
}
