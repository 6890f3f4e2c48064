/* SPDX-License-Identifier: MIT */
/*
 * llm_chat_priv.h - the table of built-in chat templates (llm_chat_builtin.c) that
 * llm_chat.c looks names up in. Layer: llm (internal header).
 */
#ifndef LLM_CHAT_PRIV_H
#define LLM_CHAT_PRIV_H

struct llm_chat_builtin {
    const char *name;
    const char *text;
};
/* ends with {NULL, NULL} */
extern const struct llm_chat_builtin llm_chat_builtins[];

#endif
