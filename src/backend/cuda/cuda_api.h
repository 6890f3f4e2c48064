/* SPDX-License-Identifier: MIT */
/*
 * cuda_api.h - the small part of the CUDA driver API that the cuda backend uses, declared
 * here so the build needs no CUDA headers: opaque handle types, the enum values we pass or
 * test, the one struct we hand to the driver, and a table of entry points that
 * cuda_api_load() fills with dlsym() from libcuda.so.1. Layer: backend.
 *
 * Names are NVIDIA's, so a grep finds them in the CUDA Driver API reference. Every value
 * below is from that reference ("CUDA Driver API", docs.nvidia.com/cuda/cuda-driver-api,
 * sections "Data types used by CUDA driver" and "Error Handling"; CUDA 13.0), cited per
 * group as [DT] (data types) or [EH] (error handling); the ABI versions of the entry points
 * (the _v2/_v3 suffixes) are the ones that reference lists for each call.
 */
#ifndef CUDA_API_H
#define CUDA_API_H

#include <stddef.h>
#include <stdint.h>

/* ==== Types [DT] ==== */

typedef int CUresult;         /* enum cudaError_enum */
typedef int CUdevice;         /* ordinal */
typedef uint64_t CUdeviceptr; /* CUdeviceptr_v2: 64-bit device address */
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphExec_st *CUgraphExec;
typedef struct CUgraphNode_st *CUgraphNode;
typedef struct CUkern_st *CUkernel;
typedef struct CUgraphEdgeData_st CUgraphEdgeData; /* only passed through as a pointer */

/* CUresult values we act on [EH]. Anything else is reported by name (cuGetErrorName). */
#define CUDA_SUCCESS 0
#define CUDA_ERROR_INVALID_VALUE 1
#define CUDA_ERROR_OUT_OF_MEMORY 2
#define CUDA_ERROR_NOT_INITIALIZED 3
#define CUDA_ERROR_NO_DEVICE 100
#define CUDA_ERROR_INVALID_DEVICE 101
#define CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED 704
#define CUDA_ERROR_ECC_UNCORRECTABLE 214
#define CUDA_ERROR_NOT_FOUND 500
#define CUDA_ERROR_NOT_READY 600
#define CUDA_ERROR_NOT_SUPPORTED 801
#define CUDA_ERROR_ILLEGAL_ADDRESS 700
#define CUDA_ERROR_LAUNCH_TIMEOUT 702
#define CUDA_ERROR_ASSERT 710
#define CUDA_ERROR_HARDWARE_STACK_ERROR 714
#define CUDA_ERROR_ILLEGAL_INSTRUCTION 715
#define CUDA_ERROR_MISALIGNED_ADDRESS 716
#define CUDA_ERROR_INVALID_ADDRESS_SPACE 717
#define CUDA_ERROR_INVALID_PC 718
#define CUDA_ERROR_LAUNCH_FAILED 719
#define CUDA_ERROR_UNKNOWN 999

/* CUdevice_attribute [DT] */
#define CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK 1
#define CU_DEVICE_ATTRIBUTE_CLOCK_RATE 13 /* kHz */
#define CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT 16
#define CU_DEVICE_ATTRIBUTE_INTEGRATED 18
#define CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY 19
#define CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE 36       /* kHz */
#define CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH 37 /* bits */
#define CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING 41
#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR 75
#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR 76
/* The v2 MemOps attribute; 93 is the deprecated _V1 one that needs NVreg_EnableStreamMemOPs. */
#define CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS 122

/* CUfunction_attribute [DT] */
#define CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK 0
#define CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES 1
#define CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES 3
/* CUlimit (cuda.h): the per-thread stack size the context's local memory is sized for */
#define CU_LIMIT_STACK_SIZE 0x00
#define CU_FUNC_ATTRIBUTE_NUM_REGS 4
#define CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES 8

/* Flags [DT] */
#define CU_MEMHOSTALLOC_PORTABLE 0x01
#define CU_MEMHOSTALLOC_DEVICEMAP 0x02
#define CU_MEMHOSTREGISTER_PORTABLE 0x01
#define CU_MEMHOSTREGISTER_DEVICEMAP 0x02
#define CU_STREAM_NON_BLOCKING 0x1
#define CU_EVENT_DISABLE_TIMING 0x2
/* CUstreamWaitValue_flags: GEQ waits until (int64_t)(*addr - value) >= 0, a cyclic compare. */
#define CU_STREAM_WAIT_VALUE_GEQ 0x0
/* CUstreamWriteValue_flags: DEFAULT orders the write after all earlier work's memory writes. */
#define CU_STREAM_WRITE_VALUE_DEFAULT 0x0
/* CUstreamCaptureMode / CUstreamCaptureStatus */
#define CU_STREAM_CAPTURE_MODE_RELAXED 2
#define CU_STREAM_CAPTURE_STATUS_ACTIVE 1

/* CUDA_KERNEL_NODE_PARAMS_v2 [DT]; its first nine members are the _v1 struct, so the same
 * object serves the _v1 entry point of older drivers. */
typedef struct CUDA_KERNEL_NODE_PARAMS_v2_st {
    CUfunction func;
    unsigned int gridDimX, gridDimY, gridDimZ;
    unsigned int blockDimX, blockDimY, blockDimZ;
    unsigned int sharedMemBytes;
    void **kernelParams;
    void **extra;
    CUkernel kern; /* used only when func is NULL */
    CUcontext ctx; /* NULL: the current context */
} CUDA_KERNEL_NODE_PARAMS_v2;

/* The layout is the C layout of the members above on LP64 (x86_64, aarch64). */
_Static_assert(sizeof(CUDA_KERNEL_NODE_PARAMS_v2) == 72, "CUDA_KERNEL_NODE_PARAMS_v2 size");
_Static_assert(offsetof(CUDA_KERNEL_NODE_PARAMS_v2, sharedMemBytes) == 32, "sharedMemBytes offset");
_Static_assert(offsetof(CUDA_KERNEL_NODE_PARAMS_v2, kernelParams) == 40, "kernelParams offset");
_Static_assert(offsetof(CUDA_KERNEL_NODE_PARAMS_v2, extra) == 48, "extra offset");
_Static_assert(offsetof(CUDA_KERNEL_NODE_PARAMS_v2, ctx) == 64, "ctx offset");

/* cuLaunchKernelEx's configuration (cuda.h, CUDA 12+): one attribute is an id, padding to 8
 * bytes and a 64-byte value union; the id used here, CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_
 * SERIALIZATION (6), takes an int (programmaticStreamSerializationAllowed) in the union. */
#define CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION 6
typedef struct CUlaunchAttribute_st {
    int id;
    char pad[4];
    union {
        char raw[64];
        int programmaticStreamSerializationAllowed;
    } value;
} CUlaunchAttribute;
typedef struct CUlaunchConfig_st {
    unsigned int gridDimX, gridDimY, gridDimZ;
    unsigned int blockDimX, blockDimY, blockDimZ;
    unsigned int sharedMemBytes;
    CUstream hStream;
    CUlaunchAttribute *attrs;
    unsigned int numAttrs;
} CUlaunchConfig;
_Static_assert(sizeof(CUlaunchAttribute) == 72, "CUlaunchAttribute size");
_Static_assert(offsetof(CUlaunchAttribute, value) == 8, "CUlaunchAttribute value offset");
_Static_assert(offsetof(CUlaunchConfig, hStream) == 32, "CUlaunchConfig hStream offset");
_Static_assert(offsetof(CUlaunchConfig, attrs) == 40, "CUlaunchConfig attrs offset");
_Static_assert(sizeof(CUlaunchConfig) == 56, "CUlaunchConfig size");

/* ==== Entry points ==== */

/* One member per entry point; X(required, return-less name, symbol, parameters). Optional
 * members (0) may stay NULL: the backend checks before use and says what it falls back to. */
#define CUDA_API_ENTRIES(X)                                                                                  \
    X(1, cuInit, "cuInit", (unsigned int flags))                                                             \
    X(1, cuDriverGetVersion, "cuDriverGetVersion", (int *version))                                           \
    X(1, cuGetErrorName, "cuGetErrorName", (CUresult err, const char **str))                                 \
    X(1, cuDeviceGetCount, "cuDeviceGetCount", (int *count))                                                 \
    X(1, cuDeviceGet, "cuDeviceGet", (CUdevice * dev, int ordinal))                                          \
    X(1, cuDeviceGetName, "cuDeviceGetName", (char *name, int len, CUdevice dev))                            \
    X(1, cuDeviceGetAttribute, "cuDeviceGetAttribute", (int *value, int attrib, CUdevice dev))               \
    X(1, cuDeviceTotalMem, "cuDeviceTotalMem_v2", (size_t * bytes, CUdevice dev))                            \
    X(1, cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", (CUcontext * ctx, CUdevice dev))              \
    X(1, cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", (CUdevice dev))                          \
    X(0, cuDevicePrimaryCtxReset, "cuDevicePrimaryCtxReset_v2", (CUdevice dev))                              \
    X(0, cuDeviceCanAccessPeer, "cuDeviceCanAccessPeer", (int *can, CUdevice dev, CUdevice peer))            \
    X(0, cuCtxEnablePeerAccess, "cuCtxEnablePeerAccess", (CUcontext peer, unsigned int flags))               \
    X(1, cuCtxGetCurrent, "cuCtxGetCurrent", (CUcontext * ctx))                                              \
    X(1, cuCtxSetCurrent, "cuCtxSetCurrent", (CUcontext ctx))                                                \
    X(0, cuCtxGetLimit, "cuCtxGetLimit", (size_t * value, int limit))                                        \
    X(0, cuCtxSetLimit, "cuCtxSetLimit", (int limit, size_t value))                                          \
    X(1, cuMemAlloc, "cuMemAlloc_v2", (CUdeviceptr * dptr, size_t bytes))                                    \
    X(1, cuMemFree, "cuMemFree_v2", (CUdeviceptr dptr))                                                      \
    X(1, cuMemHostAlloc, "cuMemHostAlloc", (void **pp, size_t bytes, unsigned int flags))                    \
    X(1, cuMemFreeHost, "cuMemFreeHost", (void *p))                                                          \
    X(1, cuMemHostGetDevicePointer, "cuMemHostGetDevicePointer_v2",                                          \
      (CUdeviceptr * dptr, void *p, unsigned int flags))                                                     \
    X(1, cuMemHostRegister, "cuMemHostRegister_v2", (void *p, size_t bytes, unsigned int flags))             \
    X(1, cuMemHostUnregister, "cuMemHostUnregister", (void *p))                                              \
    X(1, cuMemcpyAsync, "cuMemcpyAsync", (CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream s))       \
    X(1, cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2",                                                          \
      (CUdeviceptr dst, const void *src, size_t bytes, CUstream s))                                          \
    X(1, cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", (void *dst, CUdeviceptr src, size_t bytes, CUstream s))  \
    X(1, cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2",                                                          \
      (CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream s))                                          \
    X(1, cuModuleLoadData, "cuModuleLoadData", (CUmodule * mod, const void *image))                          \
    X(1, cuModuleUnload, "cuModuleUnload", (CUmodule mod))                                                   \
    X(1, cuModuleGetFunction, "cuModuleGetFunction", (CUfunction * f, CUmodule mod, const char *name))       \
    X(1, cuFuncGetAttribute, "cuFuncGetAttribute", (int *value, int attrib, CUfunction f))                   \
    X(0, cuFuncSetAttribute, "cuFuncSetAttribute", (CUfunction f, int attrib, int value))                    \
    X(0, cuFuncGetParamInfo, "cuFuncGetParamInfo",                                                           \
      (CUfunction f, size_t index, size_t * offset_B, size_t * size_B))                                      \
    X(1, cuLaunchKernel, "cuLaunchKernel",                                                                   \
      (CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx, unsigned int by,    \
       unsigned int bz, unsigned int shared_B, CUstream s, void **params, void **extra))                     \
    X(0, cuLaunchKernelEx, "cuLaunchKernelEx",                                                               \
      (const CUlaunchConfig *cfg, CUfunction f, void **params, void **extra))                                \
    X(1, cuStreamCreate, "cuStreamCreate", (CUstream * s, unsigned int flags))                               \
    X(1, cuStreamDestroy, "cuStreamDestroy_v2", (CUstream s))                                                \
    X(1, cuStreamQuery, "cuStreamQuery", (CUstream s))                                                       \
    X(0, cuStreamWriteValue64, "cuStreamWriteValue64_v2",                                                    \
      (CUstream s, CUdeviceptr addr, uint64_t value, unsigned int flags))                                    \
    X(0, cuStreamWaitValue64, "cuStreamWaitValue64_v2",                                                      \
      (CUstream s, CUdeviceptr addr, uint64_t value, unsigned int flags))                                    \
    X(1, cuStreamBeginCapture, "cuStreamBeginCapture_v2", (CUstream s, int mode))                            \
    X(1, cuStreamEndCapture, "cuStreamEndCapture", (CUstream s, CUgraph * graph))                            \
    X(0, cuStreamGetCaptureInfo_v3, "cuStreamGetCaptureInfo_v3",                                             \
      (CUstream s, int *status, uint64_t *id, CUgraph *graph, const CUgraphNode **deps,                      \
       const CUgraphEdgeData **edges, size_t *ndeps))                                                        \
    X(0, cuStreamGetCaptureInfo_v2, "cuStreamGetCaptureInfo_v2",                                             \
      (CUstream s, int *status, uint64_t *id, CUgraph *graph, const CUgraphNode **deps, size_t *ndeps))      \
    X(1, cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags",                                         \
      (CUgraphExec * exec, CUgraph graph, unsigned long long flags))                                         \
    X(1, cuGraphLaunch, "cuGraphLaunch", (CUgraphExec exec, CUstream s))                                     \
    X(0, cuGraphExecKernelNodeSetParams_v2, "cuGraphExecKernelNodeSetParams_v2",                             \
      (CUgraphExec exec, CUgraphNode node, const CUDA_KERNEL_NODE_PARAMS_v2 *p))                             \
    X(0, cuGraphExecKernelNodeSetParams_v1, "cuGraphExecKernelNodeSetParams",                                \
      (CUgraphExec exec, CUgraphNode node, const CUDA_KERNEL_NODE_PARAMS_v2 *p))                             \
    X(1, cuGraphExecDestroy, "cuGraphExecDestroy", (CUgraphExec exec))                                       \
    X(1, cuGraphDestroy, "cuGraphDestroy", (CUgraph graph))                                                  \
    X(1, cuMemGetInfo, "cuMemGetInfo_v2", (size_t * free_B, size_t * total_B))

#define CUDA_API_MEMBER(req, name, sym, params) CUresult(*name) params;
struct cuda_api {
    void *lib; /* dlopen handle of libcuda.so.1 */
    CUDA_API_ENTRIES(CUDA_API_MEMBER)
};
#undef CUDA_API_MEMBER

/* Load libcuda.so.1 once per process and resolve the entry points. HCQ_ERR_NOT_FOUND
 * (quiet) when the library is absent, HCQ_ERR_DRIVER when it lacks a required symbol.
 * The returned table lives until exit. */
#include "hcq.h"
HCQ_MUST_CHECK enum hcq_status cuda_api_load(const struct cuda_api **api_out);

/* "CUDA_ERROR_ILLEGAL_ADDRESS (700)" style name of a result, in a static buffer per thread. */
const char *cuda_api_err_name(CUresult r);

/* Whether r leaves the context unusable (sticky: every later call fails the same way). */
int cuda_api_err_is_sticky(CUresult r);

#endif /* CUDA_API_H */
