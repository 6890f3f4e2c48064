/* SPDX-License-Identifier: MIT */
/*
 * test_llm_sampler.c - sampler: greedy argmax, seeded reproducibility, empirical
 * distributions against the softmax (temperature), top-k/top-p/min-p support sets,
 * repetition penalty, presence/frequency penalties against a CPU reference; chat template
 * rendering.
 */
#include "harness.h"
#include "llm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NV 50

static void
rand_logits(float *l)
{
    for (int i = 0; i < NV; i++)
        l[i] = th_randf(-4, 4);
}

TEST(greedy)
{
    struct llm_sampler_params p;
    struct llm_sampler *s = NULL;
    float l[NV];
    rand_logits(l);
    l[17] = 10;
    llm_sampler_params_default(&p);
    CHECK_OK(llm_sampler_create(&p, NV, &s));
    CHECK(llm_sampler_sample(s, l) == 17);
    /* penalty moves greedy away from a repeated token */
    llm_sampler_destroy(s);
    s = NULL;
    p.repeat_penalty = 100.0f;
    l[3] = 9.9f;
    CHECK_OK(llm_sampler_create(&p, NV, &s));
    llm_sampler_accept(s, 17);
    CHECK(llm_sampler_sample(s, l) == 3);
    CHECK(l[17] == 10); /* input untouched */
done:
    llm_sampler_destroy(s);
}

/* Empirical frequencies over many draws vs the expected softmax. */
TEST(temperature_distribution)
{
    struct llm_sampler_params p;
    struct llm_sampler *s = NULL;
    float l[NV];
    static int count[NV];
    memset(count, 0, sizeof count);
    rand_logits(l);
    llm_sampler_params_default(&p);
    p.temp = 0.7f;
    p.seed = th_rand();
    CHECK_OK(llm_sampler_create(&p, NV, &s));
    const int draws = 40000;
    for (int i = 0; i < draws; i++)
        count[llm_sampler_sample(s, l)]++;
    double z = 0, mx = -1e9;
    for (int i = 0; i < NV; i++)
        mx = fmax(mx, l[i]);
    for (int i = 0; i < NV; i++)
        z += exp((l[i] - mx) / 0.7);
    for (int i = 0; i < NV; i++) {
        double pe = exp((l[i] - mx) / 0.7) / z;
        double sd = sqrt(pe * (1 - pe) / draws);
        CHECKF(fabs(count[i] / (double)draws - pe) < 5 * sd + 1e-3, "token %d: %g vs %g", i,
               count[i] / (double)draws, pe);
    }
done:
    llm_sampler_destroy(s);
}

TEST(filters_and_seed)
{
    struct llm_sampler_params p;
    struct llm_sampler *s = NULL, *s2 = NULL;
    float l[NV];
    for (int i = 0; i < NV; i++)
        l[i] = (float)i * 0.1f; /* token 49 is most likely */
    llm_sampler_params_default(&p);
    p.temp = 1.0f;
    p.top_k = 3;
    CHECK_OK(llm_sampler_create(&p, NV, &s));
    for (int i = 0; i < 2000; i++) {
        int32_t id = llm_sampler_sample(s, l);
        CHECKF(id >= 47, "top-k 3 gave %d", id);
    }
    llm_sampler_destroy(s);
    s = NULL;
    /* min-p 0.9: only tokens with p >= 0.9 p_max: exp(-0.1) = 0.905 -> 49 and 48 */
    p.top_k = 0;
    p.min_p = 0.9f;
    CHECK_OK(llm_sampler_create(&p, NV, &s));
    for (int i = 0; i < 2000; i++) {
        int32_t id = llm_sampler_sample(s, l);
        CHECKF(id >= 48, "min-p gave %d", id);
    }
    llm_sampler_destroy(s);
    s = NULL;
    /* top-p tiny: always the argmax */
    p.min_p = 0;
    p.top_p = 0.01f;
    CHECK_OK(llm_sampler_create(&p, NV, &s));
    for (int i = 0; i < 200; i++)
        CHECK(llm_sampler_sample(s, l) == 49);
    llm_sampler_destroy(s);
    s = NULL;
    /* same seed, same sequence; different seed, different sequence */
    p.top_p = 1;
    p.seed = 42;
    CHECK_OK(llm_sampler_create(&p, NV, &s));
    CHECK_OK(llm_sampler_create(&p, NV, &s2));
    int same = 0;
    for (int i = 0; i < 100; i++)
        same += llm_sampler_sample(s, l) == llm_sampler_sample(s2, l);
    CHECK(same == 100);
    llm_sampler_destroy(s2);
    s2 = NULL;
    p.seed = 43;
    CHECK_OK(llm_sampler_create(&p, NV, &s2));
    llm_sampler_reset(s);
    same = 0;
    for (int i = 0; i < 100; i++)
        same += llm_sampler_sample(s, l) == llm_sampler_sample(s2, l);
    CHECK(same < 100);
done:
    llm_sampler_destroy(s);
    llm_sampler_destroy(s2);
}

/* top-k (heap selection) on random logits: only the true k best appear, each of them does,
 * with frequencies of the softmax restricted to them. */
TEST(top_k_random)
{
    struct llm_sampler_params p;
    struct llm_sampler *s = NULL;
    float l[NV];
    static int count[NV];
    memset(count, 0, sizeof count);
    rand_logits(l);
    llm_sampler_params_default(&p);
    p.temp = 1.0f;
    p.top_k = 5;
    p.seed = th_rand();
    CHECK_OK(llm_sampler_create(&p, NV, &s));
    const int draws = 20000;
    for (int i = 0; i < draws; i++)
        count[llm_sampler_sample(s, l)]++;
    /* rank of each token */
    double z = 0;
    for (int i = 0; i < NV; i++) {
        int better = 0;
        for (int j = 0; j < NV; j++)
            better += l[j] > l[i] || (l[j] == l[i] && j < i);
        if (better < 5)
            z += exp(l[i]);
    }
    for (int i = 0; i < NV; i++) {
        int better = 0;
        for (int j = 0; j < NV; j++)
            better += l[j] > l[i] || (l[j] == l[i] && j < i);
        if (better >= 5) {
            CHECKF(count[i] == 0, "token %d (rank %d) drawn %d times", i, better, count[i]);
            continue;
        }
        double pe = exp(l[i]) / z, sd = sqrt(pe * (1 - pe) / draws);
        CHECKF(fabs(count[i] / (double)draws - pe) < 5 * sd + 1e-3, "token %d: %g vs %g", i,
               count[i] / (double)draws, pe);
    }
done:
    llm_sampler_destroy(s);
}

/* presence/frequency penalties: greedy picks the argmax of the reference-penalised logits,
 * for random logits and a random history (with repeats) in the window. */
TEST(presence_frequency)
{
    struct llm_sampler_params p;
    struct llm_sampler *s = NULL;
    float l[NV], ref[NV];
    for (int round = 0; round < 200; round++) {
        rand_logits(l);
        llm_sampler_params_default(&p);
        p.repeat_last_n = 1 + th_rand() % 16;
        p.presence_penalty = th_randf(-2, 2);
        p.frequency_penalty = th_randf(-2, 2);
        CHECK_OK(llm_sampler_create(&p, NV, &s));
        int count[NV] = {0}, hist[64];
        int n_acc = 1 + th_rand() % 40;
        for (int i = 0; i < n_acc; i++) {
            hist[i] = th_rand() % 8; /* few ids: repeats are likely */
            llm_sampler_accept(s, hist[i]);
        }
        int from = n_acc > (int)p.repeat_last_n ? n_acc - (int)p.repeat_last_n : 0;
        for (int i = from; i < n_acc; i++)
            count[hist[i]]++;
        int best = 0;
        for (int i = 0; i < NV; i++) {
            ref[i] = l[i] - count[i] * p.frequency_penalty - (count[i] > 0 ? p.presence_penalty : 0);
            if (ref[i] > ref[best])
                best = i;
        }
        CHECK(llm_sampler_sample(s, l) == best);
        llm_sampler_destroy(s);
        s = NULL;
    }
    /* a non-finite penalty is refused */
    llm_sampler_params_default(&p);
    p.presence_penalty = NAN;
    CHECK(llm_sampler_create(&p, NV, &s) == HCQ_ERR_INVALID);
done:
    llm_sampler_destroy(s);
}

TEST(chat_templates)
{
    struct llm_chat_msg m[2] = {{"system", "Be brief."}, {"user", "Hi"}};
    char buf[512];
    size_t n = llm_chat_render(LLM_CHAT_LLAMA3, m, 2, true, buf, sizeof buf);
    const char *want3 = "<|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|>"
                        "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
                        "<|start_header_id|>assistant<|end_header_id|>\n\n";
    CHECK(n == strlen(want3) && !strcmp(buf, want3));
    n = llm_chat_render(LLM_CHAT_CHATML, m, 2, true, buf, sizeof buf);
    const char *wantc = "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
                        "<|im_start|>assistant\n";
    CHECK(n == strlen(wantc) && !strcmp(buf, wantc));
    char small[8];
    n = llm_chat_render(LLM_CHAT_CHATML, m, 2, true, small, sizeof small);
    CHECK(n == strlen(wantc) && strlen(small) == 7);
done:;
}

int
main(int argc, char **argv)
{
    static const struct th_case cases[] = {
        TH_CASE(greedy),       TH_CASE(temperature_distribution), TH_CASE(filters_and_seed),
        TH_CASE(top_k_random), TH_CASE(presence_frequency),       TH_CASE(chat_templates),
    };
    return th_run("llm_sampler", NULL, cases, TH_COUNT(cases), argc - 1, argv + 1) ? 1 : 0;
}
