/* SPDX-License-Identifier: MIT */
/*
 * util_text.c - printf-style appends into a fixed buffer (util_text.h). Layer: util.
 */
#include "util_text.h"

#include <stdarg.h>
#include <stdio.h>

void
util_text_printf(struct util_text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t room = t->len < t->size ? t->size - t->len : 0;
    int n = vsnprintf(room ? t->buf + t->len : NULL, room, fmt, ap);
    va_end(ap);
    if (n > 0)
        t->len += (size_t)n;
}
