/* cli_elf.c - the program headers of the executable `heapscope run`
 * starts, read from its file (cli_noprofile.c asks for PT_INTERP,
 * cli_allocext.c for PT_DYNAMIC).  Only 64-bit little-endian ELF files;
 * anything else (a script, another architecture, a truncated file) is
 * "not such a file", never an error to the user. */
#define _GNU_SOURCE
#include <elf.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"

#define MAX_PHDRS 4096

const Elf64_Phdr *cli_elf_phdrs(int fd, unsigned *count)
{
    static Elf64_Phdr ph[MAX_PHDRS];
    Elf64_Ehdr eh;
    if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
        eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
        eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 || eh.e_phnum > MAX_PHDRS)
        return NULL;
    size_t size = (size_t)eh.e_phnum * sizeof ph[0];
    if (pread(fd, ph, size, (off_t)eh.e_phoff) != (ssize_t)size)
        return NULL;
    *count = eh.e_phnum;
    return ph;
}
