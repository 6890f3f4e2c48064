/* SPDX-License-Identifier: MIT */
/*
 * gpu_cubin.c - cubin (CUDA ELF) loader: sections, layout, relocations, .nv.info attributes,
 * kernels and constant banks. Layer: gpu (pure). Facts: docs/hw/rm.md §7; checked against
 * nvcc 13.0 cubins (tests/data/gpu_cubin_test.*.cubin). What a launch of a loaded kernel
 * needs (cbuf0, QMD description, limits) is gpu_cubin_launch.c.
 *
 * Every read goes through util_le*() on a range that was checked against the buffer first; every
 * count and offset of the file is validated before use, so malformed input yields
 * HCQ_ERR_FORMAT with a message (tests/fuzz/fuzz_cubin.c hammers this).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_cubin.h"
#include "util_le.h"

/* ELF64 constants (System V gABI). */
#define ELF_EHDR_B 64u
#define ELF_SHDR_B 64u
#define ELF_SYM_B 24u
#define ELF_REL_B 16u
#define ELF_RELA_B 24u
#define SHT_PROGBITS 1u
#define SHT_SYMTAB 2u
#define SHT_STRTAB 3u
#define SHT_RELA 4u
#define SHT_NOBITS 8u
#define SHT_REL 9u
#define SHF_ALLOC 0x2u
#define SHN_LORESERVE 0xFF00u

#define CUBIN_MAX_IMAGE_B (256ull << 20) /* refuse absurd NOBITS sizes (fuzzing, corruption) */
#define CUBIN_MAX_ALIGN_B (1u << 20)

struct sec {
    uint32_t name, type, link, info;
    uint64_t flags, off, size, align, entsize;
    const char *nm; /* validated name */
    int64_t place;  /* offset in the image, -1 if not placed */
};

struct elf {
    const uint8_t *d;
    size_t n;
    uint32_t shnum;
    struct sec *s;
    uint32_t symtab; /* index of .symtab, 0 if none */
    uint32_t nsyms;
};

#define FMT_ERR(...) hcq_err(HCQ_ERR_FORMAT, "gpu_cubin_load: " __VA_ARGS__)

/* True when [off, off+len) lies inside a buffer of n bytes (overflow-safe). */
static bool
in_range(uint64_t off, uint64_t len, uint64_t n)
{
    return off <= n && len <= n - off;
}

/* NUL-terminated string at table section t, offset o; NULL if out of bounds. */
static const char *
str_at(const struct elf *e, uint32_t t, uint64_t o)
{
    if (t >= e->shnum || e->s[t].type != SHT_STRTAB || o >= e->s[t].size)
        return NULL;
    const char *base = (const char *)e->d + e->s[t].off;
    if (!memchr(base + o, '\0', e->s[t].size - o))
        return NULL;
    return base + o;
}

static enum hcq_status
elf_headers(struct elf *e)
{
    const uint8_t *d = e->d;
    if (e->n < ELF_EHDR_B)
        return FMT_ERR("file of %zu bytes is shorter than the ELF header (64)", e->n);
    if (memcmp(d,
               "\x7f"
               "ELF",
               4) != 0)
        return FMT_ERR("bad ELF magic 0x%08x", util_le32(d));
    if (d[4] != 2 || d[5] != 1)
        return FMT_ERR("ELF class/data %u/%u (expected 2/1: 64-bit little-endian)", d[4], d[5]);
    if (util_le16(d + 18) != GPU_ELF_EM_CUDA)
        return FMT_ERR("e_machine %u (expected %u, EM_CUDA)", util_le16(d + 18), GPU_ELF_EM_CUDA);
    uint64_t shoff = util_le64(d + 0x28);
    uint32_t shentsize = util_le16(d + 0x3A), shstrndx = util_le16(d + 0x3E);
    e->shnum = util_le16(d + 0x3C);
    if (shentsize != ELF_SHDR_B)
        return FMT_ERR("e_shentsize %u (expected %u)", shentsize, ELF_SHDR_B);
    if (e->shnum == 0 || !in_range(shoff, (uint64_t)e->shnum * ELF_SHDR_B, e->n))
        return FMT_ERR("section headers (%u at 0x%" PRIx64 ") outside the %zu-byte file", e->shnum, shoff,
                       e->n);
    if (shstrndx >= e->shnum)
        return FMT_ERR("e_shstrndx %u >= e_shnum %u", shstrndx, e->shnum);
    e->s = calloc(e->shnum, sizeof *e->s);
    if (!e->s)
        return hcq_err(HCQ_ERR_NOMEM, "gpu_cubin_load: %u section headers", e->shnum);
    for (uint32_t i = 0; i < e->shnum; i++) {
        const uint8_t *h = d + shoff + (uint64_t)i * ELF_SHDR_B;
        struct sec *s = &e->s[i];
        s->name = util_le32(h);
        s->type = util_le32(h + 4);
        s->flags = util_le64(h + 8);
        s->off = util_le64(h + 0x18);
        s->size = util_le64(h + 0x20);
        s->link = util_le32(h + 0x28);
        s->info = util_le32(h + 0x2C);
        s->align = util_le64(h + 0x30);
        s->entsize = util_le64(h + 0x38);
        s->place = -1;
        if (s->type != SHT_NOBITS && s->type != 0 && !in_range(s->off, s->size, e->n))
            return FMT_ERR("section %u (0x%" PRIx64 " bytes at 0x%" PRIx64 ") outside the %zu-byte file", i,
                           s->size, s->off, e->n);
    }
    if (e->s[shstrndx].type != SHT_STRTAB)
        return FMT_ERR("section-name table %u has type %u (expected %u)", shstrndx, e->s[shstrndx].type,
                       SHT_STRTAB);
    for (uint32_t i = 0; i < e->shnum; i++) {
        e->s[i].nm = str_at(e, shstrndx, e->s[i].name);
        if (!e->s[i].nm)
            return FMT_ERR("section %u name offset 0x%x outside .shstrtab", i, e->s[i].name);
        if (e->s[i].type == SHT_SYMTAB) {
            if (e->s[i].entsize != ELF_SYM_B || e->s[i].size % ELF_SYM_B)
                return FMT_ERR(".symtab entsize %" PRIu64 " size %" PRIu64 " (expected 24-byte entries)",
                               e->s[i].entsize, e->s[i].size);
            if (e->symtab)
                return FMT_ERR("more than one .symtab");
            e->symtab = i;
            e->nsyms = (uint32_t)(e->s[i].size / ELF_SYM_B);
        }
    }
    return HCQ_OK;
}

struct sym {
    const char *name;
    uint64_t value;
    uint32_t shndx;
    uint8_t type, other;
};

static enum hcq_status
elf_sym(const struct elf *e, uint32_t i, struct sym *out)
{
    if (!e->symtab || i >= e->nsyms)
        return FMT_ERR("symbol index %u out of range (%u symbols)", i, e->nsyms);
    const uint8_t *p = e->d + e->s[e->symtab].off + (uint64_t)i * ELF_SYM_B;
    out->name = str_at(e, e->s[e->symtab].link, util_le32(p));
    if (!out->name)
        return FMT_ERR("symbol %u name offset 0x%x outside its string table", i, util_le32(p));
    out->type = p[4] & 0xF;
    out->other = p[5];
    out->shndx = util_le16(p + 6);
    out->value = util_le64(p + 8);
    return HCQ_OK;
}

/* ==== Layout ==== */

static bool
sec_loadable(const struct sec *s)
{
    /* Code, module constant banks, initialised and uninitialised __device__ data.
     * .nv.shared.* is per-CTA on-chip memory, .nv.constant0.* a template built per launch. */
    if (!(s->flags & SHF_ALLOC) || (s->type != SHT_PROGBITS && s->type != SHT_NOBITS))
        return false;
    if (strncmp(s->nm, ".nv.shared.", 11) == 0 || strncmp(s->nm, ".nv.constant0", 13) == 0)
        return false;
    return true;
}

static enum hcq_status
elf_layout(struct elf *e, struct gpu_cubin_image *img)
{
    uint64_t cur = 0;
    for (uint32_t i = 0; i < e->shnum; i++) {
        struct sec *s = &e->s[i];
        if (!sec_loadable(s))
            continue;
        uint64_t a = s->align > GPU_CUBIN_SECTION_ALIGN_B ? s->align : GPU_CUBIN_SECTION_ALIGN_B;
        if (a > CUBIN_MAX_ALIGN_B || (a & (a - 1)))
            return FMT_ERR("section %s alignment 0x%" PRIx64 " (expected a power of two <= 1 MiB)", s->nm,
                           s->align);
        cur = (cur + a - 1) & ~(a - 1);
        if (s->size > CUBIN_MAX_IMAGE_B || cur + s->size > CUBIN_MAX_IMAGE_B)
            return FMT_ERR("image would exceed %llu MiB at section %s (0x%" PRIx64 " bytes)",
                           CUBIN_MAX_IMAGE_B >> 20, s->nm, s->size);
        s->place = (int64_t)cur;
        cur += s->size;
    }
    img->size_B = cur;
    img->alloc_B = ((cur + 4095) & ~(uint64_t)4095) + 4096; /* prefetch slack (rm.md §7.4 step 3) */
    img->data = calloc(1, cur ? cur : 1);
    if (!img->data)
        return hcq_err(HCQ_ERR_NOMEM, "gpu_cubin_load: image of %" PRIu64 " bytes", cur);
    for (uint32_t i = 0; i < e->shnum; i++) {
        const struct sec *s = &e->s[i];
        if (s->place >= 0 && s->type == SHT_PROGBITS)
            memcpy(img->data + s->place, e->d + s->off, s->size);
    }
    return HCQ_OK;
}

/* ==== Relocations ==== */

static uint32_t
reloc_width(uint32_t type)
{
    switch (type) {
    case R_CUDA_64:
        return 8;
    case R_CUDA_ABS32_LO_32:
    case R_CUDA_ABS32_HI_32:
        return 4;
    default:
        return 0;
    }
}

static enum hcq_status
elf_relocs_one(struct elf *e, uint32_t ri, struct gpu_cubin_image *img, uint32_t *cap)
{
    const struct sec *rs = &e->s[ri];
    bool rela = rs->type == SHT_RELA;
    uint32_t ent = rela ? ELF_RELA_B : ELF_REL_B;
    if (rs->size % ent)
        return FMT_ERR("%s size %" PRIu64 " is not a multiple of %u", rs->nm, rs->size, ent);
    if (rs->info >= e->shnum)
        return FMT_ERR("%s patches section %u of %u", rs->nm, rs->info, e->shnum);
    const struct sec *ts = &e->s[rs->info];
    if (ts->place < 0)
        return HCQ_OK; /* e.g. .rela.debug_frame: the patched section is not loaded */
    for (uint64_t k = 0; k < rs->size / ent; k++) {
        const uint8_t *p = e->d + rs->off + k * ent;
        uint64_t r_off = util_le64(p), info = util_le64(p + 8);
        int64_t addend = rela ? (int64_t)util_le64(p + 16) : 0;
        uint32_t type = (uint32_t)info, symi = (uint32_t)(info >> 32);
        uint32_t w = reloc_width(type);
        if (!w)
            return hcq_err(HCQ_ERR_UNSUPPORTED,
                           "gpu_cubin_load: %s entry %" PRIu64
                           ": relocation type 0x%x not supported (R_CUDA_64, ABS32_LO/HI_32 are)",
                           rs->nm, k, type);
        /* ABS32 patches the immediate in bits 63:32 of the instruction at r_offset (rm.md §7.4) */
        uint64_t at = r_off + (w == 4 ? 4 : 0);
        if (!in_range(at, w, ts->size))
            return FMT_ERR("%s entry %" PRIu64 ": offset 0x%" PRIx64 " outside %s (0x%" PRIx64 " bytes)",
                           rs->nm, k, r_off, ts->nm, ts->size);
        struct sym sy;
        enum hcq_status st = elf_sym(e, symi, &sy);
        if (st != HCQ_OK)
            return st;
        if (sy.shndx == 0 || sy.shndx >= SHN_LORESERVE || sy.shndx >= e->shnum || e->s[sy.shndx].place < 0)
            return hcq_err(HCQ_ERR_UNSUPPORTED,
                           "gpu_cubin_load: %s entry %" PRIu64
                           ": symbol %s is in section %u, which is not loaded",
                           rs->nm, k, sy.name, sy.shndx);
        if (!rela && type == R_CUDA_64) /* REL: the addend is stored at the location */
            addend = (int64_t)util_le64(img->data + ts->place + at);
        int64_t target = e->s[sy.shndx].place + (int64_t)sy.value + addend;
        if (sy.value > img->size_B || addend < -(int64_t)img->size_B || addend > (int64_t)img->size_B ||
            target < 0 || (uint64_t)target > img->size_B)
            return FMT_ERR("%s entry %" PRIu64 ": target %s+0x%" PRIx64 "%+" PRId64 " outside the image",
                           rs->nm, k, sy.name, sy.value, addend);
        if (img->reloc_count == *cap) {
            uint32_t ncap = *cap ? *cap * 2 : 16;
            struct gpu_cubin_reloc *nr = realloc(img->relocs, ncap * sizeof *nr);
            if (!nr)
                return hcq_err(HCQ_ERR_NOMEM, "gpu_cubin_load: %u relocations", ncap);
            img->relocs = nr;
            *cap = ncap;
        }
        img->relocs[img->reloc_count++] = (struct gpu_cubin_reloc){
            .patch_off_B = (uint64_t)ts->place + at,
            .target_off_B = target,
            .type = type,
        };
    }
    return HCQ_OK;
}

static enum hcq_status
elf_relocs(struct elf *e, struct gpu_cubin_image *img)
{
    uint32_t cap = 0;
    for (uint32_t i = 0; i < e->shnum; i++) {
        if (e->s[i].type != SHT_REL && e->s[i].type != SHT_RELA)
            continue;
        enum hcq_status st = elf_relocs_one(e, i, img, &cap);
        if (st != HCQ_OK)
            return st;
    }
    return HCQ_OK;
}

enum hcq_status
gpu_cubin_relocate(struct gpu_cubin_image *img, uint64_t base_va)
{
    for (uint32_t i = 0; i < img->reloc_count; i++) {
        const struct gpu_cubin_reloc *r = &img->relocs[i];
        int64_t t = (int64_t)base_va + r->target_off_B;
        if (t < 0 || (uint64_t)t >= (1ull << 57))
            return hcq_err(HCQ_ERR_INVALID,
                           "gpu_cubin_relocate: base 0x%" PRIx64 " + target %" PRId64
                           " is outside the 57-bit VA space",
                           base_va, r->target_off_B);
        uint8_t *p = img->data + r->patch_off_B;
        if (r->type == R_CUDA_64)
            util_le64_put(p, (uint64_t)t);
        else if (r->type == R_CUDA_ABS32_LO_32)
            util_le32_put(p, (uint32_t)t);
        else
            util_le32_put(p, (uint32_t)((uint64_t)t >> 32));
    }
    img->relocated_va = base_va;
    return HCQ_OK;
}

/* ==== .nv.info attributes (rm.md §7.3) ==== */

struct info_rec {
    uint8_t fmt, attr;
    uint16_t v; /* BVAL/HVAL value, or SVAL payload length */
    const uint8_t *payload;
};

/* Next record of section s from *pos; false at the end. A record that runs past the
 * section or has an unknown format is an error (*st). */
static bool
info_next(const struct elf *e, const struct sec *s, uint64_t *pos, struct info_rec *r, enum hcq_status *st)
{
    if (*pos + 4 > s->size)
        return false;
    const uint8_t *p = e->d + s->off + *pos;
    r->fmt = p[0];
    r->attr = p[1];
    r->v = util_le16(p + 2);
    r->payload = NULL;
    *pos += 4;
    if (r->fmt == EIATTR_FORMAT_SVAL) {
        if (!in_range(*pos, r->v, s->size)) {
            *st = FMT_ERR("%s: record 0x%02x at 0x%" PRIx64 " has %u payload bytes past the end", s->nm,
                          r->attr, *pos - 4, r->v);
            return false;
        }
        r->payload = p + 4;
        *pos += r->v;
    } else if (r->fmt < EIATTR_FORMAT_NVAL || r->fmt > EIATTR_FORMAT_SVAL) {
        *st = FMT_ERR("%s: record at 0x%" PRIx64 " has unknown format %u", s->nm, *pos - 4, r->fmt);
        return false;
    }
    return true;
}

/* Module-wide .nv.info: u32 symbol, u32 value records for every kernel. */
static enum hcq_status
info_module(const struct elf *e, const struct sec *s, struct gpu_cubin_image *img)
{
    enum hcq_status st = HCQ_OK;
    struct info_rec r;
    uint64_t pos = 0;
    while (info_next(e, s, &pos, &r, &st)) {
        if (r.fmt != EIATTR_FORMAT_SVAL || r.v < 8)
            continue;
        uint32_t sym = util_le32(r.payload), val = util_le32(r.payload + 4);
        for (uint32_t k = 0; k < img->kernel_count; k++) {
            struct gpu_cubin_kernel *kn = &img->kernels[k];
            if (kn->sym_index != sym)
                continue;
            switch (r.attr) {
            case EIATTR_REGCOUNT:
                kn->register_count = val;
                break;
            case EIATTR_FRAME_SIZE:
                kn->frame_B = val;
                break;
            case EIATTR_MIN_STACK_SIZE:
                kn->min_stack_B = val;
                break;
            case EIATTR_MAX_STACK_SIZE:
                kn->max_stack_B = val;
                break;
            default:
                break;
            }
        }
    }
    return st;
}

static enum hcq_status
info_kparam(const struct sec *s, struct gpu_cubin_kernel *k, const struct info_rec *r)
{
    if (r->v < 12)
        return FMT_ERR("%s: KPARAM_INFO of %u bytes (expected 12)", s->nm, r->v);
    uint32_t w1 = util_le32(r->payload + 4), w2 = util_le32(r->payload + 8);
    uint32_t ord = w1 & 0xFFFF, off = w1 >> 16, size = w2 >> 18; /* rm.md §7.3 */
    if (ord >= GPU_CUBIN_MAX_PARAMS)
        return hcq_err(HCQ_ERR_UNSUPPORTED, "gpu_cubin_load: %s: parameter ordinal %u (max %u)", s->nm, ord,
                       GPU_CUBIN_MAX_PARAMS - 1);
    k->params[ord] = (struct gpu_cubin_param){.ordinal = ord, .offset_B = off, .size_B = size};
    if (ord + 1 > k->param_count)
        k->param_count = ord + 1;
    return HCQ_OK;
}

static enum hcq_status
info_kernel(const struct elf *e, const struct sec *s, struct gpu_cubin_kernel *k)
{
    enum hcq_status st = HCQ_OK;
    struct info_rec r;
    uint64_t pos = 0;
    bool have_cbank = false;
    while (st == HCQ_OK && info_next(e, s, &pos, &r, &st)) {
        bool sval = r.fmt == EIATTR_FORMAT_SVAL;
        switch (r.attr) {
        case EIATTR_PARAM_CBANK:
            if (!sval || r.v < 8)
                return FMT_ERR("%s: PARAM_CBANK of %u bytes (expected 8)", s->nm, r.v);
            k->param_base_B = util_le32(r.payload + 4) & 0xFFFF;
            k->param_size_B = util_le32(r.payload + 4) >> 16;
            have_cbank = true;
            break;
        case EIATTR_CBANK_PARAM_SIZE:
            if (!have_cbank && !sval)
                k->param_size_B = r.v;
            break;
        case EIATTR_KPARAM_INFO:
            if (sval)
                st = info_kparam(s, k, &r);
            break;
        case EIATTR_MAX_THREADS:
        case EIATTR_REQNTID:
            if (sval && r.v >= 12) {
                uint32_t *dst = r.attr == EIATTR_MAX_THREADS ? k->max_threads : k->reqntid;
                for (int i = 0; i < 3; i++)
                    dst[i] = util_le32(r.payload + 4 * i);
            }
            break;
        case EIATTR_MAXREG_COUNT:
            if (!sval)
                k->maxreg_count = r.v;
            break;
        case EIATTR_NUM_BARRIERS:
            if (!sval)
                k->barrier_count = r.v;
            break;
        case EIATTR_EXIT_INSTR_OFFSETS:
            if (sval)
                k->exit_count = r.v / 4;
            break;
        case EIATTR_CRS_STACK_SIZE:
            if (sval && r.v >= 4)
                k->crs_stack_B = util_le32(r.payload);
            break;
        case EIATTR_CTA_PER_CLUSTER:
        case EIATTR_EXPLICIT_CLUSTER:
            k->uses_clusters = true;
            break;
        default:
            break;
        }
    }
    if (st != HCQ_OK)
        return st;
    for (uint32_t i = 0; i < k->param_count; i++) {
        const struct gpu_cubin_param *pa = &k->params[i];
        if ((uint64_t)pa->offset_B + pa->size_B > k->param_size_B)
            return FMT_ERR("%s: parameter %u (0x%x bytes at 0x%x) outside the 0x%x-byte parameter block",
                           s->nm, i, pa->size_B, pa->offset_B, k->param_size_B);
    }
    return HCQ_OK;
}

/* ==== Kernels ==== */

/* Section named prefix + kernel name, or NULL. */
static const struct sec *
sec_for_kernel(const struct elf *e, const char *prefix, const char *kname)
{
    size_t pl = strlen(prefix);
    for (uint32_t i = 0; i < e->shnum; i++)
        if (strncmp(e->s[i].nm, prefix, pl) == 0 && strcmp(e->s[i].nm + pl, kname) == 0)
            return &e->s[i];
    return NULL;
}

static enum hcq_status
kernel_symbol(const struct elf *e, uint32_t text_idx, const char *kname, uint32_t *sym_out, bool *entry_out)
{
    *entry_out = false;
    for (uint32_t i = 1; i < e->nsyms; i++) {
        struct sym sy;
        enum hcq_status st = elf_sym(e, i, &sy);
        if (st != HCQ_OK)
            return st;
        if (sy.type == 2 /* STT_FUNC */ && sy.shndx == text_idx && strcmp(sy.name, kname) == 0) {
            *sym_out = i;
            *entry_out = (sy.other & 0x10) != 0;
            return HCQ_OK;
        }
    }
    /* .text sh_info holds the symbol index (bits 23:0; sm_8x puts registers in 31:24) */
    *sym_out = e->s[text_idx].info & 0xFFFFFF;
    return HCQ_OK;
}

static enum hcq_status
elf_kernels(struct elf *e, struct gpu_cubin_image *img)
{
    uint32_t n = 0;
    size_t names_B = 0;
    for (uint32_t i = 0; i < e->shnum; i++)
        if (strncmp(e->s[i].nm, ".text.", 6) == 0 && e->s[i].place >= 0) {
            n++;
            names_B += strlen(e->s[i].nm + 6) + 1;
        }
    img->kernels = calloc(n ? n : 1, sizeof *img->kernels);
    img->names = malloc(names_B ? names_B : 1);
    if (!img->kernels || !img->names)
        return hcq_err(HCQ_ERR_NOMEM, "gpu_cubin_load: %u kernels", n);
    char *np = img->names;
    for (uint32_t i = 0; i < e->shnum; i++) {
        const struct sec *ts = &e->s[i];
        if (strncmp(ts->nm, ".text.", 6) != 0 || ts->place < 0)
            continue;
        struct gpu_cubin_kernel *k = &img->kernels[img->kernel_count++];
        size_t len = strlen(ts->nm + 6) + 1;
        memcpy(np, ts->nm + 6, len);
        k->name = np;
        np += len;
        k->code_off_B = (uint64_t)ts->place;
        k->code_size_B = ts->size;
        k->register_count = ts->info >> 24;
        enum hcq_status st = kernel_symbol(e, i, k->name, &k->sym_index, &k->is_entry);
        if (st != HCQ_OK)
            return st;
        const struct sec *s = sec_for_kernel(e, ".nv.shared.", k->name);
        k->shared_static_B = s ? (uint32_t)(s->size > UINT32_MAX ? UINT32_MAX : s->size) : 0;
        s = sec_for_kernel(e, ".nv.constant0.", k->name);
        k->cbuf0_size_B = s ? (uint32_t)(s->size > UINT32_MAX ? UINT32_MAX : s->size) : 0;
        if (k->shared_static_B > (1u << 24) || k->cbuf0_size_B > (1u << 16))
            return FMT_ERR("kernel %s: shared 0x%x / cbuf0 0x%x bytes out of range", k->name,
                           k->shared_static_B, k->cbuf0_size_B);
        s = sec_for_kernel(e, ".nv.info.", k->name);
        if (s && s->type == GPU_ELF_SHT_CUDA_INFO && (st = info_kernel(e, s, k)) != HCQ_OK)
            return st;
    }
    for (uint32_t i = 0; i < e->shnum; i++)
        if (strcmp(e->s[i].nm, ".nv.info") == 0 && e->s[i].type == GPU_ELF_SHT_CUDA_INFO) {
            enum hcq_status st = info_module(e, &e->s[i], img);
            if (st != HCQ_OK)
                return st;
        }
    for (uint32_t i = 0; i < img->kernel_count; i++)
        if (img->kernels[i].register_count > 255) /* SASS addresses R0..R254 (+RZ) */
            return FMT_ERR("kernel %s: register count %u (expected <= 255)", img->kernels[i].name,
                           img->kernels[i].register_count);
    return HCQ_OK;
}

static enum hcq_status
elf_banks(const struct elf *e, struct gpu_cubin_image *img)
{
    for (uint32_t i = 0; i < e->shnum; i++) {
        const struct sec *s = &e->s[i];
        const char *nm = s->nm;
        if (s->place < 0 || strncmp(nm, ".nv.constant", 12) != 0)
            continue;
        char *end;
        unsigned long idx = strtoul(nm + 12, &end, 10);
        if (end == nm + 12 || idx == 0)
            continue;
        if (*end == '.') {
            /* per-kernel bank .nv.constantN.<kernel> (switch jump tables): bound per launch */
            struct gpu_cubin_kernel *k = NULL;
            for (uint32_t j = 0; j < img->kernel_count && !k; j++)
                if (!strcmp(img->kernels[j].name, end + 1))
                    k = &img->kernels[j];
            if (!k)
                continue; /* bank of a function that is not an entry point */
            if (idx >= GPU_QMD_CBUF_COUNT || k->kbank_count == 4)
                return hcq_err(HCQ_ERR_UNSUPPORTED, "gpu_cubin_load: constant bank section %s", nm);
            if (s->size > (1u << 16))
                return FMT_ERR("%s of 0x%" PRIx64 " bytes exceeds 64 KiB", nm, s->size);
            k->kbanks[k->kbank_count].index = (uint32_t)idx;
            k->kbanks[k->kbank_count].off_B = (uint64_t)s->place;
            k->kbanks[k->kbank_count].size_B = (uint32_t)s->size;
            k->kbank_count++;
            continue;
        }
        if (*end != '\0')
            continue;
        if (idx == 0 || idx >= GPU_QMD_CBUF_COUNT || img->bank_count == GPU_CUBIN_MAX_BANKS)
            return hcq_err(HCQ_ERR_UNSUPPORTED, "gpu_cubin_load: constant bank section %s", nm);
        if (s->size > (1u << 16))
            return FMT_ERR("%s of 0x%" PRIx64 " bytes exceeds 64 KiB", nm, s->size);
        img->banks[img->bank_count++] = (struct gpu_cubin_bank){
            .index = (uint32_t)idx, .off_B = (uint64_t)s->place, .size_B = (uint32_t)s->size};
    }
    return HCQ_OK;
}

enum hcq_status
gpu_cubin_load(const void *elf, size_t elf_B, struct gpu_cubin_image **img_out)
{
    *img_out = NULL;
    struct elf e = {.d = elf, .n = elf_B};
    struct gpu_cubin_image *img = calloc(1, sizeof *img);
    if (!img)
        return hcq_err(HCQ_ERR_NOMEM, "gpu_cubin_load: image");
    enum hcq_status st = elf ? elf_headers(&e) : FMT_ERR("NULL buffer");
    if (st != HCQ_OK)
        goto fail_img;
    img->sm_version = GPU_FLD_GET(GPU_ELF_EF_CUDA_SM, util_le32(e.d + 0x30));
    if ((st = elf_layout(&e, img)) != HCQ_OK || (st = elf_relocs(&e, img)) != HCQ_OK ||
        (st = elf_kernels(&e, img)) != HCQ_OK || (st = elf_banks(&e, img)) != HCQ_OK)
        goto fail_img;
    free(e.s);
    *img_out = img;
    return HCQ_OK;

fail_img:
    free(e.s);
    gpu_cubin_destroy(img);
    return st;
}

void
gpu_cubin_destroy(struct gpu_cubin_image *img)
{
    if (!img)
        return;
    free(img->data);
    free(img->kernels);
    free(img->relocs);
    free(img->names);
    free(img);
}

const struct gpu_cubin_kernel *
gpu_cubin_kernel_find(const struct gpu_cubin_image *img, const char *name)
{
    for (uint32_t i = 0; img && name && i < img->kernel_count; i++)
        if (strcmp(img->kernels[i].name, name) == 0)
            return &img->kernels[i];
    return NULL;
}

enum hcq_status
gpu_cubin_check_arch(const struct gpu_cubin_image *img, const struct hcq_arch *arch)
{
    if (!hcq_arch_runs_sm(arch, img->sm_version))
        return hcq_err(HCQ_ERR_UNSUPPORTED,
                       "gpu_cubin_check_arch: cubin for sm_%u cannot run on %s "
                       "(sm_%u)",
                       img->sm_version, arch->name, arch->sm_version);
    return HCQ_OK;
}
