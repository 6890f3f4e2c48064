/* SPDX-License-Identifier: MIT */
/*
 * test_nvgpu_l4t.c - our nvgpu/nvmap ABI (src/kmd/nvgpu/nvgpu_uapi.h) and the emulated
 * driver's dispatch tables (src/emu) checked against NVIDIA's published L4T headers, per
 * release: tests/data/l4t_uapi.tsv holds every ioctl number, struct size, field offset and
 * flag value we use as NVIDIA's r35.5, r36.2, r36.3, r36.4 and r36.4.3 headers define them
 * (sources named in the file; each r36.x is checked against our r36 ABI). The backend and the emulator were
 * written from the same understanding, so a shared mistake would pass both; this table is the independent
 * side. Also: the backend detects which release it talks to (emu:ga10b,l4t=35|36) and runs end to end on
 * both. There is no Jetson here: the release detection has run only against the emulator. The backend's
 * owner knobs: test_nvgpu_knobs.c.
 */
#include "emu.h"
#include "emu_nvgpu.h"
#include "gpu_push.h"
#include "harness.h"
#include "hcq_priv.h"
#include "k_params.h"
#include "nvgpu_kmd.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ==== Our side: every number, by the table's names ==== */

struct ours {
    unsigned rel;     /* 35 or 36 */
    const char *kind; /* size / off / ioctl / const */
    const char *name;
    long long value;
};

#define SZ(rel, tname, type)                                                                                 \
    {                                                                                                        \
        rel, "size", tname, (long long)sizeof(struct type)                                                   \
    }
#define OFF(rel, tname, type, field)                                                                         \
    {                                                                                                        \
        rel, "off", tname "." #field, (long long)offsetof(struct type, field)                                \
    }
#define OFFN(rel, tname, fname, type, field)                                                                 \
    {                                                                                                        \
        rel, "off", tname "." fname, (long long)offsetof(struct type, field)                                 \
    }
#define IOC(rel, name, val)                                                                                  \
    {                                                                                                        \
        rel, "ioctl", name, (long long)(val)                                                                 \
    }
#define CST(rel, name)                                                                                       \
    {                                                                                                        \
        rel, "const", #name, (long long)(name)                                                               \
    }
#define BOTH(X) X(35) X(36)

/* Characteristics: r36 offsets from our struct; r35 = the same minus 8 after byte 16. */
#define CH(rel, field)                                                                                       \
    {                                                                                                        \
        rel, "off", "nvgpu_gpu_characteristics." #field,                                                     \
            (long long)offsetof(struct nvgpu_gpu_characteristics, field) -                                   \
                ((rel) == 35 && offsetof(struct nvgpu_gpu_characteristics, field) > NVGPU_CHARS_R35_SHIFT_AT \
                     ? NVGPU_CHARS_R35_SHIFT_B                                                               \
                     : 0)                                                                                    \
    }
#define CH_ALL(rel)                                                                                          \
    CH(rel, arch), CH(rel, impl), CH(rel, rev), CH(rel, num_gpc), CH(rel, L2_cache_size),                    \
        CH(rel, on_board_video_memory_size), CH(rel, num_tpc_per_gpc), CH(rel, bus_type),                    \
        CH(rel, big_page_size), CH(rel, compression_page_size), CH(rel, pde_coverage_bit_count),             \
        CH(rel, available_big_page_sizes), CH(rel, flags), CH(rel, twod_class), CH(rel, threed_class),       \
        CH(rel, compute_class), CH(rel, gpfifo_class), CH(rel, inline_to_memory_class),                      \
        CH(rel, dma_copy_class), CH(rel, gpc_mask), CH(rel, sm_arch_sm_version),                             \
        CH(rel, sm_arch_spa_version), CH(rel, sm_arch_warp_count), CH(rel, gpu_ioctl_nr_last),               \
        CH(rel, tsg_ioctl_nr_last), CH(rel, dbg_gpu_ioctl_nr_last), CH(rel, ioctl_channel_nr_last),          \
        CH(rel, as_ioctl_nr_last), CH(rel, gpu_va_bit_count), CH(rel, reserved), CH(rel, max_fbps_count),    \
        CH(rel, fbp_en_mask), CH(rel, emc_en_mask), CH(rel, max_ltc_per_fbp), CH(rel, max_lts_per_ltc),      \
        CH(rel, max_tex_per_tpc), CH(rel, max_gpc_count), CH(rel, rop_l2_en_mask_DEPRECATED),                \
        CH(rel, chipname), CH(rel, gr_compbit_store_base_hw), CH(rel, gr_gobs_per_comptagline_per_slice),    \
        CH(rel, num_ltc), CH(rel, lts_per_ltc), CH(rel, cbc_cache_line_size),                                \
        CH(rel, cbc_comptags_per_line), CH(rel, map_buffer_batch_limit), CH(rel, max_freq),                  \
        CH(rel, graphics_preemption_mode_flags), CH(rel, compute_preemption_mode_flags),                     \
        CH(rel, default_graphics_preempt_mode), CH(rel, default_compute_preempt_mode),                       \
        CH(rel, local_video_memory_size), CH(rel, pci_vendor_id), CH(rel, pci_device_id),                    \
        CH(rel, pci_subsystem_vendor_id), CH(rel, pci_subsystem_device_id), CH(rel, pci_class),              \
        CH(rel, pci_revision), CH(rel, vbios_oem_version), CH(rel, vbios_version), CH(rel, reg_ops_limit),   \
        CH(rel, reserved1), CH(rel, event_ioctl_nr_last), CH(rel, pad), CH(rel, max_css_buffer_size),        \
        CH(rel, ctxsw_ioctl_nr_last), CH(rel, prof_ioctl_nr_last), CH(rel, nvs_ioctl_nr_last),               \
        CH(rel, reserved2), CH(rel, max_ctxsw_ring_buffer_size), CH(rel, reserved3),                         \
        CH(rel, per_device_identifier), CH(rel, num_ppc_per_gpc), CH(rel, max_veid_count_per_tsg),           \
        CH(rel, num_sub_partition_per_fbpa), CH(rel, gpu_instance_id), CH(rel, gr_instance_id),              \
        CH(rel, max_gpfifo_entries), CH(rel, max_dbg_tsg_timeslice), CH(rel, reserved5)

/* Everything identical in both releases. */
#define COMMON(rel)                                                                                          \
    SZ(rel, "nvgpu_gpu_get_characteristics", nvgpu_gpu_get_characteristics),                                 \
        OFF(rel, "nvgpu_gpu_get_characteristics", nvgpu_gpu_get_characteristics,                             \
            gpu_characteristics_buf_size),                                                                   \
        OFF(rel, "nvgpu_gpu_get_characteristics", nvgpu_gpu_get_characteristics,                             \
            gpu_characteristics_buf_addr),                                                                   \
        CH_ALL(rel), SZ(rel, "nvgpu_alloc_as_args", nvgpu_alloc_as_args),                                    \
        OFF(rel, "nvgpu_alloc_as_args", nvgpu_alloc_as_args, big_page_size),                                 \
        OFF(rel, "nvgpu_alloc_as_args", nvgpu_alloc_as_args, as_fd),                                         \
        OFF(rel, "nvgpu_alloc_as_args", nvgpu_alloc_as_args, flags),                                         \
        OFF(rel, "nvgpu_alloc_as_args", nvgpu_alloc_as_args, reserved),                                      \
        OFF(rel, "nvgpu_alloc_as_args", nvgpu_alloc_as_args, va_range_start),                                \
        OFF(rel, "nvgpu_alloc_as_args", nvgpu_alloc_as_args, va_range_end),                                  \
        OFF(rel, "nvgpu_alloc_as_args", nvgpu_alloc_as_args, va_range_split),                                \
        OFF(rel, "nvgpu_alloc_as_args", nvgpu_alloc_as_args, padding),                                       \
        OFF(rel, "nvgpu_gpu_open_tsg_args", nvgpu_gpu_open_tsg_args, tsg_fd),                                \
        SZ(rel, "nvgpu_gpu_open_channel_args", nvgpu_gpu_open_channel_args),                                 \
        OFF(rel, "nvgpu_gpu_open_channel_args", nvgpu_gpu_open_channel_args, runlist_id),                    \
        OFF(rel, "nvgpu_gpu_open_channel_args", nvgpu_gpu_open_channel_args, channel_fd),                    \
        SZ(rel, "nvgpu_gpu_num_vsms", nvgpu_gpu_num_vsms),                                                   \
        OFF(rel, "nvgpu_gpu_num_vsms", nvgpu_gpu_num_vsms, num_vsms),                                        \
        OFF(rel, "nvgpu_gpu_num_vsms", nvgpu_gpu_num_vsms, reserved),                                        \
        SZ(rel, "nvgpu_gpu_get_tpc_masks_args", nvgpu_gpu_get_tpc_masks_args),                               \
        OFF(rel, "nvgpu_gpu_get_tpc_masks_args", nvgpu_gpu_get_tpc_masks_args, mask_buf_size),               \
        OFF(rel, "nvgpu_gpu_get_tpc_masks_args", nvgpu_gpu_get_tpc_masks_args, reserved),                    \
        OFF(rel, "nvgpu_gpu_get_tpc_masks_args", nvgpu_gpu_get_tpc_masks_args, mask_buf_addr),               \
        SZ(rel, "nvgpu_gpu_zcull_get_ctx_size_args", nvgpu_gpu_zcull_get_ctx_size_args),                     \
        OFF(rel, "nvgpu_gpu_zcull_get_ctx_size_args", nvgpu_gpu_zcull_get_ctx_size_args, size),              \
        SZ(rel, "nvgpu_as_bind_channel_args", nvgpu_as_bind_channel_args),                                   \
        OFF(rel, "nvgpu_as_bind_channel_args", nvgpu_as_bind_channel_args, channel_fd),                      \
        SZ(rel, "nvgpu_as_unmap_buffer_args", nvgpu_as_unmap_buffer_args),                                   \
        OFF(rel, "nvgpu_as_unmap_buffer_args", nvgpu_as_unmap_buffer_args, offset),                          \
        SZ(rel, "nvgpu_as_alloc_space_args", nvgpu_as_alloc_space_args),                                     \
        OFF(rel, "nvgpu_as_alloc_space_args", nvgpu_as_alloc_space_args, pages),                             \
        OFF(rel, "nvgpu_as_alloc_space_args", nvgpu_as_alloc_space_args, page_size),                         \
        OFF(rel, "nvgpu_as_alloc_space_args", nvgpu_as_alloc_space_args, flags),                             \
        OFF(rel, "nvgpu_as_alloc_space_args", nvgpu_as_alloc_space_args, offset),                            \
        OFF(rel, "nvgpu_as_alloc_space_args", nvgpu_as_alloc_space_args, align),                             \
        OFF(rel, "nvgpu_as_alloc_space_args", nvgpu_as_alloc_space_args, padding),                           \
        SZ(rel, "nvgpu_as_free_space_args", nvgpu_as_free_space_args),                                       \
        OFF(rel, "nvgpu_as_free_space_args", nvgpu_as_free_space_args, offset),                              \
        OFF(rel, "nvgpu_as_free_space_args", nvgpu_as_free_space_args, pages),                               \
        OFF(rel, "nvgpu_as_free_space_args", nvgpu_as_free_space_args, page_size),                           \
        OFF(rel, "nvgpu_as_free_space_args", nvgpu_as_free_space_args, padding),                             \
        IOC(rel, "NVGPU_AS_IOCTL_FREE_SPACE", NVGPU_AS_IOCTL_FREE_SPACE),                                    \
        SZ(rel, "nvgpu_as_map_buffer_ex_args", nvgpu_as_map_buffer_ex_args),                                 \
        OFF(rel, "nvgpu_as_map_buffer_ex_args", nvgpu_as_map_buffer_ex_args, flags),                         \
        OFF(rel, "nvgpu_as_map_buffer_ex_args", nvgpu_as_map_buffer_ex_args, compr_kind),                    \
        OFF(rel, "nvgpu_as_map_buffer_ex_args", nvgpu_as_map_buffer_ex_args, incompr_kind),                  \
        OFF(rel, "nvgpu_as_map_buffer_ex_args", nvgpu_as_map_buffer_ex_args, dmabuf_fd),                     \
        OFF(rel, "nvgpu_as_map_buffer_ex_args", nvgpu_as_map_buffer_ex_args, page_size),                     \
        OFF(rel, "nvgpu_as_map_buffer_ex_args", nvgpu_as_map_buffer_ex_args, buffer_offset),                 \
        OFF(rel, "nvgpu_as_map_buffer_ex_args", nvgpu_as_map_buffer_ex_args, mapping_size),                  \
        OFF(rel, "nvgpu_as_map_buffer_ex_args", nvgpu_as_map_buffer_ex_args, offset),                        \
        SZ(rel, "nvgpu_tsg_bind_channel_ex_args", nvgpu_tsg_bind_channel_ex_args),                           \
        OFF(rel, "nvgpu_tsg_bind_channel_ex_args", nvgpu_tsg_bind_channel_ex_args, channel_fd),              \
        OFF(rel, "nvgpu_tsg_bind_channel_ex_args", nvgpu_tsg_bind_channel_ex_args, subcontext_id),           \
        OFF(rel, "nvgpu_tsg_bind_channel_ex_args", nvgpu_tsg_bind_channel_ex_args, reserved),                \
        SZ(rel, "nvgpu_alloc_obj_ctx_args", nvgpu_alloc_obj_ctx_args),                                       \
        OFF(rel, "nvgpu_alloc_obj_ctx_args", nvgpu_alloc_obj_ctx_args, class_num),                           \
        OFF(rel, "nvgpu_alloc_obj_ctx_args", nvgpu_alloc_obj_ctx_args, flags),                               \
        OFF(rel, "nvgpu_alloc_obj_ctx_args", nvgpu_alloc_obj_ctx_args, obj_id),                              \
        SZ(rel, "nvgpu_channel_set_error_notifier", nvgpu_channel_set_error_notifier),                       \
        OFF(rel, "nvgpu_channel_set_error_notifier", nvgpu_channel_set_error_notifier, offset),              \
        OFF(rel, "nvgpu_channel_set_error_notifier", nvgpu_channel_set_error_notifier, size),                \
        OFF(rel, "nvgpu_channel_set_error_notifier", nvgpu_channel_set_error_notifier, mem),                 \
        OFF(rel, "nvgpu_channel_set_error_notifier", nvgpu_channel_set_error_notifier, padding),             \
        SZ(rel, "nvgpu_notification", nvgpu_notification),                                                   \
        OFF(rel, "nvgpu_notification", nvgpu_notification, time_stamp_ns),                                   \
        OFF(rel, "nvgpu_notification", nvgpu_notification, info32),                                          \
        OFF(rel, "nvgpu_notification", nvgpu_notification, info16),                                          \
        OFF(rel, "nvgpu_notification", nvgpu_notification, status),                                          \
        SZ(rel, "nvgpu_channel_wdt_args", nvgpu_channel_wdt_args),                                           \
        OFF(rel, "nvgpu_channel_wdt_args", nvgpu_channel_wdt_args, wdt_status),                              \
        OFF(rel, "nvgpu_channel_wdt_args", nvgpu_channel_wdt_args, timeout_ms),                              \
        SZ(rel, "nvgpu_get_user_syncpoint_args", nvgpu_get_user_syncpoint_args),                             \
        OFF(rel, "nvgpu_get_user_syncpoint_args", nvgpu_get_user_syncpoint_args, gpu_va),                    \
        OFF(rel, "nvgpu_get_user_syncpoint_args", nvgpu_get_user_syncpoint_args, syncpoint_id),              \
        OFF(rel, "nvgpu_get_user_syncpoint_args", nvgpu_get_user_syncpoint_args, syncpoint_max),             \
        OFF(rel, "nvgpu_channel_setup_bind_args", nvgpu_channel_setup_bind_args, num_gpfifo_entries),        \
        OFF(rel, "nvgpu_channel_setup_bind_args", nvgpu_channel_setup_bind_args, num_inflight_jobs),         \
        OFF(rel, "nvgpu_channel_setup_bind_args", nvgpu_channel_setup_bind_args, flags),                     \
        OFF(rel, "nvgpu_channel_setup_bind_args", nvgpu_channel_setup_bind_args, userd_dmabuf_fd),           \
        OFF(rel, "nvgpu_channel_setup_bind_args", nvgpu_channel_setup_bind_args, gpfifo_dmabuf_fd),          \
        OFF(rel, "nvgpu_channel_setup_bind_args", nvgpu_channel_setup_bind_args, work_submit_token),         \
        OFF(rel, "nvgpu_channel_setup_bind_args", nvgpu_channel_setup_bind_args, userd_dmabuf_offset),       \
        OFF(rel, "nvgpu_channel_setup_bind_args", nvgpu_channel_setup_bind_args, gpfifo_dmabuf_offset),      \
        SZ(rel, "nvmap_create_handle", nvmap_create_handle),                                                 \
        OFF(rel, "nvmap_create_handle", nvmap_create_handle, size),                                          \
        OFF(rel, "nvmap_create_handle", nvmap_create_handle, fd),                                            \
        OFF(rel, "nvmap_create_handle", nvmap_create_handle, handle),                                        \
        OFF(rel, "nvmap_alloc_handle", nvmap_alloc_handle, handle),                                          \
        OFF(rel, "nvmap_alloc_handle", nvmap_alloc_handle, heap_mask),                                       \
        OFF(rel, "nvmap_alloc_handle", nvmap_alloc_handle, flags),                                           \
        OFF(rel, "nvmap_alloc_handle", nvmap_alloc_handle, align),                                           \
        SZ(rel, "nvmap_rw_handle", nvmap_rw_handle), OFF(rel, "nvmap_rw_handle", nvmap_rw_handle, addr),     \
        OFF(rel, "nvmap_rw_handle", nvmap_rw_handle, handle),                                                \
        OFF(rel, "nvmap_rw_handle", nvmap_rw_handle, offset),                                                \
        OFF(rel, "nvmap_rw_handle", nvmap_rw_handle, elem_size),                                             \
        OFF(rel, "nvmap_rw_handle", nvmap_rw_handle, hmem_stride),                                           \
        OFF(rel, "nvmap_rw_handle", nvmap_rw_handle, user_stride),                                           \
        OFF(rel, "nvmap_rw_handle", nvmap_rw_handle, count),                                                 \
        SZ(rel, "nvmap_available_heaps", nvmap_available_heaps),                                             \
        OFF(rel, "nvmap_available_heaps", nvmap_available_heaps, heaps),                                     \
        IOC(rel, "NVGPU_GPU_IOCTL_ZCULL_GET_CTX_SIZE", NVGPU_GPU_IOCTL_ZCULL_GET_CTX_SIZE),                  \
        IOC(rel, "NVGPU_GPU_IOCTL_GET_CHARACTERISTICS", NVGPU_GPU_IOCTL_GET_CHARACTERISTICS),                \
        IOC(rel, "NVGPU_GPU_IOCTL_ALLOC_AS", NVGPU_GPU_IOCTL_ALLOC_AS),                                      \
        IOC(rel, "NVGPU_GPU_IOCTL_GET_TPC_MASKS", NVGPU_GPU_IOCTL_GET_TPC_MASKS),                            \
        IOC(rel, "NVGPU_GPU_IOCTL_OPEN_CHANNEL", NVGPU_GPU_IOCTL_OPEN_CHANNEL),                              \
        IOC(rel, "NVGPU_GPU_IOCTL_NUM_VSMS", NVGPU_GPU_IOCTL_NUM_VSMS),                                      \
        IOC(rel, "NVGPU_AS_IOCTL_BIND_CHANNEL", NVGPU_AS_IOCTL_BIND_CHANNEL),                                \
        IOC(rel, "NVGPU_AS_IOCTL_UNMAP_BUFFER", NVGPU_AS_IOCTL_UNMAP_BUFFER),                                \
        IOC(rel, "NVGPU_AS_IOCTL_ALLOC_SPACE", NVGPU_AS_IOCTL_ALLOC_SPACE),                                  \
        IOC(rel, "NVGPU_AS_IOCTL_MAP_BUFFER_EX", NVGPU_AS_IOCTL_MAP_BUFFER_EX),                              \
        IOC(rel, "NVGPU_TSG_IOCTL_BIND_CHANNEL_EX", NVGPU_TSG_IOCTL_BIND_CHANNEL_EX),                        \
        IOC(rel, "NVGPU_IOCTL_CHANNEL_ALLOC_OBJ_CTX", NVGPU_IOCTL_CHANNEL_ALLOC_OBJ_CTX),                    \
        IOC(rel, "NVGPU_IOCTL_CHANNEL_SET_ERROR_NOTIFIER", NVGPU_IOCTL_CHANNEL_SET_ERROR_NOTIFIER),          \
        IOC(rel, "NVGPU_IOCTL_CHANNEL_WDT", NVGPU_IOCTL_CHANNEL_WDT),                                        \
        IOC(rel, "NVGPU_IOCTL_CHANNEL_GET_USER_SYNCPOINT", NVGPU_IOCTL_CHANNEL_GET_USER_SYNCPOINT),          \
        IOC(rel, "NVMAP_IOC_CREATE", NVMAP_IOC_CREATE), IOC(rel, "NVMAP_IOC_FREE", NVMAP_IOC_FREE),          \
        IOC(rel, "NVMAP_IOC_WRITE", NVMAP_IOC_WRITE), IOC(rel, "NVMAP_IOC_READ", NVMAP_IOC_READ),            \
        IOC(rel, "NVMAP_IOC_GET_FD", NVMAP_IOC_GET_FD),                                                      \
        IOC(rel, "NVMAP_IOC_GET_AVAILABLE_HEAPS", NVMAP_IOC_GET_AVAILABLE_HEAPS),                            \
        IOC(rel, "NVGPU_IOCTL_CHANNEL_SUBMIT_GPFIFO_NR", 0), /* nr only: see the check below */              \
        CST(rel, NVGPU_GPU_FLAGS_SUPPORT_TSG),                                                               \
        CST(rel, NVGPU_GPU_FLAGS_SUPPORT_DETERMINISTIC_SUBMIT_NO_JOBTRACKING),                               \
        CST(rel, NVGPU_GPU_FLAGS_SUPPORT_DETERMINISTIC_SUBMIT_FULL),                                         \
        CST(rel, NVGPU_GPU_FLAGS_SUPPORT_IO_COHERENCE),                                                      \
        CST(rel, NVGPU_GPU_FLAGS_SUPPORT_RESCHEDULE_RUNLIST),                                                \
        CST(rel, NVGPU_GPU_FLAGS_SUPPORT_TSG_SUBCONTEXTS),                                                   \
        CST(rel, NVGPU_GPU_FLAGS_SUPPORT_DETERMINISTIC_OPTS),                                                \
        CST(rel, NVGPU_GPU_FLAGS_SUPPORT_SYNCPOINT_ADDRESS),                                                 \
        CST(rel, NVGPU_GPU_FLAGS_SUPPORT_USER_SYNCPOINT), CST(rel, NVGPU_GPU_FLAGS_CAN_RAILGATE),            \
        CST(rel, NVGPU_GPU_FLAGS_SUPPORT_USERMODE_SUBMIT), CST(rel, NVGPU_IOCTL_CHANNEL_DISABLE_WDT),        \
        CST(rel, NVGPU_IOCTL_CHANNEL_ENABLE_WDT), CST(rel, NVGPU_IOCTL_CHANNEL_WDT_FLAG_SET_TIMEOUT),        \
        CST(rel, NVGPU_IOCTL_CHANNEL_WDT_FLAG_DISABLE_DUMP),                                                 \
        CST(rel, NVGPU_GPU_IOCTL_ALLOC_AS_FLAGS_UNIFIED_VA),                                                 \
        CST(rel, NVGPU_AS_ALLOC_SPACE_FLAGS_FIXED_OFFSET), CST(rel, NVGPU_AS_ALLOC_SPACE_FLAGS_SPARSE),      \
        CST(rel, NVGPU_AS_MAP_BUFFER_FLAGS_FIXED_OFFSET), CST(rel, NVGPU_AS_MAP_BUFFER_FLAGS_CACHEABLE),     \
        CST(rel, NVGPU_AS_MAP_BUFFER_FLAGS_UNMAPPED_PTE),                                                    \
        CST(rel, NVGPU_AS_MAP_BUFFER_FLAGS_MAPPABLE_COMPBITS), CST(rel, NVGPU_AS_MAP_BUFFER_FLAGS_L3_ALLOC), \
        CST(rel, NVGPU_AS_MAP_BUFFER_FLAGS_TEGRA_RAW), CST(rel, NV_KIND_INVALID),                            \
        CST(rel, NVGPU_CHANNEL_FIFO_ERROR_IDLE_TIMEOUT), CST(rel, NVGPU_CHANNEL_GR_ERROR_SW_METHOD),         \
        CST(rel, NVGPU_CHANNEL_GR_EXCEPTION), CST(rel, NVGPU_CHANNEL_GR_SEMAPHORE_TIMEOUT),                  \
        CST(rel, NVGPU_CHANNEL_GR_ILLEGAL_NOTIFY), CST(rel, NVGPU_CHANNEL_FIFO_ERROR_MMU_ERR_FLT),           \
        CST(rel, NVGPU_CHANNEL_PBDMA_ERROR), CST(rel, NVGPU_CHANNEL_FECS_ERR_UNIMP_FIRMWARE_METHOD),         \
        CST(rel, NVGPU_CHANNEL_RESETCHANNEL_VERIF_ERROR),                                                    \
        CST(rel, NVGPU_CHANNEL_PBDMA_PUSHBUFFER_CRC_MISMATCH),                                               \
        CST(rel, NVGPU_CHANNEL_SETUP_BIND_FLAGS_VPR_ENABLED),                                                \
        CST(rel, NVGPU_CHANNEL_SETUP_BIND_FLAGS_DETERMINISTIC),                                              \
        CST(rel, NVGPU_CHANNEL_SETUP_BIND_FLAGS_REPLAYABLE_FAULTS_ENABLE),                                   \
        CST(rel, NVGPU_CHANNEL_SETUP_BIND_FLAGS_USERMODE_SUPPORT), CST(rel, NVMAP_HEAP_IOVMM),               \
        CST(rel, NVMAP_HEAP_CARVEOUT_VPR), CST(rel, NVMAP_HEAP_CARVEOUT_TSEC),                               \
        CST(rel, NVMAP_HEAP_CARVEOUT_VIDMEM), CST(rel, NVMAP_HEAP_CARVEOUT_FSI),                             \
        CST(rel, NVMAP_HEAP_CARVEOUT_IVM), CST(rel, NVMAP_HEAP_CARVEOUT_GENERIC),                            \
        CST(rel, NVMAP_HANDLE_UNCACHEABLE), CST(rel, NVMAP_HANDLE_WRITE_COMBINE),                            \
        CST(rel, NVMAP_HANDLE_INNER_CACHEABLE), CST(rel, NVMAP_HANDLE_CACHEABLE),                            \
        CST(rel, NVMAP_HANDLE_SECURE), CST(rel, NVMAP_HANDLE_KIND_SPECIFIED),                                \
        CST(rel, NVMAP_HANDLE_COMPR_SPECIFIED), CST(rel, NVMAP_HANDLE_ZEROED_PAGES),                         \
        CST(rel, NVMAP_HANDLE_PHYS_CONTIG), CST(rel, NVMAP_HANDLE_CACHE_SYNC),                               \
        CST(rel, NVMAP_HANDLE_CACHE_SYNC_AT_RESERVE), CST(rel, NVMAP_HANDLE_RO)

static const struct ours ours[] = {
    COMMON(35),
    COMMON(36),
    /* r36 only */
    {36, "size", "nvgpu_gpu_characteristics", NVGPU_CHARS_B_R36},
    CH(36, numa_domain_id),
    CH(36, device_instance_id),
    SZ(36, "nvgpu_gpu_open_tsg_args", nvgpu_gpu_open_tsg_args),
    OFF(36, "nvgpu_gpu_open_tsg_args", nvgpu_gpu_open_tsg_args, flags),
    OFF(36, "nvgpu_gpu_open_tsg_args", nvgpu_gpu_open_tsg_args, source_device_instance_id),
    OFF(36, "nvgpu_gpu_open_tsg_args", nvgpu_gpu_open_tsg_args, share_token),
    SZ(36, "nvgpu_tsg_create_subcontext_args", nvgpu_tsg_create_subcontext_args),
    OFF(36, "nvgpu_tsg_create_subcontext_args", nvgpu_tsg_create_subcontext_args, type),
    OFF(36, "nvgpu_tsg_create_subcontext_args", nvgpu_tsg_create_subcontext_args, as_fd),
    OFF(36, "nvgpu_tsg_create_subcontext_args", nvgpu_tsg_create_subcontext_args, veid),
    OFF(36, "nvgpu_tsg_create_subcontext_args", nvgpu_tsg_create_subcontext_args, reserved),
    SZ(36, "nvgpu_channel_setup_bind_args", nvgpu_channel_setup_bind_args),
    OFF(36, "nvgpu_channel_setup_bind_args", nvgpu_channel_setup_bind_args, gpfifo_gpu_va),
    OFF(36, "nvgpu_channel_setup_bind_args", nvgpu_channel_setup_bind_args, userd_gpu_va),
    OFF(36, "nvgpu_channel_setup_bind_args", nvgpu_channel_setup_bind_args, usermode_mmio_gpu_va),
    OFF(36, "nvgpu_channel_setup_bind_args", nvgpu_channel_setup_bind_args, reserved),
    SZ(36, "nvmap_alloc_handle", nvmap_alloc_handle),
    OFF(36, "nvmap_alloc_handle", nvmap_alloc_handle, numa_nid),
    IOC(36, "NVGPU_GPU_IOCTL_OPEN_TSG", NVGPU_GPU_IOCTL_OPEN_TSG),
    IOC(36, "NVGPU_TSG_IOCTL_CREATE_SUBCONTEXT", NVGPU_TSG_IOCTL_CREATE_SUBCONTEXT),
    IOC(36, "NVGPU_IOCTL_CHANNEL_SETUP_BIND", NVGPU_IOCTL_CHANNEL_SETUP_BIND),
    IOC(36, "NVMAP_IOC_ALLOC", NVMAP_IOC_ALLOC),
    CST(36, NVGPU_AS_MAP_BUFFER_FLAGS_SYSTEM_COHERENT),
    CST(36, NVGPU_TSG_SUBCONTEXT_TYPE_SYNC),
    CST(36, NVGPU_TSG_SUBCONTEXT_TYPE_ASYNC),
    CST(36, NVGPU_CHANNEL_SETUP_BIND_FLAGS_USERMODE_GPU_MAP_RESOURCES_SUPPORT),
    CST(36, NVMAP_HEAP_CARVEOUT_GPU),
    /* r35 only: our *_r35 structs under the upstream names */
    {35, "size", "nvgpu_gpu_characteristics", NVGPU_CHARS_B_R35},
    SZ(35, "nvgpu_gpu_open_tsg_args", nvgpu_gpu_open_tsg_args_r35),
    OFF(35, "nvgpu_gpu_open_tsg_args", nvgpu_gpu_open_tsg_args_r35, reserved),
    SZ(35, "nvgpu_channel_setup_bind_args", nvgpu_channel_setup_bind_args_r35),
    OFF(35, "nvgpu_channel_setup_bind_args", nvgpu_channel_setup_bind_args_r35, reserved),
    SZ(35, "nvmap_alloc_handle", nvmap_alloc_handle_r35),
    IOC(35, "NVGPU_GPU_IOCTL_OPEN_TSG", NVGPU_GPU_IOCTL_OPEN_TSG_R35),
    IOC(35, "NVGPU_IOCTL_CHANNEL_SETUP_BIND", NVGPU_IOCTL_CHANNEL_SETUP_BIND_R35),
    IOC(35, "NVMAP_IOC_ALLOC", NVMAP_IOC_ALLOC_R35),
};
#define N_OURS (sizeof ours / sizeof ours[0])

/* ==== The table ==== */

struct row {
    char rel[12]; /* the L4T release, "35.5", "36.4.3" */
    unsigned abi; /* its ABI line: 35 or 36 */
    char kind[8];
    char name[96];
    long long value;
    bool absent;
};

static int
load_table(struct row **rows_out)
{
    const char *dir = getenv("HCQ_SRCDIR");
    char path[512];
    snprintf(path, sizeof path, "%s%stests/data/l4t_uapi.tsv", dir ? dir : "", dir ? "/" : "");
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    int n = 0, cap = 4096;
    struct row *r = calloc((size_t)cap, sizeof *r);
    char line[256];
    while (r && fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n')
            continue;
        char rel[12], kind[8], name[96], val[32];
        if (sscanf(line, "r%11[0-9.]\t%7s\t%95[^\t]\t%31s", rel, kind, name, val) != 4 || n == cap)
            continue;
        snprintf(r[n].rel, sizeof r[n].rel, "%s", rel);
        r[n].abi = (unsigned)atoi(rel);
        snprintf(r[n].kind, sizeof r[n].kind, "%s", kind);
        snprintf(r[n].name, sizeof r[n].name, "%s", name);
        r[n].absent = !strcmp(kind, "absent");
        r[n].value = r[n].absent ? 0 : strtoll(val, NULL, 0);
        n++;
    }
    fclose(f);
    *rows_out = r;
    return r ? n : -1;
}

static const struct row *
find_row(const struct row *r, int n, const char *rel, const char *kind, const char *name)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(r[i].rel, rel) && !strcmp(r[i].name, name) && (!kind || !strcmp(r[i].kind, kind)))
            return &r[i];
    return NULL;
}

/* The releases the table must hold, each with the ABI line our code implements for it. A
 * release dropped from the table (or a new one added without being listed) fails here. */
static const struct {
    const char *rel;
    unsigned abi;
} releases[] = {{"35.5", 35}, {"36.2", 36}, {"36.3", 36}, {"36.4", 36}, {"36.4.3", 36}};
#define N_RELEASES (sizeof releases / sizeof releases[0])

/* Every number of ours equals the published one, in every release of its ABI line;
 * everything the table says a release lacks, we do not define for it; the table is complete
 * for what we use. */
TEST(l4t_uapi_matches_published_headers)
{
    struct row *r = NULL;
    int n = load_table(&r);
    CHECKF(n > 1400, "tests/data/l4t_uapi.tsv: %d rows (run from the repo root or set HCQ_SRCDIR)", n);
    int bad = 0;
    for (size_t k = 0; k < N_RELEASES; k++) {
        const char *rel = releases[k].rel;
        int rows = 0;
        for (int i = 0; i < n; i++)
            rows += !strcmp(r[i].rel, rel) && r[i].abi == releases[k].abi;
        if (rows < 250) {
            th_fail(t, __FILE__, __LINE__, "r%s: %d rows in the table", rel, rows);
            bad++;
        }
        for (size_t i = 0; i < N_OURS; i++) {
            const struct ours *o = &ours[i];
            if (o->rel != releases[k].abi)
                continue;
            if (!strcmp(o->name, "NVGPU_IOCTL_CHANNEL_SUBMIT_GPFIFO_NR")) {
                const struct row *s = find_row(r, n, rel, "ioctl", "NVGPU_IOCTL_CHANNEL_SUBMIT_GPFIFO");
                if (!s || NVGPU_IOC_NR((unsigned long)s->value) != NVGPU_IOCTL_CHANNEL_SUBMIT_GPFIFO_NR) {
                    th_fail(t, __FILE__, __LINE__, "r%s SUBMIT_GPFIFO nr", rel);
                    bad++;
                }
                continue;
            }
            const struct row *w = find_row(r, n, rel, o->kind, o->name);
            if (!w || w->value != o->value) {
                th_fail(t, __FILE__, __LINE__, "r%s %s %s: ours %lld, published %s%lld", rel, o->kind,
                        o->name, o->value, w ? "" : "(missing) ", w ? w->value : 0);
                bad++;
            }
            if (find_row(r, n, rel, "absent", o->name)) {
                th_fail(t, __FILE__, __LINE__, "r%s %s: we define it, the release does not", rel, o->name);
                bad++;
            }
        }
    }
    /* Reverse: each row belongs to a listed release, and each size/offset/ioctl row of a
     * struct or ioctl we use has a twin in ours for that release's ABI. */
    for (int i = 0; i < n; i++) {
        bool listed = false;
        for (size_t k = 0; k < N_RELEASES && !listed; k++)
            listed = !strcmp(r[i].rel, releases[k].rel);
        if (!listed) {
            th_fail(t, __FILE__, __LINE__, "r%s: release not listed in this test", r[i].rel);
            bad++;
            continue;
        }
        if (r[i].absent || !strcmp(r[i].kind, "const"))
            continue;
        bool used = false;
        for (size_t j = 0; j < N_OURS && !used; j++)
            used = ours[j].rel == r[i].abi && !strcmp(ours[j].name, r[i].name);
        /* Published but unused by us: CREATE_64, CACHE, SUBMIT_GPFIFO (nr checked above). */
        if (!used && strcmp(r[i].name, "NVMAP_IOC_CREATE_64") && strcmp(r[i].name, "NVMAP_IOC_CACHE") &&
            strcmp(r[i].name, "NVGPU_IOCTL_CHANNEL_SUBMIT_GPFIFO")) {
            th_fail(t, __FILE__, __LINE__, "r%s %s %s = %lld: not checked against ours", r[i].rel, r[i].kind,
                    r[i].name, r[i].value);
            bad++;
        }
    }
    CHECKF(bad == 0, "%d differences", bad);
done:
    free(r);
}

/* Within the r36 line, every later release publishes exactly the numbers r36.2 does (the
 * same rows, the same values): that is why one r36 ABI serves them all and the backend's
 * release detection needs no r36.x distinction. If a later release ever differs, this
 * names the row, and nvgpu_kmd.c's detection must learn the difference. */
TEST(l4t_r36_releases_agree)
{
    struct row *r = NULL;
    int n = load_table(&r);
    CHECK(n > 1400);
    int bad = 0, compared = 0;
    for (size_t k = 0; k < N_RELEASES; k++) {
        const char *rel = releases[k].rel;
        if (releases[k].abi != 36 || !strcmp(rel, "36.2"))
            continue;
        for (int i = 0; i < n; i++) {
            const char *other = NULL;
            if (!strcmp(r[i].rel, "36.2"))
                other = rel;
            else if (!strcmp(r[i].rel, rel))
                other = "36.2";
            if (!other)
                continue;
            const struct row *w = find_row(r, n, other, r[i].kind, r[i].name);
            compared++;
            if (!w || w->value != r[i].value) {
                th_fail(t, __FILE__, __LINE__, "r%s %s %s = %lld; r%s %s%lld", r[i].rel, r[i].kind, r[i].name,
                        r[i].value, other, w ? "" : "(missing) ", w ? w->value : 0);
                bad++;
            }
        }
    }
    CHECKF(bad == 0 && compared > 1500, "%d differences in %d comparisons", bad, compared);
done:
    free(r);
}

/* The emulated driver's own dispatch tables: per release, exactly the published numbers
 * of the ioctls it implements (a wrong size would be a different number). */
TEST(l4t_emulator_matches_published_headers)
{
    struct row *r = NULL;
    int n = load_table(&r);
    CHECK(n > 1400);
    const struct {
        const struct emu_nvgpu_ioctl *tab;
        const int *n;
    } tabs[] = {{emu_nvgpu_ctrl_ioctls, &emu_nvgpu_ctrl_ioctls_n},
                {emu_nvgpu_tsg_ioctls, &emu_nvgpu_tsg_ioctls_n},
                {emu_nvgpu_as_ioctls, &emu_nvgpu_as_ioctls_n},
                {emu_nvgpu_chan_ioctls, &emu_nvgpu_chan_ioctls_n},
                {emu_nvmap_ioctls, &emu_nvmap_ioctls_n}};
    int bad = 0;
    for (size_t rk = 0; rk < N_RELEASES; rk++) {
        const char *rel = releases[rk].rel;
        const unsigned abi = releases[rk].abi;
        int seen = 0;
        for (size_t k = 0; k < sizeof tabs / sizeof tabs[0]; k++) {
            for (int i = 0; i < *tabs[k].n; i++) {
                const struct emu_nvgpu_ioctl *e = &tabs[k].tab[i];
                if (e->l4t && e->l4t != abi)
                    continue;
                seen++;
                const struct row *w = find_row(r, n, rel, "ioctl", e->name);
                if (!w || (unsigned long)w->value != e->request) {
                    th_fail(t, __FILE__, __LINE__, "emu r%s %s = 0x%08lx, published %s0x%08llx", rel, e->name,
                            e->request, w ? "" : "(missing) ", w ? (unsigned long long)w->value : 0ull);
                    bad++;
                }
            }
        }
        if (seen != (abi == 35 ? 25 : 26)) {
            th_fail(t, __FILE__, __LINE__, "emu rows r%s: %d", rel, seen);
            bad++;
        }
    }
    CHECKF(bad == 0, "%d differences", bad);
done:
    free(r);
}

/* ==== Release detection and a full run on each ==== */

static void
run_spec(struct th *t, const char *spec, unsigned rel)
{
    struct hcq_device *dev = NULL;
    struct hcq_buf *a = NULL, *b = NULL;
    struct hcq_queue *q = NULL, *cq = NULL;
    struct hcq_program *prog = NULL;
    CHECK_OK(hcq_device_open(spec, &dev));
    struct hcq_device_info info;
    CHECK_OK(hcq_device_info(dev, &info));
    char want[32];
    snprintf(want, sizeof want, "L4T r%u", rel);
    CHECKF(strstr(info.driver, want), "driver '%s' should name %s", info.driver, want);
    const uint32_t n = 1u << 16, v = (uint32_t)th_rand() | 1u;
    CHECK_OK(hcq_buf_alloc(dev, n * 4ull, HCQ_MEM_MAPPABLE, &a));
    CHECK_OK(hcq_buf_alloc(dev, n * 4ull, HCQ_MEM_MAPPABLE, &b));
    uint32_t *x = hcq_buf_map(a), *y = hcq_buf_map(b);
    for (uint32_t i = 0; i < n; i++)
        x[i] = y[i] = ~v;
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COPY, &cq));
    CHECK_OK(hcq_program_load(dev, "k_fill_u32", &prog));
    struct k_fill_u32_params p = {.dst_va = hcq_buf_va(a), .n = n, .value = v};
    uint32_t grid[3] = {n / 256, 1, 1}, block[3] = {256, 1, 1};
    CHECK_OK(hcq_queue_launch(q, prog, grid, block, &p, sizeof p));
    CHECK_OK(hcq_queue_finish(q, 10000000000ull));
    CHECK_OK(hcq_queue_copy(cq, b, 0, a, 0, n * 4ull));
    CHECK_OK(hcq_queue_finish(cq, 10000000000ull));
    for (uint32_t i = 0; i < n; i++)
        CHECKF(x[i] == v && y[i] == v, "r%u: x[%u] 0x%08x y 0x%08x", rel, i, x[i], y[i]);
done:
    hcq_program_destroy(prog);
    hcq_queue_destroy(cq);
    hcq_queue_destroy(q);
    hcq_buf_free(b);
    hcq_buf_free(a);
    hcq_device_close(dev);
}

TEST(l4t_r36_detected_and_runs)
{
    run_spec(t, "emu:ga10b,l4t=36", 36);
}
TEST(l4t_r35_detected_and_runs)
{
    run_spec(t, "emu:ga10b,l4t=35", 35);
}

/* On r35 the r36 numbers are unknown ioctls (ENOTTY) and the other way round: the
 * backend must never send the other release's number (trace has none). */
TEST(l4t_r35_trace)
{
    struct emu_opts o;
    struct emu_dev *d = NULL;
    struct kmd *kmd = NULL;
    CHECK_OK(emu_opts_parse("ga10b,l4t=35,trace", &o));
    CHECK_OK(emu_dev_create(&o, &d));
    CHECK_OK(nvgpu_kmd_create(emu_dev_sys(d), 0, &kmd));
    struct nvgpu_kmd *k = nvgpu_kmd_from(kmd);
    CHECK(k->l4t == NVGPU_L4T_R35 && k->veid == NVGPU_R35_ASYNC_VEID);
    CHECK(k->chars.compute_class == AMPERE_COMPUTE_B && k->chars.max_gpfifo_entries == (1u << 28));
    CHECK(k->chars.sm_arch_sm_version == 0x807 && k->chars.gpu_va_bit_count == 40);
    struct kmd_channel *ch = NULL;
    CHECK_OK(kmd->ops->channel_create(kmd, KMD_ENGINE_COMPUTE, 1024, &ch));
    const char *tr = emu_dev_trace(d);
    CHECKF(!strstr(tr, "ENOTTY") && !strstr(tr, "CREATE_SUBCONTEXT"), "trace:\n%s", tr);
    kmd->ops->channel_destroy(kmd, ch);
done:
    kmd_destroy(kmd);
    if (d)
        emu_dev_put(d);
}

/* The reported size decides: >= 328 reads as r36 (a later r36 may append fields), 312 as
 * r35, anything else is refused rather than parsed with a guessed layout. */
TEST(l4t_unknown_characteristics_size_refused)
{
    static const struct {
        uint32_t size;
        enum hcq_status want;
        unsigned l4t;
    } c[] = {{336, HCQ_OK, 36}, {300, HCQ_ERR_UNSUPPORTED, 0}, {320, HCQ_ERR_UNSUPPORTED, 0}};
    for (unsigned i = 0; i < sizeof c / sizeof c[0]; i++) {
        struct emu_opts o;
        struct emu_dev *d = NULL;
        struct kmd *kmd = NULL;
        CHECK_OK(emu_opts_parse("ga10b", &o));
        CHECK_OK(emu_dev_create(&o, &d));
        emu_nvgpu_of(d)->chars_B_report = c[i].size;
        enum hcq_status st = nvgpu_kmd_create(emu_dev_sys(d), 0, &kmd);
        bool ok = st == c[i].want && (!kmd || nvgpu_kmd_from(kmd)->l4t == c[i].l4t);
        kmd_destroy(kmd);
        emu_dev_put(d);
        CHECKF(ok, "size %u: status %d", c[i].size, (int)st);
    }
done:;
}

/* ==== Cache maintenance (docs/jetson.md "Coherence") ====
 * nvhcq emits no CPU cache maintenance and no GPU L2 flush for CPU-visible results. That is
 * correct only because (1) the kernel reports IO coherence (CPU caches snooped, GPU writes
 * visible to the CPU), and (2) every GPU mapping is made without MAP_BUFFER_EX CACHEABLE,
 * so nvgpu sets the PTE volatile bit and the GPU L2 does not keep those lines (r36.2
 * gmmu_ga10b_fusa.c). Both are checked here. emu:ga10b,l2=noncoherent models what (2)
 * avoids: a CACHEABLE mapping's GPU writes stay in an L2 the CPU does not see until an
 * L2_FLUSH_DIRTY method; l4t_l2_* below show our mappings need no flush and that a cached
 * mapping without one reads stale. */
TEST(l4t_coherence_required)
{
    struct emu_opts o;
    struct emu_dev *d = NULL;
    struct kmd *kmd = NULL;
    CHECK_OK(emu_opts_parse("ga10b", &o));
    CHECK_OK(emu_dev_create(&o, &d));
    emu_nvgpu_of(d)->chars.flags &= ~NVGPU_GPU_FLAGS_SUPPORT_IO_COHERENCE;
    CHECK(nvgpu_kmd_create(emu_dev_sys(d), 0, &kmd) == HCQ_ERR_UNSUPPORTED);
    CHECKF(strstr(th_last_error(), "IO_COHERENCE"), "%s", th_last_error());
done:
    kmd_destroy(kmd);
    if (d)
        emu_dev_put(d);
}

TEST(l4t_no_gpu_l2_caching_of_mappings)
{
    struct hcq_device *dev = NULL;
    struct hcq_buf *b[3] = {NULL, NULL, NULL};
    uint32_t maps0 = 0, cached0 = 0;
    emu_nvgpu_map_flags_seen(&maps0, &cached0);
    CHECK_OK(hcq_device_open("emu:ga10b,trace", &dev));
    CHECK_OK(hcq_buf_alloc(dev, 1u << 20, HCQ_MEM_DEVICE, &b[0]));
    CHECK_OK(hcq_buf_alloc(dev, 16u << 20, HCQ_MEM_MAPPABLE, &b[1]));
    CHECK_OK(hcq_buf_alloc(dev, 4096, HCQ_MEM_HOST, &b[2]));
    uint32_t maps = 0, cached = 0;
    emu_nvgpu_map_flags_seen(&maps, &cached);
    maps -= maps0;
    cached -= cached0;
    CHECKF(maps >= 3 && cached == 0, "%u MAP_BUFFER_EX, %u with CACHEABLE/L3_ALLOC", maps, cached);
done:
    for (int i = 0; i < 3; i++)
        hcq_buf_free(b[i]);
    hcq_device_close(dev);
}

/* A raw channel for the L2 tests: pushbuffer and marker are ordinary backend buffers (our
 * mapping flags); each step is one GPFIFO entry ending in a marker release the CPU waits for. */
struct l2t {
    struct emu_dev *d;
    struct kmd *kmd;
    struct kmd_channel *ch;
    struct kmd_mem *pb, *mark, *target;
    uint64_t cached_va; /* target mapped a second time, with MAP_BUFFER_EX CACHEABLE (0: none) */
    uint32_t put, pb_dw;
    uint64_t mark_n;
};

static uint32_t
l2t_release(uint32_t *w, uint64_t va, uint64_t v)
{
    w[0] = (1u << 29) | (5u << 16) | (NVC56F_SEM_ADDR_LO >> 2); /* incrementing, 5 dwords */
    w[1] = (uint32_t)va;
    w[2] = (uint32_t)(va >> 32) & 0xFFu;
    w[3] = (uint32_t)v;
    w[4] = (uint32_t)(v >> 32);
    w[5] = 0x01100001u; /* RELEASE | RELEASE_WFI | 64-bit payload, no timestamp */
    return 6;
}

/* GPU write of v at va (a host semaphore release), an L2_FLUSH_DIRTY if flush, then the
 * next marker to our own buffer; returns once the CPU sees the marker (false after 5 s). */
static bool
l2t_gpu_write(struct l2t *s, uint64_t va, uint64_t v, bool flush)
{
    uint32_t *w = (uint32_t *)s->pb->map + s->pb_dw,
             n = l2t_release((uint32_t *)s->pb->map + s->pb_dw, va, v);
    if (flush) {
        w[n++] = (1u << 29) | (4u << 16) | (NVC56F_MEM_OP_A >> 2); /* MEM_OP_A..D */
        w[n++] = 0;
        w[n++] = 0;
        w[n++] = 0;
        w[n++] = (uint32_t)NVC56F_MEM_OP_D_OPERATION_L2_FLUSH_DIRTY << 27;
    }
    n += l2t_release(w + n, s->mark->va, ++s->mark_n);
    s->ch->ring[s->put % s->ch->entries] = (s->pb->va + s->pb_dw * 4ull) | ((uint64_t)n << 42) | (1ull << 41);
    s->pb_dw += n;
    kmd_channel_kick(s->kmd, s->ch, ++s->put);
    volatile uint64_t *m = s->mark->map;
    uint64_t t0 = hcq_time_ns();
    while (*m != s->mark_n)
        if (hcq_time_ns() - t0 > 5000000000ull)
            return false;
    return true;
}

static enum hcq_status
l2t_open(struct l2t *s, const char *opts)
{
    struct emu_opts o;
    enum hcq_status st;
    if ((st = emu_opts_parse(opts, &o)) || (st = emu_dev_create(&o, &s->d)) ||
        (st = nvgpu_kmd_create(emu_dev_sys(s->d), 0, &s->kmd)) ||
        (st = kmd_channel_create(s->kmd, KMD_ENGINE_COMPUTE, 256, &s->ch)) ||
        (st = kmd_mem_alloc(s->kmd, 64 << 10, 0, 0, &s->pb)) ||
        (st = kmd_mem_alloc(s->kmd, 4096, 0, KMD_MEM_UNCACHED, &s->mark)) ||
        (st = kmd_mem_alloc(s->kmd, 4096, 0, 0, &s->target)))
        return st;
    *(volatile uint64_t *)s->mark->map = 0;
    *(volatile uint64_t *)s->target->map = 0;
    /* the same nvmap buffer mapped again, with GPU L2 caching (what nvhcq never asks) */
    struct nvgpu_as_map_buffer_ex_args a = {.flags = NVGPU_AS_MAP_BUFFER_FLAGS_CACHEABLE,
                                            .compr_kind = NV_KIND_INVALID,
                                            .incompr_kind = 0,
                                            .dmabuf_fd = ((struct nvgpu_mem *)s->target)->dmabuf_fd,
                                            .page_size = 4096};
    struct nvgpu_kmd *k = nvgpu_kmd_from(s->kmd);
    int err = nvgpu_kmd_ioctl(k, k->as_fd, NVGPU_AS_IOCTL_MAP_BUFFER_EX, &a, "MAP_BUFFER_EX");
    if (err)
        return hcq_err(HCQ_ERR_DRIVER, "MAP_BUFFER_EX(CACHEABLE): %s", strerror(err));
    s->cached_va = a.offset;
    return HCQ_OK;
}

static void
l2t_close(struct l2t *s)
{
    if (s->cached_va) {
        struct nvgpu_kmd *k = nvgpu_kmd_from(s->kmd);
        struct nvgpu_as_unmap_buffer_args u = {.offset = s->cached_va};
        (void)nvgpu_kmd_ioctl(k, k->as_fd, NVGPU_AS_IOCTL_UNMAP_BUFFER, &u, "UNMAP_BUFFER");
    }
    if (s->kmd) {
        kmd_mem_free(s->kmd, s->target);
        kmd_mem_free(s->kmd, s->mark);
        kmd_mem_free(s->kmd, s->pb);
        if (s->ch)
            kmd_channel_destroy(s->kmd, s->ch);
        kmd_destroy(s->kmd);
    }
    if (s->d)
        emu_dev_put(s->d);
}

/* (a) With our mapping flags (no CACHEABLE) the GPU's write is visible to the CPU at once,
 * with the non-coherent L2 modelled; (b) the same write through the CACHEABLE mapping is
 * not (the CPU reads the stale value: this is how the check fails); (c) an L2_FLUSH_DIRTY
 * in the pushbuffer makes it visible. */
TEST(l4t_l2_noncoherent_model)
{
    struct l2t s = {0};
    volatile uint64_t *x = NULL;
    const uint64_t v1 = th_rand() | 1u, v2 = v1 + 2;
    CHECK_OK(l2t_open(&s, "ga10b,l2=noncoherent"));
    x = s.target->map;
    CHECK(l2t_gpu_write(&s, s.target->va, v1, false));
    CHECKF(*x == v1, "(a) our mapping: CPU reads 0x%llx, GPU wrote 0x%llx", (unsigned long long)*x,
           (unsigned long long)v1);
    CHECK(l2t_gpu_write(&s, s.cached_va, v2, false));
    CHECKF(*x == v1, "(b) CACHEABLE, no flush: CPU reads 0x%llx; the model should have kept 0x%llx in L2",
           (unsigned long long)*x, (unsigned long long)v2);
    CHECK(l2t_gpu_write(&s, s.cached_va + 8, v2, true));
    CHECKF(x[0] == v2 && x[1] == v2, "(c) after L2_FLUSH_DIRTY: CPU reads 0x%llx 0x%llx, want 0x%llx",
           (unsigned long long)x[0], (unsigned long long)x[1], (unsigned long long)v2);
done:
    l2t_close(&s);
}

/* Without the option the model has no L2: the same CACHEABLE write is visible at once (so
 * the stale read above is the option's doing, and other tests are unaffected). */
TEST(l4t_l2_model_off_by_default)
{
    struct l2t s = {0};
    const uint64_t v = th_rand() | 1u;
    CHECK_OK(l2t_open(&s, "ga10b"));
    CHECK(l2t_gpu_write(&s, s.cached_va, v, false));
    CHECK(*(volatile uint64_t *)s.target->map == v);
done:
    l2t_close(&s);
}

/* The whole backend (kernel, copy-engine copy, signals) on the non-coherent L2 model:
 * every result is visible without an L2 flush because no mapping is CACHEABLE. */
TEST(l4t_l2_noncoherent_backend_runs)
{
    run_spec(t, "emu:ga10b,l2=noncoherent", 36);
}

/* Owner knob: HCQ_NVGPU_GPFIFO_ENTRIES sizes every ring (and bad values are refused). */
TEST(l4t_gpfifo_entries_knob)
{
    struct emu_opts o;
    struct emu_dev *d = NULL;
    struct kmd *kmd = NULL;
    struct kmd_channel *ch = NULL;
    CHECK_OK(emu_opts_parse("ga10b", &o));
    CHECK_OK(emu_dev_create(&o, &d));
    CHECK_OK(nvgpu_kmd_create(emu_dev_sys(d), 0, &kmd));
    setenv("HCQ_NVGPU_GPFIFO_ENTRIES", "4096", 1);
    CHECK_OK(kmd->ops->channel_create(kmd, KMD_ENGINE_COMPUTE, 1024, &ch));
    CHECK(ch->entries == 4096);
    kmd->ops->channel_destroy(kmd, ch);
    ch = NULL;
    setenv("HCQ_NVGPU_GPFIFO_ENTRIES", "1000", 1);
    CHECK(kmd->ops->channel_create(kmd, KMD_ENGINE_COMPUTE, 1024, &ch) == HCQ_ERR_INVALID);
done:
    unsetenv("HCQ_NVGPU_GPFIFO_ENTRIES");
    if (ch)
        kmd->ops->channel_destroy(kmd, ch);
    kmd_destroy(kmd);
    if (d)
        emu_dev_put(d);
}

/* Owner knob: HCQ_NVGPU_DOORBELL_BATCH=N rings the doorbell once per N kicks of a channel,
 * or before any wait. Counted by the backend at the doorbell store itself (the emulator
 * polls the doorbell word, so it would miss stores that land between two polls). */
static uint64_t
db_rings_for(struct hcq_queue *q, struct hcq_signal *sig, uint64_t first, uint32_t n, uint64_t *kicks_out)
{
    uint64_t k0, r0, k1, r1;
    nvgpu_chan_doorbell_stats(&k0, &r0);
    for (uint32_t i = 0; i < n; i++)
        if (hcq_queue_signal(q, sig, first + i) != HCQ_OK || hcq_queue_submit(q) != HCQ_OK)
            return UINT64_MAX;
    nvgpu_chan_doorbell_stats(&k1, &r1);
    *kicks_out = k1 - k0;
    return r1 - r0;
}

TEST(l4t_doorbell_batch_knob)
{
    struct hcq_device *dev = NULL;
    struct hcq_queue *a = NULL, *b = NULL;
    struct hcq_signal *s1 = NULL, *s2 = NULL;
    uint64_t kicks = 0, rings;
    /* default: one doorbell per kick, as before the knob */
    unsetenv("HCQ_NVGPU_DOORBELL_BATCH");
    CHECK_OK(hcq_device_open("emu:ga10b", &dev));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &a));
    CHECK_OK(hcq_signal_create(dev, 0, &s1));
    rings = db_rings_for(a, s1, 1, 16, &kicks);
    CHECKF(kicks >= 16 && rings == kicks, "batch 1: %llu kicks, %llu doorbells", (unsigned long long)kicks,
           (unsigned long long)rings);
    CHECK_OK(hcq_queue_finish(a, 10000000000ull));
    hcq_signal_destroy(s1);
    s1 = NULL;
    hcq_queue_destroy(a);
    a = NULL;
    hcq_device_close(dev);
    dev = NULL;

    setenv("HCQ_NVGPU_DOORBELL_BATCH", "8", 1);
    CHECK_OK(hcq_device_open("emu:ga10b", &dev));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &a));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &b));
    CHECK_OK(hcq_signal_create(dev, 0, &s1));
    CHECK_OK(hcq_signal_create(dev, 0, &s2));
    CHECK_OK(hcq_queue_finish(a, 10000000000ull)); /* setup work done, nothing deferred */
    CHECK_OK(hcq_queue_finish(b, 10000000000ull));
    rings = db_rings_for(a, s1, 1, 16, &kicks);
    CHECKF(kicks >= 16 && rings >= 1 && rings <= kicks / 8, "batch 8: %llu kicks, %llu doorbells",
           (unsigned long long)kicks, (unsigned long long)rings);
    CHECK_OK(hcq_queue_finish(a, 10000000000ull)); /* the wait rings what is left */
    CHECK(hcq_signal_value(s1) == 16);
    /* A GPU wait on another queue's deferred work: b waits for a's signal, the CPU waits
     * only on b. Both kicks stay below the batch; the wait must ring both channels. */
    CHECK_OK(hcq_queue_wait(b, s1, 17));
    CHECK_OK(hcq_queue_signal(b, s2, 1));
    CHECK_OK(hcq_queue_submit(b));
    CHECK_OK(hcq_queue_signal(a, s1, 17));
    CHECK_OK(hcq_queue_submit(a));
    CHECK_OK(hcq_signal_wait(s2, 1, 10000000000ull));
    /* Polling the value (no wait call) also starts deferred work. */
    CHECK_OK(hcq_queue_signal(a, s1, 18));
    CHECK_OK(hcq_queue_submit(a));
    uint64_t t0 = hcq_time_ns();
    while (hcq_signal_value(s1) < 18 && hcq_time_ns() - t0 < 5000000000ull)
        ;
    CHECK(hcq_signal_value(s1) == 18);
    CHECK_OK(hcq_device_synchronize(dev, 10000000000ull));
    hcq_signal_destroy(s2);
    hcq_signal_destroy(s1);
    s1 = s2 = NULL;
    hcq_queue_destroy(b);
    hcq_queue_destroy(a);
    a = b = NULL;
    hcq_device_close(dev);
    dev = NULL;

    /* values outside 1..1024 are refused */
    static const char *bad[] = {"0", "1025", "x", "8x"};
    for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv("HCQ_NVGPU_DOORBELL_BATCH", bad[i], 1);
        CHECKF(hcq_device_open("emu:ga10b", &dev) == HCQ_ERR_INVALID, "HCQ_NVGPU_DOORBELL_BATCH=%s accepted",
               bad[i]);
        hcq_device_close(dev);
        dev = NULL;
    }
done:
    unsetenv("HCQ_NVGPU_DOORBELL_BATCH");
    hcq_signal_destroy(s2);
    hcq_signal_destroy(s1);
    hcq_queue_destroy(b);
    hcq_queue_destroy(a);
    hcq_device_close(dev);
}

/* ==== Device buffers above one nvmap buffer ====
 * One nvmap buffer is at most 4 GiB - 2 MiB (CREATE's u32 size); a 3B Q8_0 or 8B Q4_K model
 * needs more. The backend spans: parts mapped back to back into one ALLOC_SPACE reservation
 * and one CPU reservation. Here the emulated driver's cap is lowered (nvmap_max=) and so is
 * the backend's (HCQ_NVGPU_MAX_BUF_B), so a 20 MiB buffer becomes three parts. */
int
main(int argc, char **argv)
{
    static const struct th_case cases[] = {
        TH_CASE(l4t_uapi_matches_published_headers),
        TH_CASE(l4t_r36_releases_agree),
        TH_CASE(l4t_emulator_matches_published_headers),
        TH_CASE(l4t_r36_detected_and_runs),
        TH_CASE(l4t_r35_detected_and_runs),
        TH_CASE(l4t_r35_trace),
        TH_CASE(l4t_unknown_characteristics_size_refused),
        TH_CASE(l4t_coherence_required),
        TH_CASE(l4t_no_gpu_l2_caching_of_mappings),
        TH_CASE(l4t_l2_noncoherent_model),
        TH_CASE(l4t_l2_model_off_by_default),
        TH_CASE(l4t_l2_noncoherent_backend_runs),
        TH_CASE(l4t_gpfifo_entries_knob),
        TH_CASE(l4t_doorbell_batch_knob),
    };
    return th_run("nvgpu_l4t", NULL, cases, TH_COUNT(cases), argc - 1, argv + 1) ? 1 : 0;
}
