/* ab_alloc.h - finding allocators by name or path, and their versions. */
#ifndef AB_ALLOC_H
#define AB_ALLOC_H

#include <stddef.h>

#include "allocbench/ab.h"

/* Fill `out` for `spec`: a known name (glibc, jemalloc, tcmalloc, mimalloc),
 * found through the dynamic linker's cache (ldconfig -p) or the usual
 * library directories, or a path to a shared object (contains a '/').
 * Returns 0, or -1 with a message in err (unknown name, not installed, not
 * a readable ELF shared object). */
int ab_alloc_resolve(const char *spec, ab_alloc_t *out, char *err, size_t errsz);

/* The known names, comma-separated, for messages and --help. */
const char *ab_alloc_known(void);

#endif
