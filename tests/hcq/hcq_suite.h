/* SPDX-License-Identifier: MIT */
/*
 * hcq_suite.h - shared helpers of the HCQ suite (build/tests/hcq_suite --dev SPEC):
 * one test body per behaviour, run on whichever device the spec names. The runtime
 * tests live in hcq_suite.c and hcq_suite_errors.c, the kernel-library tests in hcq_suite_kernels.c (their
 * machinery: hcq_suite_kcheck.c).
 */
#ifndef HCQ_SUITE_H
#define HCQ_SUITE_H

#include "harness.h"
#include "hcq.h"
#include "hcq_kernel.h"
#include "k_params.h"
#include "ops.h"

#include <stddef.h>

#define SUITE_TIMEOUT_NS HCQ_TIMEOUT_DEFAULT_NS
#define SUITE_POISON 0xAB /* output bytes before a kernel writes them (never zeros) */

/* Backend name of dev ("cpu", "cuda", ...). */
const char *suite_backend(struct hcq_device *dev);
/* True when dev runs the CPU twins on the host (the reference itself). */
bool suite_is_cpu(struct hcq_device *dev);
/* A chain of dependent k_dep_step launches with these launch flags, streamed or as a graph,
 * reading through L1 (plain) or volatile; false after a failed check (hcq_suite_graph.c). */
bool dep_chain_run(struct th *t, struct hcq_device *dev, uint32_t flags, bool graph, bool plain);
bool dep_chain_run_mixed(struct th *t, struct hcq_device *dev, uint32_t flags, bool graph, bool plain,
                         uint32_t mix);

/* True for devices whose memory is a real GPU's (cuda, rm, nvgpu): large tests run big. */
bool suite_is_gpu(struct hcq_device *dev);
/* Whether the device's backend must report hcq_mem_stats.driver_free_B: rm, cuda and the
 * emulated discrete GPUs (their RM heap); not cpu or nvgpu (Jetson's driver, real or emulated,
 * has no such count). */
bool suite_has_driver_free(const struct hcq_device_info *info);
/* Whether the backend counts its kernel-driver objects (hcq_mem_stats.driver_objects): rm and
 * the emulated discrete GPUs. */
bool suite_has_driver_objects(const struct hcq_device_info *info);

/* Fresh random bytes (th_rand). */
void suite_rand_bytes(void *dst, size_t size_B);

/* Allocate size_B bytes with flags and fill them with `data` (or, if NULL, with the
 * byte `poison`), synchronously. */
HCQ_MUST_CHECK enum hcq_status suite_buf(struct hcq_device *dev, uint64_t size_B, uint32_t flags,
                                         const void *data, uint8_t poison, struct hcq_buf **buf_out);

/* ==== Running a kernel's twin on host copies of device buffers ==== */

/* Host stand-ins for device buffers: a twin's address va in [va[i], va[i] + size_B[i])
 * lands in host[i]. Used to predict what a launch does to the device's buffers. */
#define SUITE_MIRROR_MAX 8
struct suite_mirror {
    int count;
    uint64_t va[SUITE_MIRROR_MAX];
    uint64_t size_B[SUITE_MIRROR_MAX];
    void *host[SUITE_MIRROR_MAX];
};

void suite_mirror_add(struct suite_mirror *m, uint64_t va, uint64_t size_B, void *host);
/* Run kernel `name`'s twin on the mirror; false if unknown or it faulted. */
bool suite_twin_run(const char *name, const void *params, const uint32_t grid[3], const uint32_t block[3],
                    struct suite_mirror *m);

/* ==== One kernel launch checked on the device and as its twin ==== */

/* Inputs (host arrays, written to device buffers), one output; params built from the
 * device VAs by `mk`. */
typedef void (*op_mk_fn)(void *params, const uint64_t *in_va, uint64_t out_va, const void *ctx);

struct op_case {
    const char *kernel;
    int nin;
    const void *in[4];
    uint64_t in_B[4];
    uint64_t out_B;
    uint32_t params_B;
    op_mk_fn mk;
    const void *ctx;
    uint32_t grid, block;
};

/* Run c on dev (output poisoned, a poisoned guard after it that must survive) into
 * out_dev, and the kernel's twin on host copies at the same addresses into out_twin
 * (skipped when out_twin is NULL). Fails the test (returns false) on any error. */
bool suite_op_run(struct th *t, struct hcq_device *dev, const struct op_case *c, uint8_t *out_dev,
                  uint8_t *out_twin);

/* k_stack_u32 / k_stack_big_u32's output for element i (words: K_STACK_WORDS or
 * K_STACK_BIG_WORDS): k_stack_hash.h's arithmetic, the kernels' own (hcq_suite_kernels.c). */
uint32_t suite_stack_hash(uint32_t words, uint32_t seed, uint64_t i);

/* ==== Per-test kernel-log check (hcq_suite_klog.c) ==== */

/* --klog: read the kernel log before and after every test; NVIDIA error lines (Xid, MMU
 * fault, ...) that appear during a test fail that test by name. Off when the log cannot be
 * read (says so once). */
void suite_klog_enable(void);

/* ==== Test tables ==== */

/* The second device of the pair the multi-device tests use (--dev2 SPEC; default: the
 * device under test opened a second time). */
extern const char *suite_dev2_spec;

extern const struct th_case suite_error_cases[];
extern const int suite_error_case_count;
extern const struct th_case suite_lost_cases[];
extern const int suite_lost_case_count;
extern const struct th_case suite_graph_cases[];
extern const int suite_graph_case_count;
extern const struct th_case suite_multi_cases[];
extern const int suite_multi_case_count;
extern const struct th_case suite_stress_cases[];
extern const int suite_stress_case_count;
extern const struct th_case suite_conv_cases[];
extern const int suite_conv_case_count;
extern const struct th_case suite_ops_cases[];
extern const int suite_ops_case_count;
extern const struct th_case suite_mem_cases[];
extern const int suite_mem_case_count;
extern const struct th_case suite_kernel_cases[];
extern const int suite_kernel_case_count;
extern const struct th_case suite_lmem_cases[];
extern const int suite_lmem_case_count;

#endif /* HCQ_SUITE_H */
