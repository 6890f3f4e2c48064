/* SPDX-License-Identifier: MIT */
/*
 * hcq_program.c - programs: built-in kernels by name (embedded cubin for the device's
 * arch and/or CPU twin), user cubins by bytes. Layer: core.
 */
#include "hcq_priv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static enum hcq_status
program_create(struct hcq_device *dev, const struct hcq_kernel_desc *desc, const void *cubin, size_t cubin_B,
               const char *name, struct hcq_program **prog_out)
{
    struct hcq_program *prog = calloc(1, sizeof *prog);
    if (!prog)
        return hcq_err(HCQ_ERR_NOMEM, "hcq_program_load: out of host memory");
    prog->dev = dev;
    prog->desc = desc;
    snprintf(prog->info.name, sizeof prog->info.name, "%s", name);
    prog->info.params_B = desc ? desc->params_B : 0;
    prog->info.max_threads = 1024;
    prog->info.sm_count = dev->info.sm_count;
    enum hcq_status st = dev->ops->program_load(dev, cubin, cubin_B, name, prog);
    if (st != HCQ_OK) {
        free(prog);
        return st;
    }
    st = hcq_obj_track(dev, &dev->progs, prog);
    if (st != HCQ_OK) {
        if (dev->ops->program_unload)
            dev->ops->program_unload(dev, prog);
        free(prog);
        return st;
    }
    *prog_out = prog;
    return HCQ_OK;
}

enum hcq_status
hcq_program_load(struct hcq_device *dev, const char *name, struct hcq_program **prog_out)
{
    if (!dev || !name || !prog_out)
        return hcq_err(HCQ_ERR_INVALID, "hcq_program_load: NULL argument");
    *prog_out = NULL;
    const struct hcq_kernel_desc *desc = hcq_kernel_find(name);
    if (!desc)
        return hcq_err(HCQ_ERR_NOT_FOUND, "hcq_program_load: no built-in kernel named '%s'", name);
    const struct hcq_cubin *cb =
        dev->info.sm_version ? hcq_cubin_find(desc->module, dev->info.sm_version) : NULL;
    return program_create(dev, desc, cb ? cb->data : NULL, cb ? cb->size_B : 0, name, prog_out);
}

enum hcq_status
hcq_program_load_cubin(struct hcq_device *dev, const void *cubin, size_t cubin_B, const char *name,
                       struct hcq_program **prog_out)
{
    if (!dev || !cubin || !cubin_B || !name || !prog_out)
        return hcq_err(HCQ_ERR_INVALID, "hcq_program_load_cubin: NULL or empty argument");
    *prog_out = NULL;
    /* A user cubin of a kernel that is also built in keeps its twin (used by cpu/emu). */
    return program_create(dev, hcq_kernel_find(name), cubin, cubin_B, name, prog_out);
}

void
hcq_program_destroy(struct hcq_program *prog)
{
    if (!prog)
        return;
    hcq_obj_untrack(prog->dev, &prog->dev->progs, prog);
    if (prog->dev->ops->program_unload)
        prog->dev->ops->program_unload(prog->dev, prog);
    free(prog);
}

enum hcq_status
hcq_program_info(const struct hcq_program *prog, struct hcq_program_info *info_out)
{
    if (!prog || !info_out)
        return hcq_err(HCQ_ERR_INVALID, "hcq_program_info: NULL argument");
    *info_out = prog->info;
    return HCQ_OK;
}

const char *
hcq_kernels_cubin_archs(void)
{
    static char archs[128];
    if (archs[0] || !hcq_cubin_at(0))
        return archs;
    uint32_t seen[32];
    int n = 0;
    for (uint32_t i = 0; hcq_cubin_at(i); i++) {
        uint32_t sm = hcq_cubin_at(i)->sm_version;
        bool dup = false;
        for (int j = 0; j < n; j++)
            dup |= seen[j] == sm;
        if (!dup && n < 32) {
            seen[n++] = sm;
            size_t len = strlen(archs);
            snprintf(archs + len, sizeof archs - len, "%ssm_%u", len ? "," : "", sm);
        }
    }
    return archs;
}
