// SPDX-License-Identifier: MIT
/*
 * k_llm_attn_decode.cu - split-K ("flash decoding") attention for one token over the f16
 * KV cache: the positions are spread over n_split CTAs per KV head so a long context
 * uses the whole GPU (the general k_llm_attn runs one CTA per head and walks the context
 * serially). Layout and protocol: k_llm_attn_decode.h. CPU twin:
 * src/ops/ops_llm_attn_decode.c; tests: tests/unit/test_llm_attn_decode.c (vs a double
 * reference at several positions) and test_llm_e2e.c (end to end on every device).
 *
 * In a CTA, warp w takes positions t0 + w, t0 + w + 8, ... (4 rows' loads at a time); lane i holds E = hd / 32
 * consecutive elements of q (pre-scaled), K and V rows; each query head sharing the KV head
 * keeps an online softmax (running max m, sum l, output acc). The 8 warps merge through
 * shared memory, the CTA writes (m, l, acc[hd]) per head; the last CTA of the group
 * (an acq_rel counter, k_cta_arrive_last) merges the n_valid partials with the same rule:
 * M = max m_s, out = sum_s acc_s e^(m_s - M) / sum_s l_s e^(m_s - M).
 * Up to head_max positions (the engine: 640) one CTA per query head does the whole softmax
 * in three phases instead (attn_decode_head2 in the .cuh: scores, softmax, weighted V sum).
 */
#include "k_device.h"
#include "k_llm_attn_decode.cuh"
#include "k_llm_pf.cuh"

extern "C" __global__ void __launch_bounds__(K_LLM_AD_THREADS, 2)
k_llm_attn_decode(const struct k_llm_attn_decode_params p)
{
    k_llm_pf_issue(p.pf);
    /* HCQ_LAUNCH_DEP_WAIT: q and the KV cache come from the launch before this one (the
     * wait's latch acquire invalidates L1, see k_llm_mvq.cuh). attn_decode waits (EARLY): the
     * short-context path requests the cache rows of earlier steps before the wait. */
    if (p.hd == 64)
        attn_decode<2, true>(p, blockIdx.x, blockIdx.y);
    else if (p.hd == 128)
        attn_decode<4, true>(p, blockIdx.x, blockIdx.y);
    else
        k_dep_launch(), k_dep_wait();
}

/* Long contexts: KV head g over range s in tiles streamed through a cp.async ring
 * (attn_decode_tiles in the .cuh). A kernel of its own, which the engine records in a decode
 * graph of its own for positions past the short-context path (k_llm_ad_kind 1): inside
 * k_llm_attn_decode the extra code cost tg128 at depth 0 ~1% on H100 (its registers and
 * shared memory are the short path's occupancy). It waits itself (the ranges that end before
 * pos request their first tiles before the PDL wait). */
__device__ __forceinline__ void
ad_long_entry(const struct k_llm_attn_decode_params &p)
{
    k_llm_pf_issue(p.pf);
    if (p.hd == 64)
        attn_decode_long<64>(p, blockIdx.x, blockIdx.y);
    else if (p.hd == 128)
        attn_decode_long<128>(p, blockIdx.x, blockIdx.y);
    else
        k_dep_launch(), k_dep_wait();
}

extern "C" __global__ void __launch_bounds__(K_LLM_AD_THREADS, 2)
k_llm_attn_decode_long(const struct k_llm_attn_decode_params p)
{
    ad_long_entry(p);
}

/* The same past K_LLM_AD_FAR_POS positions, 3 CTAs per SM (K_LLM_AD_SPLITS_FAR ranges; the
 * header says why a kernel of its own). */
extern "C" __global__ void __launch_bounds__(K_LLM_AD_THREADS, 3)
k_llm_attn_decode_far(const struct k_llm_attn_decode_params p)
{
    ad_long_entry(p);
}
