/* SPDX-License-Identifier: MIT */
/*
 * llm_match.h - the check shared by the LLM tests that run one model on several devices
 * (test_llm_e2e.c, test_llm_real.c, test_nvgpu_llm.c): a device's greedy run equals the
 * `cpu` device's - the same tokens at every step and the worst per-step logits NMSE below
 * 1e-6 (f32 on both sides; only the summation order differs) - with the same messages in
 * every test; and the loop that applies it to every other device that opens (HCQ_TEST_DEVS
 * or the test's list); and two helpers the LLM tests share (llm_match_argmax, llm_match_gen: a
 * gen-model file with the GPT-2 test vocabulary). Static inline: header only, like the other
 * tests/unit helpers.
 */
#ifndef LLM_MATCH_H
#define LLM_MATCH_H

#include "harness.h"
#include "hcq.h"
#include "llm.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LLM_MATCH_NMSE_MAX 1e-6

/* Normalised mean squared error of a against ref (sum of squared differences over the sum
 * of squares of ref). */
static inline double
llm_match_nmse(const float *a, const float *ref, uint32_t n)
{
    double e = 0, s = 0;
    for (uint32_t i = 0; i < n; i++) {
        e += ((double)a[i] - ref[i]) * ((double)a[i] - ref[i]);
        s += (double)ref[i] * ref[i];
    }
    return s > 0 ? e / s : e;
}

/* True when device `spec` opens here and runs the kernel library; otherwise prints why it
 * is skipped. */
static inline bool
llm_match_device_usable(const char *spec)
{
    struct hcq_device *probe = NULL;
    if (hcq_device_open(spec, &probe) != HCQ_OK) {
        printf("    %s: does not open here, skipped\n", spec);
        return false;
    }
    struct hcq_device_info info;
    bool kernels = hcq_device_info(probe, &info) == HCQ_OK && info.has_kernels;
    hcq_device_close(probe);
    if (!kernels)
        printf("    %s: no kernel library, skipped\n", spec);
    return kernels;
}

/* Device `label`'s greedy run (tokens td, logits ld: steps x V) against cpu's (tc, lc):
 * prints the worst NMSE, fails t on the first differing token or an NMSE of 1e-6 or more.
 * Returns false when it failed. */
static inline bool
llm_match_cpu(struct th *t, const char *label, const int32_t *td, const float *ld, const int32_t *tc,
              const float *lc, uint32_t steps, uint32_t V)
{
    double worst = 0;
    for (uint32_t s = 0; s < steps; s++)
        worst = fmax(worst, llm_match_nmse(ld + (size_t)s * V, lc + (size_t)s * V, V));
    printf("    %s vs cpu: worst logits NMSE %.3g over %u greedy steps\n", label, worst, steps);
    for (uint32_t s = 0; s < steps; s++)
        CHECKF(td[s] == tc[s], "%s step %u: %d vs cpu %d", label, s, td[s], tc[s]);
    CHECKF(worst < LLM_MATCH_NMSE_MAX, "%s: logits NMSE %g", label, worst);
    return true;
done:
    return false;
}

/* A device's side of llm_match_devices: the test's model loaded on device `spec` into *m
 * (freed by the caller, also after an error), then its greedy run: tokens (steps) and
 * logits (steps x V). */
typedef enum hcq_status (*llm_match_run_fn)(void *ctx, const char *spec, struct llm_model **m,
                                            int32_t *tokens, float *logits);

/* Every device of HCQ_TEST_DEVS (else `devs_default`; names apart by spaces or commas) other
 * than cpu that opens here and runs the kernel library (llm_match_device_usable): run() on it
 * must give cpu's greedy run tc, lc (llm_match_cpu, labelled "<spec><note>"). Skips t when no
 * device is left. gpus_only: the emulated devices (emu:*, which run cpu's twins) are left out too. */
static inline void
llm_match_devices_ex(struct th *t, const char *devs_default, bool gpus_only, const char *note,
                     llm_match_run_fn run, void *ctx, const int32_t *tc, const float *lc, uint32_t steps,
                     uint32_t V)
{
    struct llm_model *md = NULL;
    int32_t *td = NULL;
    float *ld = NULL;
    int tried = 0;
    char devs[256], label[320];
    const char *env = getenv("HCQ_TEST_DEVS");
    snprintf(devs, sizeof devs, "%s", env ? env : devs_default);
    CHECK((td = malloc(4ull * steps)) && (ld = malloc(4ull * V * steps)));
    for (char *save = NULL, *d = strtok_r(devs, " ,", &save); d; d = strtok_r(NULL, " ,", &save)) {
        if (!strcmp(d, "cpu") || (gpus_only && !strncmp(d, "emu", 3)))
            continue;
        if (!llm_match_device_usable(d))
            continue;
        CHECK_OK(run(ctx, d, &md, td, ld));
        snprintf(label, sizeof label, "%s%s", d, note);
        CHECK(llm_match_cpu(t, label, td, ld, tc, lc, steps, V));
        llm_model_destroy(md);
        md = NULL;
        tried++;
    }
    if (!tried)
        SKIP("no device besides cpu opens here");
done:
    llm_model_destroy(md);
    free(td);
    free(ld);
}

static inline void
llm_match_devices(struct th *t, const char *devs_default, const char *note, llm_match_run_fn run, void *ctx,
                  const int32_t *tc, const float *lc, uint32_t steps, uint32_t V)
{
    llm_match_devices_ex(t, devs_default, false, note, run, ctx, tc, lc, steps, V);
}

/* The id of the largest of l[0..n) (the lowest on ties, as the greedy sampler). */
static inline int32_t
llm_match_argmax(const float *l, uint32_t n)
{
    uint32_t b = 0;
    for (uint32_t i = 1; i < n; i++)
        if (l[i] > l[b])
            b = i;
    return (int32_t)b;
}

/* A gen-model file of the preset for a test, at /tmp/nvhcq_test_llm_<tag><preset>_<type>_<pid>.gguf
 * (into path): the tokenizer of the GPT-2 test vocabulary, cut to n_vocab ids (0: the preset's),
 * the given seed, two threads. */
static inline enum hcq_status
llm_match_gen(const char *tag, const char *preset, enum llm_type type, uint64_t seed, uint32_t n_vocab,
              char *path, size_t path_B)
{
    struct llm_gguf *v = NULL;
    enum hcq_status st = llm_gguf_open("tests/data/tokenizers/ggml-vocab-gpt-2.gguf", &v);
    if (st)
        return st;
    snprintf(path, path_B, "/tmp/nvhcq_test_llm_%s%s_%s_%d.gguf", tag, preset, llm_type_name(type),
             (int)getpid());
    struct llm_gen_params gp = {
        .preset = preset, .type = type, .vocab = v, .seed = seed, .threads = 2, .n_vocab = n_vocab};
    st = llm_gen_model(&gp, path);
    llm_gguf_destroy(v);
    return st;
}

#endif /* LLM_MATCH_H */
