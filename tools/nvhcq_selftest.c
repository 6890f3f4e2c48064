/* SPDX-License-Identifier: MIT */
/*
 * nvhcq_selftest.c - `nvhcq selftest`, for Jetson owners: run the HCQ suite on nvgpu:0
 * (or --dev), a compact set of built-in checks, a short benchmark, then read the kernel
 * log written meanwhile and classify the GPU lines (docs/hw/nvgpu.md §8.3), and print a
 * markdown report to paste into an issue. Layer: tools (prints, may exit).
 * --report FILE.json also writes every fact, check and number as JSON (docs/jetson.md
 * "Running on your Orin"): device facts, the checks, this benchmark plus `nvhcq bench
 * latency copy matmul --json`, `nvhcq llm-bench` on a generated model, the suite counts
 * and the kernel-log verdict. The extra benchmarks run as child processes of this binary.
 * The nvgpu backend has only run against the emulated driver; this is how it meets a board.
 */
#include "hcq.h"
#include "klog.h"
#include "nvhcq_cli.h"
#include "nvhcq_cmds.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SELFTEST_SUITE_TIMEOUT_S 600
#define SELFTEST_LOG_B (256u << 10)

#define SELFTEST_MAX_CHECKS 16

struct selftest {
    const char *dev_spec;
    const char *suite_path;
    const char *report_path;        /* --report FILE.json, or NULL */
    const char *llm_preset, *vocab; /* generated model for llm-bench (report only) */
    bool no_suite, no_bench, no_llm, quick;
    unsigned checks_passed, checks_failed;
    int suite_passed, suite_failed; /* -1: not run */
    char suite_tail[4096];
    /* what the JSON report holds */
    struct {
        const char *name;
        bool ok;
        char msg[256];
    } check[SELFTEST_MAX_CHECKS];
    unsigned n_check;
    double rt_median_us, rt_p99_us, copy_GBps;
    int rt_runs;
    unsigned copy_MiB;
    bool klog_readable;
    unsigned kerr, kwarn, kharmless, kinfo;
    char klog_rep[16384];
};

/* ==== Kernel log: everything written after the marker ==== */

struct klog_reader {
    int kmsg_fd;      /* /dev/kmsg positioned at the end, or -1 */
    long dmesg_lines; /* fallback: line count of `dmesg` at the marker, -1 if unusable */
};

static long
selftest_dmesg_count(void)
{
    FILE *p = popen("dmesg 2>/dev/null", "r");
    if (!p)
        return -1;
    long n = 0;
    int c;
    while ((c = fgetc(p)) != EOF)
        n += c == '\n';
    return pclose(p) == 0 && n > 0 ? n : -1;
}

static void
klog_mark(struct klog_reader *k)
{
    k->kmsg_fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (k->kmsg_fd >= 0 && lseek(k->kmsg_fd, 0, SEEK_END) < 0) {
        close(k->kmsg_fd);
        k->kmsg_fd = -1;
    }
    k->dmesg_lines = k->kmsg_fd < 0 ? selftest_dmesg_count() : -1;
}

/* New log lines into buf (NUL-terminated); false when the log is not readable. */
static bool
klog_read(struct klog_reader *k, char *buf, size_t buf_B)
{
    size_t used = 0;
    buf[0] = 0;
    if (k->kmsg_fd >= 0) {
        char rec[8192];
        for (;;) {
            ssize_t n = read(k->kmsg_fd, rec, sizeof rec - 1);
            if (n < 0 && errno == EPIPE) /* overwritten records: keep reading */
                continue;
            if (n <= 0)
                break;
            rec[n] = 0;
            /* "prio,seq,usec,flags;message\n KEY=value..." */
            char *msg = strchr(rec, ';');
            if (!msg)
                continue;
            msg++;
            char *nl = strchr(msg, '\n');
            if (nl)
                *nl = 0;
            int w = snprintf(buf + used, buf_B - used, "%s\n", msg);
            if (w < 0 || (size_t)w >= buf_B - used)
                break;
            used += (size_t)w;
        }
        close(k->kmsg_fd);
        k->kmsg_fd = -1;
        return true;
    }
    if (k->dmesg_lines < 0)
        return false;
    FILE *p = popen("dmesg 2>/dev/null", "r");
    if (!p)
        return false;
    char line[1024];
    long i = 0;
    while (fgets(line, sizeof line, p)) {
        if (i++ < k->dmesg_lines)
            continue;
        size_t n = strlen(line);
        if (used + n + 1 >= buf_B)
            break;
        memcpy(buf + used, line, n + 1);
        used += n;
    }
    pclose(p);
    return true;
}

/* ==== The HCQ suite, run as a child process ==== */

static bool
selftest_find_suite(struct selftest *s, char *out, size_t out_B)
{
    if (s->suite_path) {
        snprintf(out, out_B, "%s", s->suite_path);
        return access(out, X_OK) == 0;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return false;
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    if (!slash)
        return false;
    *slash = 0;
    static const char *rel[] = {"hcq_suite", "tests/hcq_suite", "nvhcq-hcq_suite"};
    for (unsigned i = 0; i < sizeof rel / sizeof rel[0]; i++) {
        snprintf(out, out_B, "%s/%s", exe, rel[i]);
        if (access(out, X_OK) == 0)
            return true;
    }
    return false;
}

static void
selftest_run_suite(struct selftest *s)
{
    char path[PATH_MAX + 32];
    s->suite_passed = s->suite_failed = -1;
    if (s->no_suite || !selftest_find_suite(s, path, sizeof path)) {
        snprintf(s->suite_tail, sizeof s->suite_tail, "%s",
                 s->no_suite ? "skipped (--no-suite)" : "hcq_suite not found beside nvhcq (--suite PATH)");
        return;
    }
    int pfd[2];
    if (pipe(pfd) < 0)
        return;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(pfd[1], 1);
        dup2(pfd[1], 2);
        close(pfd[0]);
        close(pfd[1]);
        execl(path, path, "--dev", s->dev_spec, (char *)NULL);
        _exit(127);
    }
    close(pfd[1]);
    if (pid < 0) {
        close(pfd[0]);
        return;
    }
    static char out[SELFTEST_LOG_B];
    size_t used = 0;
    uint64_t t0 = hcq_time_ns();
    fcntl(pfd[0], F_SETFL, O_NONBLOCK);
    int status = 0;
    for (;;) {
        ssize_t n = read(pfd[0], out + used, sizeof out - 1 - used);
        if (n > 0) {
            used += (size_t)n;
            if (used >= sizeof out - 1) /* keep the tail: the summary is last */
                memmove(out, out + sizeof out / 2, used -= sizeof out / 2);
            continue;
        }
        if (waitpid(pid, &status, WNOHANG) == pid)
            break;
        if (hcq_time_ns() - t0 > SELFTEST_SUITE_TIMEOUT_S * 1000000000ull) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            break;
        }
        usleep(20000);
    }
    ssize_t n;
    while ((n = read(pfd[0], out + used, sizeof out - 1 - used)) > 0)
        used += (size_t)n;
    close(pfd[0]);
    out[used] = 0;
    /* the last summary "<suite>: N passed, N failed" (the suite name may contain ':') */
    for (char *p = out; (p = strstr(p, " passed, ")); p++) {
        char *b = p;
        while (b > out && b[-1] >= '0' && b[-1] <= '9')
            b--;
        int nf;
        if (b < p && b > out + 1 && b[-1] == ' ' && b[-2] == ':' &&
            sscanf(p, " passed, %d failed", &nf) == 1) {
            s->suite_passed = atoi(b);
            s->suite_failed = nf;
        }
    }
    if (s->suite_passed < 0)
        s->suite_failed = 1; /* crashed or printed no summary */
    size_t tail = used > sizeof s->suite_tail - 1 ? used - (sizeof s->suite_tail - 1) : 0;
    snprintf(s->suite_tail, sizeof s->suite_tail, "%s", out + tail);
    if (WIFSIGNALED(status))
        s->suite_failed += 1;
}

/* ==== Built-in checks (compact; the HCQ suite is the full set) ==== */

#define SELFTEST_CHECK(s, label, expr)                                                                       \
    do {                                                                                                     \
        enum hcq_status st_ = (expr);                                                                        \
        printf("| %-34s | %-4s | %s |\n", label, st_ == HCQ_OK ? "ok" : "FAIL",                              \
               st_ == HCQ_OK ? "" : hcq_last_error());                                                       \
        if ((s)->n_check < SELFTEST_MAX_CHECKS) {                                                            \
            (s)->check[(s)->n_check].name = label;                                                           \
            (s)->check[(s)->n_check].ok = st_ == HCQ_OK;                                                     \
            snprintf((s)->check[(s)->n_check].msg, sizeof(s)->check[0].msg, "%s",                            \
                     st_ == HCQ_OK ? "" : hcq_last_error());                                                 \
            (s)->n_check++;                                                                                  \
        }                                                                                                    \
        if (st_ == HCQ_OK)                                                                                   \
            (s)->checks_passed++;                                                                            \
        else                                                                                                 \
            (s)->checks_failed++;                                                                            \
    } while (0)

static uint64_t
selftest_rand(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

static enum hcq_status
check_signal64(struct hcq_device *dev)
{
    struct hcq_queue *q = NULL;
    struct hcq_signal *sig = NULL;
    enum hcq_status st = hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q);
    if (st == HCQ_OK)
        st = hcq_signal_create(dev, 0xFFFFFFF0ull, &sig);
    for (uint64_t i = 1; st == HCQ_OK && i <= 32; i++) /* crosses 2^32 */
        if ((st = hcq_queue_signal(q, sig, 0xFFFFFFF0ull + i)) == HCQ_OK)
            st = hcq_queue_submit(q);
    if (st == HCQ_OK)
        st = hcq_signal_wait(sig, 0x100000010ull, HCQ_TIMEOUT_DEFAULT_NS);
    if (st == HCQ_OK && hcq_signal_value(sig) != 0x100000010ull)
        st = HCQ_ERR_DRIVER;
    hcq_signal_destroy(sig);
    hcq_queue_destroy(q);
    return st;
}

/* Copy queue copies random bytes after waiting on a compute-queue signal. */
static enum hcq_status
check_copy_cross_queue(struct hcq_device *dev, uint64_t *seed)
{
    const uint64_t n = 1u << 20;
    struct hcq_queue *cq = NULL, *xq = NULL;
    struct hcq_signal *go = NULL, *done = NULL;
    struct hcq_buf *a = NULL, *b = NULL;
    uint8_t *src = malloc(n), *dst = malloc(n);
    enum hcq_status st = src && dst ? HCQ_OK : HCQ_ERR_NOMEM;
    if (st == HCQ_OK)
        st = hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &cq);
    if (st == HCQ_OK)
        st = hcq_queue_create(dev, HCQ_QUEUE_COPY, &xq);
    if (st == HCQ_OK)
        st = hcq_signal_create(dev, 0, &go);
    if (st == HCQ_OK)
        st = hcq_signal_create(dev, 0, &done);
    if (st == HCQ_OK)
        st = hcq_buf_alloc(dev, n, 0, &a);
    if (st == HCQ_OK)
        st = hcq_buf_alloc(dev, n, 0, &b);
    for (uint64_t i = 0; st == HCQ_OK && i < n; i++) {
        src[i] = (uint8_t)selftest_rand(seed);
        dst[i] = (uint8_t)~src[i];
    }
    if (st == HCQ_OK)
        st = hcq_buf_write(a, 0, src, n);
    if (st == HCQ_OK)
        st = hcq_buf_write(b, 0, dst, n);
    if (st == HCQ_OK)
        st = hcq_queue_wait(xq, go, 7);
    if (st == HCQ_OK)
        st = hcq_queue_copy(xq, b, 0, a, 0, n);
    if (st == HCQ_OK)
        st = hcq_queue_signal(xq, done, 1);
    if (st == HCQ_OK)
        st = hcq_queue_submit(xq);
    if (st == HCQ_OK)
        st = hcq_queue_signal(cq, go, 7);
    if (st == HCQ_OK)
        st = hcq_queue_submit(cq);
    if (st == HCQ_OK)
        st = hcq_signal_wait(done, 1, HCQ_TIMEOUT_DEFAULT_NS);
    if (st == HCQ_OK)
        st = hcq_buf_read(b, 0, dst, n);
    if (st == HCQ_OK && memcmp(src, dst, n) != 0)
        st = HCQ_ERR_DRIVER;
    hcq_buf_free(a);
    hcq_buf_free(b);
    hcq_signal_destroy(go);
    hcq_signal_destroy(done);
    hcq_queue_destroy(xq);
    hcq_queue_destroy(cq);
    free(src);
    free(dst);
    return st;
}

static enum hcq_status
check_timestamp(struct hcq_device *dev)
{
    struct hcq_queue *q = NULL;
    struct hcq_signal *s = NULL;
    enum hcq_status st = hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q);
    if (st == HCQ_OK)
        st = hcq_signal_create(dev, 0, &s);
    uint64_t t[2] = {0, 0};
    for (int i = 0; st == HCQ_OK && i < 2; i++) {
        if ((st = hcq_queue_timestamp(q, s)) == HCQ_OK &&
            (st = hcq_queue_signal(q, s, (uint64_t)i + 1)) == HCQ_OK &&
            (st = hcq_queue_submit(q)) == HCQ_OK &&
            (st = hcq_signal_wait(s, (uint64_t)i + 1, HCQ_TIMEOUT_DEFAULT_NS)) == HCQ_OK)
            t[i] = hcq_signal_timestamp_ns(s);
        usleep(1000);
    }
    if (st == HCQ_OK && !(t[0] && t[1] > t[0]))
        st = HCQ_ERR_DRIVER;
    hcq_signal_destroy(s);
    hcq_queue_destroy(q);
    return st;
}

/* ==== Benchmark (short; `nvhcq bench` is the real one) ==== */

static int
selftest_cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void
selftest_bench(struct selftest *st, struct hcq_device *dev, bool quick)
{
    enum { N = 200 };
    uint64_t lat[N];
    struct hcq_queue *q = NULL, *xq = NULL;
    struct hcq_signal *s = NULL;
    struct hcq_buf *a = NULL, *b = NULL;
    int n = quick ? 50 : N;
    if (hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q) || hcq_signal_create(dev, 0, &s))
        goto out;
    for (int i = 0; i < n; i++) {
        uint64_t t0 = hcq_time_ns();
        if (hcq_queue_signal(q, s, (uint64_t)i + 1) || hcq_queue_submit(q) ||
            hcq_signal_wait(s, (uint64_t)i + 1, HCQ_TIMEOUT_DEFAULT_NS))
            goto out;
        lat[i] = hcq_time_ns() - t0;
    }
    qsort(lat, (size_t)n, sizeof lat[0], selftest_cmp_u64);
    printf("| submit+signal+wait round trip | %.1f us median, %.1f us p99 (%d runs) |\n", lat[n / 2] / 1e3,
           lat[(n * 99) / 100] / 1e3, n);
    st->rt_median_us = lat[n / 2] / 1e3;
    st->rt_p99_us = lat[(n * 99) / 100] / 1e3;
    st->rt_runs = n;
    const uint64_t sz = quick ? (16u << 20) : (64u << 20);
    if (hcq_queue_create(dev, HCQ_QUEUE_COPY, &xq) || hcq_buf_alloc(dev, sz, 0, &a) ||
        hcq_buf_alloc(dev, sz, 0, &b))
        goto out;
    uint64_t best = UINT64_MAX;
    for (int r = 0; r < 5; r++) {
        uint64_t t0 = hcq_time_ns();
        if (hcq_queue_copy(xq, b, 0, a, 0, sz) || hcq_queue_finish(xq, HCQ_TIMEOUT_DEFAULT_NS))
            goto out;
        uint64_t dt = hcq_time_ns() - t0;
        best = dt < best ? dt : best;
    }
    printf("| copy engine, %llu MiB device->device | %.2f GB/s (best of 5, read+write counted once) |\n",
           (unsigned long long)(sz >> 20), (double)sz / (double)best);
    st->copy_MiB = (unsigned)(sz >> 20);
    st->copy_GBps = (double)sz / (double)best;
out:
    hcq_buf_free(a);
    hcq_buf_free(b);
    hcq_signal_destroy(s);
    hcq_queue_destroy(xq);
    hcq_queue_destroy(q);
}

/* ==== Report ==== */

static void
selftest_system(void)
{
    struct utsname u;
    if (uname(&u) == 0)
        printf("- kernel: %s %s %s\n", u.sysname, u.release, u.machine);
    FILE *f = fopen("/etc/nv_tegra_release", "r");
    char line[256];
    if (f && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        printf("- L4T: %s\n", line);
    }
    if (f)
        fclose(f);
    f = fopen("/proc/device-tree/model", "r");
    if (f && fgets(line, sizeof line, f))
        printf("- board: %s\n", line);
    if (f)
        fclose(f);
    printf("- /dev/nvmap: %s, /dev/nvgpu/igpu0/ctrl: %s\n",
           access("/dev/nvmap", R_OK | W_OK) == 0 ? "rw" : "NOT accessible",
           access("/dev/nvgpu/igpu0/ctrl", R_OK | W_OK) == 0 ? "rw" : "NOT accessible");
    /* GPU clock (devfreq of the iGPU at 17000000.gpu, nvgpu.md §1.3 step 6): benchmark
     * numbers mean little at the 306 MHz idle floor. */
    static const char *freq[] = {"cur_freq", "min_freq", "max_freq"};
    char path[96];
    unsigned long long hz[3] = {0, 0, 0};
    bool any = false;
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "/sys/class/devfreq/17000000.gpu/%s", freq[i]);
        f = fopen(path, "r");
        if (f && fscanf(f, "%llu", &hz[i]) == 1)
            any = true;
        if (f)
            fclose(f);
    }
    if (any)
        printf("- GPU clock: %llu MHz (min %llu, max %llu)\n", hz[0] / 1000000, hz[1] / 1000000,
               hz[2] / 1000000);
}

/* ==== --report FILE.json ==== */

/* Run this binary with argv (argv[0] ignored), stdout+stderr into out; the exit status,
 * or -1 if it could not run or ran past timeout_s (then killed). */
static int
selftest_capture(char *const argv[], char *out, size_t out_B, unsigned timeout_s)
{
    char exe[PATH_MAX];
    ssize_t en = readlink("/proc/self/exe", exe, sizeof exe - 1);
    out[0] = 0;
    if (en <= 0)
        return -1;
    exe[en] = 0;
    int pfd[2];
    if (pipe(pfd) < 0)
        return -1;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(pfd[1], 1);
        dup2(pfd[1], 2);
        close(pfd[0]);
        close(pfd[1]);
        execv(exe, argv);
        _exit(127);
    }
    close(pfd[1]);
    if (pid < 0) {
        close(pfd[0]);
        return -1;
    }
    size_t used = 0;
    int status = 0;
    bool killed = false;
    uint64_t t0 = hcq_time_ns();
    fcntl(pfd[0], F_SETFL, O_NONBLOCK);
    for (;;) {
        ssize_t n = read(pfd[0], out + used, out_B - 1 - used);
        if (n > 0) {
            used += (size_t)n;
            if (used >= out_B - 1) /* keep the tail */
                memmove(out, out + out_B / 2, used -= out_B / 2);
            continue;
        }
        if (waitpid(pid, &status, WNOHANG) == pid)
            break;
        if (hcq_time_ns() - t0 > timeout_s * 1000000000ull) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            killed = true;
            break;
        }
        usleep(20000);
    }
    ssize_t n;
    while (used < out_B - 1 && (n = read(pfd[0], out + used, out_B - 1 - used)) > 0)
        used += (size_t)n;
    close(pfd[0]);
    out[used] = 0;
    return killed || !WIFEXITED(status) ? -1 : WEXITSTATUS(status);
}

static void
json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p == '\n')
            fputs("\\n", f);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

static void
json_file_line(FILE *f, const char *key, const char *path)
{
    char line[256] = "";
    FILE *in = fopen(path, "r");
    if (in && fgets(line, sizeof line, in))
        line[strcspn(line, "\n")] = 0;
    if (in)
        fclose(in);
    fprintf(f, "    \"%s\": ", key);
    if (line[0])
        json_str(f, line);
    else
        fputs("null", f);
    fputs(",\n", f);
}

/* The tok/s of the llm-bench markdown row ending in "| <test> | <t/s> ± ..." (0 if none). */
static double
selftest_tps(const char *md, const char *test)
{
    char key[32];
    snprintf(key, sizeof key, "| %s | ", test);
    const char *p = strstr(md, key);
    return p ? strtod(p + strlen(key), NULL) : 0;
}

static void
selftest_write_report(struct selftest *s, const struct hcq_device_info *in, bool dev_ok, const char *open_err,
                      bool pass)
{
    FILE *f = fopen(s->report_path, "w");
    if (!f) {
        fprintf(stderr, "nvhcq selftest: --report %s: %s\n", s->report_path, strerror(errno));
        return;
    }
    bool emulated = !strncmp(s->dev_spec, "emu:", 4);
    fprintf(f, "{\n  \"nvhcq_selftest_report\": 1,\n  \"dev\": ");
    json_str(f, s->dev_spec);
    fprintf(f, ",\n  \"result\": \"%s\",\n  \"time_unix\": %lld,\n", pass ? "PASS" : "FAIL",
            (long long)time(NULL));
    /* system */
    struct utsname u;
    fprintf(f, "  \"system\": {\n    \"kernel\": ");
    if (uname(&u) == 0) {
        char k[256];
        snprintf(k, sizeof k, "%s %s %s", u.sysname, u.release, u.machine);
        json_str(f, k);
    } else {
        fputs("null", f);
    }
    fputs(",\n", f);
    json_file_line(f, "l4t_release", "/etc/nv_tegra_release");
    json_file_line(f, "board", "/proc/device-tree/model");
    json_file_line(f, "gpu_cur_freq_hz", "/sys/class/devfreq/17000000.gpu/cur_freq");
    json_file_line(f, "gpu_max_freq_hz", "/sys/class/devfreq/17000000.gpu/max_freq");
    fprintf(f, "    \"nvmap_rw\": %s,\n    \"nvgpu_ctrl_rw\": %s\n  },\n",
            access("/dev/nvmap", R_OK | W_OK) == 0 ? "true" : "false",
            access("/dev/nvgpu/igpu0/ctrl", R_OK | W_OK) == 0 ? "true" : "false");
    /* device */
    fprintf(f, "  \"device\": ");
    if (dev_ok) {
        fprintf(f, "{\n    \"name\": ");
        json_str(f, in->name);
        fprintf(f, ",\n    \"backend\": ");
        json_str(f, in->backend);
        fprintf(f, ",\n    \"arch\": ");
        json_str(f, in->arch);
        fprintf(f, ",\n    \"driver\": ");
        json_str(f, in->driver);
        fprintf(f,
                ",\n    \"sm_count\": %u,\n    \"mem_B\": %llu,\n    \"compute_class\": %u,\n"
                "    \"copy_class\": %u,\n    \"emulated\": %s\n  },\n",
                in->sm_count, (unsigned long long)in->mem_B, in->compute_class, in->copy_class,
                in->emulated ? "true" : "false");
    } else {
        fprintf(f, "{\"open_error\": ");
        json_str(f, open_err);
        fprintf(f, "},\n");
    }
    /* checks */
    fprintf(f, "  \"checks\": [");
    for (unsigned i = 0; i < s->n_check; i++) {
        fprintf(f, "%s\n    {\"name\": ", i ? "," : "");
        json_str(f, s->check[i].name);
        fprintf(f, ", \"ok\": %s, \"message\": ", s->check[i].ok ? "true" : "false");
        json_str(f, s->check[i].msg);
        fputc('}', f);
    }
    fprintf(f, "\n  ],\n");
    /* this tool's short benchmark */
    if (s->rt_runs)
        fprintf(
            f,
            "  \"selftest_bench\": {\"roundtrip_median_us\": %.2f, \"roundtrip_p99_us\": %.2f, \"runs\": %d, "
            "\"copy_MiB\": %u, \"copy_GBps\": %.3f},\n",
            s->rt_median_us, s->rt_p99_us, s->rt_runs, s->copy_MiB, s->copy_GBps);
    else
        fprintf(f, "  \"selftest_bench\": null,\n");
    /* nvhcq bench latency copy matmul (its own JSON, embedded) */
    static char cap[SELFTEST_LOG_B];
    char tmpl[] = "/tmp/nvhcq_selftest_XXXXXX";
    char *dir = dev_ok && !s->no_bench ? mkdtemp(tmpl) : NULL;
    fprintf(f, "  \"bench\": ");
    bool wrote = false;
    if (dir) {
        char jpath[PATH_MAX];
        snprintf(jpath, sizeof jpath, "%s/bench.json", dir);
        char *argv[] = {"nvhcq",
                        "bench",
                        "latency",
                        "copy",
                        "matmul",
                        "--devs",
                        (char *)s->dev_spec,
                        "--json",
                        jpath,
                        s->quick ? "--quick" : NULL,
                        NULL};
        int rc = selftest_capture(argv, cap, sizeof cap, 900);
        FILE *j = rc == 0 ? fopen(jpath, "r") : NULL;
        if (j) {
            char buf[4096];
            size_t n;
            while ((n = fread(buf, 1, sizeof buf, j)) > 0)
                fwrite(buf, 1, n, f);
            fclose(j);
            wrote = true;
        } else {
            fprintf(f, "{\"error\": ");
            json_str(f, cap);
            fputc('}', f);
            wrote = true;
        }
        static const char *ext[] = {"bench.json", "bench.md", "bench.svg"};
        for (unsigned i = 0; i < 3; i++) {
            snprintf(jpath, sizeof jpath, "%s/%s", dir, ext[i]);
            unlink(jpath);
        }
    }
    if (!wrote)
        fputs("null", f);
    fputs(",\n", f);
    /* llm-bench on a generated model (random weights: speed only, not text quality) */
    fprintf(f, "  \"llm_bench\": ");
    if (dir && !s->no_llm) {
        const char *preset = s->llm_preset ? s->llm_preset : emulated ? "tiny" : "llama-3.2-1b";
        char mpath[PATH_MAX];
        snprintf(mpath, sizeof mpath, "%s/model.gguf", dir);
        char *gargv[] = {"nvhcq",   "gen-model",      "--preset", (char *)preset, "--type", "q6_k",
                         "--vocab", (char *)s->vocab, "-o",       mpath,          NULL};
        int rc = selftest_capture(gargv, cap, sizeof cap, 1800);
        fprintf(f, "{\n    \"preset\": ");
        json_str(f, preset);
        fprintf(f, ", \"type\": \"q6_k\", \"weights\": \"generated (random)\",\n");
        if (rc == 0) {
            char *bargv[] = {"nvhcq", "llm-bench",
                             "-m",    mpath,
                             "-p",    s->quick ? "32" : "512",
                             "-n",    s->quick ? "16" : "128",
                             "-r",    s->quick ? "2" : "5",
                             "--dev", (char *)s->dev_spec,
                             NULL};
            rc = selftest_capture(bargv, cap, sizeof cap, 1800);
            char pp[16], tg[16];
            snprintf(pp, sizeof pp, "pp%s", s->quick ? "32" : "512");
            snprintf(tg, sizeof tg, "tg%s", s->quick ? "16" : "128");
            fprintf(f, "    \"exit\": %d, \"%s_tps\": %.3f, \"%s_tps\": %.3f,\n", rc, pp,
                    selftest_tps(cap, pp), tg, selftest_tps(cap, tg));
        } else {
            fprintf(f, "    \"exit\": %d, \"error\": \"gen-model failed\",\n", rc);
        }
        fprintf(f, "    \"output\": ");
        json_str(f, cap);
        fprintf(f, "\n  },\n");
        unlink(mpath);
    } else {
        fprintf(f, "null,\n");
    }
    if (dir)
        rmdir(dir);
    /* suite and kernel log */
    fprintf(f, "  \"suite\": {\"passed\": %d, \"failed\": %d},\n", s->suite_passed, s->suite_failed);
    fprintf(f, "  \"kernel_log\": ");
    if (emulated) {
        fprintf(f, "{\"verdict\": \"skipped (emulated device)\"}\n");
    } else if (!s->klog_readable) {
        fprintf(f, "{\"verdict\": \"not readable (run with sudo)\"}\n");
    } else {
        fprintf(f,
                "{\"verdict\": \"%s\", \"errors\": %u, \"warnings\": %u, \"harmless\": %u, \"other\": %u, "
                "\"lines\": ",
                s->kerr ? "GPU errors" : "clean", s->kerr, s->kwarn, s->kharmless, s->kinfo);
        json_str(f, s->klog_rep);
        fprintf(f, "}\n");
    }
    fprintf(f, "}\n");
    fclose(f);
    printf("Wrote %s (send it with the report).\n", s->report_path);
}

int
nvhcq_cmd_selftest(int argc, char **argv)
{
    struct selftest s = {.dev_spec = "nvgpu:0",
                         .suite_passed = -1,
                         .suite_failed = -1,
                         .vocab = "tests/data/tokenizers/ggml-vocab-gpt-2.gguf"};
    const struct cli_opt opts[] = {
        CLI_STR(NULL, "--dev", &s.dev_spec, "SPEC", "device to test"),
        CLI_STR(NULL, "--suite", &s.suite_path, "PATH",
                "hcq_suite binary [default: next to this program, then build/tests]"),
        CLI_FLAG(NULL, "--no-suite", &s.no_suite, "skip the HCQ suite"),
        CLI_FLAG(NULL, "--no-bench", &s.no_bench, "skip the short benchmark"),
        CLI_FLAG(NULL, "--quick", &s.quick, "smaller benchmark"),
        CLI_STR(
            NULL, "--report", &s.report_path, "FILE.json",
            "also run bench latency/copy/matmul and llm-bench on a generated Q6_K model; write all as JSON"),
        CLI_FLAG(NULL, "--no-llm", &s.no_llm, "--report without the llm-bench"),
        CLI_STR(NULL, "--llm-preset", &s.llm_preset, "P",
                "gen-model preset [default: llama-3.2-1b; tiny on emu:]"),
        CLI_STR(NULL, "--vocab", &s.vocab, "VOCAB.gguf",
                "vocabulary for the generated model [default: the repo's GPT-2]"),
        CLI_END,
    };
    const struct cli_cmd cmd = {
        "selftest",
        "[--dev SPEC] [--suite PATH] [--no-suite] [--no-bench] [--quick] [--report FILE.json [--no-llm]]",
        "Runs the HCQ suite on SPEC, built-in checks, a short benchmark, then classifies the GPU\n"
        "kernel log lines written meanwhile. Paste the report into an issue. Exit status 1 when the\n"
        "device does not open, a check or the suite fails, or the kernel log shows a GPU error.\n"
        "Reading the kernel log needs root or kernel.dmesg_restrict=0.",
        opts,
        NULL,
        NULL,
        NULL,
    };
    int rc = cli_parse(&cmd, argc, argv);
    if (rc != CLI_CONTINUE)
        return rc;
    bool emulated_spec = !strncmp(s.dev_spec, "emu:", 4);
    struct klog_reader kr = {.kmsg_fd = -1, .dmesg_lines = -1};
    if (!emulated_spec)
        klog_mark(&kr);

    printf("## nvhcq selftest: %s\n\n### System\n", s.dev_spec);
    selftest_system();

    struct hcq_device *dev = NULL;
    enum hcq_status st = hcq_device_open(s.dev_spec, &dev);
    struct hcq_device_info in;
    memset(&in, 0, sizeof in);
    char open_err[512] = "";
    printf("\n### Device\n");
    if (st != HCQ_OK) {
        printf("- open %s: **%s**: %s\n", s.dev_spec, hcq_status_str(st), hcq_last_error());
        snprintf(open_err, sizeof open_err, "%s: %s", hcq_status_str(st), hcq_last_error());
        s.checks_failed++;
    } else {
        if (hcq_device_info(dev, &in) == HCQ_OK)
            printf("- %s | backend %s | %s | %u SMs | %.1f GiB | driver %s | compute 0x%04x copy 0x%04x%s\n",
                   in.name, in.backend, in.arch, in.sm_count, (double)in.mem_B / (1u << 30), in.driver,
                   in.compute_class, in.copy_class, in.emulated ? " | EMULATED" : "");
        printf("\n### Built-in checks\n| check | result | message |\n|---|---|---|\n");
        uint64_t seed = hcq_time_ns() | 1;
        SELFTEST_CHECK(&s, "signal 64-bit across 2^32", check_signal64(dev));
        SELFTEST_CHECK(&s, "copy queue after cross-queue wait", check_copy_cross_queue(dev, &seed));
        SELFTEST_CHECK(&s, "timestamps advance", check_timestamp(dev));
        SELFTEST_CHECK(&s, "device still healthy", hcq_device_check(dev));
        if (!s.no_bench) {
            printf("\n### Benchmark\n| measurement | result |\n|---|---|\n");
            selftest_bench(&s, dev, s.quick);
        }
        char fault[512];
        hcq_device_fault_report(dev, fault, sizeof fault);
        if (fault[0])
            printf("\n- device fault report: %s\n", fault);
        hcq_device_close(dev); /* the suite opens its own */
    }

    printf("\n### HCQ suite\n");
    if (st == HCQ_OK)
        selftest_run_suite(&s);
    if (s.suite_passed >= 0)
        printf("- hcq_suite --dev %s: %d passed, %d failed\n", s.dev_spec, s.suite_passed, s.suite_failed);
    else
        printf("- %s\n", st == HCQ_OK ? s.suite_tail : "not run (device did not open)");
    if (s.suite_failed > 0)
        printf("\n<details><summary>suite output (tail)</summary>\n\n```\n%s\n```\n</details>\n",
               s.suite_tail);

    printf("\n### Kernel log (GPU lines since the start)\n");
    unsigned kerr = 0;
    if (emulated_spec) {
        printf("- emulated device: the host's kernel log says nothing about it (skipped)\n");
    } else {
        static char text[SELFTEST_LOG_B], rep[16384];
        if (!klog_read(&kr, text, sizeof text)) {
            printf("- not readable: run with sudo, or `sudo sysctl kernel.dmesg_restrict=0`\n");
        } else {
            struct klog_report c;
            kerr = klog_scan(text, &c, rep, sizeof rep);
            s.klog_readable = true;
            s.kerr = kerr;
            s.kwarn = c.warnings;
            s.kharmless = c.harmless;
            s.kinfo = c.notices;
            snprintf(s.klog_rep, sizeof s.klog_rep, "%s", rep);
            printf("- %u errors, %u warnings, %u known-harmless, %u other GPU lines\n", c.errors, c.warnings,
                   c.harmless, c.notices);
            if (rep[0])
                printf("\n```\n%s```\n", rep);
        }
    }
    /* a suite named by --suite that did not run is a failure; one not found beside nvhcq is
     * reported as not run (an installed nvhcq has no hcq_suite) */
    bool suite_missing = s.suite_path && !s.no_suite && st == HCQ_OK && s.suite_passed < 0;
    bool pass = s.checks_failed == 0 && s.suite_failed <= 0 && kerr == 0 && !suite_missing;
    printf("\n**RESULT: %s** (checks %u/%u, suite %s, kernel errors %u)\n", pass ? "PASS" : "FAIL",
           s.checks_passed, s.checks_passed + s.checks_failed,
           s.suite_passed < 0 ? "not run"
           : s.suite_failed   ? "FAILED"
                              : "ok",
           kerr);
    printf("Paste this report into an issue at the nvhcq repository (docs/jetson.md says what each part "
           "means).\n");
    if (s.report_path)
        selftest_write_report(&s, &in, st == HCQ_OK, open_err, pass);
    return pass ? 0 : 1;
}
