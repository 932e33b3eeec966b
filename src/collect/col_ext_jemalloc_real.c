/* col_ext_jemalloc_real.c - what libheapscope-jemalloc.so's hooks call.
 *
 * With jemalloc loaded (a module whose file name starts with libjemalloc,
 * seen with dl_iterate_phdr), its functions: the next definitions after
 * this library, looked up with dlsym(RTLD_NEXT) once, in the library's
 * constructor, so that no hook takes the loader's lock later, from
 * whatever lock the program holds.  Without jemalloc (heapscope run
 * --jemalloc, or an image exec'd with the same LD_PRELOAD), a program
 * that finds the extension's mallocx (a weak reference, say) gets the
 * same calls served by the next malloc family (the C library's, or
 * whatever allocator is preloaded behind heapscope), with jemalloc's
 * meaning: alignment and zeroing from the flags, xallocx never resizing in
 * place.  No lookup of a name that may be missing is made: a failed dlsym
 * leaves dlerror's message allocated, in the program's profile.
 *
 * The choice is made once and kept: a block from the C library must
 * never reach jemalloc's dallocx because jemalloc was loaded in between.
 * (A jemalloc loaded later with RTLD_LOCAL, by a plugin, then gets the C
 * library's blocks from mallocx; its sallocx and mallctl, which the
 * extension does not interpose, would not know them.) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <string.h>

#include "collect/col_ext_jemalloc.h"
#include "common/ut_compiler.h"
#include "common/ut_path.h"

/* jemalloc's flags (its header: MALLOCX_LG_ALIGN(la) is la, in the low
 * six bits; MALLOCX_ZERO is 0x40). */
#define JE_LG_ALIGN_MASK 0x3f
#define JE_ZERO 0x40

/* The next malloc family, for the emulation. */
static struct {
    void *(*malloc)(size_t);
    int (*posix_memalign)(void **, size_t, size_t);
    void *(*realloc)(void *, size_t);
    void (*free)(void *);
    size_t (*usable)(void *);
} next;

static col_je_real_t real;
static int ready;

static size_t je_align(int flags)
{
    int lg = flags & JE_LG_ALIGN_MASK;
    return lg ? (size_t)1 << lg : 0;
}

static void *emul_mallocx(size_t size, int flags)
{
    size_t align = je_align(flags);
    void *p = NULL;
    if (align <= 16)
        p = next.malloc(size);
    else if (next.posix_memalign(&p, align, size) != 0)
        p = NULL;
    if (p && (flags & JE_ZERO))
        memset(p, 0, size);
    return p;
}

static void *emul_rallocx(void *ptr, size_t size, int flags)
{
    size_t old = next.usable(ptr), align = je_align(flags);
    void *p;
    if (align <= 16) {
        p = next.realloc(ptr, size);
    } else if ((p = emul_mallocx(size, flags & ~JE_ZERO)) != NULL) {
        memcpy(p, ptr, old < size ? old : size);
        next.free(ptr);
    }
    if (p && (flags & JE_ZERO) && size > old)
        memset((char *)p + old, 0, size - old);
    return p;
}

/* In place, never: the real size, which says "not resized". */
static size_t emul_xallocx(void *ptr, size_t size, size_t extra, int flags)
{
    (void)size, (void)extra, (void)flags;
    return next.usable(ptr);
}

static size_t emul_sallocx(const void *ptr, int flags)
{
    (void)flags;
    return next.usable((void *)ptr);
}

static void emul_dallocx(void *ptr, int flags)
{
    (void)flags;
    next.free(ptr);
}

static void emul_sdallocx(void *ptr, size_t size, int flags)
{
    (void)size, (void)flags;
    next.free(ptr);
}

static int find_jemalloc(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size, (void)arg;
    return ut_path_base_starts(info->dlpi_name, "libjemalloc");
}

/* real.fn: jemalloc's fn when jemalloc is loaded (je) and has it, else
 * emul_fn. */
#define PICK(fn)                                                                                   \
    do {                                                                                           \
        void *f_ = je ? dlsym(RTLD_NEXT, #fn) : NULL;                                              \
        real.fn = emul_##fn;                                                                       \
        if (f_)                                                                                    \
            *(void **)&real.fn = f_;                                                               \
    } while (0)

static void choose(void)
{
    *(void **)&next.malloc = dlsym(RTLD_NEXT, "malloc");
    *(void **)&next.posix_memalign = dlsym(RTLD_NEXT, "posix_memalign");
    *(void **)&next.realloc = dlsym(RTLD_NEXT, "realloc");
    *(void **)&next.free = dlsym(RTLD_NEXT, "free");
    *(void **)&next.usable = dlsym(RTLD_NEXT, "malloc_usable_size");
    int je = dl_iterate_phdr(find_jemalloc, NULL) != 0;
    PICK(mallocx);
    PICK(rallocx);
    PICK(xallocx);
    PICK(sallocx);
    PICK(dallocx);
    PICK(sdallocx);
    __atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
}

__attribute__((constructor)) static void col_je_ctor(void)
{
    if (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE))
        choose();
}

const col_je_real_t *col_je_real(void)
{
    if (UT_UNLIKELY(!__atomic_load_n(&ready, __ATOMIC_ACQUIRE)))
        choose(); /* before the constructor: still the start-up's one thread */
    return &real;
}
