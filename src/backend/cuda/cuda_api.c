/* SPDX-License-Identifier: MIT */
/*
 * cuda_api.c - loads the CUDA driver library at run time (dlopen("libcuda.so.1"), the
 * driver's own soname, so nothing links against CUDA) and resolves the entry points of
 * cuda_api.h; names CUresults for messages. Layer: backend.
 */
#include "cuda_api.h"
#include "util_log.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

static struct cuda_api api;
static enum hcq_status api_status;
static char api_why[256];
static pthread_once_t api_once = PTHREAD_ONCE_INIT;

static void
api_load_once(void)
{
    api.lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!api.lib) {
        const char *e = dlerror();
        snprintf(api_why, sizeof api_why, "dlopen(libcuda.so.1): %s", e ? e : "not found");
        api_status = HCQ_ERR_NOT_FOUND;
        return;
    }
    /* Resolve every member; a missing required one means a driver too old for us. */
#define CUDA_API_RESOLVE(req, name, sym, params)                                                             \
    do {                                                                                                     \
        void *p_ = dlsym(api.lib, sym);                                                                      \
        *(void **)&api.name = p_;                                                                            \
        if (!p_ && (req) && api_status == HCQ_OK) {                                                          \
            snprintf(api_why, sizeof api_why, "libcuda.so.1 has no %s (driver too old?)", sym);              \
            api_status = HCQ_ERR_DRIVER;                                                                     \
        }                                                                                                    \
    } while (0);
    CUDA_API_ENTRIES(CUDA_API_RESOLVE)
#undef CUDA_API_RESOLVE
    if (api_status != HCQ_OK) {
        dlclose(api.lib);
        api.lib = NULL;
    }
}

enum hcq_status
cuda_api_load(const struct cuda_api **api_out)
{
    *api_out = NULL;
    pthread_once(&api_once, api_load_once);
    if (api_status == HCQ_ERR_NOT_FOUND)
        return hcq_err_quiet(HCQ_ERR_NOT_FOUND, "cuda: %s", api_why);
    if (api_status != HCQ_OK)
        return hcq_err(api_status, "cuda: %s", api_why);
    *api_out = &api;
    return HCQ_OK;
}

const char *
cuda_api_err_name(CUresult r)
{
    static _Thread_local char buf[96];
    const char *name = NULL;
    if (!api.cuGetErrorName || api.cuGetErrorName(r, &name) != CUDA_SUCCESS || !name)
        name = "CUDA_ERROR_?";
    snprintf(buf, sizeof buf, "%s (%d)", name, (int)r);
    return buf;
}

/* The results after which a CUDA context is unusable ("sticky" errors in the CUDA Driver
 * API reference, Error Handling: the context must be destroyed). Values in cuda_api.h. */
int
cuda_api_err_is_sticky(CUresult r)
{
    switch (r) {
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_UNKNOWN:
        return 1;
    default:
        return 0;
    }
}
