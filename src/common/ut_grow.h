/* ut_grow.h - the growing array of the analyser and the profile reader:
 * make room for `need` elements of `elsz` bytes in *arr (of *cap), by
 * doubling, so that appending one at a time costs amortised O(1).
 *
 * Not for the collector: realloc is the profiled program's allocator
 * there (its tables are mmap'ed, col_vm.c). */
#ifndef UT_GROW_H
#define UT_GROW_H

#include <stdint.h>
#include <stdlib.h>

/* 0, with *arr holding at least need elements (at least 16 once grown),
 * or -1 when out of memory or the size overflows (*arr and *cap are then
 * as they were). */
static inline int ut_grow(void **arr, size_t *cap, size_t need, size_t elsz)
{
    if (need <= *cap && *arr)
        return 0;
    size_t n = *cap ? *cap : 16;
    while (n < need) {
        if (n > SIZE_MAX / 2)
            return -1;
        n *= 2;
    }
    if (n > SIZE_MAX / elsz)
        return -1;
    void *p = realloc(*arr, n * elsz);
    if (!p)
        return -1;
    *arr = p;
    *cap = n;
    return 0;
}

#endif
