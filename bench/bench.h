/* SPDX-License-Identifier: MIT */
/*
 * bench.h - the `nvhcq bench` framework shared by the measurement groups (one file each:
 * bench_latency.c, bench_copy.c, bench_elementwise.c, bench_matmul.c, bench_alloc.c,
 * bench_mlp.c, bench_xdev.c, bench_attn.c) and the CLI front end tools/nvhcq_bench.c. Layer: bench (tools
 * level: uses include/hcq.h and the ops launchers; may print to stdout).
 *
 * Method (bench/README.md): every device of --devs runs the same configuration on the same
 * host inputs (fresh non-zero random numbers per configuration), after a warm-up, for many
 * repetitions; a sample is device time between two timestamp commands where the device has
 * a clock (cuda, rm, nvgpu), host time otherwise (cpu, emu: meaningless as speed). Each
 * device's result of a configuration is verified once against the CPU twin / a host
 * reference; a wrong answer is recorded as FAIL and never as a number.
 */
#ifndef BENCH_H
#define BENCH_H

#include "hcq.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BENCH_MAX_DEVS 8

struct bench_dev {
    struct hcq_device *dev;
    struct hcq_device_info info;
    bool timed_on_device; /* timestamps are a device clock (not cpu, not emu) */
    bool slow;            /* cpu / emu: give it only the small sizes */
    bool dead;            /* lost or hung during a measurement: skip the rest */
    char clocks[96];      /* "sm 1980 MHz (max 1980), mem 3201 MHz" from nvidia-smi, "" if unknown */
    double d2d_GBps;      /* measured D2D (r+w; best of copy engine and kernel at the largest
                             size) for "% of D2D", 0 until measured */
    uint64_t d2d_size_B;  /* the size d2d_GBps was measured at */
    struct hcq_queue *q;  /* compute queue of the measurements */
    struct hcq_queue *cq; /* copy queue */
    struct hcq_signal *ts_a, *ts_b; /* timestamp slots around a measured interval */
};

enum bench_verdict {
    BENCH_VERIFIED,    /* result checked against the host reference: correct */
    BENCH_FAIL,        /* checked: wrong (the numbers are not reported) */
    BENCH_NOT_CHECKED, /* nothing to check (e.g. an empty kernel) */
    BENCH_SKIPPED,     /* not run on this device (reason in note) */
    BENCH_ERROR,       /* an hcq call failed (message in note) */
};

struct bench_result {
    char group[16];
    char name[48];
    char backend[32];             /* device spec, "cuda:0" */
    char params[64];              /* "n=1M", "256x256x256", "1 MiB" */
    char unit[16];                /* "us", "GB/s", "TFLOP/s", "us/kernel" */
    bool higher_is_better;        /* throughput (true) or time (false) */
    uint32_t n;                   /* samples */
    double min, median, p99, max; /* in unit; for throughputs min is the worst sample */
    double extra;                 /* group-specific (elementwise: % of D2D), < 0 if none */
    enum bench_verdict verdict;
    char note[128];
};

struct bench_ctx {
    struct bench_dev devs[BENCH_MAX_DEVS];
    int dev_count;
    bool quick; /* small sizes and few reps (make bench, CI smoke) */
    struct bench_result *results;
    uint32_t result_count, result_cap;
    /* run description for the JSON header */
    char commit[48];   /* git commit of the build (or "unknown") */
    char date[32];     /* UTC, ISO 8601 */
    char host[192];    /* hostname, CPU model, cores */
    char command[256]; /* the command line */
};

/* ==== Groups ==== */

typedef void (*bench_group_fn)(struct bench_ctx *ctx);
void bench_latency(struct bench_ctx *ctx);
void bench_copy(struct bench_ctx *ctx);
void bench_elementwise(struct bench_ctx *ctx);
void bench_matmul(struct bench_ctx *ctx);
void bench_gemm(struct bench_ctx *ctx);  /* opt-in: matmul's tensor-core rows alone (bench_matmul.c) */
void bench_qgemm(struct bench_ctx *ctx); /* part of the matmul group (bench_qgemm.c) */
void bench_alloc(struct bench_ctx *ctx);
void bench_mlp(struct bench_ctx *ctx);
void bench_xdev(struct bench_ctx *ctx);
void bench_attn(struct bench_ctx *ctx); /* the decode attention alone (bench_attn.c) */

/* ==== Helpers (bench_util.c) ==== */

/* Append a result (copied). Also prints it as one table row right away. */
void bench_add(struct bench_ctx *ctx, const struct bench_result *r);
/* A result skeleton for (group, name, params, unit) on device d. */
struct bench_result bench_result_init(const char *group, const char *name, const struct bench_dev *d,
                                      const char *params, const char *unit, bool higher_is_better);
/* Fill n/min/median/p99/max from time samples t_ns (sorted in place). Time units (us,
 * us/kernel): the values are t_ns / 1000. Throughput units: value = work / t_ns (work in
 * the unit times ns: bytes for GB/s, flop / 1000 for TFLOP/s), and min/p99/max follow the
 * times, so p99 is always the slow tail: for a throughput, the rate 99% of reps beat. */
void bench_stats(struct bench_result *r, double *t_ns, uint32_t n, double work);
/* Record an error/skip/fail result with a note (printf-style). */
void bench_add_status(struct bench_ctx *ctx, struct bench_result *r, enum bench_verdict v, const char *fmt,
                      ...) __attribute__((format(printf, 4, 5)));

/* Records one instance of the measured operation on q (d->q or d->cq). */
typedef enum hcq_status (*bench_record_fn)(struct bench_dev *d, struct hcq_queue *q, void *arg);

/* Time `batch` back-to-back instances of rec per sample, `reps` samples after one warm-up
 * sample: device time between timestamps on q where the device has a clock, host time of
 * submit..finish otherwise. samples_ns[i] is per instance (sample / batch). */
HCQ_MUST_CHECK enum hcq_status bench_time(struct bench_dev *d, struct hcq_queue *q, bench_record_fn rec,
                                          void *arg, uint32_t batch, uint32_t reps, double *samples_ns);
/* Batch size making one sample last >= min_ns (from one timed instance), capped at cap. */
HCQ_MUST_CHECK enum hcq_status bench_batch(struct bench_dev *d, struct hcq_queue *q, bench_record_fn rec,
                                           void *arg, double min_ns, uint32_t cap, uint32_t *batch_out,
                                           double *one_ns_out);

/* Device elapsed ns between two timestamp signals. */
uint64_t bench_ts_delta(struct hcq_signal *a, struct hcq_signal *b);

/* Repetitions for a configuration: quick -> few, else enough for ~budget_s at est_ns each
 * (clamped to [lo, hi]). */
uint32_t bench_reps(const struct bench_ctx *ctx, double est_ns, double budget_s, uint32_t lo, uint32_t hi);

/* Fresh random floats in [lo, hi), never zero (xorshift seeded from the clock). */
void bench_rand_f32(float *v, size_t n, float lo, float hi);
void bench_rand_bytes(void *v, size_t n);

/* "1 MiB", "256 MiB", "1 GiB" / "1M", "10M", "100M" into buf. */
const char *bench_fmt_bytes(char *buf, size_t buf_B, uint64_t bytes);
const char *bench_fmt_count(char *buf, size_t buf_B, uint64_t n);

/* Output: the aligned table (stdout), JSON, markdown and one SVG (a chart per group). */
void bench_print_header(void);
int bench_write_json(const struct bench_ctx *ctx, const char *path);
int bench_write_md(const struct bench_ctx *ctx, const char *path);
int bench_write_svg(const struct bench_ctx *ctx, const char *path);
/* Speed of r relative to the cuda result of the same configuration (>1: faster than
 * cuda), or 0 if there is none. */
double bench_vs_cuda(const struct bench_ctx *ctx, const struct bench_result *r);

#endif /* BENCH_H */
