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
#include "k_llm_decode.h"
#include "k_llm_matvec.h"

#include <stdbool.h>
#include <stdint.h>

/* A tensor on the device: its VA, type and shape (ne0 = row length). */
struct dtensor {
    uint64_t va; /* 0: absent */
    uint32_t type;
    uint32_t ne0, ne1;
};

#define PROG_MVQ_W2 7 /* PROG_MVQ_<t>_W2 - PROG_MVQ_<t> */
/* types (mvq_typed's bits) whose launches below K_LLM_MVQ_PAIR_ROWS rows take the _w2 kernels:
 * Q8_0 and Q4_0. H100 tg128 (s83, every type's Q|K|V, O and down on them): Q8_0 1557 vs 1549,
 * Q6_K 1795 vs 1819, Q4_K 1806-1811 vs 1832 - the launches themselves got shorter (Q8_0 Q|K|V
 * 4.66 -> 4.25 us, O 3.57 -> 3.27), the next ones longer (their CTAs start beside the _w2
 * kernel's larger register file: Q6_K gate|up 11.9 -> 12.4). Session 13 (s87, llama-quantize
 * files, alternating): Q4_0 1852-1873 vs 1835-1839 (+1-2%; its kernels have the fewest
 * registers, 76 / 91), Q5_K_M 1554-1559 vs 1594-1600 (-2.5%). Session 18 (s135, O as row pairs,
 * one binary, two alternating rounds): Q6_K 1818-1821 vs 1810-1812 (+0.5%), Q4_K_M 1931 vs
 * 2016-2019 (-4.3%), Q5_K_M 1829-1831 vs 1905-1906 (-4%): Q6_K joins. */
#define K_LLM_MVQ_W2_DEFAULT 0x1Cu
/* the two-groups-per-task kernels (k_llm_matvec_q8_q4_0x2 / _q8_0x2): bits 2, 3 (Q4_0, Q8_0) the
 * down projection and the output head, bits 8 + i gate|up, bits 16 + i Q|K|V and O (llm_model.c
 * mvq_typed_prog). H100 tg128, llama-quantize files, alternating: down and head Q8_0 +0.85%, Q4_0
 * +0.6% (s101); on top of that (s103) Q8_0 gate|up +0.8%, Q|K|V and O +0.35%, both +1.9%
 * (1565 vs 1535-1537); Q4_0 Q|K|V and O +1.6% (1953-1957 vs 1923), its gate|up lost in s98
 * (10.48 -> 11.08 us) - and won once O ran as row pairs (session 18, s134: Q4_0 2031 vs
 * 1985-1989, +2.2%; gate|up's CTAs now start beside O's). Default: every Q4_0 and Q8_0 launch. */
#define K_LLM_MVQ_X2_DEFAULT (0x0Cu | 0xC00u | 0xC0000u)
/* A decode mat-vec launch's kind, as the per-kind settings name them (K_LLM_MVQ_X2_DEFAULT's
 * bits, the NVHCQ_MVQ_CPS_* grids; llm_model.c mvq_kind_of): gate|up (SWIGLU), the FFN down
 * projection (k >= 4096), the output head (rows >= 65536), the rest (Q|K|V, O). */
enum mvq_kind { MVQ_GU, MVQ_DOWN, MVQ_HEAD, MVQ_SMALL };
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
    PROG_MATVEC_Q8L,
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
    PROG_ATTN_DEC_LONG,
    PROG_AO_Q4K, /* attention + O projection in one launch (k_llm_attn_o.cu), per O type as PROG_MVQ_Q4K.. */
    PROG_AO_Q5K,
    PROG_AO_Q4_0,
    PROG_AO_Q8_0,
    PROG_AO_Q6K,
    PROG_MVQ_Q4_0X2D, /* gate|up of Q4_0 / Q8_0 with units handed out at run time (NVHCQ_MVQ_DYN) */
    PROG_MVQ_Q8_0X2D,
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
                                                   "k_llm_attn_tile",
                                                   "k_llm_matvec_q8_long",
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
                                                   "k_llm_attn_decode_long",
                                                   "k_llm_attn_o_q4k",
                                                   "k_llm_attn_o_q5k",
                                                   "k_llm_attn_o_q4_0",
                                                   "k_llm_attn_o_q8_0",
                                                   "k_llm_attn_o_q6k",
                                                   "k_llm_matvec_q8_q4_0x2d",
                                                   "k_llm_matvec_q8_q8_0x2d"};
/* The decode mat-vec is k_llm_matvec_q8 (int8 activations, dp4a) where every matrix of a
 * launch has a type it reads (repacked at load, k_llm_quant.h), else k_llm_matvec_wide (f32
 * activations, 2 KB stage per row: H100 tg128 Q6_K 631 tok/s vs 560 with k_llm_matvec's
 * 1 KB, bench/notes-decode.md). For A/B runs: NVHCQ_MV=narrow picks k_llm_matvec,
 * NVHCQ_MV=f32 keeps the f32 kernels for every type they read, NVHCQ_REPACK=0 loads the
 * file's layout (then Q4_0/Q8_0/Q6_K take the f32 kernels). */

/* Per-kernel profile of one decode step (llm_model_profile_step): a timestamp after every
 * launch, each launch labelled by the code that records it. */
#define PROF_MAX 1024
struct prof {
    bool on;
    uint32_t n;                          /* launches recorded */
    struct hcq_signal *ts[PROF_MAX + 1]; /* [0]: before the first launch */
    const char *label[PROF_MAX];
    uint64_t bytes[PROF_MAX];
};

/* Per-CTA timeline of the decode mat-vec (NVHCQ_MVQ_TL=1, diagnosis only; k_llm_matvec_tl.cu
 * says why): the _tl kernels are loaded for PROG_MVQ_Q4_0X2 / Q8_0X2 / Q6K / Q6K_W2, and in a
 * profiled step each of their launches gets a slot of TL_CTA_MAX records of 16 u64 in buf
 * (pf.va[1]); llm_model_profile_step turns them into rows (llm_tl.c). */
#define TL_LAUNCH_MAX 160
#define TL_CTA_MAX 1024
#define TL_LABELS 8
struct mvq_tl {
    struct hcq_buf *buf;                     /* [TL_LAUNCH_MAX][TL_CTA_MAX][16] u64 (device; hcq_buf_read) */
    uint32_t n;                              /* launches given a slot in this step */
    uint32_t prof_i[TL_LAUNCH_MAX];          /* the launch's index in struct prof */
    uint32_t grid[TL_LAUNCH_MAX];            /* its CTAs */
    char name[TL_LABELS][LLM_TL_PHASES][64]; /* row names (llm_prof_row.kernel lives as long as the model) */
};

/* Tensor-core prefill (k_llm_gemm.cu): per weight, dequantize into w16, cast the
 * activations into x16, then one k_llm_gemm launch. */
enum { PG_DEQUANT, PG_CAST, PG_GEMM, PG_COUNT };
struct prefill_gemm {
    uint32_t min_n; /* 0: off */
    struct hcq_program *prog[PG_COUNT];
    struct hcq_program *gemm_wg; /* k_llm_gemm_wgmma (sm_90 unless NVHCQ_GEMM=mma) or NULL */
    uint32_t sm_count;           /* its persistent grid (one CTA per SM) and the choice */
    bool wg_always;              /* NVHCQ_GEMM=wgmma: every GEMM on gemm_wg (tests, A/B runs) */
    bool wg_tma;                 /* gemm_wg is k_llm_gemm_wgmma_tma (default; NVHCQ_LLM_GEMM_TMA=0: not) */
    struct hcq_buf *buf;         /* w16 | x16 */
    uint64_t w16_va, x16_va;
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
    struct hcq_buf *kvbuf;  /* KV cache: [n_layer][2][n_ctx][kv_dim] f32 */
    struct hcq_buf *tokbuf; /* int32 [n_batch] */
    struct hcq_buf *logbuf; /* f32 [n_vocab], host-visible */
    struct hcq_buf *logdev; /* f32 [n_vocab] on the device: the decode output head writes here,
                             * then one copy to logbuf (NULL: writes logbuf, NVHCQ_LOGITS=host) */
    struct dtensor gw[GW_COUNT];
    struct dtensor (*lw)[LW_COUNT]; /* [n_layer] */
    /* activation VAs ([n_batch] rows each) */
    uint64_t x_va, xn_va, qkv_va, att_va, fa_va, fb_va;
    uint32_t qkv_dim;             /* q_dim + 2 * kv_dim floats per row */
    struct prefill_gemm pg;       /* tensor-core prefill matmuls (n >= pg.min_n) */
    struct hcq_graph *graph;      /* decode step */
    struct hcq_graph *graph_long; /* ... past the attention's short-context path (k_llm_ad_long) */
    bool ad_long;                 /* k_llm_attn_decode_long there (NVHCQ_AD_LONG=0: not) */
    struct hcq_graph *graph_ao;   /* ... up to ao_max positions: attention + O as one launch */
    uint32_t ao_max;              /* positions of the fused attention + O (0: never; NVHCQ_AO_MAX) */
    int ao_prog;                  /* its PROG_AO_* (every layer's O of that type), or -1 */
    bool ao_det;                  /* its partial sums added in a fixed order (NVHCQ_AO_DET=0: RED) */
    struct hcq_buf *aobuf;        /* its partials [n_head_kv][n_embd] f32, counters [n_embd / 128] */
    uint32_t var_tok, var_pos, var_tick;
    bool use_graph, graph_failed;
    bool decode_fused;                 /* decode steps take record_decode_llama */
    bool attn_split;                   /* ... with the split-K attention (k_llm_attn_decode) */
    struct hcq_buf *adbuf;             /* its partials [n_head][K_LLM_AD_SPLITS][hd + 2] f32, counters */
    uint32_t mv_grid;                  /* most CTAs of a decode mat-vec launch: one wave (mv_wave) */
    uint32_t mvq_grid;                 /* ... of k_llm_matvec_q8 */
    uint32_t mvq_grid_kind[MVQ_SMALL]; /* the same per launch kind (A/B: NVHCQ_MVQ_CPS_GU / _DOWN / _HEAD =
                                        * CTAs per SM; 0: mvq_grid) */
    uint32_t mvql_grid;                /* ... of k_llm_matvec_q8_long */
    bool embed_split; /* k_llm_embed over K_LLM_EMBED_CTAS(d) CTAs (NVHCQ_EMBED_SPLIT=0: one) */
    bool o_pairs; /* the O projection as row pairs (default; NVHCQ_O_PAIRS=0: one row per unit; k_llm_mvq_rpu)
                   */
    bool mvq_long;      /* long one-row launches take k_llm_matvec_q8_long (NVHCQ_MVQ_LONG=1; off: slower) */
    uint32_t mvq_typed; /* bit i: launches of one type take PROG_MVQ_Q4K + i (mvq_typed_prog) */
    uint32_t mvq_w2;    /* bit i: launches below K_LLM_MVQ_PAIR_ROWS rows on PROG_MVQ_Q4K + i + PROG_MVQ_W2 */
    uint32_t mvq_x2;    /* launches on PROG_MVQ_Q4_0X2 / Q8_0X2 (K_LLM_MVQ_X2_DEFAULT says which) */
    uint32_t mvq_dyn; /* bit (enum mvq_kind): those launches on PROG_MVQ_Q4_0X2D / Q8_0X2D (NVHCQ_MVQ_DYN) */
    struct hcq_buf *dynbuf; /* ... its unit counters, u32 [K_LLM_MVQ_DYN_POOLS][2], zero between launches */
    bool repack;            /* matrices take the repacked decode layout (k_llm_quant.h) */
    bool mv_f32;            /* NVHCQ_MV=f32|narrow: the f32 mat-vec wherever it reads the type */
    uint32_t ad_head_max;   /* decode attention: per-head CTAs up to this many positions */
    bool qkv_gemm;          /* prefill: Q|K|V as one GEMM (NVHCQ_QKV_GEMM=0: three) */
    bool pdl;               /* decode: HCQ_LAUNCH_DEP_WAIT on the kernels that wait (NVHCQ_PDL=0: off) */
    bool rope_fused;   /* decode: RoPE + KV store in the Q|K|V mat-vec (NVHCQ_ROPE_FUSED=0: own launch) */
    bool attn_tile;    /* prefill attention: k_llm_attn_tile (NVHCQ_ATTN=naive: k_llm_attn) */
    bool attn_mma;     /* ... its TF32 tensor-core form k_llm_attn_mma (NVHCQ_ATTN=tile: not) */
    bool l2pf;         /* decode launches carry L2 prefetch hints (NVHCQ_L2PF=1; off: slower) */
    struct mvq_tl *tl; /* per-CTA timeline of a profiled step (NVHCQ_MVQ_TL=1), or NULL */
    const char *tag;   /* label of the next launch (profile) */
    uint64_t tag_B;    /* bytes it moves, 0: unknown */
    struct prof *prof; /* non-NULL while profiling a step */
    /* persistent decode (llm_persist.c): every layer of a step in one launch */
    bool persist;        /* decode steps launch k_llm_decode_layers */
    bool persist_failed; /* it abandoned a step once (barrier timeout): off for good */
    uint32_t pgrid;      /* its grid: one wave */
    struct hcq_program *pprog;
    struct hcq_buf *ptab;   /* struct k_llm_matvec_params [n_layer][K_LLM_DL_PHASES] */
    struct hcq_buf *pbar;   /* u32 [4] barrier words (device) */
    struct hcq_buf *perr;   /* u32 error word (host-visible) */
    struct hcq_buf *ptrace; /* u64 phase clock of a profiled step (host-visible) */
};

/* llm_model.c: the decode mat-vec parameters of one launch (matvec() and the persistent
 * kernel's table fill them alike): y = W x' over n_w tensors of row length k, x' = RMSNorm(x)
 * * norm when norm is given, bias b (may be NULL), mode K_LLM_MV_*. */
void llm_mv_params(const struct llm_model *m, struct k_llm_matvec_params *p, const struct dtensor *const *w,
                   uint32_t n_w, uint64_t x_va, uint64_t y_va, const struct dtensor *norm,
                   const struct dtensor *b, uint32_t mode);

/* llm_persist.c */
enum hcq_status llm_persist_init(struct llm_model *m, uint32_t sm_count);
void llm_persist_params(const struct llm_model *m, uint32_t pos, struct k_llm_decode_params *dp);
/* After a step: true when the persistent kernel abandoned it (the path is then off, the
 * graph dropped: run the step again). */
bool llm_persist_check(struct llm_model *m);
void llm_persist_free(struct llm_model *m);
void llm_persist_prof_rows(const struct llm_model *m, struct llm_prof_row *rows, uint32_t r,
                           uint32_t max_rows, uint32_t *n_rows);

/* llm_tl.c (NVHCQ_MVQ_TL=1): init / free the timeline state; whether a program has a _tl build;
 * at a profiled step's start zero the records; give a launch a slot (sets p->pf.va[1]; no-op
 * outside a profiled step); add the rows after the step. */
enum hcq_status llm_tl_init(struct llm_model *m);
void llm_tl_free(struct llm_model *m);
bool llm_tl_prog(int prog);
enum hcq_status llm_tl_begin(struct llm_model *m);
void llm_tl_slot(struct llm_model *m, int prog, uint32_t grid, struct k_llm_matvec_params *p);
void llm_tl_rows(struct llm_model *m, const struct prof *pf, struct llm_prof_row *rows, uint32_t max_rows,
                 uint32_t *n_rows);

/* llm_upload.c */
enum hcq_status llm_check_state_size(const struct llm_model *m);
enum hcq_status llm_upload_weights(struct llm_model *m, const struct llm_model_params *p);
enum hcq_status llm_alloc_state(struct llm_model *m);

#endif /* LLM_MODEL_INT_H */
