/* SPDX-License-Identifier: MIT */
/*
 * hcq_suite_stress.c - the HCQ suite's opt-in stress tests (`make test-stress`, or
 * `hcq_suite --dev SPEC --slow stress_`): minutes of load, results checked at the end.
 *   stress_rapid_kernel_launches_10k   10,000 dependent launches, timeline-signal completion
 *   stress_signal_chain_pipeline       compute -> signal -> wait -> compute on two queues, 1000x
 *   stress_sustained_matmul            matmul for HCQ_STRESS_S seconds (default 60 on GPUs,
 *                                      5 elsewhere): every result bit-identical to the first,
 *                                      the first checked against double precision
 *   stress_memory_churn                10,000 random-size alloc/free (up to 64 live): open fds,
 *                                      /proc/self/maps lines, the RM objects the device holds
 *                                      (hcq_mem_stats.driver_objects) and the driver's free device memory
 *                                      (hcq_mem_stats.driver_free_B; rm, cuda, emu) back to where
 *                                      they started
 *   stress_memory_pressure_progressive 1 MiB, 10 MiB, 100 MiB, 1 GiB, 4 GiB, 8 GiB, then
 *                                      doubling, all kept, until the device refuses: a clean
 *                                      HCQ_ERR_NOMEM, then everything freed and usable (GPUs;
 *                                      capped at 64 MiB and no OOM expected elsewhere)
 *   stress_mixed_compute_copy          two compute queues and a copy queue for half of
 *                                      HCQ_STRESS_S: upload -> add -> download, chained by signals
 * and, not opt-in (it takes well under a second everywhere):
 *   concurrent_tensor_ops              the field's training-step-like burst: 24 steps of a
 *                                      two-layer forward pass, loss and in-place weight update
 *                                      over two compute queues and a copy queue, no host sync
 *                                      until the end, every loss checked against double
 * The kernel log is checked per test when the suite runs with --klog (make test-gpu).
 */
#include "hcq_suite.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double
stress_seconds(struct hcq_device *dev, double gpu_default, double other_default)
{
    const char *e = getenv("HCQ_STRESS_S");
    double s = e ? atof(e) : 0;
    if (s <= 0)
        s = suite_is_gpu(dev) ? gpu_default : other_default;
    return s;
}

TEST(stress_rapid_kernel_launches_10k)
{
    struct hcq_device *dev = NULL;
    struct hcq_queue *q = NULL;
    struct hcq_program *axpb = NULL;
    struct hcq_buf *x = NULL;
    struct hcq_signal *s = NULL;
    uint64_t got[64], x0[64];
    CHECK_OK(hcq_device_open(t->dev_spec, &dev));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    CHECK_OK(hcq_program_load(dev, "k_axpb_u64", &axpb));
    CHECK_OK(hcq_signal_create(dev, 0, &s));
    suite_rand_bytes(x0, sizeof x0);
    CHECK_OK(suite_buf(dev, sizeof x0, HCQ_MEM_DEVICE, x0, 0, &x));
    uint64_t t0 = hcq_time_ns();
    for (uint64_t batch = 1; batch <= 100; batch++) {
        for (int i = 0; i < 100; i++) /* each depends on the one before: x += 1 */
            CHECK_OK(ops_launch_axpb_u64(q, axpb, x, 64, 1, 1));
        CHECK_OK(hcq_queue_signal(q, s, batch));
        CHECK_OK(hcq_queue_submit(q));
    }
    CHECK_OK(hcq_signal_wait(s, 100, 6 * SUITE_TIMEOUT_NS));
    printf("    10,000 launches in %.3f s\n", (hcq_time_ns() - t0) / 1e9);
    CHECK_OK(hcq_buf_read(x, 0, got, sizeof got));
    for (int i = 0; i < 64; i++)
        CHECKF(got[i] == x0[i] + 10000, "x[%d] = x0 + %lld (expected + 10000)", i,
               (long long)(got[i] - x0[i]));
done:
    hcq_buf_free(x);
    hcq_signal_destroy(s);
    hcq_program_destroy(axpb);
    hcq_queue_destroy(q);
    hcq_device_close(dev);
}

TEST(stress_signal_chain_pipeline)
{
    struct hcq_device *dev = NULL;
    struct hcq_queue *q1 = NULL, *q2 = NULL;
    struct hcq_program *axpb = NULL;
    struct hcq_buf *a = NULL, *b = NULL;
    struct hcq_signal *s1 = NULL, *s2 = NULL;
    uint64_t ga[32], gb[32];
    CHECK_OK(hcq_device_open(t->dev_spec, &dev));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q1));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q2));
    CHECK_OK(hcq_program_load(dev, "k_axpb_u64", &axpb));
    CHECK_OK(hcq_signal_create(dev, 0, &s1));
    CHECK_OK(hcq_signal_create(dev, 0, &s2));
    memset(ga, 0, sizeof ga);
    CHECK_OK(suite_buf(dev, sizeof ga, HCQ_MEM_DEVICE, ga, 0, &a));
    CHECK_OK(suite_buf(dev, sizeof ga, HCQ_MEM_DEVICE, ga, 0, &b));
    for (uint64_t i = 1; i <= 1000; i++) {
        /* q1: a = a*3 + 1 after q2's previous step; q2: b = b + a-dependent step after q1 */
        if (i > 1)
            CHECK_OK(hcq_queue_wait(q1, s2, i - 1));
        CHECK_OK(ops_launch_axpb_u64(q1, axpb, a, 32, 3, 1));
        CHECK_OK(hcq_queue_signal(q1, s1, i));
        CHECK_OK(hcq_queue_wait(q2, s1, i));
        CHECK_OK(ops_launch_axpb_u64(q2, axpb, b, 32, 5, i));
        CHECK_OK(hcq_queue_signal(q2, s2, i));
        CHECK_OK(hcq_queue_submit(q1));
        CHECK_OK(hcq_queue_submit(q2));
    }
    CHECK_OK(hcq_signal_wait(s2, 1000, 6 * SUITE_TIMEOUT_NS));
    uint64_t wa = 0, wb = 0;
    for (uint64_t i = 1; i <= 1000; i++) {
        wa = wa * 3 + 1;
        wb = wb * 5 + i;
    }
    CHECK_OK(hcq_buf_read(a, 0, ga, sizeof ga));
    CHECK_OK(hcq_buf_read(b, 0, gb, sizeof gb));
    for (int i = 0; i < 32; i++)
        CHECKF(ga[i] == wa && gb[i] == wb, "a[%d] = 0x%llx (expected 0x%llx), b = 0x%llx (expected 0x%llx)",
               i, (unsigned long long)ga[i], (unsigned long long)wa, (unsigned long long)gb[i],
               (unsigned long long)wb);
done:
    hcq_buf_free(b);
    hcq_buf_free(a);
    hcq_signal_destroy(s2);
    hcq_signal_destroy(s1);
    hcq_program_destroy(axpb);
    hcq_queue_destroy(q2);
    hcq_queue_destroy(q1);
    hcq_device_close(dev);
}

TEST(stress_sustained_matmul)
{
    struct hcq_device *dev = NULL;
    struct hcq_queue *q = NULL;
    struct hcq_program *mm = NULL;
    struct hcq_buf *a = NULL, *b = NULL, *c[2] = {0};
    float *ha = NULL, *hb = NULL, *first = NULL, *got = NULL;
    CHECK_OK(hcq_device_open(t->dev_spec, &dev));
    const uint32_t n = suite_is_gpu(dev) ? 1024 : 128;
    const double secs = stress_seconds(dev, 60, 5);
    CHECK(ha = malloc((size_t)n * n * 4));
    CHECK(hb = malloc((size_t)n * n * 4));
    CHECK(first = malloc((size_t)n * n * 4));
    CHECK(got = malloc((size_t)n * n * 4));
    for (uint64_t i = 0; i < (uint64_t)n * n; i++) {
        ha[i] = th_randf(-1.0f, 1.0f);
        hb[i] = th_randf(-1.0f, 1.0f);
    }
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    CHECK_OK(hcq_program_load(dev, "k_matmul_f32", &mm));
    CHECK_OK(suite_buf(dev, (uint64_t)n * n * 4, HCQ_MEM_DEVICE, ha, 0, &a));
    CHECK_OK(suite_buf(dev, (uint64_t)n * n * 4, HCQ_MEM_DEVICE, hb, 0, &b));
    for (int i = 0; i < 2; i++)
        CHECK_OK(suite_buf(dev, (uint64_t)n * n * 4, HCQ_MEM_DEVICE, NULL, SUITE_POISON, &c[i]));
    CHECK_OK(ops_launch_matmul(q, mm, c[0], a, b, n, n, n));
    CHECK_OK(hcq_queue_finish(q, SUITE_TIMEOUT_NS));
    CHECK_OK(hcq_buf_read(c[0], 0, first, (uint64_t)n * n * 4));
    for (int k = 0; k < 64; k++) { /* sampled against double precision (docs/kernels.md bound) */
        uint32_t i = (uint32_t)(th_rand() % n), j = (uint32_t)(th_rand() % n);
        double ref = 0, mag = 0;
        for (uint32_t l = 0; l < n; l++) {
            ref += (double)ha[(uint64_t)i * n + l] * hb[(uint64_t)l * n + j];
            mag += fabs((double)ha[(uint64_t)i * n + l] * hb[(uint64_t)l * n + j]);
        }
        CHECKF(fabs(first[(uint64_t)i * n + j] - ref) <= (n + 2) * ldexp(1.0, -24) * mag,
               "c[%u][%u] = %.9g (double %.9g)", i, j, (double)first[(uint64_t)i * n + j], ref);
    }
    uint64_t t0 = hcq_time_ns(), rounds = 0;
    while ((hcq_time_ns() - t0) / 1e9 < secs) {
        for (int r = 0; r < 20; r++)
            CHECK_OK(ops_launch_matmul(q, mm, c[1], a, b, n, n, n));
        CHECK_OK(hcq_queue_finish(q, 6 * SUITE_TIMEOUT_NS));
        rounds += 20;
        if (rounds % 200 == 0) { /* no drift: the same inputs give the same bits */
            CHECK_OK(hcq_buf_read(c[1], 0, got, (uint64_t)n * n * 4));
            CHECKF(!memcmp(got, first, (size_t)n * n * 4), "after %llu matmuls the result changed",
                   (unsigned long long)rounds);
        }
    }
    CHECK_OK(hcq_buf_read(c[1], 0, got, (uint64_t)n * n * 4));
    CHECKF(!memcmp(got, first, (size_t)n * n * 4), "after %llu matmuls the result changed",
           (unsigned long long)rounds);
    CHECK_OK(hcq_device_check(dev));
    printf("    %llu matmuls of %u^3 in %.1f s\n", (unsigned long long)rounds, n, (hcq_time_ns() - t0) / 1e9);
done:
    for (int i = 0; i < 2; i++)
        hcq_buf_free(c[i]);
    hcq_buf_free(b);
    hcq_buf_free(a);
    hcq_program_destroy(mm);
    hcq_queue_destroy(q);
    hcq_device_close(dev);
    free(got), free(first), free(hb), free(ha);
}

/* Entries of /proc/self/fd and lines of /proc/self/maps (-1 where unreadable). */
static void
proc_counts(int *fds, int *maps)
{
    *fds = -1;
    *maps = -1;
    DIR *d = opendir("/proc/self/fd");
    if (d) {
        int n = 0;
        while (readdir(d))
            n++;
        closedir(d);
        *fds = n;
    }
    FILE *f = fopen("/proc/self/maps", "r");
    if (f) {
        int n = 0, ch;
        while ((ch = fgetc(f)) != EOF)
            n += ch == '\n';
        fclose(f);
        *maps = n;
    }
}

TEST(stress_memory_churn)
{
    enum { LIVE = 64 };
    struct hcq_device *dev = NULL;
    struct hcq_buf *live[LIVE] = {0};
    int fd0, maps0, fd1, maps1;
    struct hcq_mem_stats ms0, ms1;
    struct hcq_device_info di;
    CHECK_OK(hcq_device_open(t->dev_spec, &dev));
    CHECK_OK(hcq_device_info(dev, &di));
    const uint64_t max_B = suite_is_gpu(dev) ? 16ull << 20 : 1ull << 20;
    /* warm-up round: pools, staging and page-table pages the runtime keeps until close */
    for (int i = 0; i < 200; i++) {
        int k = (int)(th_rand() % LIVE);
        hcq_buf_free(live[k]);
        live[k] = NULL;
        CHECK_OK(hcq_buf_alloc(dev, 4096 + th_rand() % max_B, th_rand() % 4 ? HCQ_MEM_DEVICE : HCQ_MEM_HOST,
                               &live[k]));
        uint32_t v = (uint32_t)i, back = 0; /* staging (queue, buffer, signal) is created on first use */
        CHECK_OK(hcq_buf_write(live[k], 0, &v, 4));
        CHECK_OK(hcq_buf_read(live[k], 0, &back, 4));
    }
    for (int k = 0; k < LIVE; k++) {
        hcq_buf_free(live[k]);
        live[k] = NULL;
    }
    /* the caching pool keeps freed blocks mapped until trimmed (docs/engine.md §3.1): count with
     * it empty, before and after */
    (void)hcq_device_mem_trim(dev);
    proc_counts(&fd0, &maps0);
    CHECK_OK(hcq_device_mem_stats(dev, &ms0));
    if (suite_has_driver_free(&di))
        CHECKF(ms0.driver_free_B > 0, "%s: no driver free-memory figure", di.backend);
    if (suite_has_driver_objects(&di))
        CHECKF(ms0.driver_objects > 0, "%s: no driver object count", di.backend);
    for (int i = 0; i < 10000; i++) {
        int k = (int)(th_rand() % LIVE);
        hcq_buf_free(live[k]);
        live[k] = NULL;
        CHECK_OK(hcq_buf_alloc(dev, 1 + th_rand() % max_B, th_rand() % 4 ? HCQ_MEM_DEVICE : HCQ_MEM_HOST,
                               &live[k]));
        if (i % 1000 == 0) { /* the memory is really there */
            uint32_t v = (uint32_t)i, back = 0;
            CHECK_OK(hcq_buf_write(live[k], 0, &v, 1));
            CHECK_OK(hcq_buf_read(live[k], 0, &back, 1));
            CHECK((back & 0xFF) == (v & 0xFF));
        }
    }
    for (int k = 0; k < LIVE; k++) {
        hcq_buf_free(live[k]);
        live[k] = NULL;
    }
    (void)hcq_device_mem_trim(dev);
    proc_counts(&fd1, &maps1);
    CHECKF(fd1 == fd0 && maps1 == maps0,
           "after 10,000 alloc/free: %d fds (started at %d), %d maps lines (%d)", fd1, fd0, maps1, maps0);
    CHECK_OK(hcq_device_mem_stats(dev, &ms1));
    /* every RM object the 10,000 allocations made was freed (rm, emulated discrete GPUs) */
    CHECKF(ms1.driver_objects == ms0.driver_objects,
           "after 10,000 alloc/free: %llu driver objects (started at %llu)",
           (unsigned long long)ms1.driver_objects, (unsigned long long)ms0.driver_objects);
    if (ms0.driver_free_B) {
        /* the driver's count: exact on the emulator; on a GPU RM may keep page-table or
         * allocator pages for the process (64 MiB of slack, and the delta printed) */
        const int64_t d = (int64_t)ms1.driver_free_B - (int64_t)ms0.driver_free_B;
        const int64_t tol = di.emulated ? 0 : 64ll << 20;
        printf("    driver free memory %.1f MiB before, %+.1f MiB after 10,000 alloc/free\n",
               ms0.driver_free_B / 1048576.0, d / 1048576.0);
        CHECKF(d >= -tol && d <= tol, "driver free memory moved by %lld B (%.1f MiB allowed)", (long long)d,
               tol / 1048576.0);
    }
done:
    for (int k = 0; k < LIVE; k++)
        hcq_buf_free(live[k]);
    hcq_device_close(dev);
}

TEST(stress_memory_pressure_progressive)
{
    enum { MAXB = 64 };
    struct hcq_device *dev = NULL;
    struct hcq_queue *q = NULL;
    struct hcq_buf *held[MAXB] = {0}, *again = NULL, *h = NULL;
    int count = 0;
    uint64_t total = 0, largest = 0, size = 1 << 20;
    enum hcq_status st = HCQ_OK;
    CHECK_OK(hcq_device_open(t->dev_spec, &dev));
    const bool gpu = suite_is_gpu(dev);
    const uint64_t steps[] = {1ull << 20, 10ull << 20, 100ull << 20, 1ull << 30, 4ull << 30, 8ull << 30};
    for (int i = 0; count < MAXB; i++) {
        size = i < 6 ? steps[i] : size * 2;
        if (!gpu && total + size > (64ull << 20))
            break; /* host-backed devices: no OOM hunt on a shared CI machine */
        st = hcq_buf_alloc(dev, size, HCQ_MEM_DEVICE, &held[count]);
        if (st != HCQ_OK)
            break;
        total += size;
        largest = size;
        count++;
    }
    printf("    held %d buffers, %.1f GiB in all, largest %.1f GiB; next (%.1f GiB): %s\n", count,
           total / 1073741824.0, largest / 1073741824.0, size / 1073741824.0,
           st == HCQ_OK ? "not tried" : hcq_status_str(st));
    if (gpu)
        CHECKF(st == HCQ_ERR_NOMEM,
               "the allocation past the device's memory returned %s (expected HCQ_ERR_NOMEM): %s",
               hcq_status_str(st), hcq_last_error());
    CHECK_OK(hcq_device_check(dev));
    for (int k = 0; k < count; k++) {
        hcq_buf_free(held[k]);
        held[k] = NULL;
    }
    /* everything came back: the largest size again, and a copy through it works */
    const uint64_t again_B = largest ? largest : (1 << 20);
    CHECK_OK(hcq_buf_alloc(dev, again_B, HCQ_MEM_DEVICE, &again));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COPY, &q));
    CHECK_OK(hcq_buf_alloc(dev, 1 << 20, HCQ_MEM_HOST, &h));
    suite_rand_bytes(hcq_buf_map(h), 1 << 20);
    CHECK_OK(hcq_queue_copy(q, again, again_B - (1 << 20), h, 0, 1 << 20));
    CHECK_OK(hcq_queue_finish(q, SUITE_TIMEOUT_NS));
    uint8_t *back = malloc(1 << 20);
    CHECK(back);
    st = hcq_buf_read(again, again_B - (1 << 20), back, 1 << 20);
    bool same = st == HCQ_OK && !memcmp(back, hcq_buf_map(h), 1 << 20);
    free(back);
    CHECK_OK(st);
    CHECK(same);
done:
    hcq_buf_free(h);
    hcq_buf_free(again);
    for (int k = 0; k < count; k++)
        hcq_buf_free(held[k]);
    hcq_queue_destroy(q);
    hcq_device_close(dev);
}

TEST(stress_mixed_compute_copy)
{
    enum { NQ = 2 };
    struct hcq_device *dev = NULL;
    struct hcq_queue *q[NQ] = {0}, *cq = NULL;
    struct hcq_program *add = NULL;
    struct hcq_buf *hin = NULL, *hout[NQ] = {0}, *a[NQ] = {0}, *c[NQ] = {0};
    struct hcq_signal *up = NULL, *done_s[NQ] = {0}, *down = NULL;
    CHECK_OK(hcq_device_open(t->dev_spec, &dev));
    const uint64_t n = suite_is_gpu(dev) ? 1 << 20 : 1 << 14;
    const double secs = stress_seconds(dev, 60, 5) / 2;
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COPY, &cq));
    CHECK_OK(hcq_program_load(dev, "k_add_f32", &add));
    CHECK_OK(hcq_signal_create(dev, 0, &up));
    CHECK_OK(hcq_signal_create(dev, 0, &down));
    CHECK_OK(hcq_buf_alloc(dev, n * 4, HCQ_MEM_HOST, &hin));
    float *in = hcq_buf_map(hin);
    for (uint64_t i = 0; i < n; i++)
        in[i] = th_randf(-100.0f, 100.0f);
    for (int k = 0; k < NQ; k++) {
        CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q[k]));
        CHECK_OK(hcq_signal_create(dev, 0, &done_s[k]));
        CHECK_OK(hcq_buf_alloc(dev, n * 4, HCQ_MEM_HOST, &hout[k]));
        CHECK_OK(suite_buf(dev, n * 4, HCQ_MEM_DEVICE, NULL, SUITE_POISON, &a[k]));
        CHECK_OK(suite_buf(dev, n * 4, HCQ_MEM_DEVICE, NULL, SUITE_POISON, &c[k]));
    }
    uint64_t t0 = hcq_time_ns(), round = 0;
    while ((hcq_time_ns() - t0) / 1e9 < secs) {
        round++;
        int k = (int)(round % NQ);
        /* upload into a[k] once round-2's download of c[k] is done (down >= round - 2) */
        if (round > 2)
            CHECK_OK(hcq_queue_wait(cq, down, round - 2));
        CHECK_OK(hcq_queue_copy(cq, a[k], 0, hin, 0, n * 4));
        CHECK_OK(hcq_queue_signal(cq, up, round));
        CHECK_OK(hcq_queue_wait(q[k], up, round));
        CHECK_OK(ops_launch_binary_f32(q[k], add, c[k], a[k], a[k], n));
        CHECK_OK(hcq_queue_signal(q[k], done_s[k], round));
        CHECK_OK(hcq_queue_wait(cq, done_s[k], round));
        CHECK_OK(hcq_queue_copy(cq, hout[k], 0, c[k], 0, n * 4));
        CHECK_OK(hcq_queue_signal(cq, down, round));
        CHECK_OK(hcq_queue_submit(cq));
        CHECK_OK(hcq_queue_submit(q[k]));
        if (round % 64 == 0) {
            CHECK_OK(hcq_signal_wait(down, round, SUITE_TIMEOUT_NS));
            const float *o = hcq_buf_map(hout[k]);
            for (uint64_t i = 0; i < n; i++)
                CHECKF(o[i] == in[i] + in[i], "round %llu: out[%llu] = %g (expected %g)",
                       (unsigned long long)round, (unsigned long long)i, (double)o[i],
                       (double)(in[i] + in[i]));
        }
    }
    CHECK_OK(hcq_signal_wait(down, round, SUITE_TIMEOUT_NS));
    printf("    %llu rounds of upload/add/download (%llu KiB each) in %.1f s\n", (unsigned long long)round,
           (unsigned long long)(n * 4 >> 10), (hcq_time_ns() - t0) / 1e9);
done:
    if (cq)
        (void)!hcq_queue_finish(cq, SUITE_TIMEOUT_NS);
    for (int k = 0; k < NQ; k++) {
        if (q[k])
            (void)!hcq_queue_finish(q[k], SUITE_TIMEOUT_NS);
        hcq_buf_free(c[k]);
        hcq_buf_free(a[k]);
        hcq_buf_free(hout[k]);
        hcq_signal_destroy(done_s[k]);
        hcq_queue_destroy(q[k]);
    }
    hcq_buf_free(hin);
    hcq_signal_destroy(down);
    hcq_signal_destroy(up);
    hcq_program_destroy(add);
    hcq_queue_destroy(cq);
    hcq_device_close(dev);
}

/* One step's reference in double: o = relu(X . W1) . W2, loss[m] = sum_n o[m, n]; then
 * W1 += D1 (the weights the next step uses). */
static void
burst_ref_step(const float *X, double *W1, const float *W2, const float *D1, uint32_t M, uint32_t K,
               uint32_t H, uint32_t N, double *loss, double *mag)
{
    for (uint32_t m = 0; m < M; m++) {
        double l = 0, lm = 0;
        for (uint32_t n = 0; n < N; n++) {
            for (uint32_t h = 0; h < H; h++) {
                double a = 0, am = 0;
                for (uint32_t k = 0; k < K; k++) {
                    a += (double)X[m * K + k] * W1[k * H + h];
                    am += fabs((double)X[m * K + k] * W1[k * H + h]);
                }
                a = a > 0 ? a : 0;
                l += a * W2[h * N + n];
                lm += am * fabs((double)W2[h * N + n]);
            }
        }
        loss[m] = l;
        mag[m] = lm;
    }
    for (uint32_t i = 0; i < K * H; i++)
        W1[i] += D1[i];
}

/* The field's concurrent_tensor_ops: a training-step-like burst of dependent tensor ops spread
 * over queues, with no host synchronisation until the end. Step s: queue A computes
 * a[s % 2] = relu(X . W1) and then W1 += D1 in place (the update must not overtake the
 * matmul that reads W1: same-queue order); queue B waits for A's step, computes o = a . W2
 * and loss = row sums of o; the copy queue waits for B and downloads loss into row s of a
 * host buffer. A reuses a[s % 2] only after B's step s - 2 (a cross-queue write-after-read
 * wait). Every loss row against double precision, bound 1e-5 * sum |terms| (f32 sums of
 * <= 64 x 64 products). */
TEST(concurrent_tensor_ops)
{
    enum { M = 48, K = 64, H = 64, N = 32, STEPS = 24 };
    struct hcq_device *dev = NULL;
    struct hcq_queue *qa = NULL, *qb = NULL, *qc = NULL;
    struct hcq_program *mm = NULL, *relu = NULL, *add = NULL, *sum = NULL;
    struct hcq_buf *bx = NULL, *bw1 = NULL, *bw2 = NULL, *bd1 = NULL, *bh = NULL, *ba[2] = {0}, *bo = NULL,
                   *bl[2] = {0}, *hl = NULL;
    struct hcq_signal *sa = NULL, *sb = NULL, *sc = NULL;
    float *X = malloc(4ull * M * K), *W1f = malloc(4ull * K * H), *W2 = malloc(4ull * H * N),
          *D1 = malloc(4ull * K * H);
    double *W1 = malloc(8ull * K * H), *loss = malloc(8ull * M), *mag = malloc(8ull * M);
    CHECK(X && W1f && W2 && D1 && W1 && loss && mag);
    for (uint32_t i = 0; i < M * K; i++)
        X[i] = th_randf(-1.0f, 1.0f);
    for (uint32_t i = 0; i < K * H; i++)
        W1f[i] = th_randf(-0.5f, 0.5f), W1[i] = W1f[i], D1[i] = th_randf(-1.0f, 1.0f) / 64.0f;
    for (uint32_t i = 0; i < H * N; i++)
        W2[i] = th_randf(-0.5f, 0.5f);
    CHECK_OK(hcq_device_open(t->dev_spec, &dev));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &qa));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &qb));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COPY, &qc));
    CHECK_OK(hcq_program_load(dev, "k_matmul_f32", &mm));
    CHECK_OK(hcq_program_load(dev, "k_relu_f32", &relu));
    CHECK_OK(hcq_program_load(dev, "k_add_f32", &add));
    CHECK_OK(hcq_program_load(dev, "k_sum_rows_f32", &sum));
    CHECK_OK(suite_buf(dev, 4ull * M * K, HCQ_MEM_DEVICE, X, 0, &bx));
    CHECK_OK(suite_buf(dev, 4ull * K * H, HCQ_MEM_DEVICE, W1f, 0, &bw1));
    CHECK_OK(suite_buf(dev, 4ull * H * N, HCQ_MEM_DEVICE, W2, 0, &bw2));
    CHECK_OK(suite_buf(dev, 4ull * K * H, HCQ_MEM_DEVICE, D1, 0, &bd1));
    CHECK_OK(suite_buf(dev, 4ull * M * H, HCQ_MEM_DEVICE, NULL, SUITE_POISON, &bh));
    CHECK_OK(suite_buf(dev, 4ull * M * N, HCQ_MEM_DEVICE, NULL, SUITE_POISON, &bo));
    for (int i = 0; i < 2; i++) {
        CHECK_OK(suite_buf(dev, 4ull * M * H, HCQ_MEM_DEVICE, NULL, SUITE_POISON, &ba[i]));
        CHECK_OK(suite_buf(dev, 4ull * M, HCQ_MEM_DEVICE, NULL, SUITE_POISON, &bl[i]));
    }
    CHECK_OK(hcq_buf_alloc(dev, 4ull * M * STEPS, HCQ_MEM_HOST, &hl));
    float *got = hcq_buf_map(hl);
    CHECK(got);
    memset(got, SUITE_POISON, 4ull * M * STEPS);
    CHECK_OK(hcq_signal_create(dev, 0, &sa));
    CHECK_OK(hcq_signal_create(dev, 0, &sb));
    CHECK_OK(hcq_signal_create(dev, 0, &sc));
    for (uint32_t s = 1; s <= STEPS; s++) {
        struct hcq_buf *a = ba[s % 2], *l = bl[s % 2];
        if (s > 2)
            CHECK_OK(hcq_queue_wait(qa, sb, s - 2)); /* B's step s - 2 read a[s % 2] */
        CHECK_OK(ops_launch_matmul(qa, mm, bh, bx, bw1, M, H, K));
        CHECK_OK(ops_launch_unary(qa, relu, a, bh, (uint64_t)M * H));
        CHECK_OK(ops_launch_binary_f32(qa, add, bw1, bw1, bd1, (uint64_t)K * H));
        CHECK_OK(hcq_queue_signal(qa, sa, s));
        CHECK_OK(hcq_queue_wait(qb, sa, s));
        if (s > 2)
            CHECK_OK(hcq_queue_wait(qb, sc, s - 2)); /* the copy of step s - 2 read l */
        CHECK_OK(ops_launch_matmul(qb, mm, bo, a, bw2, M, N, H));
        CHECK_OK(ops_launch_sum_f32(qb, sum, l, bo, M, N, 1));
        CHECK_OK(hcq_queue_signal(qb, sb, s));
        CHECK_OK(hcq_queue_wait(qc, sb, s));
        CHECK_OK(hcq_queue_copy(qc, hl, 4ull * M * (s - 1), l, 0, 4ull * M));
        CHECK_OK(hcq_queue_signal(qc, sc, s));
        CHECK_OK(hcq_queue_submit(qa));
        CHECK_OK(hcq_queue_submit(qb));
        CHECK_OK(hcq_queue_submit(qc));
    }
    CHECK_OK(hcq_signal_wait(sc, STEPS, SUITE_TIMEOUT_NS));
    for (uint32_t s = 1; s <= STEPS; s++) {
        burst_ref_step(X, W1, W2, D1, M, K, H, N, loss, mag);
        for (uint32_t m = 0; m < M; m++) {
            const double g = got[(s - 1) * M + m], err = fabs(g - loss[m]);
            CHECKF(err <= 1e-5 * mag[m] + 1e-6, "step %u row %u: loss %.9g (expected %.9g, bound %.3g)", s, m,
                   g, loss[m], 1e-5 * mag[m] + 1e-6);
        }
    }
done:
    if (qa)
        (void)!hcq_queue_finish(qa, SUITE_TIMEOUT_NS);
    if (qb)
        (void)!hcq_queue_finish(qb, SUITE_TIMEOUT_NS);
    if (qc)
        (void)!hcq_queue_finish(qc, SUITE_TIMEOUT_NS);
    hcq_buf_free(hl);
    for (int i = 0; i < 2; i++) {
        hcq_buf_free(ba[i]);
        hcq_buf_free(bl[i]);
    }
    hcq_buf_free(bo);
    hcq_buf_free(bh);
    hcq_buf_free(bd1);
    hcq_buf_free(bw2);
    hcq_buf_free(bw1);
    hcq_buf_free(bx);
    hcq_signal_destroy(sc);
    hcq_signal_destroy(sb);
    hcq_signal_destroy(sa);
    hcq_program_destroy(sum);
    hcq_program_destroy(add);
    hcq_program_destroy(relu);
    hcq_program_destroy(mm);
    hcq_queue_destroy(qc);
    hcq_queue_destroy(qb);
    hcq_queue_destroy(qa);
    hcq_device_close(dev);
    free(X), free(W1f), free(W2), free(D1), free(W1), free(loss), free(mag);
}

const struct th_case suite_stress_cases[] = {
    TH_CASE_SLOW(stress_rapid_kernel_launches_10k),
    TH_CASE_SLOW(stress_signal_chain_pipeline),
    TH_CASE_SLOW(stress_sustained_matmul),
    TH_CASE_SLOW(stress_memory_churn),
    TH_CASE_SLOW(stress_memory_pressure_progressive),
    TH_CASE_SLOW(stress_mixed_compute_copy),
    TH_CASE(concurrent_tensor_ops),
};
const int suite_stress_case_count = TH_COUNT(suite_stress_cases);
