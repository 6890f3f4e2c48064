/* SPDX-License-Identifier: MIT */
/* harness.c - runner for tests/harness.h. */
#include "harness.h"

#include "hcq.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Library messages are captured per test and shown only when the test fails, so
 * expected errors (tests of error paths) do not clutter the output. TH_VERBOSE=1 shows all. */
static char log_buf[16384];
static size_t log_len;

static void
capture_log(enum hcq_log_level level, const char *msg, void *user)
{
    (void)user;
    static const char *const names[] = {"error", "warn", "info", "debug"};
    int n = snprintf(log_buf + log_len, sizeof log_buf - log_len, "      [%s] %s\n", names[level], msg);
    if (n > 0 && log_len + (size_t)n < sizeof log_buf)
        log_len += (size_t)n;
}

static void skip_flush(void);

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t seed_used;

void
th_fail(struct th *t, const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    t->failed = true;
    skip_flush();
    fprintf(stdout, "    %s:%d: ", file, line);
    va_start(ap, fmt);
    vfprintf(stdout, fmt, ap);
    va_end(ap);
    fprintf(stdout, "\n");
    fflush(stdout);
}

void
th_expected(const char *label, const char *text)
{
    skip_flush();
    printf("    (expected) %s:\n", label);
    for (const char *p = text; p && *p;) {
        size_t n = strcspn(p, "\n");
        printf("      | %.*s\n", (int)n, p);
        p += n + (p[n] == '\n');
    }
    fflush(stdout);
}

/* Consecutive skips with the same reason print as one line (a suite on an absent device
 * otherwise prints the same reason once per test). */
static char skip_names[1024], skip_reason[384];
static int skip_count;

static void
skip_flush(void)
{
    if (skip_count == 1)
        printf("  skip %s (%s)\n", skip_names, skip_reason);
    else if (skip_count > 1)
        printf("  skip %s (%d tests: %s)\n", skip_names, skip_count, skip_reason);
    skip_count = 0;
    skip_names[0] = 0;
    fflush(stdout);
}

static void
skip_add(const char *name, const char *why)
{
    size_t len = strlen(skip_names);
    if (skip_count && (strcmp(why, skip_reason) || len + strlen(name) + 3 >= sizeof skip_names))
        skip_flush(), len = 0;
    snprintf(skip_reason, sizeof skip_reason, "%s", why);
    snprintf(skip_names + len, sizeof skip_names - len, "%s%s", len ? ", " : "", name);
    skip_count++;
}

const char *
th_last_error(void)
{
    return hcq_last_error();
}

uint64_t
th_rand(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Dull;
}

float
th_randf(float lo, float hi)
{
    return lo + (hi - lo) * (float)((th_rand() >> 40) / (double)(1ull << 24));
}

uint64_t
th_seed(void)
{
    return seed_used;
}

/* Arguments select tests by substring; "!SUB" leaves out those whose names contain SUB (the
 * others run unless a plain argument selects some). */
static bool
selected(const char *name, int argc, char **argv)
{
    bool any = false;
    for (int i = 0; i < argc; i++)
        if (argv[i][0] == '!' && strstr(name, argv[i] + 1))
            return false;
    for (int i = 0; i < argc; i++) {
        if (argv[i][0] == '-' || argv[i][0] == '!')
            continue;
        any = true;
        if (strstr(name, argv[i]))
            return true;
    }
    return !any;
}

bool
th_defer(struct th *t, void (*fn)(struct th *t))
{
    if (t->n_deferred >= (int)(sizeof t->deferred / sizeof t->deferred[0]))
        return false;
    t->deferred[t->n_deferred++] = fn;
    return true;
}

void (*th_before_each)(struct th *t, const char *name);
void (*th_after_each)(struct th *t, const char *name);

int
th_run(const char *suite, const char *dev_spec, const struct th_case *cases, int n, int argc, char **argv)
{
    int passed = 0, failed = 0, skipped = 0;
    const char *env_seed = getenv("TH_SEED");
    seed_used = env_seed ? strtoull(env_seed, NULL, 0) : (uint64_t)time(NULL);
    bool slow = getenv("TH_SLOW") && atoi(getenv("TH_SLOW"));
    for (int i = 0; i < argc; i++)
        if (!strcmp(argv[i], "--slow"))
            slow = true;
    printf("== %s%s%s (seed %llu)\n", suite, dev_spec ? " on " : "", dev_spec ? dev_spec : "",
           (unsigned long long)seed_used);
    for (int i = 0; i < n; i++) {
        if (!selected(cases[i].name, argc, argv))
            continue;
        if (cases[i].slow && !slow) {
            skipped++;
            continue;
        }
        struct th t = {.dev_spec = dev_spec};
        rng_state = (seed_used ^ (0x9E3779B97F4A7C15ull * (uint64_t)(i + 1))) | 1;
        fflush(stdout);
        log_len = 0;
        log_buf[0] = 0;
        bool verbose = getenv("TH_VERBOSE") && atoi(getenv("TH_VERBOSE"));
        bool times = getenv("TH_TIMES") && atoi(getenv("TH_TIMES"));
        if (!verbose)
            hcq_log_set(capture_log, NULL);
        uint64_t t0 = hcq_time_ns();
        if (th_before_each)
            th_before_each(&t, cases[i].name);
        cases[i].fn(&t);
        while (t.n_deferred > 0)
            t.deferred[--t.n_deferred](&t);
        if (th_after_each)
            th_after_each(&t, cases[i].name);
        double secs = (hcq_time_ns() - t0) / 1e9;
        hcq_log_set(NULL, NULL);
        if (!t.skipped)
            skip_flush(); /* a test that ran ends the group of skips before it */
        if (t.failed) {
            if (log_len)
                printf("    library log of this test:\n%s", log_buf);
            failed++;
            printf("  FAIL %s\n", cases[i].name);
        } else if (t.skipped) {
            skipped++;
            skip_add(cases[i].name, t.skip_why);
            continue;
        } else {
            passed++;
            /* the seconds of a slow test: which tests make `make test-gpu` outgrow one device call
             * (TH_TIMES=1: of every test) */
            if (secs > 2)
                printf("  ok   %s (slow, %.1f s)\n", cases[i].name, secs);
            else if (times)
                printf("  ok   %s (%.3f s)\n", cases[i].name, secs);
            else
                printf("  ok   %s\n", cases[i].name);
        }
        fflush(stdout);
    }
    skip_flush();
    printf("%s%s%s: %d passed, %d failed", suite, dev_spec ? "@" : "", dev_spec ? dev_spec : "", passed,
           failed);
    if (skipped)
        printf(", %d skipped", skipped);
    printf("\n");
    fflush(stdout);
    return failed;
}
