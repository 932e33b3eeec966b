/* col_hooks_cold.h - the slow paths of the malloc hooks: start-up, calls
 * made while heapscope itself runs (passed to the real allocator unrecorded),
 * and the bootstrap blocks handed out while dlsym resolves the allocator. */
#ifndef COL_HOOKS_COLD_H
#define COL_HOOKS_COLD_H

#include <stddef.h>

enum col_aligned_kind { COL_ALIGNED_ALLOC, COL_MEMALIGN, COL_VALLOC, COL_PVALLOC };

/* 1: record the call; 0: pass it to the real allocator unrecorded (inside
 * heapscope); -1: the real allocator is unknown or must not be used. */
int col_cold_mode(void);

void *col_cold_malloc(size_t size);
void col_cold_free(void *ptr);
/* col_cold_free's recording: 1 when the real free should then run, 0 when
 * the block must not reach it (a bootstrap block, or no real allocator
 * to be called). */
int col_cold_free_record(void *ptr);
void *col_cold_calloc(size_t n, size_t size);
void *col_cold_realloc(void *ptr, size_t size);
int col_cold_posix_memalign(void **out, size_t align, size_t size);
void *col_cold_aligned(enum col_aligned_kind kind, size_t align, size_t size);

#endif
