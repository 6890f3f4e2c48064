/* SPDX-License-Identifier: MIT */
/*
 * llm_hparams.c - hyper-parameters and tensor naming of the supported architectures
 * (llama, gpt2, qwen2, qwen3, phi3, gemma2, gemma3), read from GGUF keys "<arch>.embedding_length" etc. (the
 * GGUF spec's standardized key names). Layer: llm.
 */
#include "llm_model_priv.h"

#include "util_log.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char *const llm_lw_names[LW_COUNT] = {
    [LW_ATTN_NORM] = "attn_norm.weight",
    [LW_ATTN_NORM_B] = "attn_norm.bias",
    [LW_Q] = "attn_q.weight",
    [LW_K] = "attn_k.weight",
    [LW_V] = "attn_v.weight",
    [LW_Q_B] = "attn_q.bias",
    [LW_K_B] = "attn_k.bias",
    [LW_V_B] = "attn_v.bias",
    [LW_Q_NORM] = "attn_q_norm.weight",
    [LW_K_NORM] = "attn_k_norm.weight",
    [LW_QKV] = "attn_qkv.weight",
    [LW_QKV_B] = "attn_qkv.bias",
    [LW_O] = "attn_output.weight",
    [LW_O_B] = "attn_output.bias",
    [LW_FFN_NORM] = "ffn_norm.weight",
    [LW_FFN_NORM_B] = "ffn_norm.bias",
    [LW_GATE] = "ffn_gate.weight",
    [LW_UP] = "ffn_up.weight",
    [LW_UP_B] = "ffn_up.bias",
    [LW_DOWN] = "ffn_down.weight",
    [LW_DOWN_B] = "ffn_down.bias",
    [LW_POST_ATTN_NORM] = "post_attention_norm.weight",
    [LW_POST_FFN_NORM] = "post_ffw_norm.weight",
};

const char *const llm_gw_names[GW_COUNT] = {
    [GW_TOK_EMBD] = "token_embd.weight",  [GW_POS_EMBD] = "position_embd.weight",
    [GW_OUT_NORM] = "output_norm.weight", [GW_OUT_NORM_B] = "output_norm.bias",
    [GW_OUTPUT] = "output.weight",        [GW_ROPE_FREQS] = "rope_freqs.weight",
};

bool
llm_arch_needs_lw(enum llm_arch arch, enum llm_lw w)
{
    const bool llama = w == LW_ATTN_NORM || w == LW_Q || w == LW_K || w == LW_V || w == LW_O ||
                       w == LW_FFN_NORM || w == LW_GATE || w == LW_UP || w == LW_DOWN;
    if (arch == LLM_ARCH_LLAMA)
        return llama;
    if (arch == LLM_ARCH_QWEN2)
        return llama || w == LW_Q_B || w == LW_K_B || w == LW_V_B;
    if (arch == LLM_ARCH_QWEN3)
        return llama || w == LW_Q_NORM || w == LW_K_NORM;
    if (llm_arch_gemma(arch))
        return llama || w == LW_POST_ATTN_NORM || w == LW_POST_FFN_NORM ||
               (arch == LLM_ARCH_GEMMA3 && (w == LW_Q_NORM || w == LW_K_NORM));
    if (arch == LLM_ARCH_PHI3) /* Q|K|V and gate|up fused (llm_upload.c makes LLaMA's views of them) */
        return w == LW_ATTN_NORM || w == LW_QKV || w == LW_O || w == LW_FFN_NORM || w == LW_UP ||
               w == LW_DOWN;
    return w != LW_Q && w != LW_K && w != LW_V && w != LW_GATE && w != LW_Q_B && w != LW_K_B && w != LW_V_B &&
           w != LW_Q_NORM && w != LW_K_NORM && w != LW_POST_ATTN_NORM && w != LW_POST_FFN_NORM;
}

bool
llm_arch_needs_gw(enum llm_arch arch, enum llm_gw w)
{
    if (arch != LLM_ARCH_GPT2)
        return w == GW_TOK_EMBD || w == GW_OUT_NORM;
    return w == GW_TOK_EMBD || w == GW_POS_EMBD || w == GW_OUT_NORM || w == GW_OUT_NORM_B;
}

/* Ranges a hyper-parameter may take (not in the GGUF spec: sanity bounds well beyond every
 * published model, so a corrupted or hostile file fails here with the key's name instead of
 * later as a NaN, a huge allocation or a kernel launch that cannot fit). */
#define HP_MAX_EMBD (1u << 16)
#define HP_MAX_FF (1u << 20)
#define HP_MAX_HEADS 1024u
#define HP_MAX_CTX (1u << 24)

static enum hcq_status
key_u32(const struct llm_gguf *g, const char *arch, const char *suffix, bool optional, uint32_t lo,
        uint32_t hi, uint32_t *out)
{
    char key[128];
    snprintf(key, sizeof key, "%s.%s", arch, suffix);
    enum hcq_status st = llm_gguf_get_u32(g, key, out);
    if (st == HCQ_ERR_NOT_FOUND && !optional)
        return hcq_err(HCQ_ERR_FORMAT, "llm_hparams_read: key '%s' missing", key);
    if (!st && (*out < lo || *out > hi))
        return hcq_err(HCQ_ERR_FORMAT, "llm_hparams_read: %s = %u (expected %u..%u)", key, *out, lo, hi);
    return st;
}

/* Optional float key in (0, hi]: finite and positive. */
static enum hcq_status
key_f32(const struct llm_gguf *g, const char *key, float hi, float def, float *out)
{
    enum hcq_status st = llm_gguf_get_f32(g, key, out);
    if (st == HCQ_ERR_NOT_FOUND) {
        *out = def;
        return HCQ_OK;
    }
    if (st)
        return st;
    if (!isfinite(*out) || *out <= 0 || *out > hi)
        return hcq_err(HCQ_ERR_FORMAT, "llm_hparams_read: %s = %g (expected a finite value in (0, %g])", key,
                       (double)*out, (double)hi);
    return HCQ_OK;
}

/* Gemma 2 / 3: soft-caps, sliding window and its RoPE base, the attention scale, with llama.cpp's
 * defaults where the key is absent (llama-model.cpp, models/gemma2.cpp, gemma3.cpp). */
static enum hcq_status
gemma_read(const struct llm_gguf *g, const char *arch, struct llm_hparams *hp)
{
    enum hcq_status st;
    char key[128];
    if (!llm_arch_gemma(hp->arch))
        return HCQ_OK;
    const bool g2 = hp->arch == LLM_ARCH_GEMMA2;
    hp->n_swa = g2 ? 4096 : 0;
    hp->swa_period = g2 ? 2 : 6;
    if ((st = key_u32(g, arch, "attention.sliding_window", true, 0, HP_MAX_CTX, &hp->n_swa)) &&
        st != HCQ_ERR_NOT_FOUND)
        return st;
    /* a per-layer array (later models) is refused by key_u32 as a type mismatch, naming the key */
    if ((st = key_u32(g, arch, "attention.sliding_window_pattern", true, 0, LLM_MAX_LAYERS,
                      &hp->swa_period)) &&
        st != HCQ_ERR_NOT_FOUND)
        return st;
    if (hp->swa_period == 0) /* llama.cpp: a pattern of 0 windows every layer */
        return hcq_err(HCQ_ERR_UNSUPPORTED,
                       "llm_hparams_read: %s.attention.sliding_window_pattern = 0 (every layer windowed) is "
                       "not implemented",
                       arch);
    snprintf(key, sizeof key, "%s.rope.freq_base_swa", arch);
    if ((st = key_f32(g, key, 1e10f, g2 ? hp->rope_base : 10000.0f, &hp->rope_base_swa)))
        return st;
    snprintf(key, sizeof key, "%s.attn_logit_softcapping", arch);
    if ((st = key_f32(g, key, 1e6f, g2 ? 50.0f : 0.0f, &hp->attn_softcap)))
        return st;
    if (!g2 && hp->attn_softcap) /* llama.cpp's Gemma 3 graph has none: never silently different */
        return hcq_err(HCQ_ERR_UNSUPPORTED, "llm_hparams_read: %s on gemma3 is not implemented", key);
    snprintf(key, sizeof key, "%s.final_logit_softcapping", arch);
    if ((st = key_f32(g, key, 1e6f, g2 ? 30.0f : 0.0f, &hp->final_softcap)))
        return st;
    /* the 27B models scale queries by n_embd / n_head, not the head width (gemma_pytorch's
     * query_pre_attn_scalar; llama.cpp tells them by the layer count) */
    if (hp->n_layer == (g2 ? 46u : 62u))
        hp->attn_scale = (float)(1.0 / sqrt((double)(hp->n_embd / hp->n_head)));
    return HCQ_OK;
}

enum hcq_status
llm_hparams_read(const struct llm_gguf *g, struct llm_hparams *hp)
{
    struct llm_str a;
    enum hcq_status st;
    char arch[16], key[128];
    memset(hp, 0, sizeof *hp);
    if ((st = llm_gguf_get_str(g, "general.architecture", &a)))
        return st == HCQ_ERR_NOT_FOUND
                   ? hcq_err(HCQ_ERR_FORMAT, "llm_hparams_read: general.architecture missing")
                   : st;
    snprintf(arch, sizeof arch, "%.*s", (int)(a.len < 15 ? a.len : 15), a.ptr);
    if (!strcmp(arch, "llama"))
        hp->arch = LLM_ARCH_LLAMA;
    else if (!strcmp(arch, "gpt2"))
        hp->arch = LLM_ARCH_GPT2;
    else if (!strcmp(arch, "qwen2"))
        hp->arch = LLM_ARCH_QWEN2;
    else if (!strcmp(arch, "qwen3"))
        hp->arch = LLM_ARCH_QWEN3;
    else if (!strcmp(arch, "phi3"))
        hp->arch = LLM_ARCH_PHI3;
    else if (!strcmp(arch, "gemma2"))
        hp->arch = LLM_ARCH_GEMMA2;
    else if (!strcmp(arch, "gemma3"))
        hp->arch = LLM_ARCH_GEMMA3;
    else
        return hcq_err(HCQ_ERR_UNSUPPORTED,
                       "llm_hparams_read: architecture '%s' (supported: llama, qwen2, qwen3, phi3, gemma2, "
                       "gemma3, gpt2)",
                       arch);
    if ((st = key_u32(g, arch, "embedding_length", false, 1, HP_MAX_EMBD, &hp->n_embd)) ||
        (st = key_u32(g, arch, "block_count", false, 1, LLM_MAX_LAYERS, &hp->n_layer)) ||
        (st = key_u32(g, arch, "feed_forward_length", false, 1, HP_MAX_FF, &hp->n_ff)) ||
        (st = key_u32(g, arch, "attention.head_count", false, 1, HP_MAX_HEADS, &hp->n_head)))
        return st;
    if ((st = key_u32(g, arch, "context_length", true, 1, HP_MAX_CTX, &hp->n_ctx_train)) == HCQ_ERR_NOT_FOUND)
        hp->n_ctx_train = 2048;
    else if (st)
        return st;
    if ((st = key_u32(g, arch, "attention.head_count_kv", true, 1, HP_MAX_HEADS, &hp->n_head_kv)) ==
        HCQ_ERR_NOT_FOUND)
        hp->n_head_kv = hp->n_head;
    else if (st)
        return st;
    snprintf(key, sizeof key, "%s.%s", arch,
             hp->arch != LLM_ARCH_GPT2 ? "attention.layer_norm_rms_epsilon" : "attention.layer_norm_epsilon");
    if ((st = key_f32(g, key, 1.0f, 1e-5f, &hp->norm_eps)))
        return st;
    snprintf(key, sizeof key, "%s.rope.freq_base", arch);
    if ((st = key_f32(g, key, 1e10f, 10000.0f, &hp->rope_base)))
        return st;
    /* head width: attention.key_length where the file gives it (Qwen3: 128 on 1024-wide models),
     * else n_embd / n_head; values as wide as keys (the engine has one head width) */
    uint32_t kl = 0, vl = 0;
    if ((st = key_u32(g, arch, "attention.key_length", true, 2, 1024, &kl)) && st != HCQ_ERR_NOT_FOUND)
        return st;
    if ((st = key_u32(g, arch, "attention.value_length", true, 2, 1024, &vl)) && st != HCQ_ERR_NOT_FOUND)
        return st;
    if (!hp->n_embd || !hp->n_head || !hp->n_head_kv || (!kl && hp->n_embd % hp->n_head) ||
        hp->n_head % hp->n_head_kv || !hp->n_layer || hp->n_layer > LLM_MAX_LAYERS || !hp->n_ff)
        return hcq_err(
            HCQ_ERR_FORMAT,
            "llm_hparams_read: inconsistent shape: n_embd %u n_head %u n_head_kv %u n_layer %u n_ff %u",
            hp->n_embd, hp->n_head, hp->n_head_kv, hp->n_layer, hp->n_ff);
    hp->head_dim = kl ? kl : hp->n_embd / hp->n_head;
    if (hp->head_dim % 2 || (uint64_t)hp->n_head * hp->head_dim > HP_MAX_EMBD)
        return hcq_err(HCQ_ERR_FORMAT, "llm_hparams_read: heads of %u x %u (even widths, at most %u in all)",
                       hp->n_head, hp->head_dim, HP_MAX_EMBD);
    /* what a file may ask for that the engine does not do: a clear error naming the key, never
     * silently different output */
    if (vl && vl != hp->head_dim)
        return hcq_err(HCQ_ERR_UNSUPPORTED,
                       "llm_hparams_read: %s.attention.value_length = %u: values of another width than the "
                       "keys (%u) are not implemented",
                       arch, vl, hp->head_dim);
    hp->q_dim = hp->n_head * hp->head_dim;
    hp->attn_scale = (float)(1.0 / sqrt((double)hp->head_dim));
    if ((st = gemma_read(g, arch, hp)))
        return st;
    /* RoPE scaling: linear (llama.cpp's default type when the file names none) for Gemma 3, whose
     * windowed layers keep their positions (llama.cpp: rope_freq_scale_train_swa 1); any other
     * type or architecture is an error naming the key */
    struct llm_str sc;
    char tkey[96];
    snprintf(tkey, sizeof tkey, "%s.rope.scaling.type", arch);
    const bool has_type = llm_gguf_get_str(g, tkey, &sc) == HCQ_OK;
    const bool none = has_type && sc.len == 4 && !memcmp(sc.ptr, "none", 4);
    const bool linear = !has_type || (sc.len == 6 && !memcmp(sc.ptr, "linear", 6));
    if (has_type && !none && !(linear && hp->arch == LLM_ARCH_GEMMA3))
        return hcq_err(HCQ_ERR_UNSUPPORTED, "llm_hparams_read: %s = '%.*s' is not implemented", tkey,
                       (int)sc.len, sc.ptr);
    float rs;
    snprintf(key, sizeof key, "%s.rope.scaling.factor", arch);
    if ((st = key_f32(g, key, 1e6f, 1.0f, &rs)))
        return st;
    hp->rope_scale = 1.0f;
    if (rs != 1.0f && rs != 0.0f && !none) {
        if (hp->arch != LLM_ARCH_GEMMA3 || !linear || !(rs > 0.0f))
            return hcq_err(HCQ_ERR_UNSUPPORTED,
                           "llm_hparams_read: %s = %g (RoPE scaling) is not implemented for %s", key,
                           (double)rs, arch);
        hp->rope_scale = 1.0f / rs;
    }
    const struct llm_gguf_tensor *te = llm_gguf_tensor_find(g, "token_embd.weight");
    if (!te || te->n_dims != 2 || te->ne[0] != hp->n_embd)
        return hcq_err(HCQ_ERR_FORMAT, "llm_hparams_read: token_embd.weight missing or not [%u x n_vocab]",
                       hp->n_embd);
    hp->n_vocab = (uint32_t)te->ne[1];
    hp->tied_output = llm_gguf_tensor_find(g, "output.weight") == NULL;
    hp->has_rope_freqs = hp->arch != LLM_ARCH_GPT2 && llm_gguf_tensor_find(g, "rope_freqs.weight") != NULL;
    /* llama.cpp: LLM_ARCH_QWEN2 and _QWEN3 -> LLAMA_ROPE_TYPE_NEOX */
    hp->rope_neox = hp->arch == LLM_ARCH_QWEN2 || hp->arch == LLM_ARCH_QWEN3 || hp->arch == LLM_ARCH_PHI3 ||
                    llm_arch_gemma(hp->arch);
    /* Phi-3's 128k variants scale RoPE per dimension by these (LongRoPE) */
    static const char *const factors[2] = {"rope_factors_long.weight", "rope_factors_short.weight"};
    for (int i = 0; i < 2; i++)
        if (llm_gguf_tensor_find(g, factors[i]))
            return hcq_err(HCQ_ERR_UNSUPPORTED,
                           "llm_hparams_read: tensor '%s' (LongRoPE scaling) is not implemented", factors[i]);
    return HCQ_OK;
}

enum hcq_status
llm_tensor_get(const struct llm_gguf *g, const char *name, uint64_t ne0, uint64_t ne1, bool optional,
               const struct llm_gguf_tensor **t_out)
{
    const struct llm_gguf_tensor *t = llm_gguf_tensor_find(g, name);
    *t_out = NULL;
    if (!t)
        return optional ? HCQ_OK : hcq_err(HCQ_ERR_FORMAT, "llm_model: tensor '%s' missing", name);
    if (t->ne[0] != ne0 || t->ne[1] != ne1 || t->ne[2] != 1 || t->ne[3] != 1)
        return hcq_err(HCQ_ERR_FORMAT, "llm_model: tensor '%s' is [%llu x %llu] (expected [%llu x %llu])",
                       name, (unsigned long long)t->ne[0], (unsigned long long)t->ne[1],
                       (unsigned long long)ne0, (unsigned long long)ne1);
    *t_out = t;
    return HCQ_OK;
}
