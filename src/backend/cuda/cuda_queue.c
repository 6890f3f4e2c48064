/* SPDX-License-Identifier: MIT */
/*
 * cuda_queue.c - queues of the cuda backend: each hcq queue is one non-blocking CUstream;
 * a command list becomes cuLaunchKernel / cuMemcpy*Async / cuStreamWriteValue64 /
 * cuStreamWaitValue64 calls in order; a graph is a CUDA graph captured from its command
 * list once, whose variable-dependent kernel nodes are re-parameterised in the
 * instantiated graph before each replay (cuGraphExecKernelNodeSetParams), so a replay with
 * new values costs one update per changed node plus one cuGraphLaunch. Layer: backend.
 */
#include "cuda_priv.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ==== Waiting ==== */

enum hcq_status
cuda_stream_idle_wait(struct cuda_device *cd, CUstream s, uint64_t timeout_ns, const char *what)
{
    uint64_t start = hcq_time_ns();
    for (uint32_t spins = 0;; spins++) {
        CUresult r = cd->api->cuStreamQuery(s);
        if (r == CUDA_SUCCESS)
            return HCQ_OK;
        if (r != CUDA_ERROR_NOT_READY)
            return cuda_fail(cd, r, "cuStreamQuery(%s)", what);
        if (atomic_load(&cd->base.lost))
            return hcq_err(HCQ_ERR_DEVICE_LOST, "%s is lost: %s", cd->base.info.spec, cd->base.fault);
        uint64_t now = hcq_time_ns();
        if (now - start >= timeout_ns)
            return hcq_err(HCQ_ERR_TIMEOUT, "cuda: %s still busy after %.3f ms", what, (now - start) / 1e6);
        /* A launch round trip is ~10 us: poll hot first, then yield, then sleep. */
        if (spins < 2000)
            continue;
        if (spins < 3000) {
            sched_yield();
            continue;
        }
        struct timespec ts = {0, spins < 10000 ? 20000 : 200000};
        nanosleep(&ts, NULL);
    }
}

/* ==== Queues ==== */

enum hcq_status
cuda_queue_create(struct hcq_device *dev, struct hcq_queue *q)
{
    struct cuda_device *cd = cuda_dev(dev);
    struct cuda_queue *cq = calloc(1, sizeof *cq);
    if (!cq)
        return hcq_err(HCQ_ERR_NOMEM, "cuda: queue: out of host memory");
    cuda_ctx_enter(cd);
    /* Non-blocking: no implicit synchronisation with the legacy NULL stream, so other code
     * in the process (cuBLAS on the default stream) does not serialise with our queues. */
    CUresult r = cd->api->cuStreamCreate(&cq->stream, CU_STREAM_NON_BLOCKING);
    if (r != CUDA_SUCCESS) {
        free(cq);
        return cuda_fail(cd, r, "cuStreamCreate");
    }
    q->priv = cq;
    return HCQ_OK;
}

void
cuda_queue_destroy(struct hcq_queue *q)
{
    struct cuda_device *cd = cuda_dev(q->dev);
    struct cuda_queue *cq = q->priv;
    if (!cq)
        return;
    cuda_ctx_enter(cd);
    CUresult r = cd->api->cuStreamQuery(cq->stream);
    if (r == CUDA_ERROR_NOT_READY && !atomic_exchange(&cd->wedged, true))
        HCQ_LOG_WARN("cuda: queue destroyed with work still pending (a wait never satisfied?); "
                     "leaking %s's memory instead of blocking in the driver",
                     q->dev->info.spec);
    cd->api->cuStreamDestroy(cq->stream); /* returns at once; the driver retires it when idle */
    free(cq->scratch);
    free(cq);
    q->priv = NULL;
}

enum hcq_status
cuda_queue_idle_wait(struct hcq_queue *q, uint64_t timeout_ns)
{
    struct cuda_device *cd = cuda_dev(q->dev);
    struct cuda_queue *cq = q->priv;
    cuda_ctx_enter(cd);
    return cuda_stream_idle_wait(cd, cq->stream, timeout_ns, "queue");
}

/* ==== Commands ==== */

static void *
scratch(struct cuda_queue *cq, uint32_t size_B)
{
    if (size_B > cq->scratch_B) {
        uint8_t *n = realloc(cq->scratch, size_B);
        if (!n)
            return NULL;
        cq->scratch = n;
        cq->scratch_B = size_B;
    }
    return cq->scratch;
}

/* Launch f with the argument blob: one struct parameter by value (our kernels, STYLE 2.7)
 * goes as kernelParams[0]; a kernel with several parameters gets the blob as its whole
 * parameter buffer (CU_LAUNCH_PARAM_BUFFER_POINTER/SIZE in `extra`, [DT]). */
static CUresult
launch(struct cuda_device *cd, CUstream s, const struct cuda_program *cp, const uint32_t grid[3],
       const uint32_t block[3], void *args, uint32_t args_B, uint32_t flags)
{
    void *params[1] = {args};
    size_t size = args_B;
    void *extra[5] = {(void *)(uintptr_t)0x01 /* CU_LAUNCH_PARAM_BUFFER_POINTER */, args,
                      (void *)(uintptr_t)0x02 /* CU_LAUNCH_PARAM_BUFFER_SIZE */, &size,
                      (void *)(uintptr_t)0x00 /* CU_LAUNCH_PARAM_END */};
    bool none = args_B == 0 || cp->nparams == 0;
    bool one = !none && cp->nparams <= 1; /* -1 (unknown): our one-struct convention */
    /* HCQ_LAUNCH_DEP_WAIT: programmatic stream serialization (the kernel's griddepcontrol.wait
     * orders it; a driver without cuLaunchKernelEx: plain stream order) */
    if ((flags & HCQ_LAUNCH_DEP_WAIT) && cd->api->cuLaunchKernelEx) {
        CUlaunchAttribute attr = {.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION};
        attr.value.programmaticStreamSerializationAllowed = 1;
        CUlaunchConfig cfg = {.gridDimX = grid[0],
                              .gridDimY = grid[1],
                              .gridDimZ = grid[2],
                              .blockDimX = block[0],
                              .blockDimY = block[1],
                              .blockDimZ = block[2],
                              .sharedMemBytes = cp->shared_dyn_B,
                              .hStream = s,
                              .attrs = &attr,
                              .numAttrs = 1};
        return cd->api->cuLaunchKernelEx(&cfg, cp->fn, one ? params : NULL, (none || one) ? NULL : extra);
    }
    return cd->api->cuLaunchKernel(cp->fn, grid[0], grid[1], grid[2], block[0], block[1], block[2],
                                   cp->shared_dyn_B, s, one ? params : NULL, (none || one) ? NULL : extra);
}

static CUresult
copy(struct cuda_device *cd, CUstream s, const struct hcq_cmd *c, const uint64_t *vars)
{
    const struct cuda_api *a = cd->api;
    struct hcq_buf *dst = c->u.copy.dst, *src = c->u.copy.src;
    enum cuda_buf_kind dk = (enum cuda_buf_kind)(uintptr_t)dst->priv,
                       sk = (enum cuda_buf_kind)(uintptr_t)src->priv;
    bool dst_dev = dk == CUDA_BUF_DEVICE || dk == CUDA_BUF_PEER_DEVICE;
    bool src_dev = sk == CUDA_BUF_DEVICE || sk == CUDA_BUF_PEER_DEVICE;
    uint64_t doff, soff, size;
    hcq_cmd_copy_resolve(c, vars, &doff, &soff, &size);
    CUdeviceptr dva = dst->va + doff, sva = src->va + soff;
    size_t n = size;
    if (n == 0)
        return CUDA_SUCCESS;
    if (dst_dev && src_dev)
        return a->cuMemcpyDtoDAsync(dva, sva, n, s);
    if (dst_dev)
        return a->cuMemcpyHtoDAsync(dva, (const uint8_t *)src->map + soff, n, s);
    if (src_dev)
        return a->cuMemcpyDtoHAsync((uint8_t *)dst->map + doff, sva, n, s);
    return a->cuMemcpyAsync(dva, sva, n, s); /* pinned to pinned: unified addresses */
}

/* Enqueue command c on s. In graph mode (capturing) signals and waits use the helper
 * kernels, whose nodes replay can update; otherwise the stream memory operations. */
static enum hcq_status
emit(struct cuda_device *cd, struct cuda_queue *cq, CUstream s, const struct hcq_cmdlist *cl,
     const struct hcq_cmd *c, const uint64_t *vars, bool graph)
{
    const struct cuda_api *a = cd->api;
    CUresult r = CUDA_SUCCESS;
    bool helper = graph || !cd->memops64;
    bool sig = c->kind == HCQ_CMD_SIGNAL || c->kind == HCQ_CMD_WAIT;
    if ((helper && sig) || c->kind == HCQ_CMD_TIMESTAMP) { /* timestamps are always a helper kernel */
        enum hcq_status st = cuda_helpers_load(cd);
        if (st != HCQ_OK)
            return st;
    }
    switch (c->kind) {
    case HCQ_CMD_LAUNCH: {
        uint32_t grid[3];
        hcq_cmd_launch_grid(c, vars, grid);
        for (int i = 0; i < 3; i++)
            if (grid[i] == 0) /* a grid variable not set yet (graph build): replay sets it */
                grid[i] = 1;
        void *args = cl->args + c->u.launch.args_off_B;
        if (vars && c->u.launch.patch_count) {
            if (!(args = scratch(cq, c->u.launch.args_B)))
                return hcq_err(HCQ_ERR_NOMEM, "cuda: launch: out of host memory for arguments");
            hcq_cmd_launch_args(cl, c, vars, args);
        }
        r = launch(cd, s, c->u.launch.prog->priv, grid, c->u.launch.block, args, c->u.launch.args_B,
                   c->u.launch.flags);
        if (r != CUDA_SUCCESS)
            return cuda_fail(cd, r, "cuLaunchKernel(%s, grid %ux%ux%u, block %ux%ux%u)",
                             c->u.launch.prog->info.name, grid[0], grid[1], grid[2], c->u.launch.block[0],
                             c->u.launch.block[1], c->u.launch.block[2]);
        return HCQ_OK;
    }
    case HCQ_CMD_COPY:
        if ((r = copy(cd, s, c, vars)) != CUDA_SUCCESS)
            return cuda_fail(cd, r, "cuMemcpy*Async(%llu bytes)", (unsigned long long)c->u.copy.size_B);
        return HCQ_OK;
    case HCQ_CMD_SIGNAL: {
        uint64_t v = hcq_cmd_value(c->u.sig.var, c->u.sig.add, vars);
        r = helper ? cuda_helpers_signal(cd, s, c->u.sig.sig->va, v)
                   : a->cuStreamWriteValue64(s, c->u.sig.sig->va, v, CU_STREAM_WRITE_VALUE_DEFAULT);
        if (r != CUDA_SUCCESS)
            return cuda_fail(cd, r, "signal 0x%llx <- %llu", (unsigned long long)c->u.sig.sig->va,
                             (unsigned long long)v);
        return HCQ_OK;
    }
    case HCQ_CMD_WAIT: {
        uint64_t v = hcq_cmd_value(c->u.sig.var, c->u.sig.add, vars);
        r = helper ? cuda_helpers_wait(cd, s, c->u.sig.sig->va, v)
                   : a->cuStreamWaitValue64(s, c->u.sig.sig->va, v, CU_STREAM_WAIT_VALUE_GEQ);
        if (r != CUDA_SUCCESS)
            return cuda_fail(cd, r, "wait 0x%llx >= %llu", (unsigned long long)c->u.sig.sig->va,
                             (unsigned long long)v);
        return HCQ_OK;
    }
    case HCQ_CMD_TIMESTAMP:
        if ((r = cuda_helpers_timestamp(cd, s, c->u.ts.sig->va + 8)) != CUDA_SUCCESS)
            return cuda_fail(cd, r, "timestamp 0x%llx", (unsigned long long)c->u.ts.sig->va + 8);
        return HCQ_OK;
    case HCQ_CMD_BARRIER:
        /* Work on one stream runs in order and a kernel's or copy's writes are visible to
         * everything after it once it completes; the signal write is ordered after all
         * earlier writes (CU_STREAM_WRITE_VALUE_DEFAULT / the helper's fence.sc.sys). */
        return HCQ_OK;
    }
    return hcq_err(HCQ_ERR_INVALID, "cuda: unknown command kind %d", (int)c->kind);
}

enum hcq_status
cuda_queue_submit(struct hcq_queue *q, const struct hcq_cmdlist *cl, const uint64_t *vars)
{
    struct cuda_device *cd = cuda_dev(q->dev);
    struct cuda_queue *cq = q->priv;
    cuda_ctx_enter(cd);
    for (uint32_t i = 0; i < cl->count; i++) {
        enum hcq_status st = emit(cd, cq, cq->stream, cl, &cl->cmds[i], vars, false);
        if (st != HCQ_OK)
            return st;
    }
    return HCQ_OK;
}

/* ==== Graphs ==== */

/* A kernel node whose arguments, grid or signal value depend on graph variables. */
struct cuda_gnode {
    uint32_t cmd; /* index into the graph's command list */
    CUgraphNode node;
    bool dirty;          /* never applied: update at the next replay */
    uint32_t grid[3];    /* LAUNCH: last applied */
    uint32_t args_off_B; /* LAUNCH: last applied arguments, in cuda_graph.last_args */
    uint64_t value;      /* SIGNAL, WAIT: last applied */
};

struct cuda_graph {
    CUgraph graph;
    CUgraphExec exec; /* NULL when the list produced no node (only barriers) */
    struct cuda_gnode *nodes;
    uint32_t count;
    uint8_t *last_args;
};

static bool
cmd_is_variable(const struct hcq_cmd *c)
{
    if (c->kind == HCQ_CMD_LAUNCH)
        return c->u.launch.patch_count || c->u.launch.grid_var[0] != HCQ_VAR_NONE ||
               c->u.launch.grid_var[1] != HCQ_VAR_NONE || c->u.launch.grid_var[2] != HCQ_VAR_NONE;
    if (c->kind == HCQ_CMD_SIGNAL || c->kind == HCQ_CMD_WAIT)
        return c->u.sig.var != HCQ_VAR_NONE;
    return false;
}

/* The node the last captured operation on s became: the capture's current dependency set. */
static CUresult
captured_node(struct cuda_device *cd, CUstream s, CUgraphNode *node_out)
{
    const struct cuda_api *a = cd->api;
    int status = 0;
    uint64_t id = 0;
    CUgraph graph = NULL;
    const CUgraphNode *deps = NULL;
    const CUgraphEdgeData *edges = NULL;
    size_t n = 0;
    CUresult r = a->cuStreamGetCaptureInfo_v3
                     ? a->cuStreamGetCaptureInfo_v3(s, &status, &id, &graph, &deps, &edges, &n)
                     : a->cuStreamGetCaptureInfo_v2(s, &status, &id, &graph, &deps, &n);
    if (r != CUDA_SUCCESS)
        return r;
    if (status != CU_STREAM_CAPTURE_STATUS_ACTIVE || n != 1)
        return CUDA_ERROR_INVALID_VALUE;
    *node_out = deps[0];
    return CUDA_SUCCESS;
}

static void
graph_free(struct cuda_device *cd, struct cuda_graph *cg)
{
    if (cg->exec)
        cd->api->cuGraphExecDestroy(cg->exec);
    if (cg->graph)
        cd->api->cuGraphDestroy(cg->graph);
    free(cg->nodes);
    free(cg->last_args);
    free(cg);
}

/* Capture the command list on the device's capture stream, remembering the variable nodes. */
static enum hcq_status
graph_capture(struct cuda_device *cd, struct hcq_graph *g, struct cuda_graph *cg)
{
    const struct cuda_api *a = cd->api;
    const struct hcq_cmdlist *cl = &g->cl;
    struct cuda_queue *cq = g->q->priv;
    uint32_t args_B = 0;
    enum hcq_status st = HCQ_OK;
    CUresult r = a->cuStreamBeginCapture(cd->capture, CU_STREAM_CAPTURE_MODE_RELAXED);
    if (r != CUDA_SUCCESS)
        return cuda_fail(cd, r, "cuStreamBeginCapture");
    for (uint32_t i = 0; i < cl->count && st == HCQ_OK; i++) {
        const struct hcq_cmd *c = &cl->cmds[i];
        if ((st = emit(cd, cq, cd->capture, cl, c, g->vars, true)) != HCQ_OK || !cmd_is_variable(c))
            continue;
        struct cuda_gnode *n = &cg->nodes[cg->count++];
        n->cmd = i;
        n->dirty = true;
        if (c->kind == HCQ_CMD_LAUNCH) {
            n->args_off_B = args_B;
            args_B += (c->u.launch.args_B + 15u) & ~15u;
        }
        if ((r = captured_node(cd, cd->capture, &n->node)) != CUDA_SUCCESS)
            st = cuda_fail(cd, r, "cuStreamGetCaptureInfo (node of command %u)", i);
    }
    CUgraph graph = NULL;
    r = a->cuStreamEndCapture(cd->capture, &graph);
    if (st != HCQ_OK) {
        if (graph)
            a->cuGraphDestroy(graph);
        return st;
    }
    if (r != CUDA_SUCCESS)
        return cuda_fail(cd, r, "cuStreamEndCapture");
    cg->graph = graph;
    if (args_B && !(cg->last_args = malloc(args_B)))
        return hcq_err(HCQ_ERR_NOMEM, "cuda: graph: out of host memory");
    return HCQ_OK;
}

enum hcq_status
cuda_graph_build(struct hcq_graph *g)
{
    struct cuda_device *cd = cuda_dev(g->q->dev);
    const struct cuda_api *a = cd->api;
    if (!a->cuGraphExecKernelNodeSetParams_v2 && !a->cuGraphExecKernelNodeSetParams_v1) {
        HCQ_LOG_WARN("cuda: driver cannot update graph nodes; graphs replay as plain submissions");
        return HCQ_OK; /* g->priv stays NULL: core replays through queue_submit */
    }
    if (!a->cuStreamGetCaptureInfo_v3 && !a->cuStreamGetCaptureInfo_v2) {
        HCQ_LOG_WARN("cuda: driver lacks cuStreamGetCaptureInfo; graphs replay as plain submissions");
        return HCQ_OK;
    }
    if (g->copy_vars) {
        /* Copy nodes with patchable addresses would need cuGraphExecMemcpyNodeSetParams and
         * the copy's 3-D descriptor; not wired yet: such graphs replay as plain submissions
         * (each replay enqueues the copies with the current values: correct, slower). */
        HCQ_LOG_DEBUG("cuda: graph with variable copies replays as plain submissions");
        return HCQ_OK;
    }
    struct cuda_graph *cg = calloc(1, sizeof *cg);
    if (!cg || !(cg->nodes = calloc(g->cl.count, sizeof *cg->nodes))) {
        free(cg);
        return hcq_err(HCQ_ERR_NOMEM, "cuda: graph: out of host memory");
    }
    enum hcq_status st = HCQ_OK;
    for (uint32_t i = 0; i < g->cl.count && st == HCQ_OK; i++)
        if (g->cl.cmds[i].kind >= HCQ_CMD_SIGNAL && g->cl.cmds[i].kind <= HCQ_CMD_TIMESTAMP)
            st = cuda_helpers_load(cd); /* before capturing: a module load is no stream work */
    if (st != HCQ_OK) {
        graph_free(cd, cg);
        return st;
    }
    pthread_mutex_lock(&cd->capture_lock); /* one capture at a time on the device's capture stream */
    cuda_ctx_enter(cd);
    st = graph_capture(cd, g, cg);
    pthread_mutex_unlock(&cd->capture_lock);
    if (st == HCQ_OK) {
        CUresult r = a->cuGraphInstantiateWithFlags(&cg->exec, cg->graph, 0);
        if (r != CUDA_SUCCESS) {
            cg->exec = NULL;
            st = cuda_fail(cd, r, "cuGraphInstantiateWithFlags (%u commands)", g->cl.count);
        }
    }
    if (st != HCQ_OK) {
        graph_free(cd, cg);
        if (st == HCQ_ERR_DEVICE_LOST || st == HCQ_ERR_NOMEM)
            return st;
        /* The commands were valid when recorded, so a capture the driver refuses is our
         * limitation, not the caller's: replay them as plain submissions (correct, slower). */
        HCQ_LOG_WARN("cuda: graph of %u commands not captured (%s); it replays as plain submissions",
                     g->cl.count, hcq_last_error());
        return HCQ_OK;
    }
    g->priv = cg;
    return HCQ_OK;
}

static CUresult
node_update(struct cuda_device *cd, CUgraphExec exec, CUgraphNode node, const CUDA_KERNEL_NODE_PARAMS_v2 *p)
{
    if (cd->api->cuGraphExecKernelNodeSetParams_v2)
        return cd->api->cuGraphExecKernelNodeSetParams_v2(exec, node, p);
    return cd->api->cuGraphExecKernelNodeSetParams_v1(exec, node, p);
}

/* Re-parameterise one variable launch node if its arguments or grid changed. */
static CUresult
update_launch(struct cuda_device *cd, struct cuda_graph *cg, struct cuda_gnode *n,
              const struct hcq_cmdlist *cl, const struct hcq_cmd *c, const uint64_t *vars, uint8_t *args)
{
    uint32_t grid[3];
    hcq_cmd_launch_grid(c, vars, grid);
    hcq_cmd_launch_args(cl, c, vars, args);
    uint8_t *last = cg->last_args + n->args_off_B;
    uint32_t args_B = c->u.launch.args_B;
    if (!n->dirty && !memcmp(grid, n->grid, sizeof grid) && !memcmp(args, last, args_B))
        return CUDA_SUCCESS;
    const struct cuda_program *cp = c->u.launch.prog->priv;
    void *params[1] = {args};
    size_t size = args_B;
    void *extra[5] = {(void *)(uintptr_t)0x01, args, (void *)(uintptr_t)0x02, &size, (void *)(uintptr_t)0x00};
    bool none = args_B == 0 || cp->nparams == 0, one = !none && cp->nparams <= 1;
    CUDA_KERNEL_NODE_PARAMS_v2 p = {
        .func = cp->fn,
        .gridDimX = grid[0],
        .gridDimY = grid[1],
        .gridDimZ = grid[2],
        .blockDimX = c->u.launch.block[0],
        .blockDimY = c->u.launch.block[1],
        .blockDimZ = c->u.launch.block[2],
        .sharedMemBytes = cp->shared_dyn_B,
        .kernelParams = one ? params : NULL,
        .extra = (none || one) ? NULL : extra,
    };
    CUresult r = node_update(cd, cg->exec, n->node, &p);
    if (r == CUDA_SUCCESS) {
        memcpy(n->grid, grid, sizeof grid);
        memcpy(last, args, args_B);
        n->dirty = false;
    }
    return r;
}

static CUresult
update_sig(struct cuda_device *cd, struct cuda_graph *cg, struct cuda_gnode *n, const struct hcq_cmd *c,
           const uint64_t *vars)
{
    uint64_t v = hcq_cmd_value(c->u.sig.var, c->u.sig.add, vars);
    if (!n->dirty && v == n->value)
        return CUDA_SUCCESS;
    CUdeviceptr addr = c->u.sig.sig->va;
    void *params[2] = {&addr, &v};
    CUDA_KERNEL_NODE_PARAMS_v2 p = {
        .func = c->kind == HCQ_CMD_SIGNAL ? cd->fn_signal : cd->fn_wait,
        .gridDimX = 1,
        .gridDimY = 1,
        .gridDimZ = 1,
        .blockDimX = 1,
        .blockDimY = 1,
        .blockDimZ = 1,
        .kernelParams = params,
    };
    CUresult r = node_update(cd, cg->exec, n->node, &p);
    if (r == CUDA_SUCCESS) {
        n->value = v;
        n->dirty = false;
    }
    return r;
}

enum hcq_status
cuda_graph_replay(struct hcq_graph *g)
{
    struct cuda_device *cd = cuda_dev(g->q->dev);
    struct cuda_graph *cg = g->priv;
    struct cuda_queue *cq = g->q->priv;
    if (!cg->exec)
        return HCQ_OK; /* nothing but barriers: stream order already holds */
    cuda_ctx_enter(cd);
    for (uint32_t i = 0; i < cg->count; i++) {
        struct cuda_gnode *n = &cg->nodes[i];
        const struct hcq_cmd *c = &g->cl.cmds[n->cmd];
        CUresult r;
        if (c->kind == HCQ_CMD_LAUNCH) {
            uint8_t *args = scratch(cq, c->u.launch.args_B ? c->u.launch.args_B : 1);
            if (!args)
                return hcq_err(HCQ_ERR_NOMEM, "cuda: graph replay: out of host memory");
            r = update_launch(cd, cg, n, &g->cl, c, g->vars, args);
        } else {
            r = update_sig(cd, cg, n, c, g->vars);
        }
        if (r != CUDA_SUCCESS)
            return cuda_fail(cd, r, "cuGraphExecKernelNodeSetParams (command %u)", n->cmd);
    }
    CUresult r = cd->api->cuGraphLaunch(cg->exec, cq->stream);
    if (r != CUDA_SUCCESS)
        return cuda_fail(cd, r, "cuGraphLaunch (%u commands)", g->cl.count);
    return HCQ_OK;
}

void
cuda_graph_destroy(struct hcq_graph *g)
{
    struct cuda_device *cd = cuda_dev(g->q->dev);
    struct cuda_graph *cg = g->priv;
    if (!cg)
        return;
    cuda_ctx_enter(cd);
    graph_free(cd, cg);
    g->priv = NULL;
}
