/* SPDX-License-Identifier: MIT */
/* nvgpu_stub.c - placeholder until the nvgpu backend lands: delete this file when
 * defining hcq_nvgpu_open. */
#include "hcq_priv.h"

enum hcq_status
hcq_nvgpu_open(const char *arg, struct hcq_device **dev_out)
{
    (void)arg;
    *dev_out = NULL;
    return hcq_err_quiet(HCQ_ERR_UNSUPPORTED, "backend nvgpu is not built yet");
}
