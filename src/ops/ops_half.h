/* SPDX-License-Identifier: MIT */
/*
 * ops_half.h - IEEE binary16 (f16) and bfloat16 (bf16) conversions on the host, bit
 * exact with the GPU's cvt.rn instructions on every non-NaN input: round to nearest,
 * ties to even; overflow -> Inf; f32 subnormals are not flushed. NaN stays NaN (quiet;
 * the payload is kept where it fits, so the bit pattern may differ from the GPU's
 * canonical NaN: compare NaN-ness, not bits). Widening conversions are exact.
 * Layer: ops. Used by the kernel twins, the tests and the LLM engine.
 */
#ifndef OPS_HALF_H
#define OPS_HALF_H

#include <stdint.h>

uint16_t ops_half_f32_to_f16(float x);
float ops_half_f16_to_f32(uint16_t h);
uint16_t ops_half_f32_to_bf16(float x);
float ops_half_bf16_to_f32(uint16_t h);

#endif /* OPS_HALF_H */
