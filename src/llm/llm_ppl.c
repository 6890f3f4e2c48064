/* SPDX-License-Identifier: MIT */
/*
 * llm_ppl.c - perplexity of a model over a text, by llama.cpp's llama-perplexity method
 * (facts of its tools/perplexity/perplexity.cpp, reimplemented): whole-text tokenization,
 * chunks of n_ctx tokens each from an empty KV cache with BOS as first token, the second
 * half of each chunk scored, the running estimate after each chunk and the standard error
 * of the final one. llm.h states the contract; docs/llm.md the mapping onto llama.cpp.
 * Layer: llm.
 */
#include "llm.h"

#include "util_log.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum hcq_status
llm_ppl_tokenize(const struct llm_tok *tok, const char *text, size_t len, int32_t **ids_out, size_t *n_out)
{
    *ids_out = NULL;
    *n_out = 0;
    /* llama.cpp's -f drops one trailing newline of the file before tokenizing */
    if (len && text[len - 1] == '\n')
        len--;
    bool bos = llm_tok_add_bos_default(tok);
    size_t n = 0, cap = len + 2; /* a first guess: at most one token per byte, plus BOS */
    int32_t *ids = malloc(cap * sizeof *ids);
    if (!ids)
        return hcq_err(HCQ_ERR_NOMEM, "llm_ppl_tokenize: %zu bytes", len);
    enum hcq_status st = llm_tok_encode(tok, text, len, bos, false, ids, cap, &n);
    if (!st && n > cap) { /* cannot happen with byte fallback; handled all the same */
        int32_t *more = realloc(ids, n * sizeof *ids);
        if (!more) {
            st = hcq_err(HCQ_ERR_NOMEM, "llm_ppl_tokenize: %zu tokens", n);
        } else {
            ids = more;
            st = llm_tok_encode(tok, text, len, bos, false, ids, n, &n);
        }
    }
    if (st) {
        free(ids);
        return st;
    }
    *ids_out = ids;
    *n_out = n;
    return HCQ_OK;
}

double
llm_log_softmax(const float *logits, uint32_t n, int32_t tok)
{
    /* shift by the maximum so no exponential overflows; the sum in double keeps the
     * smallest probabilities of a 128k vocabulary from rounding away */
    double mx = logits[0];
    for (uint32_t i = 1; i < n; i++)
        if (logits[i] > mx)
            mx = logits[i];
    double s = 0;
    for (uint32_t i = 0; i < n; i++)
        s += exp((double)logits[i] - mx);
    return (double)logits[tok] - mx - log(s);
}

void
llm_ppl_finish(struct llm_ppl_result *r)
{
    r->ppl = r->ppl_err = NAN;
    if (!r->count)
        return;
    double mean = r->nll_sum / (double)r->count;
    double var = r->nll2_sum / (double)r->count - mean * mean;
    r->ppl = exp(mean);
    /* llama.cpp: the standard error of the mean NLL, sqrt(var / (count - 1)), carried to
     * PPL by d exp(x) = exp(x) dx; it reports none when the variance is not positive */
    if (var > 0 && r->count > 1)
        r->ppl_err = r->ppl * sqrt(var / (double)(r->count - 1));
}

enum hcq_status
llm_perplexity(struct llm_model *m, const int32_t *tokens, size_t n_tokens, const struct llm_ppl_params *p,
               struct llm_ppl_result *out)
{
    memset(out, 0, sizeof *out);
    out->ppl = out->ppl_err = NAN;
    const uint32_t n_ctx = p->n_ctx, model_ctx = llm_model_n_ctx(m), V = llm_model_hparams(m)->n_vocab;
    if (n_ctx < 4 || n_ctx > model_ctx)
        return hcq_err(HCQ_ERR_INVALID, "llm_perplexity: context %u (4 .. %u, the model's context)", n_ctx,
                       model_ctx);
    if (n_tokens < 2ull * n_ctx)
        return hcq_err(
            HCQ_ERR_INVALID,
            "llm_perplexity: the text has %zu tokens; a context of %u needs at least %llu (2 x the "
            "context)",
            n_tokens, n_ctx, 2ull * n_ctx);
    for (size_t i = 0; i < n_tokens; i++)
        if (tokens[i] < 0 || (uint32_t)tokens[i] >= V)
            return hcq_err(HCQ_ERR_INVALID, "llm_perplexity: token %d at %zu (vocabulary %u)", tokens[i], i,
                           V);
    const struct llm_tok *tok = llm_model_tok(m);
    const bool add_bos = llm_tok_add_bos_default(tok);
    size_t n_chunk = n_tokens / n_ctx;
    if (p->n_chunks && p->n_chunks < n_chunk)
        n_chunk = p->n_chunks;
    /* the logits at positions first .. n_ctx-2 are scored: every scored prediction has seen
     * at least half a context (llama.cpp's choice, after Hugging Face's perplexity guide) */
    const uint32_t first = n_ctx / 2;
    int32_t *head = malloc((first + 1) * sizeof *head);
    if (!head)
        return hcq_err(HCQ_ERR_NOMEM, "llm_perplexity: %u tokens", first + 1);
    enum hcq_status st = HCQ_OK;
    for (size_t c = 0; c < n_chunk && !st; c++) {
        const int32_t *ct = tokens + c * n_ctx;
        /* positions 0..first in one evaluation (prefill batches of the model's n_batch): its
         * logits are those of position first; the rest one token at a time, since the model
         * returns the logits of the last token of an evaluation. Position 0 onwards rewrites
         * every KV row the chunk's attention reads, as a cleared cache would. */
        memcpy(head, ct, (first + 1) * sizeof *head);
        if (add_bos)
            head[0] = llm_tok_bos(tok);
        for (uint32_t j = first; j + 1 < n_ctx && !st; j++) {
            st = j == first ? llm_model_eval(m, head, first + 1, 0) : llm_model_eval(m, &ct[j], 1, j);
            const float *logits = st ? NULL : llm_model_logits(m);
            if (!st && !(st = llm_logits_check(logits, V))) {
                double v = -llm_log_softmax(logits, V, ct[j + 1]);
                out->nll_sum += v;
                out->nll2_sum += v * v;
                out->count++;
            }
        }
        if (st)
            break;
        out->n_chunks++;
        if (p->on_chunk)
            p->on_chunk(out->n_chunks, exp(out->nll_sum / (double)out->count), p->user);
    }
    free(head);
    llm_ppl_finish(out);
    return st;
}
