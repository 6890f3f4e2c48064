/* SPDX-License-Identifier: MIT */
/*
 * cuda_helpers.c - three one-thread helper kernels of the cuda backend, written in PTX
 * and JIT-compiled by the driver at first use (so they exist for every arch without nvcc
 * at build time):
 *   hcq_cuda_signal(addr, value)   *addr = value, after a system-scope fence
 *   hcq_cuda_wait(addr, value)     spin (nanosleep backoff) until *addr >= value, unsigned
 *   hcq_cuda_timestamp(addr)       *addr = %globaltimer (ns)
 * Signals and waits use them inside CUDA graphs (a kernel node's arguments can be updated
 * in an instantiated graph, so variable signal values cost one cuGraphExecKernelNodeSetParams)
 * and on drivers without the 64-bit stream memory operations. Timestamps always use them:
 * %globaltimer is the GPU's nanosecond timer (PTX ISA, "Special Registers: %globaltimer"),
 * the same PTIMER the semaphore release of the rm backend writes, so timestamps compare
 * across backends. Layer: backend.
 */
#include "cuda_priv.h"

#include <sched.h>
#include <string.h>
#include <time.h>

/* PTX ISA 7.0 for sm_70 and newer: ld.acquire/st.relaxed with .sys scope, fence.sc.sys and
 * nanosleep all exist there (PTX ISA reference, "Memory Consistency Model" and
 * "nanosleep"); the driver JITs it for the device's own arch. Host-mapped memory is in the
 * global state space, so .global accesses reach the signal slots. */
static const char helpers_ptx[] = ".version 7.0\n"
                                  ".target sm_70\n"
                                  ".address_size 64\n"
                                  "\n"
                                  ".visible .entry hcq_cuda_signal(.param .u64 p_addr, .param .u64 p_value)\n"
                                  "{\n"
                                  "    .reg .b64 %a, %v;\n"
                                  "    ld.param.u64 %a, [p_addr];\n"
                                  "    ld.param.u64 %v, [p_value];\n"
                                  "    fence.sc.sys;\n" /* earlier work's writes before the value */
                                  "    st.relaxed.sys.global.u64 [%a], %v;\n"
                                  "    ret;\n"
                                  "}\n"
                                  "\n"
                                  ".visible .entry hcq_cuda_wait(.param .u64 p_addr, .param .u64 p_value)\n"
                                  "{\n"
                                  "    .reg .b64 %a, %v, %x;\n"
                                  "    .reg .pred %done;\n"
                                  "    ld.param.u64 %a, [p_addr];\n"
                                  "    ld.param.u64 %v, [p_value];\n"
                                  "POLL:\n"
                                  "    ld.acquire.sys.global.u64 %x, [%a];\n"
                                  "    setp.ge.u64 %done, %x, %v;\n"
                                  "    @%done bra.uni DONE;\n"
                                  "    nanosleep.u32 200;\n" /* ~0.2 us between polls of host memory */
                                  "    bra.uni POLL;\n"
                                  "DONE:\n"
                                  "    fence.sc.sys;\n"
                                  "    ret;\n"
                                  "}\n"
                                  "\n"
                                  ".visible .entry hcq_cuda_timestamp(.param .u64 p_addr)\n"
                                  "{\n"
                                  "    .reg .b64 %a, %t;\n"
                                  "    ld.param.u64 %a, [p_addr];\n"
                                  "    mov.u64 %t, %globaltimer;\n"
                                  "    st.relaxed.sys.global.u64 [%a], %t;\n"
                                  "    fence.sc.sys;\n"
                                  "    ret;\n"
                                  "}\n";

enum hcq_status
cuda_helpers_load(struct cuda_device *cd)
{
    const struct cuda_api *a = cd->api;
    enum hcq_status st = HCQ_OK;
    pthread_mutex_lock(&cd->aux_lock);
    if (cd->helpers_loaded)
        goto out;
    if (cd->helpers_failed) {
        st =
            hcq_err(HCQ_ERR_UNSUPPORTED, "cuda: the helper kernels (timestamps, graph signals) did not load");
        goto out;
    }
    cd->helpers_failed = true; /* only one try: a later load could block behind a waiting stream */
    cuda_ctx_enter(cd);
    CUresult r = a->cuModuleLoadData(&cd->helpers, helpers_ptx);
    if (r != CUDA_SUCCESS) {
        st = cuda_fail(cd, r, "cuModuleLoadData(helper PTX)");
        goto out;
    }
    if ((r = a->cuModuleGetFunction(&cd->fn_signal, cd->helpers, "hcq_cuda_signal")) != CUDA_SUCCESS ||
        (r = a->cuModuleGetFunction(&cd->fn_wait, cd->helpers, "hcq_cuda_wait")) != CUDA_SUCCESS ||
        (r = a->cuModuleGetFunction(&cd->fn_timestamp, cd->helpers, "hcq_cuda_timestamp")) != CUDA_SUCCESS) {
        st = cuda_fail(cd, r, "cuModuleGetFunction(helper)");
        a->cuModuleUnload(cd->helpers);
        cd->helpers = NULL;
        goto out;
    }
    cd->helpers_loaded = true;
    cd->helpers_failed = false;
out:
    pthread_mutex_unlock(&cd->aux_lock);
    return st;
}

void
cuda_helpers_unload(struct cuda_device *cd)
{
    if (cd->helpers_loaded)
        cd->api->cuModuleUnload(cd->helpers);
    cd->helpers_loaded = false;
    cd->helpers = NULL;
}

static CUresult
launch1(struct cuda_device *cd, CUfunction f, CUstream s, void **params)
{
    return cd->api->cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, params, NULL);
}

CUresult
cuda_helpers_signal(struct cuda_device *cd, CUstream s, CUdeviceptr addr, uint64_t value)
{
    void *params[2] = {&addr, &value};
    return launch1(cd, cd->fn_signal, s, params);
}

CUresult
cuda_helpers_wait(struct cuda_device *cd, CUstream s, CUdeviceptr addr, uint64_t value)
{
    void *params[2] = {&addr, &value};
    return launch1(cd, cd->fn_wait, s, params);
}

CUresult
cuda_helpers_timestamp(struct cuda_device *cd, CUstream s, CUdeviceptr addr)
{
    void *params[1] = {&addr};
    return launch1(cd, cd->fn_timestamp, s, params);
}

/* One helper launch on the aux stream and a bounded poll of the host word it writes:
 * ~10 us, so callers use it for calibration, not per command. Falls back to the host clock
 * (logged once) if the helpers cannot run, since the member cannot return a status. */
uint64_t
cuda_helpers_device_time_ns(struct hcq_device *dev)
{
    struct cuda_device *cd = cuda_dev(dev);
    static atomic_bool warned;
    if (atomic_load(&dev->lost) || cuda_helpers_load(cd) != HCQ_OK || !cd->time_slot)
        goto fallback;
    pthread_mutex_lock(&cd->aux_lock);
    cuda_ctx_enter(cd);
    __atomic_store_n(cd->time_slot, 0, __ATOMIC_RELEASE);
    CUresult r = cuda_helpers_timestamp(cd, cd->aux, cd->time_slot_va);
    uint64_t t = 0, start = hcq_time_ns();
    while (r == CUDA_SUCCESS && (t = __atomic_load_n(cd->time_slot, __ATOMIC_ACQUIRE)) == 0) {
        if (hcq_time_ns() - start > 1000000000ull) /* 1 s: a single-thread kernel or a dead GPU */
            break;
        sched_yield();
    }
    pthread_mutex_unlock(&cd->aux_lock);
    if (r != CUDA_SUCCESS)
        (void)cuda_fail(cd, r, "device_time_ns: helper launch");
    if (t)
        return t;
fallback:
    if (!atomic_exchange(&warned, true))
        HCQ_LOG_WARN("cuda: device clock unavailable, using the host clock (timestamps not comparable)");
    return hcq_time_ns();
}
