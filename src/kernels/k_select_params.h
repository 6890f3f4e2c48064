/* SPDX-License-Identifier: MIT */
/*
 * k_select_params.h - parameter structs of the selection / comparison / integer kernels
 * (k_select.cu) and the max/min reductions (k_minmax.cu), with the conventions and ABI
 * checks of k_params.h (which it includes). Layer: kernels. Plain C, also CUDA C++.
 */
#ifndef K_SELECT_PARAMS_H
#define K_SELECT_PARAMS_H

#include "k_params.h"

/* k_where_f32: y[i] = c[i] != 0 ? a[i] : b[i]; c is bool (u8[n]), a, b, y f32[n] */
struct k_where_f32_params {
    uint64_t y_va;
    uint64_t c_va;
    uint64_t a_va;
    uint64_t b_va;
    uint64_t n;
};
K_PARAMS_SIZE(k_where_f32, 40);
K_PARAMS_FIELD(k_where_f32, n, 32);

/* Comparison operators of k_cmp_f32 (IEEE: every comparison with NaN is false except NE). */
enum k_cmp_op { K_CMP_LT = 0, K_CMP_LE = 1, K_CMP_EQ = 2, K_CMP_NE = 3, K_CMP_GT = 4, K_CMP_GE = 5 };

/* k_cmp_f32: out[i] = a[i] OP b[i] as bool (u8 0 or 1); a, b f32[n] */
struct k_cmp_f32_params {
    uint64_t out_va;
    uint64_t a_va;
    uint64_t b_va;
    uint64_t n;
    uint32_t op;   /* enum k_cmp_op */
    uint32_t pad0; /* 0 */
};
K_PARAMS_SIZE(k_cmp_f32, 40);
K_PARAMS_FIELD(k_cmp_f32, op, 32);

/* k_pow_f32: y[i] = powf(a[i], b[i]) (C99 Annex F special cases) */
struct k_pow_f32_params {
    uint64_t y_va;
    uint64_t a_va;
    uint64_t b_va;
    uint64_t n;
};
K_PARAMS_SIZE(k_pow_f32, 32);

/* k_pow_i32: y[i] = a[i] ^ b[i] on int32, wrapping mod 2^32; b < 0: 1 for a == 1, +-1 for
 * a == -1 (by parity), 0 otherwise (integer division's truncation of 1 / a^|b|) */
struct k_pow_i32_params {
    uint64_t y_va;
    uint64_t a_va;
    uint64_t b_va;
    uint64_t n;
};
K_PARAMS_SIZE(k_pow_i32, 32);

/* k_add_i32: c[i] = a[i] + b[i] on int32, wrapping mod 2^32 */
struct k_add_i32_params {
    uint64_t c_va;
    uint64_t a_va;
    uint64_t b_va;
    uint64_t n;
};
K_PARAMS_SIZE(k_add_i32, 32);

/* k_cast_i8_f32 / k_cast_u8_f32 / k_cast_i32_f32: y f32[n] = x[n] (exact for 8-bit; int32
 * rounds to nearest even above 2^24) */
struct k_cast_i8_f32_params {
    uint64_t y_va;
    uint64_t x_va;
    uint64_t n;
};
K_PARAMS_SIZE(k_cast_i8_f32, 24);
struct k_cast_u8_f32_params {
    uint64_t y_va;
    uint64_t x_va;
    uint64_t n;
};
K_PARAMS_SIZE(k_cast_u8_f32, 24);
struct k_cast_i32_f32_params {
    uint64_t y_va;
    uint64_t x_va;
    uint64_t n;
};
K_PARAMS_SIZE(k_cast_i32_f32, 24);

/* k_max_rows_f32 / k_min_rows_f32: out[r] = max/min over x[r, 0..cols) of row-major
 * f32[rows, cols]. NaN anywhere in a row gives NaN; otherwise the largest/smallest value
 * with +0 > -0; an empty row (cols 0) gives -Inf (max) / +Inf (min). */
struct k_max_rows_f32_params {
    uint64_t out_va;
    uint64_t x_va;
    uint64_t rows;
    uint64_t cols;
};
K_PARAMS_SIZE(k_max_rows_f32, 32);
struct k_min_rows_f32_params {
    uint64_t out_va;
    uint64_t x_va;
    uint64_t rows;
    uint64_t cols;
};
K_PARAMS_SIZE(k_min_rows_f32, 32);

#endif /* K_SELECT_PARAMS_H */
