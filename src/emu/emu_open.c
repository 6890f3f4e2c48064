/* SPDX-License-Identifier: MIT */
/*
 * emu_open.c - the `emu` backend: "emu:gh100" / "emu:ga102" run the real kmd/rm code on
 * the emulated RM + UVM driver, "emu:ga10b" the real kmd/nvgpu code on the emulated
 * nvmap + nvgpu driver; the pushbuffer engine (src/engine) sits on top unchanged.
 * Layer: emu.
 */
#include "emu.h"
#include "kmd.h"
#include "hcq_priv.h"

#include <stdio.h>
#include <string.h>

static void
emu_kmd_fault_log(void *ctx, char *buf, size_t buf_B)
{
    emu_dev_fault(ctx, buf, buf_B);
}

void
emu_kmd_adopt(struct kmd *kmd, struct emu_dev *d)
{
    kmd->info.emulated = true;
    /* programs without a cubin for the chip: the GPU model runs their CPU twins */
    kmd->program_stub = emu_program_stub_write;
    /* the GPU model's fault text stands for the kernel log's Xid line (the kmd's fds keep d
     * alive as long as the kmd) */
    kmd->fault_log = emu_kmd_fault_log;
    kmd->fault_log_ctx = d;
}

enum hcq_status
hcq_emu_open(const char *arg, struct hcq_device **dev_out)
{
    *dev_out = NULL;
    struct emu_opts opts;
    enum hcq_status st = emu_opts_parse(arg, &opts);
    if (st != HCQ_OK)
        return st;
    bool tegra = !strcmp(opts.chip, "ga10b");
    struct emu_dev *d;
    st = emu_dev_create(&opts, &d);
    if (st != HCQ_OK)
        return st;
    struct kmd *kmd = NULL;
    st = tegra ? nvgpu_kmd_create(emu_dev_sys(d), 0, &kmd) : rm_kmd_create(emu_dev_sys(d), 0, &kmd);
    if (st != HCQ_OK)
        goto fail_dev;
    emu_kmd_adopt(kmd, d);
    size_t n = strlen(kmd->info.name);
    if (n + sizeof " (emulated)" <= sizeof kmd->info.name)
        memcpy(kmd->info.name + n, " (emulated)", sizeof " (emulated)");
    char spec[32];
    snprintf(spec, sizeof spec, "emu:%s", arg && arg[0] ? arg : opts.chip);
    /* the engine owns kmd from here, also on failure; the emulated machine lives on
     * while kmd's fds and mappings are open and frees itself after the last one */
    st = pb_device_create(kmd, "emu", spec, dev_out);

fail_dev:
    emu_dev_put(d);
    return st;
}
