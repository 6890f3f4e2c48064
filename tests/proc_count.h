/* SPDX-License-Identifier: MIT */
/*
 * proc_count.h - the process's own resources for leak checks, shared by the HCQ suite
 * (hcq_suite_mem.c) and the unit tests (test_pool.c): its open file descriptors and mappings
 * as /proc/self shows them, and CHECK_PROC_COUNTS, which fails unless both are back to a
 * baseline. Static inline: header only, like the tests/unit helpers.
 */
#ifndef PROC_COUNT_H
#define PROC_COUNT_H

#include "harness.h"

#include <dirent.h>
#include <stdio.h>

/* Entries of /proc/self/fd (with ".", ".." and the fd reading them: a constant offset); -1
 * when it cannot be read. */
static inline int
proc_fds(void)
{
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    while (readdir(d))
        n++;
    closedir(d);
    return n;
}

/* Lines of /proc/self/maps, one per mapping; -1 when it cannot be read. */
static inline int
proc_maps(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f)
        return -1;
    int n = 0, c;
    while ((c = fgetc(f)) != EOF)
        n += c == '\n';
    fclose(f);
    return n;
}

/* 1 under AddressSanitizer (gcc defines __SANITIZE_ADDRESS__, clang has the feature test). */
#if defined(__SANITIZE_ADDRESS__)
#define PROC_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PROC_ASAN 1
#endif
#endif
#ifndef PROC_ASAN
#define PROC_ASAN 0
#endif

/* Fail unless the process's fds and mappings are back to fds0 and maps0 (taken with proc_fds()
 * and proc_maps()). Under ASan the mappings are not compared: ASan's allocator maps its own
 * regions as the test runs; the callers compare the emulator's map count (emu_stats) first,
 * which still covers our mappings there. */
#define CHECK_PROC_COUNTS(fds0, maps0)                                                                       \
    do {                                                                                                     \
        CHECKF(proc_fds() == (fds0), "process fds %d -> %d", (fds0), proc_fds());                            \
        CHECKF(PROC_ASAN || proc_maps() == (maps0), "process mappings %d -> %d", (maps0), proc_maps());      \
    } while (0)

#endif /* PROC_COUNT_H */
