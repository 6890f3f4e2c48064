/* SPDX-License-Identifier: MIT */
/*
 * nvgpu_uapi.h - our own definitions of the nvgpu (/dev/nvgpu/igpu0/ctrl, AS, TSG,
 * channel fds) and nvmap (/dev/nvmap) ioctl ABI used on Jetson Orin (ga10b, L4T r36).
 * Layer: kmd. Shared by kmd/nvgpu (the backend) and emu (the driver model),
 * so both sides agree on every number; each layout is _Static_assert'ed (size and
 * offset of every field, aarch64 natural alignment, identical on x86-64).
 * Source of every fact: docs/hw/nvgpu.md (section cited per item); the two ioctls not
 * in that document (NUM_VSMS, GET_TPC_MASKS) are from L4T's uapi nvgpu-ctrl.h. Every
 * number here is checked against NVIDIA's published headers for L4T r35.5 and r36.2 by
 * tests/unit/test_nvgpu_l4t.c (table: tests/data/l4t_uapi.tsv, sources named there).
 */
#ifndef NVGPU_UAPI_H
#define NVGPU_UAPI_H

#include <stddef.h>
#include <stdint.h>

/* ==== ioctl number encoding (nvgpu.md §5.1): dir<<30 | size<<16 | magic<<8 | nr ==== */

#define NVGPU_IOC_NONE 0u
#define NVGPU_IOC_WRITE 1u
#define NVGPU_IOC_READ 2u
#define NVGPU_IOC(dir, magic, nr, size)                                                                      \
    ((unsigned long)(((uint32_t)(dir) << 30) | ((uint32_t)(size) << 16) | ((uint32_t)(magic) << 8) |         \
                     (uint32_t)(nr)))
#define NVGPU_IOWR(magic, nr, type) NVGPU_IOC(NVGPU_IOC_READ | NVGPU_IOC_WRITE, magic, nr, sizeof(type))
#define NVGPU_IOW(magic, nr, type) NVGPU_IOC(NVGPU_IOC_WRITE, magic, nr, sizeof(type))
#define NVGPU_IOR(magic, nr, type) NVGPU_IOC(NVGPU_IOC_READ, magic, nr, sizeof(type))
#define NVGPU_IOC_NR(req) ((uint32_t)(req)&0xFFu)
#define NVGPU_IOC_TYPE(req) (((uint32_t)(req) >> 8) & 0xFFu)
#define NVGPU_IOC_SIZE(req) (((uint32_t)(req) >> 16) & 0x3FFFu)

/* Magics (nvgpu.md §1.1). */
#define NVMAP_IOC_MAGIC 'N'
#define NVGPU_GPU_IOCTL_MAGIC 'G'
#define NVGPU_AS_IOCTL_MAGIC 'A'
#define NVGPU_TSG_IOCTL_MAGIC 'T'
#define NVGPU_IOCTL_MAGIC 'H' /* channel fds */

/* Device nodes (nvgpu.md §1.1). */
#define NVGPU_DEV_NVMAP "/dev/nvmap"
#define NVGPU_DEV_CTRL "/dev/nvgpu/igpu0/ctrl"

/* ==== ctrl fd ('G') ==== */

/* nvgpu.md §1.2 / §5.2: two-level GET_CHARACTERISTICS request. */
struct nvgpu_gpu_get_characteristics {
    uint64_t gpu_characteristics_buf_size; /* in: our buffer size; out: the kernel's */
    uint64_t gpu_characteristics_buf_addr; /* in: user pointer to struct nvgpu_gpu_characteristics */
};

/* nvgpu.md §5.2 (328 bytes, all offsets listed there). */
struct nvgpu_gpu_characteristics {
    uint32_t arch; /* 0x170 on ga10b (§1.2) */
    uint32_t impl; /* 0xB on ga10b */
    uint32_t rev;
    uint32_t num_gpc;
    int32_t numa_domain_id; /* s32 then 4 bytes of implicit padding (§5.2 trap) */
    uint32_t pad_numa_;
    uint64_t L2_cache_size;
    uint64_t on_board_video_memory_size; /* 0: unified memory */
    uint32_t num_tpc_per_gpc;            /* "architectural max" per header comment (§1.2) */
    uint32_t bus_type;
    uint32_t big_page_size; /* 0 on ga10b */
    uint32_t compression_page_size;
    uint32_t pde_coverage_bit_count; /* 47; NOT the ALLOC_AS alignment (§3.1) */
    uint32_t available_big_page_sizes;
    uint64_t flags; /* NVGPU_GPU_FLAGS_* */
    uint32_t twod_class;
    uint32_t threed_class;
    uint32_t compute_class; /* 0xC7C0 AMPERE_COMPUTE_B */
    uint32_t gpfifo_class;  /* 0xC76F */
    uint32_t inline_to_memory_class;
    uint32_t dma_copy_class;     /* 0xC7B5 AMPERE_DMA_COPY_B */
    uint32_t gpc_mask;           /* u32, not u64 (§5.2 trap) */
    uint32_t sm_arch_sm_version; /* 0x807 = SM 8.7 */
    uint32_t sm_arch_spa_version;
    uint32_t sm_arch_warp_count; /* max warps per SM, 48 */
    int16_t gpu_ioctl_nr_last;
    int16_t tsg_ioctl_nr_last;
    int16_t dbg_gpu_ioctl_nr_last;
    int16_t ioctl_channel_nr_last;
    int16_t as_ioctl_nr_last;
    uint8_t gpu_va_bit_count; /* 40 */
    uint8_t reserved;
    uint32_t max_fbps_count;
    uint32_t fbp_en_mask;
    uint32_t emc_en_mask;
    uint32_t max_ltc_per_fbp;
    uint32_t max_lts_per_ltc;
    uint32_t max_tex_per_tpc;
    uint32_t max_gpc_count;
    uint32_t rop_l2_en_mask_DEPRECATED[2];
    uint8_t chipname[8];
    uint64_t gr_compbit_store_base_hw;
    uint32_t gr_gobs_per_comptagline_per_slice;
    uint32_t num_ltc;
    uint32_t lts_per_ltc;
    uint32_t cbc_cache_line_size;
    uint32_t cbc_comptags_per_line;
    uint32_t map_buffer_batch_limit;
    uint64_t max_freq;
    uint32_t graphics_preemption_mode_flags;
    uint32_t compute_preemption_mode_flags;
    uint32_t default_graphics_preempt_mode;
    uint32_t default_compute_preempt_mode;
    uint64_t local_video_memory_size;
    uint16_t pci_vendor_id;
    uint16_t pci_device_id;
    uint16_t pci_subsystem_vendor_id;
    uint16_t pci_subsystem_device_id;
    uint16_t pci_class;
    uint8_t pci_revision;
    uint8_t vbios_oem_version;
    uint32_t vbios_version;
    uint32_t reg_ops_limit;
    uint32_t reserved1;
    int16_t event_ioctl_nr_last;
    uint16_t pad;
    uint32_t max_css_buffer_size;
    int16_t ctxsw_ioctl_nr_last;
    int16_t prof_ioctl_nr_last;
    int16_t nvs_ioctl_nr_last;
    uint8_t reserved2[2];
    uint32_t max_ctxsw_ring_buffer_size;
    uint32_t reserved3;
    uint64_t per_device_identifier;
    uint32_t num_ppc_per_gpc;
    uint32_t max_veid_count_per_tsg;
    uint32_t num_sub_partition_per_fbpa;
    uint32_t gpu_instance_id;
    uint32_t gr_instance_id;
    uint32_t max_gpfifo_entries; /* 2^28 */
    uint32_t max_dbg_tsg_timeslice;
    uint32_t reserved5;
    uint64_t device_instance_id;
};

/* characteristics.flags bits (nvgpu.md §1.2, nvgpu-ctrl.h r36). */
#define NVGPU_GPU_FLAGS_SUPPORT_TSG (1ull << 8)
#define NVGPU_GPU_FLAGS_SUPPORT_DETERMINISTIC_SUBMIT_NO_JOBTRACKING (1ull << 18)
#define NVGPU_GPU_FLAGS_SUPPORT_DETERMINISTIC_SUBMIT_FULL (1ull << 19)
#define NVGPU_GPU_FLAGS_SUPPORT_IO_COHERENCE (1ull << 20)
#define NVGPU_GPU_FLAGS_SUPPORT_RESCHEDULE_RUNLIST (1ull << 21)
#define NVGPU_GPU_FLAGS_SUPPORT_TSG_SUBCONTEXTS (1ull << 22)
#define NVGPU_GPU_FLAGS_SUPPORT_DETERMINISTIC_OPTS (1ull << 24)
#define NVGPU_GPU_FLAGS_SUPPORT_SYNCPOINT_ADDRESS (1ull << 26)
#define NVGPU_GPU_FLAGS_SUPPORT_USER_SYNCPOINT (1ull << 28)
#define NVGPU_GPU_FLAGS_CAN_RAILGATE (1ull << 29)
#define NVGPU_GPU_FLAGS_SUPPORT_USERMODE_SUBMIT (1ull << 30)

/* ga10b identification (nvgpu.md §1.2, observed). */
#define NVGPU_GPU_ARCH_GA100 0x170u
#define NVGPU_GPU_IMPL_GA10B 0xBu

/* nvgpu.md §3.1 */
struct nvgpu_alloc_as_args {
    uint32_t big_page_size;  /* 0: ga10b has no big pages */
    int32_t as_fd;           /* out */
    uint32_t flags;          /* NVGPU_GPU_IOCTL_ALLOC_AS_FLAGS_* */
    uint32_t reserved;       /* must be 0 */
    uint64_t va_range_start; /* non-zero, PDE (2 MiB) aligned */
    uint64_t va_range_end;
    uint64_t va_range_split; /* 0 with UNIFIED_VA */
    uint32_t padding[6];
};
#define NVGPU_GPU_IOCTL_ALLOC_AS_FLAGS_UNIFIED_VA (1u << 1)

/* OPEN_TSG, r36 (24 bytes; field names and offsets as in L4T r36.2 nvgpu-ctrl.h, checked
 * by tests/data/l4t_uapi.tsv). All zero in: no sharing. */
struct nvgpu_gpu_open_tsg_args {
    int32_t tsg_fd; /* out */
    uint32_t flags; /* NVGPU_GPU_IOCTL_OPEN_TSG_FLAGS_SHARE unset */
    uint64_t source_device_instance_id;
    uint64_t share_token;
};

/* nvgpu.md §4.2: a 4-byte union (a 16-byte struct gives ENOTTY). */
struct nvgpu_gpu_open_channel_args {
    union {
        int32_t runlist_id; /* in: -1 = primary graphics runlist */
        int32_t channel_fd; /* out */
    };
};

/* L4T nvgpu-ctrl.h (not in nvgpu.md): G:18 NUM_VSMS, the SM count the driver reports. */
struct nvgpu_gpu_num_vsms {
    uint32_t num_vsms;
    uint32_t reserved;
};

/* L4T nvgpu-ctrl.h (nvgpu.md §1.2 [REC] names G:10): one u32 TPC mask per GPC. */
struct nvgpu_gpu_get_tpc_masks_args {
    uint32_t mask_buf_size; /* in: our buffer bytes; out: the kernel's */
    uint32_t reserved;
    uint64_t mask_buf_addr; /* user pointer to u32[] */
};

struct nvgpu_gpu_zcull_get_ctx_size_args {
    uint32_t size;
};

#define NVGPU_GPU_IOCTL_ZCULL_GET_CTX_SIZE NVGPU_IOR('G', 1, struct nvgpu_gpu_zcull_get_ctx_size_args)
#define NVGPU_GPU_IOCTL_GET_CHARACTERISTICS NVGPU_IOWR('G', 5, struct nvgpu_gpu_get_characteristics)
#define NVGPU_GPU_IOCTL_ALLOC_AS NVGPU_IOWR('G', 8, struct nvgpu_alloc_as_args)
#define NVGPU_GPU_IOCTL_OPEN_TSG NVGPU_IOWR('G', 9, struct nvgpu_gpu_open_tsg_args)
#define NVGPU_GPU_IOCTL_OPEN_TSG_R35 NVGPU_IOWR('G', 9, struct nvgpu_gpu_open_tsg_args_r35)
#define NVGPU_GPU_IOCTL_GET_TPC_MASKS NVGPU_IOWR('G', 10, struct nvgpu_gpu_get_tpc_masks_args)
#define NVGPU_GPU_IOCTL_OPEN_CHANNEL NVGPU_IOWR('G', 11, struct nvgpu_gpu_open_channel_args)
#define NVGPU_GPU_IOCTL_NUM_VSMS NVGPU_IOWR('G', 18, struct nvgpu_gpu_num_vsms)

/* ==== AS fd ('A'), nvgpu.md §3 ==== */

struct nvgpu_as_bind_channel_args {
    uint32_t channel_fd;
};

struct nvgpu_as_unmap_buffer_args {
    uint64_t offset; /* GPU VA from MAP_BUFFER_EX */
};

/* nvgpu.md §3.4 (the 32-byte r36 layout, not the old 24-byte one). */
struct nvgpu_as_alloc_space_args {
    uint64_t pages;
    uint32_t page_size;
    uint32_t flags; /* NVGPU_AS_ALLOC_SPACE_FLAGS_* */
    union {
        uint64_t offset; /* in with FIXED_OFFSET; out: the VA */
        uint64_t align;
    };
    uint32_t padding[2];
};
#define NVGPU_AS_ALLOC_SPACE_FLAGS_FIXED_OFFSET 0x1u
#define NVGPU_AS_ALLOC_SPACE_FLAGS_SPARSE 0x2u

/* nvgpu.md §3.2 */
struct nvgpu_as_map_buffer_ex_args {
    uint32_t flags;       /* NVGPU_AS_MAP_BUFFER_FLAGS_*; 0: kernel picks the VA */
    int16_t compr_kind;   /* -1 NV_KIND_INVALID: no compression */
    int16_t incompr_kind; /* 0: pitch/generic */
    uint32_t dmabuf_fd;
    uint32_t page_size; /* 4096 */
    uint64_t buffer_offset;
    uint64_t mapping_size; /* 0: whole buffer */
    uint64_t offset;       /* in (FIXED_OFFSET) / out: GPU VA */
};
#define NVGPU_AS_MAP_BUFFER_FLAGS_FIXED_OFFSET (1u << 0)
#define NVGPU_AS_MAP_BUFFER_FLAGS_CACHEABLE (1u << 2)
#define NVGPU_AS_MAP_BUFFER_FLAGS_UNMAPPED_PTE (1u << 5)
#define NVGPU_AS_MAP_BUFFER_FLAGS_MAPPABLE_COMPBITS (1u << 6)
#define NVGPU_AS_MAP_BUFFER_FLAGS_L3_ALLOC (1u << 7)
#define NVGPU_AS_MAP_BUFFER_FLAGS_SYSTEM_COHERENT (1u << 9)
#define NVGPU_AS_MAP_BUFFER_FLAGS_TEGRA_RAW (1u << 12)
#define NV_KIND_INVALID (-1)

/* FREE_SPACE: release an ALLOC_SPACE reservation (L4T nvgpu-as.h, same in r35 and r36). */
struct nvgpu_as_free_space_args {
    uint64_t offset; /* the reservation's VA */
    uint64_t pages;
    uint32_t page_size;
    uint32_t padding[3];
};

#define NVGPU_AS_IOCTL_BIND_CHANNEL NVGPU_IOWR('A', 1, struct nvgpu_as_bind_channel_args)
#define NVGPU_AS_IOCTL_FREE_SPACE NVGPU_IOWR('A', 3, struct nvgpu_as_free_space_args)
#define NVGPU_AS_IOCTL_UNMAP_BUFFER NVGPU_IOWR('A', 5, struct nvgpu_as_unmap_buffer_args)
#define NVGPU_AS_IOCTL_ALLOC_SPACE NVGPU_IOWR('A', 6, struct nvgpu_as_alloc_space_args)
#define NVGPU_AS_IOCTL_MAP_BUFFER_EX NVGPU_IOWR('A', 7, struct nvgpu_as_map_buffer_ex_args)

/* ==== TSG fd ('T'), nvgpu.md §4.1-4.2 ==== */

struct nvgpu_tsg_bind_channel_ex_args {
    int32_t channel_fd;
    uint32_t subcontext_id; /* veid from CREATE_SUBCONTEXT */
    uint8_t reserved[16];
};

struct nvgpu_tsg_create_subcontext_args {
    uint32_t type; /* NVGPU_TSG_SUBCONTEXT_TYPE_* */
    int32_t as_fd;
    uint32_t veid; /* out */
    uint32_t reserved;
};
#define NVGPU_TSG_SUBCONTEXT_TYPE_SYNC 0u
#define NVGPU_TSG_SUBCONTEXT_TYPE_ASYNC 1u

#define NVGPU_TSG_IOCTL_BIND_CHANNEL_EX NVGPU_IOWR('T', 11, struct nvgpu_tsg_bind_channel_ex_args)
#define NVGPU_TSG_IOCTL_CREATE_SUBCONTEXT NVGPU_IOWR('T', 18, struct nvgpu_tsg_create_subcontext_args)

/* ==== channel fd ('H'), nvgpu.md §4.3-4.5, §4.10 ==== */

struct nvgpu_alloc_obj_ctx_args {
    uint32_t class_num;
    uint32_t flags;
    uint64_t obj_id; /* out */
};

/* nvgpu.md §4.10 (24 bytes): mem = the dmabuf fd the notification goes to, at offset. */
struct nvgpu_channel_set_error_notifier {
    uint64_t offset;
    uint64_t size;
    uint32_t mem;
    uint32_t padding;
};

/* What the kernel writes at SET_ERROR_NOTIFIER's (dmabuf, offset) when the channel faults
 * (L4T uapi nvgpu.h, not in nvgpu.md): status 0xFFFF = error, info32 = NVGPU_CHANNEL_*. */
struct nvgpu_notification {
    uint32_t time_stamp_ns[2]; /* CLOCK_REALTIME ns, low word first */
    uint32_t info32;           /* NVGPU_CHANNEL_* error code */
    uint16_t info16;
    uint16_t status; /* NVGPU_NOTIFICATION_STATUS_ERROR once set */
};
#define NVGPU_NOTIFICATION_STATUS_ERROR 0xFFFFu
#define NVGPU_CHANNEL_FIFO_ERROR_IDLE_TIMEOUT 8u
#define NVGPU_CHANNEL_GR_ERROR_SW_METHOD 12u
#define NVGPU_CHANNEL_GR_EXCEPTION 13u
#define NVGPU_CHANNEL_GR_SEMAPHORE_TIMEOUT 24u
#define NVGPU_CHANNEL_GR_ILLEGAL_NOTIFY 25u
#define NVGPU_CHANNEL_FIFO_ERROR_MMU_ERR_FLT 31u
#define NVGPU_CHANNEL_PBDMA_ERROR 32u
#define NVGPU_CHANNEL_FECS_ERR_UNIMP_FIRMWARE_METHOD 37u
#define NVGPU_CHANNEL_RESETCHANNEL_VERIF_ERROR 43u
#define NVGPU_CHANNEL_PBDMA_PUSHBUFFER_CRC_MISMATCH 80u

struct nvgpu_channel_wdt_args {
    uint32_t wdt_status;
    uint32_t timeout_ms;
};
#define NVGPU_IOCTL_CHANNEL_DISABLE_WDT (1u << 0)
#define NVGPU_IOCTL_CHANNEL_ENABLE_WDT (1u << 1)
#define NVGPU_IOCTL_CHANNEL_WDT_FLAG_SET_TIMEOUT (1u << 2)
#define NVGPU_IOCTL_CHANNEL_WDT_FLAG_DISABLE_DUMP (1u << 3)

struct nvgpu_get_user_syncpoint_args {
    uint64_t gpu_va; /* gpu_va first: field order matters (§4.10) */
    uint32_t syncpoint_id;
    uint32_t syncpoint_max;
};

/* nvgpu.md §4.4 (104 bytes) */
struct nvgpu_channel_setup_bind_args {
    uint32_t num_gpfifo_entries;
    uint32_t num_inflight_jobs;
    uint32_t flags; /* NVGPU_CHANNEL_SETUP_BIND_FLAGS_* */
    int32_t userd_dmabuf_fd;
    int32_t gpfifo_dmabuf_fd;
    uint32_t work_submit_token;    /* out: value for the doorbell */
    uint64_t userd_dmabuf_offset;  /* must be 0 */
    uint64_t gpfifo_dmabuf_offset; /* must be 0 */
    uint64_t gpfifo_gpu_va;        /* out (0 on ga10b) */
    uint64_t userd_gpu_va;         /* out (0 on ga10b) */
    uint64_t usermode_mmio_gpu_va; /* out (0) */
    uint32_t reserved[9];
};
#define NVGPU_CHANNEL_SETUP_BIND_FLAGS_VPR_ENABLED (1u << 0)
#define NVGPU_CHANNEL_SETUP_BIND_FLAGS_DETERMINISTIC (1u << 1)
#define NVGPU_CHANNEL_SETUP_BIND_FLAGS_REPLAYABLE_FAULTS_ENABLE (1u << 2)
#define NVGPU_CHANNEL_SETUP_BIND_FLAGS_USERMODE_SUPPORT (1u << 3)
#define NVGPU_CHANNEL_SETUP_BIND_FLAGS_USERMODE_GPU_MAP_RESOURCES_SUPPORT (1u << 4)

/* ==== L4T r35 (JetPack 5, kernel 5.10) variants ====
 * Where the r35 ABI differs from r36 (tests/data/l4t_uapi.tsv, from NVIDIA's headers at
 * tag jetson_35.5): the characteristics struct is 312 bytes (no numa_domain_id: every
 * field from L2_cache_size on sits 8 bytes lower, device_instance_id is absent), OPEN_TSG
 * is 8 bytes, SETUP_BIND is 80 bytes (no *_gpu_va outputs), nvmap ALLOC is 16 bytes (no
 * numa_nid) and there is no CREATE_SUBCONTEXT: BIND_CHANNEL_EX takes the VEID directly
 * (any id below max_veid_count_per_tsg; the AS is the channel's own). The kernel matches
 * full ioctl numbers, so the r36 numbers are ENOTTY on r35 and vice versa. */
enum nvgpu_l4t { NVGPU_L4T_R35 = 35, NVGPU_L4T_R36 = 36 };
#define NVGPU_CHARS_B_R35 312u /* GET_CHARACTERISTICS reports this size on r35 */
#define NVGPU_CHARS_B_R36 328u
#define NVGPU_CHARS_R35_SHIFT_AT 16u /* r36 inserted numa_domain_id (+pad) here */
#define NVGPU_CHARS_R35_SHIFT_B 8u
#define NVGPU_R35_ASYNC_VEID 1u /* VEID 0 is the sync subcontext; async ids start at 1 */

struct nvgpu_gpu_open_tsg_args_r35 {
    uint32_t tsg_fd; /* out */
    uint32_t reserved;
};

struct nvgpu_channel_setup_bind_args_r35 {
    uint32_t num_gpfifo_entries;
    uint32_t num_inflight_jobs;
    uint32_t flags;
    int32_t userd_dmabuf_fd;
    int32_t gpfifo_dmabuf_fd;
    uint32_t work_submit_token;
    uint64_t userd_dmabuf_offset;
    uint64_t gpfifo_dmabuf_offset;
    uint32_t reserved[10];
};

#define NVGPU_IOCTL_CHANNEL_ALLOC_OBJ_CTX NVGPU_IOWR('H', 108, struct nvgpu_alloc_obj_ctx_args)
#define NVGPU_IOCTL_CHANNEL_SET_ERROR_NOTIFIER NVGPU_IOWR('H', 111, struct nvgpu_channel_set_error_notifier)
#define NVGPU_IOCTL_CHANNEL_WDT NVGPU_IOW('H', 119, struct nvgpu_channel_wdt_args)
#define NVGPU_IOCTL_CHANNEL_GET_USER_SYNCPOINT NVGPU_IOR('H', 126, struct nvgpu_get_user_syncpoint_args)
#define NVGPU_IOCTL_CHANNEL_SETUP_BIND NVGPU_IOWR('H', 128, struct nvgpu_channel_setup_bind_args)
#define NVGPU_IOCTL_CHANNEL_SETUP_BIND_R35 NVGPU_IOWR('H', 128, struct nvgpu_channel_setup_bind_args_r35)
/* Not usable on a usermode channel (ENOTTY, §4.8/§5.1); listed so the model can refuse it. */
#define NVGPU_IOCTL_CHANNEL_SUBMIT_GPFIFO_NR 107u

/* ==== nvmap ('N'), nvgpu.md §2 ==== */

/* CREATE: size in @0, handle out @4. GET_FD: handle in @4, dmabuf fd out @0 (§2.1). */
struct nvmap_create_handle {
    union {
        uint32_t size;
        int32_t fd;
    };
    uint32_t handle;
};

struct nvmap_alloc_handle {
    uint32_t handle;
    uint32_t heap_mask; /* NVMAP_HEAP_IOVMM: the only heap that works (§2.2) */
    uint32_t flags;     /* cache policy 1:0 | ... | allocation tag 31:16 (§2.3) */
    uint32_t align;
    int32_t numa_nid; /* 0 (not a u8 kind + padding, §5.2) */
};

/* r35 nvmap ALLOC: 16 bytes, no numa_nid (see the r35 block above). */
struct nvmap_alloc_handle_r35 {
    uint32_t handle;
    uint32_t heap_mask;
    uint32_t flags;
    uint32_t align;
};

/* NVMAP_IOC_WRITE / READ (tests only, §2.5) */
struct nvmap_rw_handle {
    uint64_t addr;
    uint32_t handle;
    uint32_t pad;
    uint64_t offset;
    uint64_t elem_size;
    uint64_t hmem_stride;
    uint64_t user_stride;
    uint64_t count;
};

struct nvmap_available_heaps {
    uint64_t heaps;
};

/* Heap bits (§2.2). */
#define NVMAP_HEAP_IOVMM (1u << 30)
#define NVMAP_HEAP_SYSMEM (1u << 31) /* tried in the field (ENOMEM); not in the published r35/r36 headers */
#define NVMAP_HEAP_CARVEOUT_VPR (1u << 28)
#define NVMAP_HEAP_CARVEOUT_TSEC (1u << 27)
#define NVMAP_HEAP_CARVEOUT_VIDMEM (1u << 26)
#define NVMAP_HEAP_CARVEOUT_GPU (1u << 3)
#define NVMAP_HEAP_CARVEOUT_FSI (1u << 2)
#define NVMAP_HEAP_CARVEOUT_IVM (1u << 1)
#define NVMAP_HEAP_CARVEOUT_GENERIC (1u << 0)

/* ALLOC flags (§2.3). */
#define NVMAP_HANDLE_UNCACHEABLE 0u
#define NVMAP_HANDLE_WRITE_COMBINE 1u
#define NVMAP_HANDLE_INNER_CACHEABLE 2u
#define NVMAP_HANDLE_CACHEABLE 3u
#define NVMAP_HANDLE_CACHE_FLAG_MASK 3u
#define NVMAP_HANDLE_SECURE (1u << 2)
#define NVMAP_HANDLE_KIND_SPECIFIED (1u << 3)
#define NVMAP_HANDLE_COMPR_SPECIFIED (1u << 4)
#define NVMAP_HANDLE_ZEROED_PAGES (1u << 5)
#define NVMAP_HANDLE_PHYS_CONTIG (1u << 6)
#define NVMAP_HANDLE_CACHE_SYNC (1u << 7)
#define NVMAP_HANDLE_CACHE_SYNC_AT_RESERVE (1u << 8)
#define NVMAP_HANDLE_RO (1u << 9)
/* Allocation tag lives in bits 31:16; without one the kernel WARNs on every alloc (§2.3). */
#define NVMAP_HANDLE_TAG_SHIFT 16u
#define NVMAP_HANDLE_TAG_MASK 0xFFFF0000u
#define NVMAP_ALLOC_TAG_NVHCQ 0x0900u /* the unused range TegraIface picked (§2.3) */

#define NVMAP_IOC_CREATE NVGPU_IOWR('N', 0, struct nvmap_create_handle)
#define NVMAP_IOC_ALLOC NVGPU_IOW('N', 3, struct nvmap_alloc_handle)
#define NVMAP_IOC_FREE NVGPU_IOC(NVGPU_IOC_NONE, 'N', 4, 0) /* arg = handle by value */
#define NVMAP_IOC_ALLOC_R35 NVGPU_IOW('N', 3, struct nvmap_alloc_handle_r35)
#define NVMAP_IOC_WRITE NVGPU_IOW('N', 6, struct nvmap_rw_handle)
#define NVMAP_IOC_READ NVGPU_IOW('N', 7, struct nvmap_rw_handle)
#define NVMAP_IOC_GET_FD NVGPU_IOWR('N', 15, struct nvmap_create_handle)
#define NVMAP_IOC_GET_AVAILABLE_HEAPS NVGPU_IOR('N', 25, struct nvmap_available_heaps)

/* ==== Usermode submit (nvgpu.md §1.3 step 5, §4.7-4.9) ==== */

#define NVGPU_USERMODE_MAP_B 0x10000u            /* tinygrad maps 64 KiB; 4 KiB also works (§4.8) */
#define NV_USERMODE_NOTIFY_CHANNEL_PENDING 0x90u /* doorbell: write the work-submit token */
#define NVC56F_USERD_B 0x1000u                   /* USERD buffer: 4 KiB (§4.7) */
#define NVC56F_GP_GET 0x88u                      /* USERD word offsets (AmpereAControlGPFifo, §4.7) */
#define NVC56F_GP_PUT 0x8Cu

/* ==== Address-space plan (nvgpu.md §1.3, §3.1, §3.4) ==== */

#define NVGPU_VA_PDE_ALIGN_B (1ull << 21)      /* ALLOC_AS range alignment that works (§3.1) */
#define NVGPU_VA_RANGE_START 0x200000ull       /* §3.1 working values */
#define NVGPU_VA_RANGE_END 0xFFFFE00000ull     /* 2^40 - 2 MiB */
#define NVGPU_LOCAL_WINDOW_VA 0xFD00000000ull  /* SET_SHADER_LOCAL_MEMORY_WINDOW (§3.4) */
#define NVGPU_SHARED_WINDOW_VA 0xFE00000000ull /* SET_SHADER_SHARED_MEMORY_WINDOW (§3.4) */
#define NVGPU_WINDOW_RESERVE_B (1ull << 30)    /* 1 GiB reservation each (§3.4) */
#define NVGPU_PAGE_B 4096u
#define NVGPU_BIG_ALLOC_MIN_B (8ull << 20) /* >= 8 MiB: 2 MiB size/alignment (§2.4) */
#define NVGPU_BIG_ALLOC_ALIGN_B (2ull << 20)
/* The largest one nvmap buffer can be: CREATE's size is a u32 and big buffers are 2 MiB
 * multiples, so 4 GiB - 2 MiB. Larger device buffers are spans of several (nvgpu_mem.c). */
#define NVGPU_MAX_NVMAP_BUF_B (0x100000000ull - NVGPU_BIG_ALLOC_ALIGN_B)

/* ==== Layout checks (nvgpu.md §10 step 1: 328/16/64/32/40/8/24/16/4/104/16/20/8) ==== */

#define NVGPU_CHECK_OFF(type, field, off)                                                                    \
    _Static_assert(offsetof(struct type, field) == (off), #type "." #field " @" #off)

_Static_assert(sizeof(struct nvgpu_gpu_get_characteristics) == 16, "get_characteristics");
NVGPU_CHECK_OFF(nvgpu_gpu_get_characteristics, gpu_characteristics_buf_addr, 8);

_Static_assert(sizeof(struct nvgpu_gpu_characteristics) == 328, "characteristics");
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, arch, 0);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, impl, 4);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, rev, 8);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, num_gpc, 12);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, numa_domain_id, 16);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, L2_cache_size, 24);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, on_board_video_memory_size, 32);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, num_tpc_per_gpc, 40);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, bus_type, 44);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, big_page_size, 48);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, compression_page_size, 52);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, pde_coverage_bit_count, 56);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, available_big_page_sizes, 60);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, flags, 64);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, twod_class, 72);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, threed_class, 76);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, compute_class, 80);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, gpfifo_class, 84);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, inline_to_memory_class, 88);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, dma_copy_class, 92);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, gpc_mask, 96);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, sm_arch_sm_version, 100);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, sm_arch_spa_version, 104);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, sm_arch_warp_count, 108);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, gpu_ioctl_nr_last, 112);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, tsg_ioctl_nr_last, 114);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, dbg_gpu_ioctl_nr_last, 116);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, ioctl_channel_nr_last, 118);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, as_ioctl_nr_last, 120);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, gpu_va_bit_count, 122);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, reserved, 123);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, max_fbps_count, 124);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, fbp_en_mask, 128);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, emc_en_mask, 132);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, max_ltc_per_fbp, 136);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, max_lts_per_ltc, 140);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, max_tex_per_tpc, 144);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, max_gpc_count, 148);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, rop_l2_en_mask_DEPRECATED, 152);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, chipname, 160);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, gr_compbit_store_base_hw, 168);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, gr_gobs_per_comptagline_per_slice, 176);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, num_ltc, 180);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, lts_per_ltc, 184);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, cbc_cache_line_size, 188);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, cbc_comptags_per_line, 192);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, map_buffer_batch_limit, 196);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, max_freq, 200);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, graphics_preemption_mode_flags, 208);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, compute_preemption_mode_flags, 212);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, default_graphics_preempt_mode, 216);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, default_compute_preempt_mode, 220);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, local_video_memory_size, 224);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, pci_vendor_id, 232);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, pci_device_id, 234);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, pci_subsystem_vendor_id, 236);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, pci_subsystem_device_id, 238);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, pci_class, 240);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, pci_revision, 242);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, vbios_oem_version, 243);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, vbios_version, 244);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, reg_ops_limit, 248);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, reserved1, 252);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, event_ioctl_nr_last, 256);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, pad, 258);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, max_css_buffer_size, 260);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, ctxsw_ioctl_nr_last, 264);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, prof_ioctl_nr_last, 266);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, nvs_ioctl_nr_last, 268);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, reserved2, 270);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, max_ctxsw_ring_buffer_size, 272);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, reserved3, 276);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, per_device_identifier, 280);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, num_ppc_per_gpc, 288);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, max_veid_count_per_tsg, 292);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, num_sub_partition_per_fbpa, 296);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, gpu_instance_id, 300);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, gr_instance_id, 304);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, max_gpfifo_entries, 308);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, max_dbg_tsg_timeslice, 312);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, reserved5, 316);
NVGPU_CHECK_OFF(nvgpu_gpu_characteristics, device_instance_id, 320);

_Static_assert(sizeof(struct nvgpu_alloc_as_args) == 64, "alloc_as");
NVGPU_CHECK_OFF(nvgpu_alloc_as_args, as_fd, 4);
NVGPU_CHECK_OFF(nvgpu_alloc_as_args, flags, 8);
NVGPU_CHECK_OFF(nvgpu_alloc_as_args, reserved, 12);
NVGPU_CHECK_OFF(nvgpu_alloc_as_args, va_range_start, 16);
NVGPU_CHECK_OFF(nvgpu_alloc_as_args, va_range_end, 24);
NVGPU_CHECK_OFF(nvgpu_alloc_as_args, va_range_split, 32);
NVGPU_CHECK_OFF(nvgpu_alloc_as_args, padding, 40);

_Static_assert(sizeof(struct nvgpu_gpu_open_tsg_args) == 24, "open_tsg");
NVGPU_CHECK_OFF(nvgpu_gpu_open_tsg_args, flags, 4);
NVGPU_CHECK_OFF(nvgpu_gpu_open_tsg_args, source_device_instance_id, 8);
NVGPU_CHECK_OFF(nvgpu_gpu_open_tsg_args, share_token, 16);
_Static_assert(sizeof(struct nvgpu_gpu_open_tsg_args_r35) == 8, "open_tsg r35");
_Static_assert(sizeof(struct nvgpu_channel_setup_bind_args_r35) == 80, "setup_bind r35");
NVGPU_CHECK_OFF(nvgpu_channel_setup_bind_args_r35, work_submit_token, 20);
NVGPU_CHECK_OFF(nvgpu_channel_setup_bind_args_r35, reserved, 40);
_Static_assert(sizeof(struct nvmap_alloc_handle_r35) == 16, "nvmap_alloc_handle r35");
_Static_assert(sizeof(struct nvgpu_gpu_characteristics) == NVGPU_CHARS_B_R36, "characteristics r36");
_Static_assert(sizeof(struct nvgpu_gpu_open_channel_args) == 4, "open_channel: 4-byte union");
_Static_assert(sizeof(struct nvgpu_gpu_num_vsms) == 8, "num_vsms");
_Static_assert(sizeof(struct nvgpu_gpu_get_tpc_masks_args) == 16, "get_tpc_masks");
NVGPU_CHECK_OFF(nvgpu_gpu_get_tpc_masks_args, mask_buf_addr, 8);
_Static_assert(sizeof(struct nvgpu_gpu_zcull_get_ctx_size_args) == 4, "zcull_get_ctx_size");

_Static_assert(sizeof(struct nvgpu_as_bind_channel_args) == 4, "as_bind_channel");
_Static_assert(sizeof(struct nvgpu_as_unmap_buffer_args) == 8, "as_unmap_buffer");
_Static_assert(sizeof(struct nvgpu_as_alloc_space_args) == 32, "as_alloc_space");
_Static_assert(sizeof(struct nvgpu_as_free_space_args) == 32, "as_free_space");
NVGPU_CHECK_OFF(nvgpu_as_free_space_args, pages, 8);
NVGPU_CHECK_OFF(nvgpu_as_free_space_args, page_size, 16);
NVGPU_CHECK_OFF(nvgpu_as_free_space_args, padding, 20);
NVGPU_CHECK_OFF(nvgpu_as_alloc_space_args, page_size, 8);
NVGPU_CHECK_OFF(nvgpu_as_alloc_space_args, flags, 12);
NVGPU_CHECK_OFF(nvgpu_as_alloc_space_args, offset, 16);
NVGPU_CHECK_OFF(nvgpu_as_alloc_space_args, padding, 24);
_Static_assert(sizeof(struct nvgpu_as_map_buffer_ex_args) == 40, "as_map_buffer_ex");
NVGPU_CHECK_OFF(nvgpu_as_map_buffer_ex_args, compr_kind, 4);
NVGPU_CHECK_OFF(nvgpu_as_map_buffer_ex_args, incompr_kind, 6);
NVGPU_CHECK_OFF(nvgpu_as_map_buffer_ex_args, dmabuf_fd, 8);
NVGPU_CHECK_OFF(nvgpu_as_map_buffer_ex_args, page_size, 12);
NVGPU_CHECK_OFF(nvgpu_as_map_buffer_ex_args, buffer_offset, 16);
NVGPU_CHECK_OFF(nvgpu_as_map_buffer_ex_args, mapping_size, 24);
NVGPU_CHECK_OFF(nvgpu_as_map_buffer_ex_args, offset, 32);

_Static_assert(sizeof(struct nvgpu_tsg_bind_channel_ex_args) == 24, "tsg_bind_channel_ex");
NVGPU_CHECK_OFF(nvgpu_tsg_bind_channel_ex_args, subcontext_id, 4);
NVGPU_CHECK_OFF(nvgpu_tsg_bind_channel_ex_args, reserved, 8);
_Static_assert(sizeof(struct nvgpu_tsg_create_subcontext_args) == 16, "tsg_create_subcontext");
NVGPU_CHECK_OFF(nvgpu_tsg_create_subcontext_args, as_fd, 4);
NVGPU_CHECK_OFF(nvgpu_tsg_create_subcontext_args, veid, 8);
NVGPU_CHECK_OFF(nvgpu_tsg_create_subcontext_args, reserved, 12);

_Static_assert(sizeof(struct nvgpu_alloc_obj_ctx_args) == 16, "alloc_obj_ctx");
NVGPU_CHECK_OFF(nvgpu_alloc_obj_ctx_args, flags, 4);
NVGPU_CHECK_OFF(nvgpu_alloc_obj_ctx_args, obj_id, 8);
_Static_assert(sizeof(struct nvgpu_channel_set_error_notifier) == 24, "set_error_notifier");
NVGPU_CHECK_OFF(nvgpu_channel_set_error_notifier, mem, 16);
_Static_assert(sizeof(struct nvgpu_notification) == 16, "notification");
NVGPU_CHECK_OFF(nvgpu_notification, info32, 8);
NVGPU_CHECK_OFF(nvgpu_notification, info16, 12);
NVGPU_CHECK_OFF(nvgpu_notification, status, 14);
NVGPU_CHECK_OFF(nvgpu_channel_set_error_notifier, size, 8);
_Static_assert(sizeof(struct nvgpu_channel_wdt_args) == 8, "channel_wdt");
NVGPU_CHECK_OFF(nvgpu_channel_wdt_args, timeout_ms, 4);
_Static_assert(sizeof(struct nvgpu_get_user_syncpoint_args) == 16, "get_user_syncpoint");
NVGPU_CHECK_OFF(nvgpu_get_user_syncpoint_args, syncpoint_id, 8);
NVGPU_CHECK_OFF(nvgpu_get_user_syncpoint_args, syncpoint_max, 12);
_Static_assert(sizeof(struct nvgpu_channel_setup_bind_args) == 104, "channel_setup_bind");
NVGPU_CHECK_OFF(nvgpu_channel_setup_bind_args, num_inflight_jobs, 4);
NVGPU_CHECK_OFF(nvgpu_channel_setup_bind_args, flags, 8);
NVGPU_CHECK_OFF(nvgpu_channel_setup_bind_args, userd_dmabuf_fd, 12);
NVGPU_CHECK_OFF(nvgpu_channel_setup_bind_args, gpfifo_dmabuf_fd, 16);
NVGPU_CHECK_OFF(nvgpu_channel_setup_bind_args, work_submit_token, 20);
NVGPU_CHECK_OFF(nvgpu_channel_setup_bind_args, userd_dmabuf_offset, 24);
NVGPU_CHECK_OFF(nvgpu_channel_setup_bind_args, gpfifo_dmabuf_offset, 32);
NVGPU_CHECK_OFF(nvgpu_channel_setup_bind_args, gpfifo_gpu_va, 40);
NVGPU_CHECK_OFF(nvgpu_channel_setup_bind_args, userd_gpu_va, 48);
NVGPU_CHECK_OFF(nvgpu_channel_setup_bind_args, usermode_mmio_gpu_va, 56);
NVGPU_CHECK_OFF(nvgpu_channel_setup_bind_args, reserved, 64);

_Static_assert(sizeof(struct nvmap_create_handle) == 8, "nvmap_create_handle");
NVGPU_CHECK_OFF(nvmap_create_handle, size, 0);
NVGPU_CHECK_OFF(nvmap_create_handle, fd, 0);
NVGPU_CHECK_OFF(nvmap_create_handle, handle, 4);
_Static_assert(sizeof(struct nvmap_alloc_handle) == 20, "nvmap_alloc_handle: no padding");
NVGPU_CHECK_OFF(nvmap_alloc_handle, heap_mask, 4);
NVGPU_CHECK_OFF(nvmap_alloc_handle, flags, 8);
NVGPU_CHECK_OFF(nvmap_alloc_handle, align, 12);
NVGPU_CHECK_OFF(nvmap_alloc_handle, numa_nid, 16);
_Static_assert(sizeof(struct nvmap_rw_handle) == 56, "nvmap_rw_handle");
NVGPU_CHECK_OFF(nvmap_rw_handle, handle, 8);
NVGPU_CHECK_OFF(nvmap_rw_handle, offset, 16);
NVGPU_CHECK_OFF(nvmap_rw_handle, count, 48);
_Static_assert(sizeof(struct nvmap_available_heaps) == 8, "nvmap_available_heaps");

/* The numbers of nvgpu.md §5.1, recomputed from the layouts above. */
_Static_assert(NVGPU_GPU_IOCTL_GET_CHARACTERISTICS == 0xC0104705ul, "G:5");
_Static_assert(NVGPU_GPU_IOCTL_ALLOC_AS == 0xC0404708ul, "G:8");
_Static_assert(NVGPU_GPU_IOCTL_OPEN_TSG == 0xC0184709ul, "G:9");
_Static_assert(NVGPU_GPU_IOCTL_OPEN_CHANNEL == 0xC004470Bul, "G:11");
_Static_assert(NVGPU_GPU_IOCTL_ZCULL_GET_CTX_SIZE == 0x80044701ul, "G:1");
_Static_assert(NVGPU_AS_IOCTL_BIND_CHANNEL == 0xC0044101ul, "A:1");
_Static_assert(NVGPU_AS_IOCTL_UNMAP_BUFFER == 0xC0084105ul, "A:5");
_Static_assert(NVGPU_AS_IOCTL_ALLOC_SPACE == 0xC0204106ul, "A:6");
_Static_assert(NVGPU_AS_IOCTL_FREE_SPACE == 0xC0204103ul, "A:3");
_Static_assert(NVGPU_AS_IOCTL_MAP_BUFFER_EX == 0xC0284107ul, "A:7");
_Static_assert(NVGPU_TSG_IOCTL_BIND_CHANNEL_EX == 0xC018540Bul, "T:11");
_Static_assert(NVGPU_TSG_IOCTL_CREATE_SUBCONTEXT == 0xC0105412ul, "T:18");
_Static_assert(NVGPU_IOCTL_CHANNEL_ALLOC_OBJ_CTX == 0xC010486Cul, "H:108");
_Static_assert(NVGPU_IOCTL_CHANNEL_SET_ERROR_NOTIFIER == 0xC018486Ful, "H:111");
_Static_assert(NVGPU_IOCTL_CHANNEL_WDT == 0x40084877ul, "H:119");
_Static_assert(NVGPU_IOCTL_CHANNEL_GET_USER_SYNCPOINT == 0x8010487Eul, "H:126");
_Static_assert(NVGPU_IOCTL_CHANNEL_SETUP_BIND == 0xC0684880ul, "H:128");
_Static_assert(NVMAP_IOC_CREATE == 0xC0084E00ul, "N:0");
_Static_assert(NVMAP_IOC_ALLOC == 0x40144E03ul, "N:3");
_Static_assert(NVMAP_IOC_FREE == 0x00004E04ul, "N:4");
_Static_assert(NVMAP_IOC_WRITE == 0x40384E06ul, "N:6");
_Static_assert(NVMAP_IOC_READ == 0x40384E07ul, "N:7");
_Static_assert(NVMAP_IOC_GET_FD == 0xC0084E0Ful, "N:15");
_Static_assert(NVMAP_IOC_GET_AVAILABLE_HEAPS == 0x80084E19ul, "N:25");
_Static_assert(NVGPU_GPU_IOCTL_OPEN_TSG_R35 == 0xC0084709ul, "G:9 r35");
_Static_assert(NVGPU_IOCTL_CHANNEL_SETUP_BIND_R35 == 0xC0504880ul, "H:128 r35");
_Static_assert(NVMAP_IOC_ALLOC_R35 == 0x40104E03ul, "N:3 r35");

#endif /* NVGPU_UAPI_H */
