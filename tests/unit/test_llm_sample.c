/* SPDX-License-Identifier: MIT */
/*
 * test_llm_sample.c - the device sampler (k_llm_sample_part + k_llm_sample_pick) on every
 * device that opens (cpu: its twin; HCQ_TEST_DEVS, else cpu emu:gh100 cuda:0 rm:0):
 *  - same_as_host: per sampler (greedy, temperature, top-k, top-p, min-p, penalties, all
 *    together, and the exact path forced), sequences of fresh random logits sampled by the
 *    device and by the host sampler (llm_sampler.c) with the same seed: the same token at
 *    every step (the device keeps the penalty window itself; the host accepts the same
 *    tokens). Logit shapes: flat, peaked and clustered (the top ids in one slice, so the
 *    candidate bound fails and the exact path must run); all three paths must be seen (the
 *    top-k path over the top 64 candidates, the walk over all candidates, the exact sort). The
 *    id/status pair is poisoned before every launch. Allowed per device: 1 + 1 in 500 draws
 *    differing (a draw within a few ulp of a boundary: a GPU's expf and sum order differ).
 *  - distribution: per sampler, 8000 draws from fixed Zipf-like logits (penalties: fixed counts with
 *    last_n 0, so the kernel reads them and never moves them) against the distribution the
 *    definition gives (computed here in double, independently of both samplers): chi-square
 *    over bins of expected count >= 5 below df + 6 sqrt(2 df) + 10; the same counts against
 *    a wrong parameter (temperature +10%, top-p 0.9 for 0.95, ...) must exceed it, so the
 *    test can tell them apart.
 *  - nonfinite: a NaN or Inf logit gives status NONFINITE with its index and leaves the draw
 *    counter as it was.
 */
#include "harness.h"
#include "proc_count.h" /* PROC_ASAN */
#include "hcq.h"
#include "k_llm_sample.h"
#include "llm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct dsmp {
    struct hcq_device *dev;
    struct hcq_queue *q;
    struct hcq_program *part, *pick;
    struct hcq_buf *lg, *st, *pa, *out;
    struct k_llm_sample_params p;
    uint32_t *st_host; /* initial state */
};

static void
dsmp_close(struct dsmp *d)
{
    hcq_buf_free(d->lg), hcq_buf_free(d->st), hcq_buf_free(d->pa), hcq_buf_free(d->out);
    hcq_program_destroy(d->part), hcq_program_destroy(d->pick);
    hcq_queue_destroy(d->q);
    hcq_device_close(d->dev);
    free(d->st_host);
    memset(d, 0, sizeof *d);
}

/* 1: open, 0: the device does not open or lacks the kernels (skipped), -1: error */
static int
dsmp_open(struct dsmp *d, const char *dn, uint32_t n, const struct llm_sampler_params *sp, uint32_t flags)
{
    memset(d, 0, sizeof *d);
    if (hcq_device_open(dn, &d->dev) != HCQ_OK)
        return 0;
    if (hcq_program_load(d->dev, "k_llm_sample_part", &d->part) != HCQ_OK ||
        hcq_program_load(d->dev, "k_llm_sample_pick", &d->pick) != HCQ_OK) {
        dsmp_close(d);
        return 0;
    }
    const uint32_t ln = sp->repeat_last_n, ns = k_llm_smp_slices(n);
    d->p = (struct k_llm_sample_params){.seed = sp->seed,
                                        .n_vocab = n,
                                        .n_slice = ns,
                                        .temp = sp->temp,
                                        .top_k = sp->top_k,
                                        .top_p = sp->top_p,
                                        .min_p = sp->min_p,
                                        .repeat_penalty = sp->repeat_penalty,
                                        .presence_penalty = sp->presence_penalty,
                                        .frequency_penalty = sp->frequency_penalty,
                                        .last_n = ln,
                                        .flags = flags};
    d->st_host = calloc(1, k_llm_smp_state_bytes(ln, n));
    if (!ns || !d->st_host || hcq_queue_create(d->dev, HCQ_QUEUE_COMPUTE, &d->q) ||
        hcq_buf_alloc(d->dev, 4ull * n, HCQ_MEM_DEVICE, &d->lg) ||
        hcq_buf_alloc(d->dev, k_llm_smp_state_bytes(ln, n), HCQ_MEM_DEVICE, &d->st) ||
        hcq_buf_alloc(d->dev, ns * sizeof(struct k_llm_smp_part), HCQ_MEM_DEVICE, &d->pa) ||
        hcq_buf_alloc(d->dev, 8, HCQ_MEM_HOST, &d->out) ||
        hcq_buf_write(d->st, 0, d->st_host, k_llm_smp_state_bytes(ln, n))) {
        dsmp_close(d);
        return -1;
    }
    d->p.logits_va = hcq_buf_va(d->lg);
    d->p.state_va = hcq_buf_va(d->st);
    d->p.part_va = hcq_buf_va(d->pa);
    d->p.out_va = hcq_buf_va(d->out);
    return 1;
}

/* One sample of logits l: *id and *status from the host-visible pair (poisoned first). */
static enum hcq_status
dsmp_run(struct dsmp *d, const float *l, uint32_t *id, uint32_t *status)
{
    enum hcq_status st;
    uint32_t *o = hcq_buf_map(d->out), g[2] = {0xdeadbeefu, 0xfeedfaceu};
    if ((st = hcq_buf_write(d->out, 0, g, 8)) || (st = hcq_buf_write(d->lg, 0, l, 4ull * d->p.n_vocab)))
        return st;
    uint32_t g1[3] = {d->p.n_slice, 1, 1}, b1[3] = {K_LLM_SMP_PART_THREADS, 1, 1};
    uint32_t g2[3] = {1, 1, 1}, b2[3] = {K_LLM_SMP_PICK_THREADS, 1, 1};
    if ((st = hcq_queue_launch(d->q, d->part, g1, b1, &d->p, sizeof d->p)) ||
        (st = hcq_queue_launch(d->q, d->pick, g2, b2, &d->p, sizeof d->p)) ||
        (st = hcq_queue_finish(d->q, 20ull * 1000 * 1000 * 1000)))
        return st;
    uint32_t r[2];
    if (o)
        memcpy(r, o, 8);
    else if ((st = hcq_buf_read(d->out, 0, r, 8)))
        return st;
    *id = r[0], *status = r[1];
    return HCQ_OK;
}

enum shape { FLAT, PEAKED, CLUSTERED };

static void
gen_logits(float *l, uint32_t n, enum shape s)
{
    for (uint32_t i = 0; i < n; i++) {
        /* sum of uniforms ~ normal */
        float g = th_randf(-1, 1) + th_randf(-1, 1) + th_randf(-1, 1);
        l[i] = s == FLAT ? th_randf(-2, 2) : 2.0f * g;
    }
    if (s == PEAKED)
        for (int j = 0; j < 20; j++)
            l[th_rand() % n] += th_randf(4, 9);
    if (s == CLUSTERED) /* the 300 best ids in the first slice: its 32 candidates do not hold them */
        for (uint32_t i = 0; i < 300 && i < n; i++)
            l[i] = 8.0f + th_randf(0, 1);
}

struct cfg {
    const char *name;
    float temp;
    uint32_t top_k;
    float top_p, min_p, rep, pres, freq;
    uint32_t last_n, flags;
};

static const char *const default_devs = "emu:gh100 cuda:0 rm:0";

static char *
dev_list(char *buf, size_t cap)
{
    const char *env = getenv("HCQ_TEST_DEVS");
    snprintf(buf, cap, "cpu %s", env ? env : default_devs);
    return buf;
}

static void
to_sp(const struct cfg *c, uint64_t seed, struct llm_sampler_params *sp)
{
    llm_sampler_params_default(sp);
    sp->temp = c->temp;
    sp->top_k = c->top_k;
    sp->top_p = c->top_p;
    sp->min_p = c->min_p;
    sp->repeat_penalty = c->rep;
    sp->presence_penalty = c->pres;
    sp->frequency_penalty = c->freq;
    sp->repeat_last_n = c->last_n;
    sp->seed = seed;
}

TEST(same_as_host)
{
    static const struct cfg cfgs[] = {
        {"greedy", 0, 0, 1, 0, 1, 0, 0, 0, 0},
        {"greedy+penalties", 0, 0, 1, 0, 1.3f, 0.4f, 0.2f, 16, 0},
        {"temp", 0.8f, 0, 1, 0, 1, 0, 0, 0, 0},
        {"top-k 40", 0.8f, 40, 1, 0, 1, 0, 0, 0, 0},
        {"top-k 5", 1.0f, 5, 1, 0, 1, 0, 0, 0, 0},
        {"top-p 0.95", 0.8f, 0, 0.95f, 0, 1, 0, 0, 0, 0},
        {"min-p 0.05", 0.8f, 0, 1, 0.05f, 1, 0, 0, 0, 0},
        {"penalties", 0.8f, 0, 1, 0, 1.1f, 0.3f, 0.2f, 64, 0},
        {"all", 0.8f, 40, 0.95f, 0.05f, 1.1f, 0.1f, 0.1f, 64, 0},
        {"all exact", 0.8f, 40, 0.95f, 0.05f, 1.1f, 0.1f, 0.1f, 64, K_LLM_SMP_EXACT},
        {"top-p exact", 1.0f, 0, 0.9f, 0, 1, 0, 0, 0, K_LLM_SMP_EXACT},
    };
    static const uint32_t sizes[] = {50, 5000, 128256};
    char devs[256];
    int tried = 0;
    float *l = malloc(4ull * 128256);
    CHECK(l);
    for (char *save = NULL, *dn = strtok_r(dev_list(devs, sizeof devs), " ,", &save); dn;
         dn = strtok_r(NULL, " ,", &save)) {
        uint32_t seen_exact = 0, seen_bound = 0, seen_topk = 0, diff_all = 0, draws_all = 0;
        int opened = 0;
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
            for (size_t ci = 0; ci < sizeof cfgs / sizeof cfgs[0]; ci++) {
                const struct cfg *c = &cfgs[ci];
                const uint32_t n = sizes[si], trials = n > 10000 ? 12 : 60;
                struct llm_sampler_params sp;
                to_sp(c, th_rand(), &sp);
                struct dsmp d;
                struct llm_sampler *hs = NULL;
                int o = dsmp_open(&d, dn, n, &sp, c->flags);
                CHECK(o >= 0);
                if (!o) {
                    printf("    %s: no device or no k_llm_sample, skipped\n", dn);
                    goto next_dev;
                }
                opened = 1;
                CHECK_OK(llm_sampler_create(&sp, n, &hs));
                uint32_t diff = 0;
                for (uint32_t tr = 0; tr < trials; tr++) {
                    gen_logits(l, n, (enum shape)(tr % 3));
                    uint32_t id, status;
                    CHECK_OK(dsmp_run(&d, l, &id, &status));
                    int32_t want = llm_sampler_sample(hs, l);
                    llm_sampler_accept(hs, (int32_t)id < (int32_t)n ? (int32_t)id : want);
                    CHECKF(id < n && !(status & ~(K_LLM_SMP_S_EXACT | K_LLM_SMP_S_TOPK)) &&
                               (status & (K_LLM_SMP_S_EXACT | K_LLM_SMP_S_TOPK)) !=
                                   (K_LLM_SMP_S_EXACT | K_LLM_SMP_S_TOPK),
                           "%s n %u %s: id %u status %#x", dn, n, c->name, id, status);
                    if (c->temp > 0) {
                        seen_exact += (status & K_LLM_SMP_S_EXACT) != 0;
                        seen_topk += (status & K_LLM_SMP_S_TOPK) != 0;
                        seen_bound += !(status & (K_LLM_SMP_S_EXACT | K_LLM_SMP_S_TOPK));
                    }
                    if ((int32_t)id != want && diff++ < 3)
                        printf("    %s n %u %s trial %u: device %u, host %d\n", dn, n, c->name, tr, id, want);
                }
                diff_all += diff, draws_all += trials;
                llm_sampler_destroy(hs);
                dsmp_close(&d);
            }
        printf(
            "    %s: the top-k path %u times, the candidate path %u times, the exact path %u times; %u of %u "
            "tokens differ\n",
            dn, seen_topk, seen_bound, seen_exact, diff_all, draws_all);
        CHECKF(diff_all <= 1 + draws_all / 500, "%s: %u of %u tokens differ from the host sampler", dn,
               diff_all, draws_all);
        CHECK(!opened || (seen_exact > 0 && seen_bound > 0 && seen_topk > 0));
        tried += opened;
    next_dev:;
    }
    CHECK(tried > 0);
done:
    free(l);
}

/* The distribution the definition gives (double): penalties with counts cnt, top-k,
 * softmax at temp, top-p prefix, min-p, renormalised. pr: n probabilities. */
static void
ref_dist(const float *l, const uint32_t *cnt, uint32_t n, const struct llm_sampler_params *sp, double *pr)
{
    double *x = malloc(8ull * n);
    uint32_t *ord = malloc(4ull * n);
    if (!x || !ord)
        goto out;
    for (uint32_t i = 0; i < n; i++) {
        x[i] = l[i];
        if (cnt[i]) {
            x[i] = x[i] > 0 ? x[i] / sp->repeat_penalty : x[i] * sp->repeat_penalty;
            x[i] -= cnt[i] * sp->frequency_penalty + sp->presence_penalty;
        }
        ord[i] = i;
        pr[i] = 0;
    }
    /* selection sort of the best 2000 is enough for the sizes used here */
    uint32_t lim = n < 2000 ? n : 2000;
    for (uint32_t a = 0; a < lim; a++) {
        uint32_t b = a;
        for (uint32_t j = a + 1; j < n; j++)
            if (x[ord[j]] > x[ord[b]])
                b = j;
        uint32_t t = ord[a];
        ord[a] = ord[b], ord[b] = t;
    }
    uint32_t k = sp->top_k && sp->top_k < n ? sp->top_k : n;
    double z = 0, mx = x[ord[0]];
    for (uint32_t i = 0; i < k; i++)
        z += exp((x[ord[i]] - mx) / sp->temp);
    if (sp->top_p < 1) {
        double cum = 0;
        for (uint32_t i = 0; i < k && i < lim; i++)
            if ((cum += exp((x[ord[i]] - mx) / sp->temp) / z) >= sp->top_p) {
                k = i + 1;
                break;
            }
    }
    if (sp->min_p > 0) {
        uint32_t kk = 1;
        /* p_i >= min_p * p_0, p_0 = 1 / z */
        while (kk < k && kk < lim && exp((x[ord[kk]] - mx) / sp->temp) >= sp->min_p)
            kk++;
        k = kk;
    }
    double m = 0;
    for (uint32_t i = 0; i < k; i++)
        m += exp((x[ord[i]] - mx) / sp->temp);
    for (uint32_t i = 0; i < k; i++)
        pr[ord[i]] = exp((x[ord[i]] - mx) / sp->temp) / m;
out:
    free(x), free(ord);
}

/* Chi-square of counts[n] (draws) against pr: bins of expected >= 5 (the rest pooled);
 * an observed id of probability 0 makes it infinite. *df: bins - 1. */
static double
chi2(const uint32_t *counts, const double *pr, uint32_t n, uint32_t draws, uint32_t *df)
{
    double c2 = 0, pool_e = 0, pool_o = 0;
    uint32_t bins = 0;
    for (uint32_t i = 0; i < n; i++) {
        double e = pr[i] * draws;
        if (pr[i] == 0 && counts[i]) {
            *df = 1;
            return INFINITY;
        }
        if (e >= 5) {
            c2 += (counts[i] - e) * (counts[i] - e) / e;
            bins++;
        } else {
            pool_e += e, pool_o += counts[i];
        }
    }
    if (pool_e > 0) {
        c2 += (pool_o - pool_e) * (pool_o - pool_e) / pool_e;
        bins++;
    }
    *df = bins > 1 ? bins - 1 : 1;
    return c2;
}

TEST(distribution)
{
    static const struct {
        struct cfg c, wrong;
    } cases[] = {
        {{"temp 0.8", 0.8f, 0, 1, 0, 1, 0, 0, 0, 0}, {"temp 0.88", 0.88f, 0, 1, 0, 1, 0, 0, 0, 0}},
        {{"top-k 10", 1.0f, 10, 1, 0, 1, 0, 0, 0, 0}, {"top-k 8", 1.0f, 8, 1, 0, 1, 0, 0, 0, 0}},
        {{"top-p 0.95", 0.8f, 0, 0.95f, 0, 1, 0, 0, 0, 0}, {"top-p 0.9", 0.8f, 0, 0.9f, 0, 1, 0, 0, 0, 0}},
        {{"min-p 0.05", 0.8f, 0, 1, 0.05f, 1, 0, 0, 0, 0}, {"min-p 0.1", 0.8f, 0, 1, 0.1f, 1, 0, 0, 0, 0}},
        {{"penalties", 0.8f, 0, 1, 0, 1.3f, 0.5f, 0.3f, 0, 0},
         {"no penalties", 0.8f, 0, 1, 0, 1, 0, 0, 0, 0}},
        {{"all", 0.8f, 40, 0.95f, 0.05f, 1.1f, 0.2f, 0.1f, 0, 0},
         {"all, min-p 0.1", 0.8f, 40, 0.95f, 0.1f, 1.1f, 0.2f, 0.1f, 0, 0}},
        {{"top-p 0.95 exact", 0.8f, 0, 0.95f, 0, 1, 0, 0, 0, K_LLM_SMP_EXACT},
         {"top-p 0.9", 0.8f, 0, 0.9f, 0, 1, 0, 0, 0, 0}},
    };
    const uint32_t n = 3000, draws = 8000, batch = 500;
    char devs[256];
    int tried = 0;
    float *l = NULL;
    double *pr = NULL;
    uint32_t *counts = NULL, *cnt = NULL;
    /* 8000 draws x 8 samplers x 2 devices: 44 s under ASan on 2 cores, where the sampler code it
     * reaches is the code same_as_host runs; the plain build runs it */
    if (PROC_ASAN)
        SKIP("statistical draws skipped under AddressSanitizer (same code as same_as_host; run in the plain "
             "build)");
    l = malloc(4ull * n);
    pr = malloc(8ull * n);
    counts = malloc(4ull * n), cnt = calloc(n, 4);
    CHECK(l && pr && counts && cnt);
    /* Zipf-like: the id of rank r (a random permutation) gets -1.2 ln(1 + r), so top-p and
     * min-p cut at different, distinct depths (min-p 0.05 keeps ~7 ids at temp 0.8, top-p
     * 0.95 ~200) */
    for (uint32_t i = 0; i < n; i++)
        counts[i] = i;
    for (uint32_t i = n - 1; i > 0; i--) {
        uint32_t j = (uint32_t)(th_rand() % (i + 1)), sw = counts[i];
        counts[i] = counts[j], counts[j] = sw;
    }
    for (uint32_t i = 0; i < n; i++)
        l[counts[i]] = -1.2f * logf(1.0f + (float)i) + th_randf(-0.01f, 0.01f);
    /* the ids the penalties hit: the 30 best and a few others, seen 1..3 times */
    for (uint32_t i = 0; i < 40; i++) {
        uint32_t best = 0;
        for (uint32_t j = 1; j < n; j++)
            if (!cnt[j] && l[j] > l[best])
                best = j;
        cnt[i < 30 ? best : th_rand() % n] = 1 + i % 3;
    }
    for (char *save = NULL, *dn = strtok_r(dev_list(devs, sizeof devs), " ,", &save); dn;
         dn = strtok_r(NULL, " ,", &save)) {
        int opened = 0;
        for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
            struct llm_sampler_params sp, wp;
            to_sp(&cases[ci].c, th_rand(), &sp);
            to_sp(&cases[ci].wrong, 0, &wp);
            struct dsmp d;
            struct hcq_buf *outs = NULL;
            int o = dsmp_open(&d, dn, n, &sp, cases[ci].c.flags);
            CHECK(o >= 0);
            if (!o)
                break;
            opened = 1;
            const bool pen = sp.repeat_penalty != 1 || sp.presence_penalty != 0 || sp.frequency_penalty != 0;
            memcpy(d.st_host + K_LLM_SMP_ST_RING, cnt, pen ? 4ull * n : 0);
            CHECK_OK(hcq_buf_write(d.st, 0, d.st_host, k_llm_smp_state_bytes(0, n)));
            CHECK_OK(hcq_buf_write(d.lg, 0, l, 4ull * n));
            CHECK_OK(hcq_buf_alloc(d.dev, 8ull * batch, HCQ_MEM_HOST, &outs));
            memset(counts, 0, 4ull * n);
            uint32_t bad = 0, *ob = malloc(8ull * batch);
            CHECK(ob);
            for (uint32_t b0 = 0; b0 < draws; b0 += batch) {
                memset(ob, 0xa5, 8ull * batch);
                CHECK_OK(hcq_buf_write(outs, 0, ob, 8ull * batch));
                for (uint32_t i = 0; i < batch; i++) {
                    struct k_llm_sample_params p = d.p;
                    p.out_va = hcq_buf_va(outs) + 8ull * i;
                    uint32_t g1[3] = {p.n_slice, 1, 1}, b1[3] = {K_LLM_SMP_PART_THREADS, 1, 1};
                    uint32_t g2[3] = {1, 1, 1}, b2[3] = {K_LLM_SMP_PICK_THREADS, 1, 1};
                    CHECK_OK(hcq_queue_launch(d.q, d.part, g1, b1, &p, sizeof p));
                    CHECK_OK(hcq_queue_launch(d.q, d.pick, g2, b2, &p, sizeof p));
                }
                CHECK_OK(hcq_queue_finish(d.q, 60ull * 1000 * 1000 * 1000));
                CHECK_OK(hcq_buf_read(outs, 0, ob, 8ull * batch));
                for (uint32_t i = 0; i < batch; i++) {
                    if (ob[2 * i] < n && !(ob[2 * i + 1] & ~(K_LLM_SMP_S_EXACT | K_LLM_SMP_S_TOPK)))
                        counts[ob[2 * i]]++;
                    else
                        bad++;
                }
            }
            free(ob);
            hcq_buf_free(outs);
            CHECKF(!bad, "%s %s: %u draws without a valid id", dn, cases[ci].c.name, bad);
            uint32_t df, wdf;
            static uint32_t zero_cnt[3000];
            ref_dist(l, pen ? cnt : zero_cnt, n, &sp, pr);
            double c2 = chi2(counts, pr, n, draws, &df), lim = df + 6 * sqrt(2.0 * df) + 10;
            ref_dist(l, pen ? cnt : zero_cnt, n, &wp, pr);
            double w2 = chi2(counts, pr, n, draws, &wdf), wlim = wdf + 6 * sqrt(2.0 * wdf) + 10;
            printf("    %s %-18s chi2 %8.1f (df %3u, limit %6.1f); against %-16s %10.1f (limit %6.1f)\n", dn,
                   cases[ci].c.name, c2, df, lim, cases[ci].wrong.name, w2, wlim);
            CHECKF(c2 <= lim, "%s %s: chi2 %g above %g", dn, cases[ci].c.name, c2, lim);
            CHECKF(w2 > wlim, "%s %s: the test cannot tell it from %s (chi2 %g)", dn, cases[ci].c.name,
                   cases[ci].wrong.name, w2);
            dsmp_close(&d);
        }
        tried += opened;
    }
    CHECK(tried > 0);
done:
    free(l), free(pr), free(counts), free(cnt);
}

TEST(nonfinite)
{
    const uint32_t n = 5000;
    char devs[256];
    int tried = 0;
    float *l = malloc(4ull * n);
    CHECK(l);
    for (char *save = NULL, *dn = strtok_r(dev_list(devs, sizeof devs), " ,", &save); dn;
         dn = strtok_r(NULL, " ,", &save))
        for (int greedy = 0; greedy < 2; greedy++) {
            struct llm_sampler_params sp;
            struct cfg c = {"x", greedy ? 0 : 0.8f, 40, 0.95f, 0, 1, 0, 0, 8, 0};
            to_sp(&c, th_rand(), &sp);
            struct dsmp d;
            int o = dsmp_open(&d, dn, n, &sp, 0);
            CHECK(o >= 0);
            if (!o)
                break;
            gen_logits(l, n, FLAT);
            uint32_t bad_at = 1 + (uint32_t)(th_rand() % (n - 1)), id, status;
            l[bad_at] = greedy ? INFINITY : NAN;
            l[bad_at + (bad_at + 1 < n)] = -INFINITY;
            CHECK_OK(dsmp_run(&d, l, &id, &status));
            CHECKF(status == K_LLM_SMP_S_NONFINITE && id == bad_at, "%s: status %#x id %u, want the index %u",
                   dn, status, id, bad_at);
            uint32_t st[K_LLM_SMP_ST_RING];
            CHECK_OK(hcq_buf_read(d.st, 0, st, sizeof st));
            CHECKF(st[K_LLM_SMP_ST_DRAWS] == 0 && st[K_LLM_SMP_ST_HIST_N] == 0,
                   "%s: the state moved on a non-finite logit", dn);
            /* finite again: a token, the draw counted */
            l[bad_at] = 0, l[bad_at + (bad_at + 1 < n)] = 0;
            CHECK_OK(dsmp_run(&d, l, &id, &status));
            CHECK(id < n && !(status & K_LLM_SMP_S_NONFINITE));
            CHECK_OK(hcq_buf_read(d.st, 0, st, sizeof st));
            CHECK(st[K_LLM_SMP_ST_DRAWS] == (greedy ? 0u : 1u) && st[K_LLM_SMP_ST_HIST_N] == 1 &&
                  st[0] == id);
            dsmp_close(&d);
            tried++;
        }
    CHECK(tried > 0);
done:
    free(l);
}

int
main(int argc, char **argv)
{
    static const struct th_case cases[] = {TH_CASE(same_as_host), TH_CASE(distribution), TH_CASE(nonfinite)};
    return th_run("llm_sample", NULL, cases, TH_COUNT(cases), argc - 1, argv + 1) ? 1 : 0;
}
