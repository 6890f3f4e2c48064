/* SPDX-License-Identifier: MIT */
/*
 * fuzz_cubin.c - libFuzzer target for the cubin loader (src/gpu/gpu_cubin.c): any input must
 * load or fail with a status, never crash or read out of bounds; a loaded image must be
 * self-consistent and relocatable, and launch descriptions of its kernels must not crash.
 * Build: `make fuzz` (clang -fsanitize=fuzzer,address,undefined); seed corpus: tests/data/.
 * Without libFuzzer, -DFUZZ_STANDALONE gives a main() that runs each file named on the
 * command line through the target (a smoke run for CI machines without clang's fuzzer).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_cubin.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct gpu_cubin_image *img = NULL;
    enum hcq_status st = gpu_cubin_load(data, size, &img);
    if (st != HCQ_OK) {
        if (img)
            abort(); /* failure must not hand out an image */
        return 0;
    }
    for (uint32_t i = 0; i < img->kernel_count; i++) {
        const struct gpu_cubin_kernel *k = &img->kernels[i];
        if (k->code_off_B + k->code_size_B > img->size_B || gpu_cubin_kernel_find(img, k->name) == NULL)
            abort();
        const struct hcq_arch *a = hcq_arch_at(i % 7);
        uint32_t grid[3] = {1, 1, 1}, block[3] = {32, 1, 1};
        struct gpu_qmd_desc d;
        uint8_t cb[4096];
        uint32_t cb_B = gpu_cbuf0_size(a, k, 0);
        if (cb_B <= sizeof cb &&
            gpu_cbuf0_build(a, k, grid, block, 1ull << 40, 2ull << 40, NULL, 0, cb, sizeof cb) != HCQ_OK)
            abort();
        if (gpu_cubin_qmd_desc(&d, a, img, k, 1ull << 32, grid, block, 0, gpu_cubin_kernel_local_B(k),
                               1ull << 33, cb_B) == HCQ_OK) {
            uint32_t q[GPU_QMD_MAX_DW];
            (void)gpu_qmd_encode(a->qmd, &d, q);
        }
    }
    if (gpu_cubin_relocate(img, 1ull << 40) != HCQ_OK)
        abort(); /* targets were range-checked at load */
    gpu_cubin_destroy(img);
    return 0;
}

#ifdef FUZZ_STANDALONE
int
main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        if (!f)
            continue;
        static uint8_t buf[1 << 22];
        size_t n = fread(buf, 1, sizeof buf, f);
        fclose(f);
        LLVMFuzzerTestOneInput(buf, n);
        for (size_t cut = 0; cut < n; cut += 1 + n / 64) /* truncations */
            LLVMFuzzerTestOneInput(buf, cut);
    }
    printf("fuzz_cubin: %d passed, 0 failed\n", argc - 1);
    return 0;
}
#endif
