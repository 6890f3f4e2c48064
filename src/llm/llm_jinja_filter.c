/* SPDX-License-Identifier: MIT */
/*
 * llm_jinja_filter.c - what the chat-template Jinja subset can call on a value: filters
 * (trim, length, tojson, selectattr ...), tests (defined, none, string, mapping ...) and string
 * and dict methods (.strip(), .split(), .items() ...). Lengths, indices and slices count code
 * points, as Python does. Layer: llm.
 */
#include "llm_jinja.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool
nomem(struct jj_ctx *c, const struct jj_expr *e)
{
    return jj_fail(c, e, "out of memory: the render passed its %u MiB limit", JJ_MAX_ARENA_B >> 20);
}

/* ==== helpers for arguments ==== */

/* The idx-th positional argument, or the keyword argument `kw`. */
static bool
arg(const struct jj_expr *e, struct jj_val *args, size_t n, size_t idx, const char *kw, struct jj_val *out)
{
    size_t pos = 0;
    for (size_t i = 0; i < n; i++) {
        const char *k = e->kw_names ? e->kw_names[i] : NULL;
        if (k ? (kw && !strcmp(k, kw)) : pos++ == idx) {
            *out = args[i];
            return true;
        }
    }
    return false;
}

static bool
want_str(struct jj_ctx *c, const struct jj_expr *e, struct jj_val v, const char *what)
{
    if (v.t == JJ_STR)
        return true;
    return jj_fail(c, e, "%s expects a string, got %s", what, jj_type_name(v.t));
}

/* A string value of anything printable (undefined prints as ""). */
static bool
as_str(struct jj_ctx *c, const struct jj_expr *e, struct jj_val v, struct jj_val *out)
{
    if (v.t == JJ_UNDEF) {
        *out = jj_cstr("");
        return true;
    }
    return jj_to_str(c, v, out) || nomem(c, e);
}

static bool
is_ws(unsigned char ch)
{
    return ch == ' ' || (ch >= '\t' && ch <= '\r') || ch == 0x1c || ch == 0x1d || ch == 0x1e || ch == 0x1f;
}

/* strip / lstrip / rstrip with Python's meaning of chars (None: whitespace) */
static struct jj_val
strip(struct jj_val s, const struct jj_val *chars, bool left, bool right)
{
    const char *p = s.u.s.p;
    size_t a = 0, b = s.u.s.n;
    bool ws = !chars || chars->t != JJ_STR;
#define STRIPPED(ch) (ws ? is_ws((unsigned char)(ch)) : memchr(chars->u.s.p, (ch), chars->u.s.n) != NULL)
    while (left && a < b && STRIPPED(p[a]))
        a++;
    while (right && b > a && STRIPPED(p[b - 1]))
        b--;
#undef STRIPPED
    return (struct jj_val){.t = JJ_STR, .u.s = {p + a, b - a}};
}

static bool
case_map(struct jj_ctx *c, const struct jj_expr *e, struct jj_val s, int mode, struct jj_val *out)
{
    /* mode 0 upper, 1 lower, 2 title (str.title: a word starts after any non-alphanumeric), 3
     * capitalize, 4 the title filter (Jinja: a word starts after whitespace, '-', '[', '(' or '{');
     * ASCII letters only (others pass as they are) */
    char *d = jj_alloc(&c->arena, s.u.s.n + 1);
    if (!d)
        return nomem(c, e);
    bool word_start = true;
    for (size_t i = 0; i < s.u.s.n; i++) {
        char ch = s.u.s.p[i];
        bool up = mode == 0 || ((mode == 2 || mode == 4) && word_start) || (mode == 3 && i == 0);
        if (up && ch >= 'a' && ch <= 'z')
            ch = (char)(ch - 32);
        else if (!up && mode != 0 && ch >= 'A' && ch <= 'Z')
            ch = (char)(ch + 32);
        d[i] = ch;
        unsigned char u = (unsigned char)s.u.s.p[i];
        word_start = mode == 4 ? strchr(" \t\n\r\f\v-[({", u) != NULL && u
                               : !((u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') ||
                                   (u >= '0' && u <= '9') || u >= 0x80);
    }
    *out = (struct jj_val){.t = JJ_STR, .u.s = {d, s.u.s.n}};
    return true;
}

static bool
replace(struct jj_ctx *c, const struct jj_expr *e, struct jj_val s, struct jj_val from, struct jj_val to,
        struct jj_val *out)
{
    if (!want_str(c, e, from, "replace()") || !want_str(c, e, to, "replace()"))
        return false;
    struct jj_sb b = {.c = c};
    const char *p = s.u.s.p;
    size_t n = s.u.s.n, fn = from.u.s.n;
    for (size_t i = 0; i <= n;) {
        if (fn == 0) { /* Python inserts `to` between every character */
            jj_sb_put(&b, to.u.s.p, to.u.s.n);
            if (i == n)
                break;
            size_t k = 1;
            while (i + k < n && ((unsigned char)p[i + k] & 0xC0) == 0x80)
                k++;
            jj_sb_put(&b, p + i, k);
            i += k;
        } else if (i + fn <= n && !memcmp(p + i, from.u.s.p, fn)) {
            jj_sb_put(&b, to.u.s.p, to.u.s.n);
            i += fn;
        } else {
            if (i < n)
                jj_sb_put(&b, p + i, 1);
            i++;
        }
        if (b.n > JJ_MAX_OUT_B)
            return jj_fail(c, e, "replace(): result larger than %u MiB", JJ_MAX_OUT_B >> 20);
    }
    return jj_sb_done(&b, out) || nomem(c, e);
}

static bool
split(struct jj_ctx *c, const struct jj_expr *e, struct jj_val s, const struct jj_val *sep, int64_t maxsplit,
      struct jj_val *out)
{
    struct jj_list *l = jj_alloc(&c->arena, sizeof *l);
    if (!l)
        return nomem(c, e);
    const char *p = s.u.s.p;
    size_t n = s.u.s.n, i = 0;
    if (!sep || sep->t == JJ_NONE) { /* runs of whitespace, no empty pieces */
        for (;;) {
            while (i < n && is_ws((unsigned char)p[i]))
                i++;
            if (i >= n)
                break;
            size_t j = i;
            if (maxsplit >= 0 && (int64_t)l->n >= maxsplit)
                j = n;
            else
                while (j < n && !is_ws((unsigned char)p[j]))
                    j++;
            size_t end = j;
            while (j == n && end > i && is_ws((unsigned char)p[end - 1]))
                end--;
            if (!jj_list_push(c, l, (struct jj_val){.t = JJ_STR, .u.s = {p + i, end - i}}))
                return nomem(c, e);
            i = j;
        }
    } else {
        if (!want_str(c, e, *sep, "split()"))
            return false;
        size_t sn = sep->u.s.n;
        if (!sn)
            return jj_fail(c, e, "split(): empty separator");
        size_t start = 0;
        for (i = 0; i + sn <= n;) {
            if ((maxsplit < 0 || (int64_t)l->n < maxsplit) && !memcmp(p + i, sep->u.s.p, sn)) {
                if (!jj_list_push(c, l, (struct jj_val){.t = JJ_STR, .u.s = {p + start, i - start}}))
                    return nomem(c, e);
                i += sn;
                start = i;
            } else {
                i++;
            }
        }
        if (!jj_list_push(c, l, (struct jj_val){.t = JJ_STR, .u.s = {p + start, n - start}}))
            return nomem(c, e);
    }
    *out = (struct jj_val){.t = JJ_LIST, .u.l = l};
    return true;
}

static bool
items(struct jj_ctx *c, const struct jj_expr *e, struct jj_val v, int which, struct jj_val *out)
{
    if (v.t != JJ_DICT)
        return jj_fail(c, e, "items()/keys()/values() expect a dict, got %s", jj_type_name(v.t));
    struct jj_list *l = jj_alloc(&c->arena, sizeof *l);
    if (!l)
        return nomem(c, e);
    for (size_t i = 0; i < v.u.d->n; i++) {
        struct jj_val x = which == 1 ? v.u.d->k[i] : v.u.d->v[i];
        if (which == 0) {
            struct jj_list *pair = jj_alloc(&c->arena, sizeof *pair);
            if (!pair || !jj_list_push(c, pair, v.u.d->k[i]) || !jj_list_push(c, pair, v.u.d->v[i]))
                return nomem(c, e);
            x = (struct jj_val){.t = JJ_LIST, .u.l = pair};
        }
        if (!jj_list_push(c, l, x))
            return nomem(c, e);
    }
    *out = (struct jj_val){.t = JJ_LIST, .u.l = l};
    return true;
}

/* Elements of an iterable as a list (strings: characters; dicts: keys). */
static bool
as_list(struct jj_ctx *c, const struct jj_expr *e, struct jj_val v, struct jj_list **out)
{
    if (v.t == JJ_LIST) {
        *out = v.u.l;
        return true;
    }
    struct jj_list *l = jj_alloc(&c->arena, sizeof *l);
    if (!l)
        return nomem(c, e);
    if (v.t == JJ_DICT) {
        for (size_t i = 0; i < v.u.d->n; i++)
            if (!jj_list_push(c, l, v.u.d->k[i]))
                return nomem(c, e);
    } else if (v.t == JJ_STR) {
        for (size_t i = 0; i < v.u.s.n;) {
            size_t k = 1;
            while (i + k < v.u.s.n && ((unsigned char)v.u.s.p[i + k] & 0xC0) == 0x80)
                k++;
            if (!jj_list_push(c, l, (struct jj_val){.t = JJ_STR, .u.s = {v.u.s.p + i, k}}))
                return nomem(c, e);
            i += k;
        }
    } else if (v.t != JJ_UNDEF) {
        return jj_fail(c, e, "%s is not iterable", jj_type_name(v.t));
    }
    *out = l;
    return true;
}

static bool
attr_of(struct jj_val v, struct jj_val name, struct jj_val *out)
{
    *out = (struct jj_val){.t = JJ_UNDEF};
    if (v.t == JJ_DICT && name.t == JJ_STR)
        jj_dict_get(v.u.d, name.u.s.p, name.u.s.n, out);
    return true;
}

static bool run_test(struct jj_ctx *c, const struct jj_expr *e, int id, struct jj_val v, struct jj_val *args,
                     size_t n, bool *out);

/* ==== filters ==== */

static bool
select_items(struct jj_ctx *c, const struct jj_expr *e, int id, struct jj_val v, struct jj_val *args,
             size_t n, struct jj_val *out)
{
    bool by_attr = id == F_SELECTATTR || id == F_REJECTATTR, keep = id == F_SELECT || id == F_SELECTATTR;
    struct jj_list *in, *l = jj_alloc(&c->arena, sizeof *l);
    if (!l)
        return nomem(c, e);
    if (!as_list(c, e, v, &in))
        return false;
    size_t a0 = by_attr ? 1 : 0;
    struct jj_val attr = {.t = JJ_UNDEF}, test = {.t = JJ_UNDEF};
    if (by_attr && (n < 1 || args[0].t != JJ_STR))
        return jj_fail(c, e, "%s needs an attribute name", jj_filter_names[id]);
    if (by_attr)
        attr = args[0];
    int tid = -1;
    if (n > a0) {
        test = args[a0];
        if (test.t != JJ_STR)
            return jj_fail(c, e, "%s: the test name must be a string", jj_filter_names[id]);
        char name[32];
        snprintf(name, sizeof name, "%.*s", (int)(test.u.s.n < 31 ? test.u.s.n : 31), test.u.s.p);
        if ((tid = jj_test_find(name)) < 0)
            return jj_fail(c, e, "%s: unsupported test '%s'", jj_filter_names[id], name);
    }
    for (size_t i = 0; i < in->n; i++) {
        struct jj_val x = in->v[i];
        if (by_attr)
            attr_of(x, attr, &x);
        bool r;
        if (tid < 0)
            r = jj_truthy(x);
        else if (!run_test(c, e, tid, x, args + a0 + 1, n - a0 - 1, &r))
            return false;
        if (r == keep && !jj_list_push(c, l, in->v[i]))
            return nomem(c, e);
    }
    *out = (struct jj_val){.t = JJ_LIST, .u.l = l};
    return true;
}

static bool
to_int(struct jj_ctx *c, const struct jj_expr *e, struct jj_val v, struct jj_val def, struct jj_val *out)
{
    *out = def;
    if (v.t == JJ_INT)
        *out = v;
    else if (v.t == JJ_BOOL)
        *out = (struct jj_val){.t = JJ_INT, .u.i = v.u.b};
    else if (v.t == JJ_FLOAT && isfinite(v.u.f) && fabs(v.u.f) < 9e18)
        *out = (struct jj_val){.t = JJ_INT, .u.i = (int64_t)v.u.f};
    else if (v.t == JJ_STR) {
        char buf[64];
        if (v.u.s.n < sizeof buf) {
            memcpy(buf, v.u.s.p, v.u.s.n);
            buf[v.u.s.n] = 0;
            char *end;
            long long x = strtoll(buf, &end, 10);
            while (*end && is_ws((unsigned char)*end))
                end++;
            if (end != buf && !*end)
                *out = (struct jj_val){.t = JJ_INT, .u.i = x};
        }
    }
    (void)c;
    (void)e;
    return true;
}

bool
jj_apply_filter(struct jj_ctx *c, const struct jj_expr *e, struct jj_val v, struct jj_val *args, size_t n,
                struct jj_val *out)
{
    struct jj_val a, b, s;
    int id = e->fn;
    switch (id) {
    case F_ABS:
        if (v.t == JJ_INT && v.u.i != INT64_MIN)
            *out = (struct jj_val){.t = JJ_INT, .u.i = v.u.i < 0 ? -v.u.i : v.u.i};
        else if (v.t == JJ_FLOAT)
            *out = (struct jj_val){.t = JJ_FLOAT, .u.f = fabs(v.u.f)};
        else
            return jj_fail(c, e, "abs expects a number, got %s", jj_type_name(v.t));
        return true;
    case F_CAPITALIZE:
    case F_LOWER:
    case F_TITLE:
    case F_UPPER:
        return as_str(c, e, v, &s) && case_map(c, e, s,
                                               id == F_UPPER   ? 0
                                               : id == F_LOWER ? 1
                                               : id == F_TITLE ? 4
                                                               : 3,
                                               out);
    case F_TRIM:
        if (!as_str(c, e, v, &s))
            return false;
        *out = strip(s, arg(e, args, n, 0, "chars", &a) ? &a : NULL, true, true);
        return true;
    case F_COUNT:
    case F_LENGTH:
        if (v.t == JJ_STR)
            *out = (struct jj_val){.t = JJ_INT, .u.i = (int64_t)jj_utf8_len(v.u.s.p, v.u.s.n)};
        else if (v.t == JJ_LIST || v.t == JJ_DICT)
            *out = (struct jj_val){.t = JJ_INT, .u.i = (int64_t)(v.t == JJ_LIST ? v.u.l->n : v.u.d->n)};
        else if (v.t == JJ_UNDEF)
            *out = (struct jj_val){.t = JJ_INT, .u.i = 0};
        else
            return jj_fail(c, e, "length of %s", jj_type_name(v.t));
        return true;
    case F_D:
    case F_DEFAULT: {
        bool use_bool = arg(e, args, n, 1, "boolean", &b) && jj_truthy(b);
        bool missing = use_bool ? !jj_truthy(v) : v.t == JJ_UNDEF;
        if (!arg(e, args, n, 0, "default_value", &a))
            a = jj_cstr("");
        *out = missing ? a : v;
        return true;
    }
    case F_FIRST:
    case F_LAST: {
        struct jj_list *l;
        if (!as_list(c, e, v, &l))
            return false;
        *out = l->n ? l->v[id == F_FIRST ? 0 : l->n - 1] : (struct jj_val){.t = JJ_UNDEF};
        return true;
    }
    case F_FLOAT:
        if (v.t == JJ_FLOAT)
            *out = v;
        else if (v.t == JJ_INT || v.t == JJ_BOOL)
            *out = (struct jj_val){.t = JJ_FLOAT, .u.f = v.t == JJ_INT ? (double)v.u.i : v.u.b};
        else if (v.t == JJ_STR && v.u.s.n && v.u.s.n < 64) {
            char buf[64], *end;
            memcpy(buf, v.u.s.p, v.u.s.n);
            buf[v.u.s.n] = 0;
            double f = strtod(buf, &end);
            *out = (struct jj_val){.t = JJ_FLOAT, .u.f = *end ? 0.0 : f};
        } else
            *out = (struct jj_val){.t = JJ_FLOAT, .u.f = 0};
        return true;
    case F_INT:
        if (!arg(e, args, n, 0, "default", &a))
            a = (struct jj_val){.t = JJ_INT, .u.i = 0};
        return to_int(c, e, v, a, out);
    case F_INDENT: {
        int64_t w = arg(e, args, n, 0, "width", &a) && a.t == JJ_INT ? a.u.i : 4;
        bool first = arg(e, args, n, 1, "first", &b) && jj_truthy(b);
        if (w < 0 || w > 64)
            return jj_fail(c, e, "indent width %lld out of range 0..64", (long long)w);
        if (!as_str(c, e, v, &s))
            return false;
        struct jj_sb sb = {.c = c};
        char pad[65];
        memset(pad, ' ', (size_t)w);
        if (first)
            jj_sb_put(&sb, pad, (size_t)w);
        for (size_t i = 0; i < s.u.s.n; i++) {
            jj_sb_put(&sb, s.u.s.p + i, 1);
            if (s.u.s.p[i] == '\n' && i + 1 < s.u.s.n && s.u.s.p[i + 1] != '\n')
                jj_sb_put(&sb, pad, (size_t)w);
        }
        return jj_sb_done(&sb, out) || nomem(c, e);
    }
    case F_ITEMS:
        if (v.t == JJ_UNDEF) {
            struct jj_list *l = jj_alloc(&c->arena, sizeof *l);
            *out = (struct jj_val){.t = JJ_LIST, .u.l = l};
            return l || nomem(c, e);
        }
        return items(c, e, v, 0, out);
    case F_JOIN: {
        struct jj_list *l;
        bool by_attr = arg(e, args, n, 1, "attribute", &b);
        if (!arg(e, args, n, 0, "d", &a))
            a = jj_cstr("");
        if (!as_list(c, e, v, &l) || !want_str(c, e, a, "join separator"))
            return false;
        struct jj_sb sb = {.c = c};
        for (size_t i = 0; i < l->n; i++) {
            struct jj_val x = l->v[i];
            if (by_attr)
                attr_of(x, b, &x);
            if (!as_str(c, e, x, &s))
                return false;
            if (i)
                jj_sb_put(&sb, a.u.s.p, a.u.s.n);
            jj_sb_put(&sb, s.u.s.p, s.u.s.n);
            if (sb.n > JJ_MAX_OUT_B)
                return jj_fail(c, e, "join: result larger than %u MiB", JJ_MAX_OUT_B >> 20);
        }
        return jj_sb_done(&sb, out) || nomem(c, e);
    }
    case F_LIST: {
        struct jj_list *l;
        if (!as_list(c, e, v, &l))
            return false;
        *out = (struct jj_val){.t = JJ_LIST, .u.l = l};
        return true;
    }
    case F_MAP: {
        struct jj_list *in, *l = jj_alloc(&c->arena, sizeof *l);
        if (!l)
            return nomem(c, e);
        if (!as_list(c, e, v, &in))
            return false;
        bool by_attr = arg(e, args, n, 99, "attribute", &a);
        int fid = -1;
        if (!by_attr) {
            if (!arg(e, args, n, 0, NULL, &a) || a.t != JJ_STR)
                return jj_fail(c, e, "map needs attribute='name' or a filter name");
            char name[32];
            snprintf(name, sizeof name, "%.*s", (int)(a.u.s.n < 31 ? a.u.s.n : 31), a.u.s.p);
            fid = jj_filter_find(name);
            if (fid < 0 || fid == F_MAP)
                return jj_fail(c, e, "map: unsupported filter '%s'", name);
        }
        struct jj_expr fe = *e;
        fe.fn = fid;
        fe.n_args = 0;
        for (size_t i = 0; i < in->n; i++) {
            struct jj_val x = in->v[i];
            if (by_attr) {
                attr_of(x, a, &x);
                if (x.t == JJ_UNDEF)
                    arg(e, args, n, 99, "default", &x);
            } else if (!jj_apply_filter(c, &fe, x, NULL, 0, &x)) {
                return false;
            }
            if (!jj_list_push(c, l, x))
                return nomem(c, e);
        }
        *out = (struct jj_val){.t = JJ_LIST, .u.l = l};
        return true;
    }
    case F_REJECT:
    case F_REJECTATTR:
    case F_SELECT:
    case F_SELECTATTR:
        return select_items(c, e, id, v, args, n, out);
    case F_REPLACE:
        if (!as_str(c, e, v, &s))
            return false;
        if (!arg(e, args, n, 0, "old", &a) || !arg(e, args, n, 1, "new", &b))
            return jj_fail(c, e, "replace needs two arguments");
        return replace(c, e, s, a, b, out);
    case F_REVERSE: {
        if (v.t == JJ_STR) {
            struct jj_list *chars;
            if (!as_list(c, e, v, &chars))
                return false;
            struct jj_sb sb = {.c = c};
            for (size_t i = chars->n; i-- > 0;)
                jj_sb_put(&sb, chars->v[i].u.s.p, chars->v[i].u.s.n);
            return jj_sb_done(&sb, out) || nomem(c, e);
        }
        struct jj_list *in, *l = jj_alloc(&c->arena, sizeof *l);
        if (!l)
            return nomem(c, e);
        if (!as_list(c, e, v, &in))
            return false;
        for (size_t i = in->n; i-- > 0;)
            if (!jj_list_push(c, l, in->v[i]))
                return nomem(c, e);
        *out = (struct jj_val){.t = JJ_LIST, .u.l = l};
        return true;
    }
    case F_ROUND: {
        int64_t prec = arg(e, args, n, 0, "precision", &a) && a.t == JJ_INT ? a.u.i : 0;
        double x = v.t == JJ_FLOAT ? v.u.f : v.t == JJ_INT ? (double)v.u.i : 0;
        if (prec < 0 || prec > 15)
            return jj_fail(c, e, "round precision %lld out of range 0..15", (long long)prec);
        double m = pow(10, (double)prec);
        *out = (struct jj_val){.t = JJ_FLOAT, .u.f = round(x * m) / m};
        return true;
    }
    case F_SAFE:
        *out = v;
        return true;
    case F_STRING:
        return as_str(c, e, v, out);
    case F_TOJSON: {
        int64_t ind = arg(e, args, n, 0, "indent", &a) && a.t == JJ_INT ? a.u.i : -1;
        if (ind > 64)
            return jj_fail(c, e, "tojson indent %lld out of range 0..64", (long long)ind);
        if (!jj_to_json(c, v, (int)ind, out))
            return c->failed ? false : nomem(c, e);
        return true;
    }
    case F_UNIQUE: {
        struct jj_list *in, *l = jj_alloc(&c->arena, sizeof *l);
        if (!l)
            return nomem(c, e);
        if (!as_list(c, e, v, &in))
            return false;
        for (size_t i = 0; i < in->n; i++) {
            bool seen = false;
            for (size_t j = 0; j < l->n && !seen; j++)
                seen = jj_equal(l->v[j], in->v[i]);
            if (!seen && !jj_list_push(c, l, in->v[i]))
                return nomem(c, e);
        }
        *out = (struct jj_val){.t = JJ_LIST, .u.l = l};
        return true;
    }
    }
    return jj_fail(c, e, "filter %d not implemented", id);
}

/* ==== tests ==== */

static bool
num(struct jj_val v, double *out)
{
    if (v.t == JJ_INT)
        *out = (double)v.u.i;
    else if (v.t == JJ_FLOAT)
        *out = v.u.f;
    else if (v.t == JJ_BOOL)
        *out = v.u.b;
    else
        return false;
    return true;
}

static bool
run_test(struct jj_ctx *c, const struct jj_expr *e, int id, struct jj_val v, struct jj_val *args, size_t n,
         bool *out)
{
    struct jj_val a = {.t = JJ_UNDEF};
    double x, y;
    if (n)
        a = args[0];
    switch (id) {
    case T_DEFINED:
        *out = v.t != JJ_UNDEF;
        return true;
    case T_UNDEFINED:
        *out = v.t == JJ_UNDEF;
        return true;
    case T_NONE:
        *out = v.t == JJ_NONE;
        return true;
    case T_STRING:
        *out = v.t == JJ_STR;
        return true;
    case T_NUMBER: /* a bool is a number in Python */
        *out = v.t == JJ_INT || v.t == JJ_FLOAT || v.t == JJ_BOOL;
        return true;
    case T_INTEGER:
        *out = v.t == JJ_INT;
        return true;
    case T_FLOAT:
        *out = v.t == JJ_FLOAT;
        return true;
    case T_BOOLEAN:
        *out = v.t == JJ_BOOL;
        return true;
    case T_MAPPING:
        *out = v.t == JJ_DICT;
        return true;
    case T_ITERABLE:
        *out = v.t == JJ_STR || v.t == JJ_LIST || v.t == JJ_DICT || v.t == JJ_UNDEF;
        return true;
    case T_SEQUENCE: /* Jinja's undefined has a length and items, so it passes */
        *out = v.t == JJ_STR || v.t == JJ_LIST || v.t == JJ_DICT || v.t == JJ_UNDEF;
        return true;
    case T_TRUE:
        *out = v.t == JJ_BOOL && v.u.b;
        return true;
    case T_FALSE:
        *out = v.t == JJ_BOOL && !v.u.b;
        return true;
    case T_ODD:
    case T_EVEN:
    case T_DIVISIBLEBY: {
        int64_t iv = v.t == JJ_BOOL ? v.u.b : v.u.i; /* bools are 0 and 1 in Python */
        if ((v.t != JJ_INT && v.t != JJ_BOOL) || (id == T_DIVISIBLEBY && (a.t != JJ_INT || a.u.i == 0)))
            return jj_fail(c, e, "test '%s' expects integers", jj_test_names[id]);
        *out = id == T_DIVISIBLEBY ? iv % a.u.i == 0 : (iv % 2 != 0) == (id == T_ODD);
        return true;
    }
    case T_EQUALTO:
    case T_EQ:
    case T_SAMEAS:
        *out = jj_equal(v, a);
        return true;
    case T_NE:
        *out = !jj_equal(v, a);
        return true;
    case T_LT:
    case T_GT:
    case T_LE:
    case T_GE:
        if (!num(v, &x) || !num(a, &y))
            return jj_fail(c, e, "test '%s' compares numbers, got %s and %s", jj_test_names[id],
                           jj_type_name(v.t), jj_type_name(a.t));
        *out = id == T_LT ? x < y : id == T_GT ? x > y : id == T_LE ? x <= y : x >= y;
        return true;
    case T_IN: {
        *out = false;
        if (a.t == JJ_STR && v.t == JJ_STR) {
            for (size_t i = 0; i + v.u.s.n <= a.u.s.n && !*out; i++)
                *out = !memcmp(a.u.s.p + i, v.u.s.p, v.u.s.n);
        } else if (a.t == JJ_LIST) {
            for (size_t i = 0; i < a.u.l->n && !*out; i++)
                *out = jj_equal(a.u.l->v[i], v);
        } else if (a.t == JJ_DICT) {
            for (size_t i = 0; i < a.u.d->n && !*out; i++)
                *out = jj_equal(a.u.d->k[i], v);
        }
        return true;
    }
    case T_LOWER:
    case T_UPPER:
        *out = false;
        if (v.t == JJ_STR) {
            bool cased = false, ok = true;
            for (size_t i = 0; i < v.u.s.n; i++) {
                char ch = v.u.s.p[i];
                if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z')) {
                    cased = true;
                    ok &= (ch >= 'a') == (id == T_LOWER);
                }
            }
            *out = cased && ok;
        }
        return true;
    }
    return jj_fail(c, e, "test %d not implemented", id);
}

bool
jj_apply_test(struct jj_ctx *c, const struct jj_expr *e, struct jj_val v, struct jj_val *args, size_t n,
              bool *out)
{
    if (!run_test(c, e, e->fn, v, args, n, out))
        return false;
    if (e->negate)
        *out = !*out;
    return true;
}

/* ==== methods ==== */

bool
jj_apply_method(struct jj_ctx *c, const struct jj_expr *e, struct jj_val v, struct jj_val *args, size_t n,
                struct jj_val *out)
{
    struct jj_val a, b;
    int id = e->fn;
    bool on_dict = id == M_ITEMS || id == M_KEYS || id == M_VALUES || id == M_GET;
    if (on_dict) {
        if (v.t != JJ_DICT)
            return jj_fail(c, e, ".%s() on %s (dict methods need a dict)", jj_method_names[id],
                           jj_type_name(v.t));
        if (id != M_GET)
            return items(c, e, v, id == M_ITEMS ? 0 : id == M_KEYS ? 1 : 2, out);
        if (!n || args[0].t != JJ_STR)
            return jj_fail(c, e, ".get() needs a string key");
        if (!jj_dict_get(v.u.d, args[0].u.s.p, args[0].u.s.n, out))
            *out = n > 1 ? args[1] : (struct jj_val){.t = JJ_NONE};
        return true;
    }
    if (v.t != JJ_STR)
        return jj_fail(c, e, ".%s() on %s (string methods need a string)", jj_method_names[id],
                       jj_type_name(v.t));
    bool has_a = arg(e, args, n, 0, NULL, &a);
    switch (id) {
    case M_STRIP:
    case M_LSTRIP:
    case M_RSTRIP:
        *out = strip(v, has_a ? &a : NULL, id != M_RSTRIP, id != M_LSTRIP);
        return true;
    case M_SPLIT: {
        int64_t maxsplit = arg(e, args, n, 1, "maxsplit", &b) && b.t == JJ_INT ? b.u.i : -1;
        if (!has_a && arg(e, args, n, 99, "sep", &a))
            has_a = true;
        return split(c, e, v, has_a ? &a : NULL, maxsplit, out);
    }
    case M_STARTSWITH:
    case M_ENDSWITH: {
        if (!has_a)
            return jj_fail(c, e, ".%s() needs an argument", jj_method_names[id]);
        struct jj_list one = {.v = &a, .n = 1, .cap = 1}, *cands = a.t == JJ_LIST ? a.u.l : &one;
        *out = (struct jj_val){.t = JJ_BOOL, .u.b = false};
        for (size_t i = 0; i < cands->n; i++) {
            struct jj_val x = cands->v[i];
            if (!want_str(c, e, x, jj_method_names[id]))
                return false;
            if (x.u.s.n <= v.u.s.n &&
                !memcmp(v.u.s.p + (id == M_STARTSWITH ? 0 : v.u.s.n - x.u.s.n), x.u.s.p, x.u.s.n))
                out->u.b = true;
        }
        return true;
    }
    case M_UPPER:
    case M_LOWER:
    case M_TITLE:
    case M_CAPITALIZE:
        return case_map(c, e, v, id == M_UPPER ? 0 : id == M_LOWER ? 1 : id == M_TITLE ? 2 : 3, out);
    case M_REPLACE:
        if (n < 2)
            return jj_fail(c, e, ".replace() needs two arguments");
        return replace(c, e, v, args[0], args[1], out);
    case M_FIND:
    case M_COUNT: {
        if (!has_a || !want_str(c, e, a, jj_method_names[id]))
            return false;
        int64_t found = -1, count = 0;
        for (size_t i = 0; i + a.u.s.n <= v.u.s.n;) {
            if (!memcmp(v.u.s.p + i, a.u.s.p, a.u.s.n)) {
                if (found < 0)
                    found = (int64_t)jj_utf8_len(v.u.s.p, i);
                count++;
                i += a.u.s.n ? a.u.s.n : 1;
            } else {
                i++;
            }
        }
        *out = (struct jj_val){.t = JJ_INT, .u.i = id == M_FIND ? found : count};
        return true;
    }
    case M_JOIN: {
        struct jj_list *l;
        if (!has_a || !as_list(c, e, a, &l))
            return has_a ? false : jj_fail(c, e, ".join() needs a list");
        struct jj_sb sb = {.c = c};
        for (size_t i = 0; i < l->n; i++) {
            if (!want_str(c, e, l->v[i], ".join() items"))
                return false;
            if (i)
                jj_sb_put(&sb, v.u.s.p, v.u.s.n);
            jj_sb_put(&sb, l->v[i].u.s.p, l->v[i].u.s.n);
        }
        return jj_sb_done(&sb, out) || nomem(c, e);
    }
    }
    return jj_fail(c, e, "method %d not implemented", id);
}
