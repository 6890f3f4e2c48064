/* SPDX-License-Identifier: MIT */
/*
 * emu_tcheck.h - checks shared by the emulator's unit tests (test_emu.c, test_emu_e2e.c,
 * test_emu_rm.c): live-resource leak checks (CHECK_NO_LEAK) and CHECK_OPEN, which skips when
 * kmd/rm cannot reserve its CPU-visible VA window in this process. Static inline: each test
 * file uses a different subset.
 */
#ifndef EMU_TCHECK_H
#define EMU_TCHECK_H

#include "emu.h"
#include "harness.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define MS 1000000ull /* nanoseconds per millisecond, for timeouts */

static inline bool
stats_equal(const struct emu_stats *a, const struct emu_stats *b)
{
    return a->devs == b->devs && a->fds == b->fds && a->maps == b->maps && a->bos == b->bos &&
           a->vms == b->vms && a->chans == b->chans && a->threads == b->threads;
}

static inline void
stats_print(const char *what, const struct emu_stats *s)
{
    fprintf(stderr, "    %s: devs %lld fds %lld maps %lld bos %lld vms %lld chans %lld threads %lld\n", what,
            (long long)s->devs, (long long)s->fds, (long long)s->maps, (long long)s->bos, (long long)s->vms,
            (long long)s->chans, (long long)s->threads);
}

/* Fail (printing both counts) unless the emulator's live resources are back to base. */
#define CHECK_NO_LEAK(base)                                                                                  \
    do {                                                                                                     \
        struct emu_stats now_;                                                                               \
        emu_stats_get(&now_);                                                                                \
        if (!stats_equal((base), &now_)) {                                                                   \
            stats_print("before", (base));                                                                   \
            stats_print("after", &now_);                                                                     \
        }                                                                                                    \
        CHECKF(stats_equal((base), &now_), "emulator resources leaked");                                     \
    } while (0)

/* kmd/rm places CPU-visible memory at CPU address == GPU VA in [2^36, 2^40) when it can;
 * if a build still cannot open rm (no address space), skip saying so instead of failing. */
static inline bool
rm_window_unavailable(enum hcq_status st)
{
    return st == HCQ_ERR_NOMEM && strstr(hcq_last_error(), "[2^36, 2^40)") != NULL;
}
#define CHECK_OPEN(call)                                                                                     \
    do {                                                                                                     \
        enum hcq_status ost_ = (call);                                                                       \
        if (rm_window_unavailable(ost_))                                                                     \
            SKIP("kmd/rm cannot reserve [2^36, 2^40) here (ASan shadow gap): %s", hcq_last_error());         \
        CHECK_OK(ost_);                                                                                      \
    } while (0)

#endif /* EMU_TCHECK_H */
