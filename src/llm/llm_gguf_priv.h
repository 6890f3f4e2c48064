/* SPDX-License-Identifier: MIT */
/*
 * llm_gguf_priv.h - the parsed GGUF object shared by the reader (llm_gguf.c) and the
 * writer (llm_gguf_write.c). Layer: llm.
 */
#ifndef LLM_GGUF_PRIV_H
#define LLM_GGUF_PRIV_H

#include "llm.h"

struct llm_gguf_kv {
    struct llm_str key;
    uint32_t type;        /* enum llm_gguf_vtype */
    const void *raw;      /* value bytes after the type field */
    uint64_t raw_size;    /* validated length of the value */
    uint32_t arr_type;    /* ARRAY: element type */
    uint64_t arr_count;   /* ARRAY: element count */
    const void *arr_data; /* ARRAY: first element */
    struct llm_str *strs; /* ARRAY of STRING: index [arr_count] (owned) */
};

struct llm_gguf {
    const uint8_t *base; /* the image */
    size_t size;
    void *map; /* mmap of llm_gguf_open, else NULL */
    size_t map_size;
    uint32_t version;
    uint32_t alignment; /* general.alignment or 32 */
    uint64_t kv_count;
    uint64_t tensor_count;
    uint64_t data_off;               /* file offset of the data section */
    struct llm_gguf_kv *kvs;         /* [kv_count] */
    struct llm_gguf_tensor *tensors; /* [tensor_count] */
};

#endif /* LLM_GGUF_PRIV_H */
