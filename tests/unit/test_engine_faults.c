/* SPDX-License-Identifier: MIT */
/*
 * test_engine_faults.c - the engine on a fake kmd and on the emulator when work never completes or
 * faults: waits time out with a clear status, the device is marked lost, and the fault report
 * names the MMU fault.
 */
#include "harness.h"

#include "pb.h"
#include "pb_ring.h"
#include "k_params.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine_fake.h" /* fake kmd + GPU thread */

TEST(fake_timeout_and_fault)
{
    struct fake_kmd *k = NULL;
    struct hcq_device *dev = NULL;
    struct hcq_queue *q;
    char report[1024];
    CHECK_OK(fake_open("gh100", false, &k, &dev));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    fake_pause(k, true);
    CHECK_OK(hcq_queue_barrier(q));
    CHECK(hcq_queue_finish(q, 10 * 1000 * 1000) == HCQ_ERR_TIMEOUT);
    CHECKF(strstr(hcq_last_error(), "timeline expected >=") && strstr(hcq_last_error(), "GPGet"),
           "message: %s", hcq_last_error());
    CHECK_OK(hcq_device_check(dev));
    fake_pause(k, false);
    CHECK_OK(hcq_queue_finish(q, HCQ_TIMEOUT_DEFAULT_NS));
    fake_set_fault(k, "injected MMU fault", 0xdead000);
    CHECK(hcq_device_check(dev) == HCQ_ERR_DEVICE_LOST);
    CHECK(hcq_queue_barrier(q) == HCQ_ERR_DEVICE_LOST);
    CHECK(hcq_queue_finish(q, HCQ_TIMEOUT_DEFAULT_NS) == HCQ_ERR_DEVICE_LOST);
    hcq_device_fault_report(dev, report, sizeof report);
    /* the kmd's decoded reason first, then the queue state */
    const char *nl = strchr(report, '\n');
    CHECKF(nl && !strncmp(report, "fake kernel driver reports a fault: ", 36) &&
               strstr(report, "injected MMU fault (va 0xdead000)") < nl && !strncmp(nl + 1, "queue ", 6),
           "report: %s", report);
done:
    hcq_device_close(dev);
}

/* On the emulated H100 (rm backend): a kernel writing to an unmapped address loses the
 * device, and the fault report starts with the decoded reason from the kmd's check()
 * (the MMU fault, Xid 31), followed by the queue state. */
TEST(emu_fault_report_names_mmu_fault)
{
    /* above the 47-bit user address space, inside the 49-bit GPU VA space, never handed
     * out by the engine's allocators (as tests/hcq's device_lost) */
    const uint64_t bad_va = 0xdead00000000ull;
    struct hcq_device *dev = NULL;
    struct hcq_queue *q = NULL;
    struct hcq_program *fill = NULL;
    char report[2048];
    memset(report, 0x5A, sizeof report);
    enum hcq_status st = hcq_device_open("emu:gh100", &dev);
    if (st == HCQ_ERR_NOMEM && strstr(hcq_last_error(), "[2^36, 2^40)"))
        SKIP("kmd/rm cannot reserve [2^36, 2^40) here (ASan shadow gap): %s", hcq_last_error());
    CHECK_OK(st);
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    CHECK_OK(hcq_program_load(dev, "k_fill_u32", &fill));
    hcq_device_fault_report(dev, report, sizeof report);
    CHECKF(!strstr(report, "fault") && !strstr(report, "Xid"), "report before any fault: %s", report);
    struct k_fill_u32_params p = {.dst_va = bad_va, .n = 4096, .value = (uint32_t)th_rand()};
    const uint32_t grid[3] = {16, 1, 1}, block[3] = {256, 1, 1};
    CHECK_OK(hcq_queue_launch(q, fill, grid, block, &p, sizeof p));
    st = hcq_queue_finish(q, HCQ_TIMEOUT_DEFAULT_NS);
    CHECKF(st == HCQ_ERR_DEVICE_LOST, "finish after a faulting kernel: %s", hcq_status_str(st));
    memset(report, 0x5A, sizeof report);
    hcq_device_fault_report(dev, report, sizeof report);
    CHECKF(memchr(report, 0, sizeof report) != NULL, "report not terminated");
    const char *nl = strchr(report, '\n');
    CHECKF(nl != NULL, "report has one line only: %s", report);
    /* first line: the kmd's decoded reason, naming the MMU fault (rm's error notifier gives
     * the Xid and channel, not the faulting address) */
    char first[1024];
    snprintf(first, sizeof first, "%.*s", (int)(nl - report), report);
    CHECKF(strstr(first, "kernel driver reports a fault") && strstr(first, "Xid 31") && strstr(first, "MMU"),
           "first line: %s", first);
    /* then the queue state */
    CHECKF(strstr(nl + 1, "main channel (compute") && strstr(nl + 1, "GPGet"), "queue state: %s", nl + 1);
done:
    hcq_program_destroy(fill);
    hcq_queue_destroy(q);
    hcq_device_close(dev);
}

int
main(int argc, char **argv)
{
    static const struct th_case cases[] = {
        TH_CASE(fake_timeout_and_fault),
        TH_CASE(emu_fault_report_names_mmu_fault),
    };
    return th_run("engine_faults", NULL, cases, TH_COUNT(cases), argc - 1, argv + 1) ? 1 : 0;
}
