/* SPDX-License-Identifier: MIT */
/*
 * nvhcq_demo.c - `nvhcq demo` (what `make demo` runs): opens every device that opens
 * here (or --dev SPEC), runs a short self-check on each (signals, copies through the
 * device, a kernel checked against the CPU) and prints a table of what ran where.
 * Layer: tools.
 */
#include "hcq.h"
#include "nvhcq_cli.h"
#include "nvhcq_cmds.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct demo_row {
    char spec[32];
    char name[160];
    const char *signal, *copy, *kernel;
    double copy_ms;
};

/* Host -> device -> device -> host round trip of random bytes through two queues. */
static const char *
check_copy(struct hcq_device *dev, double *ms_out)
{
    enum { N = 1 << 20 };
    struct hcq_buf *h = NULL, *d0 = NULL, *d1 = NULL;
    struct hcq_queue *q = NULL;
    const char *res = "FAIL";
    uint8_t *src = malloc(N), *dst = malloc(N);
    if (!src || !dst)
        goto done;
    for (int i = 0; i < N; i++)
        src[i] = (uint8_t)(rand() >> 7);
    memset(dst, 0xAB, N);
    if (hcq_buf_alloc(dev, N, HCQ_MEM_DEVICE, &d0) || hcq_buf_alloc(dev, N, HCQ_MEM_DEVICE, &d1) ||
        hcq_queue_create(dev, HCQ_QUEUE_COPY, &q))
        goto done;
    uint64_t t0 = hcq_time_ns();
    if (hcq_buf_write(d0, 0, src, N) || hcq_queue_copy(q, d1, 0, d0, 0, N) ||
        hcq_queue_finish(q, HCQ_TIMEOUT_DEFAULT_NS) || hcq_buf_read(d1, 0, dst, N))
        goto done;
    *ms_out = (hcq_time_ns() - t0) / 1e6;
    res = memcmp(src, dst, N) ? "WRONG" : "ok";
done:
    hcq_queue_destroy(q);
    hcq_buf_free(h);
    hcq_buf_free(d0);
    hcq_buf_free(d1);
    free(src);
    free(dst);
    return res;
}

/* Two queues hand a 64-bit timeline value across 2^32 to each other and to the host. */
static const char *
check_signal(struct hcq_device *dev)
{
    struct hcq_queue *a = NULL, *b = NULL;
    struct hcq_signal *s = NULL, *t = NULL;
    const char *res = "FAIL";
    const uint64_t v = 0xFFFFFFFFull;
    if (hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &a) || hcq_queue_create(dev, HCQ_QUEUE_COPY, &b) ||
        hcq_signal_create(dev, v - 1, &s) || hcq_signal_create(dev, 0, &t))
        goto done;
    if (hcq_queue_wait(b, s, v + 1) || hcq_queue_signal(b, t, v + 2) || hcq_queue_submit(b))
        goto done;
    if (hcq_queue_signal(a, s, v + 1) || hcq_queue_submit(a))
        goto done;
    if (hcq_signal_wait(t, v + 2, HCQ_TIMEOUT_DEFAULT_NS))
        goto done;
    res = hcq_signal_value(t) == v + 2 ? "ok" : "WRONG";
done:
    hcq_signal_destroy(s);
    hcq_signal_destroy(t);
    hcq_queue_destroy(a);
    hcq_queue_destroy(b);
    return res;
}

int nvhcq_demo_kernel_check(struct hcq_device *dev); /* tools/nvhcq_demo_kernel.c, weak */
#pragma weak nvhcq_demo_kernel_check

static void
demo_device(const char *spec, struct demo_row *row)
{
    struct hcq_device *dev = NULL;
    snprintf(row->spec, sizeof row->spec, "%s", spec);
    row->signal = row->copy = row->kernel = "-";
    if (hcq_device_open(spec, &dev) != HCQ_OK) {
        snprintf(row->name, sizeof row->name, "open failed: %.50s", hcq_last_error());
        return;
    }
    struct hcq_device_info in;
    if (hcq_device_info(dev, &in) == HCQ_OK)
        snprintf(row->name, sizeof row->name, "%s", in.name);
    row->signal = check_signal(dev);
    row->copy = check_copy(dev, &row->copy_ms);
    if (nvhcq_demo_kernel_check) {
        int r = nvhcq_demo_kernel_check(dev);
        row->kernel = r == 0 ? "ok" : r > 0 ? "WRONG" : "FAIL";
    } else {
        row->kernel = "n/a";
    }
    hcq_device_close(dev);
}

int
nvhcq_cmd_demo(int argc, char **argv)
{
    const char *only = NULL;
    const struct cli_opt opts[] = {
        CLI_STR(NULL, "--dev", &only, "SPEC", "check only this device (it must open)"),
        CLI_END,
    };
    const struct cli_cmd cmd = {
        "demo",
        "[--dev SPEC]",
        "Self-check (64-bit signal across queues, copy round trip, a kernel checked against the CPU)\n"
        "of every device that opens here, then a table of what ran where. A device asked for by\n"
        "--dev or HCQ_DEV must open: if it does not, or any check fails, the exit status is 1.",
        opts,
        NULL,
        NULL,
        "environment: HCQ_DEV=SPEC (the default device; it must open too)",
    };
    int rc = cli_parse(&cmd, argc, argv);
    if (rc != CLI_CONTINUE)
        return rc;
    /* the device the user asked for: failing to open it is a failure, not "not available" */
    const char *wanted = only ? only : hcq_device_env_spec();
    static const char *const all[] = {"cpu",    "emu:gh100", "emu:ga102", "emu:ga10b",
                                      "cuda:0", "rm:0",      "nvgpu:0"};
    const char *specs[8];
    size_t n_specs = 0;
    if (only) {
        specs[n_specs++] = only;
    } else {
        bool listed = false;
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
            specs[n_specs++] = all[i];
            listed |= wanted && !strcmp(wanted, all[i]);
        }
        if (wanted && !listed)
            specs[n_specs++] = wanted;
    }
    struct demo_row rows[8];
    int n = 0, bad = 0;
    char not_open[160] = "";
    hcq_log_level_set(HCQ_LOG_LEVEL_ERROR);
    struct hcq_device *dflt = NULL;
    if (hcq_device_open(only ? only : "auto", &dflt) == HCQ_OK) {
        struct hcq_device_info in;
        if (hcq_device_info(dflt, &in) == HCQ_OK)
            printf("default device: %s (%s, %s)\n\n", in.spec, in.name, in.arch);
    }
    hcq_device_close(dflt);
    for (size_t i = 0; i < n_specs; i++) {
        bool required = wanted && !strcmp(wanted, specs[i]);
        struct hcq_device *probe = NULL;
        enum hcq_status st = hcq_device_open(specs[i], &probe);
        hcq_device_close(probe);
        if (st != HCQ_OK && required) {
            fprintf(stderr, "nvhcq demo: %s (asked for by %s) did not open: %s\n", specs[i],
                    only ? "--dev" : "HCQ_DEV", hcq_last_error());
            snprintf(not_open, sizeof not_open, "; %.60s (%s) did not open", specs[i],
                     only ? "--dev" : "HCQ_DEV");
            bad++;
            continue;
        }
        if (st == HCQ_ERR_NOT_FOUND || st == HCQ_ERR_UNSUPPORTED)
            continue; /* not present here: nothing to check */
        demo_device(specs[i], &rows[n]);
        bad += strcmp(rows[n].signal, "ok") || strcmp(rows[n].copy, "ok") ||
               (strcmp(rows[n].kernel, "ok") && strcmp(rows[n].kernel, "n/a"));
        n++;
    }
    if (n) {
        printf("%-10s | %-44s | %-6s | %-6s | %-6s\n", "device", "name", "signal", "copy", "kernel");
        printf("-----------+----------------------------------------------+--------+--------+-------\n");
    }
    for (int i = 0; i < n; i++)
        printf("%-10s | %-44.44s | %-6s | %-6s | %-6s\n", rows[i].spec, rows[i].name, rows[i].signal,
               rows[i].copy, rows[i].kernel);
    if (!n && !bad) {
        snprintf(not_open, sizeof not_open, "; no device opened");
        bad++;
    }
    int failed_rows = bad - (not_open[0] != 0);
    if (bad)
        printf("\ndemo: FAILED: %d device(s) failed a check%s\n", failed_rows, not_open);
    else
        printf("\ndemo: all checks passed\n");
    return bad ? 1 : 0;
}
