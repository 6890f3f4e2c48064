/* SPDX-License-Identifier: MIT */
/*
 * emu_gpu.h - the GPU model's channel state, shared by emu_gpu.c (GPFIFO, host and copy
 * engine methods) and emu_qmd.c (compute: QMD decode, launch, releases). Layer: emu.
 */
#ifndef EMU_GPU_H
#define EMU_GPU_H

#include "emu_priv.h"

#define EMU_CHAN_MAX_CLASSES 8
#define EMU_DOORBELL_IDLE 0xFFFFFFFFu /* what the model leaves in the doorbell word once read */

struct emu_chan {
    struct emu_dev *d;
    struct emu_chan_desc desc;
    pthread_t thread;
    bool thread_started;
    atomic_bool stop;
    atomic_bool runnable;
    atomic_bool rung;    /* a doorbell with our token was seen */
    atomic_bool lenient; /* another channel's doorbell may have hidden ours */
    atomic_bool hung;    /* stopped at a QMD that never completes (injected, or a lesson) */
    uint32_t get;        /* next GPFIFO entry to fetch */
    atomic_uint class_count;
    uint32_t classes[EMU_CHAN_MAX_CLASSES];
    uint32_t subch_cls[8]; /* SET_OBJECT bindings */

    /* host semaphore methods (rm.md §5.2) */
    uint64_t sem_va, sem_payload;
    /* compute (rm.md §5.3) */
    uint32_t pcas_a;
    uint64_t shared_window, local_window;
    /* SET_SHADER_LOCAL_MEMORY_A and _NON_THROTTLED_A (upper halves) until their _B lands in
     * the device's GR context state (emu_priv.h gr_lmem_*) */
    uint32_t lmem_va_hi, lmem_size_hi;
    uint32_t report_sem[3]; /* SET_REPORT_SEMAPHORE_A..C */
    /* copy engine (rm.md §5.4) */
    uint64_t ce_in, ce_out, ce_sem_va, ce_sem_payload;
    uint32_t ce_pitch_in, ce_pitch_out, ce_line_len, ce_line_count;

    pthread_mutex_t err_lock;
    enum emu_chan_error err;
    char why[256];
};

/* Raise the channel's error (first one wins), write the notifier, log. Returns -1 so
 * callers can `return emu_chan_fail(...)`. */
int emu_chan_fail(struct emu_chan *ch, enum emu_chan_error err, const char *fmt, ...) HCQ_PRINTF(3, 4);

/* Compute class method (emu_qmd.c); 0 or -1 after emu_chan_fail. */
int emu_qmd_method(struct emu_chan *ch, uint32_t cls, uint32_t mthd, uint32_t data);

/* Semaphore-style write of a payload (and optional timestamp) at va: payload64 selects
 * 8 bytes, else only the low 4 are written; four_words adds the 16-byte {payload,
 * timestamp} record (rm.md §5.2, §5.6). 0 or -1 (MMU fault raised). */
int emu_chan_sem_write(struct emu_chan *ch, uint64_t va, uint64_t payload, bool payload64, bool four_words,
                       const char *who);

static inline bool
emu_cls_is_hopper_plus(uint32_t cls)
{
    /* host C86F+, compute CBC0+, copy C8B5+: the low byte names the kind, the high byte the generation */
    return (cls >> 8) >= 0xC8u && ((cls & 0xFF) == 0x6F || (cls & 0xFF) == 0xB5) ? true
           : (cls & 0xFF) == 0xC0                                                ? (cls >> 8) >= 0xCBu
                                                                                 : false;
}

#endif /* EMU_GPU_H */
