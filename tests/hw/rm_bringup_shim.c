/* SPDX-License-Identifier: MIT */
/*
 * rm_bringup_shim.c - weak stand-ins for the util/hcq_log.c functions iface/rm calls, so
 * tests/hw/rm_bringup.c links against the rm sources alone while core is not built.
 * The library's strong definitions win whenever it is linked too.
 */
#include "hcq_log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char shim_last[1024];

__attribute__((weak)) enum hcq_status
hcq_err_at(const char *file, int line, const char *func, enum hcq_status status, const char *fmt, ...)
{
    va_list ap;
    int n = snprintf(shim_last, sizeof shim_last, "%s:%d: %s: ", file, line, func);
    va_start(ap, fmt);
    vsnprintf(shim_last + n, sizeof shim_last - (size_t)n, fmt, ap);
    va_end(ap);
    fprintf(stderr, "hcq error %d: %s\n", (int)status, shim_last);
    return status;
}

__attribute__((weak)) enum hcq_status
hcq_err_quiet(enum hcq_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(shim_last, sizeof shim_last, fmt, ap);
    va_end(ap);
    return status;
}

__attribute__((weak)) void
hcq_log(enum hcq_log_level level, const char *fmt, ...)
{
    const char *e = getenv("HCQ_LOG");
    int max = e ? atoi(e) : HCQ_LOG_LEVEL_INFO;
    if ((int)level > max)
        return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

__attribute__((weak)) uint32_t
hcq_debug_flags(void)
{
    const char *e = getenv("HCQ_DEBUG");
    return e && strstr(e, "ioctl") ? HCQ_DEBUG_IOCTL : 0;
}

__attribute__((weak)) const char *
hcq_last_error(void)
{
    return shim_last;
}

__attribute__((weak)) void
hcq_log_set(hcq_log_fn fn, void *user_data)
{
    (void)fn;
    (void)user_data;
}

__attribute__((weak)) void
hcq_log_level_set(enum hcq_log_level max_level)
{
    (void)max_level;
}
