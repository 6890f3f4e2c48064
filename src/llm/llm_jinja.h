/* SPDX-License-Identifier: MIT */
/*
 * llm_jinja.h - the Jinja subset that renders chat templates (tokenizer.chat_template):
 * syntax tree, values, arena and the entry points shared by llm_jinja_lex.c, llm_jinja_expr.c,
 * llm_jinja_parse.c (lexer and parser), llm_jinja_eval.c (statements, expressions, scopes) and
 * llm_jinja_builtin.c (values, conversions) and llm_jinja_filter.c (filters, tests, methods). Layer: llm
 * (internal header).
 *
 * Everything a parse or a render allocates lives in one arena with a byte cap, so an error
 * anywhere returns without freeing piecemeal and no input can grow memory without bound.
 */
#ifndef LLM_JINJA_H
#define LLM_JINJA_H

#include "hcq.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ==== limits (a template or a conversation that passes them is an error, not a hang) ==== */

#define JJ_MAX_DEPTH 128            /* nesting of expressions and blocks while parsing */
#define JJ_MAX_CALL_DEPTH 32        /* macro calls inside macro calls */
#define JJ_MAX_EVAL_DEPTH 512       /* expression evaluation nesting (a + b + ... is a chain) */
#define JJ_MAX_STEPS 20000000ull    /* statements + expressions evaluated per render */
#define JJ_MAX_OUT_B (64u << 20)    /* rendered text */
#define JJ_MAX_ARENA_B (256u << 20) /* all values of one render */

/* ==== arena ==== */

struct jj_arena {
    struct jj_chunk *head;
    size_t used_B, cap_B;
};
void jj_arena_init(struct jj_arena *a, size_t cap_B);
void jj_arena_fini(struct jj_arena *a);
/* NULL when the cap is reached or malloc fails (zeroed memory otherwise). */
void *jj_alloc(struct jj_arena *a, size_t n);

/* ==== values ==== */

enum jj_type { JJ_UNDEF, JJ_NONE, JJ_BOOL, JJ_INT, JJ_FLOAT, JJ_STR, JJ_LIST, JJ_DICT, JJ_MACRO, JJ_FUNC };

struct jj_list;
struct jj_dict;
struct jj_node;

struct jj_val {
    enum jj_type t;
    union {
        bool b;
        int64_t i;
        double f;
        struct {
            const char *p;
            size_t n;
        } s;
        struct jj_list *l;
        struct jj_dict *d;
        const struct jj_node *macro;
    } u;
};

struct jj_list {
    struct jj_val *v;
    size_t n, cap;
};
struct jj_dict {
    struct jj_val *k, *v;
    size_t n, cap;
    bool ns; /* a namespace(): `set ns.attr = ...` may write it */
};

/* ==== syntax tree ==== */

enum jj_expr_kind {
    JE_LIT,    /* val */
    JE_NAME,   /* name */
    JE_LIST,   /* args (list literal) */
    JE_TUPLE,  /* args (tuple literal; behaves as a list) */
    JE_DICT,   /* args: key0, val0, key1, val1 ... */
    JE_ATTR,   /* a.name */
    JE_INDEX,  /* a[b] */
    JE_SLICE,  /* a[b:c:d], NULL parts absent */
    JE_CALL,   /* name(args, kw) : global function or macro */
    JE_METHOD, /* a.name(args) */
    JE_FILTER, /* a | name(args) */
    JE_TEST,   /* a is [not] name(args) */
    JE_UNARY,  /* op a : not, -, + */
    JE_BINARY, /* a op b */
    JE_COND,   /* b if a else c */
};

enum jj_op {
    JO_NONE,
    JO_OR,
    JO_AND,
    JO_NOT,
    JO_NEG,
    JO_POS,
    JO_EQ,
    JO_NE,
    JO_LT,
    JO_LE,
    JO_GT,
    JO_GE,
    JO_IN,
    JO_NOTIN,
    JO_ADD,
    JO_SUB,
    JO_CONCAT,
    JO_MUL,
    JO_DIV,
    JO_FLOORDIV,
    JO_MOD,
    JO_POW,
};

struct jj_expr {
    enum jj_expr_kind kind;
    enum jj_op op;
    bool negate;        /* JE_TEST: `is not` */
    uint32_t line, col; /* where it starts, for errors */
    struct jj_val val;
    const char *name; /* NUL-terminated (arena) */
    int fn;           /* JE_FILTER / JE_TEST / JE_METHOD / JE_CALL builtin id; -1: macro or variable */
    struct jj_expr *a, *b, *c;
    struct jj_expr **args;
    const char **kw_names; /* kw_names[i] != NULL: args[i] is name=value */
    size_t n_args;
};

enum jj_node_kind {
    JN_TEXT,  /* text */
    JN_OUT,   /* {{ expr }} */
    JN_IF,    /* conds[i] -> bodies[i]; else_body */
    JN_FOR,   /* for targets in iter [if cond]: body; else else_body */
    JN_SET,   /* set target(s) = expr ; or block set (body) */
    JN_MACRO, /* macro name(params): body */
    JN_BREAK,
    JN_CONTINUE,
    JN_BLOCK, /* body rendered in place ({% generation %}) */
};

struct jj_body {
    struct jj_node **v;
    size_t n, cap;
};

struct jj_node {
    enum jj_node_kind kind;
    uint32_t line, col;
    const char *text;
    size_t text_n;
    struct jj_expr *expr;   /* OUT / SET value / FOR iterable */
    struct jj_expr *cond;   /* FOR filter */
    struct jj_expr **conds; /* IF */
    struct jj_body *bodies; /* IF, parallel to conds */
    size_t n_conds;
    struct jj_body body, else_body;
    const char *targets[2]; /* FOR / SET names; SET ns.attr: targets[0] = ns, attr = attr */
    size_t n_targets;
    const char *attr;
    /* MACRO */
    const char *name;
    const char **params;
    struct jj_expr **defaults; /* NULL entries: no default */
    size_t n_params;
};

struct llm_jinja {
    struct jj_arena arena;
    struct jj_body root;
};

/* builtin ids (names in llm_jinja_value.c, implementations in llm_jinja_filter.c) */
enum {
    F_ABS,
    F_CAPITALIZE,
    F_COUNT,
    F_D,
    F_DEFAULT,
    F_FIRST,
    F_FLOAT,
    F_INDENT,
    F_INT,
    F_ITEMS,
    F_JOIN,
    F_LAST,
    F_LENGTH,
    F_LIST,
    F_LOWER,
    F_MAP,
    F_REJECT,
    F_REJECTATTR,
    F_REPLACE,
    F_REVERSE,
    F_ROUND,
    F_SAFE,
    F_SELECT,
    F_SELECTATTR,
    F_STRING,
    F_TITLE,
    F_TOJSON,
    F_TRIM,
    F_UNIQUE,
    F_UPPER,
    F_N
};

enum {
    T_DEFINED,
    T_UNDEFINED,
    T_NONE,
    T_STRING,
    T_NUMBER,
    T_INTEGER,
    T_FLOAT,
    T_BOOLEAN,
    T_MAPPING,
    T_ITERABLE,
    T_SEQUENCE,
    T_TRUE,
    T_FALSE,
    T_ODD,
    T_EVEN,
    T_DIVISIBLEBY,
    T_EQUALTO,
    T_EQ,
    T_SAMEAS,
    T_NE,
    T_LT,
    T_GT,
    T_LE,
    T_GE,
    T_IN,
    T_LOWER,
    T_UPPER,
    T_N
};

enum {
    M_STRIP,
    M_LSTRIP,
    M_RSTRIP,
    M_SPLIT,
    M_STARTSWITH,
    M_ENDSWITH,
    M_UPPER,
    M_LOWER,
    M_TITLE,
    M_CAPITALIZE,
    M_REPLACE,
    M_FIND,
    M_COUNT,
    M_JOIN,
    M_ITEMS,
    M_KEYS,
    M_VALUES,
    M_GET,
    M_N
};
extern const char *const jj_filter_names[F_N];
extern const char *const jj_test_names[T_N];
extern const char *const jj_method_names[M_N];

/* string builder in the render's arena */
struct jj_sb {
    struct jj_ctx *c;
    char *p;
    size_t n, cap;
    bool oom;
};
void jj_sb_put(struct jj_sb *b, const char *s, size_t n);
void jj_sb_puts(struct jj_sb *b, const char *s);
void jj_sb_printf(struct jj_sb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* false when the arena ran out */
bool jj_sb_done(struct jj_sb *b, struct jj_val *out);

/* builtin ids by name; -1: none */
int jj_filter_find(const char *name);
int jj_test_find(const char *name);
int jj_method_find(const char *name);
int jj_func_find(const char *name);

/* ==== render context ==== */

struct jj_scope;
struct jj_ctx {
    struct jj_arena arena;
    char *out;
    size_t out_n, out_cap;
    uint64_t steps;
    uint32_t call_depth;
    uint32_t eval_depth; /* eval() recursion: long operator chains nest without parentheses */
    struct jj_scope *globals;
    const char *src; /* template text, for error positions */
    char err[512];
    bool failed;
    int64_t now_s; /* strftime_now's time; -1: the real clock */
};

/* Records the first error (position and message) and returns false. */
bool jj_fail(struct jj_ctx *c, const struct jj_expr *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* value helpers (llm_jinja_value.c) */
struct jj_val jj_str(struct jj_ctx *c, const char *p, size_t n); /* copies; UNDEF when out of memory */
struct jj_val jj_cstr(const char *p);                            /* static text, not copied */
bool jj_truthy(struct jj_val v);
bool jj_equal(struct jj_val a, struct jj_val b);
bool jj_list_push(struct jj_ctx *c, struct jj_list *l, struct jj_val v);
bool jj_dict_set(struct jj_ctx *c, struct jj_dict *d, struct jj_val k, struct jj_val v);
bool jj_dict_get(const struct jj_dict *d, const char *k, size_t kn, struct jj_val *out);
/* str(v) as Python/Jinja print it; false when out of memory */
bool jj_to_str(struct jj_ctx *c, struct jj_val v, struct jj_val *out);
bool jj_to_json(struct jj_ctx *c, struct jj_val v, int indent, struct jj_val *out);
size_t jj_utf8_len(const char *p, size_t n);
const char *jj_type_name(enum jj_type t);

bool jj_apply_filter(struct jj_ctx *c, const struct jj_expr *e, struct jj_val v, struct jj_val *args,
                     size_t n, struct jj_val *out);
bool jj_apply_test(struct jj_ctx *c, const struct jj_expr *e, struct jj_val v, struct jj_val *args, size_t n,
                   bool *out);
bool jj_apply_method(struct jj_ctx *c, const struct jj_expr *e, struct jj_val v, struct jj_val *args,
                     size_t n, struct jj_val *out);

/* ==== entry points ==== */

/* Parses `src` (len bytes) with HF's options (trim_blocks, lstrip_blocks, one trailing
 * newline dropped). A construct outside the subset is HCQ_ERR_UNSUPPORTED naming it and
 * its line:column; malformed text is HCQ_ERR_FORMAT. */
HCQ_MUST_CHECK enum hcq_status llm_jinja_parse(const char *src, size_t len, struct llm_jinja **out);
void llm_jinja_destroy(struct llm_jinja *t);

/* One variable the template sees. */
struct llm_jinja_var {
    const char *name;
    struct jj_val val;
};
/* A render: begin (the arena the variables' values are built in), run, end (frees all).
 * *out is malloc'd and NUL-terminated. now_s: the time strftime_now sees (-1: the clock). */
void llm_jinja_render_begin(struct jj_ctx *c, int64_t now_s);
HCQ_MUST_CHECK enum hcq_status llm_jinja_render_run(struct jj_ctx *c, const struct llm_jinja *t,
                                                    const struct llm_jinja_var *vars, size_t n_vars,
                                                    char **out, size_t *len_out);
void llm_jinja_render_end(struct jj_ctx *c);

#endif
