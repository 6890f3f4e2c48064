/* SPDX-License-Identifier: MIT */
/*
 * llm_model_priv.h - model description shared by the loader (llm_model.c), the forward
 * pass (llm_forward.c) and the reference (llm_ref.c). Layer: llm.
 */
#ifndef LLM_MODEL_PRIV_H
#define LLM_MODEL_PRIV_H

#include "llm.h"

#define LLM_MAX_LAYERS 256

/* Rows of ggml type (rtype & ~K_LLM_RP) -> the repacked decode layout rtype (k_llm_quant.h;
 * src and dst must not overlap). llm_quant.c. */
void llm_repack_rows(uint32_t rtype, const void *src, void *dst, uint64_t rows, uint32_t k);

/* GGUF tensor names per layer (llama.cpp's naming, the GGUF convention). */
enum llm_lw {
    LW_ATTN_NORM,
    LW_ATTN_NORM_B,
    LW_Q,
    LW_K,
    LW_V,
    LW_Q_B, /* Qwen2's Q, K, V biases: consecutive, so they form one [q | k | v] bias (llm_upload.c) */
    LW_K_B,
    LW_V_B,
    LW_Q_NORM, /* Qwen3: RMSNorm weights of each Q / K head, [head_dim] */
    LW_K_NORM,
    LW_QKV,
    LW_QKV_B,
    LW_O,
    LW_O_B,
    LW_FFN_NORM,
    LW_FFN_NORM_B,
    LW_GATE,
    LW_UP,
    LW_UP_B,
    LW_DOWN,
    LW_DOWN_B,
    LW_POST_ATTN_NORM, /* Gemma: RMSNorm of the attention's output before its residual add */
    LW_POST_FFN_NORM,  /* Gemma: RMSNorm of the FFN's output before its residual add */
    LW_COUNT
};
extern const char *const llm_lw_names[LW_COUNT];

/* Global tensors. */
enum llm_gw { GW_TOK_EMBD, GW_POS_EMBD, GW_OUT_NORM, GW_OUT_NORM_B, GW_OUTPUT, GW_ROPE_FREQS, GW_COUNT };
extern const char *const llm_gw_names[GW_COUNT];

/* Which tensors an architecture needs (true) / may have (optional). */
bool llm_arch_needs_lw(enum llm_arch arch, enum llm_lw w);
bool llm_arch_needs_gw(enum llm_arch arch, enum llm_gw w);
/* Gemma 2 / 3 blocks (scaled embedding, GELU-tanh gating, post norms). */
static inline bool
llm_arch_gemma(enum llm_arch arch)
{
    return arch == LLM_ARCH_GEMMA2 || arch == LLM_ARCH_GEMMA3;
}
/* Layer l attends over a sliding window of hp->n_swa keys (llama.cpp's set_swa_pattern). */
static inline bool
llm_layer_swa(const struct llm_hparams *hp, uint32_t l)
{
    return hp->n_swa && hp->swa_period && l % hp->swa_period < hp->swa_period - 1;
}

/* Find tensor `name` and check its shape (ne0 x ne1; ne1 = 1 for vectors). */
HCQ_MUST_CHECK enum hcq_status llm_tensor_get(const struct llm_gguf *g, const char *name, uint64_t ne0,
                                              uint64_t ne1, bool optional,
                                              const struct llm_gguf_tensor **t_out);

/* k_llm_gemm_wgmma_tma's parameters (the prefill GEMM fed by the tensor memory accelerator on
 * sm_90): gp and the tensor maps of its x and w (llm_model.c). */
struct k_llm_gemm_tma_params;
struct k_llm_gemm_params;
HCQ_MUST_CHECK enum hcq_status llm_gemm_tma_params(struct k_llm_gemm_tma_params *tp,
                                                   const struct k_llm_gemm_params *gp);

/* k_llm_gemm_sk's parameters for gp on a device of sms SMs (llm_prefill.c): k cut into pieces of
 * a multiple of kstep values (64; k_llm_gemm_sk_q8_0: 128) so that the grid is about two blocks per SM,
 * within LLM_GEMM_SK_MAX_BLOCKS blocks and LLM_GEMM_SK_MAX_TILES tiles of partial sums at part_va / cnt_va
 * (k_llm_gemm_params.h). Returns the grid (blocks); 0 when gp is not for it (n > 64). */
#define LLM_GEMM_SK_MAX_BLOCKS 640u
#define LLM_GEMM_SK_MAX_TILES 1024u
struct k_llm_gemm_sk_params;
uint32_t llm_gemm_sk_split(struct k_llm_gemm_sk_params *sp, const struct k_llm_gemm_params *gp, uint32_t sms,
                           uint64_t part_va, uint64_t cnt_va, uint32_t kstep);

#endif /* LLM_MODEL_PRIV_H */
