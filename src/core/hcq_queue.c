/* SPDX-License-Identifier: MIT */
/*
 * hcq_queue.c - queues: argument validation, recording into command lists, submit,
 * and graphs (record once, patch variables, replay). Layer: core.
 */
#include "hcq_priv.h"

#include <stdlib.h>
#include <string.h>

/* Launch limits common to sm_80..sm_120 (CUDA programming guide, compute capabilities table). */
#define MAX_BLOCK_THREADS 1024u
#define MAX_GRID_X 0x7FFFFFFFu
#define MAX_GRID_YZ 65535u

static enum hcq_status
queue_track(struct hcq_device *dev, struct hcq_queue *q)
{
    enum hcq_status st = HCQ_OK;
    pthread_mutex_lock(&dev->lock);
    if (dev->queue_count == dev->queue_cap) {
        uint32_t cap = dev->queue_cap ? dev->queue_cap * 2 : 8;
        struct hcq_queue **n = realloc(dev->queues, cap * sizeof *n);
        if (!n) {
            st = hcq_err(HCQ_ERR_NOMEM, "hcq_queue_create: out of host memory");
            goto out;
        }
        dev->queues = n;
        dev->queue_cap = cap;
    }
    dev->queues[dev->queue_count++] = q;
out:
    pthread_mutex_unlock(&dev->lock);
    return st;
}

enum hcq_status
hcq_queue_create(struct hcq_device *dev, enum hcq_queue_kind kind, struct hcq_queue **q_out)
{
    if (!dev || !q_out)
        return hcq_err(HCQ_ERR_INVALID, "hcq_queue_create: NULL argument");
    *q_out = NULL;
    if (kind != HCQ_QUEUE_COMPUTE && kind != HCQ_QUEUE_COPY)
        return hcq_err(HCQ_ERR_INVALID, "hcq_queue_create: kind %d (expected COMPUTE or COPY)", (int)kind);
    if (atomic_load(&dev->lost))
        return hcq_err(HCQ_ERR_DEVICE_LOST, "hcq_queue_create: %s is lost: %s", dev->info.spec, dev->fault);
    struct hcq_queue *q = calloc(1, sizeof *q);
    if (!q)
        return hcq_err(HCQ_ERR_NOMEM, "hcq_queue_create: out of host memory");
    q->dev = dev;
    q->kind = kind;
    hcq_cmdlist_init(&q->pending);
    enum hcq_status st = dev->ops->queue_create(dev, q);
    if (st != HCQ_OK)
        goto fail_q;
    st = queue_track(dev, q);
    if (st != HCQ_OK)
        goto fail_backend;
    *q_out = q;
    return HCQ_OK;

fail_backend:
    dev->ops->queue_destroy(q);
fail_q:
    free(q);
    return st;
}

void
hcq_queue_destroy(struct hcq_queue *q)
{
    if (!q)
        return;
    struct hcq_device *dev = q->dev;
    pthread_mutex_lock(&dev->life_lock); /* until freed: a synchronize may be waiting on it */
    pthread_mutex_lock(&dev->lock);
    for (uint32_t i = 0; i < dev->queue_count; i++)
        if (dev->queues[i] == q) {
            dev->queues[i] = dev->queues[--dev->queue_count];
            break;
        }
    pthread_mutex_unlock(&dev->lock);
    if (!atomic_load(&dev->lost)) {
        enum hcq_status st = dev->ops->queue_idle_wait(q, HCQ_TIMEOUT_DEFAULT_NS);
        if (st != HCQ_OK)
            HCQ_LOG_WARN("hcq_queue_destroy: queue not idle (%s); destroying anyway", hcq_status_str(st));
    }
    dev->ops->queue_destroy(q);
    pthread_mutex_unlock(&dev->life_lock);
    if (q->recording) {
        hcq_cmdlist_fini(q->recording);
        free(q->recording);
    }
    hcq_cmdlist_fini(&q->pending);
    free(q);
}

void hcq_queue_destroy_all(struct hcq_device *dev);
void
hcq_queue_destroy_all(struct hcq_device *dev)
{
    while (dev->queue_count)
        hcq_queue_destroy(dev->queues[dev->queue_count - 1]);
}

static struct hcq_cmdlist *
target(struct hcq_queue *q)
{
    return q->recording ? q->recording : &q->pending;
}

static enum hcq_status
check_queue(struct hcq_queue *q, const char *what)
{
    if (!q)
        return hcq_err(HCQ_ERR_INVALID, "%s: queue is NULL", what);
    if (atomic_load(&q->dev->lost))
        return hcq_err(HCQ_ERR_DEVICE_LOST, "%s: %s is lost: %s", what, q->dev->info.spec, q->dev->fault);
    return HCQ_OK;
}

static enum hcq_status
check_var(struct hcq_queue *q, uint32_t var, const char *what)
{
    if (var == HCQ_VAR_NONE)
        return HCQ_OK;
    if (!q->recording)
        return hcq_err(HCQ_ERR_INVALID, "%s: variable %u used outside graph recording", what, var);
    if (var >= q->recording->var_count)
        return hcq_err(HCQ_ERR_INVALID, "%s: variable %u not declared (%u declared)", what, var,
                       q->recording->var_count);
    return HCQ_OK;
}

enum hcq_status
hcq_queue_launch_ex(struct hcq_queue *q, const struct hcq_launch *l)
{
    enum hcq_status st = check_queue(q, "hcq_queue_launch");
    if (st != HCQ_OK)
        return st;
    if (!l || !l->prog || l->prog->dev != q->dev)
        return hcq_err(HCQ_ERR_INVALID, "hcq_queue_launch: program missing or from another device");
    if (q->kind != HCQ_QUEUE_COMPUTE)
        return hcq_err(HCQ_ERR_INVALID, "hcq_queue_launch: queue is a copy queue (expected COMPUTE)");
    const struct hcq_program_info *pi = &l->prog->info;
    if (l->args_B != pi->params_B)
        return hcq_err(HCQ_ERR_INVALID,
                       "hcq_queue_launch: %s: args_B %u (expected %u, the size of its parameter struct)",
                       pi->name, l->args_B, pi->params_B);
    if (l->args_B && !l->args)
        return hcq_err(HCQ_ERR_INVALID,
                       "hcq_queue_launch: %s: args is NULL (expected %u bytes of parameters)", pi->name,
                       l->args_B);
    uint64_t threads = (uint64_t)l->block[0] * l->block[1] * l->block[2];
    uint32_t max_threads = pi->max_threads ? pi->max_threads : MAX_BLOCK_THREADS;
    if (threads == 0 || threads > max_threads || l->block[2] > 64)
        return hcq_err(HCQ_ERR_INVALID,
                       "hcq_queue_launch: %s: block %ux%ux%u (expected 1..%u threads, z <= 64)", pi->name,
                       l->block[0], l->block[1], l->block[2], max_threads);
    for (int i = 0; i < 3; i++) {
        uint32_t lim = i ? MAX_GRID_YZ : MAX_GRID_X;
        if (l->grid[i] == 0 && l->grid_var[i] != HCQ_VAR_NONE) {
            if ((st = check_var(q, l->grid_var[i], "hcq_queue_launch grid")) != HCQ_OK)
                return st;
        } else if (l->grid[i] == 0 || l->grid[i] > lim) {
            return hcq_err(HCQ_ERR_INVALID, "hcq_queue_launch: %s: grid[%d] = %u (expected 1..%u)", pi->name,
                           i, l->grid[i], lim);
        }
    }
    if (l->flags & ~HCQ_LAUNCH_DEP_WAIT)
        return hcq_err(HCQ_ERR_INVALID, "hcq_queue_launch: %s: unknown flags 0x%x", pi->name,
                       l->flags & ~HCQ_LAUNCH_DEP_WAIT);
    for (uint32_t i = 0; i < l->patch_count; i++) {
        const struct hcq_arg_patch *p = &l->patches[i];
        if ((st = check_var(q, p->var, "hcq_queue_launch patch")) != HCQ_OK)
            return st;
        if (p->var == HCQ_VAR_NONE || (p->size_B != 4 && p->size_B != 8) || p->offset_B % p->size_B ||
            p->offset_B + p->size_B > l->args_B)
            return hcq_err(HCQ_ERR_INVALID,
                           "hcq_queue_launch: patch %u: var %u offset %u size %u (args %u B)", i, p->var,
                           p->offset_B, p->size_B, l->args_B);
    }
    struct hcq_cmdlist *cl = target(q);
    struct hcq_cmd *c;
    uint32_t off = 0, first = 0;
    if ((st = hcq_cmdlist_push_args(cl, l->args, l->args_B, &off)) != HCQ_OK)
        return st;
    if (l->patch_count && (st = hcq_cmdlist_push_patches(cl, l->patches, l->patch_count, &first)) != HCQ_OK)
        return st;
    if ((st = hcq_cmdlist_push(cl, &c)) != HCQ_OK)
        return st;
    c->kind = HCQ_CMD_LAUNCH;
    c->u.launch.prog = l->prog;
    for (int i = 0; i < 3; i++) {
        c->u.launch.grid[i] = l->grid[i];
        c->u.launch.block[i] = l->block[i];
        c->u.launch.grid_var[i] = l->grid[i] == 0 ? l->grid_var[i] : HCQ_VAR_NONE;
    }
    c->u.launch.args_off_B = off;
    c->u.launch.args_B = l->args_B;
    c->u.launch.patch_first = first;
    c->u.launch.patch_count = l->patch_count;
    c->u.launch.flags = l->flags;
    return HCQ_OK;
}

enum hcq_status
hcq_queue_launch(struct hcq_queue *q, struct hcq_program *prog, const uint32_t grid[3],
                 const uint32_t block[3], const void *args, uint32_t args_B)
{
    struct hcq_launch l = {
        .prog = prog,
        .grid = {grid[0], grid[1], grid[2]},
        .block = {block[0], block[1], block[2]},
        .args = args,
        .args_B = args_B,
        .grid_var = {HCQ_VAR_NONE, HCQ_VAR_NONE, HCQ_VAR_NONE},
    };
    return hcq_queue_launch_ex(q, &l);
}

/* Whether [off, off + size) lies inside a buffer of buf_B bytes (no 64-bit overflow). */
static bool
copy_in_bounds(uint64_t off_B, uint64_t size_B, uint64_t buf_B)
{
    return off_B <= buf_B && size_B <= buf_B - off_B;
}

enum hcq_status
hcq_queue_copy_ex(struct hcq_queue *q, const struct hcq_copy *cp)
{
    enum hcq_status st = check_queue(q, "hcq_queue_copy");
    if (st != HCQ_OK)
        return st;
    if (!cp)
        return hcq_err(HCQ_ERR_INVALID, "hcq_queue_copy_ex: copy is NULL");
    struct hcq_buf *dst = cp->dst, *src = cp->src;
    if (!dst || !src || dst->dev != q->dev || src->dev != q->dev)
        return hcq_err(HCQ_ERR_INVALID, "hcq_queue_copy: buffer missing or from another device "
                                        "(map a peer's buffer with hcq_buf_peer_map first)");
    if ((st = check_var(q, cp->dst_off_var, "hcq_queue_copy dst_off")) != HCQ_OK ||
        (st = check_var(q, cp->src_off_var, "hcq_queue_copy src_off")) != HCQ_OK ||
        (st = check_var(q, cp->size_var, "hcq_queue_copy size")) != HCQ_OK)
        return st;
    /* Constant parts are checked now; variable ones at every replay. */
    if ((cp->dst_off_var == HCQ_VAR_NONE && !copy_in_bounds(cp->dst_off_B, cp->size_B, dst->size_B)) ||
        (cp->src_off_var == HCQ_VAR_NONE && !copy_in_bounds(cp->src_off_B, cp->size_B, src->size_B)) ||
        cp->size_B > dst->size_B || cp->size_B > src->size_B)
        return hcq_err(
            HCQ_ERR_INVALID,
            "hcq_queue_copy: 0x%llx bytes from +0x%llx (of 0x%llx) to +0x%llx (of 0x%llx) out of bounds",
            (unsigned long long)cp->size_B, (unsigned long long)cp->src_off_B,
            (unsigned long long)src->size_B, (unsigned long long)cp->dst_off_B,
            (unsigned long long)dst->size_B);
    if (cp->size_B == 0) {
        if (cp->size_var != HCQ_VAR_NONE)
            return hcq_err(HCQ_ERR_INVALID,
                           "hcq_queue_copy: a variable size needs a largest size (size_B) > 0");
        return HCQ_OK;
    }
    struct hcq_cmd *c;
    if ((st = hcq_cmdlist_push(target(q), &c)) != HCQ_OK)
        return st;
    c->kind = HCQ_CMD_COPY;
    c->u.copy.dst = dst;
    c->u.copy.src = src;
    c->u.copy.dst_off_B = cp->dst_off_B;
    c->u.copy.src_off_B = cp->src_off_B;
    c->u.copy.size_B = cp->size_B;
    c->u.copy.dst_off_var = cp->dst_off_var;
    c->u.copy.src_off_var = cp->src_off_var;
    c->u.copy.size_var = cp->size_var;
    return HCQ_OK;
}

enum hcq_status
hcq_queue_copy(struct hcq_queue *q, struct hcq_buf *dst, uint64_t dst_off_B, struct hcq_buf *src,
               uint64_t src_off_B, uint64_t size_B)
{
    struct hcq_copy c = {.dst = dst,
                         .dst_off_B = dst_off_B,
                         .src = src,
                         .src_off_B = src_off_B,
                         .size_B = size_B,
                         .dst_off_var = HCQ_VAR_NONE,
                         .src_off_var = HCQ_VAR_NONE,
                         .size_var = HCQ_VAR_NONE};
    return hcq_queue_copy_ex(q, &c);
}

static enum hcq_status
record_sig(struct hcq_queue *q, enum hcq_cmd_kind kind, struct hcq_signal *sig, uint32_t var, uint64_t add,
           const char *what)
{
    enum hcq_status st = check_queue(q, what);
    if (st != HCQ_OK)
        return st;
    if (!sig)
        return hcq_err(HCQ_ERR_INVALID, "%s: signal missing", what);
    if ((st = check_var(q, var, what)) != HCQ_OK)
        return st;
    /* another device's signal: its alias on this device (same slot, our address for it) */
    if ((st = hcq_signal_peer(q->dev, sig, &sig)) != HCQ_OK)
        return st;
    struct hcq_cmd *c;
    if ((st = hcq_cmdlist_push(target(q), &c)) != HCQ_OK)
        return st;
    c->kind = kind;
    c->u.sig.sig = sig;
    c->u.sig.var = var;
    c->u.sig.add = add;
    return HCQ_OK;
}

enum hcq_status
hcq_queue_signal(struct hcq_queue *q, struct hcq_signal *sig, uint64_t value)
{
    return record_sig(q, HCQ_CMD_SIGNAL, sig, HCQ_VAR_NONE, value, "hcq_queue_signal");
}

enum hcq_status
hcq_queue_wait(struct hcq_queue *q, struct hcq_signal *sig, uint64_t value)
{
    return record_sig(q, HCQ_CMD_WAIT, sig, HCQ_VAR_NONE, value, "hcq_queue_wait");
}

enum hcq_status
hcq_queue_signal_var(struct hcq_queue *q, struct hcq_signal *sig, uint32_t var, uint64_t add)
{
    return record_sig(q, HCQ_CMD_SIGNAL, sig, var, add, "hcq_queue_signal_var");
}

enum hcq_status
hcq_queue_wait_var(struct hcq_queue *q, struct hcq_signal *sig, uint32_t var, uint64_t add)
{
    return record_sig(q, HCQ_CMD_WAIT, sig, var, add, "hcq_queue_wait_var");
}

/* TIMESTAMP on sig; of_launch (hcq_queue_timestamp_launch): the stamp of the launch recorded
 * just before, which must be the previous command of the list being recorded. */
static enum hcq_status
record_timestamp(struct hcq_queue *q, struct hcq_signal *sig, bool of_launch, const char *who)
{
    enum hcq_status st = check_queue(q, who);
    if (st != HCQ_OK)
        return st;
    if (!sig || sig->dev != q->dev)
        return hcq_err(HCQ_ERR_INVALID, "%s: signal missing or from another device", who);
    struct hcq_cmdlist *cl = target(q);
    if (of_launch && (!cl->count || cl->cmds[cl->count - 1].kind != HCQ_CMD_LAUNCH))
        return hcq_err(HCQ_ERR_INVALID,
                       "%s: the previous command is not a launch (record it right after the launch, "
                       "before any submit)",
                       who);
    struct hcq_cmd *c;
    if ((st = hcq_cmdlist_push(cl, &c)) != HCQ_OK)
        return st;
    c->kind = HCQ_CMD_TIMESTAMP;
    c->u.ts.sig = sig;
    c->u.ts.of_launch = of_launch;
    return HCQ_OK;
}

enum hcq_status
hcq_queue_timestamp(struct hcq_queue *q, struct hcq_signal *sig)
{
    return record_timestamp(q, sig, false, "hcq_queue_timestamp");
}

enum hcq_status
hcq_queue_timestamp_launch(struct hcq_queue *q, struct hcq_signal *sig)
{
    return record_timestamp(q, sig, true, "hcq_queue_timestamp_launch");
}

enum hcq_status
hcq_queue_barrier(struct hcq_queue *q)
{
    enum hcq_status st = check_queue(q, "hcq_queue_barrier");
    if (st != HCQ_OK)
        return st;
    struct hcq_cmd *c;
    if ((st = hcq_cmdlist_push(target(q), &c)) != HCQ_OK)
        return st;
    c->kind = HCQ_CMD_BARRIER;
    return HCQ_OK;
}

static const char *
cmd_name(const struct hcq_cmd *c)
{
    static const char *const names[] = {"launch", "copy", "signal", "wait", "timestamp", "barrier"};
    return c->kind == HCQ_CMD_LAUNCH ? c->u.launch.prog->info.name : names[c->kind];
}

/* HCQ_DEBUG=cmd_sync: one submission per command, each waited for, so a hang or fault
 * names the command that caused it. Slow; for bring-up only. */
static enum hcq_status
submit_each(struct hcq_queue *q, const struct hcq_cmdlist *cl, const uint64_t *vars)
{
    enum hcq_status st = HCQ_OK;
    struct hcq_cmdlist one;
    hcq_cmdlist_init(&one);
    for (uint32_t i = 0; i < cl->count && st == HCQ_OK; i++) {
        const struct hcq_cmd *c = &cl->cmds[i];
        struct hcq_cmd *n;
        hcq_cmdlist_reset(&one);
        if ((st = hcq_cmdlist_push(&one, &n)) != HCQ_OK)
            break;
        *n = *c;
        if (c->kind == HCQ_CMD_LAUNCH) {
            uint8_t args[4096];
            uint32_t off = 0;
            if (c->u.launch.args_B > sizeof args) {
                st = hcq_err(HCQ_ERR_UNSUPPORTED, "cmd_sync: %u argument bytes", c->u.launch.args_B);
                break;
            }
            hcq_cmd_launch_args(cl, c, vars, args);
            if ((st = hcq_cmdlist_push_args(&one, args, c->u.launch.args_B, &off)) != HCQ_OK)
                break;
            hcq_cmd_launch_grid(c, vars, n->u.launch.grid);
            n->u.launch.args_off_B = off;
            n->u.launch.patch_count = 0;
            for (int d = 0; d < 3; d++)
                n->u.launch.grid_var[d] = HCQ_VAR_NONE;
            HCQ_LOG_INFO("cmd_sync: command %u: %s grid %u,%u,%u block %u,%u,%u", i, cmd_name(c),
                         n->u.launch.grid[0], n->u.launch.grid[1], n->u.launch.grid[2], c->u.launch.block[0],
                         c->u.launch.block[1], c->u.launch.block[2]);
        } else {
            if (c->kind == HCQ_CMD_SIGNAL || c->kind == HCQ_CMD_WAIT) {
                n->u.sig.add = hcq_cmd_value(c->u.sig.var, c->u.sig.add, vars);
                n->u.sig.var = HCQ_VAR_NONE;
            }
            if (c->kind == HCQ_CMD_COPY) {
                hcq_cmd_copy_resolve(c, vars, &n->u.copy.dst_off_B, &n->u.copy.src_off_B, &n->u.copy.size_B);
                n->u.copy.dst_off_var = n->u.copy.src_off_var = n->u.copy.size_var = HCQ_VAR_NONE;
                if (n->u.copy.size_B == 0)
                    continue;
            }
            HCQ_LOG_INFO("cmd_sync: command %u: %s", i, cmd_name(c));
        }
        st = q->dev->ops->queue_submit(q, &one, NULL);
        if (st == HCQ_OK)
            st = q->dev->ops->queue_idle_wait(q, HCQ_TIMEOUT_DEFAULT_NS);
        if (st != HCQ_OK)
            HCQ_LOG_ERROR("cmd_sync: command %u (%s) failed: %s", i, cmd_name(c), hcq_last_error());
    }
    hcq_cmdlist_fini(&one);
    return st;
}

enum hcq_status
hcq_queue_submit(struct hcq_queue *q)
{
    enum hcq_status st = check_queue(q, "hcq_queue_submit");
    if (st != HCQ_OK)
        return st;
    if (q->recording)
        return hcq_err(HCQ_ERR_INVALID, "hcq_queue_submit: queue is recording a graph (call hcq_graph_end)");
    if (q->pending.count == 0)
        return HCQ_OK;
    if (hcq_debug_flags() & HCQ_DEBUG_CMD_SYNC) {
        st = submit_each(q, &q->pending, NULL);
        hcq_cmdlist_reset(&q->pending);
        return st;
    }
    st = q->dev->ops->queue_submit(q, &q->pending, NULL);
    hcq_cmdlist_reset(&q->pending);
    if (st == HCQ_OK && (hcq_debug_flags() & HCQ_DEBUG_PUSH_SYNC))
        st = q->dev->ops->queue_idle_wait(q, HCQ_TIMEOUT_DEFAULT_NS);
    return st;
}

enum hcq_status
hcq_queue_finish(struct hcq_queue *q, uint64_t timeout_ns)
{
    enum hcq_status st = hcq_queue_submit(q);
    if (st != HCQ_OK)
        return st;
    st = q->dev->ops->queue_idle_wait(q, timeout_ns);
    if (st == HCQ_OK)
        st = hcq_device_check(q->dev);
    return st;
}

/* ==== Graphs ==== */

enum hcq_status
hcq_graph_begin(struct hcq_queue *q)
{
    enum hcq_status st = check_queue(q, "hcq_graph_begin");
    if (st != HCQ_OK)
        return st;
    if (q->recording)
        return hcq_err(HCQ_ERR_INVALID, "hcq_graph_begin: already recording");
    if (q->pending.count)
        return hcq_err(HCQ_ERR_INVALID, "hcq_graph_begin: %u commands recorded but not submitted",
                       q->pending.count);
    q->recording = calloc(1, sizeof *q->recording);
    if (!q->recording)
        return hcq_err(HCQ_ERR_NOMEM, "hcq_graph_begin: out of host memory");
    return HCQ_OK;
}

enum hcq_status
hcq_graph_var(struct hcq_queue *q, uint32_t *var_out)
{
    if (!q || !q->recording || !var_out)
        return hcq_err(HCQ_ERR_INVALID, "hcq_graph_var: not recording a graph");
    if (q->recording->var_count >= 4096)
        return hcq_err(HCQ_ERR_INVALID, "hcq_graph_var: more than 4096 variables");
    *var_out = q->recording->var_count++;
    return HCQ_OK;
}

enum hcq_status
hcq_graph_end(struct hcq_queue *q, struct hcq_graph **graph_out)
{
    if (!q || !q->recording || !graph_out)
        return hcq_err(HCQ_ERR_INVALID, "hcq_graph_end: not recording a graph");
    *graph_out = NULL;
    struct hcq_graph *g = calloc(1, sizeof *g);
    enum hcq_status st;
    if (!g) {
        st = hcq_err(HCQ_ERR_NOMEM, "hcq_graph_end: out of host memory");
        goto fail_rec;
    }
    g->q = q;
    g->cl = *q->recording;
    free(q->recording);
    q->recording = NULL;
    g->vars = calloc(g->cl.var_count ? g->cl.var_count : 1, sizeof *g->vars);
    if (!g->vars) {
        st = hcq_err(HCQ_ERR_NOMEM, "hcq_graph_end: out of host memory");
        goto fail_graph;
    }
    if (g->cl.count == 0) {
        st = hcq_err(HCQ_ERR_INVALID, "hcq_graph_end: empty graph");
        goto fail_graph;
    }
    for (uint32_t i = 0; i < g->cl.count; i++) {
        const struct hcq_cmd *c = &g->cl.cmds[i];
        if (c->kind == HCQ_CMD_LAUNCH)
            for (int d = 0; d < 3; d++)
                g->grid_vars |= c->u.launch.grid_var[d] != HCQ_VAR_NONE;
        if (c->kind == HCQ_CMD_COPY)
            g->copy_vars |= hcq_cmd_copy_is_variable(c);
    }
    if (q->dev->ops->graph_build && (st = q->dev->ops->graph_build(g)) != HCQ_OK)
        goto fail_graph;
    if ((st = hcq_obj_track(q->dev, &q->dev->graphs, g)) != HCQ_OK) {
        hcq_graph_destroy(g);
        return st;
    }
    *graph_out = g;
    return HCQ_OK;

fail_graph:
    hcq_cmdlist_fini(&g->cl);
    free(g->vars);
    free(g);
    return st;
fail_rec:
    hcq_cmdlist_fini(q->recording);
    free(q->recording);
    q->recording = NULL;
    return st;
}

enum hcq_status
hcq_graph_set(struct hcq_graph *g, uint32_t var, uint64_t value)
{
    if (!g || var >= g->cl.var_count)
        return hcq_err(HCQ_ERR_INVALID, "hcq_graph_set: variable %u (graph has %u)", var,
                       g ? g->cl.var_count : 0);
    g->vars[var] = value;
    return HCQ_OK;
}

enum hcq_status
hcq_graph_replay(struct hcq_graph *g)
{
    if (!g)
        return hcq_err(HCQ_ERR_INVALID, "hcq_graph_replay: graph is NULL");
    struct hcq_queue *q = g->q;
    enum hcq_status st = check_queue(q, "hcq_graph_replay");
    if (st != HCQ_OK)
        return st;
    if (q->recording)
        return hcq_err(HCQ_ERR_INVALID, "hcq_graph_replay: queue is recording");
    /* Commands recorded on q before the replay go first, keeping queue order. */
    if ((st = hcq_queue_submit(q)) != HCQ_OK)
        return st;
    /* Constant grids were checked when recorded; only variable ones can be out of range now. */
    for (uint32_t i = 0; g->grid_vars && i < g->cl.count; i++) {
        const struct hcq_cmd *c = &g->cl.cmds[i];
        if (c->kind != HCQ_CMD_LAUNCH)
            continue;
        for (int d = 0; d < 3; d++) {
            uint32_t var = c->u.launch.grid_var[d];
            if (var == HCQ_VAR_NONE)
                continue;
            uint64_t v = g->vars[var];
            if (v == 0 || v > (d ? MAX_GRID_YZ : MAX_GRID_X))
                return hcq_err(HCQ_ERR_INVALID,
                               "hcq_graph_replay: command %u grid[%d] = %llu (expected 1..%u)", i, d,
                               (unsigned long long)v, d ? MAX_GRID_YZ : MAX_GRID_X);
        }
    }
    /* Variable copies: offsets and sizes inside their buffers, sizes within the recorded one
     * (the size the backends laid the copy out for). */
    for (uint32_t i = 0; g->copy_vars && i < g->cl.count; i++) {
        const struct hcq_cmd *c = &g->cl.cmds[i];
        if (c->kind != HCQ_CMD_COPY || !hcq_cmd_copy_is_variable(c))
            continue;
        uint64_t doff, soff, size;
        hcq_cmd_copy_resolve(c, g->vars, &doff, &soff, &size);
        if (size > c->u.copy.size_B || !copy_in_bounds(doff, size, c->u.copy.dst->size_B) ||
            !copy_in_bounds(soff, size, c->u.copy.src->size_B))
            return hcq_err(
                HCQ_ERR_INVALID,
                "hcq_graph_replay: command %u copies 0x%llx bytes (recorded at most 0x%llx) from +0x%llx "
                "(of 0x%llx) to +0x%llx (of 0x%llx): out of bounds",
                i, (unsigned long long)size, (unsigned long long)c->u.copy.size_B, (unsigned long long)soff,
                (unsigned long long)c->u.copy.src->size_B, (unsigned long long)doff,
                (unsigned long long)c->u.copy.dst->size_B);
    }
    if (hcq_debug_flags() & HCQ_DEBUG_CMD_SYNC)
        return submit_each(q, &g->cl, g->vars);
    if (q->dev->ops->graph_replay && g->priv)
        st = q->dev->ops->graph_replay(g);
    else
        st = q->dev->ops->queue_submit(q, &g->cl, g->vars);
    if (st == HCQ_OK && (hcq_debug_flags() & HCQ_DEBUG_PUSH_SYNC))
        st = q->dev->ops->queue_idle_wait(q, HCQ_TIMEOUT_DEFAULT_NS);
    return st;
}

uint32_t
hcq_graph_command_count(const struct hcq_graph *g)
{
    return g ? g->cl.count : 0;
}

void
hcq_graph_destroy(struct hcq_graph *g)
{
    if (!g)
        return;
    hcq_obj_untrack(g->q->dev, &g->q->dev->graphs, g);
    if (g->priv && g->q->dev->ops->graph_destroy)
        g->q->dev->ops->graph_destroy(g);
    hcq_cmdlist_fini(&g->cl);
    free(g->vars);
    free(g);
}
