/* SPDX-License-Identifier: MIT */
/*
 * emu_rm_priv.h - state of the emulated RM + UVM driver (emu_rm.c escapes and objects,
 * emu_rm_ctrl.c controls, emu_uvm.c UVM). Layer: emu.
 */
#ifndef EMU_RM_PRIV_H
#define EMU_RM_PRIV_H

#include "emu_priv.h"
#include "emu_rm_abi.h"

enum emu_rm_file_kind { EMU_RM_CTL, EMU_RM_GPU, EMU_RM_UVM };

#define EMU_RM_PEERS_MAX 8u /* other GPUs one UVM file may register */
#define EMU_RM_GPUS_MAX 32u /* emulated RM GPUs alive at once (gpu ids 0x100..) */

struct emu_rm_range { /* a UVM external range or channel reservation */
    uint64_t base, length;
    bool channel;
};

struct emu_rm_file {
    enum emu_rm_file_kind kind;
    struct emu_rm *rm;
    struct emu_fd *f;
    /* nvidiaN: bound to a ctl file by NV_ESC_REGISTER_FD */
    bool registered;
    /* mmap context created by NV_ESC_RM_MAP_MEMORY naming this fd (rm.md §3.4) */
    struct emu_bo *map_bo;
    uint64_t map_off, map_len;
    /* uvm */
    bool uvm_init;
    bool gpu_registered;
    struct emu_rm_obj *uvm_vas; /* registered FERMI_VASPACE_A */
    struct emu_rm_range *ranges;
    uint32_t range_count, range_cap;
    /* other emulated GPUs registered in this VA space (UVM_REGISTER_GPU of their UUID) */
    struct {
        uint8_t uuid[16];
        enum emu_p2p link;
        bool enabled; /* peer access on: NVLink at registration, PCIe by ENABLE_PEER_ACCESS */
    } peers[EMU_RM_PEERS_MAX];
    uint32_t peer_count;
};

struct emu_rm_obj {
    uint32_t client, handle, parent, cls;
    struct emu_rm_file *owner; /* ctl file of the client */
    uint64_t seq;              /* creation order: frees go in reverse */
    /* memory, usermode */
    struct emu_bo *bo;
    bool sysmem, os_desc;
    /* vaspace */
    struct emu_vm *vm;
    uint32_t va_flags;
    /* TSG (and channels without TSG) */
    bool scheduled;
    uint32_t engine_type; /* TSG: NV2080_ENGINE_TYPE it runs on (GR or an async copy engine) */
    /* ctxshare: its vaspace; channel: its ctxshare and TSG */
    uint32_t h_vaspace, h_ctxshare, h_tsg;
    /* channel */
    struct emu_chan *ch;
    struct emu_bo *notifier_bo;
    uint32_t token;
    bool uvm_registered;
    uint32_t engine_cls; /* engine object: class; channel: bound engine class */
};

struct emu_rm {
    struct emu_dev *d;
    struct emu_rm_obj **objs;
    uint32_t obj_count, obj_cap;
    uint64_t seq;
    uint32_t next_client, next_handle, next_token, next_subctx;
    uint64_t vram_B, vram_used_B;
    struct emu_bo *usermode_bo; /* the GPU's usermode (doorbell) page, 64 KiB */
    struct emu_vm *default_vas; /* NV_ESC_RM_MAP_MEMORY_DMA targets (behind NV01_MEMORY_VIRTUAL) */
    struct emu_rm_file **files;
    uint32_t file_count, file_cap;
    /* the chip */
    const uint32_t *classes;
    uint32_t class_count;
    uint32_t gpu_id, pci_device_id, sm_version_code, gpcs, tpc_mask, litter_gpcs, litter_tpc_per_gpc,
        max_warps_per_sm;
    uint8_t uuid[16];
    uint32_t slot; /* index in the process's list of emulated RM GPUs (emu_rm.c, peers) */
    /* The engine list (our model, not a real chip's table): GR, two GR copy engines (COPY0/1,
     * shared with GR), `lces` asynchronous ones from COPY2 - the first with one PCE it shares,
     * the others two PCEs each - and an NVDEC. */
    uint32_t engines[16];
    uint32_t engine_count;
    uint8_t ce_caps[16][2]; /* by copy index */
    uint32_t ce_pce_mask[16];
    uint32_t ce_count; /* COPY0 .. COPY(ce_count - 1) exist */
};

/* The copy index of an engine type in the model's list, -1 if not a copy engine of it. */
int emu_rm_ce_index(const struct emu_rm *rm, uint32_t engine_type);

/* emu_rm.c */
struct emu_rm_obj *emu_rm_obj_find(struct emu_rm *rm, uint32_t client, uint32_t handle);
bool emu_rm_has_class(const struct emu_rm *rm, uint32_t cls);
const char *emu_rm_class_name(uint32_t cls);
const char *emu_rm_status_name(uint32_t st);
struct emu_rm_file *emu_rm_file_of_fd(struct emu_rm *rm, int fd, enum emu_rm_file_kind kind);
bool emu_rm_is_descendant(struct emu_rm *rm, const struct emu_rm_obj *o, const struct emu_rm_obj *root);
void emu_rm_obj_free_tree(struct emu_rm *rm, struct emu_rm_obj *root);
struct emu_rm_obj *emu_rm_obj_new(struct emu_rm *rm, uint32_t client, uint32_t handle, uint32_t parent,
                                  uint32_t cls);
void emu_rm_obj_release(struct emu_rm *rm, struct emu_rm_obj *o);
/* Peers: the other emulated RM GPUs of the process (emu_rm.c). Each call looks the GPU up
 * under the list's lock, so a GPU closing meanwhile is simply not found. */
/* The link between rm and the GPU with this gpu id / UUID; false when there is no such GPU. */
bool emu_rm_peer_by_gpu_id(const struct emu_rm *rm, uint32_t gpu_id, enum emu_p2p *link_out);
bool emu_rm_peer_by_uuid(const struct emu_rm *rm, const uint8_t *uuid, enum emu_p2p *link_out);
/* Memory object hMemory of client hClient on another GPU's control file ctl_fd: a bo
 * reference, whether it is video memory, and its GPU's UUID. 0, -ENOENT (no such object on
 * any other GPU), or -EAGAIN (that GPU's model is busy: the caller fails the ioctl with
 * EAGAIN, which kmd/rm retries, so two GPUs mapping each other never wait on each other). */
int emu_rm_peer_mem(const struct emu_rm *rm, int ctl_fd, uint32_t h_client, uint32_t h_memory,
                    struct emu_bo **bo_out, bool *vidmem_out, uint8_t *uuid_out);
/* emu_rm_alloc.c: the escapes that create, free and map objects (NV_STATUS results) */
uint32_t emu_rm_alloc(struct emu_rm *rm, struct emu_rm_file *file, uint32_t h_root, uint32_t h_parent,
                      uint32_t *h_new, uint32_t cls, uint64_t params_ptr, uint32_t params_B);
uint32_t emu_rm_free(struct emu_rm *rm, struct emu_rm_file *file, struct emu_nvos00 *p);
uint32_t emu_rm_alloc_os_desc(struct emu_rm *rm, struct emu_rm_file *file, struct emu_nvos02_fd *p);
uint32_t emu_rm_map_memory(struct emu_rm *rm, struct emu_nvos33_fd *p);
uint32_t emu_rm_map_memory_dma(struct emu_rm *rm, struct emu_nvos46 *p);
/* emu_rm_ctrl.c */
uint32_t emu_rm_control(struct emu_rm *rm, struct emu_rm_file *file, struct emu_nvos54 *p);
/* emu_uvm.c */
int emu_uvm_ioctl(struct emu_rm_file *file, unsigned long request, void *arg);
void emu_uvm_release(struct emu_rm_file *file);
/* Channel on an externally owned VA space: runnable once scheduled and UVM-registered. */
void emu_rm_channel_update(struct emu_rm *rm, struct emu_rm_obj *chan);

#endif /* EMU_RM_PRIV_H */
