/* SPDX-License-Identifier: MIT */
/*
 * rm_status.h - names for NV_STATUS codes, channel-error (Xid) codes and RM classes, used in
 * every kmd/rm error message and in the emulator's traces. Layer: kmd (pure tables, no
 * syscalls).
 */
#ifndef RM_STATUS_H
#define RM_STATUS_H

#include <stdint.h>

/* "NV_ERR_INVALID_ARGUMENT" for 0x1f; "NV_ERR_<unknown>" for codes not in the table. */
const char *rm_status_name(uint32_t status);
/* Short description of an Xid / ROBUST_CHANNEL_* code (13 -> "graphics engine exception"),
 * "unknown Xid" for codes not in the table. */
const char *rm_xid_name(uint32_t xid);
/* "AMPERE_COMPUTE_A" for 0xC6C0 (object, GPFIFO, usermode, compute and copy classes),
 * "class" for others. */
const char *rm_class_name(uint32_t cls);
/* The tables themselves: NULL for a value they do not hold (the caller picks its fallback). */
const char *rm_status_lookup(uint32_t status);
const char *rm_class_lookup(uint32_t cls);

#endif /* RM_STATUS_H */
