/* SPDX-License-Identifier: MIT */
/*
 * llm_jinja_parse.h - the parser state and the helpers shared by llm_jinja_lex.c (arena,
 * lexer, token helpers), llm_jinja_expr.c (expressions) and llm_jinja_parse.c (statements,
 * entry). Layer: llm (internal header).
 */
#ifndef LLM_JINJA_PARSE_H
#define LLM_JINJA_PARSE_H

#include "llm_jinja.h"

enum tk { TK_EOF, TK_END, TK_NAME, TK_STR, TK_INT, TK_FLOAT, TK_OP };

struct tok {
    enum tk t;
    const char *p; /* TK_NAME / TK_OP: in the source; TK_STR: arena, unescaped */
    size_t n;
    int64_t i;
    double f;
    size_t at;
};

struct parser {
    const char *src;
    size_t len, pos;
    struct jj_arena *ar;
    struct tok cur;
    char end_ch;    /* '}' for {{ }}, '%' for {% %} */
    bool end_strip; /* the tag that ended last had '-' */
    bool end_block; /* ... and was a block tag (trim_blocks applies) */
    int depth, brackets;
    size_t *line_starts; /* offsets where lines start (jp_pos_of builds it) */
    size_t n_lines;
    /* calls of names that are neither built-in nor (yet) a macro: checked once parsed */
    struct jj_expr **calls;
    size_t n_calls, cap_calls;
    const char **macros;
    size_t n_macros, cap_macros;
    enum hcq_status st;
    char err[400];
};

/* line and column (from 1) of source offset `at` */
void jp_pos_of(struct parser *p, size_t at, uint32_t *line, uint32_t *col);
/* Records the first error (status, line:column of `at`) and returns false. */
bool jp_fail(struct parser *p, enum hcq_status st, size_t at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
bool jp_oom(struct parser *p);
bool jp_is_space(char ch);
bool jp_is_ident0(char ch);
bool jp_is_digit(char ch);
char *jp_dup_n(struct parser *p, const char *s, size_t n);
/* Next token inside a tag; TK_END at the tag's end (consumed, with its '-'). */
bool jp_next(struct parser *p);
bool jp_is_op(const struct parser *p, const char *op);
bool jp_is_kw(const struct parser *p, const char *kw);
const char *jp_tok_desc(const struct parser *p, char *buf, size_t cap);
bool jp_expect_op(struct parser *p, const char *op);
bool jp_expect_end(struct parser *p);
const char *jp_take_name(struct parser *p);
/* Appends x to the arena array *v (*n used of *cap). */
bool jp_remember(struct parser *p, void ***v, size_t *n, size_t *cap, void *x);
struct jj_expr *jp_new_expr(struct parser *p, enum jj_expr_kind k, size_t at);
/* a if cond [else b], and everything below it */
struct jj_expr *jp_parse_expr(struct parser *p);
/* or-expressions (no inline if: for loops' iterable and filter) */
struct jj_expr *jp_parse_or(struct parser *p);

#endif
