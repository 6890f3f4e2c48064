/* SPDX-License-Identifier: MIT */
/*
 * gpu_qmd.h - QMD (Queue Meta Data, the compute dispatch descriptor): a version-neutral
 * description, the per-version field positions and the encoder/decoder table of each
 * version. Layer: gpu (pure, no syscalls).
 *
 * ==== Model ====
 * A launch is a QMD in GPU memory (256-byte aligned, VA < 2^40) that SEND_PCAS_A points
 * at (rm.md §6.4). Its layout depends on the QMD version, not on the chip: V03_00 (Ampere,
 * Ada: 256 B), V04_00 (Hopper: 384 B), V05_00 (Blackwell: 384 B, untested on hardware).
 * A QMD of the wrong version is silently ignored by the GPU (rm.md §0 item 1), and V4/V5
 * need QMD_TYPE = GRID_CTA (§0 item 2): the encoders always write it.
 * Every field is defined once below as a "hi:lo" bit range (rm.md §6.2 notation, nvgpu.md
 * §6.4 for V3) with NVIDIA's name, and set through QMD_SET/QMD_SETI (gpu_bits.h).
 * The hardware writes back into a QMD it runs: never patch one that may be in flight.
 */
#ifndef GPU_QMD_H
#define GPU_QMD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpu_arch.h"
#include "gpu_bits.h"
#include "util_log.h"

/* ==== V03_00 (clc6c0qmd.h; Ampere GA100/GA10x/GA10B, Ada), 256 bytes: rm.md §6.2, nvgpu.md §6.4 ==== */

#define NVC6C0_QMDV03_00_SIZE_B 256u
#define NVC6C0_QMDV03_00_DEPENDENCE_COUNTER 157 : 142
#define NVC6C0_QMDV03_00_QMD_GROUP_ID 133 : 128
#define NVC6C0_QMDV03_00_SM_GLOBAL_CACHING_ENABLE 134 : 134
#define NVC6C0_QMDV03_00_IS_QUEUE 136 : 136 /* 0 = grid */
#define NVC6C0_QMDV03_00_INVALIDATE_TEXTURE_HEADER_CACHE 186 : 186
#define NVC6C0_QMDV03_00_INVALIDATE_TEXTURE_SAMPLER_CACHE 187 : 187
#define NVC6C0_QMDV03_00_INVALIDATE_TEXTURE_DATA_CACHE 188 : 188
#define NVC6C0_QMDV03_00_INVALIDATE_SHADER_DATA_CACHE 189 : 189
#define NVC6C0_QMDV03_00_INVALIDATE_INSTRUCTION_CACHE 190 : 190
#define NVC6C0_QMDV03_00_INVALIDATE_SHADER_CONSTANT_CACHE 191 : 191
#define NVC6C0_QMDV03_00_PROGRAM_PREFETCH_ADDR_LOWER_SHIFTED 287 : 256
#define NVC6C0_QMDV03_00_CWD_MEMBAR_TYPE 369 : 368
#define NVC6C0_QMDV03_00_API_VISIBLE_CALL_LIMIT 378 : 378
#define NVC6C0_QMDV03_00_SAMPLER_INDEX 382 : 382
#define NVC6C0_QMDV03_00_CTA_RASTER_WIDTH 415 : 384
#define NVC6C0_QMDV03_00_CTA_RASTER_HEIGHT 431 : 416
#define NVC6C0_QMDV03_00_CTA_RASTER_DEPTH 463 : 448
#define NVC6C0_QMDV03_00_DEPENDENT_QMD_POINTER 511 : 480
#define NVC6C0_QMDV03_00_DEPENDENT_QMD_ENABLE 512 : 512
#define NVC6C0_QMDV03_00_DEPENDENT_QMD_ACTION 515 : 513
#define NVC6C0_QMDV03_00_DEPENDENT_QMD_PREFETCH 516 : 516
#define NVC6C0_QMDV03_00_SHARED_MEMORY_SIZE 561 : 544
#define NVC6C0_QMDV03_00_MIN_SM_CONFIG_SHARED_MEM_SIZE 567 : 562
#define NVC6C0_QMDV03_00_MAX_SM_CONFIG_SHARED_MEM_SIZE 574 : 569
#define NVC6C0_QMDV03_00_QMD_VERSION 579 : 576       /* minor: 0 */
#define NVC6C0_QMDV03_00_QMD_MAJOR_VERSION 583 : 580 /* 3 */
#define NVC6C0_QMDV03_00_CTA_THREAD_DIMENSION0 607 : 592
#define NVC6C0_QMDV03_00_CTA_THREAD_DIMENSION1 623 : 608
#define NVC6C0_QMDV03_00_CTA_THREAD_DIMENSION2 639 : 624
#define NVC6C0_QMDV03_00_CONSTANT_BUFFER_VALID(i) (640 + (i)) : (640 + (i))
#define NVC6C0_QMDV03_00_REGISTER_COUNT_V 656 : 648
#define NVC6C0_QMDV03_00_TARGET_SM_CONFIG_SHARED_MEM_SIZE 662 : 657
#define NVC6C0_QMDV03_00_SHADER_LOCAL_MEMORY_LOW_SIZE 759 : 736
#define NVC6C0_QMDV03_00_BARRIER_COUNT 767 : 763
/* Release slot i = slot 0 + 128*i bits. rm.md §6.2 gives enable/address/payload of slots 0
 * and 1 (and slot 2's block at 1664); STRUCTURE_SIZE/PAYLOAD64B/MEMBAR_TYPE of slot 1 follow
 * from that stride. */
#define NVC6C0_QMDV03_00_RELEASE_ADDRESS_LOWER(i) (799 + 128 * (i)) : (768 + 128 * (i))
#define NVC6C0_QMDV03_00_RELEASE_ADDRESS_UPPER(i) (807 + 128 * (i)) : (800 + 128 * (i))
#define NVC6C0_QMDV03_00_RELEASE_MEMBAR_TYPE(i) (819 + 128 * (i)) : (819 + 128 * (i))
#define NVC6C0_QMDV03_00_RELEASE_ENABLE(i) (823 + 128 * (i)) : (823 + 128 * (i))
#define NVC6C0_QMDV03_00_RELEASE_PAYLOAD64B(i) (829 + 128 * (i)) : (829 + 128 * (i))
#define NVC6C0_QMDV03_00_RELEASE_STRUCTURE_SIZE(i) (831 + 128 * (i)) : (830 + 128 * (i))
#define NVC6C0_QMDV03_00_RELEASE_PAYLOAD_LOWER(i) (863 + 128 * (i)) : (832 + 128 * (i))
#define NVC6C0_QMDV03_00_RELEASE_PAYLOAD_UPPER(i) (895 + 128 * (i)) : (864 + 128 * (i))
#define NVC6C0_QMDV03_00_CONSTANT_BUFFER_ADDR_LOWER(i) (1055 + 64 * (i)) : (1024 + 64 * (i))
#define NVC6C0_QMDV03_00_CONSTANT_BUFFER_ADDR_UPPER(i) (1072 + 64 * (i)) : (1056 + 64 * (i))
#define NVC6C0_QMDV03_00_CONSTANT_BUFFER_INVALIDATE(i) (1074 + 64 * (i)) : (1074 + 64 * (i))
#define NVC6C0_QMDV03_00_CONSTANT_BUFFER_SIZE_SHIFTED4(i) (1087 + 64 * (i)) : (1075 + 64 * (i))
#define NVC6C0_QMDV03_00_PROGRAM_ADDRESS_LOWER 1567 : 1536
#define NVC6C0_QMDV03_00_PROGRAM_ADDRESS_UPPER 1584 : 1568
#define NVC6C0_QMDV03_00_SHADER_LOCAL_MEMORY_HIGH_SIZE 1623 : 1600
#define NVC6C0_QMDV03_00_PROGRAM_PREFETCH_ADDR_UPPER_SHIFTED 1640 : 1632
#define NVC6C0_QMDV03_00_PROGRAM_PREFETCH_SIZE 1649 : 1641
#define NVC6C0_QMDV03_00_SASS_VERSION 1663 : 1656

/* ==== V04_00 (clcbc0qmd.h; Hopper), 384 bytes: rm.md §6.2 ==== */

#define NVCBC0_QMDV04_00_SIZE_B 384u
#define NVCBC0_QMDV04_00_DEPENDENCE_COUNTER 15 : 0
#define NVCBC0_QMDV04_00_QMD_GROUP_ID 21 : 16
#define NVCBC0_QMDV04_00_QMD_TYPE 25 : 23
#define NVCBC0_QMDV04_00_QMD_TYPE_QUEUE 0
#define NVCBC0_QMDV04_00_QMD_TYPE_GRID_NULL 1
#define NVCBC0_QMDV04_00_QMD_TYPE_GRID_CTA 2
/* Release semaphore control bits: stride 16 bits per slot (rm.md §6.2). */
#define NVCBC0_QMDV04_00_RELEASE_SEMAPHORE_ENABLE(i) (320 + 16 * (i)) : (320 + 16 * (i))
#define NVCBC0_QMDV04_00_RELEASE_SEMAPHORE_STRUCTURE_SIZE(i) (322 + 16 * (i)) : (321 + 16 * (i))
#define NVCBC0_QMDV04_00_RELEASE_SEMAPHORE_MEMBAR_TYPE(i) (323 + 16 * (i)) : (323 + 16 * (i))
#define NVCBC0_QMDV04_00_RELEASE_SEMAPHORE_PAYLOAD64B(i) (332 + 16 * (i)) : (332 + 16 * (i))
/* Dependent QMD control bits: stride 5 bits per slot. */
#define NVCBC0_QMDV04_00_DEPENDENT_QMD_ENABLE(i) (368 + 5 * (i)) : (368 + 5 * (i))
#define NVCBC0_QMDV04_00_DEPENDENT_QMD_ACTION(i) (371 + 5 * (i)) : (369 + 5 * (i))
#define NVCBC0_QMDV04_00_DEPENDENT_QMD_PREFETCH(i) (372 + 5 * (i)) : (372 + 5 * (i))
/* Constant buffer control bits: stride 4 bits per bank. */
#define NVCBC0_QMDV04_00_CONSTANT_BUFFER_VALID(i) (416 + 4 * (i)) : (416 + 4 * (i))
#define NVCBC0_QMDV04_00_CONSTANT_BUFFER_PREFETCH(i) (418 + 4 * (i)) : (417 + 4 * (i))
#define NVCBC0_QMDV04_00_CONSTANT_BUFFER_INVALIDATE(i) (419 + 4 * (i)) : (419 + 4 * (i))
#define NVCBC0_QMDV04_00_DEPENDENT_QMD0_POINTER 479 : 448
#define NVCBC0_QMDV04_00_DEPENDENT_QMD1_POINTER 511 : 480
#define NVCBC0_QMDV04_00_SHADER_LOCAL_MEMORY_LOW_SIZE 535 : 512
#define NVCBC0_QMDV04_00_SASS_VERSION 543 : 536
#define NVCBC0_QMDV04_00_SHADER_LOCAL_MEMORY_HIGH_SIZE 567 : 544
#define NVCBC0_QMDV04_00_API_VISIBLE_CALL_LIMIT 568 : 568
#define NVCBC0_QMDV04_00_SAMPLER_INDEX 569 : 569
#define NVCBC0_QMDV04_00_QMD_MINOR_VERSION 579 : 576
#define NVCBC0_QMDV04_00_QMD_MAJOR_VERSION 583 : 580
#define NVCBC0_QMDV04_00_SHARED_MEMORY_SIZE 601 : 584
#define NVCBC0_QMDV04_00_INVALIDATE_TEXTURE_HEADER_CACHE 602 : 602
#define NVCBC0_QMDV04_00_INVALIDATE_TEXTURE_SAMPLER_CACHE 603 : 603
#define NVCBC0_QMDV04_00_INVALIDATE_TEXTURE_DATA_CACHE 604 : 604
#define NVCBC0_QMDV04_00_INVALIDATE_SHADER_DATA_CACHE 605 : 605
#define NVCBC0_QMDV04_00_INVALIDATE_INSTRUCTION_CACHE 606 : 606
#define NVCBC0_QMDV04_00_INVALIDATE_SHADER_CONSTANT_CACHE 607 : 607
#define NVCBC0_QMDV04_00_MIN_SM_CONFIG_SHARED_MEM_SIZE 613 : 608
#define NVCBC0_QMDV04_00_MAX_SM_CONFIG_SHARED_MEM_SIZE 619 : 614
#define NVCBC0_QMDV04_00_TARGET_SM_CONFIG_SHARED_MEM_SIZE 625 : 620
#define NVCBC0_QMDV04_00_RELEASE_SEMAPHORE0_ADDR_LOWER 671 : 640
#define NVCBC0_QMDV04_00_RELEASE_SEMAPHORE0_ADDR_UPPER 696 : 672
#define NVCBC0_QMDV04_00_RELEASE_SEMAPHORE0_PAYLOAD_LOWER 735 : 704
#define NVCBC0_QMDV04_00_RELEASE_SEMAPHORE0_PAYLOAD_UPPER 767 : 736
#define NVCBC0_QMDV04_00_RELEASE_SEMAPHORE1_ADDR_LOWER 799 : 768
#define NVCBC0_QMDV04_00_RELEASE_SEMAPHORE1_ADDR_UPPER 824 : 800
#define NVCBC0_QMDV04_00_RELEASE_SEMAPHORE1_PAYLOAD_LOWER 863 : 832
#define NVCBC0_QMDV04_00_RELEASE_SEMAPHORE1_PAYLOAD_UPPER 895 : 864
#define NVCBC0_QMDV04_00_GRID_WIDTH 1055 : 1024
#define NVCBC0_QMDV04_00_GRID_HEIGHT 1071 : 1056
#define NVCBC0_QMDV04_00_GRID_DEPTH 1103 : 1088
#define NVCBC0_QMDV04_00_CWD_MEMBAR_TYPE 1137 : 1136
/* Programmatic dependent launch (open-gpu-doc clcbc0qmd.h, QMD V04_00): a grid with
 * ENABLE_PROGRAM_PRE_EXIT + PRE_EXIT_AT_LAST_CTA_LAUNCH "pre-exits" when its last CTA has
 * launched, which schedules its dependent QMD early; ARRIVE_AT_LATCH marks its completion on
 * a latch that the dependent's griddepcontrol.wait acquires (WAIT_ON_LATCH), with the
 * shader data caches invalidated on that acquire. */
#define NVCBC0_QMDV04_00_ARRIVE_AT_LATCH_VALID 28 : 28
#define NVCBC0_QMDV04_00_WAIT_ON_LATCH_VALID 29 : 29
#define NVCBC0_QMDV04_00_PRE_EXIT_AT_LAST_CTA_LAUNCH 1150 : 1150
#define NVCBC0_QMDV04_00_ENABLE_PROGRAM_PRE_EXIT 1151 : 1151
#define NVCBC0_QMDV04_00_LATCH_ACQUIRE_INVALIDATE_SHADER_DATA_CACHE 1406 : 1406
#define NVCBC0_QMDV04_00_LATCH_ACQUIRE_INVALIDATE_TEXTURE_DATA_CACHE 1407 : 1407
#define NVCBC0_QMDV04_00_ARRIVE_AT_LATCH_ID 1503 : 1472
#define NVCBC0_QMDV04_00_WAIT_ON_LATCH_ID 1535 : 1504
#define NVCBC0_QMDV04_00_CTA_THREAD_DIMENSION0 1167 : 1152
#define NVCBC0_QMDV04_00_CTA_THREAD_DIMENSION1 1183 : 1168
#define NVCBC0_QMDV04_00_CTA_THREAD_DIMENSION2 1199 : 1184
#define NVCBC0_QMDV04_00_REGISTER_COUNT 1208 : 1200
#define NVCBC0_QMDV04_00_BARRIER_COUNT 1215 : 1211
#define NVCBC0_QMDV04_00_PROGRAM_ADDRESS_LOWER 1247 : 1216
#define NVCBC0_QMDV04_00_PROGRAM_ADDRESS_UPPER 1272 : 1248
#define NVCBC0_QMDV04_00_PROGRAM_PREFETCH_ADDR_LOWER_SHIFTED 1375 : 1344
#define NVCBC0_QMDV04_00_PROGRAM_PREFETCH_ADDR_UPPER_SHIFTED 1392 : 1376
#define NVCBC0_QMDV04_00_PROGRAM_PREFETCH_SIZE 1401 : 1393
/* V04_00 fields nvhcq does not write (all 0 in its QMDs), listed so gpu_qmd_dump names them
 * in QMDs written by others (the CUDA driver's, read on H100 on 2026-11-25). Positions: open-gpu-doc
 * clcbc0qmd.h. */
#define NVCBC0_QMDV04_00_ADD_TO_HEAD_OF_QMD_GROUP_LINKED_LIST 22 : 22
#define NVCBC0_QMDV04_00_REQUIRE_SCHEDULING_PCAS 30 : 30
#define NVCBC0_QMDV04_00_TPC_DISABLE_MASK_VALID 31 : 31
#define NVCBC0_QMDV04_00_SELF_COPY_ON_COMPLETION 378 : 378
#define NVCBC0_QMDV04_00_DEMOTE_L2_EVICT_LAST 379 : 379
#define NVCBC0_QMDV04_00_DISABLE_AUTO_INVALIDATE 380 : 380
#define NVCBC0_QMDV04_00_CORRELATION_ID_INTERNAL 381 : 381
#define NVCBC0_QMDV04_00_CWD_MEMBAR_TASK_CHASING_ENABLE 382 : 382
#define NVCBC0_QMDV04_00_CORRELATION_ID 415 : 384
#define NVCBC0_QMDV04_00_CONSTANT_BUFFER_PREFETCH_PRE_MAX_SIZE_SHIFTED8 575 : 570
#define NVCBC0_QMDV04_00_SHARED_ALLOCATION_ENABLE 626 : 626
#define NVCBC0_QMDV04_00_CWD_REFERENCE_COUNT_DELTA_MINUS_ONE 1127 : 1120
#define NVCBC0_QMDV04_00_CWD_REFERENCE_COUNT_ID 1133 : 1128
#define NVCBC0_QMDV04_00_CWD_REFERENCE_COUNT_INCR_ENABLE 1134 : 1134
#define NVCBC0_QMDV04_00_CWD_REFERENCE_COUNT_DECR_ENABLE 1135 : 1135
#define NVCBC0_QMDV04_00_SEQUENTIALLY_RUN_CTAS 1138 : 1138
#define NVCBC0_QMDV04_00_CTA_LAUNCH_QUEUE 1139 : 1139
#define NVCBC0_QMDV04_00_FREE_CTA_SLOTS_EMPTY_SM 1147 : 1140
#define NVCBC0_QMDV04_00_SYNC_DOMAIN_ID 1149 : 1148
#define NVCBC0_QMDV04_00_OCCUPANCY_THRESHOLD_WARP 1287 : 1280
#define NVCBC0_QMDV04_00_OCCUPANCY_MAX_WARP 1295 : 1288
#define NVCBC0_QMDV04_00_OCCUPANCY_THRESHOLD_REGISTER 1303 : 1296
#define NVCBC0_QMDV04_00_OCCUPANCY_MAX_REGISTER 1311 : 1304
#define NVCBC0_QMDV04_00_OCCUPANCY_THRESHOLD_SHARED_MEM 1319 : 1312
#define NVCBC0_QMDV04_00_OCCUPANCY_MAX_SHARED_MEM 1327 : 1320
#define NVCBC0_QMDV04_00_PROGRAM_PREFETCH_TYPE 1403 : 1402
#define NVCBC0_QMDV04_00_GRID_WIDTH_RESUME 1439 : 1408
#define NVCBC0_QMDV04_00_GRID_HEIGHT_RESUME 1455 : 1440
#define NVCBC0_QMDV04_00_GRID_DEPTH_RESUME 1471 : 1456
#define NVCBC0_QMDV04_00_DEBUG_ID_LOWER 2399 : 2368
#define NVCBC0_QMDV04_00_DEBUG_ID_UPPER 2431 : 2400
#define NVCBC0_QMDV04_00_CONSTANT_BUFFER_ADDR_LOWER_SHIFTED6(i) (1567 + 64 * (i)) : (1536 + 64 * (i))
#define NVCBC0_QMDV04_00_CONSTANT_BUFFER_ADDR_UPPER_SHIFTED6(i) (1586 + 64 * (i)) : (1568 + 64 * (i))
#define NVCBC0_QMDV04_00_CONSTANT_BUFFER_SIZE_SHIFTED4(i) (1599 + 64 * (i)) : (1587 + 64 * (i))

/* ==== V05_00 (clcdc0qmd.h = clcec0qmd.h; Blackwell), 384 bytes: rm.md §6.2 ====
 * NOT TESTED ON HARDWARE: positions as documented from the headers; release slot 1's
 * address/payload positions are the ones rm.md lists (equal to V4's). */

#define NVCDC0_QMDV05_00_SIZE_B 384u
#define NVCDC0_QMDV05_00_RELEASE_SEMAPHORE_ENABLE(i) (288 + 16 * (i)) : (288 + 16 * (i))
#define NVCDC0_QMDV05_00_RELEASE_SEMAPHORE_STRUCTURE_SIZE(i) (290 + 16 * (i)) : (289 + 16 * (i))
#define NVCDC0_QMDV05_00_RELEASE_SEMAPHORE_MEMBAR_TYPE(i) (291 + 16 * (i)) : (291 + 16 * (i))
#define NVCDC0_QMDV05_00_RELEASE_SEMAPHORE_PAYLOAD64B(i) (300 + 16 * (i)) : (300 + 16 * (i))
#define NVCDC0_QMDV05_00_DEPENDENT_QMD_ENABLE(i) (336 + 5 * (i)) : (336 + 5 * (i))
#define NVCDC0_QMDV05_00_DEPENDENT_QMD_ACTION(i) (339 + 5 * (i)) : (337 + 5 * (i))
#define NVCDC0_QMDV05_00_DEPENDENT_QMD_PREFETCH(i) (340 + 5 * (i)) : (340 + 5 * (i))
#define NVCDC0_QMDV05_00_DEPENDENT_QMD0_POINTER 415 : 384
#define NVCDC0_QMDV05_00_DEPENDENCE_COUNTER 143 : 128
#define NVCDC0_QMDV05_00_QMD_GROUP_ID 149 : 144
#define NVCDC0_QMDV05_00_QMD_TYPE 153 : 151
#define NVCDC0_QMDV05_00_QMD_TYPE_GRID_CTA 2
#define NVCDC0_QMDV05_00_SASS_VERSION 455 : 448
#define NVCDC0_QMDV05_00_API_VISIBLE_CALL_LIMIT 456 : 456
#define NVCDC0_QMDV05_00_SAMPLER_INDEX 457 : 457
#define NVCDC0_QMDV05_00_QMD_MINOR_VERSION 467 : 464
#define NVCDC0_QMDV05_00_QMD_MAJOR_VERSION 471 : 468
#define NVCDC0_QMDV05_00_INVALIDATE_TEXTURE_HEADER_CACHE 472 : 472
#define NVCDC0_QMDV05_00_INVALIDATE_TEXTURE_SAMPLER_CACHE 473 : 473
#define NVCDC0_QMDV05_00_INVALIDATE_TEXTURE_DATA_CACHE 474 : 474
#define NVCDC0_QMDV05_00_INVALIDATE_SHADER_DATA_CACHE 475 : 475
#define NVCDC0_QMDV05_00_INVALIDATE_INSTRUCTION_CACHE 476 : 476
#define NVCDC0_QMDV05_00_INVALIDATE_SHADER_CONSTANT_CACHE 477 : 477
#define NVCDC0_QMDV05_00_RELEASE_SEMAPHORE0_ADDR_LOWER 511 : 480
#define NVCDC0_QMDV05_00_RELEASE_SEMAPHORE0_ADDR_UPPER 536 : 512
#define NVCDC0_QMDV05_00_RELEASE_SEMAPHORE0_PAYLOAD_LOWER 575 : 544
#define NVCDC0_QMDV05_00_RELEASE_SEMAPHORE0_PAYLOAD_UPPER 607 : 576
#define NVCDC0_QMDV05_00_CWD_MEMBAR_TYPE 625 : 624
#define NVCDC0_QMDV05_00_RELEASE_SEMAPHORE1_ADDR_LOWER 799 : 768
#define NVCDC0_QMDV05_00_RELEASE_SEMAPHORE1_ADDR_UPPER 824 : 800
#define NVCDC0_QMDV05_00_RELEASE_SEMAPHORE1_PAYLOAD_LOWER 863 : 832
#define NVCDC0_QMDV05_00_RELEASE_SEMAPHORE1_PAYLOAD_UPPER 895 : 864
#define NVCDC0_QMDV05_00_PROGRAM_ADDRESS_LOWER_SHIFTED4 1055 : 1024
#define NVCDC0_QMDV05_00_PROGRAM_ADDRESS_UPPER_SHIFTED4 1076 : 1056
#define NVCDC0_QMDV05_00_PROGRAM_PREFETCH_SIZE 1085 : 1077
#define NVCDC0_QMDV05_00_CTA_THREAD_DIMENSION0 1103 : 1088
#define NVCDC0_QMDV05_00_CTA_THREAD_DIMENSION1 1119 : 1104
#define NVCDC0_QMDV05_00_CTA_THREAD_DIMENSION2 1127 : 1120
#define NVCDC0_QMDV05_00_REGISTER_COUNT 1136 : 1128
#define NVCDC0_QMDV05_00_BARRIER_COUNT 1141 : 1137
#define NVCDC0_QMDV05_00_SHARED_MEMORY_SIZE_SHIFTED7 1162 : 1152
#define NVCDC0_QMDV05_00_MIN_SM_CONFIG_SHARED_MEM_SIZE 1168 : 1163
#define NVCDC0_QMDV05_00_MAX_SM_CONFIG_SHARED_MEM_SIZE 1174 : 1169
#define NVCDC0_QMDV05_00_TARGET_SM_CONFIG_SHARED_MEM_SIZE 1180 : 1175
#define NVCDC0_QMDV05_00_SHADER_LOCAL_MEMORY_LOW_SIZE_SHIFTED4 1199 : 1184
#define NVCDC0_QMDV05_00_SHADER_LOCAL_MEMORY_HIGH_SIZE_SHIFTED4 1215 : 1200
#define NVCDC0_QMDV05_00_GRID_WIDTH 1279 : 1248
#define NVCDC0_QMDV05_00_GRID_HEIGHT 1295 : 1280
#define NVCDC0_QMDV05_00_GRID_DEPTH 1327 : 1312
#define NVCDC0_QMDV05_00_CONSTANT_BUFFER_ADDR_LOWER_SHIFTED6(i) (1375 + 64 * (i)) : (1344 + 64 * (i))
#define NVCDC0_QMDV05_00_CONSTANT_BUFFER_ADDR_UPPER_SHIFTED6(i) (1394 + 64 * (i)) : (1376 + 64 * (i))
#define NVCDC0_QMDV05_00_CONSTANT_BUFFER_SIZE_SHIFTED4(i) (1407 + 64 * (i)) : (1395 + 64 * (i))
#define NVCDC0_QMDV05_00_CONSTANT_BUFFER_VALID(i) (1856 + 4 * (i)) : (1856 + 4 * (i))
#define NVCDC0_QMDV05_00_CONSTANT_BUFFER_PREFETCH(i) (1858 + 4 * (i)) : (1857 + 4 * (i))
#define NVCDC0_QMDV05_00_CONSTANT_BUFFER_INVALIDATE(i) (1859 + 4 * (i)) : (1859 + 4 * (i))
#define NVCDC0_QMDV05_00_PROGRAM_PREFETCH_ADDR_LOWER_SHIFTED 1919 : 1888
#define NVCDC0_QMDV05_00_PROGRAM_PREFETCH_ADDR_UPPER_SHIFTED 1936 : 1920

/* ==== Values shared by all versions (rm.md §6.2) ==== */

#define GPU_QMD_CWD_MEMBAR_TYPE_NONE 0
#define GPU_QMD_CWD_MEMBAR_TYPE_L1_SYSMEMBAR 1
#define GPU_QMD_CWD_MEMBAR_TYPE_L1_MEMBAR 3
#define GPU_QMD_RELEASE_STRUCTURE_SIZE_FOUR_WORDS 0 /* payload + timestamp, 16 bytes */
#define GPU_QMD_RELEASE_STRUCTURE_SIZE_ONE_WORD 1
#define GPU_QMD_RELEASE_STRUCTURE_SIZE_TWO_WORDS 2
#define GPU_QMD_RELEASE_MEMBAR_TYPE_FE_SYSMEMBAR 1
#define GPU_QMD_DEPENDENT_QMD_ACTION_INCREMENT_PUT 0
#define GPU_QMD_DEPENDENT_QMD_ACTION_QMD_SCHEDULE 1
#define GPU_QMD_DEPENDENT_QMD_ACTION_INVALIDATE_COPY_SCHEDULE 3
#define GPU_QMD_DEPENDENT_QMD_ACTION_DECREMENT_DEPENDENCE 4
#define GPU_QMD_TYPE_GRID_CTA 2 /* V4/V5 QMD_TYPE; 0 = QUEUE hangs (rm.md §0 item 2) */

#define GPU_QMD_MAX_SIZE_B 384u
#define GPU_QMD_MAX_DW (GPU_QMD_MAX_SIZE_B / 4)
#define GPU_QMD_ALIGN_B 256u
#define GPU_QMD_VA_LIMIT (1ull << 40) /* SEND_PCAS_A / dependent pointer hold VA >> 8 in 32 bits */
#define GPU_QMD_CBUF_COUNT 8u
#define GPU_QMD_RELEASE_COUNT 2u /* slots this runtime uses (hardware has 3) */

/* ==== Version-neutral description ==== */

enum gpu_qmd_invalidate {
    GPU_QMD_INVALIDATE_TEXTURE_HEADER = 1 << 0,
    GPU_QMD_INVALIDATE_TEXTURE_SAMPLER = 1 << 1,
    GPU_QMD_INVALIDATE_TEXTURE_DATA = 1 << 2,
    GPU_QMD_INVALIDATE_SHADER_DATA = 1 << 3,
    GPU_QMD_INVALIDATE_INSTRUCTION = 1 << 4,
    GPU_QMD_INVALIDATE_SHADER_CONSTANT = 1 << 5,
    /* what tinygrad sets (rm.md §6.3) */
    GPU_QMD_INVALIDATE_DEFAULT = 0xF,
    GPU_QMD_INVALIDATE_ALL = 0x3F,
};

struct gpu_qmd_cbuf {
    uint64_t va;     /* V3: any (< 2^49); V4/V5: 64-byte aligned, < 2^57 */
    uint32_t size_B; /* multiple of 16, < 2^17 */
    bool valid;
    bool invalidate; /* invalidate the constant cache for this bank at launch */
    /* V4/V5 CONSTANT_BUFFER_PREFETCH (2 bits; 0: none). The CUDA driver writes 1 on its bank 5
     * (its QMDs read on H100, 2026-11-25); V3 has no such field and
     * refuses a nonzero value. */
    uint8_t prefetch;
};

struct gpu_qmd_release {
    bool enable;
    uint64_t va; /* < 2^40 on V3, < 2^57 on V4/V5; 8-byte aligned (16 with four words) */
    uint64_t payload;
    bool payload64;          /* write all 64 bits (else only the low 32: rm.md §0 item 6) */
    uint32_t structure_size; /* GPU_QMD_RELEASE_STRUCTURE_SIZE_* */
    uint32_t membar_type;    /* GPU_QMD_RELEASE_MEMBAR_TYPE_* */
};

struct gpu_qmd_dependent {
    bool enable;
    uint64_t qmd_va; /* next QMD: 256-byte aligned, < 2^40 */
    uint32_t action; /* GPU_QMD_DEPENDENT_QMD_ACTION_* */
    bool prefetch;
};

struct gpu_qmd_desc {
    /* Decode only: the version found (0x0300...) and the QMD type found (V3: IS_QUEUE;
     * V4/V5: QMD_TYPE). Encoders ignore both and always write a grid (GRID_CTA). */
    uint32_t version;
    uint32_t qmd_type;

    uint64_t program_va;     /* V3 < 2^49; V4 < 2^57; V5: 16-byte aligned */
    uint64_t prefetch_va;    /* 256-byte aligned, < 2^49; 0 + size 0: no prefetch */
    uint32_t prefetch_size;  /* 256-byte units, <= 0x1FF: gpu_qmd_prefetch_size() */
    uint32_t register_count; /* <= 511 (EIATTR_REGCOUNT) */
    uint32_t barrier_count;  /* <= 31 */
    uint32_t shared_mem_B;   /* incl. the 1 KiB system reserve; V5: multiple of 128 */
    uint32_t sm_config_min;  /* carve-out (KiB / 4 + 1), rm.md §6.7: gpu_qmd_sm_config() */
    uint32_t sm_config_target;
    uint32_t sm_config_max;
    uint32_t local_mem_low_B;  /* per thread; V5: multiple of 16 */
    uint32_t local_mem_high_B; /* per thread (CUDA stack, top-down); V5: multiple of 16 */
    uint32_t grid[3];          /* CTAs: x < 2^32, y/z < 2^16 */
    uint32_t block[3];         /* threads: x/y < 2^16, z < 2^16 (V5: < 256) */
    struct gpu_qmd_cbuf cbuf[GPU_QMD_CBUF_COUNT];
    struct gpu_qmd_release release[GPU_QMD_RELEASE_COUNT];
    struct gpu_qmd_dependent dependent; /* dependent QMD slot 0 */
    uint32_t dependence_counter;
    uint32_t sass_version;           /* 0x86, 0x87, 0x90, 0xA0 (rm.md §6.6) */
    uint32_t invalidate;             /* enum gpu_qmd_invalidate */
    uint32_t cwd_membar_type;        /* GPU_QMD_CWD_MEMBAR_TYPE_*; 1 makes results visible to the CPU */
    uint32_t qmd_group_id;           /* tinygrad 0x3f */
    uint32_t api_visible_call_limit; /* 1 = NO_CHECK */
    uint32_t sampler_index;          /* 1 = VIA_HEADER_INDEX */
    bool sm_global_caching;          /* V3 only (SM_GLOBAL_CACHING_ENABLE) */
    uint32_t free_cta_slots;         /* V4 only: FREE_CTA_SLOTS_EMPTY_SM (set per launch by pb_build.c) */
};

/* Zero d, then the values every launch uses (tinygrad's, verified: rm.md §0, §6.3):
 * group 0x3f, call limit NO_CHECK, sampler index 1, barrier count 1, CWD membar
 * L1_SYSMEMBAR, texture/shader-data invalidates, SM global caching (V3). */
void gpu_qmd_desc_init(struct gpu_qmd_desc *d);

/* Prefetch size field for code_B bytes of code: min(code_B >> 8, 0x1FF). */
uint32_t gpu_qmd_prefetch_size(uint64_t code_B);
/* SM_CONFIG value of a carve-out: KiB / 4 + 1 (rm.md §6.7). */
uint32_t gpu_qmd_sm_config(uint32_t carveout_KiB);
/* Carve-out for shared_B bytes per CTA: the smallest of 32, 64, 100 KiB (tinygrad), then
 * 132..228 in 32 KiB steps up to max_KiB. 0 if it does not fit in max_KiB. */
uint32_t gpu_qmd_carveout_KiB(uint32_t shared_B, uint32_t max_KiB);
/* The shared-memory carve-out every launch's TARGET reaches at least (gpu_cubin_qmd_desc,
 * capped by the SM's largest): one carve-out for all grids lets consecutive grids share SMs. */
#define GPU_QMD_UNIFORM_CARVEOUT_KIB 100u

/* One named field of a version, for dump and tests (array fields expanded per index). */
struct gpu_qmd_field {
    const char *name; /* "GRID_WIDTH", "CONSTANT_BUFFER_VALID(0)" */
    uint16_t hi, lo;
};

/* One QMD version (STYLE 2.6: the version, not the chip, decides the encoding). */
struct gpu_qmd_ops {
    const char *name;         /* "V04_00" */
    const char *prefix;       /* "NVCBC0_QMDV04_00" */
    uint32_t version;         /* major << 8 | minor: 0x0300, 0x0400, 0x0500 */
    uint32_t size_B;          /* 256 or 384 */
    uint32_t release_va_bits; /* 40 (V3) or 57 */
    bool tested_on_hw;
    /* Write d into qmd_dw[size_B/4] (all other bits 0). HCQ_ERR_INVALID (with a message
     * naming the field) when a value does not fit or is misaligned; qmd_dw is then undefined. */
    enum hcq_status (*encode)(const struct gpu_qmd_desc *d, uint32_t *qmd_dw);
    /* Read every field encode writes back into out. HCQ_ERR_FORMAT (quiet) when the
     * version fields are not this version's. */
    enum hcq_status (*decode)(const uint32_t *qmd_dw, struct gpu_qmd_desc *out);
    /* Write the dependent-QMD fields (slot 0) / release slot `slot` from a description
     * (the patchers below build it, so the chaining and release policy lives once). */
    void (*write_dependent)(uint32_t *qmd_dw, const struct gpu_qmd_dependent *dep);
    void (*write_release)(uint32_t *qmd_dw, uint32_t slot, const struct gpu_qmd_release *r);
    /* Write constant buffer idx's address only (the rest of the QMD as it is). */
    void (*write_cbuf_va)(uint32_t *qmd_dw, uint32_t idx, uint64_t va);
    /* Same as gpu_qmd_dump() for this version. */
    size_t (*dump)(const uint32_t *qmd_dw, char *buf, size_t size);
    const struct gpu_qmd_field *fields;
    uint32_t field_count;
};

extern const struct gpu_qmd_ops gpu_qmd_v03_00_ops;
extern const struct gpu_qmd_ops gpu_qmd_v04_00_ops;
extern const struct gpu_qmd_ops gpu_qmd_v05_00_ops; /* untested on hardware */

/* Ops of a version (0x0300 ...), or NULL. */
const struct gpu_qmd_ops *gpu_qmd_ops_by_version(uint32_t version);

/* Wrappers (STYLE 2.4: callers never use ->ops-> directly). */
static inline HCQ_MUST_CHECK enum hcq_status
gpu_qmd_encode(const struct gpu_qmd_ops *ops, const struct gpu_qmd_desc *d, uint32_t *qmd_dw)
{
    return ops->encode(d, qmd_dw);
}
static inline HCQ_MUST_CHECK enum hcq_status
gpu_qmd_decode(const struct gpu_qmd_ops *ops, const uint32_t *qmd_dw, struct gpu_qmd_desc *out)
{
    return ops->decode(qmd_dw, out);
}
/* Patchers (chaining, graph replay), gpu_qmd.c. Chain: dependent QMD 0 = next_qmd_va,
 * action QMD_SCHEDULE, prefetch, enable; next_qmd_va 0 clears the chain (asserts alignment
 * and < 2^40). Release slot (0 or 1) on completion: 64-bit payload, four words (payload +
 * timestamp), FE_SYSMEMBAR (asserts an 8-byte-aligned va). */
void gpu_qmd_set_dependent(const struct gpu_qmd_ops *ops, uint32_t *qmd_dw, uint64_t next_qmd_va);
void gpu_qmd_set_release(const struct gpu_qmd_ops *ops, uint32_t *qmd_dw, uint32_t slot, uint64_t va,
                         uint64_t payload);
/* The same release with another membar type (GPU_QMD_RELEASE_MEMBAR_TYPE_*; 0: none). */
void gpu_qmd_set_release_membar(const struct gpu_qmd_ops *ops, uint32_t *qmd_dw, uint32_t slot, uint64_t va,
                                uint64_t payload, uint32_t membar_type);
void gpu_qmd_clear_release(const struct gpu_qmd_ops *ops, uint32_t *qmd_dw, uint32_t slot);
/* Constant buffer idx (< GPU_QMD_CBUF_COUNT) at va, nothing else changed: the same bits
 * encode writes for that address (asserts a 256-byte-aligned va below GPU_QMD_VA_LIMIT, what
 * every version holds). */
void gpu_qmd_set_cbuf_va(const struct gpu_qmd_ops *ops, uint32_t *qmd_dw, uint32_t idx, uint64_t va);

/* Text dump: "NAME value" lines (hex), one per non-zero field in bit order, preceded by a
 * "# QMD <name>" line. Returns the length it needed (snprintf-style; output truncated to
 * size, always NUL-terminated when size > 0). */
size_t gpu_qmd_dump(const struct gpu_qmd_ops *ops, const uint32_t *qmd_dw, char *buf, size_t size);

#endif /* GPU_QMD_H */
