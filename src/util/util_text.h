/* SPDX-License-Identifier: MIT */
/*
 * util_text.h - build text into a caller's fixed buffer with printf-style appends (decoders
 * and dumps in src/gpu). The text is always NUL-terminated when the buffer has room for it;
 * `len` counts what the whole text needs, so len >= size means it was cut. Layer: util.
 */
#ifndef UTIL_TEXT_H
#define UTIL_TEXT_H

#include "hcq.h"

#include <stddef.h>

struct util_text {
    char *buf;   /* caller's buffer (may be NULL when size is 0: measuring only) */
    size_t size; /* bytes of buf */
    size_t len;  /* bytes the text needs so far, without the NUL */
};

/* Append printf-formatted text (truncated to what fits; len still grows by all of it). */
void util_text_printf(struct util_text *t, const char *fmt, ...) HCQ_PRINTF(2, 3);

#endif /* UTIL_TEXT_H */
