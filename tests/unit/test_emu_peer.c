/* SPDX-License-Identifier: MIT */
/*
 * test_emu_peer.c - peer mappings between two emulated GPUs under the real rm kmd (rm_peer.c,
 * docs/rm-backend.md "Peer mappings"): cleanup of every object on both sides, and the refusals
 * that leave callers staging through host memory.
 */
#include "emu.h"
#include "emu_priv.h"
#include "hcq_kernel.h"
#include "emu_rm_abi.h"
#include "emu_tcheck.h"
#include "gpu_cubin.h"
#include "gpu_push.h"
#include "gpu_qmd.h"
#include "harness.h"
#include "kmd.h"
#include "k_llm_params.h"
#include "k_params.h"
#include "ops.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* ==== Peer mappings (rm_peer.c on two emulated GPUs, docs/rm-backend.md "Peer mappings") ==== */

/* An emulated GPU under a bare rm kmd (no channels). */
static enum hcq_status
peer_open(const char *spec, struct emu_dev **d_out, struct kmd **kmd_out)
{
    struct emu_opts o;
    enum hcq_status st = emu_opts_parse(spec, &o);
    if (st == HCQ_OK)
        st = emu_dev_create(&o, d_out);
    if (st == HCQ_OK)
        st = rm_kmd_create(emu_dev_sys(*d_out), 0, kmd_out);
    return st;
}

static void
peer_close(struct emu_dev **d, struct kmd **kmd)
{
    kmd_destroy(*kmd);
    emu_dev_put(*d);
    *kmd = NULL;
    *d = NULL;
}

/* Map, unmap and map again: no RM object made or left on either GPU, the UVM range goes with
 * the mapping; closing the mapping GPU with a live mapping, or the owner before it, leaks
 * nothing (the mapping holds the owner's pages, as UVM's dup does). */
TEST(peer_map_cleanup)
{
    struct emu_stats base, now;
    emu_stats_get(&base);
    struct emu_dev *da = NULL, *db = NULL;
    struct kmd *ka = NULL, *kb = NULL;
    struct kmd_mem *ma = NULL, *pm = NULL;
    setenv("HCQ_RM_PEER", "1", 1);
    CHECK_OK(peer_open("gh100", &da, &ka));
    CHECK_OK(peer_open("gh100", &db, &kb));
    CHECK_OK(kmd_mem_alloc(ka, 8u << 20, 0, KMD_MEM_VRAM, &ma));
    uint32_t objs_a = emu_rm_live_objects(da), objs_b = emu_rm_live_objects(db);
    uint32_t ranges_b = emu_rm_uvm_ranges(db);
    for (int round = 0; round < 2; round++) {
        CHECK_OK(kmd_mem_peer_map(kb, ka, ma, &pm));
        CHECK(pm->va && pm->size_B == ma->size_B && !pm->map);
        CHECK(emu_rm_uvm_ranges(db) == ranges_b + 1);
        CHECK(emu_rm_live_objects(da) == objs_a && emu_rm_live_objects(db) == objs_b);
        kmd_mem_free(kb, pm);
        pm = NULL;
        CHECK(emu_rm_uvm_ranges(db) == ranges_b);
        CHECK(emu_rm_live_objects(da) == objs_a && emu_rm_live_objects(db) == objs_b);
    }
    /* close the mapping GPU with a mapping live: its destroy frees it */
    CHECK_OK(kmd_mem_peer_map(kb, ka, ma, &pm));
    pm = NULL;
    peer_close(&db, &kb);
    /* the owner goes first while another GPU maps its memory */
    CHECK_OK(peer_open("gh100", &db, &kb));
    CHECK_OK(kmd_mem_peer_map(kb, ka, ma, &pm));
    kmd_mem_free(ka, ma);
    ma = NULL;
    peer_close(&da, &ka);
    kmd_mem_free(kb, pm);
    pm = NULL;
done:
    if (kb)
        kmd_mem_free(kb, pm);
    if (ka)
        kmd_mem_free(ka, ma);
    peer_close(&db, &kb);
    peer_close(&da, &ka);
    unsetenv("HCQ_RM_PEER");
    emu_stats_get(&now);
    if (now.devs != base.devs || now.fds != base.fds || now.maps != base.maps || now.bos != base.bos ||
        now.vms != base.vms)
        th_fail(t, __FILE__, __LINE__,
                "leak: devs %lld fds %lld maps %lld bos %lld vms %lld (before %lld %lld %lld %lld %lld)",
                (long long)now.devs, (long long)now.fds, (long long)now.maps, (long long)now.bos,
                (long long)now.vms, (long long)base.devs, (long long)base.fds, (long long)base.maps,
                (long long)base.bos, (long long)base.vms);
}

/* Refusals leave callers staging: HCQ_RM_PEER=0, caps that say no (p2p=none, different chips),
 * host memory, a PCIe pair without the opt-in; each with its reason, nothing left behind.
 * NVLink pairs map by default; PCIe peers with HCQ_RM_PEER=1 go through
 * UVM_ENABLE_PEER_ACCESS and map (the earlier refusal was not cached). */
TEST(peer_map_refusals)
{
    struct emu_stats base, now;
    emu_stats_get(&base);
    struct emu_dev *da = NULL, *db = NULL, *dc = NULL;
    struct kmd *ka = NULL, *kb = NULL, *kc = NULL;
    struct kmd_mem *ma = NULL, *hs = NULL, *pm = NULL;
    setenv("HCQ_RM_PEER", "0", 1);
    CHECK_OK(peer_open("gh100", &da, &ka));
    CHECK_OK(peer_open("gh100,p2p=none", &db, &kb));
    CHECK_OK(peer_open("ga102", &dc, &kc));
    CHECK_OK(kmd_mem_alloc(ka, 1u << 20, 0, KMD_MEM_VRAM, &ma));
    CHECK_OK(kmd_mem_alloc(ka, 1u << 16, 0, KMD_MEM_SYSMEM | KMD_MEM_CPU_MAP, &hs));
    uint32_t ranges_b = emu_rm_uvm_ranges(db), objs_b = emu_rm_live_objects(db);
    CHECK(kmd_mem_peer_map(kb, ka, ma, &pm) == HCQ_ERR_UNSUPPORTED && !pm);
    CHECKF(strstr(hcq_last_error(), "HCQ_RM_PEER=0"), "reason: %s", hcq_last_error());
    unsetenv("HCQ_RM_PEER");
    for (int i = 0; i < 2; i++) { /* the second time from the pair's cached refusal */
        CHECK(kmd_mem_peer_map(kb, ka, ma, &pm) == HCQ_ERR_UNSUPPORTED && !pm);
        CHECKF(strstr(hcq_last_error(), "NV0000_P2P_CAPS_STATUS_NOT_SUPPORTED"), "reason: %s",
               hcq_last_error());
    }
    CHECK(kmd_mem_peer_map(kc, ka, ma, &pm) == HCQ_ERR_UNSUPPORTED && !pm);
    CHECK(kmd_mem_peer_map(kb, ka, hs, &pm) == HCQ_ERR_UNSUPPORTED && !pm);
    CHECKF(strstr(hcq_last_error(), "video memory"), "reason: %s", hcq_last_error());
    CHECK(emu_rm_uvm_ranges(db) == ranges_b && emu_rm_live_objects(db) == objs_b);
    peer_close(&db, &kb);
    CHECK_OK(peer_open("gh100,p2p=pcie", &db, &kb));
    ranges_b = emu_rm_uvm_ranges(db);
    CHECK(kmd_mem_peer_map(kb, ka, ma, &pm) == HCQ_ERR_UNSUPPORTED && !pm);
    CHECKF(strstr(hcq_last_error(), "opt-in"), "reason: %s", hcq_last_error());
    CHECK(emu_rm_uvm_ranges(db) == ranges_b);
    setenv("HCQ_RM_PEER", "1", 1);
    CHECK_OK(kmd_mem_peer_map(kb, ka, ma, &pm));
    kmd_mem_free(kb, pm);
    pm = NULL;
    /* an NVLink pair (the emulator's default link) maps without the opt-in */
    unsetenv("HCQ_RM_PEER");
    peer_close(&db, &kb);
    CHECK_OK(peer_open("gh100", &db, &kb));
    CHECK_OK(kmd_mem_peer_map(kb, ka, ma, &pm));
    kmd_mem_free(kb, pm);
    pm = NULL;
done:
    if (kb)
        kmd_mem_free(kb, pm);
    if (ka) {
        kmd_mem_free(ka, hs);
        kmd_mem_free(ka, ma);
    }
    peer_close(&dc, &kc);
    peer_close(&db, &kb);
    peer_close(&da, &ka);
    unsetenv("HCQ_RM_PEER");
    emu_stats_get(&now);
    if (now.devs != base.devs || now.fds != base.fds || now.bos != base.bos || now.vms != base.vms)
        th_fail(t, __FILE__, __LINE__, "emulator resources leaked");
}

int
main(int argc, char **argv)
{
    static const struct th_case cases[] = {
        TH_CASE(peer_map_cleanup),
        TH_CASE(peer_map_refusals),
    };
    return th_run("emu_peer", NULL, cases, TH_COUNT(cases), argc - 1, argv + 1) ? 1 : 0;
}
