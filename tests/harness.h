/* SPDX-License-Identifier: MIT */
/*
 * harness.h - the 50-line test harness (STYLE 2.8). A test is `TEST(name) { ... done:; }`
 * with CHECK()s that jump to `done` on failure; a suite is a table of tests run by
 * th_main(), which prints one line per test and "<suite>: N passed, N failed".
 * Device-parameterised suites read t->dev_spec.
 */
#ifndef HARNESS_H
#define HARNESS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct th {
    const char *dev_spec; /* device under test (parameterised suites) */
    bool failed;
    bool skipped;
    char skip_why[384];
    /* th_defer: run after the test body, before th_after_each (last registered first) */
    void (*deferred[4])(struct th *t);
    int n_deferred;
};

struct th_case {
    const char *name;
    void (*fn)(struct th *t);
    bool slow; /* run only with --slow / TH_SLOW=1 */
};

#define TEST(name) static void test_##name(struct th *t)
#define TH_CASE(name)                                                                                        \
    {                                                                                                        \
#name, test_##name, false                                                                            \
    }
#define TH_CASE_SLOW(name)                                                                                   \
    {                                                                                                        \
#name, test_##name, true                                                                             \
    }

void th_fail(struct th *t, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Fail and jump to done: unless cond holds. */
#define CHECK(cond)                                                                                          \
    do {                                                                                                     \
        if (!(cond)) {                                                                                       \
            th_fail(t, __FILE__, __LINE__, "CHECK(%s)", #cond);                                              \
            goto done;                                                                                       \
        }                                                                                                    \
    } while (0)
#define CHECKF(cond, ...)                                                                                    \
    do {                                                                                                     \
        if (!(cond)) {                                                                                       \
            th_fail(t, __FILE__, __LINE__, __VA_ARGS__);                                                     \
            goto done;                                                                                       \
        }                                                                                                    \
    } while (0)
/* Check an hcq_status call; prints hcq_last_error() on failure. */
#define CHECK_OK(call)                                                                                       \
    do {                                                                                                     \
        int st_ = (int)(call);                                                                               \
        if (st_ != 0) {                                                                                      \
            th_fail(t, __FILE__, __LINE__, "%s -> %d: %s", #call, st_, th_last_error());                     \
            goto done;                                                                                       \
        }                                                                                                    \
    } while (0)
#define SKIP(...)                                                                                            \
    do {                                                                                                     \
        t->skipped = true;                                                                                   \
        snprintf(t->skip_why, sizeof t->skip_why, __VA_ARGS__);                                              \
        goto done;                                                                                           \
    } while (0)

const char *th_last_error(void);

/* Run fn(t) when the current test's body has returned (a resource the test's checks share, e.g.
 * a device opened once for all of them). false: no slot left (4 per test). */
bool th_defer(struct th *t, void (*fn)(struct th *t));

/* Optional hooks run before and after every test (NULL: none); `after` may fail the test
 * (th_fail) - the HCQ suite's per-test kernel-log check uses them. */
extern void (*th_before_each)(struct th *t, const char *name);
extern void (*th_after_each)(struct th *t, const char *name);

/* Print text the test expects (a deliberate fault's report), labelled and indented under the
 * test's line so that none of its lines reads as a failure. Multi-line text keeps its lines. */
void th_expected(const char *label, const char *text);

/* Run `cases` for suite `suite` (on device dev_spec, may be NULL). argv: optional name filters.
 * Returns the number of failures. Prints "<suite>: N passed, N failed[, N skipped]". */
int th_run(const char *suite, const char *dev_spec, const struct th_case *cases, int n, int argc,
           char **argv);

/* Random numbers for fresh test inputs (xorshift64*, seeded per test from TH_SEED or time). */
uint64_t th_rand(void);
float th_randf(float lo, float hi);
uint64_t th_seed(void);

#define TH_COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

#endif /* HARNESS_H */
