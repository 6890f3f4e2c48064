/* SPDX-License-Identifier: MIT */
/*
 * pb_build.h - the builder state shared by pb_build.c (command lists to pushbuffers: segments,
 * channels, copies, synchronization) and pb_launch.c (launches: cbuf0, QMD, chaining and
 * programmatic links). Layer: hcq (engine-private).
 */
#ifndef PB_BUILD_H
#define PB_BUILD_H

#include "pb.h"

/* Scratch dwords a single command may need at most (a copy of <= 2 GiB, cross-channel
 * handover and a release: well under this). Large copies are checked separately. */
#define PB_CMD_MAX_DW 96u
/* The stream part of one segment stays below half the ring (pb_ring_alloc's limit). */
#define PB_SEGMENT_MAX_B (PB_STREAM_B / 2 - 65536u)

struct pb_builder {
    struct pb_queue *pq;
    struct pb_dev *pd;
    const struct hcq_cmdlist *cl;
    const uint64_t *vars;
    struct pb_build_target *g; /* NULL: stream mode */
    struct pb_chan *cur;       /* channel of the previous command (main at a segment start) */
    /* The last launch's QMD stays in CPU memory until its successor is known: chaining
     * patches it, and stream memory may be write-combined BAR1 that must not be read. */
    uint32_t pend_dw[GPU_QMD_MAX_DW];
    uint32_t *pend_dst;     /* where it goes; NULL: nothing pending */
    bool chain;             /* the next launch may chain to the pending QMD */
    uint32_t pend_smem_cfg; /* TARGET_SM_CONFIG_SHARED_MEM_SIZE of the pending QMD */
    const struct gpu_qmd_ops *qmd_ops;
    uint32_t cmd_index;
    uint32_t cpu_copy_end; /* copies_by_cpu: commands [0, this) are host memmoves */
};

/* Write the pending QMD to its place (before any pushbuffer naming it is submitted). */

/* pb_build.c */
void pb_qmd_flush(struct pb_builder *b);
void pb_chain_end(struct pb_builder *b);
enum hcq_status pb_patch_add(struct pb_builder *b, const struct pb_patch *p);
/* The next command goes to ch (hand over first). */
enum hcq_status pb_use(struct pb_builder *b, struct pb_chan *ch);
/* Room for one more command of need_dw dwords on ch and stream_B bytes of stream memory. */
enum hcq_status pb_room(struct pb_builder *b, struct pb_chan *ch, uint32_t need_dw, uint64_t stream_B);
enum hcq_status pb_kargs_alloc(struct pb_builder *b, uint32_t size_B, uint8_t **map_out, uint64_t *va_out);

/* pb_launch.c */
/* The device's local memory store re-emitted for local_B bytes per thread before a launch. */
enum hcq_status pb_lmem_first(struct pb_builder *b, uint32_t local_B);
/* A launch of prog on the main (compute) channel; c is the recorded LAUNCH command (graph
 * variables are patched through it), or NULL for the engine's own launches. */
enum hcq_status pb_launch(struct pb_builder *b, const struct hcq_program *prog, uint32_t grid[3],
                          const uint32_t block[3], const void *args, uint32_t args_B,
                          const struct hcq_cmd *c);
enum hcq_status pb_cmd_launch(struct pb_builder *b, const struct hcq_cmd *c);

#endif /* PB_BUILD_H */
