/* col_hooks_ext.c - the functions libheapscope.so exports to the allocator
 * extensions (col_ext.h): libheapscope-jemalloc.so's hooks of mallocx,
 * rallocx, xallocx, dallocx and sdallocx record through these, with the
 * malloc hooks' rules.  And the check, at start and after each dlopen,
 * that says in the profile when jemalloc is loaded but not the extension
 * that intercepts its own entry points. */
#define _GNU_SOURCE
#include <errno.h>

#include "collect/col_ext.h"
#include "collect/col_hooks.h"
#include "common/ut_path.h"

/* Record a call of an extension's hook?  The malloc hooks' fast-path
 * test, else their cold paths' decision (start-up, inside heapscope, the
 * writer thread). */
static int ext_records(void)
{
    return COL_HOOK_FAST() || col_cold_mode() == 1;
}

/* The fast paths are the malloc and free hooks' own, inline. */
UT_EXPORT void heapscope_ext_alloc(void *p, size_t size, const void *frame)
{
    if (p == NULL)
        return;
    col_thread_t *t = col_tls_fast;
    if (UT_LIKELY(t != NULL)) {
        col_record_alloc_fast(t, p, size, frame);
    } else if (col_cold_mode() == 1) {
        int saved = errno;
        col_record_alloc(p, size, frame);
        errno = saved;
    }
}

UT_EXPORT int heapscope_ext_free(void *ptr)
{
    if (ptr == NULL)
        return 1;
    col_thread_t *t = col_tls_fast;
    if (UT_LIKELY(t != NULL)) {
        if (UT_LIKELY(col_record_free_quick(t, ptr)))
            return 1;
        /* what free_quick declined (it left col_tls_fast NULL, which this
         * sets back); 0 for a bootstrap block */
        return col_record_free_fast(t, ptr);
    }
    int saved = errno;
    int real = col_cold_free_record(ptr); /* the free hook's cold path */
    errno = saved;
    return real;
}

/* As col_record_realloc_slow: the old block leaves the shadow before the
 * call, so that once the allocator has freed it no other thread's
 * allocation at the same address is recorded first. */
UT_EXPORT void *heapscope_ext_resize(void *ptr, size_t size, heapscope_ext_resize_fn call,
                                     void *arg, const void *frame)
{
    if (col_boot_owns(ptr))
        return NULL; /* not the allocator's: it cannot be resized in place */
    if (!ext_records())
        return call(ptr, &size, arg);
    col_taken_t old;
    col_record_take(ptr, &old);
    void *p = call(ptr, &size, arg);
    int saved = errno;
    if (p == NULL) {
        col_record_restore(&old); /* left as it was */
    } else {
        col_record_commit_free(&old);
        col_record_alloc(p, size, frame);
    }
    errno = saved;
    return p;
}

/* Is a module whose file name starts with `prefix` loaded? */
static int module_loaded(const col_module_t *m, size_t n, const char *prefix)
{
    for (size_t i = 0; i < n; i++) {
        if (m[i].t_unload == 0 && ut_path_base_starts(m[i].path, prefix))
            return 1;
    }
    return 0;
}

/* Is jemalloc loaded without libheapscope-jemalloc.so?  Then the profile
 * says what it misses, once.  Read from the module list, not with
 * dlsym("mallocx"): a lookup that fails leaves dlerror's message
 * allocated, for the program's next dl call to free where heapscope never
 * saw it allocated.  Caller holds the writer lock, after
 * col_modules_scan. */
void col_ext_check(void)
{
    static int said;
    if (said)
        return;
    size_t n;
    const col_module_t *m = col_modules_list(&n);
    if (!module_loaded(m, n, "libjemalloc") || module_loaded(m, n, "libheapscope-jemalloc"))
        return;
    said = 1;
    col_message_add("jemalloc's own mallocx, rallocx, xallocx, dallocx and sdallocx were not "
                    "intercepted: blocks they allocate are missing and blocks they free stay "
                    "live (heapscope run --jemalloc preloads libheapscope-jemalloc.so)");
}
