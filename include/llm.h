/* SPDX-License-Identifier: MIT */
/*
 * llm.h - the nvhcq LLM engine: GGUF files, quant formats, tokenizers, sampler, models.
 * Built only on the runtime's public API (hcq.h), as llama.cpp is built on ggml.
 *
 * ==== GGUF (versions 2 and 3) ====
 * A little-endian file: magic "GGUF", u32 version, u64 tensor count, u64 key/value count,
 * the key/value pairs (key = string, u32 value type, value), the tensor infos (name, u32
 * n_dims, u64 ne[n_dims], u32 type, u64 offset into the data section), padding up to
 * `general.alignment` (default 32), then the data section. Strings are u64 length + bytes
 * (no NUL). Arrays are u32 element type + u64 count + elements. Parsing validates every
 * count, length, offset, shape and type against the bytes that remain and fails with
 * HCQ_ERR_FORMAT naming the field; nothing is read out of bounds, whatever the input.
 *
 * ==== Models ====
 * llm_model_load() reads a GGUF model (arch "llama" or "gpt2"), builds its tokenizer and
 * uploads the weights once to an hcq device; llm_ctx runs prefill (batches of prompt
 * tokens) and decode (one token, a replayed graph where the backend supports graphs) with
 * the KV cache kept on the device. The host only reads the logits (or the sampled token).
 */
#ifndef LLM_H
#define LLM_H

#include "hcq.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ==== Tensor types (ggml numbering, GGUF spec "ggml_type") ==== */

enum llm_type {
    LLM_TYPE_F32 = 0,
    LLM_TYPE_F16 = 1,
    LLM_TYPE_Q4_0 = 2,
    LLM_TYPE_Q4_1 = 3,
    LLM_TYPE_Q5_0 = 6,
    LLM_TYPE_Q5_1 = 7,
    LLM_TYPE_Q8_0 = 8,
    LLM_TYPE_Q8_1 = 9,
    LLM_TYPE_Q2_K = 10,
    LLM_TYPE_Q3_K = 11,
    LLM_TYPE_Q4_K = 12,
    LLM_TYPE_Q5_K = 13,
    LLM_TYPE_Q6_K = 14,
    LLM_TYPE_Q8_K = 15,
    LLM_TYPE_BF16 = 30,
    LLM_TYPE_COUNT = 40, /* bound for tables; ids >= this are rejected */
};

/* "q6_k" etc.; NULL for unknown ids. */
const char *llm_type_name(uint32_t type);
/* Parse "q6_k"/"Q6_K"/"f16"...; false if unknown or unsupported. */
bool llm_type_from_name(const char *name, enum llm_type *type_out);
/* Values per block and bytes per block; 0 for types this engine does not support. */
uint32_t llm_type_block_values(uint32_t type);
uint32_t llm_type_block_bytes(uint32_t type);
/* Bytes of a row of n values (n a multiple of the block size), 0 if unsupported/invalid. */
uint64_t llm_type_row_bytes(uint32_t type, uint64_t n);

/* Dequantize n values (multiple of the block size) from `src` to f32. */
HCQ_MUST_CHECK enum hcq_status llm_dequantize(uint32_t type, const void *src, float *dst, uint64_t n);
/* Quantize n f32 values (multiple of the block size) into `dst` (llm_type_row_bytes(type, n)). */
HCQ_MUST_CHECK enum hcq_status llm_quantize(uint32_t type, const float *src, void *dst, uint64_t n);

float llm_f16_to_f32(uint16_t h);
uint16_t llm_f32_to_f16(float f); /* round to nearest even */
float llm_bf16_to_f32(uint16_t h);
uint16_t llm_f32_to_bf16(float f); /* round to nearest even */

/* ==== GGUF reader ==== */

enum llm_gguf_vtype {
    LLM_GGUF_UINT8 = 0,
    LLM_GGUF_INT8 = 1,
    LLM_GGUF_UINT16 = 2,
    LLM_GGUF_INT16 = 3,
    LLM_GGUF_UINT32 = 4,
    LLM_GGUF_INT32 = 5,
    LLM_GGUF_FLOAT32 = 6,
    LLM_GGUF_BOOL = 7,
    LLM_GGUF_STRING = 8,
    LLM_GGUF_ARRAY = 9,
    LLM_GGUF_UINT64 = 10,
    LLM_GGUF_INT64 = 11,
    LLM_GGUF_FLOAT64 = 12,
    LLM_GGUF_VTYPE_COUNT
};

/* A string inside the file: not NUL-terminated. */
struct llm_str {
    const char *ptr;
    uint64_t len;
};

#define LLM_GGUF_MAX_DIMS 4

struct llm_gguf_tensor {
    struct llm_str name;
    uint32_t n_dims;
    uint64_t ne[LLM_GGUF_MAX_DIMS]; /* ne[0] = contiguous (row) length; unused dims are 1 */
    uint32_t type;                  /* enum llm_type */
    uint64_t offset_B;              /* from the start of the data section */
    uint64_t size_B;                /* bytes in the file */
    const void *data;               /* into the parsed memory */
};

struct llm_gguf;

/* Parse a GGUF image in memory; `data` must outlive the result (nothing is copied). */
HCQ_MUST_CHECK enum hcq_status llm_gguf_parse(const void *data, size_t size, struct llm_gguf **gguf_out);
/* mmap `path` read-only and parse it; the mapping lives until llm_gguf_destroy. */
HCQ_MUST_CHECK enum hcq_status llm_gguf_open(const char *path, struct llm_gguf **gguf_out);
void llm_gguf_destroy(struct llm_gguf *g);

uint32_t llm_gguf_version(const struct llm_gguf *g);
uint32_t llm_gguf_alignment(const struct llm_gguf *g);
uint64_t llm_gguf_data_offset(const struct llm_gguf *g); /* file offset of the data section */

uint64_t llm_gguf_kv_count(const struct llm_gguf *g);
struct llm_str llm_gguf_kv_key(const struct llm_gguf *g, uint64_t i);
uint32_t llm_gguf_kv_type(const struct llm_gguf *g, uint64_t i);
/* Index of `key`, or -1. */
int64_t llm_gguf_find(const struct llm_gguf *g, const char *key);

/* Typed getters by key: HCQ_ERR_NOT_FOUND if absent, HCQ_ERR_FORMAT if of another type.
 * get_u32/get_i32 accept any integer type whose value fits; get_f32 accepts f32 or f64. */
HCQ_MUST_CHECK enum hcq_status llm_gguf_get_u32(const struct llm_gguf *g, const char *key, uint32_t *out);
HCQ_MUST_CHECK enum hcq_status llm_gguf_get_f32(const struct llm_gguf *g, const char *key, float *out);
HCQ_MUST_CHECK enum hcq_status llm_gguf_get_bool(const struct llm_gguf *g, const char *key, bool *out);
HCQ_MUST_CHECK enum hcq_status llm_gguf_get_str(const struct llm_gguf *g, const char *key,
                                                struct llm_str *out);
/* Array: element type and count; element access below. */
HCQ_MUST_CHECK enum hcq_status llm_gguf_get_arr(const struct llm_gguf *g, const char *key,
                                                uint32_t *elem_type_out, uint64_t *count_out);
/* Element i of a string array (validated at parse). */
struct llm_str llm_gguf_arr_str(const struct llm_gguf *g, const char *key, uint64_t i);
/* Raw pointer to the elements of a numeric array (little-endian, maybe unaligned). */
const void *llm_gguf_arr_data(const struct llm_gguf *g, const char *key);
/* Raw bytes of value i (everything after the u32 type), for copying into a writer. */
const void *llm_gguf_kv_raw(const struct llm_gguf *g, uint64_t i, uint64_t *size_out);

uint64_t llm_gguf_tensor_count(const struct llm_gguf *g);
const struct llm_gguf_tensor *llm_gguf_tensor_at(const struct llm_gguf *g, uint64_t i);
const struct llm_gguf_tensor *llm_gguf_tensor_find(const struct llm_gguf *g, const char *name);

/* ==== GGUF writer (version 3) ==== */

struct llm_gguf_writer;

HCQ_MUST_CHECK enum hcq_status llm_gguf_writer_create(struct llm_gguf_writer **w_out);
void llm_gguf_writer_destroy(struct llm_gguf_writer *w);
HCQ_MUST_CHECK enum hcq_status llm_gguf_writer_set_u32(struct llm_gguf_writer *w, const char *key,
                                                       uint32_t v);
HCQ_MUST_CHECK enum hcq_status llm_gguf_writer_set_i32(struct llm_gguf_writer *w, const char *key, int32_t v);
HCQ_MUST_CHECK enum hcq_status llm_gguf_writer_set_u64(struct llm_gguf_writer *w, const char *key,
                                                       uint64_t v);
HCQ_MUST_CHECK enum hcq_status llm_gguf_writer_set_f32(struct llm_gguf_writer *w, const char *key, float v);
HCQ_MUST_CHECK enum hcq_status llm_gguf_writer_set_bool(struct llm_gguf_writer *w, const char *key, bool v);
/* Any scalar type (not STRING/ARRAY): `v` points to its little-endian bytes. */
HCQ_MUST_CHECK enum hcq_status llm_gguf_writer_set_val(struct llm_gguf_writer *w, const char *key,
                                                       uint32_t vtype, const void *v);
HCQ_MUST_CHECK enum hcq_status llm_gguf_writer_set_str(struct llm_gguf_writer *w, const char *key,
                                                       const char *v);
/* Numeric array of `count` elements of `elem_type` (not STRING/ARRAY), copied. */
HCQ_MUST_CHECK enum hcq_status llm_gguf_writer_set_arr(struct llm_gguf_writer *w, const char *key,
                                                       uint32_t elem_type, const void *elems, uint64_t count);
/* String array, copied; strs[i] has length lens[i] (lens NULL: NUL-terminated). */
HCQ_MUST_CHECK enum hcq_status llm_gguf_writer_set_arr_str(struct llm_gguf_writer *w, const char *key,
                                                           const char *const *strs, const uint64_t *lens,
                                                           uint64_t count);
/* Copy key/value i of a parsed file. */
HCQ_MUST_CHECK enum hcq_status llm_gguf_writer_copy_kv(struct llm_gguf_writer *w, const struct llm_gguf *g,
                                                       uint64_t i);
/* Add a tensor whose `data` (llm_type_row_bytes(type, ne[0]) * rows bytes) stays valid
 * until the file is written (not copied). */
HCQ_MUST_CHECK enum hcq_status llm_gguf_writer_add_tensor(struct llm_gguf_writer *w, const char *name,
                                                          uint32_t type, uint32_t n_dims, const uint64_t *ne,
                                                          const void *data);
/* Write the whole file (header, infos, aligned data). */
HCQ_MUST_CHECK enum hcq_status llm_gguf_writer_write_file(struct llm_gguf_writer *w, const char *path);
/* Or into a malloc'ed image (tests, fuzzing); the caller frees *data_out. */
HCQ_MUST_CHECK enum hcq_status llm_gguf_writer_write_mem(struct llm_gguf_writer *w, void **data_out,
                                                         size_t *size_out);

/* ==== Tokenizer ==== */

enum llm_tok_attr {
    LLM_TOK_NORMAL = 1,
    LLM_TOK_UNKNOWN = 2,
    LLM_TOK_CONTROL = 3,
    LLM_TOK_USER_DEFINED = 4,
    LLM_TOK_UNUSED = 5,
    LLM_TOK_BYTE = 6,
};

struct llm_tok;

/* Build from the tokenizer.ggml.* keys of a GGUF (model "gpt2" or "llama"). A "gpt2" model
 * splits text by tokenizer.ggml.pre (docs/llm.md lists the supported names); an unknown name
 * is an error (HCQ_ERR_UNSUPPORTED), never a silent fallback. */
HCQ_MUST_CHECK enum hcq_status llm_tok_create(const struct llm_gguf *g, struct llm_tok **tok_out);
struct llm_tok_params {
    /* NULL: an unknown tokenizer.ggml.pre is an error. "gpt2": split with GPT-2's rules
     * instead, with a warning (tokens may differ from the model's own tokenizer). */
    const char *pre_fallback;
};
HCQ_MUST_CHECK enum hcq_status llm_tok_create_ex(const struct llm_gguf *g, const struct llm_tok_params *p,
                                                 struct llm_tok **tok_out);
void llm_tok_destroy(struct llm_tok *tok);
uint32_t llm_tok_vocab_size(const struct llm_tok *tok);
int32_t llm_tok_bos(const struct llm_tok *tok);             /* -1 if none */
int32_t llm_tok_eos(const struct llm_tok *tok);             /* -1 if none */
bool llm_tok_is_eog(const struct llm_tok *tok, int32_t id); /* EOS, EOT, <|eot_id|>, <|im_end|> ... */
bool llm_tok_add_bos_default(const struct llm_tok *tok);
/* Token id of exactly this text, -1 if none. */
int32_t llm_tok_find(const struct llm_tok *tok, const char *text);

/* Encode `text` (len bytes). add_bos prepends BOS; parse_special matches control tokens
 * written in the text ("<|eot_id|>"); user-defined tokens are matched always (as llama.cpp
 * and Hugging Face tokenizers do: MPT's runs of spaces, DeepSeek's added tokens). Writes at most cap ids;
 * *n_out is the number the full encoding has (may exceed cap: then call again with a larger buffer). */
HCQ_MUST_CHECK enum hcq_status llm_tok_encode(const struct llm_tok *tok, const char *text, size_t len,
                                              bool add_bos, bool parse_special, int32_t *ids, size_t cap,
                                              size_t *n_out);
/* The bytes a token stands for (BPE byte-decoded, SentencePiece ▁ -> space, <0xNN> -> byte);
 * control tokens give "" unless render_special. Returns the byte count written (<= cap). */
size_t llm_tok_piece(const struct llm_tok *tok, int32_t id, bool render_special, char *buf, size_t cap);

/* Streaming detokenizer: holds back an incomplete UTF-8 sequence until the bytes that
 * complete it arrive, and writes a byte that starts no valid sequence (one broken off by the
 * next token, a stray continuation byte) as U+FFFD, so each chunk it returns is valid UTF-8. */
struct llm_detok {
    char pend[8];
    uint32_t pend_n;
    bool first; /* SentencePiece: drop the leading space of the first piece */
};
void llm_detok_init(struct llm_detok *d);
/* Append the text of `id` to out (cap bytes); returns bytes written. */
size_t llm_detok_push(struct llm_detok *d, const struct llm_tok *tok, int32_t id, char *out, size_t cap);
/* Flush held bytes (invalid trailing sequence becomes U+FFFD). */
size_t llm_detok_flush(struct llm_detok *d, char *out, size_t cap);

/* ==== Chat templates ==== */

enum llm_chat_tmpl { LLM_CHAT_NONE, LLM_CHAT_LLAMA3, LLM_CHAT_CHATML };
struct llm_chat_msg {
    const char *role; /* "system", "user", "assistant" */
    const char *content;
};
/* Pick from tokenizer.chat_template's text (or the vocabulary's special tokens). */
enum llm_chat_tmpl llm_chat_detect(const struct llm_gguf *g);
/* Render messages (+ the assistant header when add_assistant) into buf; returns the length
 * needed (excluding NUL) like snprintf. */
size_t llm_chat_render(enum llm_chat_tmpl tmpl, const struct llm_chat_msg *msgs, size_t n, bool add_assistant,
                       char *buf, size_t cap);

/* The model's own chat template (tokenizer.chat_template, a Jinja subset: docs/chat.md) or a
 * built-in one, compiled once; applying it is thread-safe (the object is read-only). */
struct llm_chat_tmpl_obj;
struct llm_chat_apply_params {
    bool add_generation_prompt; /* end with the assistant's header, ready to generate */
    int enable_thinking;        /* -1: left undefined (the template's default); 0 / 1 (Qwen3) */
    int64_t now_s;              /* the time strftime_now() sees (UTC); -1: the clock */
};
/* name_or_null: a built-in name (llm_chat_tmpl_builtin_list), else the path of a file holding
 * a template; NULL: the GGUF's tokenizer.chat_template, else the family its vocabulary shows
 * (<|start_header_id|> llama3, <start_of_turn> gemma3, <|im_start|> chatml ...), else chatml.
 * A template using a construct outside the subset fails here (HCQ_ERR_UNSUPPORTED naming it
 * and its line:column); g may be NULL with a name. */
HCQ_MUST_CHECK enum hcq_status llm_chat_tmpl_from_model(const struct llm_gguf *g, const char *name_or_null,
                                                        struct llm_chat_tmpl_obj **t_out);
/* From template text; bos/eos: what bos_token / eos_token render as (NULL: ""). */
HCQ_MUST_CHECK enum hcq_status llm_chat_tmpl_create(const char *text, const char *bos, const char *eos,
                                                    struct llm_chat_tmpl_obj **t_out);
void llm_chat_tmpl_destroy(struct llm_chat_tmpl_obj *t);
/* Renders messages; *out_str is malloc'd (free it), NUL-terminated; len_out may be NULL.
 * raise_exception() in the template and evaluation errors are HCQ_ERR_INVALID with the
 * message and position. */
HCQ_MUST_CHECK enum hcq_status llm_chat_tmpl_apply(const struct llm_chat_tmpl_obj *t,
                                                   const struct llm_chat_msg *msgs, size_t n,
                                                   bool add_generation_prompt, char **out_str,
                                                   size_t *len_out);
HCQ_MUST_CHECK enum hcq_status llm_chat_tmpl_apply_ex(const struct llm_chat_tmpl_obj *t,
                                                      const struct llm_chat_msg *msgs, size_t n,
                                                      const struct llm_chat_apply_params *p, char **out_str,
                                                      size_t *len_out);
/* "gguf", a built-in name, or the file it came from */
const char *llm_chat_tmpl_name(const struct llm_chat_tmpl_obj *t);
/* The texts that end an assistant turn (eos and the template's end-of-turn markers such as
 * <|eot_id|>, <|im_end|>, <end_of_turn>, <|end|>); returns the count, *out the array. */
size_t llm_chat_tmpl_stops(const struct llm_chat_tmpl_obj *t, const char *const **out);
/* "chatml, llama3, ..." */
const char *llm_chat_tmpl_builtin_list(void);
/* The text of a built-in template; NULL when there is none of that name. */
const char *llm_chat_tmpl_builtin_text(const char *name);

/* ==== Sampler ==== */

struct llm_sampler_params {
    float temp;           /* <= 0: greedy */
    uint32_t top_k;       /* 0: off */
    float top_p;          /* 1: off */
    float min_p;          /* 0: off */
    float repeat_penalty; /* 1: off; applied to the last repeat_last_n tokens */
    uint32_t repeat_last_n;
    uint64_t seed;
    /* OpenAI-style, subtracted from the logit of a token seen c > 0 times in the last
     * repeat_last_n tokens: presence_penalty + c * frequency_penalty (after the repetition
     * penalty). 0: off. */
    float presence_penalty, frequency_penalty;
};
void llm_sampler_params_default(struct llm_sampler_params *p); /* greedy */

struct llm_sampler;
HCQ_MUST_CHECK enum hcq_status llm_sampler_create(const struct llm_sampler_params *p, uint32_t n_vocab,
                                                  struct llm_sampler **s_out);
void llm_sampler_destroy(struct llm_sampler *s);
/* Sample from logits[n_vocab] (not modified). Draw n (from 1 since create/reset; greedy
 * draws none) takes the uniform llm_sample_uniform(seed, n). */
int32_t llm_sampler_sample(struct llm_sampler *s, const float *logits);
/* HCQ_ERR_FORMAT naming the first NaN/Inf among logits[n] (a broken model: weights or
 * hyper-parameters that overflow), else HCQ_OK. `nvhcq run` checks every step with it. */
HCQ_MUST_CHECK enum hcq_status llm_logits_check(const float *logits, uint32_t n);
/* Record a token (prompt or generated) for the repetition penalty. */
void llm_sampler_accept(struct llm_sampler *s, int32_t id);
void llm_sampler_reset(struct llm_sampler *s);
/* The counter-based uniform in [0, 1) of draw n (splitmix64 of seed ^ 0x9E37.. + n * 0x9E37..,
 * the top 24 bits): the device sampler (k_llm_sample) draws the same. */
float llm_sample_uniform(uint64_t seed, uint64_t n);

/* ==== Models ==== */

/* LLM_ARCH_QWEN2 (GGUF "qwen2": Qwen2, Qwen2.5): LLaMA's blocks with a bias on Q, K and V, and RoPE
 * over the pairs (i, i + head_dim / 2) of each head (rope_neox). LLM_ARCH_QWEN3 ("qwen3"): no
 * biases, an RMSNorm over each Q and K head before RoPE, heads of attention.key_length.
 * LLM_ARCH_PHI3 ("phi3": Phi-3, Phi-3.5 mini): LLaMA's blocks with Q|K|V in one tensor and gate|up in
 * one tensor of 2 x n_ff rows (silu(first half) * second half), NEOX RoPE. LLM_ARCH_GEMMA2
 * ("gemma2") and LLM_ARCH_GEMMA3 ("gemma3"): the embedding scaled by sqrt(n_embd), GELU-tanh gating,
 * an RMSNorm on the attention's and the FFN's outputs before each residual add, a sliding window on
 * some layers, NEOX RoPE, tied output; Gemma 2 soft-caps scores and logits, Gemma 3 normalizes each
 * Q and K head (as Qwen3) and gives its windowed layers their own RoPE base. */
enum llm_arch {
    LLM_ARCH_LLAMA,
    LLM_ARCH_GPT2,
    LLM_ARCH_QWEN2,
    LLM_ARCH_QWEN3,
    LLM_ARCH_PHI3,
    LLM_ARCH_GEMMA2,
    LLM_ARCH_GEMMA3
};

struct llm_hparams {
    enum llm_arch arch;
    uint32_t n_vocab;
    uint32_t n_ctx_train;
    uint32_t n_embd; /* model width */
    uint32_t n_layer;
    uint32_t n_head;
    uint32_t n_head_kv;
    uint32_t head_dim; /* attention.key_length, else n_embd / n_head */
    uint32_t q_dim;    /* n_head * head_dim: Q rows and the attention's output width (n_embd but for
                        * Qwen3's and Gemma's wider heads) */
    uint32_t n_ff;
    float norm_eps; /* RMSNorm / LayerNorm epsilon */
    float rope_base;
    bool has_rope_freqs; /* LLaMA-3 rope_freqs tensor (per-dimension divisors) */
    bool rope_neox;      /* RoPE pairs (i, i + head_dim / 2) of each head in the file's Q/K rows (Qwen2),
                          * else (2i, 2i + 1) (llama.cpp's llama converter permutes HF's rows so) */
    bool tied_output;    /* output head = token embedding */
    float attn_scale;    /* query scale before the scores: 1 / sqrt(head_dim) (Gemma's 27B models:
                          * 1 / sqrt(n_embd / n_head), as llama.cpp) */
    /* Gemma 2 / 3 (0 elsewhere) */
    float attn_softcap;  /* scores = cap * tanh(scores / cap) before the softmax; 0 = none */
    float final_softcap; /* the same on the logits; 0 = none */
    uint32_t n_swa;      /* sliding window: a query at pos sees keys pos - n_swa + 1 .. pos; 0 = none */
    uint32_t swa_period; /* layer l is windowed when l % swa_period < swa_period - 1 (llama.cpp's pattern) */
    float rope_base_swa; /* RoPE base of the windowed layers */
    float rope_scale;    /* linear RoPE scaling of the other layers (Gemma 3 4B and up: rope.scaling.factor
                          * 8): their positions times 1 / factor, as llama.cpp's freq_scale; 1 = none */
};

struct llm_model;

/* The longest KV cache a model takes (llm_model_params.n_ctx); memory bounds it first. */
#define LLM_MAX_CTX (1u << 20)

#define LLM_GEMM_MIN_BATCH_FAST 2u /* llm_model_params.gemm_min_batch: every prompt on tensor cores */
/* ... batches under 64 rows on the f32 per-op path: the reference tests (which compare it at
 * 5e-8) and nvhcq perplexity (an accuracy tool, for batches of -b rows below 64) */
#define LLM_GEMM_MIN_BATCH_REF 64u

struct llm_model_params {
    const char *dev_spec;         /* hcq device ("auto", "cpu", "cuda:0", ...); NULL = "auto" */
    uint32_t n_ctx;               /* KV cache length (<= LLM_MAX_CTX); 0 = min(n_ctx_train, 4096) */
    uint32_t n_batch;             /* prefill batch; 0 = 64 */
    bool use_graph;               /* record decode as a graph where supported (default true) */
    const char *tok_pre_fallback; /* llm_tok_params.pre_fallback (NULL: unknown pre = error) */
    /* Batches of at least this many tokens run their matmuls on tensor cores: weights
     * dequantized to f16 once per batch, activations rounded to f16, f32 accumulation
     * (k_llm_gemm.cu; logits move by ~1e-7 NMSE). 0 = never; default LLM_GEMM_MIN_BATCH_FAST
     * (every prompt of 2 or more tokens): the per-op matmul (one warp a row, the tokens in turn)
     * took 28 ms for a 20-token prompt of a 1B Q4_K model on H200, the tensor cores 2.8 ms
     * (llm-bench pp20, --gemm-min-batch 64 vs 2). The reference tests ask for
     * LLM_GEMM_MIN_BATCH_REF: shorter prompts then stay on the f32 per-op path. */
    uint32_t gemm_min_batch;
    bool naive_decode; /* decode with the general per-op kernels, not the fused mat-vec path */
    /* Decode mat-vecs keep f32 activations. Default (false): where every matrix of a launch
     * has a type k_llm_matvec_q8 reads (Q4_0, Q8_0, Q6_K with rows of 2048k values, Q4_K,
     * Q5_K), activations are rounded to int8 per block of 16 (error bound in
     * k_llm_matvec.h; logits move by ~1e-4 NMSE on the random-weight test models). */
    bool f32_decode;
    /* Decode attention always on the split-K path (k_llm_attn_decode), which steps take past
     * K_LLM_AD_HEAD_MAX positions; for tests that reach it at short depth. */
    bool attn_split_only;
    /* Called while uploading weights with done/total bytes (may be NULL). */
    void (*progress)(uint64_t done_B, uint64_t total_B, void *user);
    void *progress_user;
};
void llm_model_params_default(struct llm_model_params *p);

HCQ_MUST_CHECK enum hcq_status llm_model_load(const char *path, const struct llm_model_params *p,
                                              struct llm_model **model_out);
/* Same from a parsed GGUF (must outlive the model). */
HCQ_MUST_CHECK enum hcq_status llm_model_load_gguf(struct llm_gguf *g, const struct llm_model_params *p,
                                                   struct llm_model **model_out);
void llm_model_destroy(struct llm_model *m);
const struct llm_hparams *llm_model_hparams(const struct llm_model *m);
const struct llm_tok *llm_model_tok(const struct llm_model *m);
struct hcq_device *llm_model_device(const struct llm_model *m);
uint64_t llm_model_weight_bytes(const struct llm_model *m);
/* Device memory a model takes, as llm_model_load computes it from the file, the context and the
 * batch once the device and its queue are open, before it allocates any of the model's memory;
 * it refuses with HCQ_ERR_NOMEM, naming these parts, when the total is above what the kernel
 * driver says is free (backends that cannot say - cpu - are not checked). The parts: the
 * weights as in the file, the f16 KV cache of n_ctx tokens, the activations of one batch with the
 * logits, and the prefill GEMM's f16 staging (0 when batches never take it). */
struct llm_mem_need {
    uint64_t weights_B, kv_B, act_B, scratch_B, total_B;
};
void llm_model_mem_need(const struct llm_model *m, struct llm_mem_need *out);

/* Run n tokens at positions pos..pos+n-1 (prefill in batches, or one decode step), leaving
 * the logits of the last token in the model (llm_model_logits). pos + n <= n_ctx. */
HCQ_MUST_CHECK enum hcq_status llm_model_eval(struct llm_model *m, const int32_t *tokens, uint32_t n,
                                              uint32_t pos);
/* Logits of the last evaluated token (n_vocab floats, host memory, read after eval). */
const float *llm_model_logits(struct llm_model *m);
uint32_t llm_model_n_ctx(const struct llm_model *m);
/* How decode steps run: "fused" (fused mat-vec launches, 6 per layer), or "per-op" (the
 * general kernels). */
const char *llm_model_decode_path(const struct llm_model *m);

/* Sampling on the model's device (src/llm/llm_sample_dev.c, kernels k_llm_sample.h): the same
 * filters, order and uniforms as llm_sampler (same seed, same logits: same token on every
 * backend, up to a draw within a few ulp of a boundary), the penalty window kept on the device.
 * set: bind a sampler (replaces one set before; resets the window and the draw counter);
 * reset: empty the window and the counter, then accept ids[n]; accept: add tokens (the
 * prompt) to the window (generated tokens enter it on the device).
 * sample: the token from the logits of the last llm_model_eval.
 * gen_submit: queue the decode step of the last sampled token at pos and its sampling (the
 * token read from device memory, no host round trip; a graph replay where supported) and
 * return; gen_wait: wait for it and read the next token (8 bytes cross to the host). The
 * host logits (llm_model_logits) are not updated by these steps. A NaN/Inf logit is
 * HCQ_ERR_FORMAT naming it. Loop: id = sample(); while (!eog(id)) { gen_submit(pos++);
 * print(id); gen_wait(&id); } - printing overlaps the step. */
HCQ_MUST_CHECK enum hcq_status llm_model_sampler_set(struct llm_model *m, const struct llm_sampler_params *p);
HCQ_MUST_CHECK enum hcq_status llm_model_sampler_reset(struct llm_model *m, const int32_t *ids, uint32_t n);
HCQ_MUST_CHECK enum hcq_status llm_model_sampler_accept(struct llm_model *m, const int32_t *ids, uint32_t n);
HCQ_MUST_CHECK enum hcq_status llm_model_sample(struct llm_model *m, int32_t *id_out);
HCQ_MUST_CHECK enum hcq_status llm_model_gen_submit(struct llm_model *m, uint32_t pos);
HCQ_MUST_CHECK enum hcq_status llm_model_gen_wait(struct llm_model *m, int32_t *id_out);

/* Per-kernel device time of one decode step (token at pos, recorded without a graph, with a
 * device timestamp after every launch): one row per kernel label, in first-launch order.
 * us: sum over the label's launches of (its timestamp - the previous one), so rows add up
 * to step_us (launch gaps included); bytes: weight bytes the label streams (0: not
 * counted). The step runs for real (the KV cache row pos is written, logits left). With a
 * device sampler set (llm_model_sampler_set) it is the step a generated token takes: the
 * token through the sampler's id word, the sampler after the head (rows "sample part" and
 * "sample pick"; its state advances as for a generated token). */
struct llm_prof_row {
    const char *kernel; /* static string */
    uint32_t count;
    double us;
    uint64_t bytes;
};
HCQ_MUST_CHECK enum hcq_status llm_model_profile_step(struct llm_model *m, int32_t token, uint32_t pos,
                                                      struct llm_prof_row *rows, uint32_t max_rows,
                                                      uint32_t *n_rows, double *step_us);

/* ==== Batched decode ====
 * A batch holds up to n_seq sequences over one loaded model, each with its own KV slot of n_ctx
 * positions in a cache of the batch's own (f16, n_seq x n_ctx, sized and checked against the
 * device's free memory at create); one llm_batch_step runs one token of every listed sequence
 * through the model in one forward pass, so the weights are read once for all of them.
 * Sequences join (seq_add, then seq_prefill of their prompt) and leave (seq_remove) between any
 * two calls, and sequences of different lengths step together. Use from one thread; the batch
 * shares the model's activation buffers, so calls on the model (llm_model_eval, gen_*) and its
 * batches must not interleave (each call completes before it returns). gpt2 models (learned
 * position embeddings) are not supported yet. src/llm/llm_batch.c says how a step runs. */
#define LLM_BATCH_MAX_SEQ 256
struct llm_batch;
struct llm_batch_params {
    uint32_t n_seq; /* sequence slots, 1 .. LLM_BATCH_MAX_SEQ and at most the model's n_batch */
    uint32_t n_ctx; /* KV positions per slot; 0: the model's n_ctx (never more) */
};
void llm_batch_params_default(struct llm_batch_params *p); /* n_seq 8, n_ctx 0 */
HCQ_MUST_CHECK enum hcq_status llm_batch_create(struct llm_model *m, const struct llm_batch_params *p,
                                                struct llm_batch **b_out);
void llm_batch_destroy(struct llm_batch *b);
uint32_t llm_batch_n_seq(const struct llm_batch *b);
uint32_t llm_batch_n_ctx(const struct llm_batch *b);
/* Take a free slot (position 0, a greedy sampler) into *seq_out; HCQ_ERR_NOMEM when every slot is
 * taken. */
HCQ_MUST_CHECK enum hcq_status llm_batch_seq_add(struct llm_batch *b, uint32_t *seq_out);
/* Free a slot (its cache content is dropped). */
void llm_batch_seq_remove(struct llm_batch *b, uint32_t seq);
uint32_t llm_batch_seq_pos(const struct llm_batch *b, uint32_t seq); /* tokens in its cache */
/* Bind sampling parameters to a slot (a fresh window and draw counter), then accept
 * hist[n_hist] (the prompt) into its penalty window. */
HCQ_MUST_CHECK enum hcq_status llm_batch_seq_sampler(struct llm_batch *b, uint32_t seq,
                                                     const struct llm_sampler_params *p, const int32_t *hist,
                                                     uint32_t n_hist);
/* Append n tokens to a sequence (prompt prefill, in chunks of the model's n_batch). The last
 * token's logits into logits_out[n_vocab] when non-NULL; the next token, sampled with the slot's
 * sampler (and accepted into its window), into *id_out when non-NULL. pos + n > n_ctx:
 * HCQ_ERR_NOMEM and nothing is appended. */
HCQ_MUST_CHECK enum hcq_status llm_batch_seq_prefill(struct llm_batch *b, uint32_t seq, const int32_t *tokens,
                                                     uint32_t n, float *logits_out, int32_t *id_out);
/* Append a prompt to each of n sequences at once: tokens[i][0 .. n_tok[i]) to seqs[i] (distinct slots
 * that were added). Prompts of up to 256 tokens share forward passes of up to the model's n_batch
 * rows (the weights read once per pass for all of them); longer ones prefill alone, as
 * llm_batch_seq_prefill. Per sequence i, as llm_batch_seq_prefill: its last token's logits into
 * logits_out[i * n_vocab ..], its next token sampled into ids_out[i] (each NULL: not wanted). A
 * prompt that does not fit its slot: HCQ_ERR_NOMEM and nothing is appended to any sequence. */
HCQ_MUST_CHECK enum hcq_status llm_batch_prefill(struct llm_batch *b, const uint32_t *seqs,
                                                 const int32_t *const *tokens, const uint32_t *n_tok,
                                                 uint32_t n, float *logits_out, int32_t *ids_out);
/* One decode step: tokens[i] appended to seqs[i] (distinct slots that were added) for i < n, in
 * one forward pass. logits_out[i * n_vocab ..] when non-NULL; ids_out[i] sampled with each slot's
 * sampler when non-NULL. A sequence whose cache is full is not stepped: st_out[i] (may be NULL)
 * is HCQ_ERR_NOMEM and ids_out[i] -1; the others are stepped. The return value is an error of
 * the call itself (bad arguments, a device fault, a NaN/Inf logit). */
HCQ_MUST_CHECK enum hcq_status llm_batch_step(struct llm_batch *b, const uint32_t *seqs,
                                              const int32_t *tokens, uint32_t n, float *logits_out,
                                              int32_t *ids_out, enum hcq_status *st_out);
/* llm_batch_step(b, seqs, tokens, n, NULL, ids_out, NULL) with the per-kernel device time of its
 * forward pass (the rows of llm_model_profile_step; recorded without a graph). */
HCQ_MUST_CHECK enum hcq_status llm_batch_profile_step(struct llm_batch *b, const uint32_t *seqs,
                                                      const int32_t *tokens, uint32_t n, int32_t *ids_out,
                                                      struct llm_prof_row *rows, uint32_t max_rows,
                                                      uint32_t *n_rows, double *step_us);
/* The plain C reference forward pass (f32 math over dequantized weights, host only): the
 * oracle for device tests. Same contract as llm_model_eval; logits into logits_out. */
struct llm_ref;
HCQ_MUST_CHECK enum hcq_status llm_ref_create(const struct llm_gguf *g, uint32_t n_ctx,
                                              struct llm_ref **ref_out);
void llm_ref_destroy(struct llm_ref *r);
HCQ_MUST_CHECK enum hcq_status llm_ref_eval(struct llm_ref *r, const int32_t *tokens, uint32_t n,
                                            uint32_t pos, float *logits_out);
const struct llm_hparams *llm_ref_hparams(const struct llm_ref *r);

/* ==== Perplexity (llama.cpp's llama-perplexity method) ====
 * The text is tokenized whole (llm_ppl_tokenize: one trailing '\n' dropped, BOS first when
 * the vocabulary adds BOS, control tokens not parsed) and cut into chunks of n_ctx tokens
 * (the tail that does not fill a chunk is unused). Each chunk is evaluated from position 0,
 * so from an empty KV cache, with its first token replaced by BOS when the vocabulary adds
 * BOS; only the second half is scored: the logits at positions n_ctx/2 .. n_ctx-2 predict
 * the tokens after them, n_ctx - n_ctx/2 - 1 predictions per chunk. Per prediction the
 * negative log-likelihood is -log_softmax(logits)[next] in double; over all count
 * predictions so far, PPL = exp(sum nll / count) and its standard error is
 * PPL * sqrt((mean nll^2 - mean nll^2) / (count - 1)), the formula llama-perplexity prints
 * as "Final estimate: PPL = X +/- Y". docs/llm.md explains how it maps onto llama.cpp. */
struct llm_ppl_params {
    uint32_t n_ctx;    /* chunk length in tokens, 4 .. llm_model_n_ctx() */
    uint32_t n_chunks; /* at most this many chunks; 0: every whole chunk the text holds */
    /* Called after each chunk (may be NULL): chunk index from 1, the running estimate. */
    void (*on_chunk)(uint32_t chunk, double ppl, void *user);
    void *user;
};
struct llm_ppl_result {
    uint32_t n_chunks; /* chunks scored */
    uint64_t count;    /* predictions scored */
    double nll_sum;    /* sum of -log p(next) */
    double nll2_sum;   /* sum of its squares */
    double ppl;        /* exp(nll_sum / count) */
    double ppl_err;    /* standard error as above; NAN when the variance is not positive */
};
/* Tokenize a perplexity text as llama-perplexity does; *ids_out is malloc'ed (caller frees). */
HCQ_MUST_CHECK enum hcq_status llm_ppl_tokenize(const struct llm_tok *tok, const char *text, size_t len,
                                                int32_t **ids_out, size_t *n_out);
/* log(softmax(logits)[tok]) in double: max-shifted, sum of exponentials in double. */
double llm_log_softmax(const float *logits, uint32_t n, int32_t tok);
/* Fill ppl and ppl_err from count, nll_sum and nll2_sum. */
void llm_ppl_finish(struct llm_ppl_result *r);
/* Score tokens[n_tokens] (from llm_ppl_tokenize) on the model. HCQ_ERR_INVALID, with a
 * message saying how many tokens are needed, when n_tokens < 2 * n_ctx (llama.cpp's
 * minimum) or n_ctx is out of range. The model's KV cache is overwritten. */
HCQ_MUST_CHECK enum hcq_status llm_perplexity(struct llm_model *m, const int32_t *tokens, size_t n_tokens,
                                              const struct llm_ppl_params *p, struct llm_ppl_result *out);

/* Read the hyper-parameters of a GGUF model. */
HCQ_MUST_CHECK enum hcq_status llm_hparams_read(const struct llm_gguf *g, struct llm_hparams *hp_out);

/* ==== Synthetic models (gen-model) ==== */

struct llm_gen_params {
    const char *arch;             /* "llama" or "gpt2" */
    const char *preset;           /* "tiny", "llama-3.2-1b", "llama-3.2-3b", "llama-3.1-8b", "gpt2-124m" */
    enum llm_type type;           /* type of the 2-D weight matrices */
    const struct llm_gguf *vocab; /* tokenizer source; NULL: a synthetic byte-level vocab */
    uint64_t seed;
    uint32_t threads; /* 0: all cores */
    /* Overrides for tests (0 = preset value). */
    uint32_t n_vocab, n_embd, n_layer, n_head, n_head_kv, n_ff, n_ctx;
};
/* Build a random-weight model with the preset's real shapes and write it to `path`. */
HCQ_MUST_CHECK enum hcq_status llm_gen_model(const struct llm_gen_params *p, const char *path);

#ifdef __cplusplus
}
#endif
#endif /* LLM_H */
