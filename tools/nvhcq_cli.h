/* SPDX-License-Identifier: MIT */
/*
 * nvhcq_cli.h - the one argument parser of every nvhcq subcommand, plus small helpers the
 * subcommands share (error lines, the build's commit, reading a text file).
 *
 * A subcommand describes its options in a table, one line per option:
 *
 *     static const struct cli_opt opts[] = {
 *         CLI_STR("-m", "--model", &o.model, "FILE", "GGUF model (required)"),
 *         CLI_NUM("-n", "--n-predict", &o.n, "N", -1, 1e6, "tokens to generate; -1: until the context
 * fills"), CLI_FLAG(NULL, "--special", &o.special, "render control tokens"), CLI_END
 *     };
 *
 * CLI_NUM picks the parse from the destination's type (int, uint32_t, uint64_t, float,
 * double), so a flag of the wrong type does not compile. cli_parse() checks every number
 * (whole string consumed, in [min, max]), names the offending flag on error, rejects
 * unknown flags, answers -h/--help with the options and their defaults (the values in the
 * destinations before parsing). Exit codes: 0 help, 2 usage error, 1 runtime failure.
 * Layer: tools.
 */
#ifndef NVHCQ_CLI_H
#define NVHCQ_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum cli_type { CLI_T_FLAG, CLI_T_STR, CLI_T_CHOICE, CLI_T_INT, CLI_T_U32, CLI_T_U64, CLI_T_F32, CLI_T_F64 };

struct cli_opt {
    const char *name;  /* short or long spelling ("-n"); NULL if only alias */
    const char *alias; /* long spelling ("--n-predict") or NULL */
    enum cli_type type;
    void *dst;       /* bool*, const char**, int*, uint32_t*, uint64_t*, float*, double* */
    const char *arg; /* value name in help ("N", "FILE"); CLI_CHOICE: the choices "md|json" */
    double min, max; /* numbers: inclusive range */
    const char *help;
};

/* _Generic with one association: a destination of another type is a compile error */
#define CLI_FLAG(n, a, dst, help)                                                                            \
    {                                                                                                        \
        (n), (a), CLI_T_FLAG, _Generic((dst), bool * : (dst)), NULL, 0, 0, (help)                            \
    }
#define CLI_STR(n, a, dst, arg, help)                                                                        \
    {                                                                                                        \
        (n), (a), CLI_T_STR, _Generic((dst), const char ** : (dst)), (arg), 0, 0, (help)                     \
    }
#define CLI_CHOICE(n, a, dst, choices, help)                                                                 \
    {                                                                                                        \
        (n), (a), CLI_T_CHOICE, _Generic((dst), const char ** : (dst)), (choices), 0, 0, (help)              \
    }
#define CLI_NUM(n, a, dst, arg, lo, hi, help)                                                                      \
    {                                                                                                              \
        (n), (a),                                                                                                \
      _Generic((dst), int *: CLI_T_INT, uint32_t *: CLI_T_U32, uint64_t *: CLI_T_U64, float *: CLI_T_F32,     \
               double *: CLI_T_F64),                                                                           \
      (dst), (arg), (lo), (hi), (help) \
    }
#define CLI_END                                                                                              \
    {                                                                                                        \
        NULL, NULL, CLI_T_FLAG, NULL, NULL, 0, 0, NULL                                                       \
    }

struct cli_cmd {
    const char *name;     /* "run": messages say "nvhcq run: ..." */
    const char *synopsis; /* after "usage: nvhcq run " */
    const char *about;    /* one paragraph printed under the usage line (may be NULL) */
    const struct cli_opt *opts;
    /* Positional arguments (NULL: none accepted). Returns 0, or 2 after printing why. */
    int (*positional)(const char *arg, void *user);
    void *user;
    const char *epilog; /* printed after the options (examples, environment); may be NULL */
};

#define CLI_CONTINUE (-1)
/* Parse argv[1..argc-1] (argv[0] is the subcommand's name). Returns CLI_CONTINUE when the
 * command should run, else the exit code: 0 after --help, 2 after a usage error (printed). */
int cli_parse(const struct cli_cmd *c, int argc, char **argv);
/* "nvhcq CMD: <message>" + a pointer to --help on stderr; returns 2 (usage errors). */
int cli_usage_error(const struct cli_cmd *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "nvhcq CMD: <message>" on stderr; returns 1 (runtime failures). */
int cli_fail(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A failure about file `path`: "nvhcq CMD: WHAT PATH: <hcq_last_error()>", the path left
 * out where the library's message already names it; returns 1. */
int cli_fail_file(const char *cmd, const char *what, const char *path);

/* The build's commit: $NVHCQ_COMMIT, else asked of git at run time, else "unknown". */
void cli_commit(char *out, size_t out_B);
/* Read a whole text file ("-": stdin) into a NUL-terminated malloc'ed string; on failure
 * prints "nvhcq CMD: PATH: reason" and returns NULL. */
char *cli_read_text(const char *cmd, const char *path, size_t *len_out);
/* Write `s` as a JSON string literal (quotes and escapes). */
void cli_json_str(FILE *f, const char *s);

#endif /* NVHCQ_CLI_H */
