/* SPDX-License-Identifier: MIT */
/*
 * util_log.h - logging, error recording and debug switches shared by every layer. The
 * functions keep the hcq_ prefix because hcq_err() sets what the public hcq_last_error() returns.
 * Layer: util (no dependencies). STYLE.md 2.3/2.5: log once where the error is created,
 * return the status, callers pass it up without logging again.
 */
#ifndef UTIL_LOG_H
#define UTIL_LOG_H

#include "hcq.h"

/* Record `status` with a message (file:line prefixed) as this thread's last error,
 * log it at ERROR level (WARN for TIMEOUT/NOT_FOUND/UNSUPPORTED), and return status. */
enum hcq_status hcq_err_at(const char *file, int line, const char *func, enum hcq_status status,
                           const char *fmt, ...) HCQ_PRINTF(5, 6);
#define hcq_err(status, ...) hcq_err_at(__FILE__, __LINE__, __func__, (status), __VA_ARGS__)

/* Record as last error without logging (expected failures, e.g. probing). */
enum hcq_status hcq_err_quiet(enum hcq_status status, const char *fmt, ...) HCQ_PRINTF(2, 3);

void hcq_log(enum hcq_log_level level, const char *fmt, ...) HCQ_PRINTF(2, 3);
#define HCQ_LOG_ERROR(...) hcq_log(HCQ_LOG_LEVEL_ERROR, __VA_ARGS__)
#define HCQ_LOG_WARN(...) hcq_log(HCQ_LOG_LEVEL_WARN, __VA_ARGS__)
#define HCQ_LOG_INFO(...) hcq_log(HCQ_LOG_LEVEL_INFO, __VA_ARGS__)
#define HCQ_LOG_DEBUG(...) hcq_log(HCQ_LOG_LEVEL_DEBUG, __VA_ARGS__)

/* HCQ_DEBUG=flag,flag,... (read once). */
enum hcq_debug_flags {
    HCQ_DEBUG_PUSH_DUMP = 1 << 0, /* decode every pushbuffer submitted */
    HCQ_DEBUG_PUSH_SYNC = 1 << 1, /* wait after every submission */
    HCQ_DEBUG_QMD_DUMP = 1 << 2,  /* decode every QMD launched */
    HCQ_DEBUG_TRASH_MEM = 1 << 3, /* fill new buffers with 0xAB (find uninitialised reads) */
    HCQ_DEBUG_ZERO_MEM = 1 << 4,  /* zero new buffers */
    HCQ_DEBUG_VM = 1 << 5,        /* log every VA map/unmap */
    HCQ_DEBUG_IOCTL = 1 << 6,     /* log every ioctl of rm/nvgpu */
    HCQ_DEBUG_CMD_SYNC = 1 << 7,  /* submit each command alone and wait for it (finds the one that hangs) */
};
uint32_t hcq_debug_flags(void);

#endif /* UTIL_LOG_H */
