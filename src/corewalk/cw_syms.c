/* cw_syms.c - symbols of the target's mapped files, read with libelf from
 * the paths the core names (NT_FILE) or /proc/PID/maps gives.
 *
 * Used for two things: main_arena and mp_ (not exported by libc.so.6; in
 * .symtab only when the separate debug file is installed, found by the
 * build-id under /usr/lib/debug/.build-id/xx/yyyy.debug), and vtable
 * names (_ZTV... in .dynsym or .symtab of the module a first word points
 * into).  A file that cannot be read simply yields no symbol, and neither
 * does a file whose build-id differs from the one in the core's copy of
 * its ELF header (a core read on another machine, a library upgraded since
 * the dump): cw_syms_file_matches().
 */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cw.h"

typedef int (*sym_visit)(const char *name, const GElf_Sym *s, void *ctx);

/* Calls visit on every symbol of .symtab and .dynsym until it returns 1.
 * Returns 1 if a visit returned 1, else 0; build_id receives the file's
 * GNU build-id in hex when non-NULL. */
static int each_symbol(const char *path, sym_visit visit, void *ctx, char *build_id, size_t bsz)
{
    if (build_id && bsz)
        build_id[0] = 0;
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return 0;
    elf_version(EV_CURRENT);
    Elf *e = elf_begin(fd, ELF_C_READ, NULL);
    int found = 0;
    Elf_Scn *scn = NULL;
    while (e && !found && (scn = elf_nextscn(e, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh))
            continue;
        Elf_Data *d = elf_getdata(scn, NULL);
        if (!d)
            continue;
        if (sh.sh_type == SHT_NOTE && build_id && bsz) {
            size_t off = 0, no, dof;
            GElf_Nhdr nh;
            while ((off = gelf_getnote(d, off, &nh, &no, &dof)) > 0)
                if (nh.n_type == NT_GNU_BUILD_ID && nh.n_descsz * 2 + 1 <= bsz) {
                    for (size_t i = 0; i < nh.n_descsz; i++)
                        sprintf(build_id + 2 * i, "%02x", ((unsigned char *)d->d_buf)[dof + i]);
                }
        }
        if (!visit || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
            continue;
        size_t n = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
        for (size_t i = 0; i < n && !found; i++) {
            GElf_Sym s;
            if (!gelf_getsym(d, (int)i, &s))
                continue;
            const char *nm = elf_strptr(e, sh.sh_link, s.st_name);
            if (nm && *nm && visit(nm, &s, ctx))
                found = 1;
        }
    }
    if (e)
        elf_end(e);
    close(fd);
    return found;
}

struct by_name { const char *name; uint64_t value; };
static int visit_name(const char *nm, const GElf_Sym *s, void *ctx)
{
    struct by_name *b = ctx;
    if (strcmp(nm, b->name) || s->st_value == 0)
        return 0;
    b->value = s->st_value;
    return 1;
}

/* Looks `name` up in path, then in its debug file (by build-id).  Returns
 * 0 and the symbol's link-time value, or -1.  (Callers get the bias first
 * with cw_syms_bias(), which refuses a file of another build.) */
int cw_syms_lookup(const cw_core_t *c, const char *path, const char *name, uint64_t *value)
{
    if (c->no_files)
        return -1;
    struct by_name b = {name, 0};
    char id[128];
    if (each_symbol(path, visit_name, &b, id, sizeof id)) {
        *value = b.value;
        return 0;
    }
    if (strlen(id) < 3)
        return -1;
    char dbg[256];
    snprintf(dbg, sizeof dbg, "/usr/lib/debug/.build-id/%.2s/%s.debug", id, id + 2);
    if (each_symbol(dbg, visit_name, &b, NULL, 0)) {
        *value = b.value;
        return 0;
    }
    return -1;
}

struct by_addr { uint64_t v; char *out; size_t outsz; };
static int visit_addr(const char *nm, const GElf_Sym *s, void *ctx)
{
    struct by_addr *b = ctx;
    if (GELF_ST_TYPE(s->st_info) != STT_OBJECT || !s->st_size)
        return 0;
    if (b->v < s->st_value || b->v >= s->st_value + s->st_size)
        return 0;
    snprintf(b->out, b->outsz, "%s", nm);
    return 1;
}

/* Names the data symbol of path covering link-time address value: 0 or -1. */
int cw_syms_name_at(const cw_core_t *c, const char *path, uint64_t value, char *name, size_t namesz)
{
    if (c->no_files)
        return -1;
    struct by_addr b = {value, name, namesz};
    return each_symbol(path, visit_addr, &b, NULL, 0) ? 0 : -1;
}

/* Load bias of the module `path` in the target: where its first mapping
 * (file offset 0) is, minus the page of its first PT_LOAD's p_vaddr.
 * -1 when the file on disk is another build than the one mapped. */
int cw_syms_bias(const cw_core_t *c, const char *path, uint64_t *bias)
{
    uint64_t base = 0;
    int have = 0;
    for (size_t i = 0; i < c->nsegs; i++)
        if (c->segs[i].path && !strcmp(c->segs[i].path, path) && c->segs[i].file_ofs == 0) {
            base = c->segs[i].start;
            have = 1;
            break;
        }
    if (!have || c->no_files || cw_syms_file_matches(c, path) == 0)
        return -1;
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return -1;
    elf_version(EV_CURRENT);
    Elf *e = elf_begin(fd, ELF_C_READ, NULL);
    size_t n = 0;
    uint64_t first = UINT64_MAX;
    if (e && elf_getphdrnum(e, &n) == 0)
        for (size_t i = 0; i < n; i++) {
            GElf_Phdr ph;
            if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD && ph.p_vaddr < first)
                first = ph.p_vaddr;
        }
    if (e)
        elf_end(e);
    close(fd);
    if (first == UINT64_MAX)
        return -1;
    *bias = base - (first & ~0xfffull);
    return 0;
}

/* The first mapping of module `path` (file offset 0), or NULL. */
static const cw_seg_t *module_base(const cw_core_t *c, const char *path)
{
    for (size_t i = 0; i < c->nsegs; i++)
        if (c->segs[i].path && !strcmp(c->segs[i].path, path) && c->segs[i].file_ofs == 0)
            return &c->segs[i];
    return NULL;
}

/* The GNU build-id of module `path` as the target has it in memory: its
 * ELF header page (dumped by the kernel with the default coredump_filter,
 * and by gcore), program headers, PT_NOTE, NT_GNU_BUILD_ID.  Nothing is
 * opened.  Returns 0 and the id in hex, or -1 when the core lacks it. */
int cw_syms_core_build_id(const cw_core_t *c, const char *path, char *id, size_t idsz)
{
    const cw_seg_t *s = module_base(c, path);
    Elf64_Ehdr eh;
    if (!s || idsz < 3 || cw_mem_read(c, s->start, &eh, sizeof eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
        eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum > 64)
        return -1;
    /* the lowest PT_LOAD is mapped at s->start: its p_vaddr gives the bias */
    Elf64_Phdr ph[64];
    if (cw_mem_read(c, s->start + eh.e_phoff, ph, eh.e_phnum * sizeof ph[0]))
        return -1;
    uint64_t first = UINT64_MAX;
    for (unsigned i = 0; i < eh.e_phnum; i++)
        if (ph[i].p_type == PT_LOAD && ph[i].p_vaddr < first)
            first = ph[i].p_vaddr;
    if (first == UINT64_MAX)
        return -1;
    uint64_t bias = s->start - (first & ~0xfffull);
    for (unsigned i = 0; i < eh.e_phnum; i++) {
        if (ph[i].p_type != PT_NOTE || ph[i].p_filesz > 4096)
            continue;
        uint8_t n[4096];
        uint64_t len = ph[i].p_filesz;
        if (cw_mem_read(c, bias + ph[i].p_vaddr, n, (size_t)len))
            continue;
        for (uint64_t off = 0; off + 12 <= len;) {
            uint32_t nsz, dsz, type;
            memcpy(&nsz, n + off, 4);
            memcpy(&dsz, n + off + 4, 4);
            memcpy(&type, n + off + 8, 4);
            uint64_t d = off + 12 + ((nsz + 3ull) & ~3ull);
            if (d > len || dsz > len - d)
                break;
            if (type == NT_GNU_BUILD_ID && nsz == 4 && !memcmp(n + off + 12, "GNU", 4) && dsz &&
                dsz * 2 + 1 <= idsz) {
                for (uint32_t k = 0; k < dsz; k++)
                    snprintf(id + 2 * k, 3, "%02x", n[d + k]);
                return 0;
            }
            off = d + ((dsz + 3ull) & ~3ull);
        }
    }
    return -1;
}

/* 1 if the file at `path` is the build the target mapped (same build-id),
 * 0 if it is another build (the core comes from another machine or the
 * library was upgraded since), -1 if it cannot be told (no build-id in the
 * core or in the file, file not readable, no_files). */
int cw_syms_file_matches(const cw_core_t *c, const char *path)
{
    char mem[128], file[128];
    if (c->no_files || cw_syms_core_build_id(c, path, mem, sizeof mem))
        return -1;
    each_symbol(path, NULL, NULL, file, sizeof file);
    if (!file[0])
        return -1;
    return !strcmp(mem, file);
}

/* "_ZTV3Foo" -> "Foo", "_ZTVN2ns3FooE" -> "ns::Foo"; other names are
 * copied as they are.  Only the vtable forms are demangled (enough to
 * name the class of a leaked object). */
void cw_demangle_vtable(const char *sym, char *out, size_t outsz)
{
    snprintf(out, outsz, "%s", sym);
    if (strncmp(sym, "_ZTV", 4))
        return;
    const char *p = sym + 4;
    int nested = *p == 'N';
    if (nested)
        p++;
    char buf[512];
    size_t k = 0;
    while (*p >= '0' && *p <= '9') {
        char *end;
        unsigned long L = strtoul(p, &end, 10);
        if (L == 0 || strnlen(end, L) < L || k + L + 3 >= sizeof buf)
            return;
        if (k) {
            buf[k++] = ':';
            buf[k++] = ':';
        }
        memcpy(buf + k, end, L);
        k += L;
        p = end + L;
        if (!nested)
            break;
    }
    if (!k || (nested && *p != 'E') || (!nested && *p))
        return;
    buf[k] = 0;
    snprintf(out, outsz, "%s", buf);
}
