/* SPDX-License-Identifier: MIT */
/*
 * cuda_dev.c - the cuda backend's device (hcq_cuda_open, info, fault check), buffers and
 * programs, through the CUDA driver API loaded at run time (cuda_api.c). The reference the
 * rm and nvgpu backends are measured against. Layer: backend.
 */
#include "cuda_priv.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ==== Context and errors ==== */

void
cuda_ctx_enter(struct cuda_device *cd)
{
    CUcontext cur = NULL;
    if (cd->api->cuCtxGetCurrent(&cur) != CUDA_SUCCESS || cur != cd->ctx)
        (void)cd->api->cuCtxSetCurrent(cd->ctx);
}

enum hcq_status
cuda_fail_at(const char *file, int line, const char *func, struct cuda_device *cd, CUresult r,
             const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (cuda_api_err_is_sticky(r))
        return hcq_device_mark_lost(&cd->base, "%s: %s", what, cuda_api_err_name(r));
    enum hcq_status st = r == CUDA_ERROR_OUT_OF_MEMORY ? HCQ_ERR_NOMEM : HCQ_ERR_DRIVER;
    return hcq_err_at(file, line, func, st, "cuda: %s: %s", what, cuda_api_err_name(r));
}

enum hcq_status
cuda_idle_all(struct cuda_device *cd, uint64_t timeout_ns, const char *why)
{
    if (atomic_load(&cd->base.lost))
        return HCQ_OK; /* a lost context fails calls at once; nothing can block */
    CUstream streams[64];
    uint32_t n = 0;
    pthread_mutex_lock(&cd->base.lock);
    for (uint32_t i = 0; i < cd->base.queue_count && n < 64; i++) {
        struct cuda_queue *cq = cd->base.queues[i]->priv;
        if (cq)
            streams[n++] = cq->stream;
    }
    pthread_mutex_unlock(&cd->base.lock);
    uint64_t start = hcq_time_ns();
    for (uint32_t i = 0; i < n; i++) {
        uint64_t spent = hcq_time_ns() - start;
        if (spent >= timeout_ns ||
            cuda_stream_idle_wait(cd, streams[i], timeout_ns - spent, "queue") == HCQ_ERR_TIMEOUT)
            return hcq_err(HCQ_ERR_TIMEOUT,
                           "cuda: %s: a queue of %s is still busy after %.0f ms (waiting on a "
                           "signal?); the driver would block until it is idle",
                           why, cd->base.info.spec, timeout_ns / 1e6);
    }
    return HCQ_OK;
}

bool
cuda_quiesce(struct cuda_device *cd, const char *why)
{
    if (atomic_load(&cd->wedged))
        return false;
    if (cuda_idle_all(cd, HCQ_TIMEOUT_DEFAULT_NS, why) == HCQ_OK)
        return true;
    if (!atomic_exchange(&cd->wedged, true))
        HCQ_LOG_WARN(
            "cuda: %s: leaking memory and modules of %s from now on instead of blocking in the driver", why,
            cd->base.info.spec);
    return false;
}

/* ==== Buffers ==== */

static enum hcq_status
host_alloc(struct cuda_device *cd, struct hcq_buf *buf)
{
    const struct cuda_api *a = cd->api;
    void *p = NULL;
    CUdeviceptr va = 0;
    CUresult r = a->cuMemHostAlloc(&p, buf->size_B, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP);
    if (r != CUDA_SUCCESS)
        return cuda_fail(cd, r, "cuMemHostAlloc(%llu bytes)", (unsigned long long)buf->size_B);
    r = a->cuMemHostGetDevicePointer(&va, p, 0);
    if (r != CUDA_SUCCESS) {
        enum hcq_status st = cuda_fail(cd, r, "cuMemHostGetDevicePointer");
        a->cuMemFreeHost(p);
        return st;
    }
    buf->map = p;
    buf->va = va;
    buf->handle = (uintptr_t)p;
    buf->priv = (void *)(uintptr_t)CUDA_BUF_HOST;
    return HCQ_OK;
}

static enum hcq_status
cuda_buf_alloc(struct hcq_device *dev, struct hcq_buf *buf)
{
    struct cuda_device *cd = cuda_dev(dev);
    cuda_ctx_enter(cd);
    if (buf->flags & HCQ_MEM_HOST)
        return host_alloc(cd, buf);
    if (buf->flags & HCQ_MEM_MAPPABLE) {
        /* On Tegra device memory is system memory, so pinned mapped memory is the same thing;
         * a discrete GPU's VRAM has no CPU mapping through the driver API. */
        if (cd->integrated)
            return host_alloc(cd, buf);
        return hcq_err(HCQ_ERR_UNSUPPORTED,
                       "cuda: HCQ_MEM_MAPPABLE device memory: the CUDA driver API "
                       "cannot CPU-map VRAM of discrete GPU %s (use HCQ_MEM_HOST)",
                       dev->info.name);
    }
    CUdeviceptr va = 0;
    CUresult r = cd->api->cuMemAlloc(&va, buf->size_B);
    if (r != CUDA_SUCCESS)
        return cuda_fail(cd, r, "cuMemAlloc(%llu bytes)", (unsigned long long)buf->size_B);
    buf->va = va;
    buf->map = NULL;
    buf->handle = va;
    buf->priv = (void *)(uintptr_t)CUDA_BUF_DEVICE;
    return HCQ_OK;
}

static enum hcq_status
cuda_buf_import_host(struct hcq_device *dev, struct hcq_buf *buf)
{
    struct cuda_device *cd = cuda_dev(dev);
    const struct cuda_api *a = cd->api;
    cuda_ctx_enter(cd);
    CUresult r = a->cuMemHostRegister(buf->map, buf->size_B,
                                      CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP);
    if (r != CUDA_SUCCESS)
        return cuda_fail(cd, r, "cuMemHostRegister(%p, %llu bytes)", buf->map,
                         (unsigned long long)buf->size_B);
    CUdeviceptr va = 0;
    r = a->cuMemHostGetDevicePointer(&va, buf->map, 0);
    if (r != CUDA_SUCCESS) {
        enum hcq_status st = cuda_fail(cd, r, "cuMemHostGetDevicePointer(registered %p)", buf->map);
        a->cuMemHostUnregister(buf->map);
        return st;
    }
    buf->va = va;
    buf->handle = (uintptr_t)buf->map;
    buf->priv = (void *)(uintptr_t)CUDA_BUF_REGISTERED;
    return HCQ_OK;
}

/* Peer access between two cuda devices (unified addressing: the peer's address is valid
 * here once access is enabled; portable pinned memory is valid in every context). */
static enum hcq_status
cuda_buf_peer_map(struct hcq_device *dev, struct hcq_buf *remote, struct hcq_buf *alias)
{
    struct cuda_device *cd = cuda_dev(dev);
    const struct cuda_api *a = cd->api;
    if (remote->dev->ops != dev->ops)
        return HCQ_ERR_UNSUPPORTED; /* another backend's memory: core imports host memory */
    struct cuda_device *rd = cuda_dev(remote->dev);
    enum cuda_buf_kind k = (enum cuda_buf_kind)(uintptr_t)remote->priv;
    if (k == CUDA_BUF_HOST || k == CUDA_BUF_PEER_HOST) {
        alias->priv = (void *)(uintptr_t)CUDA_BUF_PEER_HOST;
    } else if (k == CUDA_BUF_DEVICE || k == CUDA_BUF_PEER_DEVICE) {
        if (rd->ctx != cd->ctx) {
            int can = 0;
            if (!a->cuDeviceCanAccessPeer || !a->cuCtxEnablePeerAccess ||
                a->cuDeviceCanAccessPeer(&can, cd->cudev, rd->cudev) != CUDA_SUCCESS || !can)
                return hcq_err(HCQ_ERR_UNSUPPORTED, "cuda: %s cannot access %s's memory (no peer access)",
                               dev->info.spec, remote->dev->info.spec);
            cuda_ctx_enter(cd);
            CUresult r = a->cuCtxEnablePeerAccess(rd->ctx, 0);
            if (r != CUDA_SUCCESS && r != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED)
                return cuda_fail(cd, r, "cuCtxEnablePeerAccess(%s -> %s)", dev->info.spec,
                                 remote->dev->info.spec);
        }
        alias->priv = (void *)(uintptr_t)CUDA_BUF_PEER_DEVICE;
    } else {
        return HCQ_ERR_UNSUPPORTED; /* registered caller memory: core imports it again */
    }
    alias->va = remote->va;
    alias->map = remote->map;
    alias->handle = remote->handle;
    return HCQ_OK;
}

static void
cuda_buf_free(struct hcq_device *dev, struct hcq_buf *buf)
{
    struct cuda_device *cd = cuda_dev(dev);
    const struct cuda_api *a = cd->api;
    cuda_ctx_enter(cd);
    if (!cuda_quiesce(cd, "freeing a buffer"))
        return;
    CUresult r = CUDA_SUCCESS;
    switch ((enum cuda_buf_kind)(uintptr_t)buf->priv) {
    case CUDA_BUF_DEVICE:
        r = a->cuMemFree(buf->va);
        break;
    case CUDA_BUF_HOST:
        r = a->cuMemFreeHost(buf->map);
        break;
    case CUDA_BUF_REGISTERED:
        r = a->cuMemHostUnregister(buf->map);
        break;
    case CUDA_BUF_PEER_DEVICE:
    case CUDA_BUF_PEER_HOST:
        break; /* the owning device frees it */
    }
    if (r != CUDA_SUCCESS && !atomic_load(&dev->lost))
        HCQ_LOG_WARN("cuda: freeing buffer va 0x%llx: %s", (unsigned long long)buf->va, cuda_api_err_name(r));
}

/* ==== Programs ==== */

/* A cubin for sm_XY also runs on sm_XZ with Z >= Y (CUDA C Programming Guide, "Binary
 * Compatibility"), so an exact-arch miss can still be served by an older minor. */
static const struct hcq_cubin *
cubin_compatible(struct cuda_device *cd, const char *module)
{
    for (int minor = (int)cd->cc_minor; minor >= 0; minor--) {
        const struct hcq_cubin *cb = hcq_cubin_find(module, cd->cc_major * 10 + (uint32_t)minor);
        if (cb)
            return cb;
    }
    return NULL;
}

/* Parameter layout from the cubin's metadata (cuFuncGetParamInfo, CUDA 12.4+): count and
 * total bytes from the first parameter's start (a 64-byte aligned __grid_constant__ struct
 * starts past the window's start, k_gemm_wgmma_tma.cu; the driver places it from
 * kernelParams[0]); *n_out = -1 when the driver cannot tell. */
static void
param_layout(struct cuda_device *cd, CUfunction fn, int *n_out, uint32_t *size_out)
{
    *n_out = -1;
    *size_out = 0;
    if (!cd->api->cuFuncGetParamInfo)
        return;
    int n = 0;
    uint32_t end = 0, lead = 0;
    size_t off = 0, size = 0;
    while (n < 4096 && cd->api->cuFuncGetParamInfo(fn, (size_t)n, &off, &size) == CUDA_SUCCESS) {
        if (n == 0)
            lead = (uint32_t)off;
        if (off + size > end)
            end = (uint32_t)(off + size);
        n++;
    }
    *n_out = n;
    *size_out = end - lead;
}

static enum hcq_status
cuda_program_load(struct hcq_device *dev, const void *cubin, size_t cubin_B, const char *name,
                  struct hcq_program *prog)
{
    struct cuda_device *cd = cuda_dev(dev);
    const struct cuda_api *a = cd->api;
    (void)cubin_B; /* a cubin is an ELF image; the driver reads its size from the header */
    if (!cubin && prog->desc) {
        const struct hcq_cubin *cb = cubin_compatible(cd, prog->desc->module);
        cubin = cb ? cb->data : NULL;
    }
    if (!cubin) {
        const char *archs = hcq_kernels_cubin_archs();
        return hcq_err(HCQ_ERR_UNSUPPORTED,
                       "cuda: kernel %s: no cubin of module %s for %s (library built for: %s)", name,
                       prog->desc ? prog->desc->module : "?", dev->info.arch,
                       archs[0] ? archs : "none, built without nvcc");
    }
    struct cuda_program *cp = calloc(1, sizeof *cp);
    if (!cp)
        return hcq_err(HCQ_ERR_NOMEM, "cuda: program %s: out of host memory", name);
    cuda_ctx_enter(cd);
    /* Loading a module waits for the device to idle: refuse (bounded) rather than hang
     * behind a queue that waits for a signal this thread has yet to set. */
    enum hcq_status st = cuda_idle_all(cd, HCQ_TIMEOUT_DEFAULT_NS, "loading a program");
    if (st != HCQ_OK)
        goto fail_cp;
    CUresult r = a->cuModuleLoadData(&cp->mod, cubin);
    if (r != CUDA_SUCCESS) {
        st = cuda_fail(cd, r, "cuModuleLoadData(%s for %s)", name, dev->info.arch);
        goto fail_cp;
    }
    r = a->cuModuleGetFunction(&cp->fn, cp->mod, name);
    if (r != CUDA_SUCCESS) {
        st = r == CUDA_ERROR_NOT_FOUND
                 ? hcq_err(HCQ_ERR_NOT_FOUND, "cuda: no kernel named %s in the cubin", name)
                 : cuda_fail(cd, r, "cuModuleGetFunction(%s)", name);
        goto fail_mod;
    }
    int v = 0;
    if (a->cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, cp->fn) == CUDA_SUCCESS)
        prog->info.regs = (uint32_t)v;
    if (a->cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, cp->fn) == CUDA_SUCCESS)
        prog->info.shared_B = (uint32_t)v;
    if (a->cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, cp->fn) == CUDA_SUCCESS)
        prog->info.local_B = (uint32_t)v;
    /* Size the context's local memory for this kernel now, while the device is idle (above): a
     * launch that needs more per-thread stack than the context holds makes the driver wait for the
     * whole context before it grows it - behind a queue that waits for a signal this thread sets
     * later, that launch never returns (hcq suite local_memory_growth_behind_wait hung on cuda:0,
     * H100). A refused growth is left to the launch, as before. */
    size_t stack_B = 0;
    if (prog->info.local_B && a->cuCtxGetLimit && a->cuCtxSetLimit &&
        a->cuCtxGetLimit(&stack_B, CU_LIMIT_STACK_SIZE) == CUDA_SUCCESS && stack_B < prog->info.local_B) {
        r = a->cuCtxSetLimit(CU_LIMIT_STACK_SIZE, prog->info.local_B);
        if (r != CUDA_SUCCESS)
            HCQ_LOG_WARN("cuda: cuCtxSetLimit(STACK_SIZE, %u) for %s failed (%d): the launch grows it",
                         prog->info.local_B, name, (int)r);
    }
    if (a->cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, cp->fn) == CUDA_SUCCESS && v > 0)
        prog->info.max_threads = (uint32_t)v;
    /* Above 48 KiB the driver needs the kernel's opt-in before a launch may ask for it. */
    cp->shared_dyn_B = prog->desc ? prog->desc->shared_dyn_B : 0;
    if (cp->shared_dyn_B > 48u * 1024) {
        r = a->cuFuncSetAttribute
                ? a->cuFuncSetAttribute(cp->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                        (int)cp->shared_dyn_B)
                : CUDA_ERROR_NOT_SUPPORTED;
        if (r != CUDA_SUCCESS) {
            st = cuda_fail(cd, r, "cuFuncSetAttribute(%s, MAX_DYNAMIC_SHARED_SIZE_BYTES, %u)", name,
                           cp->shared_dyn_B);
            goto fail_mod;
        }
    }
    uint32_t size = 0;
    param_layout(cd, cp->fn, &cp->nparams, &size);
    if (!prog->desc) {
        prog->info.params_B = size; /* user cubin: the cubin says how large its arguments are */
    } else if (cp->nparams >= 0 && size != prog->desc->params_B) {
        /* The built-in kernel's struct and its cubin disagree: launching would corrupt arguments. */
        st = hcq_err(HCQ_ERR_INVALID,
                     "cuda: kernel %s: cubin parameters are %u bytes in %d parameter(s) "
                     "(expected %u, the k_params.h struct)",
                     name, size, cp->nparams, prog->desc->params_B);
        goto fail_mod;
    }
    prog->info.native = true;
    prog->priv = cp;
    return HCQ_OK;

fail_mod:
    a->cuModuleUnload(cp->mod);
fail_cp:
    free(cp);
    return st;
}

static void
cuda_program_unload(struct hcq_device *dev, struct hcq_program *prog)
{
    struct cuda_device *cd = cuda_dev(dev);
    struct cuda_program *cp = prog->priv;
    if (!cp)
        return;
    cuda_ctx_enter(cd);
    if (cuda_quiesce(cd, "unloading a program"))
        cd->api->cuModuleUnload(cp->mod);
    free(cp);
    prog->priv = NULL;
}

/* ==== Device ==== */

static enum hcq_status
cuda_check(struct hcq_device *dev)
{
    struct cuda_device *cd = cuda_dev(dev);
    if (atomic_load(&dev->lost))
        return HCQ_ERR_DEVICE_LOST;
    cuda_ctx_enter(cd);
    /* Any call reports a sticky error of the context; querying an idle private stream is
     * the cheapest one that does not disturb anybody's work. */
    CUresult r = cd->api->cuStreamQuery(cd->aux);
    if (r == CUDA_SUCCESS || r == CUDA_ERROR_NOT_READY || !cuda_api_err_is_sticky(r))
        return HCQ_OK;
    return cuda_fail(cd, r, "cuStreamQuery (device check)");
}

static void
cuda_device_destroy(struct hcq_device *dev)
{
    struct cuda_device *cd = cuda_dev(dev);
    const struct cuda_api *a = cd->api;
    if (cd->ctx) {
        cuda_ctx_enter(cd);
        if (!atomic_load(&cd->wedged)) {
            if (cd->aux && !atomic_load(&dev->lost) &&
                cuda_stream_idle_wait(cd, cd->aux, HCQ_TIMEOUT_DEFAULT_NS, "aux stream") != HCQ_OK)
                HCQ_LOG_WARN("cuda: closing %s with its aux stream busy", dev->info.spec);
            cuda_helpers_unload(cd);
            if (cd->time_slot)
                a->cuMemFreeHost(cd->time_slot);
        }
        if (cd->aux)
            a->cuStreamDestroy(cd->aux);
        if (cd->capture)
            a->cuStreamDestroy(cd->capture);
        /* A wedged context keeps its reference: releasing the last one would wait for the stuck work. */
        if (!atomic_load(&cd->wedged))
            a->cuDevicePrimaryCtxRelease(cd->cudev);
        /* A sticky error outlives the last release of a primary context (a later retain
         * returns the same error); resetting it is how the driver API starts over. */
        if (atomic_load(&dev->lost) && a->cuDevicePrimaryCtxReset)
            a->cuDevicePrimaryCtxReset(cd->cudev);
    }
    pthread_mutex_destroy(&cd->aux_lock);
    pthread_mutex_destroy(&cd->capture_lock);
    free(cd);
}

/* hcq_mem_stats: the driver's free device memory (cuMemGetInfo); no pool of our own here. */
static void
cuda_mem_stats(struct hcq_device *dev, struct hcq_mem_stats *out)
{
    struct cuda_device *cd = cuda_dev(dev);
    size_t free_B = 0, total_B = 0;
    cuda_ctx_enter(cd);
    if (cd->api->cuMemGetInfo(&free_B, &total_B) == CUDA_SUCCESS)
        out->driver_free_B = free_B;
}

static const struct hcq_backend_ops cuda_ops = {
    .name = "cuda",
    .device_destroy = cuda_device_destroy,
    .buf_alloc = cuda_buf_alloc,
    .buf_free = cuda_buf_free,
    .buf_import_host = cuda_buf_import_host,
    .buf_peer_map = cuda_buf_peer_map,
    .program_load = cuda_program_load,
    .program_unload = cuda_program_unload,
    .queue_create = cuda_queue_create,
    .queue_destroy = cuda_queue_destroy,
    .queue_submit = cuda_queue_submit,
    .queue_idle_wait = cuda_queue_idle_wait,
    .graph_build = cuda_graph_build,
    .graph_replay = cuda_graph_replay,
    .graph_destroy = cuda_graph_destroy,
    .check = cuda_check,
    .device_time_ns = cuda_helpers_device_time_ns,
    .mem_stats = cuda_mem_stats,
};

static int
attr(struct cuda_device *cd, int which)
{
    int v = 0;
    if (cd->api->cuDeviceGetAttribute(&v, which, cd->cudev) != CUDA_SUCCESS)
        return 0;
    return v;
}

/* "CUDA 13.0, NVIDIA 580.159.04": the driver API version and, where the kernel module says,
 * its release (first line of /proc/driver/nvidia/version: "NVRM version: ... 580.159.04 ..."). */
static void
driver_string(struct cuda_device *cd, char *out, size_t out_B)
{
    int v = 0;
    (void)cd->api->cuDriverGetVersion(&v);
    char kmd[32] = "";
    FILE *f = fopen("/proc/driver/nvidia/version", "r");
    if (f) {
        char line[256], tok[64];
        if (fgets(line, sizeof line, f)) {
            for (char *p = line; *p; p++) {
                unsigned x, y;
                if ((p == line || p[-1] == ' ') && sscanf(p, "%u.%u", &x, &y) == 2 &&
                    sscanf(p, "%63s", tok) == 1 && strlen(tok) < sizeof kmd) {
                    snprintf(kmd, sizeof kmd, "%s", tok);
                    break;
                }
            }
        }
        fclose(f);
    }
    snprintf(out, out_B, "CUDA %d.%d%s%s", v / 1000, (v % 1000) / 10, kmd[0] ? ", NVIDIA " : "", kmd);
}

static bool
has_cubins_for(struct cuda_device *cd)
{
    for (uint32_t i = 0; hcq_cubin_at(i); i++) {
        uint32_t sm = hcq_cubin_at(i)->sm_version;
        if (sm / 10 == cd->cc_major && sm % 10 <= cd->cc_minor)
            return true;
    }
    return false;
}

/* Fill cd->base.info and the capability flags from device attributes. */
static enum hcq_status
device_query(struct cuda_device *cd)
{
    const struct cuda_api *a = cd->api;
    struct hcq_device_info *in = &cd->base.info;
    CUresult r = a->cuDeviceGetName(in->name, (int)sizeof in->name, cd->cudev);
    if (r != CUDA_SUCCESS)
        return cuda_fail(cd, r, "cuDeviceGetName");
    size_t mem_B = 0;
    if ((r = a->cuDeviceTotalMem(&mem_B, cd->cudev)) != CUDA_SUCCESS)
        return cuda_fail(cd, r, "cuDeviceTotalMem");
    cd->cc_major = (uint32_t)attr(cd, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    cd->cc_minor = (uint32_t)attr(cd, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    cd->integrated = attr(cd, CU_DEVICE_ATTRIBUTE_INTEGRATED) != 0;
    if (!attr(cd, CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY) ||
        !attr(cd, CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING))
        return hcq_err(HCQ_ERR_UNSUPPORTED,
                       "cuda:%d: %s cannot map host memory or lacks unified addressing "
                       "(signals live in mapped host memory)",
                       cd->ordinal, in->name);
    /* The v2 stream memory operations: on by default since CUDA 11.7, queried through the v2
     * attribute; HCQ_CUDA_NO_MEMOPS=1 forces the helper-kernel path (to test it). */
    const char *no = getenv("HCQ_CUDA_NO_MEMOPS");
    cd->memops64 = a->cuStreamWriteValue64 && a->cuStreamWaitValue64 &&
                   attr(cd, CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS) && !(no && *no && *no != '0');
    snprintf(in->spec, sizeof in->spec, "cuda:%d", cd->ordinal);
    snprintf(in->arch, sizeof in->arch, "sm_%u%u", cd->cc_major, cd->cc_minor);
    in->sm_version = cd->cc_major * 10 + cd->cc_minor;
    in->sm_count = (uint32_t)attr(cd, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    in->mem_B = mem_B;
    driver_string(cd, in->driver, sizeof in->driver);
    in->compute_class = 0; /* hidden behind the driver API */
    in->copy_class = 0;
    in->unified_memory = cd->integrated;
    in->has_kernels = has_cubins_for(cd);
    in->emulated = false;
    return HCQ_OK;
}

/* Device-private resources: streams for checks and graph capture, the device-clock word. */
static enum hcq_status
device_setup(struct cuda_device *cd)
{
    const struct cuda_api *a = cd->api;
    CUresult r;
    if ((r = a->cuStreamCreate(&cd->aux, CU_STREAM_NON_BLOCKING)) != CUDA_SUCCESS)
        return cuda_fail(cd, r, "cuStreamCreate(aux)");
    if ((r = a->cuStreamCreate(&cd->capture, CU_STREAM_NON_BLOCKING)) != CUDA_SUCCESS)
        return cuda_fail(cd, r, "cuStreamCreate(capture)");
    void *p = NULL;
    if ((r = a->cuMemHostAlloc(&p, 64, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP)) != CUDA_SUCCESS)
        return cuda_fail(cd, r, "cuMemHostAlloc(clock word)");
    cd->time_slot = p;
    if ((r = a->cuMemHostGetDevicePointer(&cd->time_slot_va, p, 0)) != CUDA_SUCCESS)
        return cuda_fail(cd, r, "cuMemHostGetDevicePointer(clock word)");
    return HCQ_OK;
}

static enum hcq_status
parse_ordinal(const char *arg, int *ordinal_out)
{
    char *end = NULL;
    long n = (arg && *arg) ? strtol(arg, &end, 10) : 0;
    if ((arg && *arg && *end) || n < 0 || n > 255)
        return hcq_err(HCQ_ERR_INVALID, "cuda: device '%s' (expected cuda:N, N a GPU ordinal)", arg);
    *ordinal_out = (int)n;
    return HCQ_OK;
}

enum hcq_status
hcq_cuda_open(const char *arg, struct hcq_device **dev_out)
{
    const struct cuda_api *a = NULL;
    int ordinal = 0, count = 0;
    *dev_out = NULL;
    enum hcq_status st = parse_ordinal(arg, &ordinal);
    if (st != HCQ_OK)
        return st;
    /* Streams share the GPU's hardware work queues round-robin (8 by default); a stream
     * waiting on a signal that a stream on the same queue must produce would deadlock.
     * Ask for the maximum (32) unless the user chose; read by the driver at cuInit. */
    setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", 0);
    /* Lazy loading (the default since CUDA 12.2) loads a kernel at its first launch, which
     * may wait for the whole context to idle: a launch queued behind a stream blocked on a
     * host signal then deadlocks ("CUDA Lazy Loading", concurrent execution). Load eagerly
     * at hcq_program_load instead, where we can bound the wait. */
    setenv("CUDA_MODULE_LOADING", "EAGER", 0);
    if ((st = cuda_api_load(&a)) != HCQ_OK)
        return st;
    CUresult r = a->cuInit(0);
    if (r != CUDA_SUCCESS) /* no GPU, no kernel module, stub library: absent, not broken */
        return hcq_err_quiet(HCQ_ERR_NOT_FOUND, "cuda: cuInit: %s", cuda_api_err_name(r));
    if ((r = a->cuDeviceGetCount(&count)) != CUDA_SUCCESS || ordinal >= count)
        return hcq_err_quiet(HCQ_ERR_NOT_FOUND, "cuda:%d: no such GPU (%d present)", ordinal, count);

    struct cuda_device *cd = calloc(1, sizeof *cd);
    if (!cd)
        return hcq_err(HCQ_ERR_NOMEM, "cuda: out of host memory");
    cd->api = a;
    cd->ordinal = ordinal;
    if (pthread_mutex_init(&cd->aux_lock, NULL) != 0 || pthread_mutex_init(&cd->capture_lock, NULL) != 0) {
        free(cd);
        return hcq_err(HCQ_ERR_NOMEM, "cuda: pthread_mutex_init failed");
    }
    if ((st = hcq_device_init_base(&cd->base, &cuda_ops)) != HCQ_OK)
        goto fail_dev;
    snprintf(cd->base.info.spec, sizeof cd->base.info.spec, "cuda:%d", ordinal);
    if ((r = a->cuDeviceGet(&cd->cudev, ordinal)) != CUDA_SUCCESS) {
        st = hcq_err_quiet(HCQ_ERR_NOT_FOUND, "cuda:%d: cuDeviceGet: %s", ordinal, cuda_api_err_name(r));
        goto fail_base;
    }
    r = a->cuDevicePrimaryCtxRetain(&cd->ctx, cd->cudev);
    if (cuda_api_err_is_sticky(r) && a->cuDevicePrimaryCtxReset) {
        /* left faulted by an earlier device in this process: start over with a fresh context */
        HCQ_LOG_WARN("cuda:%d: primary context faulted earlier (%s); resetting it", ordinal,
                     cuda_api_err_name(r));
        if (a->cuDevicePrimaryCtxReset(cd->cudev) == CUDA_SUCCESS)
            r = a->cuDevicePrimaryCtxRetain(&cd->ctx, cd->cudev);
    }
    if (r != CUDA_SUCCESS) {
        cd->ctx = NULL;
        if (cuda_api_err_is_sticky(r))
            st = hcq_err(
                HCQ_ERR_DEVICE_LOST,
                "cuda:%d: CUDA faulted earlier in this process (%s); the driver API cannot recover from "
                "that inside a process (its documentation: the process must be terminated and relaunched)",
                ordinal, cuda_api_err_name(r));
        else
            st = cuda_fail(cd, r, "cuDevicePrimaryCtxRetain(%d)", ordinal);
        goto fail_base;
    }
    cuda_ctx_enter(cd);
    if ((st = device_query(cd)) != HCQ_OK || (st = device_setup(cd)) != HCQ_OK)
        goto fail_base;
    /* The helper kernels are compiled now, before any queue exists: loading a module
     * waits for the device to idle, so a first timestamp behind a queue blocked on a host
     * signal would deadlock the host thread that is to set it. */
    if (cuda_helpers_load(cd) != HCQ_OK)
        HCQ_LOG_WARN("cuda:%d: helper kernels unavailable (%s): timestamps and graph signals will fail",
                     ordinal, hcq_last_error());
    HCQ_LOG_INFO("cuda:%d: %s, %s, %u SMs, %s, stream memops %s", ordinal, cd->base.info.name,
                 cd->base.info.arch, cd->base.info.sm_count, cd->base.info.driver,
                 cd->memops64 ? "v2 64-bit" : "helper kernels");
    *dev_out = &cd->base;
    return HCQ_OK;

fail_base:
    pthread_mutex_destroy(&cd->base.lock);
    cuda_device_destroy(&cd->base); /* accepts a partial device; frees cd */
    return st;
fail_dev:
    pthread_mutex_destroy(&cd->aux_lock);
    pthread_mutex_destroy(&cd->capture_lock);
    free(cd);
    return st;
}
