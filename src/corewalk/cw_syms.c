/* cw_syms.c - symbols of the target's mapped files, read with libelf from
 * the paths the core names (NT_FILE) or /proc/PID/maps gives.
 *
 * Used for two things: main_arena and mp_ (not exported by libc.so.6; in
 * .symtab only when the separate debug file is installed, found by the
 * build-id under /usr/lib/debug/.build-id/xx/yyyy.debug), and vtable
 * names (_ZTV... in .dynsym or .symtab of the module a first word points
 * into).  A file that cannot be read simply yields no symbol.
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
        if (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM)
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
 * 0 and the symbol's link-time value, or -1. */
int cw_syms_lookup(const char *path, const char *name, uint64_t *value)
{
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
int cw_syms_name_at(const char *path, uint64_t value, char *name, size_t namesz)
{
    struct by_addr b = {value, name, namesz};
    return each_symbol(path, visit_addr, &b, NULL, 0) ? 0 : -1;
}

/* Load bias of the module `path` in the target: where its first mapping
 * (file offset 0) is, minus the page of its first PT_LOAD's p_vaddr. */
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
    if (!have)
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
