/* SPDX-License-Identifier: MIT */
/*
 * tmap_scan.c - what the CUDA driver's cuTensorMapEncodeTiled writes into the 128-byte tensor
 * map (CUtensorMap) of a Hopper TMA copy, one parameter changed at a time.
 *
 * Why: issue 12 wants the wgmma GEMM fed by the tensor memory accelerator, and the rm backend
 * has no libcuda to encode the map; the map is opaque in NVIDIA's documentation, so its fields
 * are read here from the driver's own output (the bit positions are facts; no code is taken).
 *
 * Not built by `make` (it needs the CUDA driver; it includes the toolkit's cuda.h for the
 * enum and prototype names only). On the device machine, after `make`:
 *   cc -O2 -std=c11 -I/usr/local/cuda/include -Iinclude -Isrc/ops -Isrc/util -Isrc/kernels
 * tests/hw/tmap_scan.c \ build/libnvhcq.a -ldl -lm -lpthread -o build/tmap_scan build/tmap_scan Prints one
 * line per case: its name, the return code and the 16 quadwords in hex, then whether nvhcq's own encoder
 * (src/kernels/k_tmap.h) wrote the same 128 bytes ("ours=same", "ours=DIFF", "ours=refused" where the driver
 * refused too, or "ours=-" for what it does not encode), and a last line "tmap_scan: N of M cases the same".
 */
#include <cuda.h>
#include "ops_tmap.h"
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef CUresult (*encode_fn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *,
                              const cuuint64_t *, const cuuint32_t *, const cuuint32_t *,
                              CUtensorMapInterleave, CUtensorMapSwizzle, CUtensorMapL2promotion,
                              CUtensorMapFloatOOBfill);

static encode_fn enc;
static int cases, same;

struct tcase {
    const char *name;
    CUtensorMapDataType dt;
    uint32_t rank;
    uint64_t addr;
    uint64_t dim[5];
    uint64_t stride[4]; /* bytes, dims 1.. */
    uint32_t box[5];
    uint32_t estr[5];
    CUtensorMapInterleave il;
    CUtensorMapSwizzle sw;
    CUtensorMapL2promotion l2;
    CUtensorMapFloatOOBfill oob;
};

static void
run(struct tcase c)
{
    CUtensorMap m;
    memset(&m, 0, sizeof m);
    CUresult r = enc(&m, c.dt, c.rank, (void *)(uintptr_t)c.addr, c.dim, c.stride, c.box, c.estr, c.il, c.sw,
                     c.l2, c.oob);
    printf("%-24s rc=%-3d", c.name, (int)r);
    const uint64_t *q = (const uint64_t *)&m;
    for (int i = 0; i < 16; i++)
        printf(" %016llx", (unsigned long long)q[i]);
    /* the same case through nvhcq's encoder */
    int ty = c.dt == CU_TENSOR_MAP_DATA_TYPE_FLOAT16    ? K_TMAP_F16
             : c.dt == CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 ? K_TMAP_BF16
             : c.dt == CU_TENSOR_MAP_DATA_TYPE_UINT8    ? K_TMAP_U8
             : c.dt == CU_TENSOR_MAP_DATA_TYPE_UINT16   ? K_TMAP_U16
             : c.dt == CU_TENSOR_MAP_DATA_TYPE_UINT32   ? K_TMAP_U32
             : c.dt == CU_TENSOR_MAP_DATA_TYPE_FLOAT32  ? K_TMAP_F32
                                                        : -1;
    if (ty < 0 || c.il != CU_TENSOR_MAP_INTERLEAVE_NONE) {
        printf(" ours=-\n");
        return;
    }
    struct k_tmap_desc d = {.type = (enum k_tmap_type)ty,
                            .rank = c.rank,
                            .va = c.addr,
                            .swizzle = (enum k_tmap_swizzle)c.sw,
                            .l2_promotion = (uint32_t)c.l2,
                            .oob_nan = c.oob != CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE};
    for (int i = 0; i < 5; i++) {
        d.dim[i] = c.dim[i];
        d.box[i] = c.box[i];
        d.elem_stride[i] = c.estr[i];
    }
    for (int i = 0; i < 4; i++)
        d.stride_B[i] = c.stride[i];
    uint64_t o[16];
    enum hcq_status st = ops_tmap_encode(&d, o);
    cases++;
    if (st != HCQ_OK && r != CUDA_SUCCESS) {
        same++;
        printf(" ours=refused\n");
    } else if (st == HCQ_OK && r == CUDA_SUCCESS && !memcmp(o, q, 128)) {
        same++;
        printf(" ours=same\n");
    } else {
        printf(" ours=DIFF\n");
    }
}

int
main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0); /* the encoder's refusals go to stderr: keep the order */
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    if (!h) {
        printf("no libcuda\n");
        return 1;
    }
    CUresult (*init)(unsigned) = (CUresult(*)(unsigned))dlsym(h, "cuInit");
    enc = (encode_fn)dlsym(h, "cuTensorMapEncodeTiled");
    CUresult (*dev_get)(CUdevice *, int) = (CUresult(*)(CUdevice *, int))dlsym(h, "cuDeviceGet");
    CUresult (*retain)(CUcontext *, CUdevice) =
        (CUresult(*)(CUcontext *, CUdevice))dlsym(h, "cuDevicePrimaryCtxRetain");
    CUresult (*set_cur)(CUcontext) = (CUresult(*)(CUcontext))dlsym(h, "cuCtxSetCurrent");
    CUdevice dev;
    CUcontext ctx;
    /* the encoder wants a current context (CUDA_ERROR_INVALID_CONTEXT without one) */
    if (!init || !enc || !dev_get || !retain || !set_cur || init(0) != CUDA_SUCCESS || dev_get(&dev, 0) ||
        retain(&ctx, dev) || set_cur(ctx)) {
        printf("no cuInit / cuTensorMapEncodeTiled / context\n");
        return 1;
    }
    const struct tcase base = {"base",
                               CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
                               2,
                               0x7f1234560000ull,
                               {4096, 2048, 1, 1, 1},
                               {8192, 0, 0, 0},
                               {64, 128, 1, 1, 1},
                               {1, 1, 1, 1, 1},
                               CU_TENSOR_MAP_INTERLEAVE_NONE,
                               CU_TENSOR_MAP_SWIZZLE_128B,
                               CU_TENSOR_MAP_L2_PROMOTION_NONE,
                               CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE};
    struct tcase c;
    run(base);
#define V(nm, stmt)                                                                                          \
    do {                                                                                                     \
        c = base;                                                                                            \
        c.name = nm;                                                                                         \
        stmt;                                                                                                \
        run(c);                                                                                              \
    } while (0)
    V("addr+0x10", c.addr += 0x10);
    V("addr+0x100", c.addr += 0x100);
    V("addr+0x10000", c.addr += 0x10000);
    V("addr=0x1000", c.addr = 0x1000);
    V("addr=0xfff...f0", c.addr = 0xfffffffffff0ull);
    V("addr=1<<56", c.addr = 1ull << 56);
    V("dim0=1", c.dim[0] = 1);
    V("dim0=2", c.dim[0] = 2);
    V("dim0=4097", c.dim[0] = 4097);
    V("dim0=2^32", c.dim[0] = 1ull << 32);
    V("dim1=1", c.dim[1] = 1);
    V("dim1=3", c.dim[1] = 3);
    V("dim1=65536", c.dim[1] = 65536);
    V("stride=16", c.stride[0] = 16);
    V("stride=8208", c.stride[0] = 8208);
    V("stride=2^36", c.stride[0] = 1ull << 36);
    V("stride=2^40-16", c.stride[0] = (1ull << 40) - 16);
    V("box0=8", c.box[0] = 8);
    V("box0=32", c.box[0] = 32);
    V("box1=1", c.box[1] = 1);
    V("box1=256", c.box[1] = 256);
    V("box1=255", c.box[1] = 255);
    V("estr0=2", c.estr[0] = 2);
    V("estr1=3", c.estr[1] = 3);
    V("estr1=8", c.estr[1] = 8);
    V("dt=u8", c.dt = CU_TENSOR_MAP_DATA_TYPE_UINT8);
    V("dt=u16", c.dt = CU_TENSOR_MAP_DATA_TYPE_UINT16);
    V("dt=u32", c.dt = CU_TENSOR_MAP_DATA_TYPE_UINT32);
    V("dt=f32", c.dt = CU_TENSOR_MAP_DATA_TYPE_FLOAT32);
    V("dt=bf16", c.dt = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
    V("dt=tf32", c.dt = CU_TENSOR_MAP_DATA_TYPE_TFLOAT32);
    V("dt=f64", c.dt = CU_TENSOR_MAP_DATA_TYPE_FLOAT64);
    V("sw=none", c.sw = CU_TENSOR_MAP_SWIZZLE_NONE);
    V("sw=32", (c.sw = CU_TENSOR_MAP_SWIZZLE_32B, c.box[0] = 16));
    V("sw=64", (c.sw = CU_TENSOR_MAP_SWIZZLE_64B, c.box[0] = 32));
    V("l2=64", c.l2 = CU_TENSOR_MAP_L2_PROMOTION_L2_64B);
    V("l2=128", c.l2 = CU_TENSOR_MAP_L2_PROMOTION_L2_128B);
    V("l2=256", c.l2 = CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
    V("oob=nan", c.oob = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA);
    V("il=16", (c.il = CU_TENSOR_MAP_INTERLEAVE_16B, c.sw = CU_TENSOR_MAP_SWIZZLE_NONE));
    V("il=32", (c.il = CU_TENSOR_MAP_INTERLEAVE_32B, c.sw = CU_TENSOR_MAP_SWIZZLE_NONE));
    V("rank1", (c.rank = 1, c.sw = CU_TENSOR_MAP_SWIZZLE_NONE));
    V("rank3", (c.rank = 3, c.dim[2] = 5, c.stride[1] = 8192ull * 2048, c.box[2] = 2));
    V("rank5", (c.rank = 5, c.dim[2] = 5, c.dim[3] = 6, c.dim[4] = 7, c.stride[1] = 8192ull * 2048,
                c.stride[2] = 8192ull * 2048 * 5, c.stride[3] = 8192ull * 2048 * 30, c.box[2] = 2,
                c.box[3] = 3, c.box[4] = 4, c.estr[4] = 2));
    V("gemm-A 8192", (c.dim[0] = 8192, c.dim[1] = 8192, c.stride[0] = 16384));
    V("gemm-B n256", (c.box[1] = 256));
    V("bad addr+8", c.addr += 8);
    V("bad box0=128", c.box[0] = 128);
    printf("tmap_scan: %d of %d cases the same\n", same, cases);
    return same == cases ? 0 : 1;
}
