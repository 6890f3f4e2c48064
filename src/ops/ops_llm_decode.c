/* SPDX-License-Identifier: MIT */
/*
 * ops_llm_decode.c - CPU twin and descriptors of the persistent decode kernel
 * (src/kernels/k_llm_decode.cu, parameters in k_llm_decode.h). Layer: ops.
 * The twin runs the launches the kernel replaces, in order, through their own twins: per
 * layer the Q|K|V mat-vec (k_llm_matvec_q8, mode SET into the table's y), k_llm_rope_kv
 * (RoPE in place, K and V rows into the cache at pos), k_llm_attn_decode, then the O,
 * gate|up and down mat-vecs of the table. The kernel leaves the K and V rows of y unwritten
 * (it stores them in the cache only); nothing reads them.
 */
#include "ops_llm.h"
#include "k_llm_attn_decode.h"
#include "k_llm_decode.h"
#include "k_llm_params.h"

#include <string.h>

static hcq_twin_fn
find_twin(const struct hcq_kernel_desc *t, const char *name)
{
    for (; t->name; t++)
        if (!strcmp(t->name, name))
            return t->twin;
    return NULL;
}

/* Run twin f with params on l's memory; false after a fault (copied into l). */
static bool
sub(struct hcq_twin_launch *l, hcq_twin_fn f, const void *params)
{
    struct hcq_twin_launch s = *l;
    s.params = params;
    s.fault = false;
    f(&s);
    if (s.fault) {
        l->fault = true;
        l->fault_va = s.fault_va;
    }
    return !s.fault;
}

static void
twin_decode_layers(struct hcq_twin_launch *l)
{
    struct k_llm_decode_params p;
    memcpy(&p, l->params, sizeof p);
    hcq_twin_fn mv = find_twin(ops_llm_matvec_kernels, "k_llm_matvec_q8"),
                rope = find_twin(ops_llm_kernels, "k_llm_rope_kv"),
                attn = find_twin(ops_llm_attn_decode_kernels, "k_llm_attn_decode");
    if (!mv || !rope || !attn || p.pos >= p.n_ctx || !p.n_layer || (p.hd != 64 && p.hd != 128) ||
        (p.flags & K_LLM_DL_F_BARRIERS_ONLY))
        return;
    const uint64_t tab_B = (uint64_t)p.n_layer * K_LLM_DL_PHASES * sizeof(struct k_llm_matvec_params);
    const struct k_llm_matvec_params *tab = HCQ_TWIN_PTR(l, p.tab_va, tab_B);
    if (!tab)
        return;
    const uint32_t nq = p.n_head * p.hd, nk = p.n_head_kv * p.hd;
    for (uint32_t i = 0; i < p.n_layer; i++) {
        const struct k_llm_matvec_params *t = tab + (size_t)i * K_LLM_DL_PHASES;
        const uint64_t kc = p.kv_va + 2ull * i * p.kv_layer_B, vc = kc + p.kv_layer_B;
        struct k_llm_matvec_params qkv = t[0];
        qkv.mode = K_LLM_MV_SET;
        if (!sub(l, mv, &qkv))
            return;
        struct k_llm_rope_kv_params rp = {
            .q_va = qkv.y_va,
            .k_va = qkv.y_va + 4ull * nq,
            .v_va = qkv.y_va + 4ull * (nq + nk),
            .kc_va = kc,
            .vc_va = vc,
            .freqs_va = p.freqs_va,
            .n_tok = 1,
            .pos0 = p.pos,
            .n_head = p.n_head,
            .n_head_kv = p.n_head_kv,
            .hd = p.hd,
            .qkv_stride = nq + 2 * nk,
            .rope = 1,
            .base = p.base,
            .n_ctx = p.n_ctx,
        };
        struct k_llm_attn_decode_params ap = {
            .q_va = p.q_va,
            .kc_va = kc,
            .vc_va = vc,
            .out_va = p.att_va,
            .part_va = p.part_va,
            .count_va = p.count_va,
            .pos = p.pos,
            .n_ctx = p.n_ctx,
            .n_head = p.n_head,
            .n_head_kv = p.n_head_kv,
            .hd = p.hd,
            .n_split = p.n_split,
            .scale = p.scale,
        };
        if (!sub(l, rope, &rp) || !sub(l, attn, &ap) || !sub(l, mv, &t[1]) || !sub(l, mv, &t[2]) ||
            !sub(l, mv, &t[3]))
            return;
    }
}

const struct hcq_kernel_desc ops_llm_decode_kernels[] = {
    {"k_llm_decode_layers", "k_llm_decode", sizeof(struct k_llm_decode_params), twin_decode_layers},
    {"k_llm_decode_layers_hd128", "k_llm_decode", sizeof(struct k_llm_decode_params), twin_decode_layers},
    {"k_llm_decode_layers_1", "k_llm_decode", sizeof(struct k_llm_decode_params), twin_decode_layers},
    {"k_llm_decode_layers_hd128_1", "k_llm_decode", sizeof(struct k_llm_decode_params), twin_decode_layers},
    {0},
};
