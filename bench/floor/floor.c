/* floor.c - the floor under any exact heap profiler preloaded into a
 * program: what interposing the malloc family costs before anything is
 * recorded, and what each piece of exact recording adds, with none of the
 * work that makes heapscope's answers right (no stack is identified, no
 * site is made, nothing is written).  Built once per level (FL_LEVEL) as
 * build/bench/floor/libfloor-NAME.so and preloaded by bench/floor/run
 * beside heapscope:
 *
 *   0 pass   malloc, calloc, realloc and free call glibc's, nothing more
 *   1 live   + each live block's word in a flat shadow map (4 bytes per
 *              32-byte granule, heapscope's ratio), set by the allocation
 *              and taken back by the free, and the thread's heap balance
 *              (usable sizes from glibc's chunk header, published to a
 *              shared counter every 64 KiB: cheaper than an exact peak)
 *   2 count  + the thread's counters (allocations, frees) of the block's
 *              site, one constant site: as if finding a stack were free
 *   3 stack  + a frame-pointer walk of the whole stack at each allocation,
 *              hashed into one of 1,024 sites: the cheapest capture that
 *              reads every frame, with no table of stacks behind it
 *
 * A level's slowdown is a lower bound for any profiler that does at least
 * that much per allocation and free.  Not a profiler: it handles only the
 * entry points the suite's C workloads use (aligned allocations pass
 * through unrecorded, and their frees find no shadow word) and glibc only.
 * The map is reserved at start, 16 TiB with MAP_NORESERVE; where that is
 * refused (under valgrind, or vm.overcommit_memory=2) a smaller one
 * reaches fewer addresses, and the library says so on stderr.
 * With FLOOR_REPORT set it prints, at exit, the allocations and frees it
 * counted and how many sites they came from (levels 2-3), how often the
 * balance was published and what it ended at (levels 1-3), so that a test
 * can check that it saw every event and that level 3 tells stacks apart. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef FL_LEVEL
#error "build with -DFL_LEVEL=0..3"
#endif

/* glibc's own entry points (exported since 2.2.5): no dlsym at start. */
extern void *__libc_malloc(size_t);
extern void __libc_free(void *);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);

#define FL_EXPORT __attribute__((visibility("default")))
#define FL_TLS __attribute__((tls_model("initial-exec")))
#define FL_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define FL_LIKELY(x) __builtin_expect(!!(x), 1)

#define FL_GRANULE_SHIFT 5             /* a glibc chunk is at least 32 bytes */
#define FL_SHADOW_BITS 44 /* 2^47 bytes of address space / 32 x 4; less under valgrind */
#define FL_SITES 1024
#define FL_PUBLISH ((int64_t)64 << 10)

typedef struct fl_count {
    uint64_t allocs, frees;
} fl_count_t;

/* A thread's state; fl_self points at it once the thread is attached. */
typedef struct fl_thread {
    int64_t pending;            /* heap balance not yet published */
    uintptr_t stack_lo, stack_hi;
    fl_count_t count[FL_SITES]; /* by site - 1 */
} fl_thread_t;

static _Thread_local fl_thread_t fl_state FL_TLS;
static _Thread_local fl_thread_t *fl_self FL_TLS; /* NULL: record nothing */
static _Thread_local int fl_attaching FL_TLS;
static _Thread_local int fl_detached FL_TLS;

static uint32_t *fl_shadow;        /* NULL until the constructor ran */
static uint64_t fl_granules;       /* words in the map: blocks above pass through */
static int64_t fl_heap;            /* published balance (and exited threads') */
static uint64_t fl_publishes;
static uint64_t fl_allocs, fl_frees; /* of threads that exited */
static uint64_t fl_used[FL_SITES / 64]; /* sites they allocated from */
static pthread_key_t fl_key;

/* ---- cold: threads, start and exit ----------------------------------- */

static void fl_add_counts(fl_thread_t *t)
{
    uint64_t a = 0, f = 0;
    for (int i = 0; i < FL_SITES; i++) {
        a += t->count[i].allocs;
        f += t->count[i].frees;
        if (t->count[i].allocs)
            __atomic_or_fetch(&fl_used[i / 64], 1ull << (i % 64), __ATOMIC_RELAXED);
    }
    __atomic_add_fetch(&fl_allocs, a, __ATOMIC_RELAXED);
    __atomic_add_fetch(&fl_frees, f, __ATOMIC_RELAXED);
}

/* Key destructor: the exiting thread's counts join the totals, and it
 * records nothing more (later frees of its blocks find their words). */
static void fl_thread_exit(void *arg)
{
    fl_thread_t *t = arg;
    fl_self = NULL;
    fl_detached = 1;
    fl_add_counts(t);
    __atomic_add_fetch(&fl_heap, t->pending, __ATOMIC_RELAXED);
}

/* The calling thread's first event: its stack bounds (whose lookup may
 * allocate: those allocations pass through) and its exit destructor.
 * Returns the state to record into, or NULL to pass this event through.
 * (Level 0 never attaches.) */
__attribute__((noinline, cold, unused)) static fl_thread_t *fl_attach(void)
{
    if (fl_shadow == NULL || fl_attaching || fl_detached)
        return NULL;
    fl_attaching = 1;
    fl_thread_t *t = &fl_state;
    pthread_attr_t a;
    void *lo;
    size_t size;
    if (pthread_getattr_np(pthread_self(), &a) == 0) {
        if (pthread_attr_getstack(&a, &lo, &size) == 0) {
            t->stack_lo = (uintptr_t)lo;
            t->stack_hi = (uintptr_t)lo + size;
        }
        pthread_attr_destroy(&a);
    }
    pthread_setspecific(fl_key, t);
    fl_attaching = 0;
    fl_self = t;
    return t;
}

__attribute__((constructor)) static void fl_init(void)
{
    void *p = MAP_FAILED;
    uint64_t bytes = 1ull << FL_SHADOW_BITS;
    for (; bytes >= 1ull << 30; bytes >>= 1) {
        p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p != MAP_FAILED)
            break;
    }
    if (p == MAP_FAILED) {
        static const char msg[] = "libfloor: cannot reserve the shadow map\n";
        (void)!write(2, msg, sizeof msg - 1);
        _exit(125);
    }
    pthread_key_create(&fl_key, fl_thread_exit);
    fl_granules = bytes / sizeof(uint32_t);
    if (bytes < 1ull << FL_SHADOW_BITS) { /* valgrind, or vm.overcommit_memory=2 */
        char line[160];
        int n = snprintf(line, sizeof line,
                         "libfloor: the shadow map reaches only addresses below %#llx; "
                         "blocks above pass unrecorded\n",
                         (unsigned long long)(fl_granules << FL_GRANULE_SHIFT));
        (void)!write(2, line, (size_t)n);
    }
    fl_shadow = p;
}

__attribute__((destructor)) static void fl_fini(void)
{
    if (!getenv("FLOOR_REPORT"))
        return;
    if (fl_self != NULL)
        fl_thread_exit(fl_self);
    int sites = 0;
    for (int i = 0; i < FL_SITES / 64; i++)
        sites += __builtin_popcountll(fl_used[i]);
    char line[160];
    int n = snprintf(line, sizeof line,
                     "libfloor: level=%d allocs=%llu frees=%llu sites=%d publishes=%llu "
                     "balance=%lld\n", FL_LEVEL, (unsigned long long)fl_allocs,
                     (unsigned long long)fl_frees, sites, (unsigned long long)fl_publishes,
                     (long long)fl_heap);
    (void)!write(2, line, (size_t)n);
}

/* ---- hot: what each allocation and free records ---------------------- */

/* The site of this allocation: 1 below level 3; at level 3 the hash of
 * every return address on the frame-pointer chain, kept inside the
 * thread's stack (none if its bounds are unknown). */
static inline uint32_t fl_site(const fl_thread_t *t)
{
#if FL_LEVEL >= 3
    const uintptr_t *fp = __builtin_frame_address(0);
    uint64_t h = 0;
    for (int n = 0; n < 256; n++) {
        uintptr_t a = (uintptr_t)fp;
        if (a < t->stack_lo || a + 16 > t->stack_hi || (a & 7))
            break;
        h = (h << 5 | h >> 59) ^ fp[1]; /* 2 cycles, beside the chain of loads */
        const uintptr_t *next = (const uintptr_t *)fp[0];
        if (next <= fp)
            break;
        fp = next;
    }
    return (uint32_t)((h * 0x9e3779b97f4a7c15ull) >> 54) + 1;
#else
    (void)t;
    return 1;
#endif
}

static inline void fl_balance(fl_thread_t *t, int64_t delta)
{
    int64_t p = t->pending + delta;
    if (FL_UNLIKELY(p >= FL_PUBLISH || p <= -FL_PUBLISH)) {
        __atomic_add_fetch(&fl_heap, p, __ATOMIC_RELAXED);
        __atomic_add_fetch(&fl_publishes, 1, __ATOMIC_RELAXED);
        p = 0;
    }
    t->pending = p;
}

/* Does the map reach p (NULL: no)?  Then p's word is fl_word(p). */
static inline int fl_mapped(const void *p)
{
    return FL_LIKELY((uintptr_t)p >> FL_GRANULE_SHIFT < fl_granules) && p != NULL;
}

static inline uint32_t *fl_word(const void *p)
{
    return &fl_shadow[(uintptr_t)p >> FL_GRANULE_SHIFT];
}

/* glibc's usable size of block p, from its chunk header (glibc 2.26+:
 * the chunk size less 8; an mmapped chunk's is 8 bytes less, which the
 * balance, a stand-in for a profiler's heap counter, does without). */
static inline int64_t fl_usable(const void *p)
{
    return (int64_t)((((const size_t *)p)[-1] & ~(size_t)7) - 8);
}

/* The calling thread's state, attached on its first event; NULL: pass. */
static inline fl_thread_t *fl_thread(void)
{
    fl_thread_t *t = fl_self;
    return FL_LIKELY(t != NULL) ? t : fl_attach();
}

static inline void fl_alloc(void *p)
{
#if FL_LEVEL >= 1
    fl_thread_t *t = fl_thread();
    if (FL_UNLIKELY(t == NULL || !fl_mapped(p)))
        return;
    uint32_t *w = fl_word(p);
    uint32_t site = fl_site(t);
#if FL_LEVEL >= 2
    t->count[site - 1].allocs++;
#endif
    *w = site;
    fl_balance(t, fl_usable(p));
#else
    (void)p;
#endif
}

/* Take p's word before the real call that frees it (so that no other
 * thread can be given the address first); returns it, 0 if p was not
 * recorded. */
static inline uint32_t fl_take(fl_thread_t *t, const void *p)
{
#if FL_LEVEL >= 1
    if (t == NULL || !fl_mapped(p))
        return 0;
    uint32_t *w = fl_word(p), v = *w;
    if (v != 0)
        *w = 0;
    return v;
#else
    (void)t, (void)p;
    return 0;
#endif
}

/* Count the free of a block of `size` usable bytes whose word v (not 0)
 * fl_take took. */
static inline void fl_account_free(fl_thread_t *t, uint32_t v, int64_t size)
{
#if FL_LEVEL >= 2
    t->count[v - 1].frees++;
#else
    (void)v;
#endif
    fl_balance(t, -size);
}

FL_EXPORT void *malloc(size_t size)
{
    void *p = __libc_malloc(size);
    if (p != NULL)
        fl_alloc(p);
    return p;
}

/* The free of p on thread t, then the real free. */
static inline void fl_free(fl_thread_t *t, void *p)
{
    uint32_t v = fl_take(t, p);
    if (v != 0)
        fl_account_free(t, v, fl_usable(p));
    __libc_free(p);
}

/* A free on a thread not attached yet (maybe its first event). */
__attribute__((noinline, cold, unused)) static void fl_free_attach(void *p)
{
    fl_free(fl_attach(), p);
}

FL_EXPORT void free(void *ptr)
{
#if FL_LEVEL >= 1
    fl_thread_t *t = fl_self;
    if (FL_UNLIKELY(t == NULL)) {
        fl_free_attach(ptr); /* a tail call: the common free saves nothing */
        return;
    }
    fl_free(t, ptr);
#else
    __libc_free(ptr);
#endif
}

FL_EXPORT void *calloc(size_t n, size_t size)
{
    void *p = __libc_calloc(n, size);
    if (p != NULL)
        fl_alloc(p);
    return p;
}

/* realloc(p, 0) frees p and returns NULL (glibc); a NULL for another size
 * is a failure that leaves the old block live, its word put back. */
FL_EXPORT void *realloc(void *old, size_t size)
{
#if FL_LEVEL >= 1
    fl_thread_t *t = fl_thread();
    uint32_t v = fl_take(t, old);
    int64_t old_size = v ? fl_usable(old) : 0;
    void *p = __libc_realloc(old, size);
    if (v != 0 && (p != NULL || size == 0))
        fl_account_free(t, v, old_size);
    else if (v != 0)
        *fl_word(old) = v;
    if (p != NULL)
        fl_alloc(p);
    return p;
#else
    return __libc_realloc(old, size);
#endif
}
