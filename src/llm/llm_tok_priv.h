/* SPDX-License-Identifier: MIT */
/*
 * llm_tok_priv.h - tokenizer internals shared by llm_tok.c and the pre-tokenizers
 * (llm_tok_pre.c). Layer: llm.
 */
#ifndef LLM_TOK_PRIV_H
#define LLM_TOK_PRIV_H

#include "llm.h"

enum llm_tok_kind { LLM_TOK_KIND_BPE, LLM_TOK_KIND_SPM };
enum llm_tok_pre { LLM_PRE_GPT2, LLM_PRE_LLAMA3 };

struct llm_hslot {
    const char *s; /* NULL = empty slot */
    uint32_t n;
    int32_t val;
};

struct llm_hmap {
    struct llm_hslot *slots; /* [cap], cap a power of two */
    uint64_t cap;
};

struct llm_tok_entry {
    const char *text; /* into the GGUF image (the model keeps it mapped) */
    uint32_t len;
    int32_t attr;     /* enum llm_tok_attr */
    float score;      /* SentencePiece merge score */
};

#define LLM_TOK_MAX_EOG 8

struct llm_tok {
    enum llm_tok_kind kind;
    enum llm_tok_pre pre;
    uint32_t n_vocab;
    struct llm_tok_entry *toks; /* [n_vocab] */
    struct llm_hmap vocab;      /* text -> id */
    struct llm_hmap merges;     /* "left right" -> rank (BPE) */
    int32_t *special;           /* ids of CONTROL / USER_DEFINED tokens */
    uint32_t n_special;
    int32_t bos, eos, eot, unk;
    int32_t eog[LLM_TOK_MAX_EOG];
    uint32_t n_eog;
    bool add_bos;
    bool add_space_prefix;
    uint32_t byte_cp[256];      /* GPT-2 byte -> code point */
    int16_t cp_byte[512];       /* and back (-1: none) */
};

/* End (byte offset) of the pre-token starting at text[pos] (pos < len). */
size_t llm_pretok_gpt2(const char *text, size_t len, size_t pos);
size_t llm_pretok_llama3(const char *text, size_t len, size_t pos);

#endif /* LLM_TOK_PRIV_H */
