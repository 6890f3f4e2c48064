/* SPDX-License-Identifier: MIT */
/* emu_stub.c - placeholder until the emu backend lands: delete this file when
 * defining hcq_emu_open. */
#include "hcq_priv.h"

enum hcq_status
hcq_emu_open(const char *arg, struct hcq_device **dev_out)
{
    (void)arg;
    *dev_out = NULL;
    return hcq_err_quiet(HCQ_ERR_UNSUPPORTED, "backend emu is not built yet");
}
