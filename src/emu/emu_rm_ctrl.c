/* SPDX-License-Identifier: MIT */
/*
 * emu_rm_ctrl.c - NV_ESC_RM_CONTROL of the emulated RM: the controls rm.md lists (build
 * version, GPU id, class list, GID, GR info and masks, perf boost, TSG schedule, work
 * submit token) and the engine list with copy-engine caps and PCE masks, each checked for its object class
 * and exact parameter size as RM does (NV_ERR_INVALID_PARAM_STRUCT on a size mismatch). Layer: emu.
 */
#include "emu_rm_priv.h"

#include <stdio.h>
#include <string.h>

struct emu_rm_ctrl_def {
    uint32_t cmd;
    const char *name;
    uint32_t params_B;
};

static const struct emu_rm_ctrl_def emu_rm_ctrls[] = {
    {NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2, "NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2",
     sizeof(struct emu_nv0000_build_version)},
    {NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2, "NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2",
     sizeof(struct emu_nv0000_id_info)},
    {NV0000_CTRL_CMD_SYSTEM_GET_P2P_CAPS_V2, "NV0000_CTRL_CMD_SYSTEM_GET_P2P_CAPS_V2",
     sizeof(struct emu_nv0000_p2p_caps_v2)},
    {NV0080_CTRL_CMD_GPU_GET_CLASSLIST, "NV0080_CTRL_CMD_GPU_GET_CLASSLIST",
     sizeof(struct emu_nv0080_classlist)},
    {NV2080_CTRL_CMD_PERF_BOOST, "NV2080_CTRL_CMD_PERF_BOOST", sizeof(struct emu_nv2080_perf_boost)},
    {NV2080_CTRL_CMD_GPU_GET_GID_INFO, "NV2080_CTRL_CMD_GPU_GET_GID_INFO",
     sizeof(struct emu_nv2080_gid_info)},
    {NV2080_CTRL_CMD_GR_GET_INFO, "NV2080_CTRL_CMD_GR_GET_INFO", sizeof(struct emu_nv2080_gr_info)},
    {NV2080_CTRL_CMD_GR_GET_GPC_MASK, "NV2080_CTRL_CMD_GR_GET_GPC_MASK", sizeof(struct emu_nv2080_gpc_mask)},
    {NV2080_CTRL_CMD_GR_GET_TPC_MASK, "NV2080_CTRL_CMD_GR_GET_TPC_MASK", sizeof(struct emu_nv2080_tpc_mask)},
    {NVA06C_CTRL_CMD_GPFIFO_SCHEDULE, "NVA06C_CTRL_CMD_GPFIFO_SCHEDULE", sizeof(struct emu_nva06c_schedule)},
    {NVA06F_CTRL_CMD_GPFIFO_SCHEDULE, "NVA06F_CTRL_CMD_GPFIFO_SCHEDULE", sizeof(struct emu_nva06c_schedule)},
    {NVA06F_CTRL_CMD_BIND, "NVA06F_CTRL_CMD_BIND", sizeof(struct emu_nva06f_bind)},
    {NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN, "NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN",
     sizeof(struct emu_nvc36f_token)},
    {NV2080_CTRL_CMD_GPU_GET_NAME_STRING, "NV2080_CTRL_CMD_GPU_GET_NAME_STRING",
     sizeof(struct emu_nv2080_name)},
    {NV2080_CTRL_CMD_FB_GET_INFO, "NV2080_CTRL_CMD_FB_GET_INFO", sizeof(struct emu_nv2080_fb_info)},
    {NV2080_CTRL_CMD_GPU_GET_ENGINES_V2, "NV2080_CTRL_CMD_GPU_GET_ENGINES_V2",
     sizeof(struct emu_nv2080_engines)},
    {NV2080_CTRL_CMD_CE_GET_CAPS_V2, "NV2080_CTRL_CMD_CE_GET_CAPS_V2", sizeof(struct emu_nv2080_ce_caps)},
    {NV2080_CTRL_CMD_CE_GET_CE_PCE_MASK, "NV2080_CTRL_CMD_CE_GET_CE_PCE_MASK",
     sizeof(struct emu_nv2080_ce_pce_mask)},
};

/* The object class a control's interface belongs to: bits 31:16 of the command name the
 * class (0x0000 client, 0x0080 device, 0x2080 subdevice, 0xA06C TSG, 0xA06F/0xC36F any
 * channel). */
static bool
emu_rm_ctrl_class_ok(uint32_t cmd, uint32_t cls)
{
    uint32_t iface = cmd >> 16;
    switch (iface) {
    case 0x0000:
        return cls == NV01_ROOT_CLIENT;
    case 0x0080:
        return cls == NV01_DEVICE_0;
    case 0x2080:
        return cls == NV20_SUBDEVICE_0;
    case 0xA06C:
        return cls == KEPLER_CHANNEL_GROUP_A;
    case 0xA06F:
    case 0xC36F:
        return cls == AMPERE_CHANNEL_GPFIFO_A || cls == HOPPER_CHANNEL_GPFIFO_A;
    default:
        return false;
    }
}

static uint32_t
emu_rm_gr_info(struct emu_rm *rm, uint32_t index, uint32_t *data)
{
    uint32_t tpcs = rm->gpcs * (uint32_t)__builtin_popcount(rm->tpc_mask);
    uint32_t sms = tpcs * 2;
    switch (index) {
    case NV2080_CTRL_GR_INFO_INDEX_SHADER_PIPE_COUNT:
        *data = rm->gpcs;
        break; /* measured: GPCs (§8.4) */
    case NV2080_CTRL_GR_INFO_INDEX_THREAD_STACK_SCALING_FACTOR:
        *data = sms;
        break;
    case NV2080_CTRL_GR_INFO_INDEX_SHADER_PIPE_SUB_COUNT:
        *data = tpcs;
        break;
    case NV2080_CTRL_GR_INFO_INDEX_SM_VERSION:
        *data = rm->sm_version_code;
        break;
    case NV2080_CTRL_GR_INFO_INDEX_MAX_WARPS_PER_SM:
        *data = rm->max_warps_per_sm;
        break;
    case NV2080_CTRL_GR_INFO_INDEX_MAX_THREADS_PER_WARP:
        *data = 32;
        break;
    case NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_GPCS:
        *data = rm->litter_gpcs;
        break;
    case NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_TPC_PER_GPC:
        *data = rm->litter_tpc_per_gpc;
        break;
    case NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_SM_PER_TPC:
        *data = 2;
        break;
    case NV2080_CTRL_GR_INFO_INDEX_GPU_CORE_COUNT:
        *data = sms * 128;
        break;
    case NV2080_CTRL_GR_INFO_INDEX_MAX_SUBCONTEXT_COUNT:
        *data = 64;
        break;
    default:
        return NV_ERR_INVALID_ARGUMENT;
    }
    return NV_OK;
}

/* P2P caps of a group of this process's emulated GPUs (docs/emulator.md "Peers"): the
 * weakest link of any pair decides. NVLink: reads, writes, atomics over NVLink; PCIe: reads
 * and writes over PCI; none (p2p=none, or different chips): nothing, every status
 * NOT_SUPPORTED. Peer ids: 0 for every pair that has a link (our
 * choice). A group of one GPU, or an id of no GPU, is NV_ERR_INVALID_ARGUMENT (our choice). */
static uint32_t
emu_rm_p2p_caps(struct emu_rm *rm, struct emu_nv0000_p2p_caps_v2 *p)
{
    uint32_t n = p->gpuCount;
    if (n < 2 || n > NV0000_CTRL_SYSTEM_MAX_P2P_GROUP_GPUS)
        return NV_ERR_INVALID_ARGUMENT;
    enum emu_p2p link = EMU_P2P_NVLINK;
    for (uint32_t i = 0; i < n; i++) {
        enum emu_p2p l = EMU_P2P_NVLINK;
        if (p->gpuIds[i] == rm->gpu_id)
            continue;
        if (!emu_rm_peer_by_gpu_id(rm, p->gpuIds[i], &l))
            return NV_ERR_INVALID_ARGUMENT;
        link = l > link ? l : link;
    }
    memset(p->p2pCapsStatus, 0, sizeof p->p2pCapsStatus);
    memset(p->busPeerIds, 0xFF, sizeof p->busPeerIds);
    memset(p->busEgmPeerIds, 0xFF, sizeof p->busEgmPeerIds);
    p->p2pOptimalReadCEs = p->p2pOptimalWriteCEs = 0;
    if (link == EMU_P2P_NONE) {
        p->p2pCaps = 0;
        memset(p->p2pCapsStatus, NV0000_P2P_CAPS_STATUS_NOT_SUPPORTED, sizeof p->p2pCapsStatus);
        return NV_OK;
    }
    p->p2pCaps = NV0000_CTRL_SYSTEM_GET_P2P_CAPS_READS_SUPPORTED |
                 NV0000_CTRL_SYSTEM_GET_P2P_CAPS_WRITES_SUPPORTED |
                 (link == EMU_P2P_NVLINK ? NV0000_CTRL_SYSTEM_GET_P2P_CAPS_NVLINK_SUPPORTED |
                                               NV0000_CTRL_SYSTEM_GET_P2P_CAPS_ATOMICS_SUPPORTED
                                         : NV0000_CTRL_SYSTEM_GET_P2P_CAPS_PCI_SUPPORTED);
    for (uint32_t x = 0; x < n; x++)
        for (uint32_t y = 0; y < n; y++)
            if (x != y)
                p->busPeerIds[x * n + y] = 0;
    return NV_OK;
}

static uint32_t
emu_rm_ctrl_run(struct emu_rm *rm, struct emu_rm_obj *o, uint32_t cmd, void *params)
{
    switch (cmd) {
    case NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2: {
        struct emu_nv0000_build_version *p = params;
        memset(p, 0, sizeof *p);
        snprintf(p->driverVersionBuffer, sizeof p->driverVersionBuffer, "580.159.04");
        snprintf(p->versionBuffer, sizeof p->versionBuffer, "580.159.04");
        snprintf(p->driverBranch, sizeof p->driverBranch, "r580_00");
        snprintf(p->titleBuffer, sizeof p->titleBuffer, "nvhcq emulated RM");
        return NV_OK;
    }
    case NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2: {
        struct emu_nv0000_id_info *p = params;
        if (p->gpuId != rm->gpu_id)
            return NV_ERR_INVALID_ARGUMENT;
        p->deviceInstance = 0;
        p->subDeviceInstance = 0;
        p->numaId = -1;
        return NV_OK;
    }
    case NV0000_CTRL_CMD_SYSTEM_GET_P2P_CAPS_V2:
        return emu_rm_p2p_caps(rm, params);
    case NV0080_CTRL_CMD_GPU_GET_CLASSLIST: {
        struct emu_nv0080_classlist *p = params;
        if (p->numClasses == 0 && p->classList == 0) { /* first call: the count (rm.md §2 step 11) */
            p->numClasses = rm->class_count;
            return NV_OK;
        }
        if (!p->classList)
            return NV_ERR_INVALID_ARGUMENT;
        if (p->numClasses < rm->class_count)
            return NV_ERR_INVALID_PARAM_STRUCT;
        memcpy((void *)(uintptr_t)p->classList, rm->classes, rm->class_count * sizeof(uint32_t));
        p->numClasses = rm->class_count;
        return NV_OK;
    }
    case NV2080_CTRL_CMD_PERF_BOOST:
        return NV_OK;
    case NV2080_CTRL_CMD_GPU_GET_GID_INFO: {
        struct emu_nv2080_gid_info *p = params;
        if (p->flags != 2) /* FORMAT_BINARY is the only format modelled */
            return NV_ERR_NOT_SUPPORTED;
        p->length = 16;
        memcpy(p->data, rm->uuid, 16);
        return NV_OK;
    }
    case NV2080_CTRL_CMD_GR_GET_INFO: {
        struct emu_nv2080_gr_info *p = params;
        struct emu_nv2080_gr_info_item *it = (void *)(uintptr_t)p->grInfoList;
        if (!it || p->grInfoListSize == 0 || p->grInfoListSize > 256)
            return NV_ERR_INVALID_ARGUMENT;
        for (uint32_t i = 0; i < p->grInfoListSize; i++)
            if (emu_rm_gr_info(rm, it[i].index, &it[i].data) != NV_OK)
                return NV_ERR_INVALID_ARGUMENT;
        return NV_OK;
    }
    case NV2080_CTRL_CMD_GR_GET_GPC_MASK: {
        struct emu_nv2080_gpc_mask *p = params;
        p->gpcMask = (1u << rm->gpcs) - 1;
        return NV_OK;
    }
    case NV2080_CTRL_CMD_GR_GET_TPC_MASK: {
        struct emu_nv2080_tpc_mask *p = params;
        if (p->gpcId >= rm->gpcs)
            return NV_ERR_INVALID_ARGUMENT;
        p->tpcMask = rm->tpc_mask;
        return NV_OK;
    }
    case NVA06C_CTRL_CMD_GPFIFO_SCHEDULE:
    case NVA06F_CTRL_CMD_GPFIFO_SCHEDULE: {
        struct emu_nva06c_schedule *p = params;
        if (cmd == NVA06F_CTRL_CMD_GPFIFO_SCHEDULE && o->h_tsg)
            return NV_ERR_NOT_SUPPORTED; /* channels in a TSG are scheduled through the TSG */
        o->scheduled = p->bEnable != 0;
        for (uint32_t i = 0; i < rm->obj_count; i++) {
            struct emu_rm_obj *c = rm->objs[i];
            if (c->ch && c->client == o->client && (c == o || c->h_tsg == o->handle))
                emu_rm_channel_update(rm, c);
        }
        return NV_OK;
    }
    case NVA06F_CTRL_CMD_BIND: {
        struct emu_nva06f_bind *p = params;
        return p->engineType == NV2080_ENGINE_TYPE_GRAPHICS || p->engineType != 0 ? NV_OK
                                                                                  : NV_ERR_INVALID_ARGUMENT;
    }
    case NV2080_CTRL_CMD_GPU_GET_NAME_STRING: {
        struct emu_nv2080_name *p = params;
        if (p->gpuNameStringFlags != 0)
            return NV_ERR_INVALID_ARGUMENT; /* ASCII only */
        memset(p->ascii, 0, sizeof p->ascii);
        snprintf((char *)p->ascii, sizeof p->ascii, "%s",
                 rm->sm_version_code == 0x900 ? "NVIDIA H100 80GB HBM3" : "NVIDIA GeForce RTX 3090");
        return NV_OK;
    }
    case NV2080_CTRL_CMD_FB_GET_INFO: {
        struct emu_nv2080_fb_info *p = params;
        struct emu_nv2080_gr_info_item *it = (void *)(uintptr_t)p->fbInfoList;
        if (!it || p->fbInfoListSize == 0 || p->fbInfoListSize > 256)
            return NV_ERR_INVALID_ARGUMENT;
        for (uint32_t i = 0; i < p->fbInfoListSize; i++) {
            if (it[i].index == NV2080_CTRL_FB_INFO_INDEX_TOTAL_RAM_SIZE)
                it[i].data = (uint32_t)(rm->vram_B >> 10); /* KiB */
            else if (it[i].index == NV2080_CTRL_FB_INFO_INDEX_HEAP_FREE)
                it[i].data = (uint32_t)((rm->vram_B - rm->vram_used_B) >> 10);
            else
                return NV_ERR_INVALID_ARGUMENT;
        }
        return NV_OK;
    }
    case NV2080_CTRL_CMD_GPU_GET_ENGINES_V2: {
        struct emu_nv2080_engines *p = params;
        memset(p, 0, sizeof *p);
        p->engineCount = rm->engine_count;
        memcpy(p->engineList, rm->engines, rm->engine_count * sizeof rm->engines[0]);
        return NV_OK;
    }
    case NV2080_CTRL_CMD_CE_GET_CAPS_V2: {
        struct emu_nv2080_ce_caps *p = params;
        int i = emu_rm_ce_index(rm, p->ceEngineType);
        if (i < 0)
            return NV_ERR_INVALID_ARGUMENT; /* not a copy engine of this GPU */
        memcpy(p->capsTbl, rm->ce_caps[i], 2);
        return NV_OK;
    }
    case NV2080_CTRL_CMD_CE_GET_CE_PCE_MASK: {
        struct emu_nv2080_ce_pce_mask *p = params;
        int i = emu_rm_ce_index(rm, p->ceEngineType);
        if (i < 0)
            return NV_ERR_INVALID_ARGUMENT;
        p->pceMask = rm->ce_pce_mask[i];
        return NV_OK;
    }
    case NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN: {
        struct emu_nvc36f_token *p = params;
        p->workSubmitToken = o->token;
        return NV_OK;
    }
    default:
        return NV_ERR_NOT_SUPPORTED;
    }
}

uint32_t
emu_rm_control(struct emu_rm *rm, struct emu_rm_file *file, struct emu_nvos54 *p)
{
    const struct emu_rm_ctrl_def *def = NULL;
    for (size_t i = 0; i < sizeof emu_rm_ctrls / sizeof emu_rm_ctrls[0]; i++)
        if (emu_rm_ctrls[i].cmd == p->cmd)
            def = &emu_rm_ctrls[i];
    struct emu_rm_obj *client = emu_rm_obj_find(rm, p->hClient, p->hClient);
    struct emu_rm_obj *o = emu_rm_obj_find(rm, p->hClient, p->hObject);
    uint32_t st;
    char num[16];
    snprintf(num, sizeof num, "0x%x", p->cmd);
    if (emu_inject_ioctl(rm->d, def ? def->name : num, p->cmd))
        st = NV_ERR_GENERIC;
    else if (!client || client->cls != NV01_ROOT_CLIENT || client->owner != file || !o)
        st = NV_ERR_INVALID_OBJECT_HANDLE;
    else if (!def)
        st = NV_ERR_NOT_SUPPORTED;
    else if (!emu_rm_ctrl_class_ok(p->cmd, o->cls))
        st = NV_ERR_NOT_SUPPORTED; /* the object's class does not export this control */
    else if (p->paramsSize != def->params_B)
        st = NV_ERR_INVALID_PARAM_STRUCT;
    else if (!p->params)
        st = NV_ERR_INVALID_ARGUMENT;
    else
        st = emu_rm_ctrl_run(rm, o, p->cmd, (void *)(uintptr_t)p->params);
    p->status = st;
    if (def)
        emu_trace(rm->d, "NV_ESC_RM_CONTROL %s on %s -> %s", def->name, o ? emu_rm_class_name(o->cls) : "?",
                  emu_rm_status_name(st));
    else
        emu_trace(rm->d, "NV_ESC_RM_CONTROL 0x%x on %s -> %s", p->cmd, o ? emu_rm_class_name(o->cls) : "?",
                  emu_rm_status_name(st));
    return st;
}
