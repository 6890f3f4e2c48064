/* SPDX-License-Identifier: MIT */
/*
 * nvhcq_ppl.c - `nvhcq perplexity`: perplexity of a GGUF model over a text file by
 * llama.cpp's llama-perplexity method (llm_perplexity in src/llm/llm_ppl.c), printed the
 * way llama-perplexity prints it: running estimates "[1]x,[2]y,..." and
 * "Final estimate: PPL = X +/- Y", so the two tools' outputs can be compared line for line
 *. Layer: tools.
 */
#include "hcq.h"
#include "llm.h"
#include "nvhcq_cli.h"
#include "nvhcq_cmds.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void nvhcq_llm_progress(uint64_t done_B, uint64_t total_B, void *user);

static void
print_chunk(uint32_t chunk, double ppl, void *user)
{
    (void)user;
    printf("[%u]%.4f,", chunk, ppl);
    fflush(stdout);
}

int
nvhcq_cmd_perplexity(int argc, char **argv)
{
    const char *model = NULL, *file = NULL, *dev = NULL;
    uint32_t n_ctx = 512, n_batch = 512, n_chunks = 0;
    const struct cli_opt opts[] = {
        CLI_STR("-m", "--model", &model, "FILE", "GGUF model (required)"),
        CLI_STR("-f", "--file", &file, "FILE", "text to score (required; - : stdin)"),
        CLI_NUM("-c", "--ctx-size", &n_ctx, "N", 4, 1 << 20, "tokens per chunk (llama-perplexity's -c)"),
        CLI_NUM("-b", "--batch-size", &n_batch, "N", 1, 65536,
                "tokens per prefill batch (results do not depend on it beyond rounding)"),
        CLI_NUM(NULL, "--chunks", &n_chunks, "N", 0, 1 << 30,
                "score at most N chunks; 0: all the text holds"),
        CLI_STR(NULL, "--dev", &dev, "SPEC",
                "device: cpu, cuda:N, rm:N, nvgpu:0, emu:... [default: HCQ_DEV, else auto]"),
        CLI_END,
    };
    const struct cli_cmd cmd = {
        "perplexity",
        "-m FILE -f TEXT [-c N] [options]",
        "Perplexity by llama.cpp's llama-perplexity method: the text tokenized whole (BOS first where\n"
        "the vocabulary adds it), cut into chunks of -c tokens, each evaluated from an empty KV cache\n"
        "with BOS as its first token, the second half of each chunk scored. Prints the running\n"
        "estimate after each chunk, [1]x,[2]y,..., then \"Final estimate: PPL = X +/- Y\" (standard\n"
        "error as llama-perplexity computes it). The text needs at least 2 x -c tokens.",
        opts,
        NULL,
        NULL,
        "Compare with llama.cpp on the same file and text:\n"
        "  llama-perplexity -m FILE -f TEXT -c 512 -ngl 99\n"
        "  nvhcq perplexity -m FILE -f TEXT -c 512 --dev rm:0",
    };
    int rc = cli_parse(&cmd, argc, argv);
    if (rc != CLI_CONTINUE)
        return rc;
    if (!model)
        return cli_usage_error(&cmd, "-m FILE is required");
    if (!file)
        return cli_usage_error(&cmd, "-f FILE is required (the text to score)");
    size_t len;
    char *text = cli_read_text("perplexity", file, &len);
    if (!text)
        return 1;
    struct llm_model_params mp;
    llm_model_params_default(&mp);
    int last = -1;
    mp.dev_spec = dev;
    mp.n_ctx = n_ctx;
    mp.n_batch = n_batch;
    /* batches below 64 rows (-b) keep the f32 per-op matmuls: an accuracy tool, where the
     * library's default puts every batch of 2 or more on f16 tensor-core operands (the default
     * -b 512 is on tensor cores either way) */
    mp.gemm_min_batch = LLM_GEMM_MIN_BATCH_REF;
    mp.progress = nvhcq_llm_progress;
    mp.progress_user = &last;
    struct llm_model *m = NULL;
    struct llm_gguf *g = NULL;
    int32_t *ids = NULL;
    size_t n_ids = 0;
    rc = 1;
    if (llm_gguf_open(model, &g) || llm_model_load_gguf(g, &mp, &m)) {
        cli_fail_file("perplexity", "cannot load", model);
        goto done;
    }
    const struct llm_hparams *hp = llm_model_hparams(m);
    if (llm_ppl_tokenize(llm_model_tok(m), text, len, &ids, &n_ids)) {
        cli_fail("perplexity", "tokenizing %s: %s", file, hcq_last_error());
        goto done;
    }
    if (n_ids < 2ull * n_ctx) {
        cli_fail("perplexity",
                 "%s tokenizes to only %zu tokens; a context of %u needs at least %llu (2 x -c): use "
                 "a longer text or a smaller -c",
                 file, n_ids, n_ctx, 2ull * n_ctx);
        goto done;
    }
    if (llm_model_n_ctx(m) < n_ctx) { /* learned positions (gpt2) end at the training context */
        cli_fail("perplexity", "-c %u: this model's context is at most %u", n_ctx, llm_model_n_ctx(m));
        goto done;
    }
    if (n_ctx > hp->n_ctx_train)
        fprintf(stderr,
                "nvhcq perplexity: warning: the model was trained on only %u context tokens (-c %u)\n",
                hp->n_ctx_train, n_ctx);
    size_t n_chunk = n_ids / n_ctx;
    if (n_chunks && n_chunks < n_chunk)
        n_chunk = n_chunks;
    struct hcq_device_info info;
    if (hcq_device_info(llm_model_device(m), &info) == HCQ_OK)
        fprintf(stderr, "nvhcq perplexity: %s on %s (%s); %s: %zu tokens\n", model, info.name, info.spec,
                file, n_ids);
    fprintf(stderr, "nvhcq perplexity: calculating perplexity over %zu chunks, n_ctx=%u, batch_size=%u\n",
            n_chunk, n_ctx, n_batch < n_ctx ? n_batch : n_ctx);
    struct llm_ppl_params pp = {.n_ctx = n_ctx, .n_chunks = (uint32_t)n_chunk, .on_chunk = print_chunk};
    struct llm_ppl_result r;
    uint64_t t0 = hcq_time_ns();
    enum hcq_status st = llm_perplexity(m, ids, n_ids, &pp, &r);
    printf("\n");
    if (st) {
        cli_fail("perplexity", "%s", hcq_last_error());
        goto done;
    }
    double s = (hcq_time_ns() - t0) * 1e-9;
    fprintf(stderr, "nvhcq perplexity: %u chunks, %llu scored tokens in %.2f s (%.2f s per chunk)\n",
            r.n_chunks, (unsigned long long)r.count, s, s / r.n_chunks);
    if (isnan(r.ppl_err))
        printf("Final estimate: PPL = %.4f (no standard error: the variance of the log-likelihood is not "
               "positive)\n",
               r.ppl);
    else
        printf("Final estimate: PPL = %.4f +/- %.5f\n", r.ppl, r.ppl_err);
    rc = 0;
done:
    free(ids);
    free(text);
    llm_model_destroy(m);
    llm_gguf_destroy(g);
    return rc;
}
