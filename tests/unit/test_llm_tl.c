/* SPDX-License-Identifier: MIT */
/*
 * test_llm_tl.c - the per-CTA timeline's arithmetic (src/llm/llm_tl.c llm_tl_launch): records
 * laid out as k_llm_mvq.cuh mvq_tl writes them, with times chosen so every row has one right
 * answer; CTAs that wrote nothing are skipped; no record at all gives no rows. The GPU side (the
 * marks themselves) runs in `llm-bench --profile` under NVHCQ_MVQ_TL=1 (bench/final/s139.sh).
 */
#include "harness.h"
#include "llm_model_priv.h"

#include <stdint.h>
#include <string.h>

#define W 16

/* CTA b's record: entry, wait, prologue (global ns), warp ends, prologue clocks */
static void
put(uint64_t *rec, uint32_t b, uint64_t entry, uint64_t wait, uint64_t ends_base, uint64_t clk_wait,
    uint64_t clk_pro)
{
    uint64_t *r = rec + (uint64_t)b * W;
    memset(r, 0, W * 8);
    r[0] = entry;
    r[1] = wait;
    r[2] = wait + 1000;
    r[3] = b;
    for (int w = 0; w < 8; w++)
        r[4 + w] = ends_base + 100 * (uint64_t)w;
    r[12] = 1;
    r[13] = clk_wait;
    r[14] = clk_pro;
    r[15] = 2;
}

TEST(tl_launch_rows)
{
    uint64_t rec[4 * W];
    int64_t scratch[10 * 4], out[LLM_TL_PHASES], step = 0;
    const int64_t t0 = 1000000, done = 1020000;
    /* entries t0 - 5000, t0 - 3000, t0 - 1000; CTA 3 never ran */
    put(rec, 0, t0 - 5000, t0 - 600, t0 + 5000, 100, 100 + 2000);
    put(rec, 1, t0 - 3000, t0 + 2000, t0 + 9000, 100, 100 + 4000);
    put(rec, 2, t0 - 1000, t0 + 500, t0 + 12000, 100, 100 + 3000);
    memset(rec + 3 * W, 0, W * 8);
    CHECK(llm_tl_launch(rec, 4, t0, done, 2.0, scratch, out, &step));
    CHECKF(out[0] == -5000, "out[0] = %lld", (long long)(out[0])); /* entry first */
    CHECKF(out[1] == -3000, "out[1] = %lld", (long long)(out[1])); /* entry median */
    CHECKF(out[2] == -1000, "out[2] = %lld", (long long)(out[2])); /* entry last */
    CHECKF(out[3] == -600, "out[3] = %lld", (long long)(out[3]));  /* wait opens first */
    CHECKF(out[4] == 2000, "out[4] = %lld", (long long)(out[4]));  /* wait opens last */
    CHECKF(out[5] == 1500, "out[5] = %lld",
           (long long)(out[5])); /* prologue: clocks 2000 / 4000 / 3000 at 2 per ns, median 3000 -> 1500 */
    CHECKF(out[6] == 5000, "out[6] = %lld", (long long)(out[6])); /* warp end first */
    /* 24 warp ends: 5000..5700, 9000..9700, 12000..12700; sorted, index 12 = 9400 */
    CHECKF(out[7] == 9400, "out[7] = %lld", (long long)(out[7]));
    CHECKF(out[8] == 12700, "out[8] = %lld", (long long)(out[8])); /* warp end last */
    CHECKF(out[9] == 20000 - 12700, "out[9] = %lld",
           (long long)(out[9]));                            /* completion after the last warp */
    CHECKF(step == 2000, "step = %lld", (long long)(step)); /* entries 2000 apart */

    /* no CTA wrote a record: no rows */
    memset(rec, 0, sizeof rec);
    step = 0;
    CHECK(!llm_tl_launch(rec, 4, t0, done, 2.0, scratch, out, &step));
    CHECKF(step == 0, "step = %lld", (long long)(step));
done:;
}

int
main(int argc, char **argv)
{
    static const struct th_case cases[] = {TH_CASE(tl_launch_rows)};
    return th_run("llm_tl", NULL, cases, TH_COUNT(cases), argc - 1, argv + 1) ? 1 : 0;
}
