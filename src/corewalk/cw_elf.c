/* cw_elf.c - reads an x86-64 ELF core file: segments, threads, mapped files.
 *
 * What is used from the core (all of it validated before use):
 *   ELF header      e_ident (ELF64, little-endian), e_type ET_CORE,
 *                   e_machine EM_X86_64, e_phoff/e_phnum/e_phentsize
 *   PT_LOAD         one per mapping: p_vaddr, p_memsz, p_filesz (bytes dumped,
 *                   may be 0 for unread mappings), p_flags (R/W/X)
 *   PT_NOTE         NT_PRSTATUS (one per thread: pr_cursig at 12, pr_pid at 32,
 *                   pr_reg at 112, 27 registers in user_regs_struct order),
 *                   NT_PRPSINFO (pr_pid at 24, pr_psargs[80] at 56: the
 *                   command line), NT_SIGINFO (si_signo at 0), NT_FILE (count,
 *                   page size, then start/end/page-offset triples and the
 *                   NUL-separated paths), NT_AUXV (AT_PHDR, AT_ENTRY, AT_BASE)
 *   e_phnum PN_XNUM (0xffff): more than 65534 mappings, the real count is
 *                   section header 0's sh_info (ELF gABI "extended numbering")
 * A truncated core (program headers, a note, or a PT_LOAD's dumped bytes
 * reaching past the end of the file) is refused: "truncated core".
 * Bytes a mapping has but the core did not dump (p_filesz < p_memsz) read
 * as missing through cw_mem_read().
 *
 * Files are mapped (mmap) when they are regular files, so that a core of
 * several GB costs address space, not memory; pipes and devices are read,
 * and only their first bytes when these are not an ELF header.
 */
#define _POSIX_C_SOURCE 200809L
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cw.h"

#define PRSTATUS_CURSIG 12
#define PRSTATUS_PID 32
#define PRSTATUS_REGS 112
#define PRPSINFO_PID 24
#define PRPSINFO_PSARGS 56   /* char pr_psargs[80] */
#define PRPSINFO_SIZE 136
#ifndef NT_SIGINFO
#define NT_SIGINFO 0x53494749
#endif

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
            if (c->nthreads == 0 && !c->signo) {
                int16_t sig;
                memcpy(&sig, desc + PRSTATUS_CURSIG, 2);
                c->signo = sig > 0 && sig < 128 ? sig : 0;
            }
            c->nthreads++;
        } else if (is_core && type == NT_PRPSINFO && descsz >= PRPSINFO_SIZE) {
            int32_t pid;
            memcpy(&pid, desc + PRPSINFO_PID, 4);
            c->proc_pid = pid > 0 ? pid : 0;
            size_t k = 0;
            for (size_t i = 0; i < 80 && desc[PRPSINFO_PSARGS + i]; i++) /* printable only */
                c->command[k++] = desc[PRPSINFO_PSARGS + i] >= 0x20 && desc[PRPSINFO_PSARGS + i] < 0x7f
                                      ? (char)desc[PRPSINFO_PSARGS + i] : '?';
            while (k && c->command[k - 1] == ' ') /* the kernel pads with a space */
                k--;
            c->command[k] = 0;
        } else if (is_core && type == NT_SIGINFO && descsz >= 4) {
            int32_t sig;
            memcpy(&sig, desc, 4);
            c->signo = sig > 0 && sig < 128 ? sig : 0;
        } else if (is_core && type == NT_FILE) {
            parse_nt_file(c, desc, descsz);
        } else if (is_core && type == NT_AUXV) {
            parse_auxv(c, desc, descsz);
        }
        off = next;
    }
    return 0;
}

typedef struct span { const uint8_t *p; uint64_t n; } span_t;

static int span_cmp(const void *a, const void *b)
{
    const span_t *x = a, *y = b;
    return x->p < y->p ? -1 : x->p > y->p;
}

/* 1 if the dumped bytes of two segments overlap in the file.  Writers
 * (the kernel, gdb) lay segments one after the other; a core that maps
 * the same bytes at many addresses would multiply the walker's work (every
 * scan is linear in the bytes dumped) for nothing but a hang. */
static int shared_bytes(const cw_core_t *c)
{
    span_t *d = malloc((c->nsegs ? c->nsegs : 1) * sizeof *d);
    size_t n = 0;
    if (!d)
        return 0;
    for (size_t i = 0; i < c->nsegs; i++)
        if (c->segs[i].datalen)
            d[n++] = (span_t){c->segs[i].data, c->segs[i].datalen};
    qsort(d, n, sizeof *d, span_cmp);
    int shared = 0;
    for (size_t i = 1; i < n && !shared; i++)
        shared = (uint64_t)(d[i].p - d[i - 1].p) < d[i - 1].n;
    free(d);
    return shared;
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
    uint64_t phnum = eh.e_phnum;
    if (phnum == PN_XNUM) { /* extended numbering: section header 0's sh_info */
        Elf64_Shdr sh0;
        if (eh.e_shoff == 0 || eh.e_shentsize != sizeof sh0)
            return fail(err, errsz, "corrupt core: e_phnum is PN_XNUM but there is no section header 0");
        if (eh.e_shoff > len || sizeof sh0 > len - eh.e_shoff)
            return fail(err, errsz, "truncated core: section header 0 past the end of the file");
        memcpy(&sh0, b + eh.e_shoff, sizeof sh0);
        phnum = sh0.sh_info;
    }
    if (eh.e_phentsize != sizeof(Elf64_Phdr) || phnum == 0)
        return fail(err, errsz, "corrupt core: no usable program headers");
    if (eh.e_phoff > len || phnum * sizeof(Elf64_Phdr) > len - eh.e_phoff)
        return fail(err, errsz, "truncated core: program headers past the end of the file");

    cw_core_t *c = calloc(1, sizeof *c);
    if (!c)
        return fail(err, errsz, "out of memory");
    c->buf = (uint8_t *)b;
    c->len = len;
    int truncated = 0;
    for (uint64_t i = 0; i < phnum; i++) {
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
    if (shared_bytes(c)) {
        cw_core_close(c);
        return fail(err, errsz, "corrupt core: two PT_LOAD segments hold the same bytes of the file");
    }
    cw_mem_sort(c);
    for (uint64_t i = 0; i < phnum; i++) {
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

/* Reads a pipe or a device into a malloc'd buffer, to its end; or only its
 * first bytes when they are not an ELF header (so that /dev/zero is "not an
 * ELF file", not an endless read).  0 or -1 (errno set). */
static int read_all(int fd, uint8_t **out, size_t *outlen)
{
    size_t cap = 1 << 20, len = 0;
    uint8_t *buf = malloc(cap);
    if (!buf)
        return -1;
    for (;;) {
        if (len == cap) {
            uint8_t *nb = cap < ((size_t)1 << 40) ? realloc(buf, cap * 2) : NULL;
            if (!nb) {
                free(buf);
                errno = ENOMEM;
                return -1;
            }
            buf = nb;
            cap *= 2;
        }
        ssize_t k = read(fd, buf + len, cap - len);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            int e = errno;
            free(buf);
            errno = e;
            return -1;
        }
        if (k == 0)
            break;
        len += (size_t)k;
        if (len >= SELFMAG && memcmp(buf, ELFMAG, SELFMAG))
            break;
    }
    *out = buf;
    *outlen = len;
    return 0;
}

/* Opens the core file at path (mapped when it is a regular file, read when
 * it is a pipe or a device) and parses it; the core owns the bytes.
 * 0, or -1 with "path: reason" in err. */
int cw_core_open_file(const char *path, cw_core_t **out, char *err, size_t errsz)
{
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st)) {
        snprintf(err, errsz, "%s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    if (S_ISDIR(st.st_mode)) {
        snprintf(err, errsz, "%s: %s", path, strerror(EISDIR));
        close(fd);
        return -1;
    }
    uint8_t *buf = NULL;
    size_t len = 0;
    int own = 1;
    if (S_ISREG(st.st_mode)) {
        len = (size_t)st.st_size;
        if (len) {
            void *m = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
            if (m == MAP_FAILED) {
                snprintf(err, errsz, "%s: cannot map: %s", path, strerror(errno));
                close(fd);
                return -1;
            }
            buf = m;
            own = 2;
        }
    } else if (read_all(fd, &buf, &len)) {
        snprintf(err, errsz, "%s: cannot read: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    close(fd);
    char why[200];
    if (cw_core_open_mem(buf ? buf : (const uint8_t *)"", len, out, why, sizeof why)) {
        int profile = len >= 8 && !memcmp(buf, "HEAPSCP", 8);
        snprintf(err, errsz, "%s: %s%s", path, why,
                 profile ? " (it is a heapscope profile: read it with heapscope report)" : "");
        if (own == 2)
            munmap(buf, len);
        else
            free(buf);
        return -1;
    }
    (*out)->own_buf = buf ? own : 0;
    return 0;
}
