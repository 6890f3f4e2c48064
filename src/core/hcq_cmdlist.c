/* SPDX-License-Identifier: MIT */
/*
 * hcq_cmdlist.c - growable command lists (commands, argument blobs, patches) that core
 * records and backends consume. Layer: core.
 */
#include "hcq_priv.h"

#include <stdlib.h>
#include <string.h>

void
hcq_cmdlist_init(struct hcq_cmdlist *cl)
{
    memset(cl, 0, sizeof *cl);
}

void
hcq_cmdlist_fini(struct hcq_cmdlist *cl)
{
    free(cl->cmds);
    free(cl->args);
    free(cl->patches);
    memset(cl, 0, sizeof *cl);
}

void
hcq_cmdlist_reset(struct hcq_cmdlist *cl)
{
    cl->count = 0;
    cl->args_B = 0;
    cl->patch_count = 0;
    cl->var_count = 0;
}

enum hcq_status
hcq_cmdlist_push(struct hcq_cmdlist *cl, struct hcq_cmd **cmd_out)
{
    if (cl->count == cl->cap) {
        uint32_t cap = cl->cap ? cl->cap * 2 : 64;
        struct hcq_cmd *n = realloc(cl->cmds, cap * sizeof *n);
        if (!n)
            return hcq_err(HCQ_ERR_NOMEM, "command list: out of host memory (%u commands)", cl->count);
        cl->cmds = n;
        cl->cap = cap;
    }
    *cmd_out = &cl->cmds[cl->count++];
    memset(*cmd_out, 0, sizeof **cmd_out);
    return HCQ_OK;
}

enum hcq_status
hcq_cmdlist_push_args(struct hcq_cmdlist *cl, const void *args, uint32_t args_B, uint32_t *off_out)
{
    uint32_t off = (cl->args_B + 15u) & ~15u;
    if ((uint64_t)off + args_B > UINT32_MAX / 2)
        return hcq_err(HCQ_ERR_NOMEM, "command list: argument area over 2 GiB");
    if (off + args_B > cl->args_cap_B) {
        uint32_t cap = cl->args_cap_B ? cl->args_cap_B : 4096;
        while (cap < off + args_B)
            cap *= 2;
        uint8_t *n = realloc(cl->args, cap);
        if (!n)
            return hcq_err(HCQ_ERR_NOMEM, "command list: out of host memory for arguments");
        cl->args = n;
        cl->args_cap_B = cap;
    }
    if (args_B)
        memcpy(cl->args + off, args, args_B);
    cl->args_B = off + args_B;
    *off_out = off;
    return HCQ_OK;
}

static enum hcq_status
push_patches(struct hcq_cmdlist *cl, const struct hcq_arg_patch *p, uint32_t n, uint32_t *first_out)
{
    if (cl->patch_count + n > cl->patch_cap) {
        uint32_t cap = cl->patch_cap ? cl->patch_cap : 32;
        while (cap < cl->patch_count + n)
            cap *= 2;
        struct hcq_arg_patch *np = realloc(cl->patches, cap * sizeof *np);
        if (!np)
            return hcq_err(HCQ_ERR_NOMEM, "command list: out of host memory for patches");
        cl->patches = np;
        cl->patch_cap = cap;
    }
    memcpy(cl->patches + cl->patch_count, p, n * sizeof *p);
    *first_out = cl->patch_count;
    cl->patch_count += n;
    return HCQ_OK;
}

enum hcq_status hcq_cmdlist_push_patches(struct hcq_cmdlist *cl, const struct hcq_arg_patch *p, uint32_t n,
                                         uint32_t *first_out);
enum hcq_status
hcq_cmdlist_push_patches(struct hcq_cmdlist *cl, const struct hcq_arg_patch *p, uint32_t n,
                         uint32_t *first_out)
{
    return push_patches(cl, p, n, first_out);
}

void
hcq_cmd_launch_args(const struct hcq_cmdlist *cl, const struct hcq_cmd *c, const uint64_t *vars, void *out)
{
    memcpy(out, cl->args + c->u.launch.args_off_B, c->u.launch.args_B);
    if (!vars)
        return;
    for (uint32_t i = 0; i < c->u.launch.patch_count; i++) {
        const struct hcq_arg_patch *p = &cl->patches[c->u.launch.patch_first + i];
        uint64_t v = vars[p->var];
        if (p->size_B == 4) {
            uint32_t v32 = (uint32_t)v;
            memcpy((uint8_t *)out + p->offset_B, &v32, 4);
        } else {
            memcpy((uint8_t *)out + p->offset_B, &v, 8);
        }
    }
}

void
hcq_cmd_launch_grid(const struct hcq_cmd *c, const uint64_t *vars, uint32_t grid_out[3])
{
    for (int i = 0; i < 3; i++) {
        uint32_t var = c->u.launch.grid_var[i];
        grid_out[i] = (var != HCQ_VAR_NONE && vars) ? (uint32_t)vars[var] : c->u.launch.grid[i];
    }
}

void
hcq_cmd_copy_resolve(const struct hcq_cmd *c, const uint64_t *vars, uint64_t *dst_off_B, uint64_t *src_off_B,
                     uint64_t *size_B)
{
    bool v = vars != NULL;
    *dst_off_B =
        v && c->u.copy.dst_off_var != HCQ_VAR_NONE ? vars[c->u.copy.dst_off_var] : c->u.copy.dst_off_B;
    *src_off_B =
        v && c->u.copy.src_off_var != HCQ_VAR_NONE ? vars[c->u.copy.src_off_var] : c->u.copy.src_off_B;
    *size_B = v && c->u.copy.size_var != HCQ_VAR_NONE ? vars[c->u.copy.size_var] : c->u.copy.size_B;
}
