/* SPDX-License-Identifier: MIT */
/*
 * llm_jinja_expr.c - expressions of the chat-template Jinja subset with Jinja's precedence
 * (inline if < or < and < not < comparisons and in < + - < ~ < * / // % < ** < unary <
 * filters and tests < postfix . [] [:] () < literals); unknown filters, tests and methods
 * are refused here, naming them and their position. Layer: llm.
 */
#include "llm_jinja_parse.h"

#include <string.h>

/* ==== expressions ==== */

struct jj_expr *
jp_new_expr(struct parser *p, enum jj_expr_kind k, size_t at)
{
    struct jj_expr *e = jj_alloc(p->ar, sizeof *e);
    if (!e) {
        jp_oom(p);
        return NULL;
    }
    e->kind = k;
    e->fn = -1;
    jp_pos_of(p, at, &e->line, &e->col);
    return e;
}

/* Arguments after '(' up to ')': positional and name=value. */
static bool
parse_args(struct parser *p, struct jj_expr *e)
{
    size_t cap = 0;
    if (!jp_next(p))
        return false;
    while (!jp_is_op(p, ")")) {
        if (e->n_args == cap) {
            size_t nc = cap ? cap * 2 : 4;
            struct jj_expr **na = jj_alloc(p->ar, nc * sizeof *na);
            const char **nk = jj_alloc(p->ar, nc * sizeof *nk);
            if (!na || !nk)
                return jp_oom(p);
            if (cap) {
                memcpy(na, e->args, cap * sizeof *na);
                memcpy(nk, e->kw_names, cap * sizeof *nk);
            }
            e->args = na;
            e->kw_names = nk;
            cap = nc;
        }
        const char *kw = NULL;
        if (p->cur.t == TK_NAME) {
            /* name=value: look ahead one token without consuming it */
            size_t save = p->pos;
            struct tok t = p->cur;
            size_t j = p->pos;
            while (j < p->len && jp_is_space(p->src[j]))
                j++;
            if (j < p->len && p->src[j] == '=' && (j + 1 >= p->len || p->src[j + 1] != '=')) {
                if (!(kw = jp_dup_n(p, t.p, t.n)))
                    return jp_oom(p);
                p->pos = j + 1;
                if (!jp_next(p))
                    return false;
            } else {
                p->pos = save;
                p->cur = t;
            }
        }
        struct jj_expr *a = jp_parse_expr(p);
        if (!a)
            return false;
        e->kw_names[e->n_args] = kw;
        e->args[e->n_args++] = a;
        if (!jp_is_op(p, ","))
            break;
        if (!jp_next(p))
            return false;
    }
    return jp_expect_op(p, ")");
}

static struct jj_expr *
parse_seq(struct parser *p, struct jj_expr *e, const char *close, bool dict)
{
    size_t cap = 0;
    if (!jp_next(p))
        return NULL;
    while (!jp_is_op(p, close)) {
        if (e->n_args + 2 > cap) {
            size_t nc = cap ? cap * 2 : 8;
            struct jj_expr **na = jj_alloc(p->ar, nc * sizeof *na);
            if (!na) {
                jp_oom(p);
                return NULL;
            }
            if (cap)
                memcpy(na, e->args, cap * sizeof *na);
            e->args = na;
            cap = nc;
        }
        struct jj_expr *a = jp_parse_expr(p);
        if (!a)
            return NULL;
        e->args[e->n_args++] = a;
        if (dict) {
            if (!jp_expect_op(p, ":") || !(a = jp_parse_expr(p)))
                return NULL;
            e->args[e->n_args++] = a;
        }
        if (!jp_is_op(p, ","))
            break;
        if (!jp_next(p))
            return NULL;
    }
    return jp_expect_op(p, close) ? e : NULL;
}

static struct jj_expr *
parse_primary(struct parser *p)
{
    size_t at = p->cur.at;
    char b[64];
    struct jj_expr *e;
    switch (p->cur.t) {
    case TK_STR: {
        if (!(e = jp_new_expr(p, JE_LIT, at)))
            return NULL;
        /* adjacent literals concatenate, as in Python */
        const char *s = p->cur.p;
        size_t n = p->cur.n;
        if (!jp_next(p))
            return NULL;
        while (p->cur.t == TK_STR) {
            char *d = jj_alloc(p->ar, n + p->cur.n + 1);
            if (!d) {
                jp_oom(p);
                return NULL;
            }
            memcpy(d, s, n);
            memcpy(d + n, p->cur.p, p->cur.n);
            s = d;
            n += p->cur.n;
            if (!jp_next(p))
                return NULL;
        }
        e->val = (struct jj_val){.t = JJ_STR, .u.s = {s, n}};
        return e;
    }
    case TK_INT:
    case TK_FLOAT:
        if (!(e = jp_new_expr(p, JE_LIT, at)))
            return NULL;
        e->val = p->cur.t == TK_INT ? (struct jj_val){.t = JJ_INT, .u.i = p->cur.i}
                                    : (struct jj_val){.t = JJ_FLOAT, .u.f = p->cur.f};
        return jp_next(p) ? e : NULL;
    case TK_NAME:
        if (!(e = jp_new_expr(p, JE_LIT, at)))
            return NULL;
        if (jp_is_kw(p, "true") || jp_is_kw(p, "True"))
            e->val = (struct jj_val){.t = JJ_BOOL, .u.b = true};
        else if (jp_is_kw(p, "false") || jp_is_kw(p, "False"))
            e->val = (struct jj_val){.t = JJ_BOOL, .u.b = false};
        else if (jp_is_kw(p, "none") || jp_is_kw(p, "None"))
            e->val = (struct jj_val){.t = JJ_NONE};
        else {
            e->kind = JE_NAME;
            return (e->name = jp_take_name(p)) ? e : NULL;
        }
        return jp_next(p) ? e : NULL;
    case TK_OP:
        if (jp_is_op(p, "(")) {
            if (!jp_next(p) || !(e = jp_parse_expr(p)))
                return NULL;
            if (jp_is_op(p, ",")) { /* a tuple: behaves as a list */
                struct jj_expr *t = jp_new_expr(p, JE_TUPLE, at);
                if (!t)
                    return NULL;
                size_t cap = 8;
                if (!(t->args = jj_alloc(p->ar, cap * sizeof *t->args))) {
                    jp_oom(p);
                    return NULL;
                }
                t->args[t->n_args++] = e;
                while (jp_is_op(p, ",")) {
                    if (!jp_next(p))
                        return NULL;
                    if (jp_is_op(p, ")"))
                        break;
                    if (t->n_args == cap) {
                        struct jj_expr **na = jj_alloc(p->ar, 2 * cap * sizeof *na);
                        if (!na) {
                            jp_oom(p);
                            return NULL;
                        }
                        memcpy(na, t->args, cap * sizeof *na);
                        t->args = na;
                        cap *= 2;
                    }
                    if (!(t->args[t->n_args++] = jp_parse_expr(p)))
                        return NULL;
                }
                e = t;
            }
            return jp_expect_op(p, ")") ? e : NULL;
        }
        if (jp_is_op(p, "["))
            return (e = jp_new_expr(p, JE_LIST, at)) ? parse_seq(p, e, "]", false) : NULL;
        if (jp_is_op(p, "{"))
            return (e = jp_new_expr(p, JE_DICT, at)) ? parse_seq(p, e, "}", true) : NULL;
        break;
    default:
        break;
    }
    jp_fail(p, HCQ_ERR_FORMAT, at, "expected an expression, found %s", jp_tok_desc(p, b, sizeof b));
    return NULL;
}

bool
jp_remember(struct parser *p, void ***v, size_t *n, size_t *cap, void *x)
{
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 16;
        void **nv = jj_alloc(p->ar, nc * sizeof *nv);
        if (!nv)
            return jp_oom(p);
        if (*n)
            memcpy(nv, *v, *n * sizeof *nv);
        *v = nv;
        *cap = nc;
    }
    (*v)[(*n)++] = x;
    return true;
}

static struct jj_expr *
parse_postfix(struct parser *p, struct jj_expr *e)
{
    while (e) {
        size_t at = p->cur.at;
        if (jp_is_op(p, ".")) {
            if (!jp_next(p))
                return NULL;
            if (p->cur.t == TK_INT) { /* x.0 : index */
                struct jj_expr *x = jp_new_expr(p, JE_INDEX, at), *lit = jp_new_expr(p, JE_LIT, at);
                if (!x || !lit)
                    return NULL;
                lit->val = (struct jj_val){.t = JJ_INT, .u.i = p->cur.i};
                x->a = e;
                x->b = lit;
                e = x;
                if (!jp_next(p))
                    return NULL;
                continue;
            }
            size_t name_at = p->cur.at;
            const char *name = jp_take_name(p);
            if (!name)
                return NULL;
            if (jp_is_op(p, "(")) {
                struct jj_expr *m = jp_new_expr(p, JE_METHOD, at);
                if (!m)
                    return NULL;
                m->a = e;
                m->name = name;
                if ((m->fn = jj_method_find(name)) < 0) {
                    jp_fail(p, HCQ_ERR_UNSUPPORTED, name_at, "unsupported method '.%s()'", name);
                    return NULL;
                }
                if (!parse_args(p, m))
                    return NULL;
                e = m;
            } else {
                struct jj_expr *x = jp_new_expr(p, JE_ATTR, at);
                if (!x)
                    return NULL;
                x->a = e;
                x->name = name;
                e = x;
            }
        } else if (jp_is_op(p, "[")) {
            if (!jp_next(p))
                return NULL;
            struct jj_expr *parts[3] = {NULL, NULL, NULL};
            int k = 0;
            bool slice = false;
            for (;;) {
                if (!jp_is_op(p, ":") && !jp_is_op(p, "]") && !(parts[k] = jp_parse_expr(p)))
                    return NULL;
                if (jp_is_op(p, ":") && k < 2) {
                    slice = true;
                    k++;
                    if (!jp_next(p))
                        return NULL;
                    continue;
                }
                break;
            }
            if (!jp_expect_op(p, "]"))
                return NULL;
            if (!slice && !parts[0]) {
                jp_fail(p, HCQ_ERR_FORMAT, at, "empty subscript []");
                return NULL;
            }
            struct jj_expr *x = jp_new_expr(p, slice ? JE_SLICE : JE_INDEX, at);
            if (!x)
                return NULL;
            x->a = e;
            if (slice) {
                x->args = jj_alloc(p->ar, 3 * sizeof *x->args);
                if (!x->args) {
                    jp_oom(p);
                    return NULL;
                }
                memcpy(x->args, parts, sizeof parts);
                x->n_args = 3;
            } else {
                x->b = parts[0];
            }
            e = x;
        } else if (jp_is_op(p, "(")) {
            if (e->kind != JE_NAME) {
                jp_fail(p, HCQ_ERR_UNSUPPORTED, at, "unsupported call of a computed value");
                return NULL;
            }
            e->kind = JE_CALL;
            e->fn = jj_func_find(e->name);
            if (e->fn < 0 && !jp_remember(p, (void ***)&p->calls, &p->n_calls, &p->cap_calls, e))
                return NULL;
            if (!parse_args(p, e))
                return NULL;
        } else {
            break;
        }
    }
    return e;
}

static struct jj_expr *parse_unary(struct parser *p, bool with_filter);

/* x | f(args) | g ... and x is [not] test(args) */
static struct jj_expr *
parse_filters(struct parser *p, struct jj_expr *e)
{
    while (e) {
        size_t at = p->cur.at;
        if (jp_is_op(p, "|")) {
            if (!jp_next(p))
                return NULL;
            size_t name_at = p->cur.at;
            struct jj_expr *f = jp_new_expr(p, JE_FILTER, at);
            if (!f || !(f->name = jp_take_name(p)))
                return NULL;
            if ((f->fn = jj_filter_find(f->name)) < 0) {
                jp_fail(p, HCQ_ERR_UNSUPPORTED, name_at, "unsupported filter '%s'", f->name);
                return NULL;
            }
            f->a = e;
            if (jp_is_op(p, "(") && !parse_args(p, f))
                return NULL;
            e = f;
        } else if (jp_is_kw(p, "is")) {
            if (!jp_next(p))
                return NULL;
            struct jj_expr *t = jp_new_expr(p, JE_TEST, at);
            if (!t)
                return NULL;
            if (jp_is_kw(p, "not")) {
                t->negate = true;
                if (!jp_next(p))
                    return NULL;
            }
            size_t name_at = p->cur.at;
            /* `is none` / `is true`: the literal names are test names here */
            if (!(t->name = jp_take_name(p)))
                return NULL;
            if ((t->fn = jj_test_find(t->name)) < 0) {
                jp_fail(p, HCQ_ERR_UNSUPPORTED, name_at, "unsupported test 'is %s'", t->name);
                return NULL;
            }
            t->a = e;
            if (jp_is_op(p, "(")) {
                if (!parse_args(p, t))
                    return NULL;
            } else if (p->cur.t == TK_STR || p->cur.t == TK_INT || p->cur.t == TK_FLOAT ||
                       (p->cur.t == TK_NAME && !jp_is_kw(p, "and") && !jp_is_kw(p, "or") &&
                        !jp_is_kw(p, "else") && !jp_is_kw(p, "if") && !jp_is_kw(p, "in") &&
                        !jp_is_kw(p, "not") && !jp_is_kw(p, "is"))) {
                /* `is equalto 5`: one argument without parentheses */
                struct jj_expr *a = parse_unary(p, false);
                if (!a || !(t->args = jj_alloc(p->ar, sizeof *t->args)))
                    return a ? (jp_oom(p), NULL) : NULL;
                t->args[0] = a;
                t->n_args = 1;
            }
            e = t;
        } else {
            break;
        }
    }
    return e;
}

static struct jj_expr *
parse_unary(struct parser *p, bool with_filter)
{
    if (++p->depth > JJ_MAX_DEPTH) {
        jp_fail(p, HCQ_ERR_UNSUPPORTED, p->cur.at, "expression nested deeper than %d", JJ_MAX_DEPTH);
        return NULL;
    }
    size_t at = p->cur.at;
    struct jj_expr *e;
    if (jp_is_op(p, "-") || jp_is_op(p, "+")) {
        bool neg = jp_is_op(p, "-");
        if (!jp_next(p) || !(e = jp_new_expr(p, JE_UNARY, at)) || !(e->a = parse_unary(p, false)))
            return NULL;
        e->op = neg ? JO_NEG : JO_POS;
    } else {
        e = parse_postfix(p, parse_primary(p));
    }
    if (e && with_filter)
        e = parse_filters(p, e);
    p->depth--;
    return e;
}

static struct jj_expr *
binary(struct parser *p, size_t at, enum jj_op op, struct jj_expr *a, struct jj_expr *b)
{
    if (!a || !b)
        return NULL;
    struct jj_expr *e = jp_new_expr(p, JE_BINARY, at);
    if (e) {
        e->op = op;
        e->a = a;
        e->b = b;
    }
    return e;
}

static struct jj_expr *
parse_pow(struct parser *p)
{
    struct jj_expr *e = parse_unary(p, true);
    while (e && jp_is_op(p, "**")) {
        size_t at = p->cur.at;
        e = jp_next(p) ? binary(p, at, JO_POW, e, parse_unary(p, true)) : NULL;
    }
    return e;
}

static struct jj_expr *
parse_math2(struct parser *p)
{
    struct jj_expr *e = parse_pow(p);
    while (e) {
        enum jj_op op = jp_is_op(p, "*")    ? JO_MUL
                        : jp_is_op(p, "/")  ? JO_DIV
                        : jp_is_op(p, "//") ? JO_FLOORDIV
                        : jp_is_op(p, "%")  ? JO_MOD
                                            : JO_NONE;
        if (op == JO_NONE)
            break;
        size_t at = p->cur.at;
        e = jp_next(p) ? binary(p, at, op, e, parse_pow(p)) : NULL;
    }
    return e;
}

static struct jj_expr *
parse_concat(struct parser *p)
{
    struct jj_expr *e = parse_math2(p);
    while (e && jp_is_op(p, "~")) {
        size_t at = p->cur.at;
        e = jp_next(p) ? binary(p, at, JO_CONCAT, e, parse_math2(p)) : NULL;
    }
    return e;
}

static struct jj_expr *
parse_math1(struct parser *p)
{
    struct jj_expr *e = parse_concat(p);
    while (e && (jp_is_op(p, "+") || jp_is_op(p, "-"))) {
        size_t at = p->cur.at;
        enum jj_op op = jp_is_op(p, "+") ? JO_ADD : JO_SUB;
        e = jp_next(p) ? binary(p, at, op, e, parse_concat(p)) : NULL;
    }
    return e;
}

static struct jj_expr *
parse_compare(struct parser *p)
{
    struct jj_expr *e = parse_math1(p), *right = NULL;
    while (e) {
        size_t at = p->cur.at;
        enum jj_op op = jp_is_op(p, "==")   ? JO_EQ
                        : jp_is_op(p, "!=") ? JO_NE
                        : jp_is_op(p, "<")  ? JO_LT
                        : jp_is_op(p, "<=") ? JO_LE
                        : jp_is_op(p, ">")  ? JO_GT
                        : jp_is_op(p, ">=") ? JO_GE
                        : jp_is_kw(p, "in") ? JO_IN
                                            : JO_NONE;
        if (op == JO_NONE && jp_is_kw(p, "not")) {
            /* `a not in b` (a bare `not` here would be a syntax error anyway) */
            size_t save = p->pos;
            struct tok t = p->cur;
            if (!jp_next(p))
                return NULL;
            if (!jp_is_kw(p, "in")) {
                p->pos = save;
                p->cur = t;
                break;
            }
            op = JO_NOTIN;
        }
        if (op == JO_NONE)
            break;
        if (!jp_next(p))
            return NULL;
        struct jj_expr *next_right = parse_math1(p);
        /* chained as in Python: a < b < c is (a < b) and (b < c) */
        e = right ? binary(p, at, JO_AND, e, binary(p, at, op, right, next_right))
                  : binary(p, at, op, e, next_right);
        right = next_right;
    }
    return e;
}

static struct jj_expr *
parse_not(struct parser *p)
{
    if (jp_is_kw(p, "not")) {
        size_t at = p->cur.at;
        if (++p->depth > JJ_MAX_DEPTH) {
            jp_fail(p, HCQ_ERR_UNSUPPORTED, at, "expression nested deeper than %d", JJ_MAX_DEPTH);
            return NULL;
        }
        struct jj_expr *e = jp_new_expr(p, JE_UNARY, at);
        if (!e || !jp_next(p) || !(e->a = parse_not(p)))
            return NULL;
        e->op = JO_NOT;
        p->depth--;
        return e;
    }
    return parse_compare(p);
}

static struct jj_expr *
parse_and(struct parser *p)
{
    struct jj_expr *e = parse_not(p);
    while (e && jp_is_kw(p, "and")) {
        size_t at = p->cur.at;
        e = jp_next(p) ? binary(p, at, JO_AND, e, parse_not(p)) : NULL;
    }
    return e;
}

struct jj_expr *
jp_parse_or(struct parser *p)
{
    struct jj_expr *e = parse_and(p);
    while (e && jp_is_kw(p, "or")) {
        size_t at = p->cur.at;
        e = jp_next(p) ? binary(p, at, JO_OR, e, parse_and(p)) : NULL;
    }
    return e;
}

/* a if cond [else b] */
struct jj_expr *
jp_parse_expr(struct parser *p)
{
    if (++p->depth > JJ_MAX_DEPTH) {
        jp_fail(p, HCQ_ERR_UNSUPPORTED, p->cur.at, "expression nested deeper than %d", JJ_MAX_DEPTH);
        return NULL;
    }
    struct jj_expr *e = jp_parse_or(p);
    while (e && jp_is_kw(p, "if")) {
        struct jj_expr *c = jp_new_expr(p, JE_COND, p->cur.at);
        if (!c || !jp_next(p) || !(c->a = jp_parse_or(p)))
            return NULL;
        c->b = e;
        if (jp_is_kw(p, "else")) {
            /* right-associative: a if b else c if d else e */
            if (!jp_next(p) || !(c->c = jp_parse_expr(p)))
                return NULL;
        }
        e = c;
    }
    p->depth--;
    return e;
}
