/* ut_compiler.h - attribute and branch-hint macros, defined once for every
 * module (collector, format, analyser). */
#ifndef UT_COMPILER_H
#define UT_COMPILER_H

#define UT_LIKELY(x) __builtin_expect(!!(x), 1)
#define UT_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define UT_NOINLINE __attribute__((noinline))
#define UT_COLD __attribute__((cold, noinline))
#define UT_INLINE static inline __attribute__((always_inline))

/* Add to a counter that only this thread writes and another thread reads
 * with __atomic_load_n: a relaxed atomic store, the same code as `x += d`
 * on x86-64, but a race no reader can tear and ThreadSanitizer accepts. */
#define UT_BUMP(x, d) __atomic_store_n(&(x), (x) + (d), __ATOMIC_RELAXED)
/* The same for a counter whose reader, loading it with acquire, must also
 * see everything counted before it (a free's count after its block's
 * allocation, on whichever thread: col_flush.c's read_counts).  The same
 * plain store on x86-64; it only keeps the compiler from sinking earlier
 * stores below it. */
#define UT_BUMP_RELEASE(x, d) __atomic_store_n(&(x), (x) + (d), __ATOMIC_RELEASE)
/* Make this thread's access to x a write before anything reads it: a
 * one-instruction read-modify-write that changes nothing.  The first
 * access to a fresh anonymous page decides what the kernel maps: a read
 * maps the shared zero page, and the write that follows must replace it
 * and flush the TLBs of every CPU running another thread of the process
 * (an interrupt each).  A write fault maps a private page at once.  For
 * memory only this thread writes (x86-64). */
#define UT_WRITE_FIRST(x) __asm__ volatile("orb $0, %0" : "+m"(*(volatile char *)&(x)))
#define UT_HIDDEN __attribute__((visibility("hidden")))
#define UT_EXPORT __attribute__((visibility("default")))
#define UT_UNUSED __attribute__((unused))
#define UT_ALIGNED(n) __attribute__((aligned(n)))
#define UT_CACHE_LINE 64
#define UT_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#endif
