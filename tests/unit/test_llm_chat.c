/* SPDX-License-Identifier: MIT */
/*
 * test_llm_chat.c - chat templates: the real templates of tests/data/chat_templates/ rendered
 * on fixed conversations against the expected texts there (errors included), the built-in
 * texts against those files, each supported construct against its Jinja result, fresh random
 * conversations against a C reference, parse-time and evaluation errors (unsupported
 * constructs, unterminated tags, raise_exception, deep nesting, long loops, huge output),
 * template selection from a GGUF, and random mutations of the real templates (no crash).
 */
#include "harness.h"
#include "llm.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DIR "tests/data/chat_templates/"
#define NOW_S 1700000000 /* the time gen_expected.py renders strftime_now() at */

static char *
slurp(const char *path, size_t *n_out)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t n = 0;
    if (fseek(f, 0, SEEK_END) == 0) {
        long sz = ftell(f);
        if (sz >= 0 && fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)sz + 1))) {
            n = fread(buf, 1, (size_t)sz, f);
            buf[n] = 0;
        }
    }
    fclose(f);
    if (n_out)
        *n_out = n;
    return buf;
}

/* ==== the real templates ==== */

struct conv {
    const char *name;
    struct llm_chat_msg msgs[4];
    size_t n;
    bool add_gen;
    int thinking;
};

/* equal to CONVS of tests/data/chat_templates/gen_expected.py */
static const struct conv convs[] = {
    {"sys3",
     {{"system", "You are a helpful assistant."},
      {"user", "Hello!"},
      {"assistant", "Hi there. How can I help?"},
      {"user", "Tell me a joke."}},
     4,
     true,
     -1},
    {"nosys",
     {{"user", "What is 2+2?"},
      {"assistant", "   It is 4.   "},
      {"user", "Gr\xc3\xbc\xc3\x9f"
               "e \xf0\x9f\x8c\x8d and \"quotes\""}},
     3,
     false,
     -1},
    {"one", {{"user", "Hi"}}, 1, true, -1},
    {"think",
     {{"user", "Q1"}, {"assistant", "<think>\nstep one\n</think>\n\nA1"}, {"user", "Q2"}},
     3,
     true,
     0},
};

static const char *const templates[] = {
    "chatml", "llama3", "llama3.1",  "llama3.2",     "qwen2.5",      "qwen3",       "gemma2",
    "gemma3", "phi3",   "phi3-mini", "mistral-v0.1", "mistral-v0.2", "mistral-v0.3"};

TEST(real_templates)
{
    char path[256];
    char *text = NULL, *want = NULL, *out = NULL;
    struct llm_chat_tmpl_obj *tm = NULL;
    int checked = 0, errors = 0;
    for (size_t i = 0; i < sizeof templates / sizeof templates[0]; i++) {
        snprintf(path, sizeof path, DIR "%s.jinja", templates[i]);
        CHECKF((text = slurp(path, NULL)), "cannot read %s", path);
        CHECK_OK(llm_chat_tmpl_create(text, "<BOS>", "<EOS>", &tm));
        for (size_t k = 0; k < sizeof convs / sizeof convs[0]; k++) {
            const struct conv *cv = &convs[k];
            struct llm_chat_apply_params p = {cv->add_gen, cv->thinking, NOW_S};
            size_t len = 0, want_n = 0;
            enum hcq_status st = llm_chat_tmpl_apply_ex(tm, cv->msgs, cv->n, &p, &out, &len);
            snprintf(path, sizeof path, DIR "expected/%s.%s.txt", templates[i], cv->name);
            if ((want = slurp(path, &want_n))) {
                CHECKF(st == HCQ_OK, "%s on %s: %s", templates[i], cv->name, th_last_error());
                CHECKF(len == want_n && !memcmp(out, want, len) && strlen(out) == len,
                       "%s on %s:\n--- got (%zu bytes)\n%s\n--- want (%zu bytes)\n%s", templates[i], cv->name,
                       len, out, want_n, want);
            } else {
                snprintf(path, sizeof path, DIR "expected/%s.%s.err", templates[i], cv->name);
                CHECKF((want = slurp(path, NULL)), "no expected/%s.%s.txt or .err", templates[i], cv->name);
                CHECKF(st == HCQ_ERR_INVALID && !out, "%s on %s: want the error '%s', got status %d",
                       templates[i], cv->name, want, st);
                CHECKF(strstr(th_last_error(), want), "%s on %s: error '%s' lacks '%s'", templates[i],
                       cv->name, th_last_error(), want);
                errors++;
            }
            checked++;
            free(want);
            free(out);
            want = out = NULL;
        }
        llm_chat_tmpl_destroy(tm);
        tm = NULL;
        free(text);
        text = NULL;
    }
    CHECK(checked == 52 && errors == 2);
done:
    free(want);
    free(out);
    free(text);
    llm_chat_tmpl_destroy(tm);
}

/* Expectations written out by hand from the formats the model cards document (independent of
 * the generated files). */
TEST(documented_formats)
{
    static const struct {
        const char *tmpl, *want;
    } cases[] = {
        {"chatml",
         "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nHello!<|im_end|>\n"
         "<|im_start|>assistant\nHi there. How can I help?<|im_end|>\n<|im_start|>user\nTell me a "
         "joke.<|im_end|>\n<|im_start|>assistant\n"},
        {"llama3",
         "<BOS><|start_header_id|>system<|end_header_id|>\n\nYou are a helpful assistant.<|eot_id|>"
         "<|start_header_id|>user<|end_header_id|>\n\nHello!<|eot_id|><|start_header_id|>assistant"
         "<|end_header_id|>\n\nHi there. How can I help?<|eot_id|><|start_header_id|>user<|end_header_id|>"
         "\n\nTell me a joke.<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"},
        {"llama3.1",
         "<BOS><|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: December 2023\n"
         "Today Date: 26 Jul 2024\n\nYou are a helpful assistant.<|eot_id|><|start_header_id|>user"
         "<|end_header_id|>\n\nHello!<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nHi "
         "there. How can I help?<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nTell me a "
         "joke.<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"},
        {"gemma3",
         "<BOS><start_of_turn>user\nYou are a helpful assistant.\n\nHello!<end_of_turn>\n<start_of_turn>"
         "model\nHi there. How can I help?<end_of_turn>\n<start_of_turn>user\nTell me a joke.<end_of_turn>\n"
         "<start_of_turn>model\n"},
        {"phi3",
         "<|system|>\nYou are a helpful assistant.<|end|>\n<|user|>\nHello!<|end|>\n<|assistant|>\nHi there. "
         "How can I help?<|end|>\n<|user|>\nTell me a joke.<|end|>\n<|assistant|>\n"},
        {"mistral-v0.3", "<BOS>[INST] Hello![/INST] Hi there. How can I help?<EOS>[INST] You are a helpful "
                         "assistant.\n\nTell me a joke.[/INST]"},
        {"qwen2.5",
         "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nHello!<|im_end|>\n"
         "<|im_start|>assistant\nHi there. How can I help?<|im_end|>\n<|im_start|>user\nTell me a "
         "joke.<|im_end|>\n<|im_start|>assistant\n"},
    };
    struct llm_chat_tmpl_obj *tm = NULL;
    char *out = NULL;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *text = llm_chat_tmpl_builtin_text(cases[i].tmpl);
        CHECK(text);
        CHECK_OK(llm_chat_tmpl_create(text, "<BOS>", "<EOS>", &tm));
        CHECK_OK(llm_chat_tmpl_apply(tm, convs[0].msgs, 4, true, &out, NULL));
        CHECKF(!strcmp(out, cases[i].want), "%s:\n--- got\n%s\n--- want\n%s", cases[i].tmpl, out,
               cases[i].want);
        free(out);
        out = NULL;
        llm_chat_tmpl_destroy(tm);
        tm = NULL;
    }
done:
    free(out);
    llm_chat_tmpl_destroy(tm);
}

TEST(builtins_equal_files)
{
    char path[256], *text = NULL;
    int n = 0;
    for (size_t i = 0; i < sizeof templates / sizeof templates[0]; i++) {
        const char *b = llm_chat_tmpl_builtin_text(templates[i]);
        if (!b)
            continue; /* phi3-mini: a file only */
        snprintf(path, sizeof path, DIR "%s.jinja", templates[i]);
        CHECKF((text = slurp(path, NULL)), "cannot read %s", path);
        CHECKF(!strcmp(text, b), "built-in '%s' differs from %s", templates[i], path);
        free(text);
        text = NULL;
        n++;
    }
    CHECK(n == 12);
    CHECK(llm_chat_tmpl_builtin_text("gemma") == llm_chat_tmpl_builtin_text("gemma3"));
    CHECK(!llm_chat_tmpl_builtin_text("no-such-template"));
done:
    free(text);
}

/* ==== constructs (expected strings checked once against jinja2 3.1 with HF's options) ==== */

static const struct {
    const char *tmpl, *want;
} constructs[] = {
#include "test_llm_chat_cases.inc"
};

static enum hcq_status
render(const char *tmpl, char **out)
{
    struct llm_chat_tmpl_obj *tm = NULL;
    enum hcq_status st = llm_chat_tmpl_create(tmpl, "<s>", "</s>", &tm);
    *out = NULL;
    if (!st)
        st = llm_chat_tmpl_apply(tm, NULL, 0, false, out, NULL);
    llm_chat_tmpl_destroy(tm);
    return st;
}

TEST(constructs)
{
    char *out = NULL;
    for (size_t i = 0; i < sizeof constructs / sizeof constructs[0]; i++) {
        CHECKF(render(constructs[i].tmpl, &out) == HCQ_OK, "case %zu %s: %s", i, constructs[i].tmpl,
               th_last_error());
        CHECKF(!strcmp(out, constructs[i].want), "case %zu %s:\n  got  '%s'\n  want '%s'", i,
               constructs[i].tmpl, out, constructs[i].want);
        free(out);
        out = NULL;
    }
done:
    free(out);
}

/* Fresh random conversations through ChatML against the format built here in C. */
TEST(random_conversations)
{
    struct llm_chat_tmpl_obj *tm = NULL;
    char *out = NULL, *want = NULL, *texts[8] = {0};
    struct llm_chat_msg msgs[8];
    static const char *const roles[] = {"system", "user", "assistant", "tool"};
    CHECK_OK(llm_chat_tmpl_from_model(NULL, "chatml", &tm));
    for (int round = 0; round < 50; round++) {
        size_t n = th_rand() % 8, need = 64;
        for (size_t i = 0; i < n; i++) {
            size_t len = th_rand() % 200;
            free(texts[i]);
            CHECK((texts[i] = malloc(len + 1)));
            for (size_t k = 0; k < len; k++) /* any byte but NUL: braces, quotes, UTF-8 pieces */
                texts[i][k] = (char)(1 + th_rand() % 255);
            texts[i][len] = 0;
            msgs[i] = (struct llm_chat_msg){roles[th_rand() % 4], texts[i]};
            need += len + 32;
        }
        bool gen = th_rand() & 1;
        CHECK((want = malloc(need)));
        size_t w = 0;
        for (size_t i = 0; i < n; i++)
            w += (size_t)sprintf(want + w, "<|im_start|>%s\n%s<|im_end|>\n", msgs[i].role, msgs[i].content);
        if (gen)
            w += (size_t)sprintf(want + w, "<|im_start|>assistant\n");
        size_t len;
        CHECK_OK(llm_chat_tmpl_apply(tm, msgs, n, gen, &out, &len));
        CHECKF(len == w && !memcmp(out, want, w), "round %d: %zu messages rendered wrong", round, n);
        free(out);
        free(want);
        out = want = NULL;
    }
    const char *const *stops;
    size_t ns = llm_chat_tmpl_stops(tm, &stops);
    CHECK(ns == 1 && !strcmp(stops[0], "<|im_end|>"));
done:
    for (int i = 0; i < 8; i++)
        free(texts[i]);
    free(out);
    free(want);
    llm_chat_tmpl_destroy(tm);
}

/* ==== errors ==== */

TEST(parse_errors)
{
    static const struct {
        const char *tmpl;
        enum hcq_status st;
        const char *msg;
    } cases[] = {
        {"{{ x | frobnicate }}", HCQ_ERR_UNSUPPORTED, "line 1 col 8: unsupported filter 'frobnicate'"},
        {"a\n{% if x is prime %}{% endif %}", HCQ_ERR_UNSUPPORTED,
         "line 2 col 12: unsupported test 'is prime'"},
        {"{% filter upper %}x{% endfilter %}", HCQ_ERR_UNSUPPORTED, "unsupported statement '{% filter %}'"},
        {"{% include 'x' %}", HCQ_ERR_UNSUPPORTED, "unsupported statement '{% include %}'"},
        {"{{ cycler(1) }}", HCQ_ERR_UNSUPPORTED, "line 1 col 4: unsupported function 'cycler()'"},
        {"{{ 'a'.zfill(3) }}", HCQ_ERR_UNSUPPORTED, "unsupported method '.zfill()'"},
        {"{% for x in y recursive %}{% endfor %}", HCQ_ERR_UNSUPPORTED, "recursive"},
        {"abc {{ x", HCQ_ERR_FORMAT, "unterminated tag"},
        {"{% if x %}", HCQ_ERR_FORMAT, "line 1 col 11: block not closed: expected {% endif %}"},
        {"{% for x in y %}a", HCQ_ERR_FORMAT, "expected {% endfor %}"},
        {"{# never closed", HCQ_ERR_FORMAT, "comment not closed"},
        {"{{ 'abc }}", HCQ_ERR_FORMAT, "unterminated string literal"},
        {"{% endfor %}", HCQ_ERR_FORMAT, "unexpected '{% endfor %}'"},
        {"{% if x %}{% endfor %}", HCQ_ERR_FORMAT, "unexpected '{% endfor %}' (expected {% endif %})"},
        {"{{ }}", HCQ_ERR_FORMAT, "expected an expression"},
        {"{{ a b }}", HCQ_ERR_FORMAT, "expected the end of the tag"},
        {"{{ a[] }}", HCQ_ERR_FORMAT, "empty subscript"},
        {"{% set %}", HCQ_ERR_FORMAT, "expected a name"},
        {"{{ 1 @ 2 }}", HCQ_ERR_UNSUPPORTED, "unexpected character '@'"},
        {"{{ 99999999999999999999 }}", HCQ_ERR_UNSUPPORTED, "integer literal too large"},
    };
    struct llm_chat_tmpl_obj *tm = NULL;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        enum hcq_status st = llm_chat_tmpl_create(cases[i].tmpl, NULL, NULL, &tm);
        CHECKF(st == cases[i].st && !tm, "'%s': status %d, want %d", cases[i].tmpl, st, cases[i].st);
        CHECKF(strstr(th_last_error(), cases[i].msg), "'%s': error '%s' lacks '%s'", cases[i].tmpl,
               th_last_error(), cases[i].msg);
    }
    /* nesting deeper than the parser's limit is an error, not a stack overflow */
    char *deep = malloc(200000);
    CHECK(deep);
    size_t n = 0;
    n += (size_t)sprintf(deep, "{{ ");
    for (int i = 0; i < 50000; i++)
        deep[n++] = '(';
    deep[n++] = '1';
    for (int i = 0; i < 50000; i++)
        deep[n++] = ')';
    strcpy(deep + n, " }}");
    CHECK(llm_chat_tmpl_create(deep, NULL, NULL, &tm) == HCQ_ERR_UNSUPPORTED &&
          strstr(th_last_error(), "nested"));
    n = 0;
    for (int i = 0; i < 15000; i++) /* 150000 bytes of the 200000 */
        n += (size_t)sprintf(deep + n, "{%% if 1 %%}");
    CHECK(llm_chat_tmpl_create(deep, NULL, NULL, &tm) == HCQ_ERR_UNSUPPORTED &&
          strstr(th_last_error(), "nested"));
    n = 0;
    for (int i = 0; i < 20000; i++)
        n += (size_t)sprintf(deep + n, "not ");
    deep[n] = 0;
    char *wrapped = malloc(n + 16);
    CHECK(wrapped);
    sprintf(wrapped, "{{ %s1 }}", deep);
    enum hcq_status st = llm_chat_tmpl_create(wrapped, NULL, NULL, &tm);
    free(wrapped);
    CHECK(st == HCQ_ERR_UNSUPPORTED && strstr(th_last_error(), "nested"));
    n = 0;
    for (int i = 0; i < 300; i++)
        n += (size_t)sprintf(deep + n, "{%% macro m%d() %%}{%% endmacro %%}", i);
    CHECK(llm_chat_tmpl_create(deep, NULL, NULL, &tm) == HCQ_ERR_UNSUPPORTED &&
          strstr(th_last_error(), "256 macros"));
    free(deep);
done:
    llm_chat_tmpl_destroy(tm);
}

TEST(eval_errors)
{
    static const struct {
        const char *tmpl, *msg;
    } cases[] = {
        {"{{ raise_exception('Conversation roles must alternate') }}",
         "line 1 col 4: the template raised: Conversation roles must alternate"},
        {"{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}", "macro calls nested deeper than 32"},
        {"{% set x = range(1000) %}{% for a in x %}{% for b in x %}{% for c in x %}{% endfor %}{% endfor "
         "%}{% endfor %}",
         "steps"},
        {"{{ 'x' * 1000000000 }}", "string repetition longer than"},
        {"{% set ns = namespace(s='xxxxxxxxxxxxxxxx') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s "
         "%}{% endfor %}",
         "longer than"},
        {"{% for i in range(2000000) %}{% endfor %}", "range() longer than"},
        {"{{ undefined_var.attr }}", "of an undefined value"},
        {"{{ 1 + 'a' }}", "unsupported operand types"},
        {"{{ 1 // 0 }}", "division by zero"},
        {"{{ 4611686018427387904 * 2 }}", "integer overflow"},
        {"{% set x.y = 1 %}", "not a namespace()"},
        {"{{ [1,2][::0] }}", "slice step cannot be zero"},
        {"{{ 3 | length }}", "length of int"},
        {"{{ 'a'.items() }}", "dict methods need a dict"},
        {"{{ {'a': x} | tojson }}", "undefined value is not JSON"},
    };
    char *out = NULL;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        enum hcq_status st = render(cases[i].tmpl, &out);
        CHECKF(st == HCQ_ERR_INVALID && !out, "'%s': status %d, want HCQ_ERR_INVALID", cases[i].tmpl, st);
        CHECKF(strstr(th_last_error(), cases[i].msg), "'%s': error '%s' lacks '%s'", cases[i].tmpl,
               th_last_error(), cases[i].msg);
    }
    /* a chain of 100000 operators (a tree that deep) and a list nested 100000 deep: errors or
     * answers, not a stack overflow */
    char *chain = malloc(600000);
    CHECK(chain);
    size_t cn = (size_t)sprintf(chain, "{{ 1");
    for (int i = 0; i < 100000; i++)
        cn += (size_t)sprintf(chain + cn, " + 1");
    strcpy(chain + cn, " }}");
    enum hcq_status cst = render(chain, &out);
    free(chain);
    CHECK(cst == HCQ_ERR_INVALID && strstr(th_last_error(), "nested deeper than"));
    CHECK_OK(
        render("{% set ns = namespace(x=[]) %}{% for i in range(100000) %}{% set ns.x = [ns.x] %}{% endfor %}"
               "{{ ns.x == ns.x }}{{ [ns.x] == [ns.x] }}{{ ns.x in [ns.x] }}{{ (ns.x | string)[:12] }}",
               &out));
    CHECKF(!strcmp(out, "TrueTrueTrue[[[[[[[[[[[["), "deep list: '%s'", out);
    free(out);
    out = NULL;
    /* an output past the render's limit */
    CHECK(render("{% for i in range(1000000) %}{{ 'y' * 1000 }}{% endfor %}", &out) == HCQ_ERR_INVALID &&
          strstr(th_last_error(), "limit"));
    /* bad arguments */
    struct llm_chat_tmpl_obj *tm = NULL;
    struct llm_chat_msg bad = {"user", NULL};
    CHECK_OK(llm_chat_tmpl_from_model(NULL, "chatml", &tm));
    CHECK(llm_chat_tmpl_apply(tm, &bad, 1, true, &out, NULL) == HCQ_ERR_INVALID && !out);
    llm_chat_tmpl_destroy(tm);
    CHECK(llm_chat_tmpl_from_model(NULL, "/no/such/template", &tm) == HCQ_ERR_NOT_FOUND && !tm);
    CHECK(strstr(th_last_error(), "chatml"));
done:
    free(out);
}

/* ==== from a GGUF ==== */

static enum hcq_status
write_vocab(const char *path, const char *const *toks, uint64_t n, const char *tmpl)
{
    struct llm_gguf_writer *w = NULL;
    enum hcq_status st = llm_gguf_writer_create(&w);
    if (!st)
        st = llm_gguf_writer_set_arr_str(w, "tokenizer.ggml.tokens", toks, NULL, n);
    if (!st)
        st = llm_gguf_writer_set_u32(w, "tokenizer.ggml.bos_token_id", 0);
    if (!st)
        st = llm_gguf_writer_set_u32(w, "tokenizer.ggml.eos_token_id", 1);
    if (!st && tmpl)
        st = llm_gguf_writer_set_str(w, "tokenizer.chat_template", tmpl);
    if (!st)
        st = llm_gguf_writer_write_file(w, path);
    llm_gguf_writer_destroy(w);
    return st;
}

TEST(from_model)
{
    char path[] = "/tmp/test_llm_chat_XXXXXX";
    int fd = mkstemp(path);
    struct llm_gguf *g = NULL;
    struct llm_chat_tmpl_obj *tm = NULL;
    char *out = NULL;
    static const char *const llama_toks[] = {"<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>",
                                             "a"};
    static const char *const plain_toks[] = {"<s>", "</s>", "a", "b"};
    struct llm_chat_msg m = {"user", "hey"};
    const char *const *stops;
    CHECK(fd >= 0);
    close(fd);
    /* the model's own template, with its bos/eos */
    CHECK_OK(write_vocab(path, plain_toks, 4, "{{ bos_token }}[{{ messages[0].content }}]{{ eos_token }}"));
    CHECK_OK(llm_gguf_open(path, &g));
    CHECK_OK(llm_chat_tmpl_from_model(g, NULL, &tm));
    CHECK(!strcmp(llm_chat_tmpl_name(tm), "gguf"));
    CHECK_OK(llm_chat_tmpl_apply(tm, &m, 1, true, &out, NULL));
    CHECK(!strcmp(out, "<s>[hey]</s>"));
    CHECK(llm_chat_tmpl_stops(tm, &stops) >= 1 && !strcmp(stops[0], "</s>"));
    free(out);
    out = NULL;
    llm_chat_tmpl_destroy(tm);
    tm = NULL;
    /* a name overrides it */
    CHECK_OK(llm_chat_tmpl_from_model(g, "llama3", &tm));
    CHECK_OK(llm_chat_tmpl_apply(tm, &m, 1, false, &out, NULL));
    CHECK(!strcmp(out, "<s><|start_header_id|>user<|end_header_id|>\n\nhey<|eot_id|>"));
    free(out);
    out = NULL;
    llm_chat_tmpl_destroy(tm);
    tm = NULL;
    llm_gguf_destroy(g);
    g = NULL;
    /* an unsupported template in the model: a load-time error that names the way out */
    CHECK_OK(write_vocab(path, plain_toks, 4, "{% for m in messages %}{{ m | wordwrap }}{% endfor %}"));
    CHECK_OK(llm_gguf_open(path, &g));
    CHECK(llm_chat_tmpl_from_model(g, NULL, &tm) == HCQ_ERR_UNSUPPORTED && !tm);
    CHECK(strstr(th_last_error(), "unsupported filter 'wordwrap'") &&
          strstr(th_last_error(), "--chat-template"));
    llm_gguf_destroy(g);
    g = NULL;
    /* no template: the vocabulary's family, else ChatML */
    CHECK_OK(write_vocab(path, llama_toks, 4, NULL));
    CHECK_OK(llm_gguf_open(path, &g));
    CHECK_OK(llm_chat_tmpl_from_model(g, NULL, &tm));
    CHECK(!strcmp(llm_chat_tmpl_name(tm), "llama3.2"));
    llm_chat_tmpl_destroy(tm);
    tm = NULL;
    llm_gguf_destroy(g);
    g = NULL;
    CHECK_OK(write_vocab(path, plain_toks, 4, NULL));
    CHECK_OK(llm_gguf_open(path, &g));
    CHECK_OK(llm_chat_tmpl_from_model(g, NULL, &tm));
    CHECK(!strcmp(llm_chat_tmpl_name(tm), "chatml"));
    /* a template file by path */
    llm_chat_tmpl_destroy(tm);
    tm = NULL;
    CHECK_OK(llm_chat_tmpl_from_model(g, DIR "gemma2.jinja", &tm));
    CHECK_OK(llm_chat_tmpl_apply(tm, &m, 1, true, &out, NULL));
    CHECK(!strcmp(out, "<s><start_of_turn>user\nhey<end_of_turn>\n<start_of_turn>model\n"));
done:
    free(out);
    llm_chat_tmpl_destroy(tm);
    llm_gguf_destroy(g);
    unlink(path);
}

/* ==== threads ==== */

struct share {
    const struct llm_chat_tmpl_obj *tm;
    const char *want[4];
    int bad;
};

static void *
share_thread(void *arg)
{
    struct share *sh = arg;
    for (int i = 0; i < 200; i++) {
        size_t k = (size_t)i % 4;
        struct llm_chat_apply_params p = {convs[k].add_gen, convs[k].thinking, NOW_S};
        char *out = NULL;
        if (llm_chat_tmpl_apply_ex(sh->tm, convs[k].msgs, convs[k].n, &p, &out, NULL) ||
            strcmp(out, sh->want[k]))
            __atomic_add_fetch(&sh->bad, 1, __ATOMIC_RELAXED);
        free(out);
    }
    return NULL;
}

/* One compiled template applied by 4 threads at once gives each the single-threaded text. */
TEST(threads_share_a_template)
{
    struct llm_chat_tmpl_obj *tm = NULL;
    struct share sh = {0};
    char *want[4] = {0};
    pthread_t th[4];
    int started = 0;
    CHECK_OK(llm_chat_tmpl_create(llm_chat_tmpl_builtin_text("qwen3"), "<BOS>", "<EOS>", &tm));
    for (int k = 0; k < 4; k++) {
        struct llm_chat_apply_params p = {convs[k].add_gen, convs[k].thinking, NOW_S};
        CHECK_OK(llm_chat_tmpl_apply_ex(tm, convs[k].msgs, convs[k].n, &p, &want[k], NULL));
        sh.want[k] = want[k];
    }
    sh.tm = tm;
    for (; started < 4; started++)
        CHECK(pthread_create(&th[started], NULL, share_thread, &sh) == 0);
done:
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    if (started == 4 && sh.bad)
        th_fail(t, __FILE__, __LINE__, "%d of 800 threaded renders differ or failed", sh.bad);
    for (int k = 0; k < 4; k++)
        free(want[k]);
    llm_chat_tmpl_destroy(tm);
}

/* ==== mutations ==== */

TEST(mutated_templates_never_crash)
{
    static const char alphabet[] = "{}%#-+()[]'\".|~:,=<>!*/ \n\tabcdefxyz0123456789_";
    char path[256], *src = NULL, *buf = NULL, *out = NULL;
    struct llm_chat_tmpl_obj *tm = NULL;
    int parsed = 0, rendered = 0;
    for (int round = 0; round < 1500; round++) {
        const char *name = templates[th_rand() % (sizeof templates / sizeof templates[0])];
        size_t n;
        snprintf(path, sizeof path, DIR "%s.jinja", name);
        CHECK((src = slurp(path, &n)));
        CHECK((buf = malloc(n + 64)));
        memcpy(buf, src, n + 1);
        int edits = 1 + (int)(th_rand() % 4);
        for (int e = 0; e < edits; e++) {
            size_t at = n ? th_rand() % n : 0;
            switch (th_rand() % 3) {
            case 0:
                buf[at] = alphabet[th_rand() % (sizeof alphabet - 1)];
                break;
            case 1:
                memmove(buf + at, buf + at + 1, n - at);
                n -= n > 0;
                break; /* delete */
            default:   /* insert */
                memmove(buf + at + 1, buf + at, n - at + 1);
                buf[at] = alphabet[th_rand() % (sizeof alphabet - 1)];
                n++;
            }
        }
        buf[n] = 0;
        if (llm_chat_tmpl_create(buf, "<s>", "</s>", &tm) == HCQ_OK) {
            parsed++;
            const struct conv *cv = &convs[th_rand() % 4];
            if (llm_chat_tmpl_apply(tm, cv->msgs, cv->n, cv->add_gen, &out, NULL) == HCQ_OK) {
                CHECK(out && strlen(out) < (64u << 20));
                rendered++;
            } else {
                CHECK(!out && th_last_error()[0]);
            }
            free(out);
            out = NULL;
            llm_chat_tmpl_destroy(tm);
            tm = NULL;
        } else {
            CHECK(!tm && th_last_error()[0]);
        }
        free(src);
        free(buf);
        src = buf = NULL;
    }
    printf("    mutations: %d of 1500 parsed, %d rendered\n", parsed, rendered);
    CHECK(parsed > 0);
done:
    free(src);
    free(buf);
    free(out);
    llm_chat_tmpl_destroy(tm);
}

int
main(int argc, char **argv)
{
    static const struct th_case cases[] = {
        TH_CASE(real_templates),
        TH_CASE(documented_formats),
        TH_CASE(builtins_equal_files),
        TH_CASE(constructs),
        TH_CASE(random_conversations),
        TH_CASE(parse_errors),
        TH_CASE(eval_errors),
        TH_CASE(from_model),
        TH_CASE(threads_share_a_template),
        TH_CASE(mutated_templates_never_crash),
    };
    return th_run("llm_chat", NULL, cases, TH_COUNT(cases), argc - 1, argv + 1) ? 1 : 0;
}
