/* SPDX-License-Identifier: MIT */
/*
 * hcq_suite_kcheck.h - running one built-in kernel on the device under test and on cpu and
 * checking it (hcq_suite_kcheck.c): shapes, launchers, poisoned outputs with guard areas,
 * double-precision references for the conversions. The tests: hcq_suite_kernels.c.
 */
#ifndef HCQ_SUITE_KCHECK_H
#define HCQ_SUITE_KCHECK_H

#include "hcq_suite.h"

#include <stdbool.h>
#include <stdint.h>

#define KGUARD_B 256 /* poisoned bytes after every output */

struct kshape {
    uint64_t n;                    /* elements (flat kernels), bytes (copy) */
    uint64_t src_off_B, dst_off_B; /* copy */
    uint32_t rows, cols;           /* sums */
    uint32_t m, nn, k;             /* matmul: C[m, nn] = A[m, k] . B[k, nn] */
    uint32_t u32;
    float f32;
    uint64_t u64a, u64b;
    bool tiny_grid; /* launch with a small odd grid (grid-stride paths) */
};

typedef enum hcq_status (*klaunch_fn)(struct hcq_queue *q, struct hcq_program *prog, struct hcq_buf *out,
                                      struct hcq_buf *const in[3], const struct kshape *s);

struct krun {
    const char *kernel;
    klaunch_fn launch;
    struct kshape s;
    int n_in;
    const void *in[3];
    uint64_t in_B[3];
    uint64_t out_B;       /* checked output bytes; KGUARD_B more are allocated */
    const void *out_init; /* initial output contents (axpb), or NULL: poisoned */
    uint8_t poison;
};

/* ==== Comparing ==== */

enum kcmp_kind { KCMP_BYTES, KCMP_F32_EXACT, KCMP_F16_EXACT, KCMP_BF16_EXACT, KCMP_F32_TOL };
struct kref {
    enum kcmp_kind kind;
    uint64_t count;    /* elements (bytes for KCMP_BYTES) */
    const void *exact; /* expected output (exact kinds) */
    const double *ref; /* KCMP_F32_TOL: reference values (NaN, +-Inf must match) */
    const double *tol; /* KCMP_F32_TOL: allowed |out - ref| per element */
};

/* Devices of the current test (opened at its first check, closed by kdevs_close when it ends),
 * one kernel run on one device (krun_on), comparisons against a reference and across backends
 * (kcmp_*, kref_check, kcross_check; kernel_check does both), the launchers (kl_*), inputs and
 * the double-precision conversion references. */
void kdevs_close(struct th *t);
enum hcq_status kdev_get(struct th *t, const char *spec, struct hcq_device **dev);
void kdev_drop(struct hcq_device *dev);
bool kdev_cached(const struct hcq_device *dev);
bool krun_on(struct th *t, const char *spec, const struct krun *r, uint8_t *out);
bool is_nan16(uint16_t h, bool bf16);
bool kcmp_elem(enum kcmp_kind k, const void *a, const void *b, uint64_t i, double tol);
void kcmp_show(enum kcmp_kind k, const void *p, uint64_t i, char *buf, size_t buf_B);
bool kref_check(struct th *t, const char *what, const struct kref *r, const uint8_t *out);
bool kcross_check(struct th *t, const char *spec, const struct kref *r, const uint8_t *dev_out,
                  const uint8_t *cpu_out);
void kernel_check(struct th *t, const struct krun *r, const struct kref *ref);
enum hcq_status kl_fill_u32(struct hcq_queue *q, struct hcq_program *prog, struct hcq_buf *out,
                            struct hcq_buf *const in[3], const struct kshape *s);
enum hcq_status kl_fill_f32(struct hcq_queue *q, struct hcq_program *prog, struct hcq_buf *out,
                            struct hcq_buf *const in[3], const struct kshape *s);
enum hcq_status kl_copy(struct hcq_queue *q, struct hcq_program *prog, struct hcq_buf *out,
                        struct hcq_buf *const in[3], const struct kshape *s);
enum hcq_status kl_binary(struct hcq_queue *q, struct hcq_program *prog, struct hcq_buf *out,
                          struct hcq_buf *const in[3], const struct kshape *s);
enum hcq_status kl_unary(struct hcq_queue *q, struct hcq_program *prog, struct hcq_buf *out,
                         struct hcq_buf *const in[3], const struct kshape *s);
enum hcq_status kl_sum(struct hcq_queue *q, struct hcq_program *prog, struct hcq_buf *out,
                       struct hcq_buf *const in[3], const struct kshape *s);
enum hcq_status kl_matmul(struct hcq_queue *q, struct hcq_program *prog, struct hcq_buf *out,
                          struct hcq_buf *const in[3], const struct kshape *s);
enum hcq_status kl_gemm(struct hcq_queue *q, struct hcq_program *prog, struct hcq_buf *out,
                        struct hcq_buf *const in[3], const struct kshape *s);
enum hcq_status kl_axpb(struct hcq_queue *q, struct hcq_program *prog, struct hcq_buf *out,
                        struct hcq_buf *const in[3], const struct kshape *s);
enum hcq_status kl_stack(struct hcq_queue *q, struct hcq_program *prog, struct hcq_buf *out,
                         struct hcq_buf *const in[3], const struct kshape *s);
enum hcq_status kl_empty(struct hcq_queue *q, struct hcq_program *prog, struct hcq_buf *out,
                         struct hcq_buf *const in[3], const struct kshape *s);
/* f32 special values (zeros, infinities, NaNs, subnormals, extremes, +-1) mixed into inputs */
#define F32_SPECIALS 12
extern const uint32_t f32_specials[F32_SPECIALS];
float f32_of(uint32_t u);
float *rand_f32(uint64_t n, float lo, float hi, bool specials);
double f16_mag(uint16_t h);
double f16_value(uint16_t h);
uint16_t ref_f32_to_f16(float x);
double bf16_mag(uint16_t t);
uint16_t ref_f32_to_bf16(float x);

#endif /* HCQ_SUITE_KCHECK_H */
