/* SPDX-License-Identifier: MIT */
/*
 * util_env.h - the A/B switches read from the environment: a default that is on stays on
 * unless its variable is "0" (util_env_on: PB_QMD_MEMO=0, HCQ_POOL=0, ...); a variant that is
 * off is on only where its variable is "1" (util_env_set: HCQ_RM_DMA_MAP=1, NVHCQ_L2PF=1, ...).
 * Callers that run per launch read it once and keep the answer. Layer: util.
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

static inline bool
util_env_set(const char *name)
{
    const char *e = getenv(name);
    return e && !strcmp(e, "1");
}

#endif /* UTIL_ENV_H */
