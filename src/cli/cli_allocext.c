/* cli_allocext.c - is the program `heapscope run` starts linked with
 * jemalloc, or does LD_PRELOAD name it?  Then run preloads libheapscope-jemalloc.so after
 * libheapscope.so, so that jemalloc's own entry points are recorded too
 * (src/collect/col_ext.h).  Read from the executable's dynamic section
 * (its DT_NEEDED names), without loading anything: a library that itself
 * depends on jemalloc is not seen here; the profile then says that
 * jemalloc's own entry points were not intercepted (col_hooks_ext.c), and
 * `run --jemalloc` preloads the extension anyway. */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/ut_path.h"

#define MAX_DYNAMIC 4096 /* entries read from PT_DYNAMIC */

/* The file offset of virtual address v in one of the PT_LOAD segments of
 * ph[0..n), or -1. */
static off_t file_offset(const Elf64_Phdr *ph, unsigned n, Elf64_Addr v)
{
    for (unsigned i = 0; i < n; i++)
        if (ph[i].p_type == PT_LOAD && v >= ph[i].p_vaddr && v - ph[i].p_vaddr < ph[i].p_filesz)
            return (off_t)(v - ph[i].p_vaddr + ph[i].p_offset);
    return -1;
}

/* 1 if one of the DT_NEEDED names of the 64-bit little-endian ELF file at
 * fd starts with prefix, else 0. */
static int needs(int fd, const char *prefix)
{
    unsigned n;
    const Elf64_Phdr *ph = cli_elf_phdrs(fd, &n);
    if (!ph)
        return 0;
    const Elf64_Phdr *dyn = NULL;
    for (unsigned i = 0; i < n; i++)
        if (ph[i].p_type == PT_DYNAMIC)
            dyn = &ph[i];
    if (!dyn)
        return 0;
    static Elf64_Dyn d[MAX_DYNAMIC];
    size_t count = dyn->p_filesz / sizeof d[0];
    if (count > MAX_DYNAMIC)
        count = MAX_DYNAMIC;
    ssize_t got = pread(fd, d, count * sizeof d[0], (off_t)dyn->p_offset);
    if (got < 0)
        return 0;
    count = (size_t)got / sizeof d[0];
    Elf64_Addr strtab = 0;
    for (size_t i = 0; i < count && d[i].d_tag != DT_NULL; i++)
        if (d[i].d_tag == DT_STRTAB)
            strtab = d[i].d_un.d_ptr;
    off_t base = strtab ? file_offset(ph, n, strtab) : -1;
    if (base < 0)
        return 0;
    size_t plen = strlen(prefix);
    for (size_t i = 0; i < count && d[i].d_tag != DT_NULL; i++) {
        char name[64];
        if (d[i].d_tag == DT_NEEDED && d[i].d_un.d_val < (Elf64_Xword)LONG_MAX - (Elf64_Xword)base &&
            pread(fd, name, plen, base + (off_t)d[i].d_un.d_val) == (ssize_t)plen &&
            !memcmp(name, prefix, plen))
            return 1;
    }
    return 0;
}

int cli_links_jemalloc(const char *prog)
{
    char path[PATH_MAX];
    struct stat st;
    /* a regular file only: opening a FIFO would wait for a writer */
    if (cli_find_program(prog, path, sizeof path) != 0 || stat(path, &st) != 0 ||
        !S_ISREG(st.st_mode))
        return 0;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return 0;
    int r = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && needs(fd, "libjemalloc");
    close(fd);
    return r;
}

int cli_preloads_jemalloc(const char *preload)
{
    /* the loader splits LD_PRELOAD at colons and spaces */
    for (const char *p = preload; p && *p; p += strspn(p, ": ")) {
        size_t len = strcspn(p, ": ");
        char entry[PATH_MAX];
        if (len < sizeof entry) {
            memcpy(entry, p, len);
            entry[len] = 0;
            if (ut_path_base_starts(entry, "libjemalloc"))
                return 1;
        }
        p += len;
    }
    return 0;
}
