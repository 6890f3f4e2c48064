/* SPDX-License-Identifier: MIT */
/*
 * emu_qmd.c - the compute engine of the GPU model: compute class methods (rm.md §5.3),
 * QMD decode for V03_00 (Ampere/Ada) and V04_00 (Hopper) from the field table of rm.md
 * §6.2, the launch (program identified by emu_prog.c, CPU twin run over the grid with the
 * parameters read from constant bank 0 at the arch's param offset), release semaphores
 * (32-bit unless RELEASE_PAYLOAD64B, §0 item 6) and dependent-QMD chains (§6.4).
 *
 * Hardware behaviour kept on purpose: a QMD of the wrong version for the channel's class
 * (V3 on Hopper) or a V4 QMD with QMD_TYPE != GRID_CTA is silently ignored, exactly as on
 * H200 (§0 items 1-2): no error, no release, the waiter times out.
 * Likewise a cubin kernel launched without its per-kernel constant bank (.nv.constantN.<k>,
 * e.g. nvcc's switch jump table in bank 2) never completes, as k_llm_matmul did on H200;
 * the model also says why once at WARN.
 * The field positions are this file's own reading of the doc, independent of src/gpu's
 * encoders, so an encoder mistake shows up as a disagreement. Layer: emu.
 */
#include "emu_gpu.h"
#include "gpu_qmd.h"
#include "hcq_kernel.h"

#include <stdio.h>
#include <string.h>

struct emu_bits {
    uint16_t hi, lo;
};

struct emu_qmd_release {
    struct emu_bits enable, structure, payload64, addr_lo, addr_hi, payload_lo, payload_hi;
};

struct emu_qmd_layout {
    uint32_t major; /* QMD_MAJOR_VERSION this layout decodes */
    uint32_t size_B;
    struct emu_bits major_version, type;
    uint32_t type_grid; /* the value meaning "grid of CTAs" */
    struct emu_bits prog_lo, prog_hi;
    struct emu_bits grid[3], block[3];
    struct emu_bits cb_lo, cb_hi, cb_size, cb_valid;
    uint32_t cb_shift;        /* cbuf address >> this in the QMD */
    uint32_t cb_valid_stride; /* bits between VALID(i) and VALID(i+1); addr/size fields +64 i */
    struct emu_qmd_release rel[3];
    struct emu_bits dep_enable, dep_action, dep_ptr;
    struct emu_bits shared, sm_min, sm_target, sm_max; /* shared bytes/CTA; carve-outs (v-1)*4 KiB */
    /* programmatic dependent launch (V04 only; has_latch false: absent) */
    bool has_latch;
    struct emu_bits arrive_valid, wait_valid, arrive_id, wait_id, pre_exit_last_cta, pre_exit_enable;
    struct emu_bits lmem_low, lmem_high; /* SHADER_LOCAL_MEMORY_LOW/HIGH_SIZE: bytes per thread */
    bool has_free_cta;                   /* FREE_CTA_SLOTS_EMPTY_SM and REGISTER_COUNT (V04 only) */
    struct emu_bits free_cta, regs;
};

#define B(h, l)                                                                                              \
    {                                                                                                        \
        h, l                                                                                                 \
    }

/* rm.md §6.2, column V03_00 (256 B); release1/2 blocks at +128 / +896 bits of release0. */
static const struct emu_qmd_layout emu_qmd_v03_00 = {
    .major = 3,
    .size_B = 256,
    .major_version = B(583, 580),
    .type = B(136, 136),
    .type_grid = 0, /* IS_QUEUE = 0 */
    .prog_lo = B(1567, 1536),
    .prog_hi = B(1584, 1568),
    .grid = {B(415, 384), B(431, 416), B(463, 448)},
    .block = {B(607, 592), B(623, 608), B(639, 624)},
    .cb_lo = B(1055, 1024),
    .cb_hi = B(1072, 1056),
    .cb_size = B(1087, 1075),
    .cb_valid = B(640, 640),
    .cb_shift = 0,
    .cb_valid_stride = 1,
    .rel =
        {
            {B(823, 823), B(831, 830), B(829, 829), B(799, 768), B(807, 800), B(863, 832), B(895, 864)},
            {B(951, 951), B(959, 958), B(957, 957), B(927, 896), B(935, 928), B(991, 960), B(1023, 992)},
            {B(1719, 1719), B(1727, 1726), B(1725, 1725), B(1695, 1664), B(1703, 1696), B(1759, 1728),
             B(1791, 1760)},
        },
    .dep_enable = B(512, 512),
    .dep_action = B(515, 513),
    .dep_ptr = B(511, 480),
    .shared = B(561, 544),
    .sm_min = B(567, 562),
    .sm_target = B(662, 657),
    .sm_max = B(574, 569),
    .lmem_low = B(759, 736),
    .lmem_high = B(1623, 1600),
};

/* rm.md §6.2, column V04_00 (384 B); release i control bits at 320 + 16 i, addresses +128 i. */
static const struct emu_qmd_layout emu_qmd_v04_00 = {
    .major = 4,
    .size_B = 384,
    .major_version = B(583, 580),
    .type = B(25, 23),
    .type_grid = 2, /* QMD_TYPE = GRID_CTA */
    .prog_lo = B(1247, 1216),
    .prog_hi = B(1272, 1248),
    .grid = {B(1055, 1024), B(1071, 1056), B(1103, 1088)},
    .block = {B(1167, 1152), B(1183, 1168), B(1199, 1184)},
    .cb_lo = B(1567, 1536),
    .cb_hi = B(1586, 1568),
    .cb_size = B(1599, 1587),
    .cb_valid = B(416, 416),
    .cb_shift = 6,
    .cb_valid_stride = 4,
    .rel =
        {
            {B(320, 320), B(322, 321), B(332, 332), B(671, 640), B(696, 672), B(735, 704), B(767, 736)},
            {B(336, 336), B(338, 337), B(348, 348), B(799, 768), B(824, 800), B(863, 832), B(895, 864)},
            {B(352, 352), B(354, 353), B(364, 364), B(927, 896), B(952, 928), B(991, 960), B(1023, 992)},
        },
    .dep_enable = B(368, 368),
    .dep_action = B(371, 369),
    .dep_ptr = B(479, 448),
    .shared = B(601, 584),
    .sm_min = B(613, 608),
    .sm_target = B(625, 620),
    .sm_max = B(619, 614),
    /* open-gpu-doc clcbc0qmd.h, QMDV04_00 */
    .has_free_cta = true,
    .free_cta = B(1147, 1140),
    .regs = B(1208, 1200),
    .has_latch = true,
    .arrive_valid = B(28, 28),
    .wait_valid = B(29, 29),
    .arrive_id = B(1503, 1472),
    .wait_id = B(1535, 1504),
    .pre_exit_last_cta = B(1150, 1150),
    .pre_exit_enable = B(1151, 1151),
    .lmem_low = B(535, 512),
    .lmem_high = B(567, 544),
};

#undef B

static uint64_t
emu_qf(const uint32_t *q, struct emu_bits f)
{
    uint64_t v = 0;
    for (unsigned b = 0; b <= (unsigned)(f.hi - f.lo); b++) {
        unsigned bit = f.lo + b;
        v |= (uint64_t)((q[bit / 32] >> (bit % 32)) & 1u) << b;
    }
    return v;
}

/* ==== Twins: address translation with the shared/local windows ==== */

struct emu_launch {
    struct emu_chan *ch;
    char why[160];
};

/* Window sizes: sm_90 forms generic shared addresses from SR_SWINHI (the high 32 bits)
 * (rm.md §8.5) so its shared window spans 4 GiB; the local window holds the 16 MiB
 * per-thread stack (§8.3). Smaller sm_8x windows are not documented: the model uses
 * 16 MiB for both there. Real hardware sends such accesses to shared/local memory
 * (nvgpu.md §3.4, the P0 bug); the model reports them. */
static void *
emu_twin_ptr(void *ctx, uint64_t va, uint64_t size_B)
{
    struct emu_launch *L = ctx;
    struct emu_chan *ch = L->ch;
    uint64_t sh_B = ch->d->arch->sm_version >= 90 ? 1ull << 32 : 1ull << 24, lo_B = 1ull << 24;
    const struct {
        uint64_t base, size_B;
        const char *name;
    } win[2] = {{ch->shared_window, sh_B, "shared"}, {ch->local_window, lo_B, "local"}};
    for (int i = 0; i < 2; i++) {
        if (win[i].base && va < win[i].base + win[i].size_B && win[i].base < va + size_B) {
            snprintf(L->why, sizeof L->why,
                     "global access at VA 0x%llx lies in the %s-memory window 0x%llx (+0x%llx): hardware "
                     "would redirect it to %s memory",
                     (unsigned long long)va, win[i].name, (unsigned long long)win[i].base,
                     (unsigned long long)win[i].size_B, win[i].name);
            return NULL;
        }
    }
    void *p = emu_mem_ptr(ch->desc.vm, va, size_B);
    if (!p)
        snprintf(L->why, sizeof L->why, "kernel access at VA 0x%llx (%llu bytes) not mapped",
                 (unsigned long long)va, (unsigned long long)size_B);
    return p;
}

/* ==== Launch ==== */

/* Field f of constant buffer i: the addr/size fields repeat every 64 bits, VALID every
 * cb_valid_stride bits (rm.md §6.2, "cbuf[i]" rows). */
static struct emu_bits
emu_cb_field(struct emu_bits f, uint32_t i, uint32_t stride)
{
    return (struct emu_bits){(uint16_t)(f.hi + stride * i), (uint16_t)(f.lo + stride * i)};
}

/* Lesson (H200, docs/emulator.md lesson_kernel_constant_bank_must_be_bound): nvcc puts a
 * kernel's `switch` jump table in `.nv.constantN.<kernel>` and the SASS branches through
 * it (BRX on c[N][...]). A QMD that does not bind that bank as constant buffer N, with
 * the section's bytes, sends the warps to garbage targets: on rm:0 k_llm_matmul's grid
 * never completed, with no Xid. Returns NULL when every bank is bound, else why not. */
static const char *
emu_qmd_kbanks_check(struct emu_chan *ch, const struct emu_qmd_layout *L, const uint32_t *q,
                     const struct emu_prog_kbanks *kb, uint32_t *bank_out, char *why, size_t why_B)
{
    for (uint32_t j = 0; kb && j < kb->count; j++) {
        const struct emu_prog_kbank *b = &kb->b[j];
        uint32_t i = b->index;
        *bank_out = i;
        if (!emu_qf(q, emu_cb_field(L->cb_valid, i, L->cb_valid_stride))) {
            snprintf(why, why_B, "CONSTANT_BUFFER_VALID(%u) is 0", i);
            return why;
        }
        uint64_t va =
            (emu_qf(q, emu_cb_field(L->cb_lo, i, 64)) | emu_qf(q, emu_cb_field(L->cb_hi, i, 64)) << 32)
            << L->cb_shift;
        uint32_t size_B = (uint32_t)emu_qf(q, emu_cb_field(L->cb_size, i, 64)) << 4;
        if (size_B < b->size_B) {
            snprintf(why, why_B, "constant buffer %u is 0x%x bytes, the section is 0x%x", i, size_B,
                     b->size_B);
            return why;
        }
        const uint8_t *p = emu_mem_ptr(ch->desc.vm, va, b->size_B);
        if (!p) {
            snprintf(why, why_B, "constant buffer %u at VA 0x%llx (0x%x bytes) is not mapped", i,
                     (unsigned long long)va, b->size_B);
            return why;
        }
        if (!b->relocated && memcmp(p, b->bytes, b->size_B)) {
            uint32_t at = 0;
            while (p[at] == b->bytes[at])
                at++;
            snprintf(why, why_B, "constant buffer %u at VA 0x%llx differs from the section at byte 0x%x", i,
                     (unsigned long long)va, at);
            return why;
        }
    }
    return NULL;
}

/* HCQ_DEBUG=qmd_dump (the engine dumps the fields at submit): what the GPU model ran, and a
 * cross-check of this file's decode against src/gpu's decoder, two independent readings
 * of rm.md §6.2 that must agree. */
static void
emu_qmd_dump(const struct emu_qmd_layout *L, const uint32_t *q, uint64_t qmd_va, const char *kernel,
             const uint32_t grid[3], const uint32_t block[3], uint64_t cb_va)
{
    HCQ_LOG_DEBUG("emu: QMD 0x%llx %s grid %ux%ux%u block %ux%ux%u cbuf0 0x%llx", (unsigned long long)qmd_va,
                  kernel, grid[0], grid[1], grid[2], block[0], block[1], block[2], (unsigned long long)cb_va);
    const struct gpu_qmd_ops *ops = gpu_qmd_ops_by_version(L->major << 8);
    struct gpu_qmd_desc g;
    if (!ops || gpu_qmd_decode(ops, q, &g) != HCQ_OK)
        return;
    for (int i = 0; i < 3; i++)
        if (g.grid[i] != grid[i] || g.block[i] != block[i] || g.cbuf[0].va != cb_va)
            HCQ_LOG_WARN(
                "emu: QMD 0x%llx: src/gpu decodes grid %u block %u cbuf0 0x%llx, the emulator %u %u 0x%llx",
                (unsigned long long)qmd_va, g.grid[i], g.block[i], (unsigned long long)g.cbuf[0].va, grid[i],
                block[i], (unsigned long long)cb_va);
}

static const struct emu_qmd_layout *
emu_qmd_layout_for(uint32_t cls)
{
    /* QMD version by compute class (rm.md §6.1) */
    return (cls >> 8) >= 0xCBu ? &emu_qmd_v04_00 : &emu_qmd_v03_00;
}

/* Programmatic dependent launch: the model runs a chain in order (a valid schedule of what the
 * hardware overlaps) but holds its QMDs to what ran on H100 (hcq suite dep_wait_chain): a QMD
 * that waits on a latch its predecessor does not arrive at never starts (a hang there), and a
 * latch id arrived at twice in one chain hung or faulted the channel. */
#define EMU_QMD_CHAIN_MAX 4096
struct emu_qmd_chain {
    int64_t prev_arrive; /* latch id the previous QMD of the chain arrives at, or -1 */
    int n_arrived;
    uint32_t arrived[EMU_QMD_CHAIN_MAX]; /* latch ids arrived at so far */
};

static int
emu_qmd_latch_check(struct emu_chan *ch, const struct emu_qmd_layout *L, const uint32_t *q, uint64_t qmd_va,
                    struct emu_qmd_chain *c)
{
    const int64_t prev_arrive = c->prev_arrive;
    c->prev_arrive = -1;
    if (!L->has_latch)
        return 0;
    if (emu_qf(q, L->wait_valid)) {
        uint32_t id = (uint32_t)emu_qf(q, L->wait_id);
        if (prev_arrive != (int64_t)id)
            return emu_chan_fail(
                ch, EMU_CHAN_ERR_GR_EXCEPTION,
                "QMD 0x%llx waits on latch %u, which the QMD before it in the chain does not "
                "arrive at (a hang on hardware)",
                (unsigned long long)qmd_va, id);
    }
    if (emu_qf(q, L->arrive_valid)) {
        uint32_t id = (uint32_t)emu_qf(q, L->arrive_id);
        for (int i = 0; i < c->n_arrived; i++)
            if (c->arrived[i] == id)
                return emu_chan_fail(
                    ch, EMU_CHAN_ERR_GR_EXCEPTION,
                    "QMD 0x%llx arrives at latch %u a second time in one chain (H100: a hang "
                    "or Xid 13)",
                    (unsigned long long)qmd_va, id);
        if (c->n_arrived < EMU_QMD_CHAIN_MAX)
            c->arrived[c->n_arrived++] = id;
        c->prev_arrive = id;
    }
    return 0;
}

static uint64_t
emu_round_up(uint64_t v, uint64_t a)
{
    return (v + a - 1) / a * a;
}

/* Local memory (rm.md §8.3): a grid whose threads need local memory (the QMD's LOW + HIGH
 * sizes per thread) runs on the store the GR context holds - the last SET_SHADER_LOCAL_MEMORY*
 * any channel of the device executed, not this channel's own. The store must hold the grid's
 * size per TPC, computed as the engine sizes stores (full warps of every SM of a TPC, 0x200 per
 * warp slice, 0x8000 per TPC). Too small, or never set, is what H100 reported as Xid 13
 * SKEDCHECK05_LOCAL_MEMORY_TOTAL_SIZE when one queue's channel set a smaller store over
 * another's; a store whose memory is gone is an MMU fault. */
/* The emulated chip's GR counts as the driver model set them (emu_dev_set_gr), with the defaults
 * of a model that set none: 64 warps per SM, 2 SMs per TPC, 1 TPC. */
static void
emu_gr_counts(const struct emu_dev *d, uint64_t *warps_per_sm, uint64_t *sm_per_tpc, uint64_t *tpcs)
{
    *warps_per_sm = d->gr_warps_per_sm ? d->gr_warps_per_sm : 64;
    *sm_per_tpc = d->gr_sm_per_tpc ? d->gr_sm_per_tpc : 2;
    *tpcs = d->gr_tpc_count ? d->gr_tpc_count : 1;
}

static int
emu_qmd_lmem_check(struct emu_chan *ch, const struct emu_qmd_layout *L, const uint32_t *q, uint64_t qmd_va)
{
    struct emu_dev *d = ch->d;
    uint64_t per_thread = emu_qf(q, L->lmem_low) + emu_qf(q, L->lmem_high);
    if (!per_thread)
        return 0;
    pthread_mutex_lock(&d->gr_lock);
    uint64_t va = d->gr_lmem_va, have = d->gr_lmem_per_tpc_B;
    pthread_mutex_unlock(&d->gr_lock);
    uint64_t warps, sms, tpcs;
    emu_gr_counts(d, &warps, &sms, &tpcs);
    uint64_t need = emu_round_up(emu_round_up(per_thread * 32, 0x200) * warps * sms, 0x8000);
    if (!va || need > have)
        return emu_chan_fail(
            ch, EMU_CHAN_ERR_GR_EXCEPTION,
            "QMD 0x%llx: SKEDCHECK05_LOCAL_MEMORY_TOTAL_SIZE: 0x%llx B/thread of local memory "
            "need 0x%llx B per TPC, the context's store at 0x%llx has 0x%llx",
            (unsigned long long)qmd_va, (unsigned long long)per_thread, (unsigned long long)need,
            (unsigned long long)va, (unsigned long long)have);
    if (!emu_mem_ptr(ch->desc.vm, va, have * tpcs))
        return emu_chan_fail(ch, EMU_CHAN_ERR_MMU_FAULT,
                             "QMD 0x%llx: local-memory store at VA 0x%llx (0x%llx B x %llu TPCs) not mapped",
                             (unsigned long long)qmd_va, (unsigned long long)va, (unsigned long long)have,
                             (unsigned long long)tpcs);
    return 0;
}

static int
emu_qmd_run_one(struct emu_chan *ch, uint32_t cls, uint64_t qmd_va, struct emu_qmd_chain *chain,
                uint64_t *next_va)
{
    const struct emu_qmd_layout *L = emu_qmd_layout_for(cls);
    *next_va = 0;
    const uint32_t *q = emu_mem_ptr(ch->desc.vm, qmd_va, L->size_B);
    if (!q)
        return emu_chan_fail(ch, EMU_CHAN_ERR_MMU_FAULT, "QMD at VA 0x%llx not mapped",
                             (unsigned long long)qmd_va);
    if (emu_qmd_latch_check(ch, L, q, qmd_va, chain) < 0)
        return -1;
    uint32_t major = (uint32_t)emu_qf(q, L->major_version), type = (uint32_t)emu_qf(q, L->type);
    if (major != L->major || type != L->type_grid) {
        /* the real GPU ignores it: no completion, no error (rm.md §0 items 1-2) */
        atomic_fetch_add(&ch->d->ignored_qmds, 1);
        HCQ_LOG_DEBUG(
            "emu: class 0x%04x ignored QMD at 0x%llx: version %u type %u (wants version %u type %u)", cls,
            (unsigned long long)qmd_va, major, type, L->major, L->type_grid);
        return 0;
    }
    uint32_t grid[3], block[3];
    for (int i = 0; i < 3; i++) {
        grid[i] = (uint32_t)emu_qf(q, L->grid[i]);
        block[i] = (uint32_t)emu_qf(q, L->block[i]);
    }
    uint64_t threads = (uint64_t)block[0] * block[1] * block[2];
    if (threads == 0 || threads > 1024 || block[2] > 64)
        return emu_chan_fail(ch, EMU_CHAN_ERR_GR_EXCEPTION,
                             "QMD 0x%llx: CTA %ux%ux%u out of range (<= 1024 threads)",
                             (unsigned long long)qmd_va, block[0], block[1], block[2]);
    /* FREE_CTA_SLOTS_EMPTY_SM: the hardware places the grid by the value given (1 holds it to one
     * CTA per SM). On H100 (2026-11-27)
     * 32 on grids whose SMs hold fewer CTAs faulted (Xid 13), and so did a nonzero value on a grid
     * of more than one wave at it inside the whole HCQ suite, though not every time: the model
     * faults both every time, so a driver that risks either fails here; 0 is the hardware's own
     * placement. The CTAs an SM holds: its warps, and 64K registers in 256-register units per
     * warp (a QMD without a register count, hand-built in tests, is bounded by warps only). */
    const uint64_t v = L->has_free_cta ? emu_qf(q, L->free_cta) : 0;
    if (v) {
        uint64_t ctas = (uint64_t)grid[0] * grid[1] * grid[2];
        uint64_t sm_warps, sm_per_tpc, tpcs;
        emu_gr_counts(ch->d, &sm_warps, &sm_per_tpc, &tpcs);
        uint64_t sms = sm_per_tpc * tpcs, warps = (threads + 31) / 32, regs = emu_qf(q, L->regs);
        uint64_t hold = sm_warps / warps;
        uint64_t per_warp = (regs * 32 + 255) & ~255ull;
        if (per_warp && 65536 / (per_warp * warps) < hold)
            hold = 65536 / (per_warp * warps);
        if (hold > 32)
            hold = 32;
        if (v > hold)
            return emu_chan_fail(
                ch, EMU_CHAN_ERR_GR_EXCEPTION,
                "QMD 0x%llx: FREE_CTA_SLOTS_EMPTY_SM %llu above the %llu CTAs of %llu threads "
                "and %llu registers an SM holds",
                (unsigned long long)qmd_va, (unsigned long long)v, (unsigned long long)hold,
                (unsigned long long)threads, (unsigned long long)regs);
        if (ctas > v * sms)
            return emu_chan_fail(ch, EMU_CHAN_ERR_GR_EXCEPTION,
                                 "QMD 0x%llx: FREE_CTA_SLOTS_EMPTY_SM %llu on a grid of %llu CTAs: more than "
                                 "one wave at that value on %llu SMs",
                                 (unsigned long long)qmd_va, (unsigned long long)v, (unsigned long long)ctas,
                                 (unsigned long long)sms);
    }
    uint64_t prog_va = emu_qf(q, L->prog_lo) | emu_qf(q, L->prog_hi) << 32;
    unsigned n = atomic_fetch_add(&ch->d->qmd_seen, 1) + 1;
    if (ch->d->opts.hang && n >= ch->d->opts.hang) {
        /* fault injection: this grid never finishes; the channel stops here for good */
        atomic_store(&ch->hung, true);
        return -1;
    }
    if (ch->d->opts.corrupt_qmd && n == ch->d->opts.corrupt_qmd)
        prog_va ^= 0x40000000ull; /* fault injection: a flipped program-address bit */
    /* shared memory (rm.md §6.7): the CTA fits the MIN carve-out, MIN <= TARGET <= MAX, and
     * no carve-out exceeds the SM's; a QMD breaking these cannot be placed as encoded.
     * All three zero (hand-built test QMDs) is left alone. */
    {
        uint64_t sh = emu_qf(q, L->shared), mn = emu_qf(q, L->sm_min), tg = emu_qf(q, L->sm_target);
        uint64_t mx = emu_qf(q, L->sm_max), cap = ch->d->arch->max_shared_per_sm_KiB / 4 + 1;
        if ((mn | tg | mx) && (!mn || (mn - 1) * 4096 < sh || mn > tg || tg > mx || mx > cap))
            return emu_chan_fail(
                ch, EMU_CHAN_ERR_GR_EXCEPTION,
                "QMD 0x%llx: shared memory %llu B with SM config min/target/max 0x%llx/0x%llx/"
                "0x%llx (carve-out (v-1)*4 KiB, %s holds <= %u KiB)",
                (unsigned long long)qmd_va, (unsigned long long)sh, (unsigned long long)mn,
                (unsigned long long)tg, (unsigned long long)mx, ch->d->arch->name,
                ch->d->arch->max_shared_per_sm_KiB);
    }
    if (emu_qmd_lmem_check(ch, L, q, qmd_va) < 0)
        return -1;
    uint64_t cb_va = (emu_qf(q, L->cb_lo) | emu_qf(q, L->cb_hi) << 32) << L->cb_shift;
    uint32_t cb_B = (uint32_t)emu_qf(q, L->cb_size) << 4;
    if (!emu_qf(q, L->cb_valid))
        return emu_chan_fail(ch, EMU_CHAN_ERR_GR_EXCEPTION, "QMD 0x%llx: constant buffer 0 not valid",
                             (unsigned long long)qmd_va);

    /* the program: stub or cubin text at prog_va */
    size_t avail = 0;
    const uint8_t *code = emu_mem_ptr_extent(ch->desc.vm, prog_va, &avail);
    char why[200];
    const struct emu_prog_kbanks *kbanks = NULL;
    const struct hcq_kernel_desc *k =
        code ? emu_prog_identify(ch->d, code, avail, &kbanks, why, sizeof why) : NULL;
    if (!code)
        return emu_chan_fail(ch, EMU_CHAN_ERR_MMU_FAULT, "QMD 0x%llx: program VA 0x%llx not mapped",
                             (unsigned long long)qmd_va, (unsigned long long)prog_va);
    if (!k)
        return emu_chan_fail(ch, EMU_CHAN_ERR_GR_EXCEPTION, "QMD 0x%llx: program at 0x%llx: %s",
                             (unsigned long long)qmd_va, (unsigned long long)prog_va, why);
    uint32_t poff = ch->d->arch->cbuf0_params_off_B + (kbanks ? kbanks->param_lead : 0);
    if (cb_B < poff + k->params_B)
        return emu_chan_fail(
            ch, EMU_CHAN_ERR_GR_EXCEPTION,
            "QMD 0x%llx: constant buffer 0 is 0x%x bytes, kernel %s needs 0x%x (params at 0x%x)",
            (unsigned long long)qmd_va, cb_B, k->name, poff + k->params_B, poff);
    const uint32_t *cb = emu_mem_ptr(ch->desc.vm, cb_va, cb_B);
    if (!cb)
        return emu_chan_fail(ch, EMU_CHAN_ERR_MMU_FAULT, "QMD 0x%llx: constant buffer 0 at 0x%llx not mapped",
                             (unsigned long long)qmd_va, (unsigned long long)cb_va);
    /* nvcc's SASS reads blockDim/gridDim from cbuf0 0x0..0x14 (rm.md §6.5) */
    if (emu_prog_is_cubin_code(code, avail) && ch->d->arch->sm_version < 100) {
        for (int i = 0; i < 3; i++)
            if (cb[i] != block[i] || cb[3 + i] != grid[i])
                return emu_chan_fail(
                    ch, EMU_CHAN_ERR_GR_EXCEPTION,
                    "QMD 0x%llx: cbuf0 blockDim/gridDim (%u,%u,%u)/(%u,%u,%u) differ from the "
                    "QMD's (%u,%u,%u)/(%u,%u,%u)",
                    (unsigned long long)qmd_va, cb[0], cb[1], cb[2], cb[3], cb[4], cb[5], block[0], block[1],
                    block[2], grid[0], grid[1], grid[2]);
    }
    uint32_t bank = 0;
    if (emu_prog_is_cubin_code(code, avail) &&
        emu_qmd_kbanks_check(ch, L, q, kbanks, &bank, why, sizeof why)) {
        /* the real GPU: the grid never completes, no release, no fault; the channel stays
         * stuck behind it. Said once per device at WARN so a developer sees why. */
        if (atomic_fetch_add(&ch->d->unbound_kbank_qmds, 1) == 0)
            HCQ_LOG_WARN(
                "emu: QMD 0x%llx launches %s without its constant bank %u: %s. On hardware the "
                "kernel's switch jump table (BRX through c[0x%x][...]) sends the warps astray and the "
                "grid never completes (H200: no Xid, no release): this channel now hangs as the GPU "
                "would. Bind the cubin's .nv.constant%u.%s as QMD constant buffer %u (docs/emulator.md)",
                (unsigned long long)qmd_va, k->name, bank, why, bank, bank, k->name, bank);
        atomic_store(&ch->hung, true);
        return -1;
    }
    if (hcq_debug_flags() & HCQ_DEBUG_QMD_DUMP)
        emu_qmd_dump(L, q, qmd_va, k->name, grid, block, cb_va);

    if ((uint64_t)grid[0] * grid[1] * grid[2] != 0) {
        struct emu_launch ctx = {.ch = ch};
        struct hcq_twin_launch l = {
            .params = (const uint8_t *)cb + poff,
            .grid = {grid[0], grid[1], grid[2]},
            .block = {block[0], block[1], block[2]},
            .ptr = emu_twin_ptr,
            .ctx = &ctx,
        };
        k->twin(&l);
        if (l.fault)
            return emu_chan_fail(ch, EMU_CHAN_ERR_MMU_FAULT, "kernel %s: %s", k->name,
                                 ctx.why[0] ? ctx.why : "twin reported a fault");
    }

    /* release semaphores, in slot order (§6.4) */
    for (int i = 0; i < 3; i++) {
        const struct emu_qmd_release *r = &L->rel[i];
        if (!emu_qf(q, r->enable))
            continue;
        uint64_t va = emu_qf(q, r->addr_lo) | emu_qf(q, r->addr_hi) << 32;
        uint64_t payload = emu_qf(q, r->payload_lo) | emu_qf(q, r->payload_hi) << 32;
        bool p64 = emu_qf(q, r->payload64) != 0;
        bool four = emu_qf(q, r->structure) == 0; /* 0 = FOUR_WORDS (payload + timestamp) */
        char who[48];
        snprintf(who, sizeof who, "QMD release %d", i);
        if (emu_chan_sem_write(ch, va, payload, p64, four, who) < 0)
            return -1;
    }
    if (emu_qf(q, L->dep_enable)) {
        uint32_t action = (uint32_t)emu_qf(q, L->dep_action);
        if (action != 1 && action != 3)
            return emu_chan_fail(ch, EMU_CHAN_ERR_GR_EXCEPTION,
                                 "QMD 0x%llx: dependent QMD action %u not modelled",
                                 (unsigned long long)qmd_va, action);
        *next_va = emu_qf(q, L->dep_ptr) << 8;
    }
    return 0;
}

static int
emu_qmd_launch(struct emu_chan *ch, uint32_t cls, uint64_t qmd_va)
{
    static _Thread_local struct emu_qmd_chain chain;
    chain.prev_arrive = -1;
    chain.n_arrived = 0;
    /* a chain of dependent QMDs runs back to back (rm.md §5.5, §6.4); bounded so a cycle
     * is reported instead of spinning forever */
    for (int depth = 0; qmd_va; depth++) {
        if (depth == EMU_QMD_CHAIN_MAX)
            return emu_chan_fail(ch, EMU_CHAN_ERR_GR_EXCEPTION,
                                 "dependent QMD chain longer than 4096 (a cycle?)");
        uint64_t next;
        if (emu_qmd_run_one(ch, cls, qmd_va, &chain, &next) < 0)
            return -1;
        qmd_va = next;
    }
    return 0;
}

/* ==== Compute methods, rm.md §5.3 ==== */

int
emu_qmd_method(struct emu_chan *ch, uint32_t cls, uint32_t mthd, uint32_t data)
{
    bool hopper = emu_cls_is_hopper_plus(cls);
    switch (mthd) {
    case 0x100:
    case 0x110:
    case 0x140: /* NO_OPERATION, WAIT_FOR_IDLE, PM_TRIGGER */
    case 0x214:
    case 0x218:
    case 0x21C:
    case 0x288:
    case 0x298:
    case 0x2B0:
    case 0x2CC:
    case 0x2EC: /* SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_C: MAX_SM_COUNT */
    case 0x310:
    case 0xD94:
    case 0x1528:
    case 0x1698:
        return 0; /* state the model does not need: caches, SM counts, versions */
    /* The local-memory store is GR context state, shared by the device's channels (emu_priv.h
     * gr_lmem_*): the upper half waits in the channel, the lower half makes the value current. */
    case 0x790: /* SET_SHADER_LOCAL_MEMORY_A: ADDRESS_UPPER 24:0 */
        ch->lmem_va_hi = data & 0x1FFFFFFu;
        return 0;
    case 0x794: /* SET_SHADER_LOCAL_MEMORY_B: ADDRESS_LOWER */
        pthread_mutex_lock(&ch->d->gr_lock);
        ch->d->gr_lmem_va = (uint64_t)ch->lmem_va_hi << 32 | data;
        pthread_mutex_unlock(&ch->d->gr_lock);
        return 0;
    case 0x2E4: /* SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A: SIZE_UPPER 7:0 */
        ch->lmem_size_hi = data & 0xFFu;
        return 0;
    case 0x2E8: /* SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_B: SIZE_LOWER (bytes per TPC) */
        pthread_mutex_lock(&ch->d->gr_lock);
        ch->d->gr_lmem_per_tpc_B = (uint64_t)ch->lmem_size_hi << 32 | data;
        pthread_mutex_unlock(&ch->d->gr_lock);
        return 0;
    case 0x158:
    case 0x15C:
    case 0x160:
    case 0x164:
        if (hopper)
            return 0; /* SET_REPORT_SEMAPHORE_PAYLOAD/ADDRESS (Hopper+): stored, unused */
        break;
    case 0x2A0:
        ch->shared_window = (ch->shared_window & 0xFFFFFFFFull) | ((uint64_t)(data & 0x1FFFFu) << 32);
        return 0;
    case 0x2A4:
        ch->shared_window = (ch->shared_window & ~0xFFFFFFFFull) | data;
        return 0;
    case 0x7B0:
        ch->local_window = (ch->local_window & 0xFFFFFFFFull) | ((uint64_t)(data & 0x1FFFFu) << 32);
        return 0;
    case 0x7B4:
        ch->local_window = (ch->local_window & ~0xFFFFFFFFull) | data;
        return 0;
    case 0x2B4:
        ch->pcas_a = data;
        return 0; /* SEND_PCAS_A = QMD VA >> 8 */
    case 0x2B8:
        return 0; /* SEND_PCAS_B */
    case 0x2BC:   /* SEND_SIGNALING_PCAS_B: SCHEDULE bit 1 */
        return (data & 2u) ? emu_qmd_launch(ch, cls, (uint64_t)ch->pcas_a << 8) : 0;
    case 0x2C0: { /* SEND_SIGNALING_PCAS2_B: PCAS_ACTION 3:0 */
        uint32_t action = data & 0xFu;
        if (action == 2 || action == 3 || action == 9 || action == 0xA || action == 0xB)
            return emu_qmd_launch(ch, cls, (uint64_t)ch->pcas_a << 8);
        if (action == 0 || action == 1 || action == 8)
            return 0;
        return emu_chan_fail(ch, EMU_CHAN_ERR_GR_EXCEPTION, "SEND_SIGNALING_PCAS2_B action 0x%x not modelled",
                             action);
    }
    case 0x1B00:
        ch->report_sem[0] = data;
        return 0; /* SET_REPORT_SEMAPHORE_A: VA upper */
    case 0x1B04:
        ch->report_sem[1] = data;
        return 0; /* _B: VA lower */
    case 0x1B08:
        ch->report_sem[2] = data;
        return 0;  /* _C: payload */
    case 0x1B0C: { /* _D: OPERATION 1:0 (0 RELEASE), STRUCTURE_SIZE 28 */
        if ((data & 3u) != 0)
            return emu_chan_fail(ch, EMU_CHAN_ERR_GR_EXCEPTION,
                                 "SET_REPORT_SEMAPHORE_D 0x%08x: only RELEASE is "
                                 "modelled",
                                 data);
        uint64_t va = (uint64_t)(ch->report_sem[0] & 0x1FFFFFFu) << 32 | ch->report_sem[1];
        return emu_chan_sem_write(ch, va, ch->report_sem[2], false, !((data >> 28) & 1u),
                                  "SET_REPORT_SEMAPHORE_D");
    }
    default:
        break;
    }
    return emu_chan_fail(ch, EMU_CHAN_ERR_GR_EXCEPTION,
                         "compute class 0x%04x: illegal method 0x%04x (data 0x%08x)", cls, mthd, data);
}
