/* hsfd.h - which file a descriptor of the test program is open on, read
 * without allocating (readlink of /proc/self/fd/N).  Define _GNU_SOURCE
 * before including it (readlink); it includes hsprog.h. */
#ifndef HSFD_H
#define HSFD_H

#include <unistd.h>

#include "hsprog.h"

/* What descriptor fd of this process is open on (readlink of
 * /proc/self/fd/FD, NUL-terminated in out): its length, or -1 if fd is
 * not open (or out is too small). */
static inline ssize_t hs_fd_target(int fd, char *out, size_t cap)
{
    char path[48] = "/proc/self/fd/", num[24];
    strcat(path, hs_u64_str(num, (uint64_t)fd));
    ssize_t n = readlink(path, out, cap - 1);
    if (n < 0 || (size_t)n >= cap - 1)
        return -1;
    out[n] = '\0';
    return n;
}

#endif
