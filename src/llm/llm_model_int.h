/* SPDX-License-Identifier: MIT */
/*
 * llm_model_int.h - the model object shared by llm_model.c (load, forward, decode) and
 * llm_upload.c (weights, repacking, state buffers). Layer: llm. Not part of the public API.
 */
#ifndef LLM_MODEL_INT_H
#define LLM_MODEL_INT_H

#include "llm_model_priv.h"
#include "hcq.h"
#include "k_llm_attn_decode.h"
#include "k_llm_matvec.h"
#include "k_llm_params.h" /* K_LLM_KV_B */
#include "k_llm_sample.h"

#include <stdbool.h>
#include <stdint.h>

/* A tensor on the device: its VA, type and shape (ne0 = row length). */
struct dtensor {
    uint64_t va; /* 0: absent */
    uint32_t type;
    uint32_t ne0, ne1;
    uint64_t f16_va; /* its f16 copy for the tensor-core matmuls (llm_pg_cache_f16), 0: none */
};

#define PROG_MVQ_W2 7 /* PROG_MVQ_<t>_W2 - PROG_MVQ_<t> */
/* Bit i (PROG_MVQ_Q4K + i): the weight types whose launches below K_LLM_MVQ_PAIR_ROWS rows take
 * the _w2 kernels (two passes before the PDL wait): Q4_0, Q8_0, Q6_K. H100 tg128: the launches
 * themselves get shorter (Q8_0 Q|K|V 4.66 -> 4.25 us, O 3.57 -> 3.27), the next ones longer
 * (their CTAs start beside the _w2 kernel's larger register file); in sum Q4_0 +1-2%, Q6_K +0.5%,
 * Q4_K_M -4.3%, Q5_K_M -4%. Q4_0 and Q8_0 launches with rows of 2048k values take the
 * two-groups-per-task kernels instead (k_llm_matvec_q8_q4_0x2 / _q8_0x2; H100 tg128 Q8_0 +1.9%,
 * Q4_0 +2.2%). */
#define K_LLM_MVQ_W2 0x1Cu
enum {
    PROG_EMBED,
    PROG_NORM,
    PROG_MATMUL,
    PROG_ROPE_KV,
    PROG_ATTN,
    PROG_ACT,
    PROG_MATVEC,
    PROG_ATTN_DEC,
    PROG_MATVEC_Q8,
    PROG_ATTN_TILE,
    PROG_MVQ_Q4K, /* k_llm_matvec_q8 compiled for one weight type (mvq_typed_prog) */
    PROG_MVQ_Q5K,
    PROG_MVQ_Q4_0,
    PROG_MVQ_Q8_0,
    PROG_MVQ_Q6K,
    PROG_MVQ_Q4K_Q6K, /* launches of Q4_K and Q6_K segments (Q4_K_M's Q|K|V) */
    PROG_MVQ_Q5K_Q6K, /* launches of Q5_K and Q6_K segments (Q5_K_M's Q|K|V) */
    PROG_MVQ_Q4K_W2,  /* the seven above with two passes before the PDL wait (+ PROG_MVQ_W2) */
    PROG_MVQ_Q5K_W2,
    PROG_MVQ_Q4_0_W2,
    PROG_MVQ_Q8_0_W2,
    PROG_MVQ_Q6K_W2,
    PROG_MVQ_Q4K_Q6K_W2,
    PROG_MVQ_Q5K_Q6K_W2,
    PROG_MVQ_Q4_0X2, /* Q4_0 / Q8_0 with two groups per task: down projection, output head */
    PROG_MVQ_Q8_0X2,
    PROG_MVH_F16, /* 16-bit float weights, f32 activations (k_llm_mvh.cu) */
    PROG_MVH_BF16,
    PROG_HEAD_NORM, /* Qwen3's RMSNorm of each Q / K head */
    PROG_ATTN_DEC_LONG,
    PROG_ARGMAX_ROWS,  /* a batch step's greedy picks (k_llm_sample.h) */
    PROG_ATTN_ROWS,    /* attention of tokens one at a time, a block per KV head (k_llm_attn_rows.cu) */
    PROG_ATTN_DEC_FAR, /* decode attention past K_LLM_AD_FAR_POS positions */
    PROG_COUNT
};
static const char *const prog_names[PROG_COUNT] = {"k_llm_embed",
                                                   "k_llm_norm",
                                                   "k_llm_matmul",
                                                   "k_llm_rope_kv",
                                                   "k_llm_attn",
                                                   "k_llm_act",
                                                   "k_llm_matvec_wide",
                                                   "k_llm_attn_decode",
                                                   "k_llm_matvec_q8",
                                                   "k_llm_attn_mma",
                                                   "k_llm_matvec_q8_q4k",
                                                   "k_llm_matvec_q8_q5k",
                                                   "k_llm_matvec_q8_q4_0",
                                                   "k_llm_matvec_q8_q8_0",
                                                   "k_llm_matvec_q8_q6k",
                                                   "k_llm_matvec_q8_q4k_q6k",
                                                   "k_llm_matvec_q8_q5k_q6k",
                                                   "k_llm_matvec_q8_q4k_w2",
                                                   "k_llm_matvec_q8_q5k_w2",
                                                   "k_llm_matvec_q8_q4_0_w2",
                                                   "k_llm_matvec_q8_q8_0_w2",
                                                   "k_llm_matvec_q8_q6k_w2",
                                                   "k_llm_matvec_q8_q4k_q6k_w2",
                                                   "k_llm_matvec_q8_q5k_q6k_w2",
                                                   "k_llm_matvec_q8_q4_0x2",
                                                   "k_llm_matvec_q8_q8_0x2",
                                                   "k_llm_matvec_h_f16",
                                                   "k_llm_matvec_h_bf16",
                                                   "k_llm_head_norm",
                                                   "k_llm_attn_decode_long",
                                                   "k_llm_sample_argmax_rows",
                                                   "k_llm_attn_rows",
                                                   "k_llm_attn_decode_far"};
/* the decode attention program of each k_llm_ad_kind (k_llm_attn_decode.h) */
static const int ad_kind_prog[K_LLM_AD_KINDS] = {PROG_ATTN_DEC, PROG_ATTN_DEC_LONG, PROG_ATTN_DEC_FAR};
/* The decode mat-vec is k_llm_matvec_q8 (int8 activations, dp4a) where every matrix of a
 * launch has a type it reads (repacked at load, k_llm_quant.h), else k_llm_matvec_wide (f32
 * activations, 2 KB stage per row: H100 tg128 Q6_K 631 tok/s vs 560 with k_llm_matvec's
 * 1 KB). llm_model_params.f32_decode keeps the f32 kernels for every type they read and the
 * file's layout. */

/* Per-kernel profile of one decode step (llm_model_profile_step): a timestamp after every
 * launch, each launch labelled by the code that records it. */
#define PROF_MAX 1024
struct prof {
    uint32_t n;                          /* launches recorded */
    uint32_t cap;                        /* signals made: at most cap launches */
    struct hcq_signal *ts[PROF_MAX + 1]; /* [0]: before the first launch */
    const char *label[PROF_MAX];
    uint64_t bytes[PROF_MAX];
};

/* Tensor-core prefill (k_llm_gemm.cu): per weight, dequantize into w16, cast the
 * activations into x16, then one k_llm_gemm launch. */
enum { PG_DEQUANT, PG_CAST, PG_GEMM, PG_COUNT };
struct prefill_gemm {
    uint32_t min_n; /* 0: off */
    struct hcq_program *prog[PG_COUNT];
    struct hcq_program *gemm_wg;     /* k_llm_gemm_wgmma_tma (sm_90) or NULL */
    uint32_t sm_count;               /* its persistent grid (one CTA per SM) and the choice */
    struct hcq_program *gemm_sk;     /* k_llm_gemm_sk (n <= 64) or NULL */
    struct hcq_program *gemm_sk_q8;  /* k_llm_gemm_sk_q8_0 (n <= 32, Q8_0R weights) or NULL */
    struct hcq_program *gemm_sk_q4k; /* k_llm_gemm_sk_q4_k (n <= 16, Q4_KR weights) or NULL */
    uint32_t sms;                    /* the device's SM count (its split: llm_gemm_sk_split) */
    struct hcq_buf *buf;             /* w16 | x16 | k_llm_gemm_sk's partial sums | its counters */
    uint64_t w16_va, x16_va, sk_part_va, sk_cnt_va;
    uint64_t w16_B, x16_B;
};

struct llm_model {
    struct llm_hparams hp;
    struct llm_gguf *gguf; /* owned when loaded by path */
    bool own_gguf;
    struct llm_tok *tok;
    struct hcq_device *dev;
    struct hcq_queue *q;
    struct hcq_signal *done; /* timeline: one value per submitted step */
    uint64_t tick;
    struct hcq_program *prog[PROG_COUNT];
    uint32_t n_ctx, n_batch;
    uint64_t weights_B;
    struct hcq_buf *wbuf;   /* all weights */
    struct hcq_buf *abuf;   /* activations */
    struct hcq_buf *f16buf; /* f16 copies of the matrices (llm_pg_cache_f16), or NULL */
    struct hcq_buf *kvbuf;  /* KV cache: [n_layer][2][n_ctx][kv_dim] f16 (K_LLM_KV_B) */
    struct hcq_buf *tokbuf; /* int32 [n_batch] */
    struct hcq_buf *logbuf; /* f32 [n_vocab], host-visible */
    struct hcq_buf *logdev; /* f32 [n_vocab] on the device: the decode output head writes here,
                             * then one copy to logbuf */
    struct dtensor gw[GW_COUNT];
    struct dtensor (*lw)[LW_COUNT]; /* [n_layer] */
    /* activation VAs ([n_batch] rows each) */
    uint64_t x_va, xn_va, qkv_va, att_va, fa_va, fb_va;
    uint32_t qkv_dim;       /* q_dim + 2 * kv_dim floats per row */
    struct prefill_gemm pg; /* tensor-core prefill matmuls (n >= pg.min_n) */
    uint32_t pg_min_step;   /* the step being recorded: pg.min_n, or 1 for a batch step */
    /* what pg.x16 holds when the next launch runs: the f16 copy of n rows of k floats (stride
     * apart) at va, written by the launch recorded last (a norm, or a cast that a second matmul
     * of the same input reuses); va 0: nothing usable. Every other launch of the model clears it. */
    struct {
        uint64_t va;
        uint32_t n, k, stride;
    } x16_of;
    struct hcq_graph *graph[K_LLM_AD_KINDS]; /* decode step, by its attention kernel (k_llm_ad_kind) */
    uint32_t var_tok, var_pos, var_tick;
    bool use_graph, graph_failed;
    bool decode_fused;        /* decode steps take record_decode_llama */
    bool attn_split;          /* ... with the split-K attention (k_llm_attn_decode) */
    struct hcq_buf *adbuf;    /* its partials [n_head][n_split][hd + 2] f32, counters (K_LLM_AD_SPLITS_MAX) */
    uint32_t mv_grid;         /* most CTAs of a decode mat-vec launch: one wave (mv_wave) */
    uint32_t mvq_grid;        /* ... of k_llm_matvec_q8 */
    uint32_t mvh_grid;        /* ... of k_llm_matvec_h_f16 (both 16-bit kernels: the same shape) */
    bool mv_f32;              /* llm_model_params.f32_decode: the f32 mat-vec wherever it reads the type */
    uint32_t ad_head_max;     /* decode attention: per-head CTAs up to this many positions */
    struct llm_mem_need need; /* device memory the model takes (llm_mem_need_check) */
    const char *tag;          /* label of the next launch (profile) */
    uint64_t tag_B;           /* bytes it moves, 0: unknown */
    struct prof *prof;        /* non-NULL while profiling a step */
    struct llm_smp *smp;      /* the device sampler (llm_sample_dev.c), NULL until set */
    struct hcq_graph *graph_s[K_LLM_AD_KINDS]; /* decode step + sampling, token from the device */
};

/* Another KV cache for the forward pass (a batch's, llm_batch.c): layer l's K rows at
 * va + 2 l layer_B, V rows layer_B after them, each slot slot_B bytes after the one before.
 * tok_va: int32 {pos, slot} per token of a batch step (0: one sequence in the slot at va, at
 * consecutive positions); logits_va: the logits of every token there, [n][n_vocab] f32 (0: the
 * last token's, into the model's logits); ids_va: with logits_va, each row's greedy pick there
 * (int32 [n], k_llm_sample_argmax_rows), or 0. */
struct llm_kv_view {
    uint64_t va, layer_B, slot_B;
    uint32_t n_ctx;
    uint64_t tok_va, logits_va, ids_va;
    uint32_t n_logits; /* logits (and picks) of the last n_logits rows only; 0: every row */
};

/* Patch slots of one recorded step (graph recording) or none (direct). */
struct step {
    bool graph;
    uint32_t attn_kind; /* graph mode: the decode attention kernel to record (k_llm_ad_kind) */
    bool sample;        /* the token from the device sampler's id word; sampling after the head */
    uint32_t var_tok, var_pos;
    const struct llm_kv_view *kv; /* NULL: the model's own cache */
    /* llm_model_step_run: more launches queued after the step's, in its submission (a batch's
     * device sampler); NULL: none */
    enum hcq_status (*after)(void *ctx);
    void *after_ctx;
};

/* One fused decode step (n = 1, m->decode_fused) of a sequence in another cache (a batch's slot:
 * kv without tok_va), logits in the model's logits buffer: replayed from gs[k_llm_ad_kind], the
 * graphs of that cache, recorded on first use (llm_model_run.c); direct launches where graphs fail. */
enum hcq_status llm_model_slot_step(struct llm_model *m, struct hcq_graph **gs, const struct llm_kv_view *kv,
                                    int32_t token, uint32_t pos);
/* Record l on m's queue; while m->prof is set, stamped and labelled m->tag (llm_model.c). */
enum hcq_status llm_launch_prog(struct llm_model *m, const struct hcq_launch *l);
/* Profiling a step (llm_profile.c): begin before recording it, end after it completed (rows NULL:
 * discard). */
enum hcq_status llm_prof_begin(struct llm_model *m, struct prof **pf_out);
enum hcq_status llm_prof_end(struct llm_model *m, struct prof *pf, struct llm_prof_row *rows,
                             uint32_t max_rows, uint32_t *n_rows, double *step_us);
/* llm_model_run.c: run one step of n <= n_batch tokens already in tokbuf (record, submit, wait);
 * the per-op path (s->kv set) for a batch. */
enum hcq_status llm_model_step_run(struct llm_model *m, uint32_t n, uint32_t pos, bool want_logits,
                                   const struct step *s);
/* llm_model.c: record the launches of one step of n tokens at pos on m's queue (s->graph: into
 * the graph being recorded, the token and position as its variables); want_logits: through the
 * output head (and the device sampler with s->sample). */
enum hcq_status llm_model_record_step(struct llm_model *m, uint32_t n, uint32_t pos, bool want_logits,
                                      const struct step *s);
/* llm_model.c: the decode attention kernel a one-token step at pos takes (k_llm_ad_kind; 0
 * without the split-K attention), and so the index of its decode graph. */
uint32_t llm_model_attn_kind(const struct llm_model *m, uint32_t pos);

/* llm_model.c: the decode mat-vec parameters of one launch: y = W x' over n_w tensors of row length k, x' =
 * RMSNorm(x)
 * * norm when norm is given, bias b (may be NULL), mode K_LLM_MV_*. */
void llm_mv_params(const struct llm_model *m, struct k_llm_matvec_params *p, const struct dtensor *const *w,
                   uint32_t n_w, uint64_t x_va, uint64_t y_va, const struct dtensor *norm,
                   const struct dtensor *b, uint32_t mode);

/* llm_prefill.c: the tensor-core prefill. takes: a matrix it reads (a type the dequantizer
 * knows, rows of k % 8 == 0); init: its programs and scratch (off when min_n is 0 or above
 * n_batch); matmul: the n_w matrices ws (rows of the same k) times n rows of x into y (the
 * matrices' rows are y's columns in order), + b, accumulated when acc; qkv_ok: whether Q|K|V
 * of a batch go through it as one GEMM. */
bool llm_pg_takes(const struct dtensor *w);
void llm_pg_free(struct prefill_gemm *pg);
enum hcq_status llm_pg_init(struct llm_model *m, uint32_t min_n);
enum hcq_status llm_matmul_prefill(struct llm_model *m, const struct dtensor *const *ws, uint32_t n_w,
                                   uint64_t x_va, uint32_t x_stride, uint64_t y_va, uint32_t y_stride,
                                   uint32_t n, const struct dtensor *b, bool acc);
/* Dequantize every layer matrix and the output head to f16 once, into m->f16buf (each layer's Q, K,
 * V one after the other), so tensor-core matmuls read them instead of dequantizing per call;
 * HCQ_ERR_NOMEM (nothing kept) when the device lacks the memory; a no-op without the tensor-core
 * path or when done before. */
enum hcq_status llm_pg_cache_f16(struct llm_model *m);
bool llm_qkv_prefill_ok(const struct llm_model *m, const struct dtensor *const *w3, uint32_t n,
                        uint32_t x_stride, uint32_t y_stride);
/* Whether llm_matmul_prefill takes the n_w matrices ws for n rows in one GEMM reading them where
 * they are (quantized rows or the f16 copies, one after the other): any number of rows, not
 * only what the f16 scratch holds. */
bool llm_matmul_prefill_in_place(const struct llm_model *m, const struct dtensor *const *ws, uint32_t n_w,
                                 uint32_t n);

/* llm_sample_dev.c: record the sampling launches on the logits at logits_va; the device
 * address of the chosen id (the next step's embedding reads it); the {id, status} the last
 * pick left (HCQ_ERR_FORMAT for a non-finite logit). */
struct llm_smp;
void llm_smp_free(struct llm_smp *s);
enum hcq_status llm_smp_record(struct llm_model *m, uint64_t logits_va);
uint64_t llm_smp_state_va(const struct llm_smp *s);
enum hcq_status llm_smp_set_id(struct llm_smp *s, int32_t id); /* the id word the next step embeds */
struct hcq_buf *llm_smp_out(const struct llm_smp *s);          /* host-visible {id, status} */
enum hcq_status llm_smp_result(struct llm_model *m, int32_t *id_out);
/* Shared by the model's sampler and a batch's (llm_batch.c): the kernels' parameters of sp over
 * n_vocab ids in n_slice slices (the buffer addresses left 0); tokens ids[0..n) added to the
 * window of a state image w (last_n, n_vocab) as the kernel adds them; a pick's {id, status} r
 * taken into *id_out, or the error naming who. */
struct k_llm_sample_params llm_smp_params(const struct llm_sampler_params *sp, uint32_t n_vocab,
                                          uint32_t n_slice);
void llm_smp_window_add(uint32_t *w, uint32_t last_n, uint32_t n_vocab, const int32_t *ids, uint32_t n);
enum hcq_status llm_smp_take(const uint32_t r[2], uint32_t n_vocab, const char *who, int32_t *id_out);

/* llm_mv_select.c: the decode mat-vec for n tensors w of rows of k (PROG_MATVEC_Q8, PROG_MVH_*,
 * PROG_MATVEC, or -1: none reads them); whether a program takes the q8 kernels' units, grid and
 * epilogues; the per-type q8 kernel of a launch; a tensor's bytes. */
int llm_mv_prog(const struct llm_model *m, const struct dtensor *const *w, uint32_t n, uint32_t k);
bool llm_mv_units(int prog);
int llm_mvq_typed_prog(const struct llm_model *m, const struct k_llm_matvec_params *p);
uint64_t llm_dt_bytes(const struct dtensor *w);

/* llm_upload.c */
enum hcq_status llm_check_state_size(const struct llm_model *m);
/* m->need from the file and m's hparams, n_ctx and n_batch (the prefill staging when
 * gemm_min_batch is nonzero and at most n_batch); then HCQ_ERR_NOMEM when the device's driver
 * reports less free memory than that (backends that cannot ask report 0: not checked). */
enum hcq_status llm_mem_need_check(struct llm_model *m, uint32_t gemm_min_batch);
enum hcq_status llm_upload_weights(struct llm_model *m, const struct llm_model_params *p);
/* after llm_mem_need_check: the KV cache is m->need.kv_B */
enum hcq_status llm_alloc_state(struct llm_model *m);

#endif /* LLM_MODEL_INT_H */
