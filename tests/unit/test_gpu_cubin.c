/* SPDX-License-Identifier: MIT */
/*
 * test_gpu_cubin.c - unit tests of the cubin loader (src/gpu/gpu_cubin*.c): real nvcc cubins
 * (tests/data/) and corrupted copies of them, relocation, and the cbuf0 / QMD template built from
 * a kernel for each arch (docs/hw/rm.md §6.5, §7). Split from test_gpu.c (the encoders).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gpu_arch.h"
#include "gpu_cubin.h"
#include "gpu_decode.h"
#include "gpu_push.h"
#include "gpu_qmd.h"
#include "harness.h"

/* The addresses of test_gpu.c's goldens: cbuf0 and the windows as the engine places them
 * (rm.md §5.5). */
#define CBUF0_VA 0x1000001000ull
#define LOCAL_WINDOW 0x729300000000ull
#define SHARED_WINDOW 0x729400000000ull

/* ==== Cubin loader ==== */

static uint8_t *
read_data(const char *name, size_t *size_out)
{
    char path[512];
    const char *dir = getenv("TEST_DATA_DIR");
    snprintf(path, sizeof path, "%s/%s", dir ? dir : "tests/data", name);
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = n > 0 ? malloc((size_t)n) : NULL;
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    *size_out = (size_t)n;
    return b;
}

static uint64_t
get64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* Facts of tests/data/gpu_cubin_test.cu as built by nvcc 13.0 (readelf + .nv.info dump,
 * matching rm.md §7.3's description). */
static void
check_test_cubin(struct th *t, const uint8_t *elf, size_t size, uint32_t sm)
{
    struct gpu_cubin_image *img = NULL;
    const struct gpu_cubin_kernel *add, *scale;
    uint32_t base = sm == 90 ? 0x210 : 0x160;
    CHECK_OK(gpu_cubin_load(elf, size, &img));
    CHECK(img->sm_version == sm && img->kernel_count == 2);
    CHECK((add = gpu_cubin_kernel_find(img, "add")) && (scale = gpu_cubin_kernel_find(img, "scale")));
    CHECK(!gpu_cubin_kernel_find(img, "nope"));
    CHECK(add->is_entry && scale->is_entry && add->sym_index != scale->sym_index);
    CHECK(add->param_base_B == base && add->param_size_B == 0x1C && add->param_count == 4);
    static const uint32_t off[] = {0, 8, 16, 24}, sz[] = {8, 8, 8, 4};
    for (int i = 0; i < 4; i++)
        CHECKF(add->params[i].offset_B == off[i] && add->params[i].size_B == sz[i], "add param %d", i);
    CHECK(add->cbuf0_size_B == base + 0x1C && add->register_count == 12 && add->exit_count == 2);
    CHECK(add->code_off_B % 128 == 0 && add->code_size_B > 0 &&
          add->code_off_B + add->code_size_B <= img->size_B);
    CHECK(scale->param_size_B == 0x10 && scale->param_count == 3 && scale->barrier_count == 1);
    CHECK(scale->max_threads[0] == 256 && scale->max_threads[1] == 1 && scale->shared_static_B >= 0x400);
    CHECK(scale->min_stack_B == 0 && gpu_cubin_kernel_local_B(scale) == 0x240);
    CHECK(gpu_cubin_kernel_shared_B(scale, 100) == ((0x400 + scale->shared_static_B + 100 + 127) & ~127u));
    CHECK(img->bank_count == 1 && img->banks[0].index == 4 && img->banks[0].size_B == 16);
    CHECK(img->reloc_count == 2 && img->alloc_B >= img->size_B + 4096 && img->alloc_B % 4096 == 0);
    /* relocate twice: the two .nv.constant4 slots hold the VAs of gbias (.nv.global, zeros) and
     * gcounter (.nv.global.init, initial value 7) */
    for (int pass = 0; pass < 2; pass++) {
        uint64_t va = pass ? 0x7F0000000000ull : 0x200000000ull;
        CHECK_OK(gpu_cubin_relocate(img, va));
        uint64_t p0 = get64(img->data + img->banks[0].off_B), p1 = get64(img->data + img->banks[0].off_B + 8);
        CHECK(p0 >= va && p0 < va + img->size_B && p1 >= va && p1 < va + img->size_B && p0 != p1);
        CHECK(img->data[p1 - va] == 7 && img->data[p1 - va + 1] == 0);
        for (int i = 0; i < 64; i++)
            CHECK(img->data[p0 - va + i] == 0);
    }
    CHECK_OK(gpu_cubin_check_arch(img, hcq_arch_by_sm(sm)));
    CHECK(gpu_cubin_check_arch(img, hcq_arch_by_name(sm == 90 ? "ga102" : "ga102")) == HCQ_ERR_UNSUPPORTED);
done:
    gpu_cubin_destroy(img);
}

TEST(cubin_load_real)
{
    size_t n90 = 0, n87 = 0;
    uint8_t *c90 = read_data("gpu_cubin_test.sm_90.cubin", &n90);
    uint8_t *c87 = read_data("gpu_cubin_test.sm_87.cubin", &n87);
    if (!c90 || !c87) {
        free(c90);
        free(c87);
        SKIP("tests/data cubins not found (run from the repository root or set TEST_DATA_DIR)");
    }
    check_test_cubin(t, c90, n90, 90);
    if (!t->failed)
        check_test_cubin(t, c87, n87, 87);
    free(c90);
    free(c87);
done:;
}

static void
put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

TEST(cubin_corrupt)
{
    size_t n = 0;
    uint8_t *good = read_data("gpu_cubin_test.sm_90.cubin", &n);
    uint8_t *bad = NULL;
    struct gpu_cubin_image *img = NULL;
    if (!good)
        SKIP("tests/data cubins not found");
    bad = malloc(n);
    CHECK(bad);
    uint64_t shoff = get64(good + 0x28);
    uint16_t shnum = (uint16_t)(good[0x3C] | good[0x3D] << 8);
    /* every truncation that cuts the section header table, and every one of the first 256 */
    for (size_t len = 0; len < n; len += (len < 256 ? 1 : 7)) {
        enum hcq_status st = gpu_cubin_load(good, len, &img);
        if (len < shoff + shnum * 64ull)
            CHECKF(st == HCQ_ERR_FORMAT && !img, "truncated to %zu: status %d", len, st);
        gpu_cubin_destroy(img);
        img = NULL;
    }
    /* section count too large, name table index out of range, wrong machine, bad magic */
    memcpy(bad, good, n);
    put16(bad + 0x3C, 0xFFFF);
    CHECK(gpu_cubin_load(bad, n, &img) == HCQ_ERR_FORMAT);
    memcpy(bad, good, n);
    put16(bad + 0x3E, shnum);
    CHECK(gpu_cubin_load(bad, n, &img) == HCQ_ERR_FORMAT);
    memcpy(bad, good, n);
    put16(bad + 18, 62);
    CHECK(gpu_cubin_load(bad, n, &img) == HCQ_ERR_FORMAT);
    memcpy(bad, good, n);
    bad[1] = 'X';
    CHECK(gpu_cubin_load(bad, n, &img) == HCQ_ERR_FORMAT && !img);
    /* each section's offset, then size, pointed outside the file */
    for (uint16_t s = 1; s < shnum; s++) {
        for (int field = 0; field < 2; field++) {
            memcpy(bad, good, n);
            uint8_t *h = bad + shoff + s * 64ull + (field ? 0x20 : 0x18);
            uint32_t type = bad[shoff + s * 64ull + 4];
            for (int i = 0; i < 8; i++)
                h[i] = 0xF0;
            enum hcq_status st = gpu_cubin_load(bad, n, &img);
            /* NOBITS sections have no file bytes; a huge size is refused by the image cap where the
             * section is placed (.nv.global), ignored where not (.nv.shared.*) */
            CHECKF(st == HCQ_ERR_FORMAT || (type == 8 && st == HCQ_OK), "section %u field %d: status %d", s,
                   field, st);
            gpu_cubin_destroy(img);
            img = NULL;
        }
    }
    /* random byte flips: never crash (ASan/UBSan build), status from the documented set */
    for (int iter = 0; iter < 3000; iter++) {
        memcpy(bad, good, n);
        int flips = 1 + (int)(th_rand() % 8);
        for (int i = 0; i < flips; i++)
            bad[th_rand() % n] ^= (uint8_t)(1 + th_rand() % 255);
        enum hcq_status st = gpu_cubin_load(bad, n, &img);
        CHECKF(st == HCQ_OK || st == HCQ_ERR_FORMAT || st == HCQ_ERR_UNSUPPORTED, "status %d", st);
        CHECK((st == HCQ_OK) == (img != NULL));
        if (img) {
            for (uint32_t k = 0; k < img->kernel_count; k++)
                CHECK(img->kernels[k].code_off_B + img->kernels[k].code_size_B <= img->size_B);
            CHECK_OK(gpu_cubin_relocate(img, 1ull << 40));
        }
        gpu_cubin_destroy(img);
        img = NULL;
    }
done:
    gpu_cubin_destroy(img);
    free(bad);
    free(good);
}

TEST(cbuf0_and_qmd_from_kernel)
{
    size_t n = 0;
    uint8_t *elf = read_data("gpu_cubin_test.sm_90.cubin", &n);
    struct gpu_cubin_image *img = NULL;
    if (!elf)
        SKIP("tests/data cubins not found");
    const struct hcq_arch *a = hcq_arch_by_name("gh100");
    CHECK_OK(gpu_cubin_load(elf, n, &img));
    const struct gpu_cubin_kernel *k = gpu_cubin_kernel_find(img, "add");
    CHECK(k);
    uint8_t params[0x1C], cb[0x400];
    for (size_t i = 0; i < sizeof params; i++)
        params[i] = (uint8_t)th_rand();
    memset(cb, 0xEE, sizeof cb);
    uint32_t grid[3] = {1000, 2, 3}, block[3] = {128, 2, 1};
    uint32_t size = gpu_cbuf0_size(a, k, sizeof params);
    CHECK(size == 0x230); /* .nv.constant0.add 0x22C rounded to 16 */
    CHECK(gpu_cbuf0_build(a, k, grid, block, LOCAL_WINDOW, SHARED_WINDOW, params, sizeof params, cb,
                          size - 16) == HCQ_ERR_INVALID);
    CHECK(gpu_cbuf0_build(a, k, grid, block, LOCAL_WINDOW, SHARED_WINDOW, params, 0x20, cb, sizeof cb) ==
          HCQ_ERR_INVALID);
    CHECK_OK(gpu_cbuf0_build(a, k, grid, block, LOCAL_WINDOW, SHARED_WINDOW, params, sizeof params, cb,
                             sizeof cb));
    CHECK(get64(cb + 0) == (128 | 2ull << 32) && get64(cb + 8) == (1 | 1000ull << 32)); /* rm.md §6.5 */
    CHECK(get64(cb + 0x10) == (2 | 3ull << 32) && get64(cb + 0x18) == SHARED_WINDOW);
    CHECK(get64(cb + 0x20) == LOCAL_WINDOW && (get64(cb + 0x28) & 0xFFFFFFFF) == 0xFFFDC0);
    CHECK(memcmp(cb + 0x210, params, sizeof params) == 0 && cb[0x22C] == 0 && cb[size] == 0xEE);

    struct gpu_qmd_desc d, e;
    uint32_t q[GPU_QMD_MAX_DW];
    CHECK_OK(gpu_cubin_qmd_desc(&d, a, img, k, 0x200000000ull, grid, block, 0, 0x240, CBUF0_VA, size));
    CHECK_OK(gpu_qmd_encode(a->qmd, &d, q));
    CHECK_OK(gpu_qmd_decode(a->qmd, q, &e));
    CHECK(e.program_va == 0x200000000ull + k->code_off_B && e.register_count == 12 && e.sass_version == 0x90);
    CHECK(e.grid[0] == 1000 && e.block[1] == 2 && e.cbuf[0].va == CBUF0_VA && e.cbuf[0].size_B == 0x230);
    CHECK(e.cbuf[4].valid && e.cbuf[4].va == 0x200000000ull + img->banks[0].off_B && e.qmd_type == 2);
    CHECK(e.shared_mem_B == 0x400 && e.sm_config_min == 9 && e.sm_config_max == 0x1A &&
          e.local_mem_high_B == 0x240);
    CHECK(e.free_cta_slots == 0); /* FREE_CTA_SLOTS_EMPTY_SM not given here: pb_build.c sets it per launch */
    /* 8 CTAs of 1 KiB fit the 32 KiB carve-out, but every TARGET is at least the uniform
     * GPU_QMD_UNIFORM_CARVEOUT_KIB (100 KiB: value 26) so consecutive grids can share SMs */
    CHECK(e.sm_config_target == gpu_qmd_sm_config(GPU_QMD_UNIFORM_CARVEOUT_KIB) && e.sm_config_target == 26);
    /* 12 KiB dynamic shared: MIN fits one CTA (13 KiB -> 32 KiB carve-out), TARGET the 8 CTAs
     * that 256 threads of 12 registers allow per SM (104 KiB -> 132 KiB, value 34), MAX >= TARGET */
    uint32_t b256[3] = {256, 1, 1};
    CHECK(gpu_cubin_ctas_per_sm(k, b256) == 8);
    CHECK_OK(gpu_cubin_qmd_desc(&d, a, img, k, 0x200000000ull, grid, b256, 12 << 10, 0x240, CBUF0_VA, size));
    CHECK_OK(gpu_qmd_encode(a->qmd, &d, q));
    CHECK_OK(gpu_qmd_decode(a->qmd, q, &e));
    CHECK(e.shared_mem_B == 0x3400 && e.sm_config_min == 9 && e.sm_config_target == 34 &&
          e.sm_config_max == 34);
    /* 48 KiB: 8 x 49 KiB exceeds every carve-out: TARGET and MAX are gh100's largest (228 KiB) */
    CHECK_OK(gpu_cubin_qmd_desc(&d, a, img, k, 0x200000000ull, grid, b256, 48 << 10, 0x240, CBUF0_VA, size));
    CHECK_OK(gpu_qmd_encode(a->qmd, &d, q));
    CHECK_OK(gpu_qmd_decode(a->qmd, q, &e));
    CHECK(e.shared_mem_B == 0xC400 && e.sm_config_min == 0x11 && e.sm_config_target == 0x3A &&
          e.sm_config_max == 0x3A);
    uint32_t big[3] = {2048, 1, 1};
    CHECK(gpu_cubin_qmd_desc(&d, a, img, k, 0x200000000ull, grid, big, 0, 0x240, CBUF0_VA, size) ==
          HCQ_ERR_INVALID);
    CHECK(gpu_cubin_qmd_desc(&d, a, img, k, 0x200000000ull, grid, block, 0, 0x100, CBUF0_VA, size) ==
          HCQ_ERR_INVALID);
    CHECK(gpu_cubin_qmd_desc(&d, a, img, k, 0x200000000ull, grid, block, 300 << 10, 0x240, CBUF0_VA, size) ==
          HCQ_ERR_INVALID);
    k = gpu_cubin_kernel_find(img, "scale");
    uint32_t b512[3] = {512, 1, 1};
    CHECK(gpu_cubin_qmd_desc(&d, a, img, k, 0x200000000ull, grid, b512, 0, 0x240, CBUF0_VA, size) ==
          HCQ_ERR_INVALID);
done:
    gpu_cubin_destroy(img);
    free(elf);
}

/* The occupancy model behind FREE_CTA_SLOTS_EMPTY_SM (gpu_cubin_free_cta_slots_fit): never above the CTAs
 * an SM holds by its model (64K registers in four 16K sub-partitions, 64 warps, 32 CTAs); 0 with
 * shared memory of its own or a shape that does not fit. */
TEST(free_cta_slots)
{
    struct gpu_cubin_kernel k = {.name = "t"};
    const struct {
        uint32_t regs, threads, shared_B, want;
    } c[] = {
        {16, 1, 0x400, 32},    /* 512 registers a warp: 32 a sub-partition, capped at 32 CTAs */
        {128, 256, 0x400, 2},  /* 4096 a warp, 8 warps: 2 CTAs (the decode mat-vec's bound) */
        {32, 1024, 0x400, 2},  /* 32 warps: 2 by warps and by registers */
        {64, 1024, 0x400, 1},  /* 64K registers: one CTA */
        {40, 96, 0x400, 12},   /* 3 warps in one sub-partition at most: 12 (the SM holds 17) */
        {255, 1024, 0x400, 0}, /* does not fit at all */
        {16, 256, 0x480, 0},   /* 128 bytes of its own shared memory */
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        k.register_count = c[i].regs;
        uint32_t block[3] = {c[i].threads, 1, 1};
        uint32_t got = gpu_cubin_free_cta_slots(&k, block, c[i].shared_B);
        CHECKF(got == c[i].want, "case %zu: %u (expected %u)", i, got, c[i].want);
        CHECK(got <= gpu_cubin_ctas_per_sm(&k, block));
    }
done:;
}

/* The default FREE_CTA_SLOTS_EMPTY_SM: the fewest CTAs per SM that hold the grid in one wave,
 * 0 when one wave at the model's occupancy does not hold it (such grids faulted on H100). */
TEST(free_cta_slots_fit)
{
    struct gpu_cubin_kernel k = {.name = "t", .register_count = 12};
    const uint32_t b256[3] = {256, 1, 1}; /* occupancy 8 by warps (12 registers) */
    const struct {
        uint32_t ctas, sms, shared_B, want;
    } c[] = {
        {1, 132, 0x400, 1},     /* graph of empty kernels, one CTA */
        {132, 132, 0x400, 1},   /* one per SM */
        {133, 132, 0x400, 2},   /* one SM takes two */
        {264, 132, 0x400, 2},   /* the dep_step bench row: 2 CTAs per SM */
        {1056, 132, 0x400, 8},  /* exactly one wave at the occupancy */
        {1057, 132, 0x400, 0},  /* more than one wave: the hardware's placement */
        {65535, 132, 0x400, 0}, /* the fill kernel that faulted at 8 */
        {10, 132, 0x480, 0},    /* shared memory of its own: not modelled */
        {10, 0, 0x400, 0},      /* no SM count (a backend that does not report one) */
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        const uint32_t grid[3] = {c[i].ctas, 1, 1};
        uint32_t got = gpu_cubin_free_cta_slots_fit(&k, b256, c[i].shared_B, grid, c[i].sms);
        CHECKF(got == c[i].want, "case %zu: %u (expected %u)", i, got, c[i].want);
        CHECK(got <= gpu_cubin_free_cta_slots(&k, b256, c[i].shared_B));
    }
    /* no kernel (an emulator's built-in stub): 0, no dereference */
    const uint32_t g1[3] = {1, 1, 1};
    CHECK(gpu_cubin_free_cta_slots_fit(NULL, b256, 0x400, g1, 132) == 0);
    /* a 3-D grid counts every CTA: 4 x 33 x 2 = 264 */
    const uint32_t g3[3] = {4, 33, 2};
    CHECK(gpu_cubin_free_cta_slots_fit(&k, b256, 0x400, g3, 132) == 2);
done:;
}

/* sm_87 cubin on ga10b (V3 QMD, params at 0x160) and the Blackwell driver-area layout. */
TEST(cbuf0_other_arches)
{
    size_t n = 0;
    uint8_t *elf = read_data("gpu_cubin_test.sm_87.cubin", &n);
    struct gpu_cubin_image *img = NULL;
    if (!elf)
        SKIP("tests/data cubins not found");
    const struct hcq_arch *a = hcq_arch_by_name("ga10b");
    CHECK_OK(gpu_cubin_load(elf, n, &img));
    CHECK_OK(gpu_cubin_check_arch(img, a));
    const struct gpu_cubin_kernel *k = gpu_cubin_kernel_find(img, "scale");
    CHECK(k && k->param_base_B == 0x160);
    uint8_t params[0x10], cb[0x400];
    for (size_t i = 0; i < sizeof params; i++)
        params[i] = (uint8_t)th_rand();
    uint32_t grid[3] = {7, 1, 1}, block[3] = {256, 1, 1};
    uint32_t size = gpu_cbuf0_size(a, k, sizeof params);
    CHECK(size == ((k->cbuf0_size_B + 15) & ~15u) && size >= 0x170);
    CHECK_OK(gpu_cbuf0_build(a, k, grid, block, 0xFD00000000ull, 0xFE00000000ull, params, sizeof params, cb,
                             sizeof cb));
    CHECK(get64(cb + 0x18) == 0xFE00000000ull && get64(cb + 0x20) == 0xFD00000000ull); /* nvgpu.md §6.5 */
    CHECK(memcmp(cb + 0x160, params, sizeof params) == 0 && get64(cb) == (256 | 1ull << 32));
    struct gpu_qmd_desc d, e;
    uint32_t q[GPU_QMD_MAX_DW];
    CHECK_OK(gpu_cubin_qmd_desc(&d, a, img, k, 0x100000000ull, grid, block, 0, 0x240, 0x300000010ull, size));
    CHECK_OK(gpu_qmd_encode(a->qmd, &d, q)); /* V3 takes a 16-byte aligned cbuf address */
    CHECK_OK(gpu_qmd_decode(a->qmd, q, &e));
    CHECK(e.sass_version == 0x87 && e.sm_global_caching && e.cbuf[0].va == 0x300000010ull &&
          e.barrier_count == 1);
    CHECK(e.cbuf[4].valid && e.cbuf[4].va == 0x100000000ull + img->banks[0].off_B);
    CHECK(e.shared_mem_B == gpu_cubin_kernel_shared_B(k, 0) && e.register_count == k->register_count);
    CHECK(gpu_qmd_encode(hcq_arch_by_name("gh100")->qmd, &d, q) ==
          HCQ_ERR_INVALID); /* cbuf not 64-B aligned */

    const struct hcq_arch *b = hcq_arch_by_name("gb100");
    CHECK(gpu_cbuf0_size(b, NULL, 8) == 0x390 && gpu_cbuf0_size(b, NULL, 0) == 0x380);
    memset(cb, 0xEE, sizeof cb);
    CHECK_OK(
        gpu_cbuf0_build(b, NULL, grid, block, 0x1111000000ull, 0x2222000000ull, params, 8, cb, sizeof cb));
    CHECK(get64(cb + 0x2F0) == 0x2222000000ull && get64(cb + 0x2F8) == 0x1111000000ull); /* rm.md §8.6 */
    CHECK((get64(cb + 0x37C) & 0xFFFFFFFF) == 0xFFFDC0 && memcmp(cb + 0x380, params, 8) == 0 &&
          cb[0x390] == 0xEE);
    /* the parameters' GPU address: at 0x198 on sm_90 (cbuf0 + 0x210: what a TMA copy's tensor
     * map address is formed from), nowhere where the slot is not known */
    const struct hcq_arch *h = hcq_arch_by_name("gh100");
    memset(cb, 0xEE, sizeof cb);
    gpu_cbuf0_set_va(h, NULL, cb, 0x260, 0x7000001000ull);
    CHECK(get64(cb + 0x198) == 0x7000001210ull && cb[0x197] == 0xEE && cb[0x1A0] == 0xEE);
    memset(cb, 0xEE, sizeof cb);
    gpu_cbuf0_set_va(h, NULL, cb, 0x198, 0x7000001000ull); /* a cbuf0 too small for the slot */
    gpu_cbuf0_set_va(b, NULL, cb, sizeof cb, 0x7000001000ull);
    gpu_cbuf0_set_va(a, NULL, cb, sizeof cb, 0x7000001000ull);
    for (size_t i = 0; i < sizeof cb; i++)
        CHECKF(cb[i] == 0xEE, "byte 0x%zx written where no slot is known", i);
done:
    gpu_cubin_destroy(img);
    free(elf);
}

int
main(int argc, char **argv)
{
    static const struct th_case cases[] = {
        TH_CASE(cubin_load_real),    TH_CASE(cubin_corrupt),  TH_CASE(cbuf0_and_qmd_from_kernel),
        TH_CASE(cbuf0_other_arches), TH_CASE(free_cta_slots), TH_CASE(free_cta_slots_fit),
    };
    return th_run("gpu_cubin", NULL, cases, TH_COUNT(cases), argc - 1, argv + 1) ? 1 : 0;
}
