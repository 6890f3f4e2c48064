/* SPDX-License-Identifier: MIT */
/*
 * rm_abi.h - our own definitions of the NVIDIA RM escape, control and UVM ioctl ABI that
 * kmd/rm uses (driver branch 580, x86-64 / aarch64 LP64 natural alignment). Layer: kmd.
 *
 * Every layout is restated from docs/hw/rm.md (section cited per struct) and checked with
 * _Static_assert on its size and on every field offset, so a mistake fails the build
 * instead of corrupting kernel-visible memory. NVIDIA's names are kept so a grep works
 * across our code and NVIDIA's headers. Pointers inside kernel-visible structs (NvP64)
 * are uint64_t here and filled through rm_p64(). Facts not in docs/hw/rm.md cite the
 * open-gpu-kernel-modules header they come from (open driver, MIT licence).
 *
 * The layouts change between driver branches (rm.md §9.6): rm_kmd.c reads the driver
 * version first and refuses branches whose layouts are not verified here.
 */
#ifndef RM_ABI_H
#define RM_ABI_H

#include <stddef.h>
#include <stdint.h>

#define RM_ABI_CHECK(type, size) _Static_assert(sizeof(type) == (size), #type " size")
#define RM_ABI_OFF(type, field, off)                                                                         \
    _Static_assert(offsetof(type, field) == (off), #type "." #field " offset")

static inline uint64_t
rm_p64(const void *p)
{
    return (uint64_t)(uintptr_t)p;
}

/* ==== Escape ioctl encoding (rm.md §1.2) ==== */

/* _IOWR('F', nr, size): direction 3 << 30, size 14 bits at 16, type 0x46 at 8. */
#define NV_IOCTL_MAGIC 0x46u
#define NV_ESC_IOWR(nr, size)                                                                                \
    ((unsigned long)(0xC0000000u | ((uint32_t)(size) << 16) | (NV_IOCTL_MAGIC << 8) | (uint32_t)(nr)))

#define NV_ESC_CARD_INFO 200u            /* 0xC8, nv_ioctl_card_info_t[N], ctl */
#define NV_ESC_REGISTER_FD 201u          /* 0xC9, {int ctl_fd}, nvidiaN */
#define NV_ESC_CHECK_VERSION_STR 210u    /* 0xD2, not sent (rm.md §1.2, §9.5) */
#define NV_ESC_RM_ALLOC_MEMORY 0x27u     /* NVOS02 with fd, nvidiaN */
#define NV_ESC_RM_FREE 0x29u             /* NVOS00 */
#define NV_ESC_RM_CONTROL 0x2Au          /* NVOS54 */
#define NV_ESC_RM_ALLOC 0x2Bu            /* NVOS21 */
#define NV_ESC_RM_MAP_MEMORY 0x4Eu       /* NVOS33 with fd */
#define NV_ESC_RM_UNMAP_MEMORY 0x4Fu     /* NVOS34 */
#define NV_ESC_RM_MAP_MEMORY_DMA 0x57u   /* NVOS46 */
#define NV_ESC_RM_UNMAP_MEMORY_DMA 0x58u /* NVOS47 */

#define RM_CARD_INFO_MAX 64u /* entries passed to CARD_INFO (rm.md §1.3, tinygrad's 64) */

/* ==== Escape parameter structs (rm.md §1.3) ==== */

/* NV_ESC_RM_ALLOC, the 32-byte form. */
typedef struct {
    uint32_t hRoot;
    uint32_t hObjectParent;
    uint32_t hObjectNew; /* in: 0 = RM picks; out: handle */
    uint32_t hClass;
    uint64_t pAllocParms; /* NvP64 */
    uint32_t paramsSize;
    uint32_t status;
} NVOS21_PARAMETERS;
RM_ABI_CHECK(NVOS21_PARAMETERS, 32);
RM_ABI_OFF(NVOS21_PARAMETERS, hObjectNew, 0x8);
RM_ABI_OFF(NVOS21_PARAMETERS, hClass, 0xC);
RM_ABI_OFF(NVOS21_PARAMETERS, pAllocParms, 0x10);
RM_ABI_OFF(NVOS21_PARAMETERS, paramsSize, 0x18);
RM_ABI_OFF(NVOS21_PARAMETERS, status, 0x1C);

/* NV_ESC_RM_CONTROL. */
typedef struct {
    uint32_t hClient;
    uint32_t hObject;
    uint32_t cmd;
    uint32_t flags;
    uint64_t params; /* NvP64 */
    uint32_t paramsSize;
    uint32_t status;
} NVOS54_PARAMETERS;
RM_ABI_CHECK(NVOS54_PARAMETERS, 32);
RM_ABI_OFF(NVOS54_PARAMETERS, hObject, 0x4);
RM_ABI_OFF(NVOS54_PARAMETERS, cmd, 0x8);
RM_ABI_OFF(NVOS54_PARAMETERS, flags, 0xC);
RM_ABI_OFF(NVOS54_PARAMETERS, params, 0x10);
RM_ABI_OFF(NVOS54_PARAMETERS, paramsSize, 0x18);
RM_ABI_OFF(NVOS54_PARAMETERS, status, 0x1C);

/* NV_ESC_RM_FREE. Freeing the client frees everything under it. */
typedef struct {
    uint32_t hRoot;
    uint32_t hObjectParent;
    uint32_t hObjectOld;
    uint32_t status;
} NVOS00_PARAMETERS;
RM_ABI_CHECK(NVOS00_PARAMETERS, 16);
RM_ABI_OFF(NVOS00_PARAMETERS, hObjectOld, 0x8);
RM_ABI_OFF(NVOS00_PARAMETERS, status, 0xC);

/* NV_ESC_RM_ALLOC_MEMORY (on /dev/nvidiaN): OS-descriptor memory (rm.md §3.3). */
typedef struct {
    uint32_t hRoot;
    uint32_t hObjectParent;
    uint32_t hObjectNew; /* client-chosen for NV01_MEMORY_SYSTEM_OS_DESCRIPTOR */
    uint32_t hClass;
    uint32_t flags;
    uint32_t pad0;
    uint64_t pMemory; /* NvP64: user pages to wrap */
    uint64_t limit;   /* size - 1 */
    uint32_t status;
    uint32_t pad1;
} NVOS02_PARAMETERS;
RM_ABI_CHECK(NVOS02_PARAMETERS, 48);
RM_ABI_OFF(NVOS02_PARAMETERS, hClass, 0xC);
RM_ABI_OFF(NVOS02_PARAMETERS, flags, 0x10);
RM_ABI_OFF(NVOS02_PARAMETERS, pMemory, 0x18);
RM_ABI_OFF(NVOS02_PARAMETERS, limit, 0x20);
RM_ABI_OFF(NVOS02_PARAMETERS, status, 0x28);

typedef struct {
    NVOS02_PARAMETERS params;
    int32_t fd; /* -1 (rm.md §3.3) */
    uint32_t pad;
} nv_ioctl_nvos02_parameters_with_fd;
RM_ABI_CHECK(nv_ioctl_nvos02_parameters_with_fd, 56);
RM_ABI_OFF(nv_ioctl_nvos02_parameters_with_fd, fd, 0x30);

/* NV_ESC_RM_MAP_MEMORY: CPU mapping context bound to `fd` (rm.md §3.4). */
typedef struct {
    uint32_t hClient;
    uint32_t hDevice;
    uint32_t hMemory;
    uint32_t pad0;
    uint64_t offset;
    uint64_t length;
    uint64_t pLinearAddress; /* NvP64, out: mmap cookie */
    uint32_t status;
    uint32_t flags;
} NVOS33_PARAMETERS;
RM_ABI_CHECK(NVOS33_PARAMETERS, 48);
RM_ABI_OFF(NVOS33_PARAMETERS, hMemory, 0x8);
RM_ABI_OFF(NVOS33_PARAMETERS, offset, 0x10);
RM_ABI_OFF(NVOS33_PARAMETERS, length, 0x18);
RM_ABI_OFF(NVOS33_PARAMETERS, pLinearAddress, 0x20);
RM_ABI_OFF(NVOS33_PARAMETERS, status, 0x28);
RM_ABI_OFF(NVOS33_PARAMETERS, flags, 0x2C);

typedef struct {
    NVOS33_PARAMETERS params;
    int32_t fd; /* the fresh fd that will be mmap()ed */
    uint32_t pad;
} nv_ioctl_nvos33_parameters_with_fd;
RM_ABI_CHECK(nv_ioctl_nvos33_parameters_with_fd, 56);
RM_ABI_OFF(nv_ioctl_nvos33_parameters_with_fd, fd, 0x30);

/* NV_ESC_RM_UNMAP_MEMORY. */
typedef struct {
    uint32_t hClient;
    uint32_t hDevice;
    uint32_t hMemory;
    uint32_t pad0;
    uint64_t pLinearAddress; /* NvP64: cookie from MAP_MEMORY */
    uint32_t status;
    uint32_t flags;
} NVOS34_PARAMETERS;
RM_ABI_CHECK(NVOS34_PARAMETERS, 32);
RM_ABI_OFF(NVOS34_PARAMETERS, pLinearAddress, 0x10);
RM_ABI_OFF(NVOS34_PARAMETERS, status, 0x18);
RM_ABI_OFF(NVOS34_PARAMETERS, flags, 0x1C);

/* NV_ESC_RM_MAP_MEMORY_DMA (rm.md §3.5 step 2). */
typedef struct {
    uint32_t hClient;
    uint32_t hDevice;
    uint32_t hDma; /* the virtmem object (NV01_MEMORY_VIRTUAL) */
    uint32_t hMemory;
    uint64_t offset;
    uint64_t length;
    uint32_t flags;
    uint32_t flags2;
    uint32_t kindOverride;
    uint32_t pad0;
    uint64_t dmaOffset; /* in with DMA_OFFSET_FIXED, out: GPU VA */
    uint32_t status;
    uint32_t pad1;
} NVOS46_PARAMETERS;
RM_ABI_CHECK(NVOS46_PARAMETERS, 64);
RM_ABI_OFF(NVOS46_PARAMETERS, hMemory, 0xC);
RM_ABI_OFF(NVOS46_PARAMETERS, offset, 0x10);
RM_ABI_OFF(NVOS46_PARAMETERS, length, 0x18);
RM_ABI_OFF(NVOS46_PARAMETERS, flags, 0x20);
RM_ABI_OFF(NVOS46_PARAMETERS, flags2, 0x24);
RM_ABI_OFF(NVOS46_PARAMETERS, kindOverride, 0x28);
RM_ABI_OFF(NVOS46_PARAMETERS, dmaOffset, 0x30);
RM_ABI_OFF(NVOS46_PARAMETERS, status, 0x38);

/* NV_ESC_RM_UNMAP_MEMORY_DMA. */
typedef struct {
    uint32_t hClient;
    uint32_t hDevice;
    uint32_t hDma;
    uint32_t hMemory;
    uint32_t flags;
    uint32_t pad0;
    uint64_t dmaOffset;
    uint64_t size;
    uint32_t status;
    uint32_t pad1;
} NVOS47_PARAMETERS;
RM_ABI_CHECK(NVOS47_PARAMETERS, 48);
RM_ABI_OFF(NVOS47_PARAMETERS, flags, 0x10);
RM_ABI_OFF(NVOS47_PARAMETERS, dmaOffset, 0x18);
RM_ABI_OFF(NVOS47_PARAMETERS, size, 0x20);
RM_ABI_OFF(NVOS47_PARAMETERS, status, 0x28);

/* NV_ESC_CARD_INFO entry (rm.md §1.3). */
typedef struct {
    uint32_t domain;
    uint8_t bus;
    uint8_t slot;
    uint8_t function;
    uint8_t pad0;
    uint16_t vendor_id;
    uint16_t device_id;
} nv_pci_info_t;
RM_ABI_CHECK(nv_pci_info_t, 12);
RM_ABI_OFF(nv_pci_info_t, vendor_id, 0x8);
RM_ABI_OFF(nv_pci_info_t, device_id, 0xA);

typedef struct {
    uint8_t valid;
    uint8_t pad0[3];
    nv_pci_info_t pci_info;
    uint32_t gpu_id;
    uint16_t interrupt_line;
    uint8_t pad1[2];
    uint64_t reg_address;
    uint64_t reg_size;
    uint64_t fb_address;
    uint64_t fb_size;
    uint32_t minor_number;
    uint8_t dev_name[10];
    uint8_t pad2[2];
} nv_ioctl_card_info_t;
RM_ABI_CHECK(nv_ioctl_card_info_t, 72);
RM_ABI_OFF(nv_ioctl_card_info_t, pci_info, 0x4);
RM_ABI_OFF(nv_ioctl_card_info_t, gpu_id, 0x10);
RM_ABI_OFF(nv_ioctl_card_info_t, interrupt_line, 0x14);
RM_ABI_OFF(nv_ioctl_card_info_t, reg_address, 0x18);
RM_ABI_OFF(nv_ioctl_card_info_t, reg_size, 0x20);
RM_ABI_OFF(nv_ioctl_card_info_t, fb_address, 0x28);
RM_ABI_OFF(nv_ioctl_card_info_t, fb_size, 0x30);
RM_ABI_OFF(nv_ioctl_card_info_t, minor_number, 0x38);
RM_ABI_OFF(nv_ioctl_card_info_t, dev_name, 0x3C);

typedef struct {
    int32_t ctl_fd;
} nv_ioctl_register_fd_t;
RM_ABI_CHECK(nv_ioctl_register_fd_t, 4);

/* ==== Classes (rm.md §2 object tree, §3) ==== */

#define NV01_ROOT_CLIENT 0x41u
#define NV01_DEVICE_0 0x80u
#define NV20_SUBDEVICE_0 0x2080u
#define NV01_MEMORY_VIRTUAL 0x70u
#define FERMI_VASPACE_A 0x90F1u
#define NV1_MEMORY_USER 0x40u                  /* = NV01_MEMORY_LOCAL_USER, vidmem */
#define NV1_MEMORY_SYSTEM 0x3Eu                /* RM-owned sysmem */
#define NV01_MEMORY_SYSTEM_OS_DESCRIPTOR 0x71u /* wraps user pages */
#define KEPLER_CHANNEL_GROUP_A 0xA06Cu
#define FERMI_CONTEXT_SHARE_A 0x9067u
#define GT200_DEBUGGER 0x83DEu

/* ==== Control commands and their parameters ==== */

/* rm.md §2 step 3 */
#define NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2 0x13Eu
typedef struct {
    char driverVersionBuffer[256];
    char versionBuffer[256];
    char driverBranch[256];
    char titleBuffer[256];
    uint32_t changelistNumber;
    uint32_t officialChangelistNumber;
} NV0000_CTRL_SYSTEM_GET_BUILD_VERSION_V2_PARAMS;
RM_ABI_CHECK(NV0000_CTRL_SYSTEM_GET_BUILD_VERSION_V2_PARAMS, 1032);
RM_ABI_OFF(NV0000_CTRL_SYSTEM_GET_BUILD_VERSION_V2_PARAMS, versionBuffer, 0x100);
RM_ABI_OFF(NV0000_CTRL_SYSTEM_GET_BUILD_VERSION_V2_PARAMS, driverBranch, 0x200);
RM_ABI_OFF(NV0000_CTRL_SYSTEM_GET_BUILD_VERSION_V2_PARAMS, titleBuffer, 0x300);
RM_ABI_OFF(NV0000_CTRL_SYSTEM_GET_BUILD_VERSION_V2_PARAMS, changelistNumber, 0x400);
RM_ABI_OFF(NV0000_CTRL_SYSTEM_GET_BUILD_VERSION_V2_PARAMS, officialChangelistNumber, 0x404);

/* rm.md §2 step 7 */
#define NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2 0x205u
typedef struct {
    uint32_t gpuId;
    uint32_t gpuFlags;
    uint32_t deviceInstance;
    uint32_t subDeviceInstance;
    uint32_t sliStatus;
    uint32_t boardId;
    uint32_t gpuInstance;
    int32_t numaId;
} NV0000_CTRL_GPU_GET_ID_INFO_V2_PARAMS;
RM_ABI_CHECK(NV0000_CTRL_GPU_GET_ID_INFO_V2_PARAMS, 32);
RM_ABI_OFF(NV0000_CTRL_GPU_GET_ID_INFO_V2_PARAMS, deviceInstance, 0x8);
RM_ABI_OFF(NV0000_CTRL_GPU_GET_ID_INFO_V2_PARAMS, subDeviceInstance, 0xC);
RM_ABI_OFF(NV0000_CTRL_GPU_GET_ID_INFO_V2_PARAMS, gpuInstance, 0x18);
RM_ABI_OFF(NV0000_CTRL_GPU_GET_ID_INFO_V2_PARAMS, numaId, 0x1C);

/* rm.md §2 step 8 */
typedef struct {
    uint32_t deviceId;
    uint32_t hClientShare;
    uint32_t hTargetClient;
    uint32_t hTargetDevice;
    uint32_t flags;
    uint32_t pad0;
    uint64_t vaSpaceSize;
    uint64_t vaStartInternal;
    uint64_t vaLimitInternal;
    uint32_t vaMode; /* 0 = OPTIONAL_MULTIPLE_VASPACES */
    uint32_t pad1;
} NV0080_ALLOC_PARAMETERS;
RM_ABI_CHECK(NV0080_ALLOC_PARAMETERS, 56);
RM_ABI_OFF(NV0080_ALLOC_PARAMETERS, flags, 0x10);
RM_ABI_OFF(NV0080_ALLOC_PARAMETERS, vaSpaceSize, 0x18);
RM_ABI_OFF(NV0080_ALLOC_PARAMETERS, vaStartInternal, 0x20);
RM_ABI_OFF(NV0080_ALLOC_PARAMETERS, vaLimitInternal, 0x28);
RM_ABI_OFF(NV0080_ALLOC_PARAMETERS, vaMode, 0x30);

/* rm.md §2 step 9 */
typedef struct {
    uint32_t subDeviceId;
} NV2080_ALLOC_PARAMETERS;
RM_ABI_CHECK(NV2080_ALLOC_PARAMETERS, 4);

/* rm.md §2 step 10 */
typedef struct {
    uint64_t offset;
    uint64_t limit;    /* 0x1FFFFFFFFFFFF */
    uint32_t hVASpace; /* 0 = the device's default VAS */
    uint32_t pad0;
} NV_MEMORY_VIRTUAL_ALLOCATION_PARAMS;
RM_ABI_CHECK(NV_MEMORY_VIRTUAL_ALLOCATION_PARAMS, 24);
RM_ABI_OFF(NV_MEMORY_VIRTUAL_ALLOCATION_PARAMS, limit, 0x8);
RM_ABI_OFF(NV_MEMORY_VIRTUAL_ALLOCATION_PARAMS, hVASpace, 0x10);
#define RM_VIRTMEM_LIMIT 0x1FFFFFFFFFFFFull

/* rm.md §2 step 11 */
#define NV0080_CTRL_CMD_GPU_GET_CLASSLIST 0x800201u
typedef struct {
    uint32_t numClasses;
    uint32_t pad0;
    uint64_t classList; /* NvP64 to uint32_t[numClasses], NULL for the count */
} NV0080_CTRL_GPU_GET_CLASSLIST_PARAMS;
RM_ABI_CHECK(NV0080_CTRL_GPU_GET_CLASSLIST_PARAMS, 16);
RM_ABI_OFF(NV0080_CTRL_GPU_GET_CLASSLIST_PARAMS, classList, 0x8);

/* rm.md §2 step 12: usermode page size and the doorbell register in it */
#define RM_USERMODE_MAP_B 0x10000u
#define NVC361_NOTIFY_CHANNEL_PENDING 0x90u

/* rm.md §2 step 13 */
#define NV2080_CTRL_CMD_PERF_BOOST 0x2080200Au
typedef struct {
    uint32_t flags;    /* 0x52 = CUDA_YES<<4 | CUDA_PRIORITY_HIGH<<6 | BOOST_TO_MAX */
    uint32_t duration; /* 0xFFFFFFFF = infinite */
} NV2080_CTRL_PERF_BOOST_PARAMS;
RM_ABI_CHECK(NV2080_CTRL_PERF_BOOST_PARAMS, 8);
#define RM_PERF_BOOST_FLAGS 0x52u

/* rm.md §2 step 14 */
typedef struct {
    uint32_t index;
    uint32_t flags;
    uint64_t vaSize;
    uint64_t vaStartInternal;
    uint64_t vaLimitInternal;
    uint32_t bigPageSize;
    uint32_t pad0;
    uint64_t vaBase;
    uint32_t pasid;
    uint32_t pad1;
} NV_VASPACE_ALLOCATION_PARAMETERS;
RM_ABI_CHECK(NV_VASPACE_ALLOCATION_PARAMETERS, 56);
RM_ABI_OFF(NV_VASPACE_ALLOCATION_PARAMETERS, flags, 0x4);
RM_ABI_OFF(NV_VASPACE_ALLOCATION_PARAMETERS, vaSize, 0x8);
RM_ABI_OFF(NV_VASPACE_ALLOCATION_PARAMETERS, vaStartInternal, 0x10);
RM_ABI_OFF(NV_VASPACE_ALLOCATION_PARAMETERS, vaLimitInternal, 0x18);
RM_ABI_OFF(NV_VASPACE_ALLOCATION_PARAMETERS, bigPageSize, 0x20);
RM_ABI_OFF(NV_VASPACE_ALLOCATION_PARAMETERS, vaBase, 0x28);
RM_ABI_OFF(NV_VASPACE_ALLOCATION_PARAMETERS, pasid, 0x30);
#define NV_VASPACE_ALLOCATION_FLAGS_ENABLE_PAGE_FAULTING 0x40u
#define NV_VASPACE_ALLOCATION_FLAGS_IS_EXTERNALLY_OWNED 0x8u
#define RM_VASPACE_SIZE 0x1FFFFFB000000ull
#define RM_VASPACE_BASE 0x1000ull

/* rm.md §2 step 15 */
#define NV2080_CTRL_CMD_GPU_GET_GID_INFO 0x2080014Au
#define NV2080_GPU_CMD_GPU_GET_GID_FLAGS_FORMAT_BINARY 2u
typedef struct {
    uint32_t index;
    uint32_t flags;
    uint32_t length;
    uint8_t data[256];
} NV2080_CTRL_GPU_GET_GID_INFO_PARAMS;
RM_ABI_CHECK(NV2080_CTRL_GPU_GET_GID_INFO_PARAMS, 268);
RM_ABI_OFF(NV2080_CTRL_GPU_GET_GID_INFO_PARAMS, length, 0x8);
RM_ABI_OFF(NV2080_CTRL_GPU_GET_GID_INFO_PARAMS, data, 0xC);

/* rm.md §2 step 17 */
#define NV2080_ENGINE_TYPE_GRAPHICS 1u
typedef struct {
    uint32_t hObjectError;
    uint32_t hObjectEccError;
    uint32_t hVASpace;
    uint32_t engineType;
    uint8_t bIsCallingContextVgpuPlugin;
    uint8_t pad0[3];
} NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS;
RM_ABI_CHECK(NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS, 20);
RM_ABI_OFF(NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS, hVASpace, 0x8);
RM_ABI_OFF(NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS, engineType, 0xC);
RM_ABI_OFF(NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS, bIsCallingContextVgpuPlugin, 0x10);

/* rm.md §2 step 19 */
#define NV_CTXSHARE_ALLOCATION_FLAGS_SUBCONTEXT_ASYNC 1u
typedef struct {
    uint32_t hVASpace;
    uint32_t flags;
    uint32_t subctxId; /* out */
} NV_CTXSHARE_ALLOCATION_PARAMETERS;
RM_ABI_CHECK(NV_CTXSHARE_ALLOCATION_PARAMETERS, 12);
RM_ABI_OFF(NV_CTXSHARE_ALLOCATION_PARAMETERS, flags, 0x4);
RM_ABI_OFF(NV_CTXSHARE_ALLOCATION_PARAMETERS, subctxId, 0x8);

/* rm.md §2 step 21 */
#define NVA06C_CTRL_CMD_GPFIFO_SCHEDULE 0xA06C0101u
typedef struct {
    uint8_t bEnable;
    uint8_t bSkipSubmit;
    uint8_t bSkipEnable;
} NVA06C_CTRL_GPFIFO_SCHEDULE_PARAMS;
RM_ABI_CHECK(NVA06C_CTRL_GPFIFO_SCHEDULE_PARAMS, 3);

/* ==== Memory allocation (rm.md §3.1-3.3) ==== */

typedef struct {
    uint32_t owner;
    uint32_t type;
    uint32_t flags;
    uint32_t width;
    uint32_t height;
    int32_t pitch;
    uint32_t attr;
    uint32_t attr2;
    uint32_t format;
    uint32_t comprCovg;
    uint32_t zcullCovg;
    uint32_t pad0;
    uint64_t rangeLo;
    uint64_t rangeHi;
    uint64_t size;
    uint64_t alignment;
    uint64_t offset;
    uint64_t limit;
    uint64_t address; /* NvP64 */
    uint32_t ctagOffset;
    uint32_t hVASpace;
    uint32_t internalflags;
    uint32_t tag;
    int32_t numaNode;
    uint32_t pad1;
} NV_MEMORY_ALLOCATION_PARAMS;
RM_ABI_CHECK(NV_MEMORY_ALLOCATION_PARAMS, 128);
RM_ABI_OFF(NV_MEMORY_ALLOCATION_PARAMS, type, 0x04);
RM_ABI_OFF(NV_MEMORY_ALLOCATION_PARAMS, flags, 0x08);
RM_ABI_OFF(NV_MEMORY_ALLOCATION_PARAMS, width, 0x0C);
RM_ABI_OFF(NV_MEMORY_ALLOCATION_PARAMS, pitch, 0x14);
RM_ABI_OFF(NV_MEMORY_ALLOCATION_PARAMS, attr, 0x18);
RM_ABI_OFF(NV_MEMORY_ALLOCATION_PARAMS, attr2, 0x1C);
RM_ABI_OFF(NV_MEMORY_ALLOCATION_PARAMS, format, 0x20);
RM_ABI_OFF(NV_MEMORY_ALLOCATION_PARAMS, comprCovg, 0x24);
RM_ABI_OFF(NV_MEMORY_ALLOCATION_PARAMS, zcullCovg, 0x28);
RM_ABI_OFF(NV_MEMORY_ALLOCATION_PARAMS, rangeLo, 0x30);
RM_ABI_OFF(NV_MEMORY_ALLOCATION_PARAMS, rangeHi, 0x38);
RM_ABI_OFF(NV_MEMORY_ALLOCATION_PARAMS, size, 0x40);
RM_ABI_OFF(NV_MEMORY_ALLOCATION_PARAMS, alignment, 0x48);
RM_ABI_OFF(NV_MEMORY_ALLOCATION_PARAMS, offset, 0x50);
RM_ABI_OFF(NV_MEMORY_ALLOCATION_PARAMS, limit, 0x58);
RM_ABI_OFF(NV_MEMORY_ALLOCATION_PARAMS, address, 0x60);
RM_ABI_OFF(NV_MEMORY_ALLOCATION_PARAMS, ctagOffset, 0x68);
RM_ABI_OFF(NV_MEMORY_ALLOCATION_PARAMS, hVASpace, 0x6C);
RM_ABI_OFF(NV_MEMORY_ALLOCATION_PARAMS, internalflags, 0x70);
RM_ABI_OFF(NV_MEMORY_ALLOCATION_PARAMS, tag, 0x74);
RM_ABI_OFF(NV_MEMORY_ALLOCATION_PARAMS, numaNode, 0x78);

#define NVOS32_TYPE_IMAGE 0u
#define NVOS32_TYPE_NOTIFIER 0xDu
/* flags: MAP_NOT_REQUIRED 0x8000 | MEMORY_HANDLE_PROVIDED 0x4000 | ALIGNMENT_FORCE 0x100 |
 * IGNORE_BANK_PLACEMENT 0x1, + PERSISTENT_VIDMEM 0x10000 for vidmem (rm.md §3.1 table) */
#define RM_MEM_FLAGS_VIDMEM 0x1C101u
#define RM_MEM_FLAGS_SYSMEM 0xC101u
#define RM_MEM_FORMAT 6u
/* attr (NVOS32_ATTR_*) and attr2 (NVOS32_ATTR2_*) fields, (hi, lo) from rm.md §3.1 */
#define NVOS32_ATTR_PAGE_SIZE_SHIFT 23 /* 24:23 */
#define NVOS32_ATTR_PAGE_SIZE_HUGE 3u
#define NVOS32_ATTR_LOCATION_SHIFT 25 /* 26:25 */
#define NVOS32_ATTR_LOCATION_PCI 1u
#define NVOS32_ATTR_PHYSICALITY_SHIFT 27 /* 28:27 */
#define NVOS32_ATTR_PHYSICALITY_CONTIGUOUS 2u
#define NVOS32_ATTR_PHYSICALITY_ALLOW_NONCONTIGUOUS 3u
#define NVOS32_ATTR2_ZBC_PREFER_NO_ZBC 1u  /* 1:0 */
#define NVOS32_ATTR2_GPU_CACHEABLE_SHIFT 2 /* 3:2 */
#define NVOS32_ATTR2_GPU_CACHEABLE_YES 1u
#define NVOS32_ATTR2_GPU_CACHEABLE_NO 2u
#define NVOS32_ATTR2_PAGE_SIZE_HUGE_SHIFT 20 /* 21:20 */
#define NVOS32_ATTR2_PAGE_SIZE_HUGE_2MB 1u

/* NVOS02 flags for OS descriptors: PHYSICALITY 7:4 = NONCONTIGUOUS, COHERENCY 15:12 =
 * CACHED, MAPPING 31:30 = NO_MAP (rm.md §3.3) */
#define RM_OSDESC_FLAGS 0x40001010u
/* First client-chosen handle (rm.md §2: tinygrad counts up from 0x1001). */
#define RM_CLIENT_HANDLE_FIRST 0x1001u

/* NVOS46 flags: PAGE_SIZE 11:8 = 4 KiB, CACHE_SNOOP bit 4, DMA_OFFSET_FIXED bit 15 (rm.md §3.5) */
#define RM_MAP_DMA_FLAGS 0x8110u

/* ==== Channels (rm.md §4.1) ==== */

typedef struct {
    uint64_t base;
    uint64_t size;
    uint32_t addressSpace;
    uint32_t cacheAttrib;
} NV_MEMORY_DESC_PARAMS;
RM_ABI_CHECK(NV_MEMORY_DESC_PARAMS, 24);

typedef struct {
    uint32_t hObjectError;
    uint32_t hObjectBuffer;
    uint64_t gpFifoOffset;
    uint32_t gpFifoEntries;
    uint32_t flags;
    uint32_t hContextShare;
    uint32_t hVASpace;
    uint32_t hUserdMemory[8];
    uint64_t userdOffset[8];
    uint32_t engineType;
    uint32_t cid;
    uint32_t subDeviceId;
    uint32_t hObjectEccError;
    NV_MEMORY_DESC_PARAMS instanceMem;
    NV_MEMORY_DESC_PARAMS userdMem;
    NV_MEMORY_DESC_PARAMS ramfcMem;
    NV_MEMORY_DESC_PARAMS mthdbufMem;
    uint32_t hPhysChannelGroup;
    uint32_t internalFlags;
    NV_MEMORY_DESC_PARAMS errorNotifierMem;
    NV_MEMORY_DESC_PARAMS eccErrorNotifierMem;
    uint32_t ProcessID;
    uint32_t SubProcessID;
    uint32_t encryptIv[3];
    uint32_t decryptIv[3];
    uint32_t hmacNonce[8];
    uint32_t tpcConfigID;
    uint32_t pad0;
} NV_CHANNEL_ALLOC_PARAMS;
RM_ABI_CHECK(NV_CHANNEL_ALLOC_PARAMS, 368);
RM_ABI_OFF(NV_CHANNEL_ALLOC_PARAMS, hObjectBuffer, 0x004);
RM_ABI_OFF(NV_CHANNEL_ALLOC_PARAMS, gpFifoOffset, 0x008);
RM_ABI_OFF(NV_CHANNEL_ALLOC_PARAMS, gpFifoEntries, 0x010);
RM_ABI_OFF(NV_CHANNEL_ALLOC_PARAMS, flags, 0x014);
RM_ABI_OFF(NV_CHANNEL_ALLOC_PARAMS, hContextShare, 0x018);
RM_ABI_OFF(NV_CHANNEL_ALLOC_PARAMS, hVASpace, 0x01C);
RM_ABI_OFF(NV_CHANNEL_ALLOC_PARAMS, hUserdMemory, 0x020);
RM_ABI_OFF(NV_CHANNEL_ALLOC_PARAMS, userdOffset, 0x040);
RM_ABI_OFF(NV_CHANNEL_ALLOC_PARAMS, engineType, 0x080);
RM_ABI_OFF(NV_CHANNEL_ALLOC_PARAMS, cid, 0x084);
RM_ABI_OFF(NV_CHANNEL_ALLOC_PARAMS, subDeviceId, 0x088);
RM_ABI_OFF(NV_CHANNEL_ALLOC_PARAMS, hObjectEccError, 0x08C);
RM_ABI_OFF(NV_CHANNEL_ALLOC_PARAMS, instanceMem, 0x090);
RM_ABI_OFF(NV_CHANNEL_ALLOC_PARAMS, userdMem, 0x0A8);
RM_ABI_OFF(NV_CHANNEL_ALLOC_PARAMS, ramfcMem, 0x0C0);
RM_ABI_OFF(NV_CHANNEL_ALLOC_PARAMS, mthdbufMem, 0x0D8);
RM_ABI_OFF(NV_CHANNEL_ALLOC_PARAMS, hPhysChannelGroup, 0x0F0);
RM_ABI_OFF(NV_CHANNEL_ALLOC_PARAMS, internalFlags, 0x0F4);
RM_ABI_OFF(NV_CHANNEL_ALLOC_PARAMS, errorNotifierMem, 0x0F8);
RM_ABI_OFF(NV_CHANNEL_ALLOC_PARAMS, eccErrorNotifierMem, 0x110);
RM_ABI_OFF(NV_CHANNEL_ALLOC_PARAMS, ProcessID, 0x128);
RM_ABI_OFF(NV_CHANNEL_ALLOC_PARAMS, SubProcessID, 0x12C);
RM_ABI_OFF(NV_CHANNEL_ALLOC_PARAMS, encryptIv, 0x130);
RM_ABI_OFF(NV_CHANNEL_ALLOC_PARAMS, decryptIv, 0x13C);
RM_ABI_OFF(NV_CHANNEL_ALLOC_PARAMS, hmacNonce, 0x148);
RM_ABI_OFF(NV_CHANNEL_ALLOC_PARAMS, tpcConfigID, 0x168);

/* rm.md §4.1 step 3; RM fills the token, we preset 0xFFFFFFFF to see that it did. */
#define NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN 0xC36F0108u
typedef struct {
    uint32_t workSubmitToken;
} NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN_PARAMS;
RM_ABI_CHECK(NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN_PARAMS, 4);

/* USERD (rm.md §4.2): only GPPut is written by software. */
#define RM_USERD_B 0x200u
#define RM_USERD_GP_GET 0x88u
#define RM_USERD_GP_PUT 0x8Cu

/* UVM channel registration range (rm.md §4.1 step 4: a fresh 64 MiB VA range) */
#define RM_CHANNEL_UVM_RANGE_B (64ull << 20)

/*
 * Channel error notifier: NvNotification records, index 0 =
 * NV_CHANNELGPFIFO_NOTIFICATION_TYPE_ERROR, 3 records (NV_CHANNELGPFIFO_NOTIFICATION_TYPE__SIZE_1)
 * = 48 bytes are what RM needs (open-gpu-kernel-modules: nvos.h NvNotification,
 * cl906f.h / clc36f.h notification types; UVM sizes its notifier the same way). On a
 * channel error RM writes the Xid code (nverror.h ROBUST_CHANNEL_*) into info32.
 */
typedef struct {
    uint32_t timeStamp[2]; /* ns */
    uint32_t info32;
    uint16_t info16;
    uint16_t status;
} NvNotification;
RM_ABI_CHECK(NvNotification, 16);
RM_ABI_OFF(NvNotification, info32, 0x8);
RM_ABI_OFF(NvNotification, info16, 0xC);
RM_ABI_OFF(NvNotification, status, 0xE);
#define NV_CHANNELGPFIFO_NOTIFICATION_TYPE_ERROR 0u
#define NV_CHANNELGPFIFO_NOTIFICATION_TYPE__SIZE_1 3u
#define RM_NOTIFIER_B 0x1000u /* one page holds the 48 bytes */

/* ==== GR information (rm.md §8.4) ==== */

typedef struct {
    uint32_t flags;
    uint32_t pad0;
    uint64_t route;
} NV2080_CTRL_GR_ROUTE_INFO;
RM_ABI_CHECK(NV2080_CTRL_GR_ROUTE_INFO, 16);

#define NV2080_CTRL_CMD_GR_GET_INFO 0x20801201u
typedef struct {
    uint32_t index;
    uint32_t data;
} NV2080_CTRL_GR_INFO;
RM_ABI_CHECK(NV2080_CTRL_GR_INFO, 8);
typedef struct {
    uint32_t grInfoListSize;
    uint32_t pad0;
    uint64_t grInfoList; /* NvP64 to NV2080_CTRL_GR_INFO[grInfoListSize] */
    NV2080_CTRL_GR_ROUTE_INFO grRouteInfo;
} NV2080_CTRL_GR_GET_INFO_PARAMS;
RM_ABI_CHECK(NV2080_CTRL_GR_GET_INFO_PARAMS, 32);
RM_ABI_OFF(NV2080_CTRL_GR_GET_INFO_PARAMS, grInfoList, 0x8);
RM_ABI_OFF(NV2080_CTRL_GR_GET_INFO_PARAMS, grRouteInfo, 0x10);

#define NV2080_CTRL_GR_INFO_INDEX_SHADER_PIPE_COUNT 0x07u /* measured: GPCs */
#define NV2080_CTRL_GR_INFO_INDEX_THREAD_STACK_SCALING_FACTOR 0x08u
#define NV2080_CTRL_GR_INFO_INDEX_SHADER_PIPE_SUB_COUNT 0x09u /* measured: TPCs */
#define NV2080_CTRL_GR_INFO_INDEX_SM_VERSION 0x0Cu
#define NV2080_CTRL_GR_INFO_INDEX_MAX_WARPS_PER_SM 0x0Du
#define NV2080_CTRL_GR_INFO_INDEX_MAX_THREADS_PER_WARP 0x0Eu
#define NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_GPCS 0x14u
#define NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_TPC_PER_GPC 0x17u
#define NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_SM_PER_TPC 0x20u

#define NV2080_CTRL_CMD_GR_GET_GPC_MASK 0x2080122Au
typedef struct {
    NV2080_CTRL_GR_ROUTE_INFO grRouteInfo;
    uint32_t gpcMask;
    uint32_t pad0;
} NV2080_CTRL_GR_GET_GPC_MASK_PARAMS;
RM_ABI_CHECK(NV2080_CTRL_GR_GET_GPC_MASK_PARAMS, 24);
RM_ABI_OFF(NV2080_CTRL_GR_GET_GPC_MASK_PARAMS, gpcMask, 0x10);

#define NV2080_CTRL_CMD_GR_GET_TPC_MASK 0x2080122Bu
typedef struct {
    NV2080_CTRL_GR_ROUTE_INFO grRouteInfo;
    uint32_t gpcId;
    uint32_t tpcMask;
} NV2080_CTRL_GR_GET_TPC_MASK_PARAMS;
RM_ABI_CHECK(NV2080_CTRL_GR_GET_TPC_MASK_PARAMS, 24);
RM_ABI_OFF(NV2080_CTRL_GR_GET_TPC_MASK_PARAMS, gpcId, 0x10);
RM_ABI_OFF(NV2080_CTRL_GR_GET_TPC_MASK_PARAMS, tpcMask, 0x14);

/* ==== Optional informational controls (not in rm.md; failure only loses the info) ==== */

/* open-gpu-kernel-modules ctrl2080gpu.h: NV2080_CTRL_GPU_GET_NAME_STRING_PARAMS
 * {u32 gpuNameStringFlags; union {u8 ascii[64]; u16 unicode[64]}} (flags 0 = ASCII). */
#define NV2080_CTRL_CMD_GPU_GET_NAME_STRING 0x20800110u
#define NV2080_GPU_MAX_NAME_STRING_LENGTH 0x40u
typedef struct {
    uint32_t gpuNameStringFlags;
    uint8_t ascii[2 * NV2080_GPU_MAX_NAME_STRING_LENGTH]; /* union with u16 unicode[64] */
} NV2080_CTRL_GPU_GET_NAME_STRING_PARAMS;
RM_ABI_CHECK(NV2080_CTRL_GPU_GET_NAME_STRING_PARAMS, 132);
RM_ABI_OFF(NV2080_CTRL_GPU_GET_NAME_STRING_PARAMS, ascii, 0x4);

/* open-gpu-kernel-modules ctrl2080fb.h: NV2080_CTRL_FB_GET_INFO_PARAMS {u32 fbInfoListSize;
 * NvP64 fbInfoList} of {u32 index; u32 data}; TOTAL_RAM_SIZE (index 8) is in KiB. */
#define NV2080_CTRL_CMD_FB_GET_INFO 0x20801301u
#define NV2080_CTRL_FB_INFO_INDEX_TOTAL_RAM_SIZE 0x08u
#define NV2080_CTRL_FB_INFO_INDEX_HEAP_FREE 0x16u /* KiB free in RM's heap (NVIDIA's ctrl2080fb.h) */
typedef struct {
    uint32_t index;
    uint32_t data;
} NV2080_CTRL_FB_INFO;
typedef struct {
    uint32_t fbInfoListSize;
    uint32_t pad0;
    uint64_t fbInfoList;
} NV2080_CTRL_FB_GET_INFO_PARAMS;
RM_ABI_CHECK(NV2080_CTRL_FB_INFO, 8);
RM_ABI_CHECK(NV2080_CTRL_FB_GET_INFO_PARAMS, 16);
RM_ABI_OFF(NV2080_CTRL_FB_GET_INFO_PARAMS, fbInfoList, 0x8);

/* ==== Copy engines (not in rm.md: open-gpu-kernel-modules tag 580.95.05, files cited) ==== */

/* cl2080_notification.h: engine types of the 20 logical copy engines (LCEs) - COPY0..9 are
 * 0x09..0x12, COPY10..19 0x34..0x3D (NV2080_ENGINE_TYPE_COPY(i), _IS_COPY, _COPY_IDX). */
#define NV2080_ENGINE_TYPE_COPY0 0x09u
#define NV2080_ENGINE_TYPE_COPY9 0x12u
#define NV2080_ENGINE_TYPE_COPY10 0x34u
#define NV2080_ENGINE_TYPE_COPY19 0x3Du
#define RM_ENGINE_TYPE_IS_COPY(e)                                                                            \
    (((e) >= NV2080_ENGINE_TYPE_COPY0 && (e) <= NV2080_ENGINE_TYPE_COPY9) ||                                 \
     ((e) >= NV2080_ENGINE_TYPE_COPY10 && (e) <= NV2080_ENGINE_TYPE_COPY19))
#define RM_ENGINE_TYPE_COPY_IDX(e)                                                                           \
    ((e) <= NV2080_ENGINE_TYPE_COPY9 ? (e)-NV2080_ENGINE_TYPE_COPY0 : (e)-NV2080_ENGINE_TYPE_COPY10 + 10)

/* ctrl2080gpu.h: the subdevice's engine list (NV2080_ENGINE_TYPE_* values). The list size is
 * NV2080_ENGINE_TYPE_LAST (0x54 on 580; 0x34 on older branches, which our version check
 * refuses). */
#define NV2080_CTRL_CMD_GPU_GET_ENGINES_V2 0x20800170u
#define NV2080_GPU_MAX_ENGINES_LIST_SIZE 0x54u
typedef struct {
    uint32_t engineCount;
    uint32_t engineList[NV2080_GPU_MAX_ENGINES_LIST_SIZE];
} NV2080_CTRL_GPU_GET_ENGINES_V2_PARAMS;
RM_ABI_CHECK(NV2080_CTRL_GPU_GET_ENGINES_V2_PARAMS, 340);
RM_ABI_OFF(NV2080_CTRL_GPU_GET_ENGINES_V2_PARAMS, engineList, 0x4);

/* ctrl2080ce.h: capabilities of one copy engine, two bytes of flags (byte:mask). */
#define NV2080_CTRL_CMD_CE_GET_CAPS_V2 0x20802A03u
#define NV2080_CTRL_CE_CAPS_TBL_SIZE 2u
typedef struct {
    uint32_t ceEngineType; /* NV2080_ENGINE_TYPE_COPY(i) */
    uint8_t capsTbl[NV2080_CTRL_CE_CAPS_TBL_SIZE];
    uint8_t pad0[2];
} NV2080_CTRL_CE_GET_CAPS_V2_PARAMS;
RM_ABI_CHECK(NV2080_CTRL_CE_GET_CAPS_V2_PARAMS, 8);
RM_ABI_OFF(NV2080_CTRL_CE_GET_CAPS_V2_PARAMS, capsTbl, 0x4);
#define NV2080_CTRL_CE_CAPS_CE_GRCE 0x01u       /* byte 0: a GR copy engine (runs in GR's group) */
#define NV2080_CTRL_CE_CAPS_CE_SHARED 0x02u     /* byte 0: shares its PCEs with another LCE */
#define NV2080_CTRL_CE_CAPS_CE_NVLINK_P2P 0x10u /* byte 0: meant for NVLink peer traffic */

/* ctrl2080ce.h: the physical copy engines (PCEs) behind one LCE, a bit each. */
#define NV2080_CTRL_CMD_CE_GET_CE_PCE_MASK 0x20802A02u
typedef struct {
    uint32_t ceEngineType;
    uint32_t pceMask;
} NV2080_CTRL_CE_GET_CE_PCE_MASK_PARAMS;
RM_ABI_CHECK(NV2080_CTRL_CE_GET_CE_PCE_MASK_PARAMS, 8);
RM_ABI_OFF(NV2080_CTRL_CE_GET_CE_PCE_MASK_PARAMS, pceMask, 0x4);

/* clb0b5sw.h: allocation parameters of a copy-class object; VERSION_1 reads engineType as an
 * NV2080_ENGINE_TYPE (UVM's engineAllocate in nv_gpu_ops.c passes this for its CE channels). */
#define NVB0B5_ALLOCATION_PARAMETERS_VERSION_1 1u
typedef struct {
    uint32_t version;
    uint32_t engineType;
} NVB0B5_ALLOCATION_PARAMETERS;
RM_ABI_CHECK(NVB0B5_ALLOCATION_PARAMETERS, 8);
RM_ABI_OFF(NVB0B5_ALLOCATION_PARAMETERS, engineType, 0x4);

/* ==== Peer-to-peer (not in rm.md: open-gpu-kernel-modules tag 580.95.05, files cited) ==== */

/* ctrl0000system.h: P2P capabilities between the GPUs named by gpu id (NV_ESC_CARD_INFO
 * gpu_id), issued on the client. busPeerIds[X * gpuCount + Y] is the peer id GPU X uses for
 * GPU Y (NV0000_CTRL_SYSTEM_GET_P2P_CAPS_INVALID_PEER when none). */
#define NV0000_CTRL_CMD_SYSTEM_GET_P2P_CAPS_V2 0x12Bu
#define NV0000_CTRL_SYSTEM_MAX_ATTACHED_GPUS 32u
#define NV0000_CTRL_SYSTEM_MAX_ATTACHED_GPUS_SQUARED 1024u
#define NV0000_CTRL_P2P_CAPS_INDEX_TABLE_SIZE 9u
typedef struct {
    uint32_t gpuIds[NV0000_CTRL_SYSTEM_MAX_ATTACHED_GPUS];
    uint32_t gpuCount;
    uint32_t p2pCaps; /* NV0000_CTRL_SYSTEM_GET_P2P_CAPS_* bits */
    uint32_t p2pOptimalReadCEs;
    uint32_t p2pOptimalWriteCEs;
    uint8_t p2pCapsStatus[NV0000_CTRL_P2P_CAPS_INDEX_TABLE_SIZE]; /* NV0000_P2P_CAPS_STATUS_*, by index */
    uint8_t pad0[3];
    uint32_t busPeerIds[NV0000_CTRL_SYSTEM_MAX_ATTACHED_GPUS_SQUARED];
    uint32_t busEgmPeerIds[NV0000_CTRL_SYSTEM_MAX_ATTACHED_GPUS_SQUARED];
} NV0000_CTRL_SYSTEM_GET_P2P_CAPS_V2_PARAMS;
RM_ABI_CHECK(NV0000_CTRL_SYSTEM_GET_P2P_CAPS_V2_PARAMS, 8348);
RM_ABI_OFF(NV0000_CTRL_SYSTEM_GET_P2P_CAPS_V2_PARAMS, gpuCount, 0x80);
RM_ABI_OFF(NV0000_CTRL_SYSTEM_GET_P2P_CAPS_V2_PARAMS, p2pCaps, 0x84);
RM_ABI_OFF(NV0000_CTRL_SYSTEM_GET_P2P_CAPS_V2_PARAMS, p2pOptimalReadCEs, 0x88);
RM_ABI_OFF(NV0000_CTRL_SYSTEM_GET_P2P_CAPS_V2_PARAMS, p2pOptimalWriteCEs, 0x8C);
RM_ABI_OFF(NV0000_CTRL_SYSTEM_GET_P2P_CAPS_V2_PARAMS, p2pCapsStatus, 0x90);
RM_ABI_OFF(NV0000_CTRL_SYSTEM_GET_P2P_CAPS_V2_PARAMS, busPeerIds, 0x9C);
RM_ABI_OFF(NV0000_CTRL_SYSTEM_GET_P2P_CAPS_V2_PARAMS, busEgmPeerIds, 0x109C);
/* p2pCaps bits (single-bit fields i:i in the header) */
#define NV0000_CTRL_SYSTEM_GET_P2P_CAPS_WRITES_SUPPORTED (1u << 0)
#define NV0000_CTRL_SYSTEM_GET_P2P_CAPS_READS_SUPPORTED (1u << 1)
#define NV0000_CTRL_SYSTEM_GET_P2P_CAPS_NVLINK_SUPPORTED (1u << 3)
#define NV0000_CTRL_SYSTEM_GET_P2P_CAPS_ATOMICS_SUPPORTED (1u << 4)
#define NV0000_CTRL_SYSTEM_GET_P2P_CAPS_PCI_SUPPORTED (1u << 6)
#define NV0000_CTRL_SYSTEM_GET_P2P_CAPS_C2C_SUPPORTED (1u << 12)
#define NV0000_CTRL_SYSTEM_GET_P2P_CAPS_PCI_BAR1_SUPPORTED (1u << 13)
/* p2pCapsStatus indices and values */
#define NV0000_CTRL_P2P_CAPS_INDEX_READ 0u
#define NV0000_CTRL_P2P_CAPS_INDEX_WRITE 1u
#define NV0000_CTRL_P2P_CAPS_INDEX_NVLINK 2u
#define NV0000_P2P_CAPS_STATUS_OK 0x00u
#define NV0000_P2P_CAPS_STATUS_CHIPSET_NOT_SUPPORTED 0x01u
#define NV0000_P2P_CAPS_STATUS_GPU_NOT_SUPPORTED 0x02u
#define NV0000_P2P_CAPS_STATUS_IOH_TOPOLOGY_NOT_SUPPORTED 0x03u
#define NV0000_P2P_CAPS_STATUS_DISABLED_BY_REGKEY 0x04u
#define NV0000_P2P_CAPS_STATUS_NOT_SUPPORTED 0x05u
#define NV0000_CTRL_SYSTEM_GET_P2P_CAPS_INVALID_PEER 0xFFFFFFFFu

/* ==== UVM (/dev/nvidia-uvm, raw request numbers; rm.md §1.4) ==== */

#define UVM_INITIALIZE 0x30000001ul
#define UVM_DEINITIALIZE 0x30000002ul
#define UVM_MM_INITIALIZE 75ul
#define UVM_REGISTER_GPU 37ul
#define UVM_REGISTER_GPU_VASPACE 25ul
#define UVM_REGISTER_CHANNEL 27ul
#define UVM_ENABLE_PEER_ACCESS 29ul /* PCIe peers only: NVLink peers come with registration (below) */
#define UVM_MAP_EXTERNAL_ALLOCATION 33ul
#define UVM_FREE 34ul
#define UVM_CREATE_EXTERNAL_RANGE 73ul

typedef struct {
    uint64_t flags;
    uint32_t rmStatus;
    uint32_t pad0;
} UVM_INITIALIZE_PARAMS;
RM_ABI_CHECK(UVM_INITIALIZE_PARAMS, 16);
RM_ABI_OFF(UVM_INITIALIZE_PARAMS, rmStatus, 0x8);

typedef struct {
    int32_t uvmFd;
    uint32_t rmStatus;
} UVM_MM_INITIALIZE_PARAMS;
RM_ABI_CHECK(UVM_MM_INITIALIZE_PARAMS, 8);
RM_ABI_OFF(UVM_MM_INITIALIZE_PARAMS, rmStatus, 0x4);

typedef struct {
    uint8_t gpu_uuid[16];
    uint8_t numaEnabled;
    uint8_t pad0[3];
    int32_t numaNodeId;
    int32_t rmCtrlFd;
    uint32_t hClient;
    uint32_t hSmcPartRef;
    uint32_t rmStatus;
} UVM_REGISTER_GPU_PARAMS;
RM_ABI_CHECK(UVM_REGISTER_GPU_PARAMS, 40);
RM_ABI_OFF(UVM_REGISTER_GPU_PARAMS, numaEnabled, 0x10);
RM_ABI_OFF(UVM_REGISTER_GPU_PARAMS, numaNodeId, 0x14);
RM_ABI_OFF(UVM_REGISTER_GPU_PARAMS, rmCtrlFd, 0x18);
RM_ABI_OFF(UVM_REGISTER_GPU_PARAMS, hClient, 0x1C);
RM_ABI_OFF(UVM_REGISTER_GPU_PARAMS, hSmcPartRef, 0x20);
RM_ABI_OFF(UVM_REGISTER_GPU_PARAMS, rmStatus, 0x24);

typedef struct {
    uint8_t gpuUuid[16];
    int32_t rmCtrlFd;
    uint32_t hClient;
    uint32_t hVaSpace;
    uint32_t rmStatus;
} UVM_REGISTER_GPU_VASPACE_PARAMS;
RM_ABI_CHECK(UVM_REGISTER_GPU_VASPACE_PARAMS, 32);
RM_ABI_OFF(UVM_REGISTER_GPU_VASPACE_PARAMS, rmCtrlFd, 0x10);
RM_ABI_OFF(UVM_REGISTER_GPU_VASPACE_PARAMS, hClient, 0x14);
RM_ABI_OFF(UVM_REGISTER_GPU_VASPACE_PARAMS, hVaSpace, 0x18);
RM_ABI_OFF(UVM_REGISTER_GPU_VASPACE_PARAMS, rmStatus, 0x1C);

typedef struct {
    uint8_t gpuUuid[16];
    int32_t rmCtrlFd;
    uint32_t hClient;
    uint32_t hChannel;
    uint32_t pad0;
    uint64_t base;
    uint64_t length;
    uint32_t rmStatus;
    uint32_t pad1;
} UVM_REGISTER_CHANNEL_PARAMS;
RM_ABI_CHECK(UVM_REGISTER_CHANNEL_PARAMS, 56);
RM_ABI_OFF(UVM_REGISTER_CHANNEL_PARAMS, rmCtrlFd, 0x10);
RM_ABI_OFF(UVM_REGISTER_CHANNEL_PARAMS, hClient, 0x14);
RM_ABI_OFF(UVM_REGISTER_CHANNEL_PARAMS, hChannel, 0x18);
RM_ABI_OFF(UVM_REGISTER_CHANNEL_PARAMS, base, 0x20);
RM_ABI_OFF(UVM_REGISTER_CHANNEL_PARAMS, length, 0x28);
RM_ABI_OFF(UVM_REGISTER_CHANNEL_PARAMS, rmStatus, 0x30);

typedef struct {
    uint8_t gpuUuid[16];
    uint32_t gpuMappingType; /* 1 = ReadWriteAtomic (tinygrad) */
    uint32_t gpuCachingType;
    uint32_t gpuFormatType;
    uint32_t gpuElementBits;
    uint32_t gpuCompressionType;
} UvmGpuMappingAttributes;
RM_ABI_CHECK(UvmGpuMappingAttributes, 36);
RM_ABI_OFF(UvmGpuMappingAttributes, gpuMappingType, 0x10);
RM_ABI_OFF(UvmGpuMappingAttributes, gpuCachingType, 0x14);
RM_ABI_OFF(UvmGpuMappingAttributes, gpuFormatType, 0x18);
RM_ABI_OFF(UvmGpuMappingAttributes, gpuElementBits, 0x1C);
RM_ABI_OFF(UvmGpuMappingAttributes, gpuCompressionType, 0x20);
#define UVM_GPU_MAPPING_TYPE_READ_WRITE_ATOMIC 1u
#define UVM_MAX_GPUS 256u

typedef struct {
    uint64_t base;
    uint64_t length;
    uint64_t offset;
    UvmGpuMappingAttributes perGpuAttributes[UVM_MAX_GPUS];
    uint64_t gpuAttributesCount;
    int32_t rmCtrlFd;
    uint32_t hClient;
    uint32_t hMemory;
    uint32_t rmStatus;
} UVM_MAP_EXTERNAL_ALLOCATION_PARAMS;
RM_ABI_CHECK(UVM_MAP_EXTERNAL_ALLOCATION_PARAMS, 9264);
RM_ABI_OFF(UVM_MAP_EXTERNAL_ALLOCATION_PARAMS, length, 0x8);
RM_ABI_OFF(UVM_MAP_EXTERNAL_ALLOCATION_PARAMS, offset, 0x10);
RM_ABI_OFF(UVM_MAP_EXTERNAL_ALLOCATION_PARAMS, perGpuAttributes, 0x18);
RM_ABI_OFF(UVM_MAP_EXTERNAL_ALLOCATION_PARAMS, gpuAttributesCount, 0x2418);
RM_ABI_OFF(UVM_MAP_EXTERNAL_ALLOCATION_PARAMS, rmCtrlFd, 0x2420);
RM_ABI_OFF(UVM_MAP_EXTERNAL_ALLOCATION_PARAMS, hClient, 0x2424);
RM_ABI_OFF(UVM_MAP_EXTERNAL_ALLOCATION_PARAMS, hMemory, 0x2428);
RM_ABI_OFF(UVM_MAP_EXTERNAL_ALLOCATION_PARAMS, rmStatus, 0x242C);

/* UVM_FREE and UVM_CREATE_EXTERNAL_RANGE share this shape. */
typedef struct {
    uint64_t base;
    uint64_t length;
    uint32_t rmStatus;
    uint32_t pad0;
} UVM_FREE_PARAMS;
RM_ABI_CHECK(UVM_FREE_PARAMS, 24);
RM_ABI_OFF(UVM_FREE_PARAMS, rmStatus, 0x10);
typedef UVM_FREE_PARAMS UVM_CREATE_EXTERNAL_RANGE_PARAMS;

/* UVM_ENABLE_PEER_ACCESS (rm.md §1.4; uvm_ioctl.h): both GPUs must be registered in this VA
 * space. UVM enables NVLink (and BAR1, C2C) peers itself when the second GPU of such a pair
 * is registered and answers this ioctl with NV_ERR_INVALID_DEVICE for them: it retains PCIe
 * peers only (uvm_va_space.c retain_pcie_peers_from_uuids, uvm_gpu.c
 * uvm_gpu_retain_pcie_peer_access). */
typedef struct {
    uint8_t gpuUuidA[16];
    uint8_t gpuUuidB[16];
    uint32_t rmStatus;
} UVM_ENABLE_PEER_ACCESS_PARAMS;
RM_ABI_CHECK(UVM_ENABLE_PEER_ACCESS_PARAMS, 36);
RM_ABI_OFF(UVM_ENABLE_PEER_ACCESS_PARAMS, gpuUuidB, 0x10);
RM_ABI_OFF(UVM_ENABLE_PEER_ACCESS_PARAMS, rmStatus, 0x20);

#endif /* RM_ABI_H */
