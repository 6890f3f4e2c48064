/* SPDX-License-Identifier: MIT */
/*
 * ops_launch.c - the launchers of ops.h: argument checks, geometry, one
 * hcq_queue_launch each. Layer: ops.
 */
#include "ops.h"
#include "ops_tmap.h"

#include "util_log.h"
#include "k_params.h"

#include <string.h>

void
ops_geometry_flat(uint64_t n, uint32_t grid_out[3], uint32_t block_out[3])
{
    uint64_t blocks = (n + OPS_BLOCK - 1) / OPS_BLOCK;
    grid_out[0] = blocks == 0 ? 1 : blocks > OPS_GRID_MAX ? OPS_GRID_MAX : (uint32_t)blocks;
    grid_out[1] = grid_out[2] = 1;
    block_out[0] = OPS_BLOCK;
    block_out[1] = block_out[2] = 1;
}

/* Which of `names` (NULL-terminated) prog is: its index, or -1 with an error recorded. */
static int
ops_launch_which(const char *func, struct hcq_program *prog, const char *const *names)
{
    struct hcq_program_info info;
    if (!prog || hcq_program_info(prog, &info) != HCQ_OK) {
        hcq_err(HCQ_ERR_INVALID, "%s: no program (expected %s)", func, names[0]);
        return -1;
    }
    for (int i = 0; names[i]; i++)
        if (!strcmp(info.name, names[i]))
            return i;
    hcq_err(HCQ_ERR_INVALID, "%s: program is %s (expected %s%s)", func, info.name, names[0],
            names[1] ? " or a sibling" : "");
    return -1;
}

/* count elements of elem_B bytes at offset_B fit in buf. */
static enum hcq_status
ops_launch_fits(const char *func, const char *what, const struct hcq_buf *buf, uint64_t offset_B,
                uint64_t count, uint64_t elem_B)
{
    if (!buf)
        return hcq_err(HCQ_ERR_INVALID, "%s: %s: no buffer", func, what);
    uint64_t size_B = hcq_buf_size(buf);
    if (count > UINT64_MAX / elem_B || offset_B > size_B || count * elem_B > size_B - offset_B)
        return hcq_err(HCQ_ERR_INVALID, "%s: %s: %llu x %llu B at +%llu does not fit the buffer (%llu B)",
                       func, what, (unsigned long long)count, (unsigned long long)elem_B,
                       (unsigned long long)offset_B, (unsigned long long)size_B);
    return HCQ_OK;
}

/* Record a flat launch over n items. */
static enum hcq_status
ops_launch_flat(struct hcq_queue *q, struct hcq_program *prog, uint64_t n, const void *args, uint32_t args_B)
{
    uint32_t grid[3], block[3];
    ops_geometry_flat(n, grid, block);
    return hcq_queue_launch(q, prog, grid, block, args, args_B);
}

enum hcq_status
ops_launch_fill_u32(struct hcq_queue *q, struct hcq_program *prog, struct hcq_buf *dst, uint64_t n,
                    uint32_t value)
{
    static const char *const names[] = {"k_fill_u32", NULL};
    if (ops_launch_which(__func__, prog, names) < 0)
        return HCQ_ERR_INVALID;
    enum hcq_status st = ops_launch_fits(__func__, "dst", dst, 0, n, 4);
    if (st != HCQ_OK || n == 0)
        return st;
    struct k_fill_u32_params p = {.dst_va = hcq_buf_va(dst), .n = n, .value = value};
    return ops_launch_flat(q, prog, n, &p, sizeof p);
}

enum hcq_status
ops_launch_fill_f32(struct hcq_queue *q, struct hcq_program *prog, struct hcq_buf *dst, uint64_t n,
                    float value)
{
    static const char *const names[] = {"k_fill_f32", NULL};
    if (ops_launch_which(__func__, prog, names) < 0)
        return HCQ_ERR_INVALID;
    enum hcq_status st = ops_launch_fits(__func__, "dst", dst, 0, n, 4);
    if (st != HCQ_OK || n == 0)
        return st;
    struct k_fill_f32_params p = {.dst_va = hcq_buf_va(dst), .n = n, .value = value};
    return ops_launch_flat(q, prog, n, &p, sizeof p);
}

enum hcq_status
ops_launch_copy_bytes(struct hcq_queue *q, struct hcq_program *prog, struct hcq_buf *dst, uint64_t dst_off_B,
                      struct hcq_buf *src, uint64_t src_off_B, uint64_t size_B)
{
    static const char *const names[] = {"k_copy_bytes", NULL};
    if (ops_launch_which(__func__, prog, names) < 0)
        return HCQ_ERR_INVALID;
    enum hcq_status st = ops_launch_fits(__func__, "dst", dst, dst_off_B, size_B, 1);
    if (st == HCQ_OK)
        st = ops_launch_fits(__func__, "src", src, src_off_B, size_B, 1);
    if (st != HCQ_OK || size_B == 0)
        return st;
    if (dst == src && dst_off_B < src_off_B + size_B && src_off_B < dst_off_B + size_B)
        return hcq_err(HCQ_ERR_INVALID, "%s: ranges overlap: dst +%llu, src +%llu, %llu B", __func__,
                       (unsigned long long)dst_off_B, (unsigned long long)src_off_B,
                       (unsigned long long)size_B);
    struct k_copy_bytes_params p = {
        .dst_va = hcq_buf_va(dst) + dst_off_B,
        .src_va = hcq_buf_va(src) + src_off_B,
        .size_B = size_B,
    };
    /* one thread per 16-byte vector when aligned (k_memory.cu), else per byte */
    uint64_t items = ((p.dst_va | p.src_va) & 15) == 0 ? (size_B + 15) / 16 : size_B;
    return ops_launch_flat(q, prog, items, &p, sizeof p);
}

enum hcq_status
ops_launch_binary_f32(struct hcq_queue *q, struct hcq_program *prog, struct hcq_buf *c, struct hcq_buf *a,
                      struct hcq_buf *b, uint64_t n)
{
    static const char *const names[] = {"k_add_f32", "k_mul_f32", NULL};
    if (ops_launch_which(__func__, prog, names) < 0)
        return HCQ_ERR_INVALID;
    enum hcq_status st = ops_launch_fits(__func__, "c", c, 0, n, 4);
    if (st == HCQ_OK)
        st = ops_launch_fits(__func__, "a", a, 0, n, 4);
    if (st == HCQ_OK)
        st = ops_launch_fits(__func__, "b", b, 0, n, 4);
    if (st != HCQ_OK || n == 0)
        return st;
    /* k_add_f32_params and k_mul_f32_params have the same layout (k_params.h) */
    struct k_add_f32_params p = {.c_va = hcq_buf_va(c), .a_va = hcq_buf_va(a), .b_va = hcq_buf_va(b), .n = n};
    return ops_launch_flat(q, prog, n, &p, sizeof p);
}
_Static_assert(sizeof(struct k_add_f32_params) == sizeof(struct k_mul_f32_params), "binary layouts differ");

enum hcq_status
ops_launch_unary(struct hcq_queue *q, struct hcq_program *prog, struct hcq_buf *y, struct hcq_buf *x,
                 uint64_t n)
{
    static const char *const names[] = {
        "k_exp_f32",       "k_relu_f32", "k_cast_f32_f16", "k_cast_f16_f32", "k_cast_f32_bf16",
        "k_cast_bf16_f32", NULL};
    static const uint8_t y_B[] = {4, 4, 2, 4, 2, 4}, x_B[] = {4, 4, 4, 2, 4, 2};
    int which = ops_launch_which(__func__, prog, names);
    if (which < 0)
        return HCQ_ERR_INVALID;
    enum hcq_status st = ops_launch_fits(__func__, "y", y, 0, n, y_B[which]);
    if (st == HCQ_OK)
        st = ops_launch_fits(__func__, "x", x, 0, n, x_B[which]);
    if (st != HCQ_OK || n == 0)
        return st;
    /* every unary kernel takes { y_va, x_va, n } (k_params.h; checked below) */
    struct k_exp_f32_params p = {.y_va = hcq_buf_va(y), .x_va = hcq_buf_va(x), .n = n};
    return ops_launch_flat(q, prog, n, &p, sizeof p);
}
_Static_assert(sizeof(struct k_exp_f32_params) == sizeof(struct k_relu_f32_params) &&
                   sizeof(struct k_exp_f32_params) == sizeof(struct k_cast_f32_f16_params) &&
                   sizeof(struct k_exp_f32_params) == sizeof(struct k_cast_f16_f32_params) &&
                   sizeof(struct k_exp_f32_params) == sizeof(struct k_cast_f32_bf16_params) &&
                   sizeof(struct k_exp_f32_params) == sizeof(struct k_cast_bf16_f32_params),
               "unary layouts differ");

enum hcq_status
ops_launch_sum_f32(struct hcq_queue *q, struct hcq_program *prog, struct hcq_buf *out, struct hcq_buf *x,
                   uint32_t rows, uint32_t cols, int axis)
{
    static const char *const names[] = {"k_sum_cols_f32", "k_sum_rows_f32", NULL};
    int which = ops_launch_which(__func__, prog, names);
    if (which < 0)
        return HCQ_ERR_INVALID;
    if (axis != which)
        return hcq_err(HCQ_ERR_INVALID, "%s: axis %d with %s (expected axis %d)", __func__, axis,
                       names[which], which);
    uint64_t out_n = axis ? rows : cols;
    enum hcq_status st = ops_launch_fits(__func__, "out", out, 0, out_n, 4);
    if (st == HCQ_OK)
        st = ops_launch_fits(__func__, "x", x, 0, (uint64_t)rows * cols, 4);
    if (st != HCQ_OK || out_n == 0)
        return st;
    struct k_sum_rows_f32_params p = {
        .out_va = hcq_buf_va(out), .x_va = hcq_buf_va(x), .rows = rows, .cols = cols};
    uint32_t grid[3] = {1, 1, 1}, block[3] = {OPS_BLOCK, 1, 1};
    if (axis == 1) /* one block per row */
        grid[0] = rows > OPS_GRID_MAX ? OPS_GRID_MAX : rows;
    else /* one thread per column */
        ops_geometry_flat(cols, grid, block);
    return hcq_queue_launch(q, prog, grid, block, &p, sizeof p);
}
_Static_assert(sizeof(struct k_sum_rows_f32_params) == sizeof(struct k_sum_cols_f32_params),
               "sum layouts differ");

enum hcq_status
ops_launch_matmul(struct hcq_queue *q, struct hcq_program *prog, struct hcq_buf *c, struct hcq_buf *a,
                  struct hcq_buf *b, uint32_t m, uint32_t n, uint32_t k)
{
    static const char *const names[] = {"k_matmul_f32", "k_matmul_f16", NULL};
    int which = ops_launch_which(__func__, prog, names);
    if (which < 0)
        return HCQ_ERR_INVALID;
    uint64_t in_B = which == 0 ? 4 : 2;
    enum hcq_status st = ops_launch_fits(__func__, "c", c, 0, (uint64_t)m * n, 4);
    if (st == HCQ_OK)
        st = ops_launch_fits(__func__, "a", a, 0, (uint64_t)m * k, in_B);
    if (st == HCQ_OK)
        st = ops_launch_fits(__func__, "b", b, 0, (uint64_t)k * n, in_B);
    if (st != HCQ_OK || (uint64_t)m * n == 0)
        return st;
    uint64_t tiles_m = (m + (uint64_t)OPS_MM_TILE - 1) / OPS_MM_TILE;
    uint64_t tiles_n = (n + (uint64_t)OPS_MM_TILE - 1) / OPS_MM_TILE;
    if (tiles_m * tiles_n >= (1ull << 32))
        return hcq_err(HCQ_ERR_INVALID, "%s: %llu x %llu tiles of C (expected < 2^32)", __func__,
                       (unsigned long long)tiles_m, (unsigned long long)tiles_n);
    struct k_matmul_f32_params p = {
        .c_va = hcq_buf_va(c),
        .a_va = hcq_buf_va(a),
        .b_va = hcq_buf_va(b),
        .m = m,
        .n = n,
        .k = k,
    };
    uint32_t grid[3] = {tiles_n > OPS_GRID_MAX ? OPS_GRID_MAX : (uint32_t)tiles_n,
                        tiles_m > OPS_GRID_MAX ? OPS_GRID_MAX : (uint32_t)tiles_m, 1};
    uint32_t block[3] = {OPS_MM_TILE, OPS_MM_TILE, 1};
    return hcq_queue_launch(q, prog, grid, block, &p, sizeof p);
}
_Static_assert(sizeof(struct k_matmul_f32_params) == sizeof(struct k_matmul_f16_params),
               "matmul layouts differ");

enum hcq_status
ops_gemm_tma_params(struct k_gemm_tma_params *tp, const struct k_gemm_params *p, bool bf16, bool nt,
                    uint32_t bn)
{
    if (bn != K_GEMM_WG_BN && bn != K_GEMM_WG128_BN)
        return hcq_err(HCQ_ERR_INVALID, "%s: tile width %u (expected %u or %u)", __func__, bn, K_GEMM_WG_BN,
                       K_GEMM_WG128_BN);
    /* A [m][k] as (k, m) in boxes of 64 x 128; B [n][k] as (k, n) in boxes of 64 x bn, or
     * [k][n] as (n, k) in 64 x 64 panels; 128-byte swizzle (k_params.h) */
    const enum k_tmap_type ty = bf16 ? K_TMAP_BF16 : K_TMAP_F16;
    memset(tp, 0, sizeof *tp);
    tp->g = *p;
    const struct k_tmap_desc ta = k_tmap_rows16(ty, p->a_va, p->k, p->m, K_GEMM_WG_BM);
    const struct k_tmap_desc tb =
        nt ? k_tmap_rows16(ty, p->b_va, p->k, p->n, bn) : k_tmap_rows16(ty, p->b_va, p->n, p->k, 64);
    enum hcq_status st = ops_tmap_encode(&ta, tp->tmap_a);
    return st == HCQ_OK ? ops_tmap_encode(&tb, tp->tmap_b) : st;
}

enum hcq_status
ops_launch_gemm(struct hcq_queue *q, struct hcq_program *prog, struct hcq_buf *c, struct hcq_buf *a,
                struct hcq_buf *b, uint32_t m, uint32_t n, uint32_t k)
{
    static const char *const names[] = {"k_gemm_f16",
                                        "k_gemm_bf16",
                                        "k_gemm_f16_nt",
                                        "k_gemm_bf16_nt",
                                        "k_gemm_wgmma_f16",
                                        "k_gemm_wgmma_bf16",
                                        "k_gemm_wgmma_f16_nt",
                                        "k_gemm_wgmma_bf16_nt",
                                        "k_gemm_wgmma_f16_n128",
                                        "k_gemm_wgmma_bf16_n128",
                                        "k_gemm_wgmma_f16_nt_n128",
                                        "k_gemm_wgmma_bf16_nt_n128",
                                        "k_gemm_wgmma_f16_tma",
                                        "k_gemm_wgmma_bf16_tma",
                                        "k_gemm_wgmma_f16_nt_tma",
                                        "k_gemm_wgmma_bf16_nt_tma",
                                        "k_gemm_wgmma_f16_tma_n128",
                                        "k_gemm_wgmma_bf16_tma_n128",
                                        "k_gemm_wgmma_f16_nt_tma_n128",
                                        "k_gemm_wgmma_bf16_nt_tma_n128",
                                        NULL};
    int which = ops_launch_which(__func__, prog, names);
    if (which < 0)
        return HCQ_ERR_INVALID;
    bool nt = (which & 3) >= 2, wg = which >= 4, tma = which >= 12;
    /* mma.sync: 128x128 tiles, 128 threads; wgmma: 128x256 tiles (_n128: 128x128), 384 threads
     * (k_params.h) */
    const bool narrow = (which >= 8 && which < 12) || which >= 16; /* the _n128 builds */
    uint64_t tile_m = wg ? K_GEMM_WG_BM : OPS_GEMM_TILE, tile_n = narrow ? K_GEMM_WG128_BN
                                                                  : wg   ? K_GEMM_WG_BN
                                                                         : OPS_GEMM_TILE;
    if (k % 8 || (!nt && n % 8))
        return hcq_err(HCQ_ERR_INVALID, "%s: k %u%s (expected multiples of 8: 16-byte row chunks)", __func__,
                       k, nt ? "" : " or n");
    enum hcq_status st = ops_launch_fits(__func__, "c", c, 0, (uint64_t)m * n, 4);
    if (st == HCQ_OK)
        st = ops_launch_fits(__func__, "a", a, 0, (uint64_t)m * k, 2);
    if (st == HCQ_OK)
        st = ops_launch_fits(__func__, "b", b, 0, (uint64_t)k * n, 2);
    if (st != HCQ_OK || (uint64_t)m * n == 0)
        return st;
    /* cp.async reads 16-byte chunks and C is stored in 8-byte pairs */
    if ((hcq_buf_va(a) | hcq_buf_va(b)) % 16 || hcq_buf_va(c) % 8)
        return hcq_err(HCQ_ERR_INVALID, "%s: a, b must be 16-byte and c 8-byte aligned", __func__);
    uint64_t tiles = ((m + tile_m - 1) / tile_m) * ((n + tile_n - 1) / tile_n);
    if (tiles >= (1ull << 32))
        return hcq_err(HCQ_ERR_INVALID, "%s: %llu tiles of C (expected < 2^32)", __func__,
                       (unsigned long long)tiles);
    struct k_gemm_params p = {
        .c_va = hcq_buf_va(c),
        .a_va = hcq_buf_va(a),
        .b_va = hcq_buf_va(b),
        .m = m,
        .n = n,
        .k = k,
    };
    /* one block per tile up to the cap; the kernel grid-strides over the rest. wgmma: one
     * CTA fits an SM (its ring fills shared memory), so a grid of one CTA per SM walks the
     * tiles persistently: the producer loads the next tile while the consumers store. */
    uint64_t cap = OPS_GRID_MAX;
    struct hcq_program_info info;
    if (wg && hcq_program_info(prog, &info) == HCQ_OK && info.sm_count)
        cap = info.sm_count;
    uint32_t grid[3] = {tiles > cap ? (uint32_t)cap : (uint32_t)tiles, 1, 1};
    uint32_t block[3] = {wg ? K_GEMM_WG_THREADS : OPS_GEMM_THREADS, 1, 1};
    if (!tma)
        return hcq_queue_launch(q, prog, grid, block, &p, sizeof p);
    struct k_gemm_tma_params tp;
    if ((st = ops_gemm_tma_params(&tp, &p, which & 1, nt, (uint32_t)tile_n)) != HCQ_OK)
        return st;
    return hcq_queue_launch(q, prog, grid, block, &tp, sizeof tp);
}

enum hcq_status
ops_launch_axpb_u64(struct hcq_queue *q, struct hcq_program *prog, struct hcq_buf *x, uint64_t n,
                    uint64_t mul, uint64_t add)
{
    static const char *const names[] = {"k_axpb_u64", NULL};
    if (ops_launch_which(__func__, prog, names) < 0)
        return HCQ_ERR_INVALID;
    enum hcq_status st = ops_launch_fits(__func__, "x", x, 0, n, 8);
    if (st != HCQ_OK || n == 0)
        return st;
    struct k_axpb_u64_params p = {.x_va = hcq_buf_va(x), .n = n, .mul = mul, .add = add};
    return ops_launch_flat(q, prog, n, &p, sizeof p);
}

enum hcq_status
ops_launch_stack_u32(struct hcq_queue *q, struct hcq_program *prog, struct hcq_buf *out, uint64_t n,
                     uint32_t seed)
{
    static const char *const names[] = {"k_stack_u32", "k_stack_big_u32", NULL};
    if (ops_launch_which(__func__, prog, names) < 0)
        return HCQ_ERR_INVALID;
    enum hcq_status st = ops_launch_fits(__func__, "out", out, 0, n, 4);
    if (st != HCQ_OK || n == 0)
        return st;
    /* both kernels take struct k_stack_params (k_params.h) */
    struct k_stack_params p = {.out_va = hcq_buf_va(out), .n = n, .seed = seed};
    return ops_launch_flat(q, prog, n, &p, sizeof p);
}

enum hcq_status
ops_launch_empty(struct hcq_queue *q, struct hcq_program *prog, uint32_t grid_x, uint32_t block_x)
{
    static const char *const names[] = {"k_empty", NULL};
    if (ops_launch_which(__func__, prog, names) < 0)
        return HCQ_ERR_INVALID;
    if (grid_x == 0 || block_x == 0 || block_x > 1024)
        return hcq_err(HCQ_ERR_INVALID, "%s: grid %u, block %u (expected >= 1, 1..1024)", __func__, grid_x,
                       block_x);
    struct k_empty_params p = {0};
    uint32_t grid[3] = {grid_x, 1, 1}, block[3] = {block_x, 1, 1};
    return hcq_queue_launch(q, prog, grid, block, &p, sizeof p);
}
