/* hsclock.h - the monotonic clock in milliseconds, for the test programs
 * that run for a while (hs_nothread.c, hs_handoff.c).  Include it after
 * _GNU_SOURCE (or _POSIX_C_SOURCE) is defined: CLOCK_MONOTONIC needs it. */
#ifndef HSCLOCK_H
#define HSCLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t hs_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

#endif
