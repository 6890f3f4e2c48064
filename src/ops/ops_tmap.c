/* SPDX-License-Identifier: MIT */
/*
 * ops_tmap.c - ops_tmap_encode: k_tmap_encode (src/kernels/k_tmap.h) with hcq errors.
 */
#include "ops_tmap.h"
#include "util_log.h"

enum hcq_status
ops_tmap_encode(const struct k_tmap_desc *d, uint64_t out[16])
{
    const char *why = "";
    int r = k_tmap_encode(d, out, &why);
    if (r == 0)
        return HCQ_OK;
    return hcq_err(r == 2 ? HCQ_ERR_UNSUPPORTED : HCQ_ERR_INVALID, "ops_tmap_encode: %s", why);
}
