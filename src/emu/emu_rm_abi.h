/* SPDX-License-Identifier: MIT */
/*
 * emu_rm_abi.h - the RM/UVM ABI as the emulated driver sees it (driver branch 580, x86-64
 * and aarch64 natural alignment): escape numbers, parameter structs, classes, controls
 * and NV_STATUS codes. Written from docs/hw/rm.md (sections cited per block); the emulator
 * keeps its own copy on purpose, so a layout mistake in kmd/rm is caught by a disagreeing
 * model rather than shared by it: nothing here may be replaced by an include of
 * src/kmd/rm/rm_abi.h. (What the two do share is only text: the class and NV_STATUS names
 * of src/kmd/rm/rm_status.c, printed in traces; a name cannot hide a layout mistake.)
 * Layer: emu.
 */
#ifndef EMU_RM_ABI_H
#define EMU_RM_ABI_H

#include <stddef.h>
#include <stdint.h>

/* ==== Escapes (rm.md §1.2) ==== */

#define NV_IOCTL_MAGIC 'F'
#define NV_IOCTL_BASE 200
#define NV_ESC_CARD_INFO (NV_IOCTL_BASE + 0)
#define NV_ESC_REGISTER_FD (NV_IOCTL_BASE + 1)
#define NV_ESC_ALLOC_OS_EVENT (NV_IOCTL_BASE + 6)
#define NV_ESC_FREE_OS_EVENT (NV_IOCTL_BASE + 7)
#define NV_ESC_STATUS_CODE (NV_IOCTL_BASE + 9)
#define NV_ESC_CHECK_VERSION_STR (NV_IOCTL_BASE + 10)
#define NV_ESC_IOCTL_XFER_CMD (NV_IOCTL_BASE + 11)
#define NV_ESC_SYS_PARAMS (NV_IOCTL_BASE + 14)
#define NV_ESC_WAIT_OPEN_COMPLETE (NV_IOCTL_BASE + 18)
#define NV_ESC_RM_ALLOC_MEMORY 0x27
#define NV_ESC_RM_ALLOC_OBJECT 0x28
#define NV_ESC_RM_FREE 0x29
#define NV_ESC_RM_CONTROL 0x2A
#define NV_ESC_RM_ALLOC 0x2B
#define NV_ESC_RM_DUP_OBJECT 0x34
#define NV_ESC_RM_SHARE 0x35
#define NV_ESC_RM_IDLE_CHANNELS 0x41
#define NV_ESC_RM_VID_HEAP_CONTROL 0x4A
#define NV_ESC_RM_MAP_MEMORY 0x4E
#define NV_ESC_RM_UNMAP_MEMORY 0x4F
#define NV_ESC_RM_MAP_MEMORY_DMA 0x57
#define NV_ESC_RM_UNMAP_MEMORY_DMA 0x58

/* _IOWR('F', nr, size): 0xC0000000 | size << 16 | 'F' << 8 | nr (rm.md §1.2) */
#define EMU_RM_IOC_NR(req) ((uint32_t)(req)&0xFFu)
#define EMU_RM_IOC_TYPE(req) (((uint32_t)(req) >> 8) & 0xFFu)
#define EMU_RM_IOC_SIZE(req) (((uint32_t)(req) >> 16) & 0x3FFFu)
#define EMU_RM_IOC_DIR(req) (((uint32_t)(req) >> 30) & 3u)

/* ==== NV_STATUS (rm.md §1.5) ==== */

#define NV_OK 0x00u
#define NV_ERR_INSUFFICIENT_RESOURCES 0x1Au
#define NV_ERR_INSUFFICIENT_PERMISSIONS 0x1Bu
#define NV_ERR_INVALID_ADDRESS 0x1Eu
#define NV_ERR_INVALID_ARGUMENT 0x1Fu
#define NV_ERR_INVALID_CLASS 0x22u
#define NV_ERR_INVALID_DEVICE 0x26u
#define NV_ERR_INVALID_FLAGS 0x29u
#define NV_ERR_INVALID_LIMIT 0x2Eu
#define NV_ERR_INVALID_OBJECT_HANDLE 0x33u
#define NV_ERR_INVALID_OBJECT_PARENT 0x36u
#define NV_ERR_INVALID_PARAM_STRUCT 0x3Au
#define NV_ERR_INVALID_STATE 0x40u
#define NV_ERR_NO_MEMORY 0x51u
#define NV_ERR_NOT_SUPPORTED 0x56u
#define NV_ERR_OBJECT_NOT_FOUND 0x57u
#define NV_ERR_UVM_ADDRESS_IN_USE 0x68u
#define NV_ERR_GENERIC 0xFFFFu

/* ==== Classes (rm.md §2, §3, §8.1; GPFIFO/compute/copy/usermode in gpu_arch.h) ==== */

#define NV01_ROOT 0x0000u
#define NV01_ROOT_CLIENT 0x0041u
#define NV01_DEVICE_0 0x0080u
#define NV20_SUBDEVICE_0 0x2080u
#define NV01_MEMORY_VIRTUAL 0x0070u
#define NV01_MEMORY_SYSTEM_OS_DESCRIPTOR 0x0071u
#define NV1_MEMORY_SYSTEM 0x003Eu
#define NV1_MEMORY_USER 0x0040u
#define FERMI_VASPACE_A 0x90F1u
#define KEPLER_CHANNEL_GROUP_A 0xA06Cu
#define FERMI_CONTEXT_SHARE_A 0x9067u
#define GT200_DEBUGGER 0x83DEu

/* ==== Controls (rm.md §2, §4.1, §8.4) ==== */

#define NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2 0x13Eu
#define NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2 0x205u
/* P2P capabilities (open-gpu-kernel-modules 580.95.05 ctrl0000system.h; not in rm.md) */
#define NV0000_CTRL_CMD_SYSTEM_GET_P2P_CAPS_V2 0x12Bu
#define NV0000_CTRL_SYSTEM_GET_P2P_CAPS_WRITES_SUPPORTED 0x1u   /* 0:0 */
#define NV0000_CTRL_SYSTEM_GET_P2P_CAPS_READS_SUPPORTED 0x2u    /* 1:1 */
#define NV0000_CTRL_SYSTEM_GET_P2P_CAPS_NVLINK_SUPPORTED 0x8u   /* 3:3 */
#define NV0000_CTRL_SYSTEM_GET_P2P_CAPS_ATOMICS_SUPPORTED 0x10u /* 4:4 */
#define NV0000_CTRL_SYSTEM_GET_P2P_CAPS_PCI_SUPPORTED 0x40u     /* 6:6 */
#define NV0000_P2P_CAPS_STATUS_OK 0x00u
#define NV0000_P2P_CAPS_STATUS_GPU_NOT_SUPPORTED 0x02u
#define NV0000_P2P_CAPS_STATUS_NOT_SUPPORTED 0x05u
#define NV0000_CTRL_SYSTEM_GET_P2P_CAPS_INVALID_PEER 0xFFFFFFFFu
#define NV0000_CTRL_SYSTEM_MAX_P2P_GROUP_GPUS 8u
#define NV0080_CTRL_CMD_GPU_GET_CLASSLIST 0x800201u
#define NV2080_CTRL_CMD_PERF_BOOST 0x2080200Au
#define NV2080_CTRL_CMD_GPU_GET_GID_INFO 0x2080014Au
#define NV2080_CTRL_CMD_GR_GET_INFO 0x20801201u
#define NV2080_CTRL_CMD_GR_GET_GPC_MASK 0x2080122Au
#define NV2080_CTRL_CMD_GR_GET_TPC_MASK 0x2080122Bu
#define NVA06C_CTRL_CMD_GPFIFO_SCHEDULE 0xA06C0101u
#define NVA06F_CTRL_CMD_GPFIFO_SCHEDULE 0xA06F0103u
#define NVA06F_CTRL_CMD_BIND 0xA06F0104u
#define NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN 0xC36F0108u
/* Copy engines (open-gpu-kernel-modules 580.95.05: ctrl2080gpu.h, ctrl2080ce.h,
 * cl2080_notification.h, clb0b5sw.h) */
#define NV2080_CTRL_CMD_GPU_GET_ENGINES_V2 0x20800170u
#define NV2080_CTRL_CMD_CE_GET_CE_PCE_MASK 0x20802A02u
#define NV2080_CTRL_CMD_CE_GET_CAPS_V2 0x20802A03u
#define NV2080_GPU_MAX_ENGINES_LIST_SIZE 0x54u
#define NV2080_ENGINE_TYPE_COPY0 0x09u
#define NV2080_ENGINE_TYPE_NVDEC0 0x13u
#define NV2080_CTRL_CE_CAPS_CE_GRCE 0x01u   /* capsTbl[0] */
#define NV2080_CTRL_CE_CAPS_CE_SHARED 0x02u /* capsTbl[0] */
#define NVB0B5_ALLOCATION_PARAMETERS_VERSION_1 1u
/* Informational controls kmd/rm also issues (ctrl2080gpu.h / ctrl2080fb.h of
 * open-gpu-kernel-modules, as cited in src/kmd/rm/rm_abi.h; not in rm.md). */
#define NV2080_CTRL_CMD_GPU_GET_NAME_STRING 0x20800110u
#define NV2080_CTRL_CMD_FB_GET_INFO 0x20801301u
#define NV2080_CTRL_FB_INFO_INDEX_TOTAL_RAM_SIZE 0x08u
#define NV2080_CTRL_FB_INFO_INDEX_HEAP_FREE 0x16u /* KiB free in RM's heap (NVIDIA's ctrl2080fb.h) */

/* GR_GET_INFO indexes (rm.md §8.4) */
#define NV2080_CTRL_GR_INFO_INDEX_SHADER_PIPE_COUNT 0x07u
#define NV2080_CTRL_GR_INFO_INDEX_THREAD_STACK_SCALING_FACTOR 0x08u
#define NV2080_CTRL_GR_INFO_INDEX_SHADER_PIPE_SUB_COUNT 0x09u
#define NV2080_CTRL_GR_INFO_INDEX_SM_VERSION 0x0Cu
#define NV2080_CTRL_GR_INFO_INDEX_MAX_WARPS_PER_SM 0x0Du
#define NV2080_CTRL_GR_INFO_INDEX_MAX_THREADS_PER_WARP 0x0Eu
#define NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_GPCS 0x14u
#define NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_TPC_PER_GPC 0x17u
#define NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_SM_PER_TPC 0x20u
#define NV2080_CTRL_GR_INFO_INDEX_GPU_CORE_COUNT 0x1Du
#define NV2080_CTRL_GR_INFO_INDEX_MAX_SUBCONTEXT_COUNT 0x2Cu

/* ==== UVM (rm.md §1.4): raw request numbers ==== */

#define UVM_INITIALIZE 0x30000001u
#define UVM_DEINITIALIZE 0x30000002u
#define UVM_MM_INITIALIZE 75u
#define UVM_REGISTER_GPU 37u
#define UVM_REGISTER_GPU_VASPACE 25u
#define UVM_REGISTER_CHANNEL 27u
#define UVM_ENABLE_PEER_ACCESS 29u
#define UVM_MAP_EXTERNAL_ALLOCATION 33u
#define UVM_FREE 34u
#define UVM_CREATE_EXTERNAL_RANGE 73u
#define UVM_UNMAP_EXTERNAL 66u

/* ==== Parameter structs (rm.md §1.3, §1.4, §2, §3, §4.1) ==== */

#define EMU_ABI_CHECK(T, size, ...) _Static_assert(sizeof(T) == (size), #T " size")
#define EMU_ABI_OFF(T, f, off) _Static_assert(offsetof(T, f) == (off), #T "." #f " offset")

struct emu_nv_card_info { /* nv_ioctl_card_info_t */
    uint8_t valid;
    uint8_t pad0[3];
    uint32_t pci_domain;
    uint8_t pci_bus, pci_slot, pci_function, pci_pad;
    uint16_t vendor_id, device_id;
    uint32_t gpu_id;
    uint16_t interrupt_line;
    uint8_t pad1[2];
    uint64_t reg_address, reg_size, fb_address, fb_size;
    uint32_t minor_number;
    uint8_t dev_name[10];
    uint8_t pad2[2];
};
EMU_ABI_CHECK(struct emu_nv_card_info, 72);
EMU_ABI_OFF(struct emu_nv_card_info, vendor_id, 0xC);
EMU_ABI_OFF(struct emu_nv_card_info, gpu_id, 0x10);
EMU_ABI_OFF(struct emu_nv_card_info, fb_size, 0x30);
EMU_ABI_OFF(struct emu_nv_card_info, minor_number, 0x38);
EMU_ABI_OFF(struct emu_nv_card_info, dev_name, 0x3C);

struct emu_nv_version { /* nv_ioctl_rm_api_version_t */
    uint32_t cmd, reply;
    char versionString[64];
};
EMU_ABI_CHECK(struct emu_nv_version, 72);

struct emu_nvos21 { /* NV_ESC_RM_ALLOC, short form */
    uint32_t hRoot, hObjectParent, hObjectNew, hClass;
    uint64_t pAllocParms;
    uint32_t paramsSize, status;
};
EMU_ABI_CHECK(struct emu_nvos21, 32);
EMU_ABI_OFF(struct emu_nvos21, status, 0x1C);

struct emu_nvos64 { /* NV_ESC_RM_ALLOC, access form */
    uint32_t hRoot, hObjectParent, hObjectNew, hClass;
    uint64_t pAllocParms, pRightsRequested;
    uint32_t paramsSize, flags, status, pad;
};
EMU_ABI_CHECK(struct emu_nvos64, 48);
EMU_ABI_OFF(struct emu_nvos64, status, 0x28);

struct emu_nvos54 { /* NV_ESC_RM_CONTROL */
    uint32_t hClient, hObject, cmd, flags;
    uint64_t params;
    uint32_t paramsSize, status;
};
EMU_ABI_CHECK(struct emu_nvos54, 32);

struct emu_nvos00 { /* NV_ESC_RM_FREE */
    uint32_t hRoot, hObjectParent, hObjectOld, status;
};
EMU_ABI_CHECK(struct emu_nvos00, 16);

struct emu_nvos02_fd { /* nv_ioctl_nvos02_parameters_with_fd */
    uint32_t hRoot, hObjectParent, hObjectNew, hClass, flags, pad0;
    uint64_t pMemory, limit;
    uint32_t status, pad1;
    int32_t fd;
    uint32_t pad2;
};
EMU_ABI_CHECK(struct emu_nvos02_fd, 56);
EMU_ABI_OFF(struct emu_nvos02_fd, pMemory, 0x18);
EMU_ABI_OFF(struct emu_nvos02_fd, status, 0x28);
EMU_ABI_OFF(struct emu_nvos02_fd, fd, 0x30);

struct emu_nvos33_fd { /* nv_ioctl_nvos33_parameters_with_fd */
    uint32_t hClient, hDevice, hMemory, pad0;
    uint64_t offset, length, pLinearAddress;
    uint32_t status, flags;
    int32_t fd;
    uint32_t pad1;
};
EMU_ABI_CHECK(struct emu_nvos33_fd, 56);
EMU_ABI_OFF(struct emu_nvos33_fd, pLinearAddress, 0x20);
EMU_ABI_OFF(struct emu_nvos33_fd, flags, 0x2C);
EMU_ABI_OFF(struct emu_nvos33_fd, fd, 0x30);

struct emu_nvos34 { /* NV_ESC_RM_UNMAP_MEMORY */
    uint32_t hClient, hDevice, hMemory, pad0;
    uint64_t pLinearAddress;
    uint32_t status, flags;
};
EMU_ABI_CHECK(struct emu_nvos34, 32);

struct emu_nvos46 { /* NV_ESC_RM_MAP_MEMORY_DMA */
    uint32_t hClient, hDevice, hDma, hMemory;
    uint64_t offset, length;
    uint32_t flags, flags2, kindOverride, pad0;
    uint64_t dmaOffset;
    uint32_t status, pad1;
};
EMU_ABI_CHECK(struct emu_nvos46, 64);
EMU_ABI_OFF(struct emu_nvos46, dmaOffset, 0x30);
EMU_ABI_OFF(struct emu_nvos46, status, 0x38);

struct emu_nvos47 { /* NV_ESC_RM_UNMAP_MEMORY_DMA */
    uint32_t hClient, hDevice, hDma, hMemory, flags, pad0;
    uint64_t dmaOffset, size;
    uint32_t status, pad1;
};
EMU_ABI_CHECK(struct emu_nvos47, 48);
EMU_ABI_OFF(struct emu_nvos47, status, 0x28);

/* NVOS46 flags (rm.md §3.5) */
#define NVOS46_FLAGS_PAGE_SIZE_SHIFT 8
#define NVOS46_FLAGS_DMA_OFFSET_FIXED (1u << 15)

struct emu_nv0080_alloc { /* NV0080_ALLOC_PARAMETERS */
    uint32_t deviceId, hClientShare, hTargetClient, hTargetDevice, flags, pad0;
    uint64_t vaSpaceSize, vaStartInternal, vaLimitInternal;
    uint32_t vaMode, pad1;
};
EMU_ABI_CHECK(struct emu_nv0080_alloc, 56);
EMU_ABI_OFF(struct emu_nv0080_alloc, vaMode, 0x30);

struct emu_nv_memory_virtual_alloc { /* NV_MEMORY_VIRTUAL_ALLOCATION_PARAMS */
    uint64_t offset, limit;
    uint32_t hVASpace, pad;
};
EMU_ABI_CHECK(struct emu_nv_memory_virtual_alloc, 24);

struct emu_nv_vaspace_alloc { /* NV_VASPACE_ALLOCATION_PARAMETERS */
    uint32_t index, flags;
    uint64_t vaSize, vaStartInternal, vaLimitInternal;
    uint32_t bigPageSize, pad0;
    uint64_t vaBase;
    uint32_t pasid, pad1;
};
EMU_ABI_CHECK(struct emu_nv_vaspace_alloc, 56);
EMU_ABI_OFF(struct emu_nv_vaspace_alloc, vaBase, 0x28);
#define NV_VASPACE_ALLOCATION_FLAGS_IS_EXTERNALLY_OWNED 0x8u
#define NV_VASPACE_ALLOCATION_FLAGS_ENABLE_PAGE_FAULTING 0x40u

struct emu_nv_memory_alloc { /* NV_MEMORY_ALLOCATION_PARAMS (rm.md §3.1) */
    uint32_t owner, type, flags, width, height;
    int32_t pitch;
    uint32_t attr, attr2, format, comprCovg, zcullCovg, pad0;
    uint64_t rangeLo, rangeHi, size, alignment, offset, limit, address;
    uint32_t ctagOffset, hVASpace, internalflags, tag;
    int32_t numaNode;
    uint32_t pad1;
};
EMU_ABI_CHECK(struct emu_nv_memory_alloc, 128);
EMU_ABI_OFF(struct emu_nv_memory_alloc, attr, 0x18);
EMU_ABI_OFF(struct emu_nv_memory_alloc, rangeLo, 0x30);
EMU_ABI_OFF(struct emu_nv_memory_alloc, size, 0x40);
EMU_ABI_OFF(struct emu_nv_memory_alloc, address, 0x60);
EMU_ABI_OFF(struct emu_nv_memory_alloc, hVASpace, 0x6C);
EMU_ABI_OFF(struct emu_nv_memory_alloc, numaNode, 0x78);
#define NVOS32_ATTR_PAGE_SIZE_SHIFT 23       /* 24:23, 3 = HUGE */
#define NVOS32_ATTR_LOCATION_SHIFT 25        /* 26:25, 1 = PCI (sysmem) */
#define NVOS32_ATTR_PHYSICALITY_SHIFT 27     /* 28:27, 2 = CONTIGUOUS */
#define NVOS32_ATTR2_PAGE_SIZE_HUGE_SHIFT 20 /* 21:20, 1 = 2 MiB */
#define NVOS32_ALLOC_FLAGS_ALIGNMENT_FORCE 0x100u

struct emu_nv_channel_group_alloc { /* NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS */
    uint32_t hObjectError, hObjectEccError, hVASpace, engineType;
    uint8_t bIsCallingContextVgpuPlugin;
    uint8_t pad[3];
};
EMU_ABI_CHECK(struct emu_nv_channel_group_alloc, 20);
#define NV2080_ENGINE_TYPE_GRAPHICS 1u

struct emu_nv_ctxshare_alloc { /* NV_CTXSHARE_ALLOCATION_PARAMETERS */
    uint32_t hVASpace, flags, subctxId;
};
EMU_ABI_CHECK(struct emu_nv_ctxshare_alloc, 12);

struct emu_nv_memory_desc { /* NV_MEMORY_DESC_PARAMS */
    uint64_t base, size;
    uint32_t addressSpace, cacheAttrib;
};
EMU_ABI_CHECK(struct emu_nv_memory_desc, 24);

struct emu_nv_channel_alloc { /* NV_CHANNEL_ALLOC_PARAMS (580: 368 B, rm.md §4.1) */
    uint32_t hObjectError, hObjectBuffer;
    uint64_t gpFifoOffset;
    uint32_t gpFifoEntries, flags, hContextShare, hVASpace;
    uint32_t hUserdMemory[8];
    uint64_t userdOffset[8];
    uint32_t engineType, cid, subDeviceId, hObjectEccError;
    struct emu_nv_memory_desc instanceMem, userdMem, ramfcMem, mthdbufMem;
    uint32_t hPhysChannelGroup, internalFlags;
    struct emu_nv_memory_desc errorNotifierMem, eccErrorNotifierMem;
    uint32_t ProcessID, SubProcessID;
    uint32_t encryptIv[3], decryptIv[3], hmacNonce[8];
    uint32_t tpcConfigID, pad;
};
EMU_ABI_CHECK(struct emu_nv_channel_alloc, 368);
EMU_ABI_OFF(struct emu_nv_channel_alloc, hUserdMemory, 0x20);
EMU_ABI_OFF(struct emu_nv_channel_alloc, userdOffset, 0x40);
EMU_ABI_OFF(struct emu_nv_channel_alloc, engineType, 0x80);
EMU_ABI_OFF(struct emu_nv_channel_alloc, instanceMem, 0x90);
EMU_ABI_OFF(struct emu_nv_channel_alloc, hPhysChannelGroup, 0xF0);
EMU_ABI_OFF(struct emu_nv_channel_alloc, errorNotifierMem, 0xF8);
EMU_ABI_OFF(struct emu_nv_channel_alloc, ProcessID, 0x128);
EMU_ABI_OFF(struct emu_nv_channel_alloc, encryptIv, 0x130);
EMU_ABI_OFF(struct emu_nv_channel_alloc, hmacNonce, 0x148);
EMU_ABI_OFF(struct emu_nv_channel_alloc, tpcConfigID, 0x168);

struct emu_nv83de_alloc { /* NV83DE_ALLOC_PARAMETERS */
    uint32_t hDebuggerClient_Obsolete, hAppClient, hClass3dObject;
};
EMU_ABI_CHECK(struct emu_nv83de_alloc, 12);

/* Control parameter structs */
struct emu_nv0000_build_version {
    char driverVersionBuffer[256], versionBuffer[256], driverBranch[256], titleBuffer[256];
    uint32_t changelistNumber, officialChangelistNumber;
};
EMU_ABI_CHECK(struct emu_nv0000_build_version, 1032);
struct emu_nv0000_id_info {
    uint32_t gpuId, gpuFlags, deviceInstance, subDeviceInstance, sliStatus, boardId, gpuInstance;
    int32_t numaId;
};
EMU_ABI_CHECK(struct emu_nv0000_id_info, 32);
struct emu_nv0080_classlist {
    uint32_t numClasses, pad;
    uint64_t classList;
};
EMU_ABI_CHECK(struct emu_nv0080_classlist, 16);
struct emu_nv2080_perf_boost {
    uint32_t flags, duration;
};
EMU_ABI_CHECK(struct emu_nv2080_perf_boost, 8);
struct emu_nv2080_gid_info {
    uint32_t index, flags, length;
    uint8_t data[256];
};
EMU_ABI_CHECK(struct emu_nv2080_gid_info, 268);
struct emu_nv2080_gr_info {
    uint32_t grInfoListSize, pad;
    uint64_t grInfoList;
    uint8_t grRouteInfo[16];
};
EMU_ABI_CHECK(struct emu_nv2080_gr_info, 32);
struct emu_nv2080_gr_info_item {
    uint32_t index, data;
};
struct emu_nv2080_gpc_mask {
    uint8_t grRouteInfo[16];
    uint32_t gpcMask, pad;
};
EMU_ABI_CHECK(struct emu_nv2080_gpc_mask, 24);
struct emu_nv2080_tpc_mask {
    uint8_t grRouteInfo[16];
    uint32_t gpcId, tpcMask;
};
EMU_ABI_CHECK(struct emu_nv2080_tpc_mask, 24);
struct emu_nva06c_schedule {
    uint8_t bEnable, bSkipSubmit, bSkipEnable;
};
EMU_ABI_CHECK(struct emu_nva06c_schedule, 3);
struct emu_nva06f_bind {
    uint32_t engineType;
};
EMU_ABI_CHECK(struct emu_nva06f_bind, 4);
struct emu_nvc36f_token {
    uint32_t workSubmitToken;
};
struct emu_nv2080_engines { /* NV2080_CTRL_GPU_GET_ENGINES_V2_PARAMS */
    uint32_t engineCount;
    uint32_t engineList[NV2080_GPU_MAX_ENGINES_LIST_SIZE];
};
EMU_ABI_CHECK(struct emu_nv2080_engines, 340);
struct emu_nv2080_ce_caps { /* NV2080_CTRL_CE_GET_CAPS_V2_PARAMS */
    uint32_t ceEngineType;
    uint8_t capsTbl[2], pad[2];
};
EMU_ABI_CHECK(struct emu_nv2080_ce_caps, 8);
struct emu_nv2080_ce_pce_mask { /* NV2080_CTRL_CE_GET_CE_PCE_MASK_PARAMS */
    uint32_t ceEngineType, pceMask;
};
EMU_ABI_CHECK(struct emu_nv2080_ce_pce_mask, 8);
struct emu_nvb0b5_alloc { /* NVB0B5_ALLOCATION_PARAMETERS */
    uint32_t version, engineType;
};
EMU_ABI_CHECK(struct emu_nvb0b5_alloc, 8);
struct emu_nv2080_name {
    uint32_t gpuNameStringFlags;
    uint8_t ascii[128];
};
EMU_ABI_CHECK(struct emu_nv2080_name, 132);
struct emu_nv2080_fb_info {
    uint32_t fbInfoListSize, pad;
    uint64_t fbInfoList;
};
EMU_ABI_CHECK(struct emu_nv2080_fb_info, 16);
EMU_ABI_CHECK(struct emu_nvc36f_token, 4);

/* UVM structs */
struct emu_uvm_initialize {
    uint64_t flags;
    uint32_t rmStatus, pad;
};
EMU_ABI_CHECK(struct emu_uvm_initialize, 16);
struct emu_uvm_mm_initialize {
    int32_t uvmFd;
    uint32_t rmStatus;
};
EMU_ABI_CHECK(struct emu_uvm_mm_initialize, 8);
struct emu_uvm_register_gpu {
    uint8_t uuid[16];
    uint8_t numaEnabled, pad0[3];
    int32_t numaNodeId, rmCtrlFd;
    uint32_t hClient, hSmcPartRef, rmStatus;
};
EMU_ABI_CHECK(struct emu_uvm_register_gpu, 40);
EMU_ABI_OFF(struct emu_uvm_register_gpu, rmCtrlFd, 0x18);
EMU_ABI_OFF(struct emu_uvm_register_gpu, rmStatus, 0x24);
struct emu_uvm_register_gpu_vaspace {
    uint8_t uuid[16];
    int32_t rmCtrlFd;
    uint32_t hClient, hVaSpace, rmStatus;
};
EMU_ABI_CHECK(struct emu_uvm_register_gpu_vaspace, 32);
struct emu_uvm_register_channel {
    uint8_t uuid[16];
    int32_t rmCtrlFd;
    uint32_t hClient, hChannel, pad0;
    uint64_t base, length;
    uint32_t rmStatus, pad1;
};
EMU_ABI_CHECK(struct emu_uvm_register_channel, 56);
EMU_ABI_OFF(struct emu_uvm_register_channel, base, 0x20);
EMU_ABI_OFF(struct emu_uvm_register_channel, rmStatus, 0x30);
struct emu_uvm_gpu_mapping_attr {
    uint8_t uuid[16];
    uint32_t gpuMappingType, gpuCachingType, gpuFormatType, gpuElementBits, gpuCompressionType;
};
EMU_ABI_CHECK(struct emu_uvm_gpu_mapping_attr, 36);
struct emu_uvm_map_external {
    uint64_t base, length, offset;
    struct emu_uvm_gpu_mapping_attr perGpuAttributes[256];
    uint64_t gpuAttributesCount;
    int32_t rmCtrlFd;
    uint32_t hClient, hMemory, rmStatus;
};
EMU_ABI_CHECK(struct emu_uvm_map_external, 9264);
EMU_ABI_OFF(struct emu_uvm_map_external, gpuAttributesCount, 0x2418);
EMU_ABI_OFF(struct emu_uvm_map_external, rmStatus, 0x242C);
struct emu_uvm_range {
    uint64_t base, length;
    uint32_t rmStatus, pad;
}; /* UVM_FREE, CREATE_EXTERNAL_RANGE */
EMU_ABI_CHECK(struct emu_uvm_range, 24);
struct emu_uvm_unmap_external {
    uint64_t base, length;
    uint8_t uuid[16];
    uint32_t rmStatus, pad;
};
EMU_ABI_CHECK(struct emu_uvm_unmap_external, 40);

/* UVM_ENABLE_PEER_ACCESS (rm.md §1.4: two UUIDs, rmStatus @0x20) */
struct emu_uvm_enable_peer_access {
    uint8_t gpuUuidA[16], gpuUuidB[16];
    uint32_t rmStatus;
};
EMU_ABI_CHECK(struct emu_uvm_enable_peer_access, 36);
EMU_ABI_OFF(struct emu_uvm_enable_peer_access, rmStatus, 0x20);

/* NV0000_CTRL_CMD_SYSTEM_GET_P2P_CAPS_V2 (ctrl0000system.h of 580.95.05: 32 gpu ids, count,
 * caps, two CE masks, 9 status bytes, then two 32x32 peer-id matrices) */
struct emu_nv0000_p2p_caps_v2 {
    uint32_t gpuIds[32];
    uint32_t gpuCount, p2pCaps, p2pOptimalReadCEs, p2pOptimalWriteCEs;
    uint8_t p2pCapsStatus[9], pad0[3];
    uint32_t busPeerIds[1024];
    uint32_t busEgmPeerIds[1024];
};
EMU_ABI_CHECK(struct emu_nv0000_p2p_caps_v2, 8348);
EMU_ABI_OFF(struct emu_nv0000_p2p_caps_v2, gpuCount, 0x80);
EMU_ABI_OFF(struct emu_nv0000_p2p_caps_v2, p2pCapsStatus, 0x90);
EMU_ABI_OFF(struct emu_nv0000_p2p_caps_v2, busPeerIds, 0x9C);
EMU_ABI_OFF(struct emu_nv0000_p2p_caps_v2, busEgmPeerIds, 0x109C);

/* ==== Channel error notifier (NvNotification, 16 B) ==== */
/* Written by the emulated RM at offset 0 of a channel's hObjectError memory when the
 * channel faults: info32 = Xid (enum emu_chan_error), status = 0xFFFF (in error).
 * The record layout follows NVIDIA's NvNotification {u64 timeStamp; u32 info32;
 * u16 info16; u16 status} (nvtypes/nvos.h); the notifier index 0 = error is our model. */
struct emu_nv_notification {
    uint64_t timeStamp;
    uint32_t info32;
    uint16_t info16, status;
};
EMU_ABI_CHECK(struct emu_nv_notification, 16);
#define EMU_NV_NOTIFICATION_STATUS_ERROR 0xFFFFu

#endif /* EMU_RM_ABI_H */
