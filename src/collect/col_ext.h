/* col_ext.h - what libheapscope.so (and libheapscope-fp.so) offers the
 * allocator extensions: small preload libraries that interpose an
 * allocator's own entry points beside the malloc family, such as
 * libheapscope-jemalloc.so for jemalloc's mallocx, rallocx, xallocx,
 * dallocx and sdallocx (col_ext_jemalloc.c).
 *
 * They are separate libraries because defining those names in
 * libheapscope.so would make every program see them, and a program that
 * probes for them (folly's usingJEMalloc()) would believe jemalloc present
 * under glibc.  `heapscope run` preloads an extension only when the
 * program is linked with its allocator or preloads it (cli_allocext.c).
 *
 * An extension's hook calls the allocator itself (found with
 * dlsym(RTLD_NEXT), from the extension) and hands the result to these
 * functions, with its own frame (built with a frame pointer): the stack
 * recorded starts at the hook's caller, as for malloc.  Each decides
 * whether to record as the malloc hooks do (not while heapscope itself
 * runs, nor on its writer thread), keeps errno, and never fails. */
#ifndef COL_EXT_H
#define COL_EXT_H

#include <stddef.h>

/* The hook's call of the allocator, for heapscope_ext_resize: resizes the
 * block at ptr (not NULL) and returns its address, or NULL when the block
 * was left as it was.  *size is the requested size; the call may change it
 * (to what was really asked for: xallocx's size and extra). */
typedef void *(*heapscope_ext_resize_fn)(void *ptr, size_t *size, void *arg);

/* A block of `size` requested bytes at p (nothing when p is NULL) was just
 * allocated by the hook whose frame is `frame`. */
void heapscope_ext_alloc(void *p, size_t size, const void *frame);

/* The block at ptr is about to be freed.  Returns 1 when the hook should
 * pass it to the allocator, 0 when it must not: a block heapscope's own
 * bootstrap arena handed out while dlsym ran (col_boot.c). */
int heapscope_ext_free(void *ptr);

/* Resize the block at ptr (not NULL) through call(ptr, &size, arg),
 * recorded as realloc is: the old block's free and the new one's
 * allocation from the stack above frame, or nothing if call returned NULL.
 * Returns what call returned. */
void *heapscope_ext_resize(void *ptr, size_t size, heapscope_ext_resize_fn call, void *arg,
                           const void *frame);

#endif
