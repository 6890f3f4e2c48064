/* SPDX-License-Identifier: MIT */
/*
 * rm_status.h - names for NV_STATUS codes and channel-error (Xid) codes, used in every
 * kmd/rm error message. Layer: kmd (pure tables, no syscalls).
 */
#ifndef RM_STATUS_H
#define RM_STATUS_H

#include <stdint.h>

/* "NV_ERR_INVALID_ARGUMENT" for 0x1f; "NV_ERR_<unknown>" for codes not in the table. */
const char *rm_status_name(uint32_t status);
/* Short description of an Xid / ROBUST_CHANNEL_* code (13 -> "graphics engine exception"),
 * "unknown Xid" for codes not in the table. */
const char *rm_xid_name(uint32_t xid);

#endif /* RM_STATUS_H */
