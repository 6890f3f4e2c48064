/* SPDX-License-Identifier: MIT */
/*
 * k_stack_hash.h - the value k_stack_u32 / k_stack_big_u32 (k_test.cu) compute for element i,
 * shared by the kernels, their CPU twin (src/ops/ops_memory.c) and the hcq suite's checks
 * (tests/hcq), so the arithmetic is written once. Layer: kernels. Plain C that nvcc also
 * compiles (then host and device); includes only <stdint.h>.
 */
#ifndef K_STACK_HASH_H
#define K_STACK_HASH_H

#include <stdint.h>

#ifdef __CUDACC__
#define K_STACK_HASH_FN static __host__ __device__ __forceinline__
#else
#define K_STACK_HASH_FN static inline
#endif

/* A running hash fills words[0..w), then 32 reads at data-dependent indices mix it (w a power of
 * two). In the kernels the indices are not known at compile time, so words (the caller's array)
 * lives in local memory: that is the kernels' point (1 KiB / 4 KiB of stack per thread). */
K_STACK_HASH_FN uint32_t
k_stack_hash(uint32_t *words, uint32_t w, uint32_t seed, uint64_t i)
{
    uint32_t h = seed ^ (uint32_t)i ^ (uint32_t)(i >> 32) * 0x85EBCA6Bu;
    for (uint32_t j = 0; j < w; j++) {
        h = h * 1664525u + 1013904223u;
        words[j] = h;
    }
    uint32_t acc = h;
    for (uint32_t k = 0; k < 32; k++)
        acc = (acc ^ words[((acc >> 7) ^ k) & (w - 1)]) * 0x9E3779B1u + k;
    return acc;
}

#undef K_STACK_HASH_FN
#endif /* K_STACK_HASH_H */
