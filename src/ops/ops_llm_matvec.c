/* SPDX-License-Identifier: MIT */
/*
 * ops_llm_matvec.c - CPU twin and descriptor of the decode mat-vec
 * (src/kernels/k_llm_matvec.cu, parameters in k_llm_matvec.h). Layer: ops.
 * Same math as the kernel in f32: x' = (x * (1 / sqrt(mean(x^2) + eps))) * w when a norm
 * weight is given, each output row the dot of the dequantized row with x' (the kernel sums
 * in a different order: results agree to f32 rounding, see the tests), then bias, the
 * residual add (ACC) or silu(gate) * up (SWIGLU). Large launches split rows across threads.
 * k_llm_matvec_q8's twin first rounds x' through the kernel's int8 blocks
 * (k_llm_mvq_block), then does the same f32 dots: the dp4a sums are exact, so the two differ
 * only by f32 rounding order. k_llm_matvec_h_* (k_llm_mvh.cu, 16-bit float weights) share the
 * f32 twin, with the q8 twin's RoPE mode.
 */
#include "ops_llm.h"
#include "k_llm_matvec.h"
#include "k_llm_params.h"

#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct mv_job {
    const struct k_llm_matvec_params *p;
    const uint8_t *w[K_LLM_MV_SEGS];
    const float *x, *b;
    float *y;
    uint32_t o0, o1; /* output rows [o0, o1) */
};

/* Dot of row r of segment s with x. */
static float
mv_dot(const struct mv_job *j, uint32_t s, uint32_t r, float *tmp)
{
    const struct k_llm_matvec_params *p = j->p;
    ops_llm_dq_row(p->seg[s].type, j->w[s] + ops_llm_row_bytes(p->seg[s].type, p->k) * r, p->k, tmp);
    float acc = 0;
    for (uint32_t i = 0; i < p->k; i++)
        acc += tmp[i] * j->x[i];
    return acc;
}

static void *
mv_rows(void *arg)
{
    const struct mv_job *j = arg;
    const struct k_llm_matvec_params *p = j->p;
    float *tmp = malloc(4ull * p->k);
    if (!tmp)
        return (void *)1;
    for (uint32_t o = j->o0; o < j->o1; o++) {
        if (p->mode == K_LLM_MV_SWIGLU) {
            float g = mv_dot(j, 0, o, tmp), u = mv_dot(j, 1, o, tmp);
            j->y[o] = g / (1.0f + expf(-g)) * u;
            continue;
        }
        uint32_t s = 0, r = o;
        while (s + 1 < p->n_seg && r >= p->seg[s].rows)
            r -= p->seg[s++].rows;
        float v = mv_dot(j, s, r, tmp) + (j->b ? j->b[o] : 0.0f);
        j->y[o] = (p->mode == K_LLM_MV_ACC ? j->y[o] : 0.0f) + v;
    }
    free(tmp);
    return NULL;
}

void
ops_llm_mvq_round(float *x, uint32_t k)
{
    for (uint32_t i = 0; i < k; i += 16) {
        int8_t q[16];
        const float d = k_llm_mvq_block(x + i, q);
        for (int j = 0; j < 16; j++)
            x[i + j] = d * (float)q[j];
    }
}

static void
matvec_common(struct hcq_twin_launch *l, bool q8)
{
    const struct k_llm_matvec_params *p = l->params;
    if (!p->k || !p->n_seg || p->n_seg > K_LLM_MV_SEGS || (p->mode == K_LLM_MV_SWIGLU && p->n_seg != 2) ||
        (q8 && p->k % 16))
        return;
    struct mv_job job = {.p = p};
    uint32_t n_out = 0;
    for (uint32_t s = 0; s < p->n_seg; s++) {
        uint64_t rb = ops_llm_row_bytes(p->seg[s].type, p->k);
        if (!rb || !(job.w[s] = HCQ_TWIN_PTR(l, p->seg[s].w_va, rb * p->seg[s].rows)))
            return;
        n_out += p->seg[s].rows;
    }
    if (p->mode == K_LLM_MV_SWIGLU)
        n_out = p->seg[0].rows;
    const float *x = HCQ_TWIN_PTR(l, p->x_va, 4ull * p->k);
    const float *nw = p->norm_w_va ? HCQ_TWIN_PTR(l, p->norm_w_va, 4ull * p->k) : NULL;
    job.b = p->b_va ? HCQ_TWIN_PTR(l, p->b_va, 4ull * n_out) : NULL;
    job.y = HCQ_TWIN_PTR(l, p->y_va, 4ull * n_out);
    float *xn = malloc(4ull * p->k);
    if (!x || (p->norm_w_va && !nw) || (p->b_va && !job.b) || !job.y || !xn) {
        free(xn);
        return;
    }
    float inv = 1.0f;
    if (nw) {
        float ss = 0;
        for (uint32_t i = 0; i < p->k; i++)
            ss += x[i] * x[i];
        inv = 1.0f / sqrtf(ss / (float)p->k + p->eps);
    }
    for (uint32_t i = 0; i < p->k; i++)
        xn[i] = nw ? x[i] * inv * nw[i] : x[i];
    if (q8) /* k_llm_matvec_q8: x' through its int8 blocks (same rounding as the kernel) */
        ops_llm_mvq_round(xn, p->k);
    job.x = xn;
    /* > 4M multiply-adds: up to 16 threads over output rows (each written once) */
    enum { MAX_T = 16 };
    uint64_t work = (uint64_t)n_out * p->k * (p->mode == K_LLM_MV_SWIGLU ? 2 : 1);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    uint32_t nt = work < (4u << 20) || cores < 2 ? 1 : (uint32_t)(cores < MAX_T ? cores : MAX_T);
    if (nt > n_out)
        nt = n_out ? n_out : 1;
    struct mv_job jobs[MAX_T];
    pthread_t th[MAX_T];
    bool started[MAX_T] = {false};
    for (uint32_t t = 0; t < nt; t++) {
        jobs[t] = job;
        jobs[t].o0 = (uint32_t)((uint64_t)n_out * t / nt);
        jobs[t].o1 = (uint32_t)((uint64_t)n_out * (t + 1) / nt);
        if (t > 0)
            started[t] = pthread_create(&th[t], NULL, mv_rows, &jobs[t]) == 0;
    }
    mv_rows(&jobs[0]);
    for (uint32_t t = 1; t < nt; t++) {
        if (started[t])
            pthread_join(th[t], NULL);
        else
            mv_rows(&jobs[t]);
    }
    free(xn);
}

static void
twin_matvec(struct hcq_twin_launch *l)
{
    matvec_common(l, false);
}

/* Mode K_LLM_MV_ROPE: the rows as SET into y (the kernel leaves y's K and V rows unwritten;
 * nothing reads them), then k_llm_rope_kv's twin rotates Q and K in y and stores K and V rows
 * in the caches at pos - the launch this mode replaces. q8: x' through the int8 blocks. */
static void
matvec_rope(struct hcq_twin_launch *l, bool q8)
{
    const struct k_llm_matvec_params *p = l->params;
    if (p->mode != K_LLM_MV_ROPE) {
        matvec_common(l, q8);
        return;
    }
    struct k_llm_matvec_params set = *p;
    set.mode = K_LLM_MV_SET;
    struct hcq_twin_launch sl = *l;
    sl.params = &set;
    matvec_common(&sl, q8);
    if (sl.fault) {
        l->fault = true, l->fault_va = sl.fault_va;
        return;
    }
    hcq_twin_fn rope = NULL;
    for (const struct hcq_kernel_desc *d = ops_llm_kernels; d->name && !rope; d++)
        if (!strcmp(d->name, "k_llm_rope_kv"))
            rope = d->twin;
    const struct k_llm_mv_rope *r = &p->rope;
    if (!rope || !r->hd || r->n_kv % r->hd || r->n_q % r->hd)
        return;
    struct k_llm_rope_kv_params rp = {
        .q_va = p->y_va,
        .k_va = p->y_va + 4ull * r->n_q,
        .v_va = p->y_va + 4ull * (r->n_q + r->n_kv),
        .kc_va = r->kc_va,
        .vc_va = r->vc_va,
        .freqs_va = r->freqs_va,
        .n_tok = 1,
        .pos0 = r->pos,
        .n_head = r->n_q / r->hd,
        .n_head_kv = r->n_kv / r->hd,
        .hd = r->hd,
        .qkv_stride = r->n_q + 2 * r->n_kv,
        .rope = 1,
        .base = r->base,
        .n_ctx = r->n_ctx,
    };
    sl.params = &rp;
    rope(&sl);
    if (sl.fault)
        l->fault = true, l->fault_va = sl.fault_va;
}

static void
twin_matvec_q8(struct hcq_twin_launch *l)
{
    matvec_rope(l, true);
}

/* k_llm_matvec_h_*: f32 activations, every mode (k_llm_mvh.cu) */
static void
twin_matvec_h(struct hcq_twin_launch *l)
{
    matvec_rope(l, false);
}

const struct hcq_kernel_desc ops_llm_matvec_kernels[] = {
    {"k_llm_matvec", "k_llm_matvec", sizeof(struct k_llm_matvec_params), twin_matvec},
    {"k_llm_matvec_wide", "k_llm_matvec", sizeof(struct k_llm_matvec_params), twin_matvec},
    {"k_llm_matvec_q8", "k_llm_matvec", sizeof(struct k_llm_matvec_params), twin_matvec_q8},
    /* one weight type each (the GPU kernels trap on another; the twin computes any) */
    {"k_llm_matvec_q8_q4k", "k_llm_matvec", sizeof(struct k_llm_matvec_params), twin_matvec_q8},
    {"k_llm_matvec_q8_q5k", "k_llm_matvec", sizeof(struct k_llm_matvec_params), twin_matvec_q8},
    {"k_llm_matvec_q8_q4_0", "k_llm_matvec", sizeof(struct k_llm_matvec_params), twin_matvec_q8},
    {"k_llm_matvec_q8_q8_0", "k_llm_matvec", sizeof(struct k_llm_matvec_params), twin_matvec_q8},
    {"k_llm_matvec_q8_q6k", "k_llm_matvec", sizeof(struct k_llm_matvec_params), twin_matvec_q8},
    {"k_llm_matvec_q8_q4k_q6k", "k_llm_matvec", sizeof(struct k_llm_matvec_params), twin_matvec_q8},
    {"k_llm_matvec_q8_q5k_q6k", "k_llm_matvec", sizeof(struct k_llm_matvec_params), twin_matvec_q8},
    {"k_llm_matvec_q8_q4k_w2", "k_llm_matvec", sizeof(struct k_llm_matvec_params), twin_matvec_q8},
    {"k_llm_matvec_q8_q5k_w2", "k_llm_matvec", sizeof(struct k_llm_matvec_params), twin_matvec_q8},
    {"k_llm_matvec_q8_q4_0_w2", "k_llm_matvec", sizeof(struct k_llm_matvec_params), twin_matvec_q8},
    {"k_llm_matvec_q8_q8_0_w2", "k_llm_matvec", sizeof(struct k_llm_matvec_params), twin_matvec_q8},
    {"k_llm_matvec_q8_q6k_w2", "k_llm_matvec", sizeof(struct k_llm_matvec_params), twin_matvec_q8},
    {"k_llm_matvec_q8_q4k_q6k_w2", "k_llm_matvec", sizeof(struct k_llm_matvec_params), twin_matvec_q8},
    {"k_llm_matvec_q8_q5k_q6k_w2", "k_llm_matvec", sizeof(struct k_llm_matvec_params), twin_matvec_q8},
    {"k_llm_matvec_q8_q4_0x2", "k_llm_matvec", sizeof(struct k_llm_matvec_params), twin_matvec_q8},
    {"k_llm_matvec_q8_q8_0x2", "k_llm_matvec", sizeof(struct k_llm_matvec_params), twin_matvec_q8},
    {"k_llm_matvec_h_f16", "k_llm_mvh", sizeof(struct k_llm_matvec_params), twin_matvec_h},
    {"k_llm_matvec_h_bf16", "k_llm_mvh", sizeof(struct k_llm_matvec_params), twin_matvec_h},

    {0},
};
