/* SPDX-License-Identifier: MIT */
/*
 * llm_jinja_lex.c - the arena every parse and render allocates from (a byte cap, freed at
 * once) and the lexer of the chat-template Jinja subset: tokens inside {{ }} and {% %},
 * Python string escapes, numbers, operators, the tag's end with its whitespace '-'.
 * Layer: llm.
 */
#include "llm_jinja_parse.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ==== arena ==== */

struct jj_chunk {
    struct jj_chunk *next;
    size_t size_B, used_B;
    _Alignas(16) unsigned char mem[];
};

void
jj_arena_init(struct jj_arena *a, size_t cap_B)
{
    memset(a, 0, sizeof *a);
    a->cap_B = cap_B;
}

void
jj_arena_fini(struct jj_arena *a)
{
    for (struct jj_chunk *c = a->head, *n; c; c = n) {
        n = c->next;
        free(c);
    }
    a->head = NULL;
    a->used_B = 0;
}

void *
jj_alloc(struct jj_arena *a, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (!n)
        n = 16;
    struct jj_chunk *c = a->head;
    if (!c || c->size_B - c->used_B < n) {
        size_t sz = n > (64u << 10) ? n : (64u << 10);
        if (n > a->cap_B || a->used_B > a->cap_B - sz)
            return NULL;
        if (!(c = malloc(sizeof *c + sz)))
            return NULL;
        c->size_B = sz;
        c->used_B = 0;
        c->next = a->head;
        a->head = c;
        a->used_B += sz;
    }
    void *p = c->mem + c->used_B;
    c->used_B += n;
    memset(p, 0, n);
    return p;
}

/* ==== lexer ==== */

void
jp_pos_of(struct parser *p, size_t at, uint32_t *line, uint32_t *col)
{
    /* the line starts, found once: a scan from the start for each node would make a large
     * template quadratic to load */
    if (!p->line_starts) {
        size_t n = 1;
        for (size_t i = 0; i < p->len; i++)
            n += p->src[i] == '\n';
        if (!(p->line_starts = jj_alloc(p->ar, n * sizeof *p->line_starts))) {
            *line = *col = 0; /* out of memory: positions unknown, the parse fails soon anyway */
            return;
        }
        p->n_lines = 0;
        p->line_starts[p->n_lines++] = 0;
        for (size_t i = 0; i < p->len; i++)
            if (p->src[i] == '\n')
                p->line_starts[p->n_lines++] = i + 1;
    }
    size_t lo = 0, hi = p->n_lines; /* the last line start <= at */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (p->line_starts[mid] <= at)
            lo = mid;
        else
            hi = mid;
    }
    *line = (uint32_t)(lo + 1);
    *col = (uint32_t)(at - p->line_starts[lo] + 1);
}

bool __attribute__((format(printf, 4, 5)))
jp_fail(struct parser *p, enum hcq_status st, size_t at, const char *fmt, ...)
{
    if (p->st)
        return false;
    uint32_t l, c;
    jp_pos_of(p, at, &l, &c);
    int k = snprintf(p->err, sizeof p->err, "line %u col %u: ", l, c);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->err + k, sizeof p->err - (size_t)k, fmt, ap);
    va_end(ap);
    p->st = st;
    return false;
}

bool
jp_oom(struct parser *p)
{
    return jp_fail(p, HCQ_ERR_NOMEM, p->pos, "out of memory (template too large)");
}

bool
jp_is_space(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f' || ch == '\v';
}
bool
jp_is_ident0(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_';
}
bool
jp_is_digit(char ch)
{
    return ch >= '0' && ch <= '9';
}

char *
jp_dup_n(struct parser *p, const char *s, size_t n)
{
    char *d = jj_alloc(p->ar, n + 1);
    if (d)
        memcpy(d, s, n);
    return d;
}

/* Reads a quoted string literal at p->pos (Python escapes). */
static bool
lex_string(struct parser *p)
{
    char q = p->src[p->pos];
    size_t start = p->pos++, end = p->pos;
    while (end < p->len && p->src[end] != q)
        end += p->src[end] == '\\' ? 2 : 1;
    if (end >= p->len)
        return jp_fail(p, HCQ_ERR_FORMAT, start, "unterminated string literal");
    char *d = jj_alloc(p->ar, end - p->pos + 1);
    size_t n = 0;
    if (!d)
        return jp_oom(p);
    while (p->pos < end) {
        char ch = p->src[p->pos++];
        if (ch == '\\' && p->pos < end) {
            char e = p->src[p->pos++];
            switch (e) {
            case 'n':
                ch = '\n';
                break;
            case 't':
                ch = '\t';
                break;
            case 'r':
                ch = '\r';
                break;
            case '\\':
                ch = '\\';
                break;
            case '\'':
                ch = '\'';
                break;
            case '"':
                ch = '"';
                break;
            case '0':
                ch = 0;
                break;
            case '\n':
                continue;
            default:
                d[n++] = '\\';
                ch = e;
            }
        }
        d[n++] = ch;
    }
    p->pos = end + 1;
    p->cur = (struct tok){.t = TK_STR, .p = d, .n = n, .at = start};
    return true;
}

/* Next token inside a tag; TK_END at the tag's end (consumed, with its '-'). */
bool
jp_next(struct parser *p)
{
    while (p->pos < p->len && jp_is_space(p->src[p->pos]))
        p->pos++;
    size_t at = p->pos;
    const char *s = p->src + at;
    size_t left = p->len - at;
    if (!left)
        return jp_fail(p, HCQ_ERR_FORMAT, at, "unterminated tag (the template ends inside it)");
    /* the tag's end: -}} -%} }} %} (a '}' closes a dict literal while one is open) */
    size_t dash = s[0] == '-' ? 1 : 0;
    if (left > dash + 1 && s[dash] == p->end_ch && s[dash + 1] == '}' && (p->end_ch == '%' || !p->brackets)) {
        p->pos += dash + 2;
        p->end_strip = dash;
        p->cur = (struct tok){.t = TK_END, .at = at};
        return true;
    }
    if (jp_is_ident0(s[0])) {
        size_t n = 1;
        while (n < left && (jp_is_ident0(s[n]) || jp_is_digit(s[n])))
            n++;
        p->pos += n;
        p->cur = (struct tok){.t = TK_NAME, .p = s, .n = n, .at = at};
        return true;
    }
    if (jp_is_digit(s[0])) {
        size_t n = 0;
        int64_t v = 0;
        while (n < left && (jp_is_digit(s[n]) || s[n] == '_')) {
            if (s[n] != '_') {
                if (v > (INT64_MAX - 9) / 10)
                    return jp_fail(p, HCQ_ERR_UNSUPPORTED, at, "integer literal too large");
                v = v * 10 + (s[n] - '0');
            }
            n++;
        }
        bool frac = n + 1 < left && s[n] == '.' && jp_is_digit(s[n + 1]);
        size_t m = n + (frac ? 1 : 0);
        while (frac && m < left && jp_is_digit(s[m]))
            m++;
        /* exponent: 1e3, 2.5E-2 */
        size_t x = m < left && (s[m] == 'e' || s[m] == 'E') ? m + 1 : 0;
        if (x && x < left && (s[x] == '+' || s[x] == '-'))
            x++;
        bool expo = x && x < left && jp_is_digit(s[x]);
        if (expo)
            for (m = x; m < left && jp_is_digit(s[m]);)
                m++;
        if (frac || expo) {
            char buf[64];
            if (m >= sizeof buf)
                return jp_fail(p, HCQ_ERR_UNSUPPORTED, at, "float literal too long");
            memcpy(buf, s, m);
            buf[m] = 0;
            p->pos += m;
            p->cur = (struct tok){.t = TK_FLOAT, .f = strtod(buf, NULL), .at = at};
            return true;
        }
        p->pos += n;
        p->cur = (struct tok){.t = TK_INT, .i = v, .at = at};
        return true;
    }
    if (s[0] == '\'' || s[0] == '"')
        return lex_string(p);
    static const char *const ops2[] = {"==", "!=", "<=", ">=", "//", "**"};
    for (size_t k = 0; k < sizeof ops2 / sizeof ops2[0]; k++)
        if (left >= 2 && !memcmp(s, ops2[k], 2)) {
            p->pos += 2;
            p->cur = (struct tok){.t = TK_OP, .p = s, .n = 2, .at = at};
            return true;
        }
    if (strchr("+-*/%~<>=()[]{},.:|", s[0])) {
        if (s[0] == '(' || s[0] == '[' || s[0] == '{')
            p->brackets++;
        else if ((s[0] == ')' || s[0] == ']' || s[0] == '}') && p->brackets > 0)
            p->brackets--;
        p->pos++;
        p->cur = (struct tok){.t = TK_OP, .p = s, .n = 1, .at = at};
        return true;
    }
    return jp_fail(p, HCQ_ERR_UNSUPPORTED, at, "unexpected character '%c' in a tag", s[0]);
}

bool
jp_is_op(const struct parser *p, const char *op)
{
    size_t n = strlen(op);
    return p->cur.t == TK_OP && p->cur.n == n && !memcmp(p->cur.p, op, n);
}
bool
jp_is_kw(const struct parser *p, const char *kw)
{
    size_t n = strlen(kw);
    return p->cur.t == TK_NAME && p->cur.n == n && !memcmp(p->cur.p, kw, n);
}

const char *
jp_tok_desc(const struct parser *p, char *buf, size_t cap)
{
    switch (p->cur.t) {
    case TK_EOF:
        return "the end of the template";
    case TK_END:
        return "the end of the tag";
    case TK_STR:
        return "a string";
    case TK_INT:
    case TK_FLOAT:
        return "a number";
    default:
        snprintf(buf, cap, "'%.*s'", (int)(p->cur.n > 40 ? 40 : p->cur.n), p->cur.p);
        return buf;
    }
}

bool
jp_expect_op(struct parser *p, const char *op)
{
    char b[64];
    if (!jp_is_op(p, op))
        return jp_fail(p, HCQ_ERR_FORMAT, p->cur.at, "expected '%s', found %s", op,
                       jp_tok_desc(p, b, sizeof b));
    return jp_next(p);
}

bool
jp_expect_end(struct parser *p)
{
    char b[64];
    if (p->cur.t != TK_END)
        return jp_fail(p, HCQ_ERR_FORMAT, p->cur.at, "expected the end of the tag, found %s",
                       jp_tok_desc(p, b, sizeof b));
    return true;
}

const char *
jp_take_name(struct parser *p)
{
    char b[64];
    if (p->cur.t != TK_NAME) {
        jp_fail(p, HCQ_ERR_FORMAT, p->cur.at, "expected a name, found %s", jp_tok_desc(p, b, sizeof b));
        return NULL;
    }
    const char *n = jp_dup_n(p, p->cur.p, p->cur.n);
    if (!n) {
        jp_oom(p);
        return NULL;
    }
    return jp_next(p) ? n : NULL;
}
