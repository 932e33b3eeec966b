/* col_mainstack.c - the initial thread's stack bounds, as glibc's
 * pthread_getattr_np gives them, without glibc.
 *
 * For the initial thread glibc reads /proc/self/maps with fopen, getline
 * and sscanf, whose code pages (128 KB of libc, with the kernel's 64 KB
 * fault-around) the profiled program may never touch before its peak.
 * This reads the same file with open and read (which the collector calls
 * anyway) into a small buffer on the stack, and takes the same answer:
 * the top is the end of the mapping that holds __libc_stack_end (the
 * stack pointer the process started with), the bottom the stack limit
 * below it, but not below the end of the mapping under the stack.
 * Without /proc (a chroot, a container), the top is the end of
 * __libc_stack_end's page and the bottom the stack limit below it. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "collect/col_internal.h"

extern void *__libc_stack_end;

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

/* The mapping of /proc/self/maps that holds addr: its end in *end, the
 * end of the mapping before it (0: none) in *below.  0, or -1. */
static int maps_find(uintptr_t addr, uintptr_t *end, uintptr_t *below)
{
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    char buf[512];
    uintptr_t from = 0, to = 0, prev = 0;
    enum { FROM, TO, REST } st = FROM;
    int found = -1;
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        for (ssize_t i = 0; i < n && found < 0; i++) {
            char c = buf[i];
            int d = hex_digit(c);
            if (st == FROM) {
                if (c == '-')
                    st = TO;
                else if (d >= 0)
                    from = from * 16 + (uintptr_t)d;
            } else if (st == TO) {
                if (d >= 0) {
                    to = to * 16 + (uintptr_t)d;
                    continue;
                }
                if (from <= addr && addr < to) {
                    *end = to;
                    *below = prev;
                    found = 0;
                }
                prev = to;
                st = REST;
            } else if (c == '\n') {
                from = to = 0;
                st = FROM;
            }
        }
        if (found == 0)
            break;
    }
    close(fd);
    return found;
}

int col_main_stack_bounds(uintptr_t max_size, uintptr_t *lo, uintptr_t *hi)
{
    int saved = errno; /* called from the allocation hooks */
    struct rlimit rl;
    int rc = -1;
    if (__libc_stack_end != NULL && getrlimit(RLIMIT_STACK, &rl) == 0) {
        uintptr_t start = (uintptr_t)__libc_stack_end, top, below = 0;
        if (maps_find(start, &top, &below) != 0)
            top = (start | 4095) + 1;
        uintptr_t size = rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > max_size
                             ? max_size
                             : (uintptr_t)rl.rlim_cur;
        *hi = top;
        *lo = top - size > below ? top - size : below;
        rc = 0;
    }
    errno = saved;
    return rc;
}
