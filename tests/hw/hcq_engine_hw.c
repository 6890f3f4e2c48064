/* SPDX-License-Identifier: MIT */
/*
 * hcq_engine_hw.c - the pushbuffer engine on a real (or emulated) device, through the public
 * API only: chained launches, submissions wrapping both rings, copies on a compute queue
 * between kernels, a graph with argument/grid/signal variables, timestamps; then latency
 * figures (launch + completion, back-to-back kernels, kernels in a replayed graph).
 * Not built by `make` (GPU-only): on the device machine
 *   cc -O2 -std=c11 -D_GNU_SOURCE -Iinclude -Isrc/kernels tests/hw/hcq_engine_hw.c \
 *      build/libnvhcq.a -ldl -lm -lpthread -o build/hcq_engine_hw && build/hcq_engine_hw rm:0
 * Prints "hcq_engine_hw: N passed, N failed".
 */
#include "hcq.h"
#include "k_params.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;

#define EXPECT(cond, ...)                                                                                    \
    do {                                                                                                     \
        if (!(cond)) {                                                                                       \
            printf("  FAIL %s:%d: ", __func__, __LINE__);                                                    \
            printf(__VA_ARGS__);                                                                             \
            printf(" [%s]\n", hcq_last_error());                                                             \
            failed++;                                                                                        \
            goto done;                                                                                       \
        }                                                                                                    \
    } while (0)
#define OK(call) EXPECT((call) == HCQ_OK, "%s", #call)

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t
rnd(void)
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 0x2545F4914F6CDD1Dull;
}

#define N 4099u
static const uint32_t g1[3] = {1, 1, 1}, b1[3] = {1, 1, 1};
static const uint32_t g16[3] = {16, 1, 1}, b256[3] = {256, 1, 1};

static void
ref_axpb(uint64_t *x, uint64_t n, uint64_t mul, uint64_t add)
{
    for (uint64_t i = 0; i < n; i++)
        x[i] = x[i] * mul + add;
}

static int
compare(const uint64_t *got, const uint64_t *ref, uint64_t n, const char *what)
{
    for (uint64_t i = 0; i < n; i++)
        if (got[i] != ref[i]) {
            printf("  %s: x[%llu] = 0x%016llx (expected 0x%016llx)\n", what, (unsigned long long)i,
                   (unsigned long long)got[i], (unsigned long long)ref[i]);
            return 1;
        }
    return 0;
}

static void
test_chain_and_wrap(struct hcq_device *dev, struct hcq_program *axpb)
{
    struct hcq_queue *q = NULL;
    struct hcq_buf *x = NULL;
    uint64_t *ref = malloc(N * 8), *got = malloc(N * 8);
    for (uint32_t i = 0; i < N; i++)
        ref[i] = rnd();
    OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    OK(hcq_buf_alloc(dev, N * 8, HCQ_MEM_DEVICE, &x));
    OK(hcq_buf_write(x, 0, ref, N * 8));
    /* 200 back-to-back launches in one submission (chained QMDs) */
    for (int i = 0; i < 200; i++) {
        struct k_axpb_u64_params p = {hcq_buf_va(x), N, rnd() | 1, rnd()};
        OK(hcq_queue_launch(q, axpb, g16, b256, &p, sizeof p));
        ref_axpb(ref, N, p.mul, p.add);
    }
    OK(hcq_queue_finish(q, HCQ_TIMEOUT_DEFAULT_NS));
    OK(hcq_buf_read(x, 0, got, N * 8));
    EXPECT(!compare(got, ref, N, "chain of 200"), "chain of 200");
    /* 2500 submissions of 1-3 launches: GPFIFO (1024) and stream ring wrap */
    for (int s = 0; s < 2500; s++) {
        for (int i = 0; i <= s % 3; i++) {
            struct k_axpb_u64_params p = {hcq_buf_va(x), N, rnd() | 1, rnd()};
            OK(hcq_queue_launch(q, axpb, g16, b256, &p, sizeof p));
            ref_axpb(ref, N, p.mul, p.add);
        }
        OK(hcq_queue_submit(q));
    }
    OK(hcq_queue_finish(q, HCQ_TIMEOUT_DEFAULT_NS));
    OK(hcq_buf_read(x, 0, got, N * 8));
    EXPECT(!compare(got, ref, N, "2500 submissions"), "2500 submissions");
    passed++;
done:
    hcq_buf_free(x);
    hcq_queue_destroy(q);
    free(ref);
    free(got);
}

static void
test_copies_between_kernels(struct hcq_device *dev, struct hcq_program *axpb)
{
    struct hcq_queue *q = NULL;
    struct hcq_buf *a = NULL, *b = NULL, *h = NULL;
    uint64_t *ref = malloc(N * 8);
    OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    OK(hcq_buf_alloc(dev, N * 8, HCQ_MEM_DEVICE, &a));
    OK(hcq_buf_alloc(dev, N * 8, HCQ_MEM_DEVICE, &b));
    OK(hcq_buf_alloc(dev, N * 8, HCQ_MEM_HOST, &h));
    uint64_t *hm = hcq_buf_map(h);
    for (uint32_t i = 0; i < N; i++)
        hm[i] = ref[i] = rnd();
    for (int r = 0; r < 4; r++) {
        struct k_axpb_u64_params p = {hcq_buf_va(b), N, rnd() | 1, rnd()};
        OK(hcq_queue_copy(q, a, 0, h, 0, N * 8));
        OK(hcq_queue_copy(q, b, 0, a, 0, N * 8));
        OK(hcq_queue_launch(q, axpb, g16, b256, &p, sizeof p));
        OK(hcq_queue_copy(q, h, 0, b, 0, N * 8));
        ref_axpb(ref, N, p.mul, p.add);
    }
    OK(hcq_queue_finish(q, HCQ_TIMEOUT_DEFAULT_NS));
    EXPECT(!compare(hm, ref, N, "copies"), "copy -> kernel -> copy");
    passed++;
done:
    hcq_buf_free(a);
    hcq_buf_free(b);
    hcq_buf_free(h);
    hcq_queue_destroy(q);
    free(ref);
}

static void
test_graph(struct hcq_device *dev, struct hcq_program *axpb)
{
    struct hcq_queue *q = NULL;
    struct hcq_buf *h = NULL;
    struct hcq_signal *go = NULL, *fin = NULL, *ts = NULL;
    struct hcq_graph *g = NULL;
    uint64_t *ref = malloc(N * 8);
    OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    OK(hcq_buf_alloc(dev, N * 8, HCQ_MEM_HOST, &h));
    OK(hcq_signal_create(dev, 0, &go));
    OK(hcq_signal_create(dev, 0xFFFFFFF0ull, &fin));
    OK(hcq_signal_create(dev, 0, &ts));
    uint64_t *hm = hcq_buf_map(h);
    for (uint32_t i = 0; i < N; i++)
        hm[i] = ref[i] = rnd();
    uint32_t v_step, v_add, v_grid;
    OK(hcq_graph_begin(q));
    OK(hcq_graph_var(q, &v_step));
    OK(hcq_graph_var(q, &v_add));
    OK(hcq_graph_var(q, &v_grid));
    OK(hcq_queue_wait_var(q, go, v_step, 0));
    struct k_axpb_u64_params p = {hcq_buf_va(h), N, 3, 0};
    struct hcq_arg_patch patch = {v_add, 24, 8};
    struct hcq_launch l = {.prog = axpb,
                           .grid = {0, 1, 1},
                           .block = {128, 1, 1},
                           .args = &p,
                           .args_B = sizeof p,
                           .grid_var = {v_grid, HCQ_VAR_NONE, HCQ_VAR_NONE},
                           .patches = &patch,
                           .patch_count = 1};
    OK(hcq_queue_launch_ex(q, &l));
    OK(hcq_queue_launch_ex(q, &l));
    OK(hcq_queue_timestamp(q, ts));
    OK(hcq_queue_signal_var(q, fin, v_step, 0xFFFFFFF0ull));
    OK(hcq_graph_end(q, &g));
    for (uint64_t i = 1; i <= 100; i++) {
        uint64_t add = rnd();
        OK(hcq_graph_set(g, v_step, i));
        OK(hcq_graph_set(g, v_add, add));
        OK(hcq_graph_set(g, v_grid, 1 + i % 9));
        OK(hcq_graph_replay(g));
        ref_axpb(ref, N, 3, add);
        ref_axpb(ref, N, 3, add);
        hcq_signal_set(go, i);
    }
    OK(hcq_signal_wait(fin, 100 + 0xFFFFFFF0ull, HCQ_TIMEOUT_DEFAULT_NS));
    OK(hcq_queue_finish(q, HCQ_TIMEOUT_DEFAULT_NS));
    EXPECT(!compare(hm, ref, N, "graph"), "graph of 100 replays");
    EXPECT(hcq_signal_value(fin) == 100 + 0xFFFFFFF0ull, "fin %llx",
           (unsigned long long)hcq_signal_value(fin));
    EXPECT(hcq_signal_timestamp_ns(ts) != 0 && hcq_signal_value(ts) == 0, "timestamp %llu value %llu",
           (unsigned long long)hcq_signal_timestamp_ns(ts), (unsigned long long)hcq_signal_value(ts));
    passed++;
done:
    hcq_graph_destroy(g);
    hcq_signal_destroy(go);
    hcq_signal_destroy(fin);
    hcq_signal_destroy(ts);
    hcq_buf_free(h);
    hcq_queue_destroy(q);
    free(ref);
}

static int
cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void
bench(struct hcq_device *dev, struct hcq_program *empty)
{
    struct hcq_queue *q = NULL;
    struct hcq_graph *g = NULL;
    struct k_empty_params p = {0};
    enum { REPS = 300, B2B = 2000, GK = 100, GR = 50 };
    uint64_t t[REPS];
    OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    for (int i = 0; i < REPS; i++) {
        uint64_t t0 = hcq_time_ns();
        OK(hcq_queue_launch(q, empty, g1, b1, &p, sizeof p));
        OK(hcq_queue_finish(q, HCQ_TIMEOUT_DEFAULT_NS));
        t[i] = hcq_time_ns() - t0;
    }
    qsort(t, REPS, sizeof t[0], cmp_u64);
    printf("  launch + completion (k_empty 1x1): median %.2f us, p99 %.2f us\n", t[REPS / 2] / 1e3,
           t[REPS * 99 / 100] / 1e3);
    for (int r = 0; r < 3; r++) {
        uint64_t t0 = hcq_time_ns();
        for (int i = 0; i < B2B; i++)
            OK(hcq_queue_launch(q, empty, g1, b1, &p, sizeof p));
        OK(hcq_queue_finish(q, HCQ_TIMEOUT_DEFAULT_NS));
        printf("  back-to-back: %d k_empty in one submission: %.3f us per kernel\n", B2B,
               (hcq_time_ns() - t0) / 1e3 / B2B);
    }
    OK(hcq_graph_begin(q));
    for (int i = 0; i < GK; i++)
        OK(hcq_queue_launch(q, empty, g1, b1, &p, sizeof p));
    OK(hcq_graph_end(q, &g));
    for (int r = 0; r < 3; r++) {
        uint64_t t0 = hcq_time_ns();
        for (int i = 0; i < GR; i++)
            OK(hcq_graph_replay(g));
        OK(hcq_queue_finish(q, HCQ_TIMEOUT_DEFAULT_NS));
        printf("  graph of %d k_empty replayed %d times: %.3f us per kernel\n", GK, GR,
               (hcq_time_ns() - t0) / 1e3 / (GK * GR));
    }
    passed++;
done:
    hcq_graph_destroy(g);
    hcq_queue_destroy(q);
}

int
main(int argc, char **argv)
{
    const char *spec = argc > 1 ? argv[1] : "rm:0";
    struct hcq_device *dev = NULL;
    struct hcq_program *axpb = NULL, *empty = NULL;
    struct hcq_device_info info;
    printf("== hcq_engine_hw on %s\n", spec);
    OK(hcq_device_open(spec, &dev));
    OK(hcq_device_info(dev, &info));
    printf("  %s, %s, %u SMs, driver %s\n", info.name, info.arch, info.sm_count, info.driver);
    OK(hcq_program_load(dev, "k_axpb_u64", &axpb));
    OK(hcq_program_load(dev, "k_empty", &empty));
    test_chain_and_wrap(dev, axpb);
    test_copies_between_kernels(dev, axpb);
    test_graph(dev, axpb);
    bench(dev, empty);
done:
    if (dev && hcq_device_check(dev) != HCQ_OK) {
        char report[2048];
        hcq_device_fault_report(dev, report, sizeof report);
        printf("  device lost: %s\n", report);
        failed++;
    }
    hcq_program_destroy(axpb);
    hcq_program_destroy(empty);
    hcq_device_close(dev);
    printf("hcq_engine_hw: %d passed, %d failed\n", passed, failed);
    return failed != 0;
}
