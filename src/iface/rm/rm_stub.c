/* SPDX-License-Identifier: MIT */
/* rm_stub.c - placeholder until the rm backend lands: delete this file when
 * defining hcq_rm_open. */
#include "hcq_priv.h"

enum hcq_status
hcq_rm_open(const char *arg, struct hcq_device **dev_out)
{
    (void)arg;
    *dev_out = NULL;
    return hcq_err_quiet(HCQ_ERR_UNSUPPORTED, "backend rm is not built yet");
}
