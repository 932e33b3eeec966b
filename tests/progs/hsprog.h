/* hsprog.h - helpers shared by the end-to-end test programs.
 *
 * The test programs must make exactly the heap allocations their tests
 * expect, so nothing here allocates: output goes through write(2) (glibc's
 * stdio would malloc a 4096-byte buffer on the first printf to a pipe), and
 * hs_escape() keeps the compiler from deleting a malloc/free pair whose
 * pointer is otherwise unused.
 *
 * HS_SITE marks a function whose name the tests look for in a stack: never
 * inlined, never cloned under another name (.isra/.constprop). */
#ifndef HSPROG_H
#define HSPROG_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#if defined(__clang__)
#define HS_SITE __attribute__((noinline))
#else
#define HS_SITE __attribute__((noinline, noclone))
#endif

/* Make the compiler believe p is used and memory may have changed. */
static inline void hs_escape(const void *p)
{
    __asm__ __volatile__("" : : "r"(p) : "memory");
}

/* Write the NUL-terminated string s to fd; short writes are retried. */
static inline void hs_puts(int fd, const char *s)
{
    size_t n = strlen(s);
    while (n > 0) {
        ssize_t w = write(fd, s, n);
        if (w <= 0)
            return;
        s += w;
        n -= (size_t)w;
    }
}

/* v in decimal, at the end of buf; returns where it starts. */
static inline const char *hs_u64_str(char buf[24], uint64_t v)
{
    int i = 23;
    buf[i] = '\0';
    do {
        buf[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    return buf + i;
}

/* Write v in decimal to fd. */
static inline void hs_put_u64(int fd, uint64_t v)
{
    char buf[24];
    hs_puts(fd, hs_u64_str(buf, v));
}

/* Report a broken expectation of the program itself and exit with 99. */
static inline void hs_fail(const char *what)
{
    hs_puts(2, "test program failed: ");
    hs_puts(2, what);
    hs_puts(2, "\n");
    _exit(99);
}

#endif
