/* SPDX-License-Identifier: MIT */
/*
 * util_env.h - the A/B switches of defaults, read from the environment: a default that is on
 * stays on unless its variable is "0" (PB_QMD_MEMO=0, HCQ_POOL=0, NVHCQ_PDL=0, ...). Callers
 * that run per launch read it once and keep the answer. Layer: util.
 */
#ifndef UTIL_ENV_H
#define UTIL_ENV_H

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static inline bool
util_env_on(const char *name)
{
    const char *e = getenv(name);
    return !(e && !strcmp(e, "0"));
}

#endif /* UTIL_ENV_H */
