/* SPDX-License-Identifier: MIT */
/*
 * ops_llm_sample.c - CPU twins and descriptors of the device sampler
 * (src/kernels/k_llm_sample.cu, parameters and protocol in k_llm_sample.h). Layer: ops.
 * The twins take the kernels' two stages as they are (slice partials, candidate merge, the
 * bound and its exact fallback, the walk), so cpu and emu devices pick what the GPU picks;
 * sums run in a fixed order here and in a tree on the GPU, which moves a probability by a
 * few ulp (a draw lands on the other side of a boundary with odds ~1e-7).
 */
#include "ops_llm.h"
#include "ops_twin.h"
#include "k_llm_sample.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

/* The penalised logit of an id seen c times in the window (llm_sampler.c's order). */
static float
smp_pen(const struct k_llm_sample_params *p, float l, uint32_t c)
{
    if (!c)
        return l;
    if (p->repeat_penalty != 1.0f)
        l = l > 0 ? l / p->repeat_penalty : l * p->repeat_penalty;
    return l - ((float)c * p->frequency_penalty + p->presence_penalty);
}

static int
key_desc(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x > y ? -1 : x < y;
}

/* Every slice of one row (k_llm_sample_part). */
static void
part_row(struct hcq_twin_launch *l, const struct k_llm_sample_params p)
{
    if (!p.n_slice || p.n_slice > K_LLM_SMP_SLICES)
        return;
    const float *lg = ops_twin_array(l, p.logits_va, p.n_vocab, 4);
    const uint32_t *st = ops_twin_array(l, p.state_va, K_LLM_SMP_ST_RING + p.last_n + p.n_vocab, 4);
    struct k_llm_smp_part *part = ops_twin_array(l, p.part_va, p.n_slice, sizeof *part);
    if (!lg || !st || !part)
        return;
    const uint32_t *cnt = st + K_LLM_SMP_ST_RING + p.last_n, L = (p.n_vocab + p.n_slice - 1) / p.n_slice;
    uint64_t keys[K_LLM_SMP_SLICE_MAX];
    if (L > K_LLM_SMP_SLICE_MAX)
        return;
    for (uint32_t s = 0; s < p.n_slice; s++) {
        uint32_t i0 = s * L, i1 = i0 + L < p.n_vocab ? i0 + L : p.n_vocab, n = i1 > i0 ? i1 - i0 : 0;
        struct k_llm_smp_part *o = &part[s];
        o->bad = 0xffffffffu;
        o->n_c = o->more = 0;
        o->z = 0;
        o->m = -INFINITY;
        o->arg = 0xffffffffu;
        uint64_t best = 0;
        for (uint32_t i = 0; i < n; i++) {
            float x = lg[i0 + i];
            if (!isfinite(x)) {
                if (o->bad == 0xffffffffu)
                    o->bad = i0 + i;
                keys[i] = 0;
                continue;
            }
            keys[i] = k_llm_smp_key(smp_pen(&p, x, cnt[i0 + i]), i0 + i);
            if (keys[i] > best)
                best = keys[i];
        }
        if (!n || o->bad != 0xffffffffu)
            continue;
        o->m = k_llm_smp_key_x(best);
        o->arg = k_llm_smp_key_id(best);
        if (p.temp <= 0)
            continue;
        double z = 0;
        for (uint32_t i = 0; i < n; i++)
            z += expf((k_llm_smp_key_x(keys[i]) - o->m) / p.temp);
        o->z = z;
        qsort(keys, n, sizeof *keys, key_desc);
        o->n_c = n < K_LLM_SMP_C ? n : K_LLM_SMP_C;
        o->more = n > K_LLM_SMP_C;
        for (uint32_t j = 0; j < o->n_c; j++)
            o->key[j] = keys[j];
    }
}

/* The window moves by one token and the draw counter by one when a draw was made. */
static void
smp_accept(const struct k_llm_sample_params *p, uint32_t *st, uint32_t id)
{
    st[K_LLM_SMP_ST_ID] = id;
    if (p->temp > 0) {
        uint64_t d = ((uint64_t)st[K_LLM_SMP_ST_DRAWS + 1] << 32 | st[K_LLM_SMP_ST_DRAWS]) + 1;
        st[K_LLM_SMP_ST_DRAWS] = (uint32_t)d;
        st[K_LLM_SMP_ST_DRAWS + 1] = (uint32_t)(d >> 32);
    }
    if (!p->last_n)
        return;
    uint32_t *ring = st + K_LLM_SMP_ST_RING, *cnt = ring + p->last_n;
    uint32_t hn = st[K_LLM_SMP_ST_HIST_N], hp = st[K_LLM_SMP_ST_HIST_POS] % p->last_n;
    if (hn >= p->last_n && ring[hp] < p->n_vocab && cnt[ring[hp]])
        cnt[ring[hp]]--;
    ring[hp] = id;
    cnt[id]++;
    st[K_LLM_SMP_ST_HIST_POS] = (hp + 1) % p->last_n;
    st[K_LLM_SMP_ST_HIST_N] = hn < p->last_n ? hn + 1 : p->last_n;
}

/* The walk over the sorted prefix keys[0..ne) (ne = n: the whole vocabulary). z_tail: the
 * softmax denominator over all n ids from the slices (used when no top-k cut and ne < n).
 * Returns the id, or -1 when the answer lies past the prefix (the exact path must run). */
static int64_t
smp_walk(const struct k_llm_sample_params *p, const uint64_t *keys, uint32_t ne, double z_all, double u)
{
    const uint32_t n = p->n_vocab;
    uint32_t k = p->top_k && p->top_k < n ? p->top_k : n;
    if (k < n && k > ne)
        return -1;
    const uint32_t kp = k < ne ? k : ne; /* the part of the top k the prefix holds */
    const float mx = k_llm_smp_key_x(keys[0]);
    double z = 0;
    if (k <= ne)
        for (uint32_t i = 0; i < k; i++)
            z += expf((k_llm_smp_key_x(keys[i]) - mx) / p->temp);
    else
        z = z_all;
#define P_OF(i) ((float)(expf((k_llm_smp_key_x(keys[i]) - mx) / p->temp) / z))
    if (p->top_p < 1.0f) {
        double cum = 0;
        uint32_t i = 0;
        for (; i < kp; i++) {
            cum += P_OF(i);
            if (cum >= p->top_p)
                break;
        }
        if (i < kp)
            k = i + 1;
        else if (k > ne)
            return -1;
    }
    if (p->min_p > 0) {
        const float thr = p->min_p * P_OF(0);
        uint32_t kk = 1, lim = k < ne ? k : ne;
        while (kk < lim && P_OF(kk) >= thr)
            kk++;
        if (kk < lim || k <= ne)
            k = kk;
        else
            return -1;
    }
    double mass = 0;
    const uint32_t kw = k < ne ? k : ne;
    for (uint32_t i = 0; i < kw; i++)
        mass += P_OF(i);
    if (k > ne) {
        double zp = 0;
        for (uint32_t i = 0; i < ne; i++)
            zp += expf((k_llm_smp_key_x(keys[i]) - mx) / p->temp);
        mass += (z - zp) / z; /* the ids past the prefix, whose order is not known here */
    }
    double r = u * mass, acc = 0;
    for (uint32_t i = 0; i < kw; i++) {
        acc += P_OF(i);
        if (r < acc)
            return k_llm_smp_key_id(keys[i]);
    }
#undef P_OF
    return k <= ne ? (int64_t)k_llm_smp_key_id(keys[kw - 1]) : -1;
}

/* One row's pick (k_llm_sample_pick). */
static void
pick_row(struct hcq_twin_launch *l, const struct k_llm_sample_params p)
{
    if (!p.n_slice || p.n_slice > K_LLM_SMP_SLICES || !p.n_vocab)
        return;
    uint32_t *st = ops_twin_array(l, p.state_va, K_LLM_SMP_ST_RING + p.last_n + p.n_vocab, 4);
    const struct k_llm_smp_part *part = ops_twin_array(l, p.part_va, p.n_slice, sizeof *part);
    uint32_t *out = p.out_va ? ops_twin_array(l, p.out_va, 2, 4) : NULL;
    if (!st || !part || (p.out_va && !out))
        return;
    uint32_t id = 0xffffffffu, status = 0, bad = 0xffffffffu;
    uint64_t best = 0;
    for (uint32_t s = 0; s < p.n_slice; s++) {
        if (part[s].bad < bad)
            bad = part[s].bad;
        if (part[s].arg != 0xffffffffu && k_llm_smp_key(part[s].m, part[s].arg) > best)
            best = k_llm_smp_key(part[s].m, part[s].arg);
    }
    if (bad != 0xffffffffu) {
        st[K_LLM_SMP_ST_ID] = bad;
        st[K_LLM_SMP_ST_STATUS] = K_LLM_SMP_S_NONFINITE;
        if (out)
            out[0] = bad, out[1] = K_LLM_SMP_S_NONFINITE;
        return;
    }
    if (p.temp <= 0) {
        id = k_llm_smp_key_id(best);
    } else {
        uint64_t keys[K_LLM_SMP_SLICES * K_LLM_SMP_C], bound = 0;
        uint32_t nu = 0;
        double z_all = 0;
        const float mx = k_llm_smp_key_x(best);
        for (uint32_t s = 0; s < p.n_slice; s++) {
            for (uint32_t j = 0; j < part[s].n_c; j++)
                keys[nu++] = part[s].key[j];
            if (part[s].more && part[s].key[K_LLM_SMP_C - 1] > bound)
                bound = part[s].key[K_LLM_SMP_C - 1];
            if (part[s].n_c)
                z_all += part[s].z * exp((double)(part[s].m - mx) / p.temp);
        }
        qsort(keys, nu, sizeof *keys, key_desc);
        uint32_t ne = 0;
        while (ne < nu && keys[ne] >= bound)
            ne++;
        uint64_t draws = ((uint64_t)st[K_LLM_SMP_ST_DRAWS + 1] << 32 | st[K_LLM_SMP_ST_DRAWS]) + 1;
        double u = k_llm_smp_uniform(p.seed, draws);
        int64_t r = p.flags & K_LLM_SMP_EXACT ? -1 : smp_walk(&p, keys, ne, z_all, u);
        /* the kernel's top-k path: the walk over the top K_LLM_SMP_TOPK candidates alone, taken
         * when top-k of them reach the bound (the same id as the walk above) */
        if (!(p.flags & K_LLM_SMP_EXACT) && p.top_k && p.top_k <= K_LLM_SMP_TOPK && p.top_k < p.n_vocab &&
            p.top_k <= ne)
            status |= K_LLM_SMP_S_TOPK;
        if (r < 0) {
            /* the exact path: every id's key, sorted */
            const float *lg = ops_twin_array(l, p.logits_va, p.n_vocab, 4);
            uint64_t *all = malloc(8ull * p.n_vocab);
            if (!lg || !all) { /* (the {id, status} pair stays as it was: the host reports it) */
                free(all);
                return;
            }
            const uint32_t *cnt = st + K_LLM_SMP_ST_RING + p.last_n;
            for (uint32_t i = 0; i < p.n_vocab; i++)
                all[i] = k_llm_smp_key(smp_pen(&p, lg[i], cnt[i]), i);
            qsort(all, p.n_vocab, sizeof *all, key_desc);
            r = smp_walk(&p, all, p.n_vocab, 0, u);
            free(all);
            status |= K_LLM_SMP_S_EXACT;
        }
        id = (uint32_t)r;
    }
    smp_accept(&p, st, id);
    st[K_LLM_SMP_ST_STATUS] = status;
    if (out)
        out[0] = id, out[1] = status;
}

static void
twin_part(struct hcq_twin_launch *l)
{
    OPS_TWIN_PARAMS(l, k_llm_sample, p);
    part_row(l, p);
}

static void
twin_pick(struct hcq_twin_launch *l)
{
    OPS_TWIN_PARAMS(l, k_llm_sample, p);
    pick_row(l, p);
}

/* The rows launches: each row's parameters from the array, the one-row twin on each. */
static void
each_row(struct hcq_twin_launch *l, void (*row)(struct hcq_twin_launch *, const struct k_llm_sample_params))
{
    OPS_TWIN_PARAMS(l, k_llm_sample_rows, r);
    const struct k_llm_sample_params *rows = ops_twin_array(l, r.rows_va, r.n_rows, sizeof *rows);
    for (uint32_t i = 0; rows && i < r.n_rows; i++)
        row(l, rows[i]);
}

static void
twin_part_rows(struct hcq_twin_launch *l)
{
    each_row(l, part_row);
}

static void
twin_pick_rows(struct hcq_twin_launch *l)
{
    each_row(l, pick_row);
}

static void
twin_argmax_rows(struct hcq_twin_launch *l)
{
    const struct k_llm_argmax_params *p = l->params;
    const float *x = HCQ_TWIN_PTR(l, p->x_va, 4ull * p->n_rows * p->n);
    int32_t *out = HCQ_TWIN_PTR(l, p->out_va, 4ull * p->n_rows);
    if (!x || !out)
        return;
    for (uint32_t r = 0; r < p->n_rows; r++) {
        const float *row = x + (size_t)r * p->n;
        int32_t best = -1, bad = -1;
        for (uint32_t i = 0; i < p->n && bad < 0; i++) {
            if (!isfinite(row[i]))
                bad = (int32_t)i;
            else if (best < 0 || row[i] > row[best])
                best = (int32_t)i;
        }
        out[r] = bad >= 0 ? -1 - bad : best;
    }
}

const struct hcq_kernel_desc ops_llm_sample_kernels[] = {
    {"k_llm_sample_part", "k_llm_sample", sizeof(struct k_llm_sample_params), twin_part},
    {"k_llm_sample_pick", "k_llm_sample", sizeof(struct k_llm_sample_params), twin_pick},
    {"k_llm_sample_part_rows", "k_llm_sample", sizeof(struct k_llm_sample_rows_params), twin_part_rows},
    {"k_llm_sample_pick_rows", "k_llm_sample", sizeof(struct k_llm_sample_rows_params), twin_pick_rows},
    {"k_llm_sample_argmax_rows", "k_llm_sample", sizeof(struct k_llm_argmax_params), twin_argmax_rows},
    {0},
};
