/* SPDX-License-Identifier: MIT */
/*
 * llm_tok_pre.c - BPE pre-tokenizers: the split patterns of GPT-2 and LLaMA-3 written out
 * as hand-coded matchers with the regex engine's semantics (ordered alternation, greedy
 * quantifiers, backtracking where the pattern needs it). Layer: llm.
 *
 * GPT-2:   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
 * LLaMA-3: (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}
 *          | ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
 * (patterns as published with those tokenizers; \s is Unicode White_Space).
 */
#include "llm_tok_priv.h"

#include "llm_unicode.h"

#include <ctype.h>
#include <string.h>

enum cls { C_L, C_N, C_S, C_O };

static uint32_t
cp_at(const char *t, size_t len, size_t pos, uint32_t *l)
{
    return llm_utf8_decode(t + pos, len - pos, l);
}

static enum cls
cls_at(const char *t, size_t len, size_t pos, uint32_t *l)
{
    uint32_t cp = cp_at(t, len, pos, l);
    if (llm_unicode_is_letter(cp))
        return C_L;
    if (llm_unicode_is_number(cp))
        return C_N;
    if (llm_unicode_is_space(cp))
        return C_S;
    return C_O;
}

/* Consume chars of class c (or, with neg, of no class in the mask) from pos; max = char limit. */
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
    static const char *const suf[] = { "s", "t", "re", "ve", "m", "ll", "d" };
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

size_t
llm_pretok_llama3(const char *t, size_t len, size_t pos)
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
    /* \p{N}{1,3} */
    if (c == C_N)
        return run_of(t, len, pos, C_N, 3);
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
