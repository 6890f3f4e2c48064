/* SPDX-License-Identifier: MIT */
/*
 * rm_status.c - { value, "NAME" } tables for NV_STATUS (what RM returns in every escape's
 * status field), for channel-error / Xid codes (what RM writes into a channel's error
 * notifier and prints as "NVRM: Xid") and for the classes we allocate. Layer: kmd (pure
 * tables). The emulator prints the same names in its traces (src/emu/emu_rm.c): names carry
 * no layout, so sharing them costs nothing of the emulator's independent ABI (emu_rm_abi.h).
 *
 * Sources: docs/hw/rm.md §1.5 lists the codes seen in practice (marked "rm.md" below);
 * the rest follow the numbering of nvstatuscodes.h in open-gpu-kernel-modules, which
 * is consecutive from 0x1 and agrees with every rm.md value. Xid numbers are those of
 * nverror.h (ROBUST_CHANNEL_*); the descriptions are ours.
 */
#include "rm_status.h"
#include "rm_abi.h"
#include "gpu_arch.h"

#include <stddef.h>

struct rm_name {
    uint32_t value;
    const char *name;
};

static const struct rm_name rm_status_names[] = {
    {0x00, "NV_OK"}, /* rm.md */
    {0x01, "NV_ERR_BROKEN_FB"},
    {0x02, "NV_ERR_BUFFER_TOO_SMALL"},
    {0x03, "NV_ERR_BUSY_RETRY"},
    {0x04, "NV_ERR_CALLBACK_NOT_SCHEDULED"},
    {0x05, "NV_ERR_CARD_NOT_PRESENT"},
    {0x06, "NV_ERR_CYCLE_DETECTED"},
    {0x07, "NV_ERR_DMA_IN_USE"},
    {0x08, "NV_ERR_DMA_MEM_NOT_LOCKED"},
    {0x09, "NV_ERR_DMA_MEM_NOT_UNLOCKED"},
    {0x0A, "NV_ERR_DUAL_LINK_INUSE"},
    {0x0B, "NV_ERR_ECC_ERROR"},
    {0x0C, "NV_ERR_FIFO_BAD_ACCESS"},
    {0x0D, "NV_ERR_FREQ_NOT_SUPPORTED"},
    {0x0E, "NV_ERR_GPU_DMA_NOT_INITIALIZED"},
    {0x0F, "NV_ERR_GPU_IS_LOST"},
    {0x10, "NV_ERR_GPU_IN_FULLCHIP_RESET"},
    {0x11, "NV_ERR_GPU_NOT_FULL_POWER"},
    {0x12, "NV_ERR_GPU_UUID_NOT_FOUND"},
    {0x13, "NV_ERR_HOT_SWITCH"},
    {0x14, "NV_ERR_I2C_ERROR"},
    {0x15, "NV_ERR_I2C_SPEED_TOO_HIGH"},
    {0x16, "NV_ERR_ILLEGAL_ACTION"},
    {0x17, "NV_ERR_IN_USE"},
    {0x18, "NV_ERR_INFLATE_COMPRESSED_DATA_FAILED"},
    {0x19, "NV_ERR_INSERT_DUPLICATE_NAME"},
    {0x1A, "NV_ERR_INSUFFICIENT_RESOURCES"},   /* rm.md */
    {0x1B, "NV_ERR_INSUFFICIENT_PERMISSIONS"}, /* rm.md */
    {0x1C, "NV_ERR_INSUFFICIENT_POWER"},
    {0x1D, "NV_ERR_INVALID_ACCESS_TYPE"},
    {0x1E, "NV_ERR_INVALID_ADDRESS"},  /* rm.md */
    {0x1F, "NV_ERR_INVALID_ARGUMENT"}, /* rm.md */
    {0x20, "NV_ERR_INVALID_BASE"},
    {0x21, "NV_ERR_INVALID_CHANNEL"},
    {0x22, "NV_ERR_INVALID_CLASS"}, /* rm.md */
    {0x23, "NV_ERR_INVALID_CLIENT"},
    {0x24, "NV_ERR_INVALID_COMMAND"},
    {0x25, "NV_ERR_INVALID_DATA"},
    {0x26, "NV_ERR_INVALID_DEVICE"}, /* rm.md */
    {0x27, "NV_ERR_INVALID_DMA_SPECIFIER"},
    {0x28, "NV_ERR_INVALID_EVENT"},
    {0x29, "NV_ERR_INVALID_FLAGS"}, /* rm.md */
    {0x2A, "NV_ERR_INVALID_FUNCTION"},
    {0x2B, "NV_ERR_INVALID_HEAP"},
    {0x2C, "NV_ERR_INVALID_INDEX"},
    {0x2D, "NV_ERR_INVALID_IRQ_LEVEL"},
    {0x2E, "NV_ERR_INVALID_LIMIT"}, /* rm.md */
    {0x2F, "NV_ERR_INVALID_LOCK_STATE"},
    {0x30, "NV_ERR_INVALID_METHOD"},
    {0x31, "NV_ERR_INVALID_OBJECT"},
    {0x32, "NV_ERR_INVALID_OBJECT_BUFFER"},
    {0x33, "NV_ERR_INVALID_OBJECT_HANDLE"}, /* rm.md */
    {0x34, "NV_ERR_INVALID_OBJECT_NEW"},
    {0x35, "NV_ERR_INVALID_OBJECT_OLD"},
    {0x36, "NV_ERR_INVALID_OBJECT_PARENT"}, /* rm.md */
    {0x37, "NV_ERR_INVALID_OFFSET"},
    {0x38, "NV_ERR_INVALID_OPERATION"},
    {0x39, "NV_ERR_INVALID_OWNER"},
    {0x3A, "NV_ERR_INVALID_PARAM_STRUCT"}, /* rm.md */
    {0x3B, "NV_ERR_INVALID_PARAMETER"},
    {0x3C, "NV_ERR_INVALID_PATH"},
    {0x3D, "NV_ERR_INVALID_POINTER"},
    {0x3E, "NV_ERR_INVALID_REGISTRY_KEY"},
    {0x3F, "NV_ERR_INVALID_REQUEST"},
    {0x40, "NV_ERR_INVALID_STATE"}, /* rm.md */
    {0x41, "NV_ERR_INVALID_STRING_LENGTH"},
    {0x42, "NV_ERR_INVALID_READ"},
    {0x43, "NV_ERR_INVALID_WRITE"},
    {0x44, "NV_ERR_INVALID_XLATE"},
    {0x45, "NV_ERR_IRQ_NOT_FIRING"},
    {0x46, "NV_ERR_IRQ_EDGE_TRIGGERED"},
    {0x47, "NV_ERR_MEMORY_TRAINING_FAILED"},
    {0x48, "NV_ERR_MISMATCHED_SLAVE"},
    {0x49, "NV_ERR_MISMATCHED_TARGET"},
    {0x4A, "NV_ERR_MISSING_TABLE_ENTRY"},
    {0x4B, "NV_ERR_MODULE_LOAD_FAILED"},
    {0x4C, "NV_ERR_MORE_DATA_AVAILABLE"},
    {0x4D, "NV_ERR_MORE_PROCESSING_REQUIRED"},
    {0x4E, "NV_ERR_MULTIPLE_MEMORY_TYPES"},
    {0x4F, "NV_ERR_NO_FREE_FIFOS"},
    {0x50, "NV_ERR_NO_INTR_PENDING"},
    {0x51, "NV_ERR_NO_MEMORY"}, /* rm.md */
    {0x52, "NV_ERR_NO_SUCH_DOMAIN"},
    {0x53, "NV_ERR_NO_VALID_PATH"},
    {0x54, "NV_ERR_NOT_COMPATIBLE"},
    {0x55, "NV_ERR_NOT_READY"},
    {0x56, "NV_ERR_NOT_SUPPORTED"},    /* rm.md */
    {0x57, "NV_ERR_OBJECT_NOT_FOUND"}, /* rm.md */
    {0x58, "NV_ERR_OBJECT_TYPE_MISMATCH"},
    {0x59, "NV_ERR_OPERATING_SYSTEM"},
    {0x5A, "NV_ERR_OTHER_DEVICE_FOUND"},
    {0x5B, "NV_ERR_OUT_OF_RANGE"},
    {0x5C, "NV_ERR_OVERLAPPING_UVM_COMMIT"},
    {0x5D, "NV_ERR_PAGE_TABLE_NOT_AVAIL"},
    {0x5E, "NV_ERR_PID_NOT_FOUND"},
    {0x5F, "NV_ERR_PROTECTION_FAULT"},
    {0x60, "NV_ERR_RC_ERROR"},
    {0x61, "NV_ERR_REJECTED_VBIOS"},
    {0x62, "NV_ERR_RESET_REQUIRED"},
    {0x63, "NV_ERR_STATE_IN_USE"},
    {0x64, "NV_ERR_SIGNAL_PENDING"},
    {0x65, "NV_ERR_TIMEOUT"},
    {0x66, "NV_ERR_TIMEOUT_RETRY"},
    {0x67, "NV_ERR_TOO_MANY_PRIMARIES"},
    {0x68, "NV_ERR_UVM_ADDRESS_IN_USE"}, /* rm.md */
    {0x69, "NV_ERR_MAX_SESSION_LIMIT_REACHED"},
    {0x6A, "NV_ERR_LIB_RM_VERSION_MISMATCH"},
    {0x6B, "NV_ERR_PRIV_SEC_VIOLATION"},
    {0x6C, "NV_ERR_GPU_IN_DEBUG_MODE"},
    {0x6D, "NV_ERR_FEATURE_NOT_ENABLED"},
    {0x6E, "NV_ERR_RESOURCE_LOST"},
    {0x6F, "NV_ERR_PMU_NOT_READY"},
    {0x70, "NV_ERR_FLCN_ERROR"},
    {0x71, "NV_ERR_FATAL_ERROR"},
    {0x72, "NV_ERR_MEMORY_ERROR"},
    {0xFFFF, "NV_ERR_GENERIC"}, /* rm.md */
};

/* Channel-error codes (nverror.h numbering) a compute runtime can meet. */
static const struct rm_name rm_xid_names[] = {
    {8, "channel watchdog timeout (GPU stopped processing)"},
    {13, "graphics engine exception (illegal instruction, out-of-range access, trap)"},
    {31, "MMU fault (GPU access to an unmapped or protected address)"},
    {32, "PBDMA error (corrupt pushbuffer or GPFIFO entry)"},
    {38, "driver firmware error"},
    {43, "channel reset by the driver (after another error)"},
    {45, "preemptive channel removal (process or channel torn down)"},
    {46, "GPU timeout reported by the OS"},
    {48, "double-bit ECC error"},
    {63, "ECC page retirement event"},
    {64, "ECC page retirement failure"},
    {68, "video decoder error"},
    {69, "graphics class error (bad method or argument for the engine class)"},
    {74, "NVLink error"},
    {79, "GPU has fallen off the bus"},
    {92, "excessive single-bit ECC interrupts"},
    {94, "contained ECC error"},
    {95, "uncontained ECC error"},
    {109, "context switch timeout"},
    {119, "GSP RPC timeout"},
    {120, "GSP error"},
};

static const char *
rm_name_find(const struct rm_name *tab, size_t n, uint32_t value)
{
    for (size_t i = 0; i < n; i++)
        if (tab[i].value == value)
            return tab[i].name;
    return NULL;
}

/* Classes by NVIDIA's names (rm.md §2, §8.1). */
static const struct rm_name rm_class_names[] = {
    {NV01_ROOT_CLIENT, "NV01_ROOT_CLIENT"},
    {NV01_DEVICE_0, "NV01_DEVICE_0"},
    {NV20_SUBDEVICE_0, "NV20_SUBDEVICE_0"},
    {NV01_MEMORY_VIRTUAL, "NV01_MEMORY_VIRTUAL"},
    {FERMI_VASPACE_A, "FERMI_VASPACE_A"},
    {NV1_MEMORY_USER, "NV1_MEMORY_USER"},
    {NV1_MEMORY_SYSTEM, "NV1_MEMORY_SYSTEM"},
    {NV01_MEMORY_SYSTEM_OS_DESCRIPTOR, "NV01_MEMORY_SYSTEM_OS_DESCRIPTOR"},
    {KEPLER_CHANNEL_GROUP_A, "KEPLER_CHANNEL_GROUP_A"},
    {FERMI_CONTEXT_SHARE_A, "FERMI_CONTEXT_SHARE_A"},
    {GT200_DEBUGGER, "GT200_DEBUGGER"},
    {TURING_USERMODE_A, "TURING_USERMODE_A"},
    {AMPERE_USERMODE_A, "AMPERE_USERMODE_A"},
    {HOPPER_USERMODE_A, "HOPPER_USERMODE_A"},
    {AMPERE_CHANNEL_GPFIFO_A, "AMPERE_CHANNEL_GPFIFO_A"},
    {HOPPER_CHANNEL_GPFIFO_A, "HOPPER_CHANNEL_GPFIFO_A"},
    {BLACKWELL_CHANNEL_GPFIFO_A, "BLACKWELL_CHANNEL_GPFIFO_A"},
    {BLACKWELL_CHANNEL_GPFIFO_B, "BLACKWELL_CHANNEL_GPFIFO_B"},
    {AMPERE_COMPUTE_A, "AMPERE_COMPUTE_A"},
    {AMPERE_COMPUTE_B, "AMPERE_COMPUTE_B"},
    {ADA_COMPUTE_A, "ADA_COMPUTE_A"},
    {HOPPER_COMPUTE_A, "HOPPER_COMPUTE_A"},
    {BLACKWELL_COMPUTE_A, "BLACKWELL_COMPUTE_A"},
    {BLACKWELL_COMPUTE_B, "BLACKWELL_COMPUTE_B"},
    {AMPERE_DMA_COPY_A, "AMPERE_DMA_COPY_A"},
    {AMPERE_DMA_COPY_B, "AMPERE_DMA_COPY_B"},
    {HOPPER_DMA_COPY_A, "HOPPER_DMA_COPY_A"},
    {BLACKWELL_DMA_COPY_A, "BLACKWELL_DMA_COPY_A"},
    {BLACKWELL_DMA_COPY_B, "BLACKWELL_DMA_COPY_B"},
};

const char *
rm_status_lookup(uint32_t status)
{
    return rm_name_find(rm_status_names, sizeof rm_status_names / sizeof rm_status_names[0], status);
}

const char *
rm_class_lookup(uint32_t cls)
{
    return rm_name_find(rm_class_names, sizeof rm_class_names / sizeof rm_class_names[0], cls);
}

const char *
rm_class_name(uint32_t cls)
{
    const char *s = rm_class_lookup(cls);
    return s ? s : "class";
}

const char *
rm_status_name(uint32_t status)
{
    const char *s = rm_name_find(rm_status_names, sizeof rm_status_names / sizeof rm_status_names[0], status);
    return s ? s : "NV_ERR_<unknown>";
}

const char *
rm_xid_name(uint32_t xid)
{
    const char *s = rm_name_find(rm_xid_names, sizeof rm_xid_names / sizeof rm_xid_names[0], xid);
    return s ? s : "unknown Xid";
}
