/* SPDX-License-Identifier: MIT */
/*
 * ops_tmap.h - tensor maps for the ops launchers: src/kernels/k_tmap.h's encoder (layout and
 * provenance there) with hcq errors.
 */
#ifndef OPS_TMAP_H
#define OPS_TMAP_H

#include "hcq.h"
#include "k_tmap.h"

/* k_tmap_encode with its refusals as HCQ_ERR_INVALID (what the CUDA driver refuses) or
 * HCQ_ERR_UNSUPPORTED (what was not observed), with the reason. */
HCQ_MUST_CHECK enum hcq_status ops_tmap_encode(const struct k_tmap_desc *d, uint64_t out[16]);

#endif
