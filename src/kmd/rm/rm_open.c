/* SPDX-License-Identifier: MIT */
/*
 * rm_open.c - the "rm:N" device spec: the RM kernel-driver level on the real kernel
 * (sys_os), wrapped into a runtime device by the pushbuffer engine. Layer: kmd.
 */
#include "kmd.h"
#include "hcq_priv.h"
#include "sys.h"

#include <stdio.h>
#include <stdlib.h>

/* "", "0", "3": the GPU index (CARD_INFO order); anything else is HCQ_ERR_INVALID. */
static enum hcq_status
rm_open_parse(const char *arg, int *index_out)
{
    if (!arg || !*arg) {
        *index_out = 0;
        return HCQ_OK;
    }
    char *end = NULL;
    long v = strtol(arg, &end, 10);
    if (*end != '\0' || v < 0 || v > 63)
        return hcq_err(HCQ_ERR_INVALID, "rm: device \"rm:%s\": expected rm:N with N in 0..63", arg);
    *index_out = (int)v;
    return HCQ_OK;
}

enum hcq_status
hcq_rm_open(const char *arg, struct hcq_device **dev_out)
{
    int index = 0;
    *dev_out = NULL;
    enum hcq_status st = rm_open_parse(arg, &index);
    if (st != HCQ_OK)
        return st;
    struct kmd *kmd = NULL;
    if ((st = rm_kmd_create(&sys_os, index, &kmd)) != HCQ_OK)
        return st;
    char spec[32];
    snprintf(spec, sizeof spec, "rm:%d", index);
    return pb_device_create(kmd, "rm", spec, dev_out); /* takes kmd, also on failure */
}
