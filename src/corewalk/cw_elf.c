/* cw_elf.c - reads an x86-64 ELF core file: segments, threads, mapped files.
 *
 * What is used from the core (all of it validated before use):
 *   ELF header      e_ident (ELF64, little-endian), e_type ET_CORE,
 *                   e_machine EM_X86_64, e_phoff/e_phnum/e_phentsize
 *   PT_LOAD         one per mapping: p_vaddr, p_memsz, p_filesz (bytes dumped,
 *                   may be 0 for unread mappings), p_flags (R/W/X)
 *   PT_NOTE         NT_PRSTATUS (one per thread: pr_pid at 32, pr_reg at 112,
 *                   27 registers in user_regs_struct order), NT_FILE (count,
 *                   page size, then start/end/page-offset triples and the
 *                   NUL-separated paths), NT_AUXV (AT_PHDR, AT_ENTRY, AT_BASE)
 * A truncated core (a PT_LOAD or note reaching past the end of the file) is
 * an error for the headers and notes; segment data past the end is kept
 * up to what exists, and reported as missing by cw_mem_read().
 */
#define _POSIX_C_SOURCE 200809L
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cw.h"

#define PRSTATUS_PID 32
#define PRSTATUS_REGS 112

static int fail(char *err, size_t errsz, const char *msg)
{
    snprintf(err, errsz, "%s", msg);
    return -1;
}

/* NT_FILE: maps file paths onto the PT_LOAD segments they cover. */
static void parse_nt_file(cw_core_t *c, const uint8_t *d, size_t n)
{
    if (n < 16)
        return;
    uint64_t count, pagesz;
    memcpy(&count, d, 8);
    memcpy(&pagesz, d + 8, 8);
    if (count > n / 24 || 16 + count * 24 > n)
        return;
    const char *names = (const char *)d + 16 + count * 24;
    const char *end = (const char *)d + n;
    for (uint64_t i = 0; i < count && names < end; i++) {
        uint64_t t[3];
        memcpy(t, d + 16 + i * 24, 24);
        size_t L = strnlen(names, (size_t)(end - names));
        if (names + L >= end)
            break;
        const char *p = cw_mem_intern(c, names);
        for (size_t k = 0; p && k < c->nsegs; k++) {
            cw_seg_t *s = &c->segs[k];
            if (s->start >= t[0] && s->start < t[1] && !s->path) {
                s->path = p;
                s->file_ofs = t[2] * pagesz + (s->start - t[0]);
            }
        }
        names += L + 1;
    }
    c->has_nt_file = 1;
}

static void parse_auxv(cw_core_t *c, const uint8_t *d, size_t n)
{
    for (size_t i = 0; i + 16 <= n; i += 16) {
        uint64_t k, v;
        memcpy(&k, d + i, 8);
        memcpy(&v, d + i + 8, 8);
        if (k == AT_PHDR) c->auxv_phdr = v;
        if (k == AT_ENTRY) c->auxv_entry = v;
        if (k == AT_BASE) c->auxv_base = v;
        if (k == AT_NULL) break;
    }
}

/* Walks one PT_NOTE segment's notes; -1 with err set if it is malformed. */
static int parse_notes(cw_core_t *c, const uint8_t *d, size_t n, char *err, size_t errsz)
{
    size_t off = 0;
    while (off + 12 <= n) {
        uint32_t namesz, descsz, type;
        memcpy(&namesz, d + off, 4);
        memcpy(&descsz, d + off + 4, 4);
        memcpy(&type, d + off + 8, 4);
        size_t nameoff = off + 12;
        size_t descoff = nameoff + (((size_t)namesz + 3) & ~(size_t)3);
        size_t next = descoff + (((size_t)descsz + 3) & ~(size_t)3);
        if (descoff > n || descsz > n - descoff)
            return fail(err, errsz, "corrupt core: a note runs past its segment");
        const uint8_t *desc = d + descoff;
        int is_core = namesz >= 4 && !memcmp(d + nameoff, "CORE", 4);
        if (is_core && type == NT_PRSTATUS && descsz >= PRSTATUS_REGS + CW_NREGS * 8) {
            cw_thread_t *t = realloc(c->threads, (c->nthreads + 1) * sizeof *t);
            if (!t)
                return fail(err, errsz, "out of memory");
            c->threads = t;
            int32_t pid;
            memcpy(&pid, desc + PRSTATUS_PID, 4);
            t[c->nthreads].tid = pid;
            memcpy(t[c->nthreads].regs, desc + PRSTATUS_REGS, CW_NREGS * 8);
            c->nthreads++;
        } else if (is_core && type == NT_FILE) {
            parse_nt_file(c, desc, descsz);
        } else if (is_core && type == NT_AUXV) {
            parse_auxv(c, desc, descsz);
        }
        off = next;
    }
    return 0;
}

/* Parses the core image buf[0..len) (not copied: it must outlive *out).
 * Returns 0 and a new cw_core_t, or -1 with a message in err for a file
 * that is not an x86-64 ELF core or is truncated/corrupt.  This is the
 * entry the fuzzer drives: no input can make it crash or assert. */
int cw_core_open_mem(const void *buf, size_t len, cw_core_t **out, char *err, size_t errsz)
{
    const uint8_t *b = buf;
    *out = NULL;
    if (len < EI_NIDENT || memcmp(b, ELFMAG, SELFMAG))
        return fail(err, errsz, "not an ELF file");
    if (b[EI_CLASS] != ELFCLASS64)
        return fail(err, errsz, "unsupported core: 32-bit ELF (only x86-64 cores are read)");
    if (b[EI_DATA] != ELFDATA2LSB)
        return fail(err, errsz, "unsupported core: big-endian ELF (only x86-64 cores are read)");
    if (len < sizeof(Elf64_Ehdr))
        return fail(err, errsz, "truncated core: ELF header incomplete");
    Elf64_Ehdr eh;
    memcpy(&eh, b, sizeof eh);
    if (eh.e_machine != EM_X86_64) {
        snprintf(err, errsz, "unsupported core: e_machine %u%s (only x86-64 cores are read)",
                 eh.e_machine, eh.e_machine == EM_AARCH64 ? " (aarch64)" :
                 eh.e_machine == EM_386 ? " (i386)" : "");
        return -1;
    }
    if (eh.e_type != ET_CORE)
        return fail(err, errsz, "not a core file (ELF type is not ET_CORE)");
    if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0)
        return fail(err, errsz, "corrupt core: no usable program headers");
    if (eh.e_phoff > len || (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr) > len - eh.e_phoff)
        return fail(err, errsz, "truncated core: program headers past the end of the file");

    cw_core_t *c = calloc(1, sizeof *c);
    if (!c)
        return fail(err, errsz, "out of memory");
    c->buf = (uint8_t *)b;
    c->len = len;
    int truncated = 0;
    for (unsigned i = 0; i < eh.e_phnum; i++) {
        Elf64_Phdr ph;
        memcpy(&ph, b + eh.e_phoff + i * sizeof ph, sizeof ph);
        if (ph.p_type != PT_LOAD)
            continue;
        cw_seg_t s = {0};
        s.start = ph.p_vaddr;
        s.end = ph.p_vaddr + ph.p_memsz;
        if (s.end < s.start)
            continue;
        s.flags = ((ph.p_flags & PF_R) ? CW_SEG_R : 0) | ((ph.p_flags & PF_W) ? CW_SEG_W : 0) |
                  ((ph.p_flags & PF_X) ? CW_SEG_X : 0);
        uint64_t fs = ph.p_filesz < ph.p_memsz ? ph.p_filesz : ph.p_memsz;
        if (fs && ph.p_offset < len) {
            s.data = b + ph.p_offset;
            s.datalen = fs <= len - ph.p_offset ? fs : len - ph.p_offset;
            if (s.datalen < fs)
                truncated = 1;
        } else if (fs) {
            truncated = 1;
        }
        if (cw_mem_add_seg(c, &s)) {
            cw_core_close(c);
            return fail(err, errsz, "out of memory");
        }
    }
    if (truncated) {
        cw_core_close(c);
        return fail(err, errsz, "truncated core: segment data past the end of the file");
    }
    cw_mem_sort(c);
    for (unsigned i = 0; i < eh.e_phnum; i++) {
        Elf64_Phdr ph;
        memcpy(&ph, b + eh.e_phoff + i * sizeof ph, sizeof ph);
        if (ph.p_type != PT_NOTE)
            continue;
        if (ph.p_offset > len || ph.p_filesz > len - ph.p_offset) {
            cw_core_close(c);
            return fail(err, errsz, "truncated core: notes past the end of the file");
        }
        if (parse_notes(c, b + ph.p_offset, ph.p_filesz, err, errsz)) {
            cw_core_close(c);
            return -1;
        }
    }
    if (c->nsegs == 0) {
        cw_core_close(c);
        return fail(err, errsz, "core has no memory segments");
    }
    *out = c;
    return 0;
}

/* Reads the whole file and parses it (the core owns the buffer). */
int cw_core_open_file(const char *path, cw_core_t **out, char *err, size_t errsz)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errsz, "%s: %s", path, strerror(errno));
        return -1;
    }
    size_t cap = 1 << 20, len = 0;
    uint8_t *buf = malloc(cap);
    while (buf) {
        size_t k = fread(buf + len, 1, cap - len, f);
        len += k;
        if (len < cap)
            break;
        uint8_t *nb = realloc(buf, cap * 2);
        if (!nb) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = nb;
        cap *= 2;
    }
    int ferr = ferror(f) ? errno : 0;
    fclose(f);
    if (!buf || ferr) {
        free(buf);
        snprintf(err, errsz, "%s: cannot read: %s", path, buf ? strerror(ferr) : "out of memory");
        return -1;
    }
    char why[200];
    if (cw_core_open_mem(buf, len, out, why, sizeof why)) {
        int profile = len >= 8 && !memcmp(buf, "HEAPSCP", 8);
        free(buf);
        snprintf(err, errsz, "%s: %s%s", path, why,
                 profile ? " (it is a heapscope profile: read it with heapscope report)" : "");
        return -1;
    }
    (*out)->own_buf = 1;
    return 0;
}
