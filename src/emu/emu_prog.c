/* SPDX-License-Identifier: MIT */
/*
 * emu_prog.c - which kernel is at a QMD's program address. The emulator cannot execute
 * SASS, so it recognises the code the engine uploaded: either the bytes of a
 * `.text.<kernel>` section of one of the embedded cubins for the chip's SM version
 * (rm.md §7.2), or an emu program stub (emu.h) naming the kernel. The kernel's CPU twin
 * then stands in for the SASS. Layer: emu.
 *
 * Each kernel's own constant banks `.nv.constantN.<kernel>` (N != 0) are recorded with it:
 * nvcc puts a `switch` jump table there and the SASS reads it through c[N][...], so the
 * launch must bind the bank (emu_qmd.c checks; learned on H200, docs/emulator.md).
 *
 * The ELF walk here is deliberately minimal (section headers and names, bounds-checked:
 * rm.md §7.1) and independent of src/gpu's cubin loader, so a loader bug that places
 * the wrong bytes is caught by a mismatch instead of being shared. (Only the byte readers,
 * src/util/util_le.h, are common: they hold no knowledge of the format.)
 */
#include "emu_priv.h"
#include "gpu_cubin.h"
#include "hcq_kernel.h"
#include "util_le.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct emu_prog_text {
    char name[EMU_PROGRAM_NAME_MAX];
    const uint8_t *code;
    uint64_t size_B;
    struct emu_prog_kbanks kbanks;
};

struct emu_prog_cache {
    struct emu_prog_text *t;
    uint32_t count, cap;
};

static void
emu_prog_add(struct emu_prog_cache *c, const char *name, const uint8_t *code, uint64_t size_B)
{
    if (strlen(name) >= EMU_PROGRAM_NAME_MAX || size_B == 0)
        return;
    if (c->count == c->cap) {
        uint32_t cap = c->cap ? c->cap * 2 : 32;
        struct emu_prog_text *n = realloc(c->t, cap * sizeof *n);
        if (!n)
            return; /* then that kernel is reported as unknown: visible, not silent */
        c->t = n;
        c->cap = cap;
    }
    struct emu_prog_text *t = &c->t[c->count++];
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", name);
    t->code = code;
    t->size_B = size_B;
}

/* `.nv.constantN.<kernel>` with N != 0: *index_out = N, *kernel_out = the kernel's name. */
static bool
emu_prog_kbank_name(const char *name, uint32_t *index_out, const char **kernel_out)
{
    if (strncmp(name, ".nv.constant", 12) || name[12] < '1' || name[12] > '9')
        return false;
    char *end;
    unsigned long idx = strtoul(name + 12, &end, 10);
    if (*end != '.' || end[1] == 0 || idx > 31)
        return false;
    *index_out = (uint32_t)idx;
    *kernel_out = end + 1;
    return true;
}

/* The kernel entry of this cubin (entries [first, count)) named `kernel`, or NULL. */
static struct emu_prog_text *
emu_prog_find_text(struct emu_prog_cache *c, uint32_t first, const char *kernel)
{
    for (uint32_t i = first; i < c->count; i++)
        if (!strcmp(c->t[i].name, kernel))
            return &c->t[i];
    return NULL;
}

/* Add every `.text.<kernel>` of one cubin (64-bit little-endian ELF). */
static void
emu_prog_scan_cubin(struct emu_prog_cache *c, const uint8_t *elf, size_t n)
{
    if (n < 64 || memcmp(elf, "\177ELF", 4) || elf[4] != 2 || elf[5] != 1)
        return;
    uint64_t shoff = util_le64(elf + 0x28);
    uint16_t shentsize = util_le16(elf + 0x3A), shnum = util_le16(elf + 0x3C),
             shstrndx = util_le16(elf + 0x3E);
    if (shentsize < 64 || shstrndx >= shnum || shoff > n || (uint64_t)shnum * shentsize > n - shoff)
        return;
    const uint8_t *strsh = elf + shoff + (uint64_t)shstrndx * shentsize;
    uint64_t stroff = util_le64(strsh + 0x18), strsz = util_le64(strsh + 0x20);
    if (stroff > n || strsz > n - stroff)
        return;
    uint32_t first = c->count;
    /* pass 1: the kernels' code; pass 2: their constant banks and the banks' relocations
     * (section order in the file is not code-first, so two passes) */
    for (int pass = 1; pass <= 2; pass++) {
        for (uint16_t i = 0; i < shnum; i++) {
            const uint8_t *sh = elf + shoff + (uint64_t)i * shentsize;
            uint32_t name_off = util_le32(sh), type = util_le32(sh + 4);
            uint64_t off = util_le64(sh + 0x18), size = util_le64(sh + 0x20);
            bool progbits = type == 1 /* SHT_PROGBITS */, rela = type == 4 /* SHT_RELA */;
            if ((!progbits && !rela) || name_off >= strsz || off > n || size > n - off)
                continue;
            const char *name = (const char *)elf + stroff + name_off;
            if (!memchr(name, 0, strsz - name_off))
                continue;
            if (pass == 1) {
                if (progbits && !strncmp(name, ".text.", 6))
                    emu_prog_add(c, name + 6, elf + off, size);
                continue;
            }
            uint32_t idx;
            const char *kernel;
            if (rela && strncmp(name, ".rela", 5))
                continue;
            if (!emu_prog_kbank_name(rela ? name + 5 : name, &idx, &kernel))
                continue;
            struct emu_prog_text *t = emu_prog_find_text(c, first, kernel);
            if (!t)
                continue;
            uint32_t j = 0;
            while (j < t->kbanks.count && t->kbanks.b[j].index != idx)
                j++;
            if (j == EMU_PROG_KBANK_MAX || size > (1u << 16))
                continue; /* more banks than the model tracks: that check is skipped, not faked */
            if (j == t->kbanks.count) {
                t->kbanks.count++;
                t->kbanks.b[j].index = idx;
            }
            if (rela)
                t->kbanks.b[j].relocated = size != 0;
            else {
                t->kbanks.b[j].bytes = elf + off;
                t->kbanks.b[j].size_B = (uint32_t)size;
            }
        }
    }
    /* where each kernel's parameters start in its window (a 64-byte aligned __grid_constant__
     * struct does not start at 0): the cubin parser's reading of KPARAM_INFO */
    struct gpu_cubin_image *img = NULL;
    if (gpu_cubin_load(elf, n, &img) == HCQ_OK) {
        for (uint32_t i = first; i < c->count; i++)
            c->t[i].kbanks.param_lead = gpu_cubin_kernel_param_lead(gpu_cubin_kernel_find(img, c->t[i].name));
        gpu_cubin_destroy(img);
    }
    /* a .rela section without its bank leaves an entry without bytes: drop it */
    for (uint32_t i = first; i < c->count; i++) {
        struct emu_prog_kbanks *kb = &c->t[i].kbanks;
        uint32_t m = 0;
        for (uint32_t j = 0; j < kb->count; j++)
            if (kb->b[j].bytes)
                kb->b[m++] = kb->b[j];
        kb->count = m;
    }
}

static struct emu_prog_cache *
emu_prog_cache_get(struct emu_dev *d)
{
    pthread_mutex_lock(&d->gpu_lock);
    if (!d->progs) {
        struct emu_prog_cache *c = calloc(1, sizeof *c);
        if (c) {
            for (uint32_t i = 0; hcq_cubin_at(i); i++) {
                const struct hcq_cubin *cb = hcq_cubin_at(i);
                if (cb->sm_version == d->arch->sm_version)
                    emu_prog_scan_cubin(c, cb->data, cb->size_B);
            }
        }
        d->progs = c;
    }
    struct emu_prog_cache *c = d->progs;
    pthread_mutex_unlock(&d->gpu_lock);
    return c;
}

const struct hcq_kernel_desc *
emu_prog_identify(struct emu_dev *d, const uint8_t *code, size_t n, const struct emu_prog_kbanks **kbanks_out,
                  char *why, size_t why_B)
{
    const char *name = NULL;
    const struct emu_prog_kbanks *kbanks = NULL;
    if (n >= sizeof(struct emu_program_stub)) {
        const struct emu_program_stub *s = (const void *)code;
        uint64_t magic;
        memcpy(&magic, code, sizeof magic); /* program VAs need not be 8-byte aligned */
        if (magic == EMU_PROGRAM_MAGIC) {
            if (!memchr(s->name, 0, sizeof s->name)) {
                snprintf(why, why_B, "emu program stub without a NUL-terminated name");
                return NULL;
            }
            name = s->name;
        }
    }
    if (!name) {
        /* the first kernel whose code this is. Kernels with identical code share the entry
         * found first: harmless where they compute the same (k_fill_f32 / k_fill_u32 on
         * sm_90), wrong where their parameters differ - an empty measurement kernel once
         * matched k_empty on sm_86/87 and faulted its launches, so such a kernel must differ
         * in code (store something) */
        struct emu_prog_cache *c = emu_prog_cache_get(d);
        for (uint32_t i = 0; c && i < c->count && !name; i++)
            if (c->t[i].size_B <= n && !memcmp(c->t[i].code, code, c->t[i].size_B)) {
                name = c->t[i].name;
                kbanks = &c->t[i].kbanks;
            }
    }
    if (!name) {
        snprintf(why, why_B,
                 "code (first dword 0x%08x) matches no embedded sm_%u kernel and no emu program stub",
                 n >= 4 ? util_le32(code) : 0u, d->arch->sm_version);
        return NULL;
    }
    const struct hcq_kernel_desc *k = hcq_kernel_find(name);
    if (!k || !k->twin) {
        snprintf(why, why_B, "kernel '%s' has no CPU twin", name);
        return NULL;
    }
    if (kbanks_out)
        *kbanks_out = kbanks;
    return k;
}

/* True when the program came from a cubin (so SASS would read cbuf0's driver area). */
bool
emu_prog_is_cubin_code(const uint8_t *code, size_t n)
{
    uint64_t magic = 0;
    if (n >= sizeof magic)
        memcpy(&magic, code, sizeof magic);
    return magic != EMU_PROGRAM_MAGIC;
}

void
emu_prog_fini(struct emu_dev *d)
{
    if (d->progs) {
        free(d->progs->t);
        free(d->progs);
        d->progs = NULL;
    }
}
