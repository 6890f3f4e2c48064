/* SPDX-License-Identifier: MIT */
/*
 * llm_model_info.c - what a loaded model tells its callers (include/llm.h): hyper-parameters,
 * tokenizer, device, sizes, decode path, context, logits. Split from llm_model.c. Layer: llm.
 */
#include "llm_model_int.h"

const struct llm_hparams *
llm_model_hparams(const struct llm_model *m)
{
    return &m->hp;
}
const struct llm_tok *
llm_model_tok(const struct llm_model *m)
{
    return m->tok;
}
struct hcq_device *
llm_model_device(const struct llm_model *m)
{
    return m->dev;
}
uint64_t
llm_model_weight_bytes(const struct llm_model *m)
{
    return m->weights_B;
}
void
llm_model_mem_need(const struct llm_model *m, struct llm_mem_need *out)
{
    *out = m->need;
}
const char *
llm_model_decode_path(const struct llm_model *m)
{
    return m->decode_fused ? "fused" : "per-op";
}

uint32_t
llm_model_n_ctx(const struct llm_model *m)
{
    return m->n_ctx;
}

const float *
llm_model_logits(struct llm_model *m)
{
    return hcq_buf_map(m->logbuf);
}
