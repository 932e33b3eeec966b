/* cli_noprofile.c - why a program run by `heapscope run` wrote no profile,
 * when its executable says so: the loader never preloads libheapscope.so
 * into a statically linked program (no PT_INTERP: no loader at all) nor,
 * for another user, into a set-user-ID or set-group-ID one (secure mode
 * ignores LD_PRELOAD with a path).  Reads only the ELF headers. */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"

int cli_find_program(const char *prog, char *out, size_t cap)
{
    if (strchr(prog, '/'))
        return snprintf(out, cap, "%s", prog) < (int)cap ? 0 : -1;
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/bin:/usr/bin";
    for (const char *p = path; *p;) {
        size_t len = strcspn(p, ":");
        struct stat st;
        if (snprintf(out, cap, "%.*s%s%s", (int)len, p, len ? "/" : "", prog) < (int)cap &&
            stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0)
            return 0;
        p += len;
        if (*p == ':')
            p++;
    }
    return -1;
}

/* 1 if the 64-bit little-endian ELF file at fd has a PT_INTERP program
 * header, 0 if not, -1 if it is not such a file (a script, another
 * architecture: then nothing is said). */
static int has_interp(int fd)
{
    unsigned n;
    const Elf64_Phdr *ph = cli_elf_phdrs(fd, &n);
    if (!ph)
        return -1;
    for (unsigned i = 0; i < n; i++)
        if (ph[i].p_type == PT_INTERP)
            return 1;
    return 0;
}

const char *cli_no_profile_reason(const char *prog)
{
    char path[PATH_MAX];
    if (cli_find_program(prog, path, sizeof path) != 0)
        return NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat st;
    int interp = has_interp(fd);
    int ok = fstat(fd, &st) == 0;
    close(fd);
    if (interp == 0)
        return "it is statically linked, and LD_PRELOAD reaches only dynamically linked programs";
    if (ok && (((st.st_mode & S_ISUID) && st.st_uid != geteuid()) ||
               ((st.st_mode & S_ISGID) && st.st_gid != getegid())))
        return "it is set-user-ID or set-group-ID, and the loader ignores LD_PRELOAD for it";
    return NULL;
}
