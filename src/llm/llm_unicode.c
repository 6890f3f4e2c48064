/* SPDX-License-Identifier: MIT */
/*
 * llm_unicode.c - UTF-8 and character classes for the tokenizers. Layer: llm.
 * UTF-8: RFC 3629. White_Space: the Unicode PropList.txt White_Space property.
 */
#include "llm_unicode.h"

uint32_t
llm_utf8_len(uint8_t lead)
{
    if (lead < 0x80)
        return 1;
    if ((lead & 0xE0) == 0xC0)
        return 2;
    if ((lead & 0xF0) == 0xE0)
        return 3;
    if ((lead & 0xF8) == 0xF0)
        return 4;
    return 1;
}

uint32_t
llm_utf8_decode(const char *s, size_t n, uint32_t *len_out)
{
    const uint8_t *u = (const uint8_t *)s;
    uint32_t len = llm_utf8_len(u[0]);
    *len_out = 1;
    if (len == 1)
        return u[0] < 0x80 ? u[0] : 0xFFFD;
    if (len > n)
        return 0xFFFD;
    uint32_t cp = u[0] & (0x7F >> len);
    for (uint32_t i = 1; i < len; i++) {
        if ((u[i] & 0xC0) != 0x80)
            return 0xFFFD;
        cp = (cp << 6) | (u[i] & 0x3F);
    }
    /* reject overlong forms, surrogates and values past U+10FFFF */
    static const uint32_t min_cp[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min_cp[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0xFFFD;
    *len_out = len;
    return cp;
}

uint32_t
llm_utf8_encode(uint32_t cp, char *out)
{
    uint8_t *o = (uint8_t *)out;
    if (cp < 0x80) {
        o[0] = (uint8_t)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (uint8_t)(0xC0 | (cp >> 6));
        o[1] = (uint8_t)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (uint8_t)(0xE0 | (cp >> 12));
        o[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (uint8_t)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (uint8_t)(0xF0 | (cp >> 18));
    o[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (uint8_t)(0x80 | (cp & 0x3F));
    return 4;
}

static bool
in_ranges(const struct llm_unicode_range *r, uint32_t n, uint32_t cp)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (cp < r[mid].lo)
            hi = mid;
        else if (cp > r[mid].hi)
            lo = mid + 1;
        else
            return true;
    }
    return false;
}

bool
llm_unicode_is_letter(uint32_t cp)
{
    if (cp < 0x80)
        return (cp | 0x20) >= 'a' && (cp | 0x20) <= 'z';
    return in_ranges(llm_unicode_letters, llm_unicode_letters_count, cp);
}

bool
llm_unicode_is_number(uint32_t cp)
{
    if (cp < 0x80)
        return cp >= '0' && cp <= '9';
    return in_ranges(llm_unicode_numbers, llm_unicode_numbers_count, cp);
}

bool
llm_unicode_is_punct(uint32_t cp)
{
    return in_ranges(llm_unicode_puncts, llm_unicode_puncts_count, cp);
}

bool
llm_unicode_is_space(uint32_t cp)
{
    /* PropList.txt White_Space */
    return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
           (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F ||
           cp == 0x3000;
}
