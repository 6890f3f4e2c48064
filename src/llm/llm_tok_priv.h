/* SPDX-License-Identifier: MIT */
/*
 * llm_tok_priv.h - tokenizer internals shared by llm_tok.c and the pre-tokenizers
 * (llm_tok_pre.c). Layer: llm.
 */
#ifndef LLM_TOK_PRIV_H
#define LLM_TOK_PRIV_H

#include "util_log.h"
#include "llm.h"

enum llm_tok_kind { LLM_TOK_KIND_BPE, LLM_TOK_KIND_SPM };
/* Split rules of byte-level BPE vocabularies (llm_tok_pre.c has the patterns). */
enum llm_tok_pre {
    LLM_PRE_GPT2,
    LLM_PRE_LLAMA3,        /* + a word that is a vocabulary entry is one token */
    LLM_PRE_LLAMA3_MERGES, /* LLaMA-3 split, merges always (smaug-bpe, dbrx) */
    LLM_PRE_QWEN2,
    LLM_PRE_DEFAULT,
    LLM_PRE_FALCON,
    LLM_PRE_STARCODER,
    LLM_PRE_DEEPSEEK_CODER,
    LLM_PRE_DEEPSEEK_LLM,
};

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
    int32_t attr; /* enum llm_tok_attr */
    float score;  /* SentencePiece merge score */
};

#define LLM_TOK_MAX_EOG 8

struct llm_tok {
    enum llm_tok_kind kind;
    enum llm_tok_pre pre;
    uint32_t n_vocab;
    struct llm_tok_entry *toks; /* [n_vocab] */
    struct llm_hmap vocab;      /* text -> id */
    struct llm_hmap merges;     /* "left right" -> rank (BPE) */
    int32_t *special;           /* ids of CONTROL / USER_DEFINED / UNKNOWN tokens, longest first */
    uint32_t n_special;
    int32_t bos, eos, eot, unk;
    int32_t eog[LLM_TOK_MAX_EOG];
    uint32_t n_eog;
    bool add_bos;
    bool add_space_prefix;
    uint32_t byte_cp[256]; /* GPT-2 byte -> code point */
    int16_t cp_byte[512];  /* and back (-1: none) */
};

/* End (byte offset) of the pre-token starting at text[pos] (pos < len). */
size_t llm_pretok_gpt2(const char *text, size_t len, size_t pos);
size_t llm_pretok_llama3(const char *text, size_t len, size_t pos);

/* tokenizer.ggml.pre name -> rules; false if the name is not supported. */
bool llm_pre_lookup(const char *name, size_t len, enum llm_tok_pre *out);
/* The supported names, ", "-separated, into buf (snprintf semantics); returns the length. */
size_t llm_pre_names(char *buf, size_t cap);
bool llm_pre_ignore_merges(enum llm_tok_pre pre);
/* Split text into pre-tokens and call emit on each, in order. */
typedef enum hcq_status (*llm_pre_emit)(void *user, const char *s, size_t n);
HCQ_MUST_CHECK enum hcq_status llm_pre_split(enum llm_tok_pre pre, const char *text, size_t len,
                                             llm_pre_emit emit, void *user);

#endif /* LLM_TOK_PRIV_H */
