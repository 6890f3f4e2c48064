/* SPDX-License-Identifier: MIT */
/*
 * util_log.c - logging, last-error recording, status names, HCQ_DEBUG flags.
 * Layer: util. Messages go to stderr unless redirected with hcq_log_set().
 */
#include "util_log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static _Thread_local char last_error[1024];
static _Thread_local bool errors_owned_by_caller; /* the program prints hcq_last_error() itself */

static hcq_log_fn log_fn;
static void *log_user;
static int log_level = -1; /* -1: not yet read from HCQ_LOG */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *const status_names[HCQ_STATUS_COUNT] = {
    [HCQ_OK] = "HCQ_OK",
    [HCQ_ERR_NOMEM] = "HCQ_ERR_NOMEM",
    [HCQ_ERR_INVALID] = "HCQ_ERR_INVALID",
    [HCQ_ERR_UNSUPPORTED] = "HCQ_ERR_UNSUPPORTED",
    [HCQ_ERR_TIMEOUT] = "HCQ_ERR_TIMEOUT",
    [HCQ_ERR_DRIVER] = "HCQ_ERR_DRIVER",
    [HCQ_ERR_DEVICE_LOST] = "HCQ_ERR_DEVICE_LOST",
    [HCQ_ERR_NOT_FOUND] = "HCQ_ERR_NOT_FOUND",
    [HCQ_ERR_IO] = "HCQ_ERR_IO",
    [HCQ_ERR_FORMAT] = "HCQ_ERR_FORMAT",
};

const char *
hcq_status_str(enum hcq_status status)
{
    if ((unsigned)status >= HCQ_STATUS_COUNT || !status_names[status])
        return "HCQ_ERR_<unknown>";
    return status_names[status];
}

const char *
hcq_last_error(void)
{
    return last_error;
}

static int
level_from_env(void)
{
    const char *e = getenv("HCQ_LOG");
    if (!e)
        return HCQ_LOG_LEVEL_WARN;
    if (!strcmp(e, "error"))
        return HCQ_LOG_LEVEL_ERROR;
    if (!strcmp(e, "info"))
        return HCQ_LOG_LEVEL_INFO;
    if (!strcmp(e, "debug"))
        return HCQ_LOG_LEVEL_DEBUG;
    if (!strcmp(e, "none") || !strcmp(e, "off"))
        return -2;
    return HCQ_LOG_LEVEL_WARN;
}

void
hcq_log_set(hcq_log_fn fn, void *user_data)
{
    pthread_mutex_lock(&log_lock);
    log_fn = fn;
    log_user = user_data;
    pthread_mutex_unlock(&log_lock);
}

void
hcq_log_level_set(enum hcq_log_level max_level)
{
    log_level = (int)max_level;
}

static void
log_emit(enum hcq_log_level level, const char *msg)
{
    if (log_level == -1)
        log_level = level_from_env();
    if ((int)level > log_level)
        return;
    static const char *const names[] = {"error", "warn", "info", "debug"};
    pthread_mutex_lock(&log_lock);
    if (log_fn)
        log_fn(level, msg, log_user);
    else
        fprintf(stderr, "nvhcq %s: %s\n", names[level], msg);
    pthread_mutex_unlock(&log_lock);
}

void
hcq_log(enum hcq_log_level level, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    log_emit(level, msg);
}

enum hcq_status
hcq_err_at(const char *file, int line, const char *func, enum hcq_status status, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    const char *base = strrchr(file, '/');
    snprintf(last_error, sizeof last_error, "%s: %s [%s:%d %s]", hcq_status_str(status), msg,
             base ? base + 1 : file, line, func);
    bool quiet = status == HCQ_ERR_TIMEOUT || status == HCQ_ERR_NOT_FOUND || status == HCQ_ERR_UNSUPPORTED;
    log_emit(errors_owned_by_caller ? HCQ_LOG_LEVEL_DEBUG
             : quiet                ? HCQ_LOG_LEVEL_WARN
                                    : HCQ_LOG_LEVEL_ERROR,
             last_error);
    return status;
}

enum hcq_status
hcq_err_quiet(enum hcq_status status, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(last_error, sizeof last_error, "%s: %s", hcq_status_str(status), msg);
    log_emit(HCQ_LOG_LEVEL_DEBUG, last_error);
    return status;
}

void
hcq_log_errors_owned_by_caller(bool owned)
{
    errors_owned_by_caller = owned;
}

uint32_t
hcq_debug_flags(void)
{
    static int parsed;
    static uint32_t flags;
    if (__atomic_load_n(&parsed, __ATOMIC_ACQUIRE))
        return flags;
    static const struct {
        const char *name;
        uint32_t bit;
    } table[] = {
        {"push_dump", HCQ_DEBUG_PUSH_DUMP}, {"push_sync", HCQ_DEBUG_PUSH_SYNC},
        {"qmd_dump", HCQ_DEBUG_QMD_DUMP},   {"trash_mem", HCQ_DEBUG_TRASH_MEM},
        {"zero_mem", HCQ_DEBUG_ZERO_MEM},   {"vm", HCQ_DEBUG_VM},
        {"ioctl", HCQ_DEBUG_IOCTL},         {"cmd_sync", HCQ_DEBUG_CMD_SYNC},
    };
    uint32_t f = 0;
    const char *e = getenv("HCQ_DEBUG");
    if (e) {
        char buf[256];
        snprintf(buf, sizeof buf, "%s", e);
        char *save = NULL;
        for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            bool known = false;
            for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
                if (!strcmp(tok, table[i].name)) {
                    f |= table[i].bit;
                    known = true;
                }
            if (!known)
                hcq_log(HCQ_LOG_LEVEL_WARN, "HCQ_DEBUG: unknown flag '%s' ignored", tok);
        }
    }
    flags = f;
    __atomic_store_n(&parsed, 1, __ATOMIC_RELEASE);
    return flags;
}

uint64_t
hcq_time_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
