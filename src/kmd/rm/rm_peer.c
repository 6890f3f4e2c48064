/* SPDX-License-Identifier: MIT */
/*
 * rm_peer.c - peer-to-peer on RM: video memory of another GPU (another rm kmd of this
 * process) mapped into this kmd's GPU VA space, so copies and kernels of this GPU reach it
 * directly over NVLink or PCIe instead of being staged through host memory. Layer: kmd.
 *
 * Our channels see the VA space UVM manages (rm.md §2 step 14, §3.5), so the mapping is
 * UVM's, as tinygrad does it ("mapping an existing allocation on a peer GPU: step 3 only,
 * with that GPU's uuid", rm.md §3.5). UVM maps another GPU's video memory only when that
 * GPU is registered in the same UVM VA space and peer access between the two is on there
 * (open-gpu-kernel-modules uvm_map_external.c: the owning GPU must be found in the VA space,
 * else NV_ERR_INVALID_DEVICE; then uvm_va_space_peer_enabled). UVM creates the RM P2P
 * objects (NV50_P2P) of the pair itself when it brings the peers up. Per pair, once:
 *   1. NV0000_CTRL_CMD_SYSTEM_GET_P2P_CAPS_V2 on our client for {our GPU, the owner}:
 *      reads and writes must be supported, else HCQ_ERR_UNSUPPORTED naming RM's status.
 *   2. UVM_REGISTER_GPU(owner's UUID) on our UVM fd. For NVLink (and BAR1 or C2C) peers
 *      UVM turns peer access on here by itself (uvm_va_space.c, "NVLink and BAR1 peers are
 *      automatically enabled in the VA space at VA space registration time").
 *   3. PCIe peers only: UVM_ENABLE_PEER_ACCESS(ours, owner's) - UVM refuses it for the
 *      other link types (rm_abi.h).
 * Per buffer: a VA from our high heap, UVM_CREATE_EXTERNAL_RANGE, UVM_MAP_EXTERNAL_ALLOCATION
 * naming the owner's control fd, client and memory handle with our GPU's UUID (UVM dups the
 * owner's memory, so the pages stay alive while our mapping does). Freed by rm_mem_release
 * (UVM_FREE, VA back); the pair's registration goes with our UVM fd when the kmd closes.
 *
 * On by default for NVLink pairs: two H100s over NVLink (NV18) passed the HCQ suite's pair
 * tests with every copy through the mapping, 367-376 GB/s for 64 MiB..1 GiB (CUDA 378-397),
 * 214 at 1 MiB (CUDA 94-161), 2026-11-25. PCIe/BAR1/C2C pairs have
 * run on the emulator only: opt-in (HCQ_RM_PEER=1). HCQ_RM_PEER=0 turns every pair off
 * (callers stage through host memory). docs/rm-backend.md "Peer mappings".
 */
#include "rm_priv.h"
#include "rm_status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RM_PEER_PAGE_B 0x1000ull
#define RM_PEER_BIG_PAGE_B 0x200000ull

/* NV0000_P2P_CAPS_STATUS_* names for messages. */
static const char *
rm_peer_caps_status_name(uint8_t st)
{
    switch (st) {
    case NV0000_P2P_CAPS_STATUS_OK:
        return "NV0000_P2P_CAPS_STATUS_OK";
    case NV0000_P2P_CAPS_STATUS_CHIPSET_NOT_SUPPORTED:
        return "NV0000_P2P_CAPS_STATUS_CHIPSET_NOT_SUPPORTED";
    case NV0000_P2P_CAPS_STATUS_GPU_NOT_SUPPORTED:
        return "NV0000_P2P_CAPS_STATUS_GPU_NOT_SUPPORTED";
    case NV0000_P2P_CAPS_STATUS_IOH_TOPOLOGY_NOT_SUPPORTED:
        return "NV0000_P2P_CAPS_STATUS_IOH_TOPOLOGY_NOT_SUPPORTED";
    case NV0000_P2P_CAPS_STATUS_DISABLED_BY_REGKEY:
        return "NV0000_P2P_CAPS_STATUS_DISABLED_BY_REGKEY";
    case NV0000_P2P_CAPS_STATUS_NOT_SUPPORTED:
        return "NV0000_P2P_CAPS_STATUS_NOT_SUPPORTED";
    default:
        return "unknown NV0000_P2P_CAPS_STATUS";
    }
}

/* Step 1: can k's GPU read and write the owner's memory? HCQ_OK with the caps, or
 * HCQ_ERR_UNSUPPORTED with why written (HCQ_ERR_DRIVER when the control itself fails). */
static enum hcq_status
rm_peer_caps(struct rm_kmd *k, const struct rm_kmd *o, uint32_t *caps_out, char *why, size_t why_B)
{
    NV0000_CTRL_SYSTEM_GET_P2P_CAPS_V2_PARAMS *p = calloc(1, sizeof *p);
    if (!p)
        return hcq_err(HCQ_ERR_NOMEM, "rm: P2P caps buffer");
    p->gpuIds[0] = k->gpu_id;
    p->gpuIds[1] = o->gpu_id;
    p->gpuCount = 2;
    enum hcq_status st = rm_control(k, k->hclient, NV0000_CTRL_CMD_SYSTEM_GET_P2P_CAPS_V2, p, sizeof *p,
                                    "NV0000_CTRL_CMD_SYSTEM_GET_P2P_CAPS_V2", false);
    if (st == HCQ_OK) {
        const uint32_t need = NV0000_CTRL_SYSTEM_GET_P2P_CAPS_READS_SUPPORTED |
                              NV0000_CTRL_SYSTEM_GET_P2P_CAPS_WRITES_SUPPORTED;
        *caps_out = p->p2pCaps;
        if ((p->p2pCaps & need) != need) {
            snprintf(why, why_B,
                     "RM reports no P2P between GPU 0x%x and 0x%x: p2pCaps 0x%x, read %s, write %s",
                     k->gpu_id, o->gpu_id, p->p2pCaps,
                     rm_peer_caps_status_name(p->p2pCapsStatus[NV0000_CTRL_P2P_CAPS_INDEX_READ]),
                     rm_peer_caps_status_name(p->p2pCapsStatus[NV0000_CTRL_P2P_CAPS_INDEX_WRITE]));
            st = HCQ_ERR_UNSUPPORTED;
        }
    }
    free(p);
    return st;
}

/* Steps 2-3 for the owner's GPU; the caller holds k->peer_lock. */
static enum hcq_status
rm_peer_enable(struct rm_kmd *k, const struct rm_kmd *o, uint32_t caps)
{
    UVM_REGISTER_GPU_PARAMS rg = {.rmCtrlFd = -1};
    memcpy(rg.gpu_uuid, o->uuid, sizeof o->uuid);
    enum hcq_status st = rm_uvm(k, k->fd_uvm, UVM_REGISTER_GPU, &rg, &rg.rmStatus, "UVM_REGISTER_GPU (peer)");
    if (st != HCQ_OK)
        return st;
    const uint32_t automatic = NV0000_CTRL_SYSTEM_GET_P2P_CAPS_NVLINK_SUPPORTED |
                               NV0000_CTRL_SYSTEM_GET_P2P_CAPS_PCI_BAR1_SUPPORTED |
                               NV0000_CTRL_SYSTEM_GET_P2P_CAPS_C2C_SUPPORTED;
    if (caps & automatic)
        return HCQ_OK;
    UVM_ENABLE_PEER_ACCESS_PARAMS pa = {0};
    memcpy(pa.gpuUuidA, k->uuid, sizeof k->uuid);
    memcpy(pa.gpuUuidB, o->uuid, sizeof o->uuid);
    return rm_uvm(k, k->fd_uvm, UVM_ENABLE_PEER_ACCESS, &pa, &pa.rmStatus, "UVM_ENABLE_PEER_ACCESS");
}

/* The pair (k, o) set up once: HCQ_OK when ready, else the first attempt's refusal again.
 * any_link: also links other than NVLink (PCIe, BAR1, C2C), which have not run on hardware;
 * without it such a pair is refused (not cached: the caps are, the setup is not tried). */
static enum hcq_status
rm_peer_get(struct rm_kmd *k, const struct rm_kmd *o, bool any_link)
{
    pthread_mutex_lock(&k->peer_lock);
    struct rm_peer *p = NULL;
    for (uint32_t i = 0; i < k->peer_count && !p; i++)
        if (k->peers[i].gpu_id == o->gpu_id && !memcmp(k->peers[i].uuid, o->uuid, sizeof o->uuid))
            p = &k->peers[i];
    enum hcq_status st = HCQ_OK;
    if (!p && k->peer_count == RM_PEER_MAX) {
        st = hcq_err_quiet(HCQ_ERR_UNSUPPORTED, "rm: more than %u peer GPUs", RM_PEER_MAX);
        goto out;
    }
    if (!p) {
        p = &k->peers[k->peer_count++];
        memset(p, 0, sizeof *p);
        p->gpu_id = o->gpu_id;
        memcpy(p->uuid, o->uuid, sizeof o->uuid);
        st = rm_peer_caps(k, o, &p->p2p_caps, p->refused, sizeof p->refused);
        if (st != HCQ_OK && !p->refused[0])
            snprintf(p->refused, sizeof p->refused, "peer caps query failed: %s", hcq_last_error());
    }
    const bool nvlink = (p->p2p_caps & NV0000_CTRL_SYSTEM_GET_P2P_CAPS_NVLINK_SUPPORTED) != 0;
    if (!p->ready && !p->refused[0] && !nvlink && !any_link) {
        st = hcq_err_quiet(
            HCQ_ERR_UNSUPPORTED,
            "rm: peer mappings over PCIe/BAR1/C2C are opt-in until they have run on such a GPU pair "
            "(HCQ_RM_PEER=1; NVLink pairs map by default)");
        goto out;
    }
    if (!p->ready && !p->refused[0]) {
        st = rm_peer_enable(k, o, p->p2p_caps);
        if (st == HCQ_OK) {
            p->ready = true;
            HCQ_LOG_INFO("rm: GPU 0x%x maps memory of GPU 0x%x over %s (p2pCaps 0x%x)", k->gpu_id, o->gpu_id,
                         nvlink ? "NVLink" : "PCIe", p->p2p_caps);
        } else {
            snprintf(p->refused, sizeof p->refused, "setting up peer access failed: %s", hcq_last_error());
        }
    }
    if (!p->ready)
        st = hcq_err_quiet(HCQ_ERR_UNSUPPORTED, "rm: %s", p->refused);
out:
    pthread_mutex_unlock(&k->peer_lock);
    return st;
}

/* Map the pages of o's memory m into k's UVM VA space at a fresh VA (the per-buffer steps). */
static enum hcq_status
rm_peer_mem_map(struct rm_kmd *k, const struct rm_kmd *o, const struct rm_mem *om, struct rm_mem *m)
{
    /* 2 MiB pages for allocations rm_mem_alloc_rm made with them (sizes in 2 MiB steps): a
     * VA of the same alignment lets UVM map big pages */
    uint64_t align = (om->base.size_B % RM_PEER_BIG_PAGE_B) == 0 ? RM_PEER_BIG_PAGE_B : RM_PEER_PAGE_B;
    enum hcq_status st = rm_mem_va(k, m, false, align);
    if (st != HCQ_OK)
        return st;
    UVM_CREATE_EXTERNAL_RANGE_PARAMS r = {.base = m->base.va, .length = m->base.size_B};
    st = rm_uvm(k, k->fd_uvm, UVM_CREATE_EXTERNAL_RANGE, &r, &r.rmStatus, "UVM_CREATE_EXTERNAL_RANGE (peer)");
    if (st != HCQ_OK)
        return st;
    m->uvm_range = true;
    UVM_MAP_EXTERNAL_ALLOCATION_PARAMS *x = calloc(1, sizeof *x);
    if (!x)
        return hcq_err(HCQ_ERR_NOMEM, "rm: UVM_MAP_EXTERNAL_ALLOCATION params");
    x->base = m->base.va;
    x->length = m->base.size_B;
    memcpy(x->perGpuAttributes[0].gpuUuid, k->uuid, sizeof k->uuid); /* the GPU that maps */
    x->perGpuAttributes[0].gpuMappingType = UVM_GPU_MAPPING_TYPE_READ_WRITE_ATOMIC;
    x->gpuAttributesCount = 1;
    x->rmCtrlFd = o->fd_ctl; /* the memory is the owner's: its control fd, client, handle */
    x->hClient = o->hclient;
    x->hMemory = om->hmem;
    st = rm_uvm(k, k->fd_uvm, UVM_MAP_EXTERNAL_ALLOCATION, x, &x->rmStatus,
                "UVM_MAP_EXTERNAL_ALLOCATION (peer)");
    free(x);
    if (st == HCQ_OK && (hcq_debug_flags() & HCQ_DEBUG_VM))
        HCQ_LOG_DEBUG("rm: peer map hMemory 0x%x of GPU 0x%x at GPU VA 0x%llx (0x%llx bytes)", om->hmem,
                      o->gpu_id, (unsigned long long)m->base.va, (unsigned long long)m->base.size_B);
    return st;
}

enum hcq_status
rm_peer_map(struct kmd *kmd, struct kmd *owner, struct kmd_mem *mem, struct kmd_mem **mem_out)
{
    *mem_out = NULL;
    const char *e = getenv("HCQ_RM_PEER");
    if (e && !strcmp(e, "0"))
        return hcq_err_quiet(HCQ_ERR_UNSUPPORTED, "rm: peer mappings are off (HCQ_RM_PEER=0)");
    const bool opted_in = e && !strcmp(e, "1"); /* also pairs not run on hardware yet */
    struct rm_kmd *k = rm_kmd_from(kmd), *o = rm_kmd_from(owner);
    const struct rm_mem *om = mem->priv;
    assert(om && &om->base == mem);
    if (k == o)
        return hcq_err(HCQ_ERR_INVALID, "rm_peer_map: the memory already belongs to this GPU");
    if (om->kind != RM_MEM_VIDMEM || !om->hmem)
        return hcq_err_quiet(HCQ_ERR_UNSUPPORTED,
                             "rm: peer mappings are for video memory (this is system memory)");
    /* one GPU opened twice (rm:0 beside rm:0): a mapping of its own memory through UVM was
     * never tried on hardware - such pairs stage through host memory as in the one-GPU pair
     * tests */
    if (!memcmp(k->uuid, o->uuid, sizeof k->uuid) && !opted_in)
        return hcq_err_quiet(HCQ_ERR_UNSUPPORTED,
                             "rm: both devices are the same GPU (HCQ_RM_PEER=1 maps anyway)");
    enum hcq_status st = rm_peer_get(k, o, opted_in);
    if (st != HCQ_OK)
        return st;
    struct rm_mem *m = calloc(1, sizeof *m);
    if (!m)
        return hcq_err(HCQ_ERR_NOMEM, "rm: mem object");
    m->kind = RM_MEM_PEER;
    m->base.size_B = om->base.size_B;
    m->base.flags = om->base.flags & ~(uint32_t)KMD_MEM_CPU_MAP; /* no CPU view through this GPU */
    if ((st = rm_peer_mem_map(k, o, om, m)) != HCQ_OK) {
        rm_mem_release(k, m);
        return st;
    }
    rm_mem_publish(k, m); /* handle 0: the mapping holds no RM object of ours */
    *mem_out = &m->base;
    return HCQ_OK;
}
