/* SPDX-License-Identifier: MIT */
/*
 * llm_tok_pre.c - BPE pre-tokenizers: the split rules of the byte-level BPE vocabularies
 * selected by tokenizer.ggml.pre, written as hand-coded matchers with the regex engine's
 * semantics (ordered alternation, greedy quantifiers, backtracking where a pattern needs it).
 * Layer: llm.
 *
 * A pre-tokenizer is a list of patterns applied in turn: each pattern splits every piece
 * left by the previous one into its matches and the text between them (which stays a piece
 * of its own). Patterns (as published with those tokenizers and used by llama.cpp; \s is
 * Unicode White_Space, \p{L}/\p{N}/\p{P} the general categories L*, N*, P*):
 *   GPT2      's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
 *   LLAMA3    (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}
 *             | ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
 *   QWEN2     LLAMA3 with \p{N} (one digit) instead of \p{N}{1,3}
 *   DEFAULT   [\p{P}$+<=>^~|]+ ; GPT2 ; \p{N}+ ; [0-9][0-9][0-9]
 *   FALCON    [\p{P}$+<=>^~|`]+ ; GPT2 ; [0-9][0-9][0-9]
 *   STARCODER \p{N} ; GPT2
 *   DEEPSEEK_CODER  [\r\n] ; \s?\p{L}+ ; \s?\p{P}+ ; [U+4E00-U+9FA5 U+0800-U+4E00 U+AC00-U+D7FF]+ ; \p{N}
 *   DEEPSEEK_LLM    [\r\n] ; \s?[cased letters, ranges below]+ ; \s?[!-/:-~ U+FF01-U+FF0F
 *             U+FF1A-U+FF5E U+2018-U+201F U+3000-U+3002]+ ; \s+$ ; [CJK as above]+ ; \p{N}+
 */
#include "llm_tok_priv.h"

#include "llm_unicode.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum cls { C_L, C_N, C_S, C_O };

static uint32_t
cp_at(const char *t, size_t len, size_t pos, uint32_t *l)
{
    return llm_utf8_decode(t + pos, len - pos, l);
}

static enum cls
cls_of(uint32_t cp)
{
    if (llm_unicode_is_letter(cp))
        return C_L;
    if (llm_unicode_is_number(cp))
        return C_N;
    if (llm_unicode_is_space(cp))
        return C_S;
    return C_O;
}

static enum cls
cls_at(const char *t, size_t len, size_t pos, uint32_t *l)
{
    return cls_of(cp_at(t, len, pos, l));
}

/* Consume chars of class c from pos; max = char limit. */
static size_t
run_of(const char *t, size_t len, size_t pos, enum cls c, size_t max)
{
    uint32_t l;
    for (size_t k = 0; pos < len && k < max && cls_at(t, len, pos, &l) == c; k++)
        pos += l;
    return pos;
}

static size_t
run_other(const char *t, size_t len, size_t pos)
{
    uint32_t l;
    while (pos < len && cls_at(t, len, pos, &l) == C_O)
        pos += l;
    return pos;
}

/* 's 't 're 've 'm 'll 'd (case-insensitive for LLaMA-3); returns the end or pos. */
static size_t
contraction(const char *t, size_t len, size_t pos, bool icase)
{
    static const char *const suf[] = {"s", "t", "re", "ve", "m", "ll", "d"};
    if (t[pos] != '\'')
        return pos;
    for (size_t i = 0; i < sizeof suf / sizeof suf[0]; i++) {
        size_t n = strlen(suf[i]);
        if (pos + 1 + n > len)
            continue;
        bool ok = true;
        for (size_t k = 0; k < n && ok; k++) {
            char c = t[pos + 1 + k];
            ok = icase ? tolower((unsigned char)c) == suf[i][k] : c == suf[i][k];
        }
        if (ok)
            return pos + 1 + n;
    }
    return pos;
}

/* \s+(?!\S) then \s+: a whitespace run; if a non-space follows, leave its last char to the
 * next token (unless the run is one char long). */
static size_t
space_run(const char *t, size_t len, size_t pos)
{
    uint32_t l;
    size_t e = pos, last = pos;
    while (e < len && cls_at(t, len, e, &l) == C_S) {
        last = e;
        e += l;
    }
    if (e == pos)
        return pos;
    if (e < len && last > pos)
        return last;
    return e;
}

size_t
llm_pretok_gpt2(const char *t, size_t len, size_t pos)
{
    uint32_t l;
    size_t e = contraction(t, len, pos, false);
    if (e > pos)
        return e;
    size_t p = t[pos] == ' ' ? pos + 1 : pos;
    if (p < len) {
        enum cls c = cls_at(t, len, p, &l);
        if (c == C_L || c == C_N)
            return run_of(t, len, p, c, SIZE_MAX);
        if (c == C_O)
            return run_other(t, len, p);
    }
    e = space_run(t, len, pos);
    if (e > pos)
        return e;
    cp_at(t, len, pos, &l);
    return pos + l;
}

/* LLaMA-3 and Qwen2 differ only in the digit group length. */
static size_t
llama3_like(const char *t, size_t len, size_t pos, size_t max_digits)
{
    uint32_t l, l2;
    size_t e = contraction(t, len, pos, true);
    if (e > pos)
        return e;
    /* [^\r\n\p{L}\p{N}]?\p{L}+ */
    enum cls c = cls_at(t, len, pos, &l);
    if (c == C_L)
        return run_of(t, len, pos, C_L, SIZE_MAX);
    if (c != C_N && t[pos] != '\r' && t[pos] != '\n' && pos + l < len && cls_at(t, len, pos + l, &l2) == C_L)
        return run_of(t, len, pos + l, C_L, SIZE_MAX);
    /* \p{N}{1,max} */
    if (c == C_N)
        return run_of(t, len, pos, C_N, max_digits);
    /*  ?[^\s\p{L}\p{N}]+[\r\n]* */
    size_t p = t[pos] == ' ' ? pos + 1 : pos;
    if (p < len && cls_at(t, len, p, &l2) == C_O) {
        e = run_other(t, len, p);
        while (e < len && (t[e] == '\r' || t[e] == '\n'))
            e++;
        return e;
    }
    /* \s*[\r\n]+ : through the last newline of the whitespace run */
    size_t q = pos, nl_end = 0;
    while (q < len && cls_at(t, len, q, &l2) == C_S) {
        if (t[q] == '\r' || t[q] == '\n')
            nl_end = q + 1;
        q += l2;
    }
    if (nl_end)
        return nl_end;
    e = space_run(t, len, pos);
    if (e > pos)
        return e;
    return pos + l;
}

size_t
llm_pretok_llama3(const char *t, size_t len, size_t pos)
{
    return llama3_like(t, len, pos, 3);
}

static size_t
pretok_qwen2(const char *t, size_t len, size_t pos)
{
    return llama3_like(t, len, pos, 1);
}

/* ==== Single-pattern matchers: end of the match starting at pos, or pos for none ==== */

typedef bool (*cp_pred)(uint32_t cp);

/* [class]+ (min one char) */
static size_t
run_pred(const char *t, size_t len, size_t pos, cp_pred p, size_t max)
{
    uint32_t l;
    size_t k = 0;
    while (pos < len && k < max && p(cp_at(t, len, pos, &l))) {
        pos += l;
        k++;
    }
    return pos;
}

/* \s?[class]+ : the optional space is taken only if the class run follows it */
static size_t
opt_space_run(const char *t, size_t len, size_t pos, cp_pred p)
{
    uint32_t l;
    if (llm_unicode_is_space(cp_at(t, len, pos, &l)) && pos + l < len) {
        size_t e = run_pred(t, len, pos + l, p, SIZE_MAX);
        if (e > pos + l)
            return e;
    }
    return run_pred(t, len, pos, p, SIZE_MAX);
}

static bool
is_num(uint32_t cp)
{
    return llm_unicode_is_number(cp);
}
static bool
is_let(uint32_t cp)
{
    return llm_unicode_is_letter(cp);
}
static bool
is_pun(uint32_t cp)
{
    return llm_unicode_is_punct(cp);
}
static bool
is_crlf(uint32_t cp)
{
    return cp == '\r' || cp == '\n';
}
static bool
is_ascii_digit(uint32_t cp)
{
    return cp >= '0' && cp <= '9';
}

static bool
is_pun_sym(uint32_t cp) /* [\p{P}$+<=>^~|] */
{
    return llm_unicode_is_punct(cp) || (cp < 0x80 && cp && strchr("$+<=>^~|", (int)cp));
}

static bool
is_pun_sym_bt(uint32_t cp) /* [\p{P}$+<=>^~|`] */
{
    return is_pun_sym(cp) || cp == '`';
}

static bool
is_cjk(uint32_t cp) /* [U+4E00-U+9FA5 U+0800-U+4E00 U+AC00-U+D7FF] */
{
    return (cp >= 0x0800 && cp <= 0x9FA5) || (cp >= 0xAC00 && cp <= 0xD7FF);
}

/* DeepSeek-LLM's letter class: its pattern lists the cased-letter ranges below explicitly. */
static const struct llm_unicode_range ds_letters[] = {
    {0x00041, 0x0005A}, {0x00061, 0x0007A}, {0x000B5, 0x000B5}, {0x000C0, 0x000D6}, {0x000D8, 0x000F6},
    {0x000F8, 0x001BA}, {0x001BC, 0x001BF}, {0x001C4, 0x00293}, {0x00295, 0x002AF}, {0x00370, 0x00373},
    {0x00376, 0x00377}, {0x0037B, 0x0037D}, {0x0037F, 0x0037F}, {0x00386, 0x00386}, {0x00388, 0x0038A},
    {0x0038C, 0x0038C}, {0x0038E, 0x003A1}, {0x003A3, 0x003F5}, {0x003F7, 0x00481}, {0x0048A, 0x0052F},
    {0x00531, 0x00556}, {0x010A0, 0x010C5}, {0x013A0, 0x013F5}, {0x013F8, 0x013FD}, {0x01C90, 0x01CBA},
    {0x01CBD, 0x01CBF}, {0x01D00, 0x01D2B}, {0x01D6B, 0x01D77}, {0x01D79, 0x01D9A}, {0x01E00, 0x01F15},
    {0x01F18, 0x01F1D}, {0x01F20, 0x01F45}, {0x01F48, 0x01F4D}, {0x01F50, 0x01F57}, {0x01F59, 0x01F59},
    {0x01F5B, 0x01F5B}, {0x01F5D, 0x01F5D}, {0x01F5F, 0x01F7D}, {0x01F80, 0x01FB4}, {0x01FB6, 0x01FBC},
    {0x01FBE, 0x01FBE}, {0x01FC2, 0x01FC4}, {0x01FC6, 0x01FCC}, {0x01FD0, 0x01FD3}, {0x01FD6, 0x01FDB},
    {0x01FE0, 0x01FEC}, {0x01FF2, 0x01FF4}, {0x01FF6, 0x01FFC}, {0x02102, 0x02102}, {0x02107, 0x02107},
    {0x0210A, 0x02113}, {0x02115, 0x02115}, {0x02119, 0x0211D}, {0x02124, 0x02124}, {0x02126, 0x02126},
    {0x02128, 0x02128}, {0x0212A, 0x0212D}, {0x0212F, 0x02134}, {0x02139, 0x02139}, {0x0213C, 0x0213F},
    {0x02145, 0x02149}, {0x0214E, 0x0214E}, {0x02183, 0x02184}, {0x02C00, 0x02C7B}, {0x02C7E, 0x02CE4},
    {0x02CEB, 0x02CEE}, {0x02CF2, 0x02CF3}, {0x0A640, 0x0A66D}, {0x0A680, 0x0A69B}, {0x0A722, 0x0A76F},
    {0x0A771, 0x0A787}, {0x0A78B, 0x0A78E}, {0x0AB70, 0x0ABBF}, {0x0FB00, 0x0FB06}, {0x0FB13, 0x0FB17},
    {0x0FF21, 0x0FF3A}, {0x0FF41, 0x0FF5A}, {0x10400, 0x1044F}, {0x104B0, 0x104D3}, {0x104D8, 0x104FB},
    {0x10C80, 0x10CB2}, {0x10CC0, 0x10CF2}, {0x118A0, 0x118DF}, {0x1E900, 0x1E943},
};

static bool
in_tab(const struct llm_unicode_range *r, size_t n, uint32_t cp)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (cp < r[mid].lo)
            hi = mid;
        else if (cp > r[mid].hi)
            lo = mid + 1;
        else
            return true;
    }
    return false;
}

static bool
is_ds_letter(uint32_t cp)
{
    return in_tab(ds_letters, sizeof ds_letters / sizeof ds_letters[0], cp);
}

static bool
is_ds_punct(uint32_t cp) /* [!-/:-~ U+FF01-U+FF0F U+FF1A-U+FF5E U+2018-U+201F U+3000-U+3002] */
{
    return (cp >= 0x21 && cp <= 0x2F) || (cp >= 0x3A && cp <= 0x7E) || (cp >= 0xFF01 && cp <= 0xFF0F) ||
           (cp >= 0xFF1A && cp <= 0xFF5E) || (cp >= 0x2018 && cp <= 0x201F) || (cp >= 0x3000 && cp <= 0x3002);
}

static size_t
m_crlf(const char *t, size_t len, size_t pos)
{
    return run_pred(t, len, pos, is_crlf, 1);
}
static size_t
m_num1(const char *t, size_t len, size_t pos)
{
    return run_pred(t, len, pos, is_num, 1);
}
static size_t
m_nums(const char *t, size_t len, size_t pos)
{
    return run_pred(t, len, pos, is_num, SIZE_MAX);
}
static size_t
m_cjk(const char *t, size_t len, size_t pos)
{
    return run_pred(t, len, pos, is_cjk, SIZE_MAX);
}
static size_t
m_sp_let(const char *t, size_t len, size_t pos)
{
    return opt_space_run(t, len, pos, is_let);
}
static size_t
m_sp_pun(const char *t, size_t len, size_t pos)
{
    return opt_space_run(t, len, pos, is_pun);
}
static size_t
m_ds_let(const char *t, size_t len, size_t pos)
{
    return opt_space_run(t, len, pos, is_ds_letter);
}
static size_t
m_ds_pun(const char *t, size_t len, size_t pos)
{
    return opt_space_run(t, len, pos, is_ds_punct);
}
static size_t
m_punsym(const char *t, size_t len, size_t pos)
{
    return run_pred(t, len, pos, is_pun_sym, SIZE_MAX);
}

static size_t
m_punsym_bt(const char *t, size_t len, size_t pos)
{
    return run_pred(t, len, pos, is_pun_sym_bt, SIZE_MAX);
}

static size_t
m_digits3(const char *t, size_t len, size_t pos) /* [0-9][0-9][0-9] */
{
    size_t e = run_pred(t, len, pos, is_ascii_digit, 3);
    return e - pos == 3 ? e : pos;
}

static size_t
m_trailing_space(const char *t, size_t len, size_t pos) /* \s+$ */
{
    uint32_t l;
    size_t e = pos;
    while (e < len && llm_unicode_is_space(cp_at(t, len, e, &l)))
        e += l;
    return e == len ? e : pos;
}

/* ==== Pre-tokenizer table ==== */

typedef size_t (*matcher)(const char *t, size_t len, size_t pos);

#define MAX_PASSES 6

struct pre_def {
    enum llm_tok_pre id;
    const char *label;
    matcher pass[MAX_PASSES]; /* NULL-terminated */
    bool ignore_merges;       /* a word that is a vocabulary entry is one token (LLaMA-3) */
};

static const struct pre_def pre_defs[] = {
    {LLM_PRE_GPT2, "gpt2", {llm_pretok_gpt2}, false},
    {LLM_PRE_LLAMA3, "llama3", {llm_pretok_llama3}, true},
    {LLM_PRE_LLAMA3_MERGES, "llama3 (merges always)", {llm_pretok_llama3}, false},
    {LLM_PRE_QWEN2, "qwen2", {pretok_qwen2}, false},
    {LLM_PRE_DEFAULT, "default", {m_punsym, llm_pretok_gpt2, m_nums, m_digits3}, false},
    {LLM_PRE_FALCON, "falcon", {m_punsym_bt, llm_pretok_gpt2, m_digits3}, false},
    {LLM_PRE_STARCODER, "starcoder", {m_num1, llm_pretok_gpt2}, false},
    {LLM_PRE_DEEPSEEK_CODER, "deepseek-coder", {m_crlf, m_sp_let, m_sp_pun, m_cjk, m_num1}, false},
    {LLM_PRE_DEEPSEEK_LLM,
     "deepseek-llm",
     {m_crlf, m_ds_let, m_ds_pun, m_trailing_space, m_cjk, m_nums},
     false},
};

/* tokenizer.ggml.pre names (as llama.cpp's converter writes them) -> split rules. */
static const struct {
    const char *name;
    enum llm_tok_pre pre;
} pre_names[] = {
    {"default", LLM_PRE_DEFAULT},
    {"gpt-2", LLM_PRE_GPT2},
    {"phi-2", LLM_PRE_GPT2},
    {"mpt", LLM_PRE_GPT2},
    {"olmo", LLM_PRE_GPT2},
    {"jais", LLM_PRE_GPT2},
    {"roberta-bpe", LLM_PRE_GPT2},
    {"llama3", LLM_PRE_LLAMA3},
    {"llama-v3", LLM_PRE_LLAMA3},
    {"llama-bpe", LLM_PRE_LLAMA3},
    {"falcon3", LLM_PRE_LLAMA3},
    {"smaug-bpe", LLM_PRE_LLAMA3_MERGES},
    {"dbrx", LLM_PRE_LLAMA3_MERGES},
    {"qwen2", LLM_PRE_QWEN2},
    {"deepseek-r1-qwen", LLM_PRE_QWEN2},
    {"stablelm2", LLM_PRE_QWEN2},
    {"megrez", LLM_PRE_QWEN2},
    {"falcon", LLM_PRE_FALCON},
    {"starcoder", LLM_PRE_STARCODER},
    {"refact", LLM_PRE_STARCODER},
    {"command-r", LLM_PRE_STARCODER},
    {"smollm", LLM_PRE_STARCODER},
    {"codeshell", LLM_PRE_STARCODER},
    {"exaone", LLM_PRE_STARCODER},
    {"minerva-7b", LLM_PRE_STARCODER},
    {"deepseek-coder", LLM_PRE_DEEPSEEK_CODER},
    {"deepseek-llm", LLM_PRE_DEEPSEEK_LLM},
};

bool
llm_pre_lookup(const char *name, size_t len, enum llm_tok_pre *out)
{
    for (size_t i = 0; i < sizeof pre_names / sizeof pre_names[0]; i++)
        if (strlen(pre_names[i].name) == len && !memcmp(pre_names[i].name, name, len)) {
            *out = pre_names[i].pre;
            return true;
        }
    return false;
}

size_t
llm_pre_names(char *buf, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < sizeof pre_names / sizeof pre_names[0]; i++) {
        int w = snprintf(buf + n, n < cap ? cap - n : 0, "%s%s", i ? ", " : "", pre_names[i].name);
        n += w > 0 ? (size_t)w : 0;
    }
    return n;
}

static const struct pre_def *
pre_def(enum llm_tok_pre pre)
{
    for (size_t i = 0; i < sizeof pre_defs / sizeof pre_defs[0]; i++)
        if (pre_defs[i].id == pre)
            return &pre_defs[i];
    return &pre_defs[0];
}

bool
llm_pre_ignore_merges(enum llm_tok_pre pre)
{
    return pre_def(pre)->ignore_merges;
}

/* One pattern over one piece [a, b) of text: append the ends of its matches and of the
 * unmatched runs between them to ends[]. */
static size_t
apply_pass(matcher m, const char *text, size_t a, size_t b, size_t *ends, size_t n)
{
    const char *f = text + a;
    size_t flen = b - a, pos = 0, gap = 0;
    while (pos < flen) {
        size_t e = m(f, flen, pos);
        if (e > pos) {
            if (pos > gap)
                ends[n++] = a + pos;
            ends[n++] = a + e;
            pos = gap = e;
        } else {
            uint32_t l;
            cp_at(f, flen, pos, &l);
            pos += l;
        }
    }
    if (gap < flen)
        ends[n++] = b;
    return n;
}

enum hcq_status
llm_pre_split(enum llm_tok_pre pre, const char *text, size_t len, llm_pre_emit emit, void *user)
{
    const struct pre_def *d = pre_def(pre);
    if (!len)
        return HCQ_OK;
    /* pieces tile the text, so each list is the pieces' end offsets: at most len of them */
    size_t *cur = malloc(len * sizeof *cur), *nxt = malloc(len * sizeof *nxt);
    enum hcq_status st = HCQ_OK;
    if (!cur || !nxt) {
        st = hcq_err(HCQ_ERR_NOMEM, "llm_tok_encode: pre-tokenizing %zu bytes", len);
        goto done;
    }
    size_t n = 1;
    cur[0] = len;
    for (int p = 0; p < MAX_PASSES && d->pass[p]; p++) {
        size_t m = 0, a = 0;
        for (size_t i = 0; i < n; a = cur[i], i++)
            m = apply_pass(d->pass[p], text, a, cur[i], nxt, m);
        size_t *tmp = cur;
        cur = nxt;
        nxt = tmp;
        n = m;
    }
    for (size_t i = 0, a = 0; i < n && !st; a = cur[i], i++)
        st = emit(user, text + a, cur[i] - a);
done:
    free(cur);
    free(nxt);
    return st;
}
