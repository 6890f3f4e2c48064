/* SPDX-License-Identifier: MIT */
/* cuda_stub.c - placeholder until the cuda backend lands: delete this file when
 * defining hcq_cuda_open. */
#include "hcq_priv.h"

enum hcq_status
hcq_cuda_open(const char *arg, struct hcq_device **dev_out)
{
    (void)arg;
    *dev_out = NULL;
    return hcq_err_quiet(HCQ_ERR_UNSUPPORTED, "backend cuda is not built yet");
}
