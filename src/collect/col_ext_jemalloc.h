/* col_ext_jemalloc.h - the functions libheapscope-jemalloc.so's hooks
 * (col_ext_jemalloc.c) call: jemalloc's own, or where the process has no
 * jemalloc, the same calls served by the next malloc family
 * (col_ext_jemalloc_real.c). */
#ifndef COL_EXT_JEMALLOC_H
#define COL_EXT_JEMALLOC_H

#include <stddef.h>

typedef struct col_je_real {
    void *(*mallocx)(size_t size, int flags);
    void *(*rallocx)(void *ptr, size_t size, int flags);
    size_t (*xallocx)(void *ptr, size_t size, size_t extra, int flags);
    size_t (*sallocx)(const void *ptr, int flags);
    void (*dallocx)(void *ptr, int flags);
    void (*sdallocx)(void *ptr, size_t size, int flags);
} col_je_real_t;

/* The functions, chosen once: in the library's constructor, or at the
 * first call of a hook if another library's constructor comes first. */
const col_je_real_t *col_je_real(void);

#endif
