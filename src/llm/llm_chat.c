/* SPDX-License-Identifier: MIT */
/*
 * llm_chat.c - chat templates as objects: compiled once from the model's
 * tokenizer.chat_template, a built-in name or a file (llm_jinja_*.c renders them), applied
 * to a conversation, with the end-of-turn texts the template implies. Layer: llm.
 */
#include "llm.h"
#include "llm_chat_priv.h"
#include "llm_jinja.h"
#include "util_log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHAT_MAX_STOPS 8

struct llm_chat_tmpl_obj {
    struct llm_jinja *j;
    char *name, *bos, *eos;
    const char *stops[CHAT_MAX_STOPS];
    size_t n_stops;
    char *stop_mem[CHAT_MAX_STOPS];
};

static char *
dup_str(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = 0;
    }
    return d;
}

const char *
llm_chat_tmpl_builtin_text(const char *name)
{
    static const struct {
        const char *alias, *name;
    } aliases[] = {
        {"llama", "llama3.2"}, {"qwen", "qwen2.5"}, {"gemma", "gemma3"}, {"mistral", "mistral-v0.3"}};
    for (size_t i = 0; name && i < sizeof aliases / sizeof aliases[0]; i++)
        if (!strcmp(name, aliases[i].alias))
            name = aliases[i].name;
    for (size_t i = 0; name && llm_chat_builtins[i].name; i++)
        if (!strcmp(name, llm_chat_builtins[i].name))
            return llm_chat_builtins[i].text;
    return NULL;
}

const char *
llm_chat_tmpl_builtin_list(void)
{
    return "chatml, llama3, llama3.1, llama3.2 (llama), qwen2.5 (qwen), qwen3, gemma2, gemma3 (gemma), phi3, "
           "mistral-v0.1, mistral-v0.2, mistral-v0.3 (mistral)";
}

/* The end-of-turn texts: eos, and the markers that the template writes after a turn. */
static enum hcq_status
find_stops(struct llm_chat_tmpl_obj *t, const char *text)
{
    static const char *const markers[] = {"<|eot_id|>", "<|eom_id|>",    "<|im_end|>", "<end_of_turn>",
                                          "<|end|>",    "<|endoftext|>", "</s>"};
    if (t->eos && t->eos[0])
        t->stops[t->n_stops++] = t->eos;
    for (size_t i = 0; i < sizeof markers / sizeof markers[0] && t->n_stops < CHAT_MAX_STOPS; i++) {
        if (!strstr(text, markers[i]))
            continue;
        bool dup = false;
        for (size_t k = 0; k < t->n_stops; k++)
            dup |= !strcmp(t->stops[k], markers[i]);
        if (!dup)
            t->stops[t->n_stops++] = markers[i];
    }
    return HCQ_OK;
}

static enum hcq_status
create_named(const char *text, const char *bos, const char *eos, const char *name,
             struct llm_chat_tmpl_obj **t_out)
{
    *t_out = NULL;
    struct llm_chat_tmpl_obj *t = calloc(1, sizeof *t);
    if (!t)
        return hcq_err(HCQ_ERR_NOMEM, "chat template: out of memory");
    enum hcq_status st = llm_jinja_parse(text, strlen(text), &t->j);
    if (st)
        goto fail;
    t->bos = dup_str(bos ? bos : "", bos ? strlen(bos) : 0);
    t->eos = dup_str(eos ? eos : "", eos ? strlen(eos) : 0);
    t->name = dup_str(name, strlen(name));
    if (!t->bos || !t->eos || !t->name) {
        st = hcq_err(HCQ_ERR_NOMEM, "chat template: out of memory");
        goto fail;
    }
    if ((st = find_stops(t, text)))
        goto fail;
    *t_out = t;
    return HCQ_OK;
fail:
    llm_chat_tmpl_destroy(t);
    return st;
}

enum hcq_status
llm_chat_tmpl_create(const char *text, const char *bos, const char *eos, struct llm_chat_tmpl_obj **t_out)
{
    if (!t_out)
        return hcq_err(HCQ_ERR_INVALID, "llm_chat_tmpl_create: t_out is NULL");
    *t_out = NULL;
    if (!text)
        return hcq_err(HCQ_ERR_INVALID, "llm_chat_tmpl_create: no template text");
    return create_named(text, bos, eos, "text", t_out);
}

void
llm_chat_tmpl_destroy(struct llm_chat_tmpl_obj *t)
{
    if (!t)
        return;
    llm_jinja_destroy(t->j);
    free(t->name);
    free(t->bos);
    free(t->eos);
    free(t);
}

/* The text of token `key` (tokenizer.ggml.bos_token_id ...), "" when absent. */
static char *
token_text(const struct llm_gguf *g, const char *key)
{
    uint32_t id, et;
    uint64_t n;
    if (g && !llm_gguf_get_u32(g, key, &id) && !llm_gguf_get_arr(g, "tokenizer.ggml.tokens", &et, &n) &&
        et == LLM_GGUF_STRING && id < n) {
        struct llm_str s = llm_gguf_arr_str(g, "tokenizer.ggml.tokens", id);
        if (!memchr(s.ptr, 0, s.len))
            return dup_str(s.ptr, s.len);
    }
    return dup_str("", 0);
}

/* The family a vocabulary shows by its control tokens (NULL: none known). */
static const char *
family_of(const struct llm_gguf *g)
{
    static const struct {
        const char *token, *tmpl;
    } fam[] = {{"<|start_header_id|>", "llama3.2"},
               {"<start_of_turn>", "gemma3"},
               {"<|im_start|>", "chatml"},
               {"<|assistant|>", "phi3"},
               {"[INST]", "mistral-v0.3"}};
    uint32_t et;
    uint64_t n;
    if (!g || llm_gguf_get_arr(g, "tokenizer.ggml.tokens", &et, &n) || et != LLM_GGUF_STRING)
        return NULL;
    for (size_t f = 0; f < sizeof fam / sizeof fam[0]; f++) {
        size_t len = strlen(fam[f].token);
        for (uint64_t i = 0; i < n; i++) {
            struct llm_str s = llm_gguf_arr_str(g, "tokenizer.ggml.tokens", i);
            if (s.len == len && !memcmp(s.ptr, fam[f].token, len))
                return fam[f].tmpl;
        }
    }
    return NULL;
}

static char *
read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n + 4096 + 1 > cap) {
            if (cap > (16u << 20)) { /* no template is that large */
                free(buf);
                buf = NULL;
                break;
            }
            cap = cap ? cap * 2 : 8192;
            char *nb = realloc(buf, cap);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
        }
        size_t k = fread(buf + n, 1, 4096, f);
        n += k;
        if (k < 4096)
            break;
    }
    if (buf)
        buf[n] = 0;
    fclose(f);
    return buf;
}

enum hcq_status
llm_chat_tmpl_from_model(const struct llm_gguf *g, const char *name_or_null, struct llm_chat_tmpl_obj **t_out)
{
    if (!t_out)
        return hcq_err(HCQ_ERR_INVALID, "llm_chat_tmpl_from_model: t_out is NULL");
    *t_out = NULL;
    enum hcq_status st;
    char *bos = token_text(g, "tokenizer.ggml.bos_token_id");
    char *eos = token_text(g, "tokenizer.ggml.eos_token_id");
    char *file_text = NULL, *gguf_text = NULL;
    if (!bos || !eos) {
        st = hcq_err(HCQ_ERR_NOMEM, "chat template: out of memory");
        goto done;
    }
    const char *text, *name;
    if (name_or_null) {
        name = name_or_null;
        if (!(text = llm_chat_tmpl_builtin_text(name_or_null))) {
            if (!(text = file_text = read_file(name_or_null))) {
                st = hcq_err(
                    HCQ_ERR_NOT_FOUND,
                    "chat template '%s': neither a built-in name (%s) nor a readable file of at most 16 MiB",
                    name_or_null, llm_chat_tmpl_builtin_list());
                goto done;
            }
            if (strlen(file_text) == 0) {
                st = hcq_err(HCQ_ERR_FORMAT, "chat template file '%s' is empty", name_or_null);
                goto done;
            }
        }
    } else {
        struct llm_str s;
        if (g && !llm_gguf_get_str(g, "tokenizer.chat_template", &s) && s.len) {
            if (!(gguf_text = dup_str(s.ptr, s.len))) {
                st = hcq_err(HCQ_ERR_NOMEM, "chat template: out of memory");
                goto done;
            }
            text = gguf_text;
            name = "gguf";
        } else {
            const char *fam = family_of(g);
            name = fam ? fam : "chatml";
            text = llm_chat_tmpl_builtin_text(name);
        }
    }
    st = create_named(text, bos, eos, name, t_out);
    if (st && !name_or_null && gguf_text) {
        char why[600];
        snprintf(why, sizeof why, "%s", hcq_last_error());
        st = hcq_err(
            st, "%s (the model's tokenizer.chat_template; --chat-template NAME picks a built-in one: %s)",
            why, llm_chat_tmpl_builtin_list());
    }
done:
    free(bos);
    free(eos);
    free(file_text);
    free(gguf_text);
    return st;
}

const char *
llm_chat_tmpl_name(const struct llm_chat_tmpl_obj *t)
{
    return t ? t->name : "";
}

size_t
llm_chat_tmpl_stops(const struct llm_chat_tmpl_obj *t, const char *const **out)
{
    *out = t->stops;
    return t->n_stops;
}

enum hcq_status
llm_chat_tmpl_apply(const struct llm_chat_tmpl_obj *t, const struct llm_chat_msg *msgs, size_t n,
                    bool add_generation_prompt, char **out_str, size_t *len_out)
{
    struct llm_chat_apply_params p = {
        .add_generation_prompt = add_generation_prompt, .enable_thinking = -1, .now_s = -1};
    return llm_chat_tmpl_apply_ex(t, msgs, n, &p, out_str, len_out);
}

enum hcq_status
llm_chat_tmpl_apply_ex(const struct llm_chat_tmpl_obj *t, const struct llm_chat_msg *msgs, size_t n,
                       const struct llm_chat_apply_params *p, char **out_str, size_t *len_out)
{
    if (!out_str)
        return hcq_err(HCQ_ERR_INVALID, "llm_chat_tmpl_apply: out_str is NULL");
    *out_str = NULL;
    if (len_out)
        *len_out = 0;
    if (!t || !p || (n && !msgs))
        return hcq_err(HCQ_ERR_INVALID, "llm_chat_tmpl_apply: %s is NULL",
                       !t   ? "the template"
                       : !p ? "params"
                            : "msgs");
    struct jj_ctx c;
    llm_jinja_render_begin(&c, p->now_s);
    enum hcq_status st = HCQ_OK;
    /* messages: a list of {"role": ..., "content": ...} */
    struct jj_list *l = jj_alloc(&c.arena, sizeof *l);
    if (!l)
        goto nomem;
    for (size_t i = 0; i < n; i++) {
        if (!msgs[i].role || !msgs[i].content) {
            st = hcq_err(HCQ_ERR_INVALID, "llm_chat_tmpl_apply: message %zu has no %s", i,
                         !msgs[i].role ? "role" : "content");
            goto done;
        }
        struct jj_dict *d = jj_alloc(&c.arena, sizeof *d);
        if (!d || !jj_dict_set(&c, d, jj_cstr("role"), jj_cstr(msgs[i].role)) ||
            !jj_dict_set(&c, d, jj_cstr("content"), jj_cstr(msgs[i].content)) ||
            !jj_list_push(&c, l, (struct jj_val){.t = JJ_DICT, .u.d = d}))
            goto nomem;
    }
    struct llm_jinja_var vars[5] = {
        {"messages", {.t = JJ_LIST, .u.l = l}},
        {"add_generation_prompt", {.t = JJ_BOOL, .u.b = p->add_generation_prompt}},
        {"bos_token", jj_cstr(t->bos)},
        {"eos_token", jj_cstr(t->eos)},
        {"enable_thinking", {.t = JJ_BOOL, .u.b = p->enable_thinking > 0}},
    };
    st = llm_jinja_render_run(&c, t->j, vars, p->enable_thinking < 0 ? 4 : 5, out_str, len_out);
    goto done;
nomem:
    st = hcq_err(HCQ_ERR_NOMEM, "chat template: out of memory");
done:
    llm_jinja_render_end(&c);
    return st;
}
