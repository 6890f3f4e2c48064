/* SPDX-License-Identifier: MIT */
/* hcq_suite.c - placeholder HCQ suite (signals only); helper "kernels" replaces it. */
#include "harness.h"
#include "hcq.h"

#include <string.h>

static const char *dev_spec = "cpu";

TEST(signal_roundtrip)
{
    struct hcq_device *dev = NULL;
    struct hcq_queue *q = NULL;
    struct hcq_signal *s = NULL;
    CHECK_OK(hcq_device_open(t->dev_spec, &dev));
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    CHECK_OK(hcq_signal_create(dev, 0, &s));
    CHECK_OK(hcq_queue_signal(q, s, 0x100000001ull));
    CHECK_OK(hcq_queue_submit(q));
    CHECK_OK(hcq_signal_wait(s, 0x100000001ull, HCQ_TIMEOUT_DEFAULT_NS));
    CHECK(hcq_signal_value(s) == 0x100000001ull);
done:
    hcq_signal_destroy(s);
    hcq_queue_destroy(q);
    hcq_device_close(dev);
}

int
main(int argc, char **argv)
{
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], "--dev"))
            dev_spec = argv[i + 1];
    static const struct th_case cases[] = { TH_CASE(signal_roundtrip) };
    return th_run("hcq", dev_spec, cases, TH_COUNT(cases), 0, NULL) ? 1 : 0;
}
