/* SPDX-License-Identifier: MIT */
/*
 * emu_prog.c - which kernel is at a QMD's program address. The emulator cannot execute
 * SASS, so it recognises the code the engine uploaded: either the bytes of a
 * `.text.<kernel>` section of one of the embedded cubins for the chip's SM version
 * (rm.md §7.2), or an emu program stub (emu.h) naming the kernel. The kernel's CPU twin
 * then stands in for the SASS. Layer: iface/emu.
 *
 * The ELF walk here is deliberately minimal (section headers and names, bounds-checked:
 * rm.md §7.1) and independent of src/gpu's cubin loader, so a loader bug that places
 * the wrong bytes is caught by a mismatch instead of being shared.
 */
#include "emu_priv.h"
#include "hcq_kernel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct emu_prog_text {
    char name[EMU_PROGRAM_NAME_MAX];
    const uint8_t *code;
    uint64_t size_B;
};

struct emu_prog_cache {
    struct emu_prog_text *t;
    uint32_t count, cap;
};

static uint16_t
rd16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t
rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t
rd64(const uint8_t *p)
{
    return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

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
    snprintf(t->name, sizeof t->name, "%s", name);
    t->code = code;
    t->size_B = size_B;
}

/* Add every `.text.<kernel>` of one cubin (64-bit little-endian ELF). */
static void
emu_prog_scan_cubin(struct emu_prog_cache *c, const uint8_t *elf, size_t n)
{
    if (n < 64 || memcmp(elf, "\177ELF", 4) || elf[4] != 2 || elf[5] != 1)
        return;
    uint64_t shoff = rd64(elf + 0x28);
    uint16_t shentsize = rd16(elf + 0x3A), shnum = rd16(elf + 0x3C), shstrndx = rd16(elf + 0x3E);
    if (shentsize < 64 || shstrndx >= shnum || shoff > n || (uint64_t)shnum * shentsize > n - shoff)
        return;
    const uint8_t *strsh = elf + shoff + (uint64_t)shstrndx * shentsize;
    uint64_t stroff = rd64(strsh + 0x18), strsz = rd64(strsh + 0x20);
    if (stroff > n || strsz > n - stroff)
        return;
    for (uint16_t i = 0; i < shnum; i++) {
        const uint8_t *sh = elf + shoff + (uint64_t)i * shentsize;
        uint32_t name_off = rd32(sh), type = rd32(sh + 4);
        uint64_t off = rd64(sh + 0x18), size = rd64(sh + 0x20);
        if (type != 1 /* SHT_PROGBITS */ || name_off >= strsz || off > n || size > n - off)
            continue;
        const char *name = (const char *)elf + stroff + name_off;
        if (!memchr(name, 0, strsz - name_off) || strncmp(name, ".text.", 6))
            continue;
        emu_prog_add(c, name + 6, elf + off, size);
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
emu_prog_identify(struct emu_dev *d, const uint8_t *code, size_t n, char *why, size_t why_B)
{
    const char *name = NULL;
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
        struct emu_prog_cache *c = emu_prog_cache_get(d);
        for (uint32_t i = 0; c && i < c->count && !name; i++)
            if (c->t[i].size_B <= n && !memcmp(c->t[i].code, code, c->t[i].size_B))
                name = c->t[i].name;
    }
    if (!name) {
        snprintf(why, why_B, "code (first dword 0x%08x) matches no embedded sm_%u kernel and no emu program stub",
                 n >= 4 ? rd32(code) : 0u, d->arch->sm_version);
        return NULL;
    }
    const struct hcq_kernel_desc *k = hcq_kernel_find(name);
    if (!k || !k->twin) {
        snprintf(why, why_B, "kernel '%s' has no CPU twin", name);
        return NULL;
    }
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
