/* SPDX-License-Identifier: MIT */
/*
 * nvhcq_info.c - `nvhcq info` (backends, devices, arch, SMs, memory, driver, embedded
 * cubins) and `nvhcq devices [--testable]`. Layer: tools.
 */
#include "hcq.h"
#include "nvhcq_cli.h"
#include "nvhcq_cmds.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Specs tried, in the order listed; the test suite runs on every one that opens. */
static const char *const candidate_specs[] = {
    "cpu", "emu:gh100", "emu:ga102", "emu:ga10b", "cuda:0", "cuda:1", "rm:0", "rm:1", "nvgpu:0",
};

static void
print_info(const struct hcq_device_info *in)
{
    printf("  %-10s %s\n", in->spec, in->name);
    printf("             backend %s, arch %s, %u SMs, %.1f GiB, driver %s%s%s\n", in->backend, in->arch,
           in->sm_count, in->mem_B / (1024.0 * 1024 * 1024), in->driver,
           in->unified_memory ? ", unified memory" : "",
           in->emulated ? ", EMULATED (functional model; timings mean nothing)" : "");
    if (in->compute_class)
        printf("             compute class 0x%04X, copy class 0x%04X, built-in kernels: %s\n",
               in->compute_class, in->copy_class, in->has_kernels ? "yes" : "no");
}

int
nvhcq_cmd_info(int argc, char **argv)
{
    static const struct cli_opt opts[] = {CLI_END};
    static const struct cli_cmd cmd = {
        "info",
        "",
        "Prints the backends compiled in, the embedded cubin archs, and every device that\n"
        "opens here (arch, SMs, memory, driver). Exit 1 when no device opens.",
        opts,
        NULL,
        NULL,
        NULL,
    };
    int rc = cli_parse(&cmd, argc, argv);
    if (rc != CLI_CONTINUE)
        return rc;
    hcq_log_level_set(HCQ_LOG_LEVEL_ERROR);
    const char *archs = hcq_kernels_cubin_archs();
    printf("nvhcq runtime\n");
    printf("embedded cubins: %s\n",
           *archs ? archs : "none (built without nvcc: GPU kernels absent; cpu and emu work)");
    printf("backends compiled in:");
    for (int i = 0; hcq_backend_name(i); i++)
        printf(" %s", hcq_backend_name(i));
    printf("\ndevices:\n");
    int found = 0;
    for (size_t i = 0; i < sizeof candidate_specs / sizeof candidate_specs[0]; i++) {
        struct hcq_device *dev = NULL;
        enum hcq_status st = hcq_device_open(candidate_specs[i], &dev);
        if (st == HCQ_OK) {
            struct hcq_device_info in;
            if (hcq_device_info(dev, &in) == HCQ_OK) {
                print_info(&in);
                found++;
            }
        } else if (st != HCQ_ERR_NOT_FOUND && st != HCQ_ERR_UNSUPPORTED) {
            printf("  %-10s failed to open: %s\n", candidate_specs[i], hcq_last_error());
        } else if (strncmp(candidate_specs[i], "cuda:1", 6) && strncmp(candidate_specs[i], "rm:1", 4)) {
            printf("  %-10s not available (%s)\n", candidate_specs[i], hcq_last_error());
        }
        hcq_device_close(dev);
    }
    return found ? 0 : 1;
}

int
nvhcq_cmd_devices(int argc, char **argv)
{
    bool testable = false;
    const struct cli_opt opts[] = {
        CLI_FLAG(NULL, "--testable", &testable, "one line of the specs the test suite runs on (make test)"),
        CLI_END,
    };
    const struct cli_cmd cmd = {
        "devices", "[--testable]", "Lists the device specs that open here, one a line.", opts, NULL, NULL,
        NULL};
    int rc = cli_parse(&cmd, argc, argv);
    if (rc != CLI_CONTINUE)
        return rc;
    hcq_log_level_set(HCQ_LOG_LEVEL_ERROR);
    for (size_t i = 0; i < sizeof candidate_specs / sizeof candidate_specs[0]; i++) {
        struct hcq_device *dev = NULL;
        if (hcq_device_open(candidate_specs[i], &dev) == HCQ_OK)
            printf("%s%s", candidate_specs[i], testable ? " " : "\n");
        hcq_device_close(dev);
    }
    if (testable)
        printf("\n");
    return 0;
}
