/* SPDX-License-Identifier: MIT */
/*
 * test_cuda.c - tests of the cuda backend (src/backend/cuda) through the public API, with
 * kernels written in PTX below (loaded by hcq_program_load_cubin, which the driver JITs),
 * so they need no nvcc and no built-in kernel library: buffers of every kind, copies by
 * kind, launches with a struct argument, 64-bit signals across queues, timestamps, graphs
 * replayed with new variable values (arguments, grid, signal and wait values), the
 * helper-kernel path that stands in for stream memory operations (HCQ_CUDA_NO_MEMOPS=1),
 * and a faulting kernel turning into HCQ_ERR_DEVICE_LOST. Every test skips where cuda:0
 * does not open (CI has no GPU). HCQ_CUDA_TEST_DEV picks another device.
 */
#include "harness.h"
#include "hcq.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* struct t_axpy_params { uint64_t x_va; uint64_t y_va; uint32_t n; float a; }: y = a*x + y. */
struct t_axpy_params {
    uint64_t x_va;
    uint64_t y_va;
    uint32_t n;
    float a;
};
_Static_assert(sizeof(struct t_axpy_params) == 24, "t_axpy params: 24 bytes as in the PTX");

static const char test_ptx[] =
    ".version 7.0\n.target sm_70\n.address_size 64\n"
    ".visible .entry t_axpy(.param .align 8 .b8 p[24])\n"
    "{\n"
    "  .reg .b64 %x, %y, %off;\n"
    "  .reg .b32 %n, %i, %nt, %ct, %ti;\n"
    "  .reg .f32 %a, %fx, %fy;\n"
    "  .reg .pred %out;\n"
    "  ld.param.u64 %x, [p+0];\n"
    "  ld.param.u64 %y, [p+8];\n"
    "  ld.param.u32 %n, [p+16];\n"
    "  ld.param.f32 %a, [p+20];\n"
    "  mov.u32 %nt, %ntid.x;\n"
    "  mov.u32 %ct, %ctaid.x;\n"
    "  mov.u32 %ti, %tid.x;\n"
    "  mad.lo.u32 %i, %ct, %nt, %ti;\n"
    "  setp.ge.u32 %out, %i, %n;\n"
    "  @%out bra DONE;\n"
    "  mul.wide.u32 %off, %i, 4;\n"
    "  add.u64 %x, %x, %off;\n"
    "  add.u64 %y, %y, %off;\n"
    "  ld.global.f32 %fx, [%x];\n"
    "  ld.global.f32 %fy, [%y];\n"
    "  fma.rn.f32 %fy, %a, %fx, %fy;\n"
    "  st.global.f32 [%y], %fy;\n"
    "DONE:\n"
    "  ret;\n"
    "}\n"
    /* t_store(struct { uint64_t addr; }): *(u32 *)addr = 1 by thread 0; a bad addr faults. */
    ".visible .entry t_store(.param .align 8 .b8 p[8])\n"
    "{\n"
    "  .reg .b64 %a;\n"
    "  .reg .b32 %one;\n"
    "  ld.param.u64 %a, [p+0];\n"
    "  mov.u32 %one, 1;\n"
    "  st.global.u32 [%a], %one;\n"
    "  ret;\n"
    "}\n";

static const char *
test_dev(void)
{
    const char *e = getenv("HCQ_CUDA_TEST_DEV");
    return e && *e ? e : "cuda:0";
}

/* Open the cuda device, optionally forcing the helper-kernel path; *skip when absent. */
static enum hcq_status
open_dev(struct hcq_device **dev, bool helpers)
{
    if (helpers)
        setenv("HCQ_CUDA_NO_MEMOPS", "1", 1);
    enum hcq_status st = hcq_device_open(test_dev(), dev);
    unsetenv("HCQ_CUDA_NO_MEMOPS");
    return st;
}

#define OPEN_OR_SKIP(devp, helpers)                                                                          \
    do {                                                                                                     \
        enum hcq_status ost_ = open_dev((devp), (helpers));                                                  \
        if (ost_ == HCQ_ERR_NOT_FOUND || ost_ == HCQ_ERR_UNSUPPORTED)                                        \
            SKIP("%s does not open here: %s", test_dev(), hcq_last_error());                                 \
        CHECK_OK(ost_);                                                                                      \
    } while (0)

static void
fill_random(float *v, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        v[i] = th_randf(-2.0f, 2.0f);
}

/* y_out[i] == a*x[i] + y_in[i] within one rounding (fma on the GPU, double here). */
static bool
axpy_ok(const float *x, const float *y_in, const float *y_out, float a, uint32_t n, uint32_t *bad_out)
{
    for (uint32_t i = 0; i < n; i++) {
        double ref = (double)a * x[i] + y_in[i];
        if (!(fabs(ref - y_out[i]) <= 1e-6 * (fabs(ref) + 1.0))) {
            *bad_out = i;
            return false;
        }
    }
    return true;
}

TEST(info)
{
    struct hcq_device *dev = NULL;
    struct hcq_device_info in;
    OPEN_OR_SKIP(&dev, false);
    CHECK_OK(hcq_device_info(dev, &in));
    CHECK(!strcmp(in.backend, "cuda"));
    CHECK(in.name[0] && in.sm_version >= 50 && in.sm_count > 0 && in.mem_B >= (256ull << 20));
    CHECKF(!strncmp(in.driver, "CUDA ", 5), "driver string '%s'", in.driver);
    CHECKF(!strncmp(in.arch, "sm_", 3) && (uint32_t)atoi(in.arch + 3) == in.sm_version, "arch %s sm %u",
           in.arch, in.sm_version);
    CHECK_OK(hcq_device_check(dev));
    printf("    %s: %s, %s, %u SMs, %.1f GiB, %s, cubins for %s\n", in.spec, in.name, in.arch, in.sm_count,
           in.mem_B / 1073741824.0, in.driver, hcq_kernels_cubin_archs());
done:
    hcq_device_close(dev);
}

/* Device, host and imported buffers; copies D2D, H2D, D2H, H2H on a copy queue; staged
 * hcq_buf_write/read of unmapped device memory. */
static void
copies_body(struct th *t, bool helpers)
{
    enum { N = 1 << 20 };
    struct hcq_device *dev = NULL;
    struct hcq_buf *d1 = NULL, *d2 = NULL, *h = NULL, *imp = NULL;
    struct hcq_queue *q = NULL;
    uint8_t *src = malloc(N), *got = malloc(N), *mem = aligned_alloc(4096, N);
    CHECK(src && got && mem);
    OPEN_OR_SKIP(&dev, helpers);
    for (uint32_t i = 0; i < N; i++)
        src[i] = (uint8_t)th_rand();
    memset(mem, 0x5A, N);
    CHECK_OK(hcq_buf_alloc(dev, N, HCQ_MEM_DEVICE, &d1));
    CHECK_OK(hcq_buf_alloc(dev, N, HCQ_MEM_DEVICE, &d2));
    CHECK_OK(hcq_buf_alloc(dev, N, HCQ_MEM_HOST, &h));
    CHECK_OK(hcq_buf_import_host(dev, mem, N, &imp));
    CHECK(hcq_buf_map(d1) == NULL && hcq_buf_map(h) != NULL && hcq_buf_map(imp) == mem);
    CHECK(hcq_buf_va(d1) && hcq_buf_va(h) && hcq_buf_va(imp));
    memset(hcq_buf_map(h), 0xA5, N);
    CHECK_OK(hcq_buf_write(d1, 0, src, N)); /* staged H2D */
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COPY, &q));
    CHECK_OK(hcq_queue_copy(q, d2, 4096, d1, 0, N - 4096)); /* D2D, offset */
    CHECK_OK(hcq_queue_copy(q, d2, 0, d1, N - 4096, 4096));
    CHECK_OK(hcq_queue_copy(q, h, 0, d2, 0, N));  /* D2H */
    CHECK_OK(hcq_queue_copy(q, imp, 0, h, 0, N)); /* H2H (pinned, registered) */
    CHECK_OK(hcq_queue_finish(q, HCQ_TIMEOUT_DEFAULT_NS));
    CHECK(!memcmp((uint8_t *)hcq_buf_map(h) + 4096, src, N - 4096));
    CHECK(!memcmp(hcq_buf_map(h), src + N - 4096, 4096));
    CHECK(!memcmp(mem, hcq_buf_map(h), N));
    memset(got, 0, N);
    CHECK_OK(hcq_buf_read(d2, 4096, got, N - 4096)); /* staged D2H */
    CHECK(!memcmp(got, src, N - 4096));
done:
    hcq_queue_destroy(q);
    hcq_buf_free(imp);
    hcq_device_close(dev);
    free(src);
    free(got);
    free(mem);
}

TEST(copies)
{
    copies_body(t, false);
}

/* A launch of t_axpy, its result checked in double precision; then two queues ordered by a
 * 64-bit signal whose values cross 2^32: q2 waits for q1's kernel, q1 waits for the host. */
static void
launch_signal_body(struct th *t, bool helpers)
{
    enum { N = 100003 };
    struct hcq_device *dev = NULL;
    struct hcq_program *p = NULL;
    struct hcq_buf *x = NULL, *y = NULL;
    struct hcq_queue *q1 = NULL, *q2 = NULL;
    struct hcq_signal *host = NULL, *s = NULL, *ts1 = NULL, *ts2 = NULL;
    float *xv = malloc(N * 4), *yv = malloc(N * 4), *out = malloc(N * 4);
    CHECK(xv && yv && out);
    OPEN_OR_SKIP(&dev, helpers);
    CHECK_OK(hcq_program_load_cubin(dev, test_ptx, sizeof test_ptx, "t_axpy", &p));
    struct hcq_program_info pi;
    CHECK_OK(hcq_program_info(p, &pi));
    CHECKF(pi.params_B == sizeof(struct t_axpy_params) && pi.native, "params_B %u", pi.params_B);
    fill_random(xv, N);
    fill_random(yv, N);
    CHECK_OK(hcq_buf_alloc(dev, N * 4, HCQ_MEM_DEVICE, &x));
    CHECK_OK(hcq_buf_alloc(dev, N * 4, HCQ_MEM_DEVICE, &y));
    CHECK_OK(hcq_buf_write(x, 0, xv, N * 4));
    CHECK_OK(hcq_buf_write(y, 0, yv, N * 4));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q1));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q2));
    CHECK_OK(hcq_signal_create(dev, 0xFFFFFFF0ull, &host));
    CHECK_OK(hcq_signal_create(dev, 0xFFFFFFFEull, &s));
    CHECK_OK(hcq_signal_create(dev, 0, &ts1));
    CHECK_OK(hcq_signal_create(dev, 0, &ts2));
    struct t_axpy_params a = {hcq_buf_va(x), hcq_buf_va(y), N, th_randf(0.5f, 1.5f)};
    uint32_t grid[3] = {(N + 255) / 256, 1, 1}, block[3] = {256, 1, 1};
    /* q2: wait for s >= 2^32 + 1, then timestamp; q1: wait for the host, timestamp, launch, signal. */
    CHECK_OK(hcq_queue_wait(q2, s, 0x100000001ull));
    CHECK_OK(hcq_queue_timestamp(q2, ts2));
    CHECK_OK(hcq_queue_signal(q2, s, 0x100000002ull));
    CHECK_OK(hcq_queue_submit(q2));
    CHECK_OK(hcq_queue_wait(q1, host, 0x100000000ull));
    CHECK_OK(hcq_queue_timestamp(q1, ts1));
    CHECK_OK(hcq_queue_launch(q1, p, grid, block, &a, sizeof a));
    CHECK_OK(hcq_queue_barrier(q1));
    CHECK_OK(hcq_queue_signal(q1, s, 0x100000001ull));
    CHECK_OK(hcq_queue_submit(q1));
    /* Nothing may run before the host releases q1: a wait with a 64-bit value is not a
     * 32-bit one (0xFFFFFFF0 < 0x1_0000_0000 although its low word is larger). */
    CHECK(hcq_signal_wait(s, 0x100000001ull, 20 * 1000 * 1000) == HCQ_ERR_TIMEOUT);
    CHECK(hcq_signal_value(s) == 0xFFFFFFFEull);
    hcq_signal_set(host, 0x100000000ull);
    CHECK_OK(hcq_signal_wait(s, 0x100000002ull, HCQ_TIMEOUT_DEFAULT_NS));
    CHECK_OK(hcq_queue_finish(q1, HCQ_TIMEOUT_DEFAULT_NS));
    CHECK_OK(hcq_queue_finish(q2, HCQ_TIMEOUT_DEFAULT_NS));
    CHECK_OK(hcq_buf_read(y, 0, out, N * 4));
    uint32_t bad = 0;
    CHECKF(axpy_ok(xv, yv, out, a.a, N, &bad), "y[%u] = %g, expected %g", bad, out[bad],
           (double)a.a * xv[bad] + yv[bad]);
    uint64_t t1 = hcq_signal_timestamp_ns(ts1), t2 = hcq_signal_timestamp_ns(ts2);
    CHECKF(t1 && t2 && t2 >= t1 && t2 - t1 < 5000000000ull, "timestamps %llu %llu", (unsigned long long)t1,
           (unsigned long long)t2);
done:
    hcq_signal_destroy(host);
    hcq_signal_destroy(s);
    hcq_signal_destroy(ts1);
    hcq_signal_destroy(ts2);
    hcq_program_destroy(p);
    hcq_device_close(dev);
    free(xv);
    free(yv);
    free(out);
}

TEST(launch_signal)
{
    launch_signal_body(t, false);
}

TEST(launch_signal_helpers)
{
    launch_signal_body(t, true);
}

TEST(copies_helpers)
{
    copies_body(t, true);
}

/* A graph: wait (var) -> axpy (x, y, n, a and the grid from variables) -> signal (var + 1),
 * replayed with new values each time; every replay checked. */
TEST(graph_replay)
{
    enum { N = 70001, REPLAYS = 6 };
    struct hcq_device *dev = NULL;
    struct hcq_program *p = NULL;
    struct hcq_buf *x[2] = {NULL}, *y = NULL;
    struct hcq_queue *q = NULL;
    struct hcq_signal *go = NULL, *done_sig = NULL;
    struct hcq_graph *g = NULL;
    float *xv[2] = {malloc(N * 4), malloc(N * 4)}, *yv = malloc(N * 4), *out = malloc(N * 4);
    CHECK(xv[0] && xv[1] && yv && out);
    OPEN_OR_SKIP(&dev, false);
    CHECK_OK(hcq_program_load_cubin(dev, test_ptx, sizeof test_ptx, "t_axpy", &p));
    for (int i = 0; i < 2; i++) {
        fill_random(xv[i], N);
        CHECK_OK(hcq_buf_alloc(dev, N * 4, HCQ_MEM_DEVICE, &x[i]));
        CHECK_OK(hcq_buf_write(x[i], 0, xv[i], N * 4));
    }
    fill_random(yv, N);
    CHECK_OK(hcq_buf_alloc(dev, N * 4, HCQ_MEM_DEVICE, &y));
    CHECK_OK(hcq_buf_write(y, 0, yv, N * 4));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    CHECK_OK(hcq_signal_create(dev, 0, &go));
    CHECK_OK(hcq_signal_create(dev, 0, &done_sig));
    uint32_t v_step, v_x, v_n, v_a, v_grid;
    CHECK_OK(hcq_graph_begin(q));
    CHECK_OK(hcq_graph_var(q, &v_step));
    CHECK_OK(hcq_graph_var(q, &v_x));
    CHECK_OK(hcq_graph_var(q, &v_n));
    CHECK_OK(hcq_graph_var(q, &v_a));
    CHECK_OK(hcq_graph_var(q, &v_grid));
    struct t_axpy_params a0 = {0, hcq_buf_va(y), 0, 0.0f};
    struct hcq_arg_patch patches[3] = {{v_x, 0, 8}, {v_n, 16, 4}, {v_a, 20, 4}};
    struct hcq_launch l = {
        .prog = p,
        .grid = {0, 1, 1},
        .block = {256, 1, 1},
        .args = &a0,
        .args_B = sizeof a0,
        .grid_var = {v_grid, HCQ_VAR_NONE, HCQ_VAR_NONE},
        .patches = patches,
        .patch_count = 3,
    };
    CHECK_OK(hcq_queue_wait_var(q, go, v_step, 0));
    CHECK_OK(hcq_queue_launch_ex(q, &l));
    CHECK_OK(hcq_queue_signal_var(q, done_sig, v_step, 0x100000000ull));
    CHECK_OK(hcq_graph_end(q, &g));
    CHECK(hcq_graph_command_count(g) == 3);
    uint64_t t0 = hcq_time_ns();
    for (uint32_t r = 1; r <= REPLAYS; r++) {
        uint32_t n = r % 2 ? N : N / 3 + r; /* a different size and grid each time */
        float a = th_randf(-1.5f, 1.5f);
        uint32_t abits;
        memcpy(&abits, &a, 4);
        CHECK_OK(hcq_buf_read(y, 0, yv, N * 4)); /* the y this replay starts from */
        CHECK_OK(hcq_graph_set(g, v_step, r));
        CHECK_OK(hcq_graph_set(g, v_x, hcq_buf_va(x[r % 2])));
        CHECK_OK(hcq_graph_set(g, v_n, n));
        CHECK_OK(hcq_graph_set(g, v_a, abits));
        CHECK_OK(hcq_graph_set(g, v_grid, (n + 255) / 256));
        CHECK_OK(hcq_graph_replay(g));
        /* Held by the wait until the host says go. */
        CHECK(hcq_signal_wait(done_sig, 0x100000000ull + r, 5 * 1000 * 1000) == HCQ_ERR_TIMEOUT);
        hcq_signal_set(go, r);
        CHECK_OK(hcq_signal_wait(done_sig, 0x100000000ull + r, HCQ_TIMEOUT_DEFAULT_NS));
        CHECK_OK(hcq_queue_finish(q, HCQ_TIMEOUT_DEFAULT_NS));
        CHECK_OK(hcq_buf_read(y, 0, out, N * 4));
        uint32_t bad = 0;
        CHECKF(axpy_ok(xv[r % 2], yv, out, a, n, &bad), "replay %u: y[%u] = %g, expected %g", r, bad,
               out[bad], (double)a * xv[r % 2][bad] + yv[bad]);
        CHECKF(!memcmp(out + n, yv + n, (N - n) * 4), "replay %u wrote past n = %u", r, n);
    }
    printf("    %d replays with new values: %.1f us each (incl. host checks)\n", REPLAYS,
           (hcq_time_ns() - t0) / 1e3 / REPLAYS);
done:
    hcq_graph_destroy(g);
    hcq_signal_destroy(go);
    hcq_signal_destroy(done_sig);
    hcq_program_destroy(p);
    hcq_device_close(dev);
    free(xv[0]);
    free(xv[1]);
    free(yv);
    free(out);
}

/* Many back-to-back replays of a small graph ordered only by queue order; the last signal
 * value proves every replay ran with its own value. */
TEST(graph_many_replays)
{
    enum { REPLAYS = 2000 };
    struct hcq_device *dev = NULL;
    struct hcq_program *p = NULL;
    struct hcq_buf *cell = NULL;
    struct hcq_queue *q = NULL;
    struct hcq_signal *s = NULL, *ts = NULL;
    struct hcq_graph *g = NULL;
    OPEN_OR_SKIP(&dev, false);
    CHECK_OK(hcq_program_load_cubin(dev, test_ptx, sizeof test_ptx, "t_store", &p));
    CHECK_OK(hcq_buf_alloc(dev, 4096, HCQ_MEM_HOST, &cell));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    CHECK_OK(hcq_signal_create(dev, 0, &s));
    CHECK_OK(hcq_signal_create(dev, 0, &ts));
    uint32_t v;
    CHECK_OK(hcq_graph_begin(q));
    CHECK_OK(hcq_graph_var(q, &v));
    uint64_t addr = hcq_buf_va(cell);
    uint32_t one[3] = {1, 1, 1};
    for (int i = 0; i < 10; i++)
        CHECK_OK(hcq_queue_launch(q, p, one, one, &addr, sizeof addr));
    CHECK_OK(hcq_queue_timestamp(q, ts));
    CHECK_OK(hcq_queue_signal_var(q, s, v, 0));
    CHECK_OK(hcq_graph_end(q, &g));
    uint64_t t0 = hcq_time_ns();
    for (uint64_t r = 1; r <= REPLAYS; r++) {
        CHECK_OK(hcq_graph_set(g, v, r << 31)); /* crosses 2^32 on the third replay */
        CHECK_OK(hcq_graph_replay(g));
    }
    CHECK_OK(hcq_signal_wait(s, (uint64_t)REPLAYS << 31, HCQ_TIMEOUT_DEFAULT_NS));
    CHECK_OK(hcq_queue_finish(q, HCQ_TIMEOUT_DEFAULT_NS));
    double us = (hcq_time_ns() - t0) / 1e3;
    CHECK(hcq_signal_value(s) == (uint64_t)REPLAYS << 31);
    CHECK(*(volatile uint32_t *)hcq_buf_map(cell) == 1);
    CHECK(hcq_signal_timestamp_ns(ts) != 0);
    printf("    %d replays of 12 nodes: %.2f us per replay, %.2f us per kernel\n", REPLAYS, us / REPLAYS,
           us / REPLAYS / 12);
done:
    hcq_graph_destroy(g);
    hcq_signal_destroy(s);
    hcq_signal_destroy(ts);
    hcq_program_destroy(p);
    hcq_device_close(dev);
}

/* A kernel storing to an unmapped address: the wait reports HCQ_ERR_DEVICE_LOST, the device
 * stays lost with a reason, and closing it works. Opening cuda:0 again in the same process
 * either works or says clearly that it cannot: the CUDA documentation of these errors says
 * the process must be relaunched (observed on driver 580: the primary context stays faulted
 * even after cuDevicePrimaryCtxReset). Runs last for that reason. */
TEST(fault_device_lost)
{
    struct hcq_device *dev = NULL;
    struct hcq_program *p = NULL;
    struct hcq_queue *q = NULL;
    char why[512];
    /* a real Xid in the kernel log: only when asked (make test-gpu sets HCQ_TEST_FAULTS=1) */
    if (!(getenv("HCQ_TEST_FAULTS") && atoi(getenv("HCQ_TEST_FAULTS"))))
        SKIP("deliberate GPU fault: HCQ_TEST_FAULTS=1 (make test-gpu runs it)");
    OPEN_OR_SKIP(&dev, false);
    CHECK_OK(hcq_program_load_cubin(dev, test_ptx, sizeof test_ptx, "t_store", &p));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    uint64_t bad = 0x7ff000000000ull; /* no allocation lives there */
    uint32_t one[3] = {1, 1, 1};
    CHECK_OK(hcq_queue_launch(q, p, one, one, &bad, sizeof bad));
    enum hcq_status st = hcq_queue_finish(q, HCQ_TIMEOUT_DEFAULT_NS);
    CHECKF(st == HCQ_ERR_DEVICE_LOST, "finish after a faulting kernel: %s", hcq_status_str(st));
    CHECK(hcq_device_check(dev) == HCQ_ERR_DEVICE_LOST);
    hcq_device_fault_report(dev, why, sizeof why);
    CHECKF(strstr(why, "CUDA_ERROR"), "fault report '%s'", why);
    th_expected("fault report of the deliberate fault", why);
    hcq_program_destroy(p);
    p = NULL;
    hcq_queue_destroy(q);
    q = NULL;
    hcq_device_close(dev);
    dev = NULL;
    st = hcq_device_open(test_dev(), &dev);
    if (st == HCQ_OK)
        CHECK_OK(hcq_device_check(dev));
    else
        CHECKF(st == HCQ_ERR_DEVICE_LOST && strstr(hcq_last_error(), "relaunched"), "reopen: %s: %s",
               hcq_status_str(st), hcq_last_error());
    printf("    reopen after the fault: %s\n", st == HCQ_OK ? "works" : hcq_last_error());
done:
    hcq_program_destroy(p);
    hcq_queue_destroy(q);
    hcq_device_close(dev);
}

int
main(int argc, char **argv)
{
    static const struct th_case cases[] = {
        TH_CASE(info),
        TH_CASE(copies),
        TH_CASE(copies_helpers),
        TH_CASE(launch_signal),
        TH_CASE(launch_signal_helpers),
        TH_CASE(graph_replay),
        TH_CASE(graph_many_replays),
        TH_CASE(fault_device_lost),
    };
    return th_run("cuda", test_dev(), cases, TH_COUNT(cases), argc - 1, argv + 1) ? 1 : 0;
}
