/* SPDX-License-Identifier: MIT */
/*
 * llm_jinja_value.c - the values of the chat-template Jinja subset and their conversions:
 * names of the builtins, lists and dicts in the render's arena, equality, truth, str() as
 * Python prints values, JSON as HF's tojson writes it (json.dumps, ensure_ascii=False).
 * Strings are UTF-8. Layer: llm.
 */
#include "llm_jinja.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ==== names ==== */

const char *const jj_filter_names[F_N] = {"abs",     "capitalize", "count",  "d",     "default", "first",
                                          "float",   "indent",     "int",    "items", "join",    "last",
                                          "length",  "list",       "lower",  "map",   "reject",  "rejectattr",
                                          "replace", "reverse",    "round",  "safe",  "select",  "selectattr",
                                          "string",  "title",      "tojson", "trim",  "unique",  "upper"};

const char *const jj_test_names[T_N] = {
    "defined",  "undefined", "none", "string", "number", "integer", "float",       "boolean", "mapping",
    "iterable", "sequence",  "true", "false",  "odd",    "even",    "divisibleby", "equalto", "eq",
    "sameas",   "ne",        "lt",   "gt",     "le",     "ge",      "in",          "lower",   "upper"};

const char *const jj_method_names[M_N] = {"strip", "lstrip", "rstrip", "split",      "startswith", "endswith",
                                          "upper", "lower",  "title",  "capitalize", "replace",    "find",
                                          "count", "join",   "items",  "keys",       "values",     "get"};

static const char *const func_names[] = {"range", "namespace", "raise_exception", "strftime_now", "dict"};

static int
find(const char *const *names, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(names[i], name))
            return i;
    return -1;
}
int
jj_filter_find(const char *name)
{
    return find(jj_filter_names, F_N, name);
}
int
jj_test_find(const char *name)
{
    return find(jj_test_names, T_N, name);
}
int
jj_method_find(const char *name)
{
    return find(jj_method_names, M_N, name);
}
int
jj_func_find(const char *name)
{
    return find(func_names, (int)(sizeof func_names / sizeof func_names[0]), name);
}

const char *
jj_type_name(enum jj_type t)
{
    static const char *const n[] = {"undefined", "none", "bool", "int",   "float",
                                    "string",    "list", "dict", "macro", "function"};
    return n[t];
}

/* ==== basic values ==== */

struct jj_val
jj_cstr(const char *p)
{
    return (struct jj_val){.t = JJ_STR, .u.s = {p, strlen(p)}};
}

struct jj_val
jj_str(struct jj_ctx *c, const char *p, size_t n)
{
    char *d = jj_alloc(&c->arena, n + 1);
    if (!d)
        return (struct jj_val){.t = JJ_UNDEF};
    if (n)
        memcpy(d, p, n);
    return (struct jj_val){.t = JJ_STR, .u.s = {d, n}};
}

static bool
nomem(struct jj_ctx *c, const struct jj_expr *e)
{
    return jj_fail(c, e, "out of memory: the render passed its %u MiB limit", JJ_MAX_ARENA_B >> 20);
}

bool
jj_truthy(struct jj_val v)
{
    switch (v.t) {
    case JJ_BOOL:
        return v.u.b;
    case JJ_INT:
        return v.u.i != 0;
    case JJ_FLOAT:
        return v.u.f != 0;
    case JJ_STR:
        return v.u.s.n != 0;
    case JJ_LIST:
        return v.u.l->n != 0;
    case JJ_DICT:
        return v.u.d->n != 0 || v.u.d->ns;
    case JJ_MACRO:
    case JJ_FUNC:
        return true;
    default:
        return false;
    }
}

/* Values nested deeper than this compare by identity (no recursion without bound). */
#define EQUAL_MAX_DEPTH 64

static bool
equal_at(struct jj_val a, struct jj_val b, int depth)
{
    if ((a.t == JJ_INT || a.t == JJ_FLOAT || a.t == JJ_BOOL) &&
        (b.t == JJ_INT || b.t == JJ_FLOAT || b.t == JJ_BOOL)) {
        if (a.t != JJ_FLOAT && b.t != JJ_FLOAT)
            return (a.t == JJ_BOOL ? a.u.b : a.u.i) == (b.t == JJ_BOOL ? b.u.b : b.u.i);
        double x = a.t == JJ_FLOAT ? a.u.f : a.t == JJ_INT ? (double)a.u.i : a.u.b;
        double y = b.t == JJ_FLOAT ? b.u.f : b.t == JJ_INT ? (double)b.u.i : b.u.b;
        return x == y;
    }
    if (a.t != b.t)
        return false;
    switch (a.t) {
    case JJ_UNDEF:
    case JJ_NONE:
        return true;
    case JJ_STR:
        return a.u.s.n == b.u.s.n && !memcmp(a.u.s.p, b.u.s.p, a.u.s.n);
    case JJ_LIST:
        if (a.u.l == b.u.l)
            return true;
        if (a.u.l->n != b.u.l->n || depth > EQUAL_MAX_DEPTH)
            return false;
        for (size_t i = 0; i < a.u.l->n; i++)
            if (!equal_at(a.u.l->v[i], b.u.l->v[i], depth + 1))
                return false;
        return true;
    case JJ_DICT:
        if (a.u.d == b.u.d)
            return true;
        if (a.u.d->n != b.u.d->n || depth > EQUAL_MAX_DEPTH)
            return false;
        for (size_t i = 0; i < a.u.d->n; i++) {
            struct jj_val o;
            struct jj_val k = a.u.d->k[i];
            if (k.t != JJ_STR || !jj_dict_get(b.u.d, k.u.s.p, k.u.s.n, &o) ||
                !equal_at(a.u.d->v[i], o, depth + 1))
                return false;
        }
        return true;
    case JJ_MACRO:
        return a.u.macro == b.u.macro;
    case JJ_FUNC:
        return a.u.i == b.u.i;
    default:
        return false;
    }
}

bool
jj_equal(struct jj_val a, struct jj_val b)
{
    return equal_at(a, b, 0);
}

bool
jj_list_push(struct jj_ctx *c, struct jj_list *l, struct jj_val v)
{
    if (l->n == l->cap) {
        size_t nc = l->cap ? l->cap * 2 : 4;
        struct jj_val *nv = jj_alloc(&c->arena, nc * sizeof *nv);
        if (!nv)
            return false;
        if (l->n)
            memcpy(nv, l->v, l->n * sizeof *nv);
        l->v = nv;
        l->cap = nc;
    }
    l->v[l->n++] = v;
    return true;
}

bool
jj_dict_get(const struct jj_dict *d, const char *k, size_t kn, struct jj_val *out)
{
    for (size_t i = 0; i < d->n; i++)
        if (d->k[i].t == JJ_STR && d->k[i].u.s.n == kn && !memcmp(d->k[i].u.s.p, k, kn)) {
            *out = d->v[i];
            return true;
        }
    return false;
}

bool
jj_dict_set(struct jj_ctx *c, struct jj_dict *d, struct jj_val k, struct jj_val v)
{
    for (size_t i = 0; i < d->n; i++)
        if (jj_equal(d->k[i], k)) {
            d->v[i] = v;
            return true;
        }
    if (d->n == d->cap) {
        size_t nc = d->cap ? d->cap * 2 : 4;
        struct jj_val *nk = jj_alloc(&c->arena, nc * sizeof *nk), *nv = jj_alloc(&c->arena, nc * sizeof *nv);
        if (!nk || !nv)
            return false;
        if (d->n) {
            memcpy(nk, d->k, d->n * sizeof *nk);
            memcpy(nv, d->v, d->n * sizeof *nv);
        }
        d->k = nk;
        d->v = nv;
        d->cap = nc;
    }
    d->k[d->n] = k;
    d->v[d->n++] = v;
    return true;
}

size_t
jj_utf8_len(const char *p, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += ((unsigned char)p[i] & 0xC0) != 0x80;
    return k;
}

/* ==== string builder (arena) ==== */

void
jj_sb_put(struct jj_sb *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->n + n + 1 > b->cap) {
        size_t nc = b->cap ? b->cap : 64;
        while (nc < b->n + n + 1)
            nc *= 2;
        char *np = jj_alloc(&b->c->arena, nc);
        if (!np) {
            b->oom = true;
            return;
        }
        if (b->n)
            memcpy(np, b->p, b->n);
        b->p = np;
        b->cap = nc;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
}
void
jj_sb_puts(struct jj_sb *b, const char *s)
{
    jj_sb_put(b, s, strlen(s));
}
void
jj_sb_printf(struct jj_sb *b, const char *fmt, ...)
{
    char tmp[64];
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    jj_sb_put(b, tmp, k < 0 ? 0 : (size_t)k < sizeof tmp ? (size_t)k : sizeof tmp - 1);
}
bool
jj_sb_done(struct jj_sb *b, struct jj_val *out)
{
    if (b->oom)
        return false;
    *out = (struct jj_val){.t = JJ_STR, .u.s = {b->p ? b->p : "", b->n}};
    return true;
}

/* Python's repr of a float: the shortest text that reads back to the same value */
static void
put_float(struct jj_sb *b, double f)
{
    if (isnan(f)) {
        jj_sb_puts(b, "nan");
        return;
    }
    if (isinf(f)) {
        jj_sb_puts(b, f < 0 ? "-inf" : "inf");
        return;
    }
    char tmp[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*g", prec, f);
        if (strtod(tmp, NULL) == f)
            break;
    }
    jj_sb_puts(b, tmp);
    if (!strpbrk(tmp, ".en"))
        jj_sb_puts(b, ".0");
}

static void put_repr(struct jj_sb *b, struct jj_val v, int depth);

static void
put_str_repr(struct jj_sb *b, const char *p, size_t n)
{
    char q = memchr(p, '\'', n) && !memchr(p, '"', n) ? '"' : '\'';
    jj_sb_put(b, &q, 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)p[i];
        if (ch == '\\' || ch == (unsigned char)q) {
            jj_sb_put(b, "\\", 1);
            jj_sb_put(b, p + i, 1);
        } else if (ch == '\n') {
            jj_sb_puts(b, "\\n");
        } else if (ch == '\r') {
            jj_sb_puts(b, "\\r");
        } else if (ch == '\t') {
            jj_sb_puts(b, "\\t");
        } else if (ch < 0x20 || ch == 0x7f) {
            jj_sb_printf(b, "\\x%02x", ch);
        } else {
            jj_sb_put(b, p + i, 1);
        }
    }
    jj_sb_put(b, &q, 1);
}

static void
put_plain(struct jj_sb *b, struct jj_val v, int depth)
{
    switch (v.t) {
    case JJ_UNDEF:
        break;
    case JJ_NONE:
        jj_sb_puts(b, "None");
        break;
    case JJ_BOOL:
        jj_sb_puts(b, v.u.b ? "True" : "False");
        break;
    case JJ_INT:
        jj_sb_printf(b, "%lld", (long long)v.u.i);
        break;
    case JJ_FLOAT:
        put_float(b, v.u.f);
        break;
    case JJ_STR:
        jj_sb_put(b, v.u.s.p, v.u.s.n);
        break;
    case JJ_MACRO:
        jj_sb_puts(b, "<macro>");
        break;
    case JJ_FUNC:
        jj_sb_puts(b, "<function>");
        break;
    case JJ_LIST:
        if (depth > 64) {
            jj_sb_puts(b, "[...]");
            break;
        }
        jj_sb_puts(b, "[");
        for (size_t i = 0; i < v.u.l->n; i++) {
            if (i)
                jj_sb_puts(b, ", ");
            put_repr(b, v.u.l->v[i], depth + 1);
        }
        jj_sb_puts(b, "]");
        break;
    case JJ_DICT:
        if (depth > 64) {
            jj_sb_puts(b, "{...}");
            break;
        }
        jj_sb_puts(b, v.u.d->ns ? "<Namespace {" : "{");
        for (size_t i = 0; i < v.u.d->n; i++) {
            if (i)
                jj_sb_puts(b, ", ");
            put_repr(b, v.u.d->k[i], depth + 1);
            jj_sb_puts(b, ": ");
            put_repr(b, v.u.d->v[i], depth + 1);
        }
        jj_sb_puts(b, v.u.d->ns ? "}>" : "}");
        break;
    }
}

static void
put_repr(struct jj_sb *b, struct jj_val v, int depth)
{
    if (v.t == JJ_STR)
        put_str_repr(b, v.u.s.p, v.u.s.n);
    else
        put_plain(b, v, depth);
}

bool
jj_to_str(struct jj_ctx *c, struct jj_val v, struct jj_val *out)
{
    if (v.t == JJ_STR) {
        *out = v;
        return true;
    }
    struct jj_sb b = {.c = c};
    put_plain(&b, v, 0);
    return jj_sb_done(&b, out);
}

/* ==== JSON (Python json.dumps(ensure_ascii=False), HF's tojson) ==== */

static bool
put_json(struct jj_ctx *c, struct jj_sb *b, struct jj_val v, int indent, int level)
{
    if (level > 64)
        return jj_fail(c, NULL, "tojson: value nested deeper than 64");
    switch (v.t) {
    case JJ_UNDEF:
        return jj_fail(c, NULL, "tojson: an undefined value is not JSON");
    case JJ_MACRO:
    case JJ_FUNC:
        return jj_fail(c, NULL, "tojson: a function is not JSON");
    case JJ_NONE:
        jj_sb_puts(b, "null");
        return true;
    case JJ_BOOL:
        jj_sb_puts(b, v.u.b ? "true" : "false");
        return true;
    case JJ_INT:
        jj_sb_printf(b, "%lld", (long long)v.u.i);
        return true;
    case JJ_FLOAT:
        if (isnan(v.u.f) || isinf(v.u.f))
            jj_sb_puts(b, isnan(v.u.f) ? "NaN" : v.u.f < 0 ? "-Infinity" : "Infinity");
        else
            put_float(b, v.u.f);
        return true;
    case JJ_STR:
        jj_sb_puts(b, "\"");
        for (size_t i = 0; i < v.u.s.n; i++) {
            unsigned char ch = (unsigned char)v.u.s.p[i];
            switch (ch) {
            case '"':
                jj_sb_puts(b, "\\\"");
                break;
            case '\\':
                jj_sb_puts(b, "\\\\");
                break;
            case '\n':
                jj_sb_puts(b, "\\n");
                break;
            case '\r':
                jj_sb_puts(b, "\\r");
                break;
            case '\t':
                jj_sb_puts(b, "\\t");
                break;
            case '\b':
                jj_sb_puts(b, "\\b");
                break;
            case '\f':
                jj_sb_puts(b, "\\f");
                break;
            default:
                if (ch < 0x20)
                    jj_sb_printf(b, "\\u%04x", ch);
                else
                    jj_sb_put(b, v.u.s.p + i, 1);
            }
        }
        jj_sb_puts(b, "\"");
        return true;
    case JJ_LIST:
    case JJ_DICT: {
        bool list = v.t == JJ_LIST;
        size_t n = list ? v.u.l->n : v.u.d->n;
        jj_sb_puts(b, list ? "[" : "{");
        for (size_t i = 0; i < n; i++) {
            if (i)
                jj_sb_puts(b, indent >= 0 ? "," : ", ");
            if (indent >= 0) {
                jj_sb_puts(b, "\n");
                for (int k = 0; k < indent * (level + 1); k++)
                    jj_sb_puts(b, " ");
            }
            if (!list) {
                struct jj_val k = v.u.d->k[i], ks;
                if (k.t != JJ_STR) {
                    if (!jj_to_str(c, k, &ks))
                        return nomem(c, NULL);
                    k = ks;
                }
                if (!put_json(c, b, k, indent, level + 1))
                    return false;
                jj_sb_puts(b, ": ");
            }
            if (!put_json(c, b, list ? v.u.l->v[i] : v.u.d->v[i], indent, level + 1))
                return false;
        }
        if (indent >= 0 && n) {
            jj_sb_puts(b, "\n");
            for (int k = 0; k < indent * level; k++)
                jj_sb_puts(b, " ");
        }
        jj_sb_puts(b, list ? "]" : "}");
        return true;
    }
    }
    return false;
}

bool
jj_to_json(struct jj_ctx *c, struct jj_val v, int indent, struct jj_val *out)
{
    struct jj_sb b = {.c = c};
    if (!put_json(c, &b, v, indent, 0))
        return false;
    return jj_sb_done(&b, out) || nomem(c, NULL);
}
