/* SPDX-License-Identifier: MIT */
/*
 * cuda_priv.h - objects of the cuda backend (the CUDA driver API as an hcq backend,
 * ARCHITECTURE §2 "queue level"), shared by cuda_dev.c (device, memory, programs),
 * cuda_queue.c (streams, commands, graphs) and cuda_helpers.c (the helper kernels).
 * Layer: backend.
 *
 * Mapping: a device is a CUDA primary context; a queue is a non-blocking CUstream; a
 * signal is the core's 16-byte slot in cuMemHostAlloc'd memory, written and waited on by
 * cuStreamWriteValue64/cuStreamWaitValue64 (or by the helper kernels of cuda_helpers.c where
 * those are missing, and always inside graphs, whose kernel nodes can be re-parameterised);
 * a timestamp is %globaltimer written by a helper kernel; a graph is a CUDA graph captured
 * from the command list, its variable-dependent kernel nodes updated on replay.
 */
#ifndef CUDA_PRIV_H
#define CUDA_PRIV_H

#include "cuda_api.h"
#include "hcq_priv.h"

enum cuda_buf_kind {
    CUDA_BUF_DEVICE = 1,  /* cuMemAlloc: va only */
    CUDA_BUF_HOST,        /* cuMemHostAlloc(PORTABLE | DEVICEMAP): map + its device address */
    CUDA_BUF_REGISTERED,  /* cuMemHostRegister of caller memory */
    CUDA_BUF_PEER_DEVICE, /* another cuda device's cuMemAlloc, reached by peer access (not owned) */
    CUDA_BUF_PEER_HOST,   /* another cuda device's portable pinned memory (not owned) */
};

struct cuda_device {
    struct hcq_device base;
    const struct cuda_api *api;
    CUdevice cudev;
    CUcontext ctx; /* the device's primary context (shared with the CUDA runtime) */
    int ordinal;
    uint32_t cc_major, cc_minor; /* compute capability */
    bool integrated;             /* Tegra: device memory is system memory */
    bool memops64;               /* cuStreamWriteValue64/WaitValue64 (v2) usable */
    atomic_bool wedged;          /* a stream was abandoned busy: skip calls that would sync on it */

    pthread_mutex_t aux_lock;     /* guards aux and the helper module */
    pthread_mutex_t capture_lock; /* guards capture */
    CUstream aux;                 /* device_time_ns, check() */
    CUstream capture;             /* graph builds are captured here, never executed */
    bool helpers_loaded;
    bool helpers_failed; /* the one load attempt (at open) failed */
    CUmodule helpers;
    CUfunction fn_signal, fn_wait, fn_timestamp;
    uint64_t *time_slot; /* pinned host word for device_time_ns */
    CUdeviceptr time_slot_va;
};

struct cuda_program {
    CUmodule mod;
    CUfunction fn;
    int nparams;           /* kernel parameters per cuFuncGetParamInfo, -1 if unknown */
    uint32_t shared_dyn_B; /* dynamic shared memory of every launch (hcq_kernel_desc) */
};

struct cuda_queue {
    CUstream stream;
    uint8_t *scratch; /* patched argument blobs */
    uint32_t scratch_B;
};

static inline struct cuda_device *
cuda_dev(struct hcq_device *dev)
{
    return hcq_container_of(dev, struct cuda_device, base);
}

/* Make the device's context current on the calling thread (CUDA contexts are per thread). */
void cuda_ctx_enter(struct cuda_device *cd);

/* Turn a failed CUresult into a status with a message: sticky errors mark the device lost,
 * CUDA_ERROR_OUT_OF_MEMORY is HCQ_ERR_NOMEM, anything else HCQ_ERR_DRIVER. */
enum hcq_status cuda_fail_at(const char *file, int line, const char *func, struct cuda_device *cd, CUresult r,
                             const char *fmt, ...) HCQ_PRINTF(6, 7);
#define cuda_fail(cd, r, ...) cuda_fail_at(__FILE__, __LINE__, __func__, (cd), (r), __VA_ARGS__)

/* Wait (bounded) until every stream of the device is idle; false (and the device marked
 * wedged) if one stays busy. Freeing memory and unloading modules synchronise with the
 * whole device inside the driver, which would block forever behind a stream stuck on a
 * wait that is never satisfied; callers skip the call (and leak) when this fails. */
bool cuda_quiesce(struct cuda_device *cd, const char *why);
/* Bounded wait for every queue of the device to be idle: HCQ_OK or HCQ_ERR_TIMEOUT. */
HCQ_MUST_CHECK enum hcq_status cuda_idle_all(struct cuda_device *cd, uint64_t timeout_ns, const char *why);

/* cuda_helpers.c: load the helper kernels once (JIT of our PTX); HCQ_OK when usable. */
HCQ_MUST_CHECK enum hcq_status cuda_helpers_load(struct cuda_device *cd);
void cuda_helpers_unload(struct cuda_device *cd);
/* Enqueue helper kernels on s (helpers must be loaded). */
CUresult cuda_helpers_signal(struct cuda_device *cd, CUstream s, CUdeviceptr addr, uint64_t value);
CUresult cuda_helpers_wait(struct cuda_device *cd, CUstream s, CUdeviceptr addr, uint64_t value);
CUresult cuda_helpers_timestamp(struct cuda_device *cd, CUstream s, CUdeviceptr addr);
/* Device clock (ns, %globaltimer) read by a helper kernel on the aux stream. */
uint64_t cuda_helpers_device_time_ns(struct hcq_device *dev);

/* cuda_queue.c: the queue and graph members of the backend table. */
enum hcq_status cuda_queue_create(struct hcq_device *dev, struct hcq_queue *q);
void cuda_queue_destroy(struct hcq_queue *q);
enum hcq_status cuda_queue_submit(struct hcq_queue *q, const struct hcq_cmdlist *cl, const uint64_t *vars);
enum hcq_status cuda_queue_idle_wait(struct hcq_queue *q, uint64_t timeout_ns);
enum hcq_status cuda_graph_build(struct hcq_graph *g);
enum hcq_status cuda_graph_replay(struct hcq_graph *g);
void cuda_graph_destroy(struct hcq_graph *g);
/* Wait (bounded, with backoff) until stream s has drained. */
HCQ_MUST_CHECK enum hcq_status cuda_stream_idle_wait(struct cuda_device *cd, CUstream s, uint64_t timeout_ns,
                                                     const char *what);

#endif /* CUDA_PRIV_H */
