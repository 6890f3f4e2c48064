/* SPDX-License-Identifier: MIT */
/*
 * fuzz_gguf.c - libFuzzer target for the GGUF reader:
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude -Isrc/util -Isrc/llm -Isrc/kernels \
 *         tests/fuzz/fuzz_gguf.c src/llm/llm_gguf.c src/llm/llm_quant.c src/util/util_log.c -o fuzz_gguf
 * Parses the input and reads every byte the parser hands out (keys, values, string array
 * elements, tensor data), so a missed bound shows up as an ASan report. The deterministic
 * smoke version runs in `make test` (tests/unit/test_llm_gguf.c, fuzz_smoke).
 */
#include "llm.h"

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct llm_gguf *g = NULL;
    volatile uint64_t sum = 0;
    if (llm_gguf_parse(data, size, &g) != HCQ_OK)
        return 0;
    for (uint64_t i = 0; i < llm_gguf_kv_count(g); i++) {
        struct llm_str k = llm_gguf_kv_key(g, i);
        for (uint64_t j = 0; j < k.len; j++)
            sum += (uint8_t)k.ptr[j];
        uint64_t rs;
        const uint8_t *r = llm_gguf_kv_raw(g, i, &rs);
        for (uint64_t j = 0; j < rs; j++)
            sum += r[j];
        uint32_t et;
        uint64_t cnt;
        char key[256];
        uint64_t kl = k.len < 255 ? k.len : 255;
        for (uint64_t j = 0; j < kl; j++)
            key[j] = k.ptr[j];
        key[kl] = 0;
        if (llm_gguf_get_arr(g, key, &et, &cnt) == HCQ_OK && et == LLM_GGUF_STRING)
            for (uint64_t j = 0; j < cnt; j++) {
                struct llm_str s = llm_gguf_arr_str(g, key, j);
                for (uint64_t b = 0; b < s.len; b++)
                    sum += (uint8_t)s.ptr[b];
            }
    }
    for (uint64_t i = 0; i < llm_gguf_tensor_count(g); i++) {
        const struct llm_gguf_tensor *t = llm_gguf_tensor_at(g, i);
        for (uint64_t j = 0; j < t->size_B; j++)
            sum += ((const uint8_t *)t->data)[j];
    }
    llm_gguf_destroy(g);
    return 0;
}
