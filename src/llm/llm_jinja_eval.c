/* SPDX-License-Identifier: MIT */
/*
 * llm_jinja_eval.c - renders a parsed template (llm_jinja_parse.c): statements, expressions,
 * scopes as Jinja has them (a for body is a new scope each iteration, an if body is not, a
 * macro sees the template's top level), undefined values as Jinja's default Undefined, and
 * the global functions range, namespace, raise_exception, strftime_now, dict. Every render
 * is bounded: steps, output bytes, arena bytes, macro depth. Layer: llm.
 */
#include "llm_jinja.h"
#include "util_log.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct jj_scope {
    struct jj_scope *parent;
    const char **names;
    struct jj_val *vals;
    size_t n, cap;
};

enum ctl { CTL_NONE, CTL_BREAK, CTL_CONTINUE };

bool
jj_fail(struct jj_ctx *c, const struct jj_expr *at, const char *fmt, ...)
{
    if (c->failed)
        return false;
    c->failed = true;
    int k = at ? snprintf(c->err, sizeof c->err, "line %u col %u: ", at->line, at->col) : 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err + k, sizeof c->err - (size_t)k, fmt, ap);
    va_end(ap);
    return false;
}

static bool
nomem(struct jj_ctx *c, const struct jj_expr *e)
{
    return jj_fail(c, e, "out of memory: the render passed its %u MiB limit", JJ_MAX_ARENA_B >> 20);
}

static bool
step(struct jj_ctx *c, const struct jj_expr *e)
{
    if (++c->steps > JJ_MAX_STEPS)
        return jj_fail(c, e, "the template ran more than %llu steps (a loop that does not end?)",
                       JJ_MAX_STEPS);
    return true;
}

/* ==== scopes ==== */

static struct jj_scope *
scope_new(struct jj_ctx *c, struct jj_scope *parent)
{
    struct jj_scope *s = jj_alloc(&c->arena, sizeof *s);
    if (s)
        s->parent = parent;
    return s;
}

static bool
scope_lookup(const struct jj_scope *s, const char *name, struct jj_val *out)
{
    for (; s; s = s->parent)
        for (size_t i = s->n; i-- > 0;)
            if (!strcmp(s->names[i], name)) {
                *out = s->vals[i];
                return true;
            }
    return false;
}

static bool
scope_set(struct jj_ctx *c, struct jj_scope *s, const char *name, struct jj_val v)
{
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->names[i], name)) {
            s->vals[i] = v;
            return true;
        }
    if (s->n == s->cap) {
        size_t nc = s->cap ? s->cap * 2 : 8;
        const char **nn = jj_alloc(&c->arena, nc * sizeof *nn);
        struct jj_val *nv = jj_alloc(&c->arena, nc * sizeof *nv);
        if (!nn || !nv)
            return false;
        if (s->n) {
            memcpy(nn, s->names, s->n * sizeof *nn);
            memcpy(nv, s->vals, s->n * sizeof *nv);
        }
        s->names = nn;
        s->vals = nv;
        s->cap = nc;
    }
    s->names[s->n] = name;
    s->vals[s->n++] = v;
    return true;
}

/* ==== output ==== */

static bool
emit(struct jj_ctx *c, const struct jj_expr *e, const char *p, size_t n)
{
    if (c->out_n + n + 1 > c->out_cap) {
        if (c->out_n + n + 1 > JJ_MAX_OUT_B)
            return jj_fail(c, e, "the rendered text passed its %u MiB limit", JJ_MAX_OUT_B >> 20);
        size_t nc = c->out_cap ? c->out_cap : 4096;
        while (nc < c->out_n + n + 1)
            nc *= 2;
        char *no = realloc(c->out, nc);
        if (!no)
            return nomem(c, e);
        c->out = no;
        c->out_cap = nc;
    }
    memcpy(c->out + c->out_n, p, n);
    c->out_n += n;
    return true;
}

/* ==== expressions ==== */

static bool eval(struct jj_ctx *c, struct jj_scope *s, const struct jj_expr *e, struct jj_val *out);
static bool eval_node(struct jj_ctx *c, struct jj_scope *s, const struct jj_expr *e, struct jj_val *out);
static bool exec_body(struct jj_ctx *c, struct jj_scope *s, const struct jj_body *b, enum ctl *ctl);

static bool
eval_args(struct jj_ctx *c, struct jj_scope *s, const struct jj_expr *e, struct jj_val **out)
{
    *out = NULL;
    if (!e->n_args)
        return true;
    struct jj_val *v = jj_alloc(&c->arena, e->n_args * sizeof *v);
    if (!v)
        return nomem(c, e);
    for (size_t i = 0; i < e->n_args; i++)
        if (!eval(c, s, e->args[i], &v[i]))
            return false;
    *out = v;
    return true;
}

/* Code-point index i (negative: from the end) of a string/list of n items -> position, or -1 */
static int64_t
norm_index(int64_t i, size_t n)
{
    if (i < 0)
        i += (int64_t)n;
    return i < 0 || i >= (int64_t)n ? -1 : i;
}

/* byte offset of code point k */
static size_t
cp_offset(const char *p, size_t n, size_t k)
{
    size_t i = 0;
    while (i < n && k) {
        i++;
        while (i < n && ((unsigned char)p[i] & 0xC0) == 0x80)
            i++;
        k--;
    }
    return i;
}

static bool
get_item(struct jj_ctx *c, const struct jj_expr *e, struct jj_val v, struct jj_val key, struct jj_val *out)
{
    *out = (struct jj_val){.t = JJ_UNDEF};
    if (v.t == JJ_UNDEF)
        return jj_fail(c, e, "subscript of an undefined value");
    if (v.t == JJ_DICT) {
        for (size_t i = 0; i < v.u.d->n; i++)
            if (jj_equal(v.u.d->k[i], key)) {
                *out = v.u.d->v[i];
                break;
            }
        return true;
    }
    if ((v.t == JJ_LIST || v.t == JJ_STR) && (key.t == JJ_INT || key.t == JJ_BOOL)) {
        int64_t k = key.t == JJ_INT ? key.u.i : key.u.b;
        if (v.t == JJ_LIST) {
            k = norm_index(k, v.u.l->n);
            if (k >= 0)
                *out = v.u.l->v[k];
        } else {
            k = norm_index(k, jj_utf8_len(v.u.s.p, v.u.s.n));
            if (k >= 0) {
                size_t a = cp_offset(v.u.s.p, v.u.s.n, (size_t)k),
                       b = cp_offset(v.u.s.p, v.u.s.n, (size_t)k + 1);
                *out = (struct jj_val){.t = JJ_STR, .u.s = {v.u.s.p + a, b - a}};
            }
        }
    }
    return true;
}

static bool
slice(struct jj_ctx *c, struct jj_scope *s, const struct jj_expr *e, struct jj_val v, struct jj_val *out)
{
    int64_t part[3];
    bool given[3];
    for (int k = 0; k < 3; k++) {
        struct jj_val x = {.t = JJ_NONE};
        given[k] = false;
        part[k] = 0;
        if (e->args[k] && !eval(c, s, e->args[k], &x))
            return false;
        if (x.t == JJ_INT) {
            given[k] = true;
            part[k] = x.u.i;
        } else if (x.t != JJ_NONE) {
            return jj_fail(c, e, "slice bounds must be integers, got %s", jj_type_name(x.t));
        }
    }
    int64_t st = given[2] ? part[2] : 1;
    if (st == 0)
        return jj_fail(c, e, "slice step cannot be zero");
    size_t n;
    if (v.t == JJ_LIST)
        n = v.u.l->n;
    else if (v.t == JJ_STR)
        n = jj_utf8_len(v.u.s.p, v.u.s.n);
    else if (v.t == JJ_UNDEF)
        return jj_fail(c, e, "slice of an undefined value");
    else /* Jinja: what cannot be sliced gives undefined */
        return true;
    /* Python's slice.indices() */
    int64_t len = (int64_t)n, lo, hi;
    if (st > 0) {
        lo = given[0]
                 ? (part[0] < 0 ? (part[0] + len < 0 ? 0 : part[0] + len) : (part[0] > len ? len : part[0]))
                 : 0;
        hi = given[1]
                 ? (part[1] < 0 ? (part[1] + len < 0 ? 0 : part[1] + len) : (part[1] > len ? len : part[1]))
                 : len;
    } else {
        lo = given[0] ? (part[0] < 0 ? (part[0] + len < 0 ? -1 : part[0] + len)
                                     : (part[0] >= len ? len - 1 : part[0]))
                      : len - 1;
        hi = given[1] ? (part[1] < 0 ? (part[1] + len < 0 ? -1 : part[1] + len)
                                     : (part[1] >= len ? len - 1 : part[1]))
                      : -1;
    }
    struct jj_list *l = jj_alloc(&c->arena, sizeof *l);
    char *d = v.t == JJ_STR ? jj_alloc(&c->arena, v.u.s.n + 1) : NULL;
    size_t dn = 0;
    if (!l || (v.t == JJ_STR && !d))
        return nomem(c, e);
    bool ascii = v.t == JJ_STR && n == v.u.s.n;
    for (int64_t i = lo; st > 0 ? i < hi : i > hi; i += st) {
        if (v.t == JJ_LIST) {
            if (!jj_list_push(c, l, v.u.l->v[i]))
                return nomem(c, e);
        } else if (ascii) {
            d[dn++] = v.u.s.p[i];
        } else {
            size_t a = cp_offset(v.u.s.p, v.u.s.n, (size_t)i), b = cp_offset(v.u.s.p, v.u.s.n, (size_t)i + 1);
            memcpy(d + dn, v.u.s.p + a, b - a);
            dn += b - a;
        }
        if (!step(c, e))
            return false;
    }
    *out = v.t == JJ_LIST ? (struct jj_val){.t = JJ_LIST, .u.l = l}
                          : (struct jj_val){.t = JJ_STR, .u.s = {d, dn}};
    return true;
}

static bool
num_of(struct jj_val v, double *f, int64_t *i, bool *is_int)
{
    if (v.t == JJ_INT || v.t == JJ_BOOL) {
        *i = v.t == JJ_INT ? v.u.i : v.u.b;
        *f = (double)*i;
        *is_int = true;
        return true;
    }
    if (v.t == JJ_FLOAT) {
        *f = v.u.f;
        *is_int = false;
        return true;
    }
    return false;
}

static bool
concat(struct jj_ctx *c, const struct jj_expr *e, struct jj_val a, struct jj_val b, struct jj_val *out)
{
    size_t n = a.u.s.n + b.u.s.n;
    if (n > JJ_MAX_OUT_B)
        return jj_fail(c, e, "string longer than %u MiB", JJ_MAX_OUT_B >> 20);
    char *d = jj_alloc(&c->arena, n + 1);
    if (!d)
        return nomem(c, e);
    memcpy(d, a.u.s.p, a.u.s.n);
    memcpy(d + a.u.s.n, b.u.s.p, b.u.s.n);
    *out = (struct jj_val){.t = JJ_STR, .u.s = {d, n}};
    return true;
}

static bool
binary(struct jj_ctx *c, const struct jj_expr *e, struct jj_val a, struct jj_val b, struct jj_val *out)
{
    double x = 0, y = 0;
    int64_t i = 0, j = 0;
    bool xi = false, yi = false;
    bool nums = num_of(a, &x, &i, &xi) && num_of(b, &y, &j, &yi);
    switch (e->op) {
    case JO_EQ:
    case JO_NE:
        *out = (struct jj_val){.t = JJ_BOOL, .u.b = jj_equal(a, b) == (e->op == JO_EQ)};
        if (a.t == JJ_UNDEF || b.t == JJ_UNDEF) /* Undefined equals only Undefined */
            out->u.b = (a.t == b.t) == (e->op == JO_EQ);
        return true;
    case JO_LT:
    case JO_LE:
    case JO_GT:
    case JO_GE: {
        int cmp;
        if (nums)
            cmp = x < y ? -1 : x > y;
        else if (a.t == JJ_STR && b.t == JJ_STR) {
            size_t m = a.u.s.n < b.u.s.n ? a.u.s.n : b.u.s.n;
            cmp = memcmp(a.u.s.p, b.u.s.p, m);
            if (!cmp)
                cmp = a.u.s.n < b.u.s.n ? -1 : a.u.s.n > b.u.s.n;
        } else
            return jj_fail(c, e, "cannot compare %s with %s", jj_type_name(a.t), jj_type_name(b.t));
        bool r = e->op == JO_LT ? cmp < 0 : e->op == JO_LE ? cmp <= 0 : e->op == JO_GT ? cmp > 0 : cmp >= 0;
        *out = (struct jj_val){.t = JJ_BOOL, .u.b = r};
        return true;
    }
    case JO_IN:
    case JO_NOTIN: {
        bool r = false;
        if (b.t == JJ_STR) {
            if (a.t != JJ_STR)
                return jj_fail(c, e, "'in <string>' needs a string on the left, got %s", jj_type_name(a.t));
            for (size_t k = 0; k + a.u.s.n <= b.u.s.n && !r; k++)
                r = !memcmp(b.u.s.p + k, a.u.s.p, a.u.s.n);
        } else if (b.t == JJ_LIST) {
            for (size_t k = 0; k < b.u.l->n && !r; k++)
                r = jj_equal(b.u.l->v[k], a);
        } else if (b.t == JJ_DICT) {
            for (size_t k = 0; k < b.u.d->n && !r; k++)
                r = jj_equal(b.u.d->k[k], a);
        } else if (b.t != JJ_UNDEF) {
            return jj_fail(c, e, "'in' needs a string, list or dict on the right, got %s", jj_type_name(b.t));
        }
        *out = (struct jj_val){.t = JJ_BOOL, .u.b = r == (e->op == JO_IN)};
        return true;
    }
    case JO_CONCAT: {
        struct jj_val sa = {.t = JJ_STR, .u.s = {"", 0}}, sb = sa;
        if ((a.t != JJ_UNDEF && !jj_to_str(c, a, &sa)) || (b.t != JJ_UNDEF && !jj_to_str(c, b, &sb)))
            return nomem(c, e);
        return concat(c, e, sa, sb, out);
    }
    case JO_ADD:
        if (a.t == JJ_STR && b.t == JJ_STR)
            return concat(c, e, a, b, out);
        if (a.t == JJ_LIST && b.t == JJ_LIST) {
            struct jj_list *l = jj_alloc(&c->arena, sizeof *l);
            if (!l)
                return nomem(c, e);
            for (size_t k = 0; k < a.u.l->n + b.u.l->n; k++)
                if (!jj_list_push(c, l, k < a.u.l->n ? a.u.l->v[k] : b.u.l->v[k - a.u.l->n]))
                    return nomem(c, e);
            *out = (struct jj_val){.t = JJ_LIST, .u.l = l};
            return true;
        }
        break;
    case JO_MUL:
        if ((a.t == JJ_STR && (b.t == JJ_INT || b.t == JJ_BOOL)) ||
            ((a.t == JJ_INT || a.t == JJ_BOOL) && b.t == JJ_STR)) {
            struct jj_val str = a.t == JJ_STR ? a : b, num = a.t == JJ_STR ? b : a;
            int64_t k = num.t == JJ_INT ? num.u.i : num.u.b;
            if (k < 0)
                k = 0;
            if (str.u.s.n && (uint64_t)k > JJ_MAX_OUT_B / str.u.s.n)
                return jj_fail(c, e, "string repetition longer than %u MiB", JJ_MAX_OUT_B >> 20);
            char *d = jj_alloc(&c->arena, str.u.s.n * (size_t)k + 1);
            if (!d)
                return nomem(c, e);
            for (int64_t r = 0; r < k; r++)
                memcpy(d + (size_t)r * str.u.s.n, str.u.s.p, str.u.s.n);
            *out = (struct jj_val){.t = JJ_STR, .u.s = {d, str.u.s.n * (size_t)k}};
            return true;
        }
        break;
    default:
        break;
    }
    if (!nums)
        return jj_fail(c, e, "unsupported operand types for this operator: %s and %s", jj_type_name(a.t),
                       jj_type_name(b.t));
    bool both_int = xi && yi;
    switch (e->op) {
    case JO_ADD:
    case JO_SUB:
    case JO_MUL:
        if (both_int) {
            int64_t r;
            bool ovf = e->op == JO_ADD   ? __builtin_add_overflow(i, j, &r)
                       : e->op == JO_SUB ? __builtin_sub_overflow(i, j, &r)
                                         : __builtin_mul_overflow(i, j, &r);
            if (ovf)
                return jj_fail(c, e, "integer overflow");
            *out = (struct jj_val){.t = JJ_INT, .u.i = r};
        } else {
            *out = (struct jj_val){.t = JJ_FLOAT,
                                   .u.f = e->op == JO_ADD   ? x + y
                                          : e->op == JO_SUB ? x - y
                                                            : x * y};
        }
        return true;
    case JO_DIV:
        if (y == 0)
            return jj_fail(c, e, "division by zero");
        *out = (struct jj_val){.t = JJ_FLOAT, .u.f = x / y};
        return true;
    case JO_FLOORDIV:
    case JO_MOD:
        if (y == 0)
            return jj_fail(c, e, "division by zero");
        if (both_int) {
            if (i == INT64_MIN && j == -1)
                return jj_fail(c, e, "integer overflow");
            int64_t q = i / j, r = i % j;
            if (r && ((r < 0) != (j < 0))) { /* Python floors */
                q--;
                r += j;
            }
            *out = (struct jj_val){.t = JJ_INT, .u.i = e->op == JO_MOD ? r : q};
        } else {
            double q = floor(x / y);
            *out = (struct jj_val){.t = JJ_FLOAT, .u.f = e->op == JO_MOD ? x - q * y : q};
        }
        return true;
    case JO_POW:
        if (both_int && j >= 0) {
            int64_t r = 1;
            for (int64_t k = 0; k < j; k++)
                if (__builtin_mul_overflow(r, i, &r) || k > 64)
                    return jj_fail(c, e, "integer overflow");
            *out = (struct jj_val){.t = JJ_INT, .u.i = r};
        } else {
            *out = (struct jj_val){.t = JJ_FLOAT, .u.f = pow(x, y)};
        }
        return true;
    default:
        return jj_fail(c, e, "operator %d not implemented", e->op);
    }
}

static bool
call_macro(struct jj_ctx *c, const struct jj_expr *e, const struct jj_node *m, struct jj_val *args,
           struct jj_val *out)
{
    if (c->call_depth >= JJ_MAX_CALL_DEPTH)
        return jj_fail(c, e, "macro calls nested deeper than %d", JJ_MAX_CALL_DEPTH);
    struct jj_scope *s = scope_new(c, c->globals);
    if (!s)
        return nomem(c, e);
    size_t pos = 0;
    for (size_t i = 0; i < m->n_params; i++) {
        struct jj_val v = {.t = JJ_UNDEF};
        bool found = false;
        for (size_t k = 0; k < e->n_args && !found; k++)
            if (e->kw_names[k] && !strcmp(e->kw_names[k], m->params[i])) {
                v = args[k];
                found = true;
            }
        while (!found && pos < e->n_args) {
            if (!e->kw_names[pos]) {
                v = args[pos++];
                found = true;
                break;
            }
            pos++;
        }
        if (!found && m->defaults[i] && !eval(c, s, m->defaults[i], &v))
            return false;
        if (!scope_set(c, s, m->params[i], v))
            return nomem(c, e);
    }
    size_t mark = c->out_n;
    enum ctl ctl = CTL_NONE;
    c->call_depth++;
    bool ok = exec_body(c, s, &m->body, &ctl);
    c->call_depth--;
    if (!ok)
        return false;
    *out = jj_str(c, c->out + mark, c->out_n - mark);
    c->out_n = mark;
    return out->t == JJ_STR || nomem(c, e);
}

static bool
call(struct jj_ctx *c, struct jj_scope *s, const struct jj_expr *e, struct jj_val *out)
{
    struct jj_val *args, fnv;
    if (!eval_args(c, s, e, &args))
        return false;
    if (scope_lookup(s, e->name, &fnv) && fnv.t == JJ_MACRO)
        return call_macro(c, e, fnv.u.macro, args, out);
    switch (e->fn) {
    case 0: { /* range([start,] stop[, step]) */
        int64_t r[3] = {0, 0, 1};
        if (e->n_args < 1 || e->n_args > 3)
            return jj_fail(c, e, "range() takes 1 to 3 arguments");
        for (size_t k = 0; k < e->n_args; k++) {
            if (args[k].t != JJ_INT)
                return jj_fail(c, e, "range() arguments must be integers, got %s", jj_type_name(args[k].t));
            r[e->n_args == 1 ? 1 : k] = args[k].u.i;
        }
        if (!r[2])
            return jj_fail(c, e, "range() step cannot be zero");
        struct jj_list *l = jj_alloc(&c->arena, sizeof *l);
        if (!l)
            return nomem(c, e);
        for (int64_t v = r[0]; r[2] > 0 ? v < r[1] : v > r[1]; v += r[2]) {
            if (l->n >= 1000000)
                return jj_fail(c, e, "range() longer than 1000000");
            if (!jj_list_push(c, l, (struct jj_val){.t = JJ_INT, .u.i = v}))
                return nomem(c, e);
        }
        *out = (struct jj_val){.t = JJ_LIST, .u.l = l};
        return true;
    }
    case 1:   /* namespace(k=v, ...) */
    case 4: { /* dict(k=v, ...) */
        struct jj_dict *d = jj_alloc(&c->arena, sizeof *d);
        if (!d)
            return nomem(c, e);
        d->ns = e->fn == 1;
        for (size_t k = 0; k < e->n_args; k++) {
            if (!e->kw_names[k])
                return jj_fail(c, e, "%s() takes only name=value arguments", e->name);
            if (!jj_dict_set(c, d, jj_cstr(e->kw_names[k]), args[k]))
                return nomem(c, e);
        }
        *out = (struct jj_val){.t = JJ_DICT, .u.d = d};
        return true;
    }
    case 2: { /* raise_exception(msg) */
        struct jj_val m = {.t = JJ_STR, .u.s = {"", 0}};
        if (e->n_args && !jj_to_str(c, args[0], &m))
            return nomem(c, e);
        return jj_fail(c, e, "the template raised: %.*s", (int)(m.u.s.n > 300 ? 300 : m.u.s.n), m.u.s.p);
    }
    case 3: { /* strftime_now(fmt) */
        if (e->n_args != 1 || args[0].t != JJ_STR || args[0].u.s.n > 64)
            return jj_fail(c, e, "strftime_now() takes one format string");
        char fmt[72], buf[256];
        memcpy(fmt, args[0].u.s.p, args[0].u.s.n);
        fmt[args[0].u.s.n] = 0;
        time_t now = c->now_s >= 0 ? (time_t)c->now_s : time(NULL);
        struct tm tm;
        gmtime_r(&now, &tm);
        size_t k = strftime(buf, sizeof buf, fmt, &tm);
        *out = jj_str(c, buf, k);
        return out->t == JJ_STR || nomem(c, e);
    }
    }
    return jj_fail(c, e, "'%s' is not a function or macro this renderer knows", e->name);
}

static bool
eval(struct jj_ctx *c, struct jj_scope *s, const struct jj_expr *e, struct jj_val *out)
{
    if (c->eval_depth >= JJ_MAX_EVAL_DEPTH)
        return jj_fail(c, e, "expression nested deeper than %d (a chain of that many operators?)",
                       JJ_MAX_EVAL_DEPTH);
    c->eval_depth++;
    bool ok = eval_node(c, s, e, out);
    c->eval_depth--;
    return ok;
}

static bool
eval_node(struct jj_ctx *c, struct jj_scope *s, const struct jj_expr *e, struct jj_val *out)
{
    if (!step(c, e))
        return false;
    struct jj_val a, b, *args;
    *out = (struct jj_val){.t = JJ_UNDEF};
    switch (e->kind) {
    case JE_LIT:
        *out = e->val;
        return true;
    case JE_NAME:
        if (!scope_lookup(s, e->name, out) && jj_func_find(e->name) >= 0) /* `strftime_now is defined` */
            *out = (struct jj_val){.t = JJ_FUNC, .u.i = jj_func_find(e->name)};
        return true;
    case JE_LIST:
    case JE_TUPLE: {
        struct jj_list *l = jj_alloc(&c->arena, sizeof *l);
        if (!l)
            return nomem(c, e);
        for (size_t k = 0; k < e->n_args; k++)
            if (!eval(c, s, e->args[k], &a) || !jj_list_push(c, l, a))
                return c->failed ? false : nomem(c, e);
        *out = (struct jj_val){.t = JJ_LIST, .u.l = l};
        return true;
    }
    case JE_DICT: {
        struct jj_dict *d = jj_alloc(&c->arena, sizeof *d);
        if (!d)
            return nomem(c, e);
        for (size_t k = 0; k + 1 < e->n_args; k += 2)
            if (!eval(c, s, e->args[k], &a) || !eval(c, s, e->args[k + 1], &b) || !jj_dict_set(c, d, a, b))
                return c->failed ? false : nomem(c, e);
        *out = (struct jj_val){.t = JJ_DICT, .u.d = d};
        return true;
    }
    case JE_ATTR:
        if (!eval(c, s, e->a, &a))
            return false;
        if (a.t == JJ_UNDEF)
            return jj_fail(c, e, "'.%s' of an undefined value", e->name);
        if (a.t == JJ_DICT)
            jj_dict_get(a.u.d, e->name, strlen(e->name), out);
        return true;
    case JE_INDEX:
        return eval(c, s, e->a, &a) && eval(c, s, e->b, &b) && get_item(c, e, a, b, out);
    case JE_SLICE:
        return eval(c, s, e->a, &a) && slice(c, s, e, a, out);
    case JE_CALL:
        return call(c, s, e, out);
    case JE_METHOD:
        if (!eval(c, s, e->a, &a) || !eval_args(c, s, e, &args))
            return false;
        if (a.t == JJ_UNDEF)
            return jj_fail(c, e, "'.%s()' of an undefined value", e->name);
        return jj_apply_method(c, e, a, args, e->n_args, out);
    case JE_FILTER:
        return eval(c, s, e->a, &a) && eval_args(c, s, e, &args) &&
               jj_apply_filter(c, e, a, args, e->n_args, out);
    case JE_TEST: {
        bool r;
        if (!eval(c, s, e->a, &a) || !eval_args(c, s, e, &args) ||
            !jj_apply_test(c, e, a, args, e->n_args, &r))
            return false;
        *out = (struct jj_val){.t = JJ_BOOL, .u.b = r};
        return true;
    }
    case JE_UNARY:
        if (!eval(c, s, e->a, &a))
            return false;
        if (e->op == JO_NOT) {
            *out = (struct jj_val){.t = JJ_BOOL, .u.b = !jj_truthy(a)};
            return true;
        }
        if (a.t == JJ_INT) {
            if (e->op == JO_NEG && a.u.i == INT64_MIN)
                return jj_fail(c, e, "integer overflow");
            *out = (struct jj_val){.t = JJ_INT, .u.i = e->op == JO_NEG ? -a.u.i : a.u.i};
        } else if (a.t == JJ_FLOAT) {
            *out = (struct jj_val){.t = JJ_FLOAT, .u.f = e->op == JO_NEG ? -a.u.f : a.u.f};
        } else {
            return jj_fail(c, e, "unary minus/plus of %s", jj_type_name(a.t));
        }
        return true;
    case JE_BINARY:
        if (!eval(c, s, e->a, &a))
            return false;
        if (e->op == JO_AND || e->op == JO_OR) { /* Python: the deciding operand itself */
            if (jj_truthy(a) == (e->op == JO_OR)) {
                *out = a;
                return true;
            }
            return eval(c, s, e->b, out);
        }
        return eval(c, s, e->b, &b) && binary(c, e, a, b, out);
    case JE_COND:
        if (!eval(c, s, e->a, &a))
            return false;
        if (jj_truthy(a))
            return eval(c, s, e->b, out);
        return e->c ? eval(c, s, e->c, out) : true;
    }
    return jj_fail(c, e, "expression kind %d not implemented", e->kind);
}

/* ==== statements ==== */

static bool
print(struct jj_ctx *c, const struct jj_expr *e, struct jj_val v)
{
    struct jj_val sv;
    if (v.t == JJ_UNDEF)
        return true;
    if (!jj_to_str(c, v, &sv))
        return nomem(c, e);
    return emit(c, e, sv.u.s.p, sv.u.s.n);
}

static bool
exec_for(struct jj_ctx *c, struct jj_scope *s, const struct jj_node *n)
{
    struct jj_val it;
    if (!eval(c, s, n->expr, &it))
        return false;
    struct jj_list *items = NULL;
    struct jj_list tmp = {0};
    if (it.t == JJ_LIST) {
        items = it.u.l;
    } else if (it.t == JJ_DICT) { /* iterating a dict gives its keys */
        tmp.v = it.u.d->k;
        tmp.n = it.u.d->n;
        items = &tmp;
    } else if (it.t == JJ_STR) {
        struct jj_expr fe = *n->expr;
        fe.fn = jj_filter_find("list");
        if (!jj_apply_filter(c, &fe, it, NULL, 0, &it))
            return false;
        items = it.u.l;
    } else if (it.t == JJ_UNDEF || it.t == JJ_NONE) {
        items = &tmp;
        if (it.t == JJ_NONE)
            return jj_fail(c, n->expr, "for: none is not iterable");
    } else {
        return jj_fail(c, n->expr, "for: %s is not iterable", jj_type_name(it.t));
    }
    /* the inline `if` filters before loop.* counts, as Jinja does */
    size_t total = items->n;
    const struct jj_val *src = items->v;
    struct jj_val *kept = NULL;
    if (n->cond) {
        kept = jj_alloc(&c->arena, (items->n ? items->n : 1) * sizeof *kept);
        if (!kept)
            return nomem(c, n->expr);
        total = 0;
        struct jj_scope *fs = scope_new(c, s);
        if (!fs)
            return nomem(c, n->expr);
        for (size_t i = 0; i < items->n; i++) {
            struct jj_val ok;
            fs->n = 0;
            if (!scope_set(c, fs, n->targets[0], items->v[i]))
                return nomem(c, n->expr);
            if (n->n_targets == 2) {
                struct jj_val k = {.t = JJ_UNDEF}, v = {.t = JJ_UNDEF};
                if (items->v[i].t == JJ_LIST && items->v[i].u.l->n == 2) {
                    k = items->v[i].u.l->v[0];
                    v = items->v[i].u.l->v[1];
                }
                if (!scope_set(c, fs, n->targets[0], k) || !scope_set(c, fs, n->targets[1], v))
                    return nomem(c, n->expr);
            }
            if (!eval(c, fs, n->cond, &ok))
                return false;
            if (jj_truthy(ok))
                kept[total++] = items->v[i];
        }
        src = kept;
    }
    struct jj_dict *loop = jj_alloc(&c->arena, sizeof *loop);
    if (!loop)
        return nomem(c, n->expr);
    static const char *const keys[] = {"index",    "index0",    "first",    "last",    "length",
                                       "revindex", "revindex0", "previtem", "nextitem"};
    for (size_t k = 0; k < 9; k++)
        if (!jj_dict_set(c, loop, jj_cstr(keys[k]), (struct jj_val){.t = JJ_UNDEF}))
            return nomem(c, n->expr);
    struct jj_scope *is = NULL;
    for (size_t i = 0; i < total; i++) {
        int64_t ii = (int64_t)i, nn = (int64_t)total;
        loop->v[0] = (struct jj_val){.t = JJ_INT, .u.i = ii + 1};
        loop->v[1] = (struct jj_val){.t = JJ_INT, .u.i = ii};
        loop->v[2] = (struct jj_val){.t = JJ_BOOL, .u.b = i == 0};
        loop->v[3] = (struct jj_val){.t = JJ_BOOL, .u.b = i + 1 == total};
        loop->v[4] = (struct jj_val){.t = JJ_INT, .u.i = nn};
        loop->v[5] = (struct jj_val){.t = JJ_INT, .u.i = nn - ii};
        loop->v[6] = (struct jj_val){.t = JJ_INT, .u.i = nn - ii - 1};
        loop->v[7] = i ? src[i - 1] : (struct jj_val){.t = JJ_UNDEF};
        loop->v[8] = i + 1 < total ? src[i + 1] : (struct jj_val){.t = JJ_UNDEF};
        /* one scope per loop, emptied each iteration: a `set` in the body lasts one iteration */
        if (!is && !(is = scope_new(c, s)))
            return nomem(c, n->expr);
        is->n = 0;
        if (!step(c, n->expr) || !scope_set(c, is, "loop", (struct jj_val){.t = JJ_DICT, .u.d = loop}))
            return c->failed ? false : nomem(c, n->expr);
        bool ok;
        if (n->n_targets == 2) {
            struct jj_val x = src[i];
            if (x.t != JJ_LIST || x.u.l->n != 2)
                return jj_fail(c, n->expr, "for %s, %s: each item must have two elements", n->targets[0],
                               n->targets[1]);
            ok = scope_set(c, is, n->targets[0], x.u.l->v[0]) && scope_set(c, is, n->targets[1], x.u.l->v[1]);
        } else {
            ok = scope_set(c, is, n->targets[0], src[i]);
        }
        if (!ok)
            return nomem(c, n->expr);
        enum ctl ctl = CTL_NONE;
        if (!exec_body(c, is, &n->body, &ctl))
            return false;
        if (ctl == CTL_BREAK)
            break;
    }
    if (!total) {
        enum ctl ctl = CTL_NONE;
        return exec_body(c, s, &n->else_body, &ctl);
    }
    return true;
}

static bool
exec_set(struct jj_ctx *c, struct jj_scope *s, const struct jj_node *n)
{
    struct jj_val v;
    if (n->expr) {
        if (!eval(c, s, n->expr, &v))
            return false;
    } else { /* block set: the body's text */
        size_t mark = c->out_n;
        enum ctl ctl = CTL_NONE;
        if (!exec_body(c, s, &n->body, &ctl))
            return false;
        v = jj_str(c, c->out + mark, c->out_n - mark);
        c->out_n = mark;
        if (v.t != JJ_STR)
            return nomem(c, n->expr);
    }
    if (n->attr) {
        struct jj_val ns;
        if (!scope_lookup(s, n->targets[0], &ns) || ns.t != JJ_DICT || !ns.u.d->ns)
            return jj_fail(c, n->expr, "set %s.%s: '%s' is not a namespace()", n->targets[0], n->attr,
                           n->targets[0]);
        return jj_dict_set(c, ns.u.d, jj_cstr(n->attr), v) || nomem(c, n->expr);
    }
    if (n->n_targets == 2) {
        if (v.t != JJ_LIST || v.u.l->n != 2)
            return jj_fail(c, n->expr, "set %s, %s: the value must have two elements", n->targets[0],
                           n->targets[1]);
        return (scope_set(c, s, n->targets[0], v.u.l->v[0]) && scope_set(c, s, n->targets[1], v.u.l->v[1])) ||
               nomem(c, n->expr);
    }
    return scope_set(c, s, n->targets[0], v) || nomem(c, n->expr);
}

static bool
exec_body(struct jj_ctx *c, struct jj_scope *s, const struct jj_body *b, enum ctl *ctl)
{
    for (size_t i = 0; i < b->n && *ctl == CTL_NONE; i++) {
        const struct jj_node *n = b->v[i];
        if (!step(c, n->expr))
            return false;
        struct jj_val v;
        switch (n->kind) {
        case JN_TEXT:
            if (!emit(c, NULL, n->text, n->text_n))
                return false;
            break;
        case JN_OUT:
            if (!eval(c, s, n->expr, &v) || !print(c, n->expr, v))
                return false;
            break;
        case JN_IF: {
            size_t k = 0;
            for (; k < n->n_conds; k++) {
                if (!eval(c, s, n->conds[k], &v))
                    return false;
                if (jj_truthy(v))
                    break;
            }
            if (!exec_body(c, s, k < n->n_conds ? &n->bodies[k] : &n->else_body, ctl))
                return false;
            break;
        }
        case JN_FOR:
            if (!exec_for(c, s, n))
                return false;
            break;
        case JN_SET:
            if (!exec_set(c, s, n))
                return false;
            break;
        case JN_MACRO:
            if (!scope_set(c, s, n->name, (struct jj_val){.t = JJ_MACRO, .u.macro = n}))
                return nomem(c, NULL);
            break;
        case JN_BREAK:
            *ctl = CTL_BREAK;
            break;
        case JN_CONTINUE:
            *ctl = CTL_CONTINUE;
            break;
        case JN_BLOCK:
            if (!exec_body(c, s, &n->body, ctl))
                return false;
            break;
        }
    }
    return true;
}

/* ==== entry ==== */

void
llm_jinja_render_begin(struct jj_ctx *c, int64_t now_s)
{
    memset(c, 0, sizeof *c);
    jj_arena_init(&c->arena, JJ_MAX_ARENA_B);
    c->now_s = now_s;
}

void
llm_jinja_render_end(struct jj_ctx *c)
{
    jj_arena_fini(&c->arena);
    free(c->out);
    c->out = NULL;
}

enum hcq_status
llm_jinja_render_run(struct jj_ctx *c, const struct llm_jinja *t, const struct llm_jinja_var *vars,
                     size_t n_vars, char **out, size_t *len_out)
{
    *out = NULL;
    if (len_out)
        *len_out = 0;
    c->globals = scope_new(c, NULL);
    if (!c->globals)
        return hcq_err(HCQ_ERR_NOMEM, "chat template: out of memory");
    for (size_t i = 0; i < n_vars; i++)
        if (!scope_set(c, c->globals, vars[i].name, vars[i].val))
            return hcq_err(HCQ_ERR_NOMEM, "chat template: out of memory");
    enum ctl ctl = CTL_NONE;
    if (!exec_body(c, c->globals, &t->root, &ctl))
        return hcq_err(HCQ_ERR_INVALID, "chat template: %s", c->err);
    if (!emit(c, NULL, "", 0))
        return hcq_err(HCQ_ERR_NOMEM, "chat template: %s", c->err);
    c->out[c->out_n] = 0;
    *out = c->out;
    if (len_out)
        *len_out = c->out_n;
    c->out = NULL;
    return HCQ_OK;
}
