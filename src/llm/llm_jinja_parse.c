/* SPDX-License-Identifier: MIT */
/*
 * llm_jinja_parse.c - statements of the chat-template Jinja subset and the parser's entry:
 * text with {{ }}, {% %}, {# #}, whitespace control (-, trim_blocks and lstrip_blocks as HF
 * sets them), if/elif/else, for (else, inline if), set (block set, ns.attr), macro,
 * break/continue, generation. Anything else is refused here, at load, naming the construct
 * and its line:column. Layer: llm.
 */
#include "llm_jinja_parse.h"
#include "util_log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ==== statements ==== */

static bool
body_push(struct parser *p, struct jj_body *b, struct jj_node *n)
{
    if (b->n == b->cap) {
        size_t nc = b->cap ? b->cap * 2 : 8;
        struct jj_node **v = jj_alloc(p->ar, nc * sizeof *v);
        if (!v)
            return jp_oom(p);
        if (b->n)
            memcpy(v, b->v, b->n * sizeof *v);
        b->v = v;
        b->cap = nc;
    }
    b->v[b->n++] = n;
    return true;
}

static struct jj_node *
new_node(struct parser *p, enum jj_node_kind k, size_t at)
{
    struct jj_node *n = jj_alloc(p->ar, sizeof *n);
    if (!n) {
        jp_oom(p);
        return NULL;
    }
    n->kind = k;
    jp_pos_of(p, at, &n->line, &n->col);
    return n;
}

/* Text from [a, b) of the source, trimmed as the tags around it ask. */
static bool
add_text(struct parser *p, struct jj_body *body, size_t a, size_t b, bool next_strip, bool next_lstrip)
{
    if (p->end_strip) {
        while (a < b && jp_is_space(p->src[a]))
            a++;
    } else if (p->end_block) {
        if (a < b && p->src[a] == '\n')
            a++;
        else if (a + 1 < b && p->src[a] == '\r' && p->src[a + 1] == '\n')
            a += 2;
    }
    if (next_strip) {
        while (b > a && jp_is_space(p->src[b - 1]))
            b--;
    } else if (next_lstrip) {
        size_t k = b;
        while (k > a && (p->src[k - 1] == ' ' || p->src[k - 1] == '\t'))
            k--;
        /* only when the tag starts its line */
        if (k > a ? p->src[k - 1] == '\n' : (k == 0 || p->src[k - 1] == '\n'))
            b = k;
    }
    p->end_strip = p->end_block = false;
    if (a >= b)
        return true;
    struct jj_node *n = new_node(p, JN_TEXT, a);
    if (!n)
        return false;
    n->text = p->src + a;
    n->text_n = b - a;
    return body_push(p, body, n);
}

static bool parse_body(struct parser *p, struct jj_body *body, const char *const *stops, int *which);

static const char *const stop_if[] = {"elif", "else", "endif", NULL};
static const char *const stop_for[] = {"else", "endfor", NULL};
static const char *const stop_endfor[] = {"endfor", NULL};
static const char *const stop_endif[] = {"endif", NULL};
static const char *const stop_endset[] = {"endset", NULL};
static const char *const stop_endmacro[] = {"endmacro", NULL};
static const char *const stop_endgen[] = {"endgeneration", NULL};

static bool
parse_if(struct parser *p, struct jj_node *n)
{
    size_t cap = 4;
    n->conds = jj_alloc(p->ar, cap * sizeof *n->conds);
    n->bodies = jj_alloc(p->ar, cap * sizeof *n->bodies);
    if (!n->conds || !n->bodies)
        return jp_oom(p);
    for (;;) {
        if (n->n_conds == cap) {
            struct jj_expr **c = jj_alloc(p->ar, 2 * cap * sizeof *c);
            struct jj_body *b = jj_alloc(p->ar, 2 * cap * sizeof *b);
            if (!c || !b)
                return jp_oom(p);
            memcpy(c, n->conds, cap * sizeof *c);
            memcpy(b, n->bodies, cap * sizeof *b);
            n->conds = c;
            n->bodies = b;
            cap *= 2;
        }
        struct jj_expr *c = jp_parse_expr(p);
        if (!c || !jp_expect_end(p))
            return false;
        n->conds[n->n_conds] = c;
        int which;
        if (!parse_body(p, &n->bodies[n->n_conds++], stop_if, &which))
            return false;
        if (which == 0) /* elif: the condition follows in this tag */
            continue;
        if (which == 1) {
            if (!jp_expect_end(p) || !parse_body(p, &n->else_body, stop_endif, &which))
                return false;
        }
        return jp_expect_end(p);
    }
}

static bool
parse_for(struct parser *p, struct jj_node *n)
{
    if (!(n->targets[n->n_targets++] = jp_take_name(p)))
        return false;
    if (jp_is_op(p, ",")) {
        if (!jp_next(p) || !(n->targets[n->n_targets++] = jp_take_name(p)))
            return false;
        if (jp_is_op(p, ","))
            return jp_fail(p, HCQ_ERR_UNSUPPORTED, p->cur.at, "unsupported: for with more than two targets");
    }
    if (!jp_is_kw(p, "in"))
        return jp_fail(p, HCQ_ERR_FORMAT, p->cur.at, "expected 'in' in the for tag");
    if (!jp_next(p) || !(n->expr = jp_parse_or(p)))
        return false;
    if (jp_is_kw(p, "if") && (!jp_next(p) || !(n->cond = jp_parse_or(p))))
        return false;
    if (jp_is_kw(p, "recursive"))
        return jp_fail(p, HCQ_ERR_UNSUPPORTED, p->cur.at, "unsupported: recursive for loops");
    int which;
    if (!jp_expect_end(p) || !parse_body(p, &n->body, stop_for, &which))
        return false;
    if (which == 0 && (!jp_expect_end(p) || !parse_body(p, &n->else_body, stop_endfor, &which)))
        return false;
    return jp_expect_end(p);
}

static bool
parse_set(struct parser *p, struct jj_node *n)
{
    if (!(n->targets[0] = jp_take_name(p)))
        return false;
    n->n_targets = 1;
    if (jp_is_op(p, ".")) {
        if (!jp_next(p) || !(n->attr = jp_take_name(p)))
            return false;
    } else if (jp_is_op(p, ",")) {
        if (!jp_next(p) || !(n->targets[1] = jp_take_name(p)))
            return false;
        n->n_targets = 2;
    }
    if (p->cur.t == TK_END && !n->attr && n->n_targets == 1) { /* {% set x %}...{% endset %} */
        int which;
        return parse_body(p, &n->body, stop_endset, &which) && jp_expect_end(p);
    }
    if (!jp_expect_op(p, "=") || !(n->expr = jp_parse_expr(p)))
        return false;
    return jp_expect_end(p);
}

static bool
parse_macro(struct parser *p, struct jj_node *n)
{
    /* calls are checked against every macro name once parsed: keep that product small */
    if (p->n_macros >= 256)
        return jp_fail(p, HCQ_ERR_UNSUPPORTED, p->cur.at, "more than 256 macros");
    if (!(n->name = jp_take_name(p)) || !jp_expect_op(p, "(") ||
        !jp_remember(p, (void ***)&p->macros, &p->n_macros, &p->cap_macros, (void *)n->name))
        return false;
    size_t cap = 8;
    n->params = jj_alloc(p->ar, cap * sizeof *n->params);
    n->defaults = jj_alloc(p->ar, cap * sizeof *n->defaults);
    if (!n->params || !n->defaults)
        return jp_oom(p);
    while (!jp_is_op(p, ")")) {
        if (n->n_params == cap)
            return jp_fail(p, HCQ_ERR_UNSUPPORTED, p->cur.at, "macro with more than %zu parameters", cap);
        if (!(n->params[n->n_params] = jp_take_name(p)))
            return false;
        if (jp_is_op(p, "=") && (!jp_next(p) || !(n->defaults[n->n_params] = jp_parse_expr(p))))
            return false;
        n->n_params++;
        if (!jp_is_op(p, ","))
            break;
        if (!jp_next(p))
            return false;
    }
    int which;
    if (!jp_expect_op(p, ")") || !jp_expect_end(p) || !parse_body(p, &n->body, stop_endmacro, &which))
        return false;
    if (p->cur.t == TK_NAME && !jp_next(p)) /* {% endmacro name %} */
        return false;
    return jp_expect_end(p);
}

/* One {% ... %} tag whose keyword is the current token. */
static bool
parse_stmt(struct parser *p, struct jj_body *body, size_t at)
{
    static const struct {
        const char *kw;
        enum jj_node_kind k;
    } kws[] = {{"if", JN_IF},       {"for", JN_FOR},           {"set", JN_SET},         {"macro", JN_MACRO},
               {"break", JN_BREAK}, {"continue", JN_CONTINUE}, {"generation", JN_BLOCK}};
    char b[64];
    for (size_t k = 0; k < sizeof kws / sizeof kws[0]; k++) {
        if (!jp_is_kw(p, kws[k].kw))
            continue;
        struct jj_node *n = new_node(p, kws[k].k, at);
        if (!n || !jp_next(p))
            return false;
        bool ok;
        int which;
        switch (n->kind) {
        case JN_IF:
            ok = parse_if(p, n);
            break;
        case JN_FOR:
            ok = parse_for(p, n);
            break;
        case JN_SET:
            ok = parse_set(p, n);
            break;
        case JN_MACRO:
            ok = parse_macro(p, n);
            break;
        case JN_BLOCK:
            ok = jp_expect_end(p) && parse_body(p, &n->body, stop_endgen, &which) && jp_expect_end(p);
            break;
        default:
            ok = jp_expect_end(p);
            break;
        }
        return ok && body_push(p, body, n);
    }
    if (p->cur.t == TK_NAME)
        return jp_fail(p, HCQ_ERR_UNSUPPORTED, p->cur.at, "unsupported statement '{%% %.*s %%}'",
                       (int)(p->cur.n > 40 ? 40 : p->cur.n), p->cur.p);
    return jp_fail(p, HCQ_ERR_FORMAT, p->cur.at, "expected a statement, found %s",
                   jp_tok_desc(p, b, sizeof b));
}

/* Nodes until EOF (stops == NULL) or a {% stop-word %} tag; *which = its index, the lexer
 * just after the word. */
static bool
parse_body(struct parser *p, struct jj_body *body, const char *const *stops, int *which)
{
    if (++p->depth > JJ_MAX_DEPTH)
        return jp_fail(p, HCQ_ERR_UNSUPPORTED, p->pos, "blocks nested deeper than %d", JJ_MAX_DEPTH);
    size_t open_at = p->pos;
    const char *closer = NULL; /* the word that ends this block: endif, endfor ... */
    for (int k = 0; stops && stops[k]; k++)
        closer = stops[k];
    for (;;) {
        size_t t = p->pos;
        while (t + 1 < p->len && !(p->src[t] == '{' && strchr("{%#", p->src[t + 1])))
            t++;
        if (t + 1 >= p->len) {
            if (!add_text(p, body, p->pos, p->len, false, false))
                return false;
            p->pos = p->len;
            if (stops) {
                jp_fail(p, HCQ_ERR_FORMAT, open_at, "block not closed: expected {%% %s %%} before the end",
                        closer);
                return false;
            }
            p->depth--;
            return true;
        }
        char kind = p->src[t + 1];
        bool strip = t + 2 < p->len && p->src[t + 2] == '-';
        bool plus = t + 2 < p->len && p->src[t + 2] == '+';
        if (!add_text(p, body, p->pos, t, strip, kind != '{' && !plus))
            return false;
        p->pos = t + 2 + (strip || plus);
        if (kind == '#') {
            size_t e = p->pos;
            while (e + 1 < p->len && !(p->src[e] == '#' && p->src[e + 1] == '}'))
                e++;
            if (e + 1 >= p->len)
                return jp_fail(p, HCQ_ERR_FORMAT, t, "comment not closed: expected #}");
            p->end_strip = e > p->pos && p->src[e - 1] == '-';
            p->end_block = true;
            p->pos = e + 2;
            continue;
        }
        p->end_ch = kind == '{' ? '}' : '%';
        p->brackets = 0;
        if (!jp_next(p))
            return false;
        if (kind == '{') {
            struct jj_node *n = new_node(p, JN_OUT, t);
            if (!n || !(n->expr = jp_parse_expr(p)) || !jp_expect_end(p) || !body_push(p, body, n))
                return false;
            continue;
        }
        p->end_block = true;
        if (stops && p->cur.t == TK_NAME) {
            for (int k = 0; stops[k]; k++)
                if (jp_is_kw(p, stops[k])) {
                    *which = k;
                    p->depth--;
                    return jp_next(p);
                }
        }
        if (p->cur.t == TK_NAME && p->cur.n > 3 &&
            (!memcmp(p->cur.p, "end", 3) || jp_is_kw(p, "elif") || jp_is_kw(p, "else")))
            return jp_fail(p, HCQ_ERR_FORMAT, p->cur.at, "unexpected '{%% %.*s %%}'%s%s%s", (int)p->cur.n,
                           p->cur.p, closer ? " (expected {% " : "", closer ? closer : "",
                           closer ? " %})" : "");
        if (!parse_stmt(p, body, t))
            return false;
        p->end_block = true;
    }
}

/* ==== entry ==== */

enum hcq_status
llm_jinja_parse(const char *src, size_t len, struct llm_jinja **out)
{
    *out = NULL;
    if (!src)
        return hcq_err(HCQ_ERR_INVALID, "chat template: no text");
    if (memchr(src, 0, len))
        return hcq_err(HCQ_ERR_FORMAT, "chat template: contains a NUL byte");
    struct llm_jinja *t = calloc(1, sizeof *t);
    if (!t)
        return hcq_err(HCQ_ERR_NOMEM, "chat template: out of memory");
    jj_arena_init(&t->arena, 64u << 20);
    /* Jinja drops one trailing newline of the template (keep_trailing_newline=False) */
    if (len && src[len - 1] == '\n')
        len -= len > 1 && src[len - 2] == '\r' ? 2 : 1;
    /* the tree points into its own copy of the text */
    char *copy = jj_alloc(&t->arena, len + 1);
    if (!copy) {
        llm_jinja_destroy(t);
        return hcq_err(HCQ_ERR_NOMEM, "chat template: out of memory (%zu bytes)", len);
    }
    memcpy(copy, src, len);
    struct parser p = {.src = copy, .len = len, .ar = &t->arena};
    int which;
    bool ok = parse_body(&p, &t->root, NULL, &which);
    for (size_t i = 0; ok && i < p.n_calls; i++) {
        bool known = false;
        for (size_t k = 0; k < p.n_macros && !known; k++)
            known = !strcmp(p.macros[k], p.calls[i]->name);
        if (!known) {
            snprintf(p.err, sizeof p.err, "line %u col %u: unsupported function '%s()'", p.calls[i]->line,
                     p.calls[i]->col, p.calls[i]->name);
            p.st = HCQ_ERR_UNSUPPORTED;
            ok = false;
        }
    }
    if (!ok) {
        enum hcq_status st = p.st ? p.st : HCQ_ERR_FORMAT;
        llm_jinja_destroy(t);
        return hcq_err(st, "chat template: %s", p.err);
    }
    *out = t;
    return HCQ_OK;
}

void
llm_jinja_destroy(struct llm_jinja *t)
{
    if (!t)
        return;
    jj_arena_fini(&t->arena);
    free(t);
}
