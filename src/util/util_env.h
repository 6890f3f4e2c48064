/* SPDX-License-Identifier: MIT */
/*
 * util_env.h - on/off switches read from the environment (docs/env.md lists every variable
 * the product reads): a default that is on stays on unless its variable is "0" (util_env_on:
 * HCQ_POOL=0, HCQ_POOL_SLAB=0). Layer: util.
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
