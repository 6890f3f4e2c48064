/* SPDX-License-Identifier: MIT */
/*
 * llm_unicode.h - the few Unicode facts the tokenizers need: UTF-8 decoding that never
 * reads past the end, White_Space, and the L* / N* / P* general categories (generated table,
 * llm_unicode_tab.c). Layer: llm.
 */
#ifndef LLM_UNICODE_H
#define LLM_UNICODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct llm_unicode_range {
    uint32_t lo, hi;
};
extern const struct llm_unicode_range llm_unicode_letters[];
extern const uint32_t llm_unicode_letters_count;
extern const struct llm_unicode_range llm_unicode_numbers[];
extern const uint32_t llm_unicode_numbers_count;
extern const struct llm_unicode_range llm_unicode_puncts[];
extern const uint32_t llm_unicode_puncts_count;

/* Decode one code point at s[0..n); *len_out = bytes used (>= 1). Invalid or truncated
 * sequences decode as U+FFFD using 1 byte. */
uint32_t llm_utf8_decode(const char *s, size_t n, uint32_t *len_out);
/* Encode cp into out (>= 4 bytes); returns the byte count. */
uint32_t llm_utf8_encode(uint32_t cp, char *out);
/* Bytes a sequence starting with this lead byte has (1 for invalid leads). */
uint32_t llm_utf8_len(uint8_t lead);

bool llm_unicode_is_letter(uint32_t cp);
bool llm_unicode_is_number(uint32_t cp);
bool llm_unicode_is_space(uint32_t cp);
bool llm_unicode_is_punct(uint32_t cp); /* general category P* */

#endif /* LLM_UNICODE_H */
