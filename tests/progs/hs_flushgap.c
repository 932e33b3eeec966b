/* hs_flushgap.c - a program that keeps allocating while a thread of its
 * own counts how often the collector rewrites its profile.
 *
 * usage: hs_flushgap PROFILE MS SIZES
 *
 * For MS milliseconds the main thread allocates and frees blocks of
 * SIZES sizes (1 .. SIZES bytes) from one stack in turn, so the profile
 * has SIZES sites, none of them quiet.  Meanwhile a watcher thread looks
 * at PROFILE every millisecond: each flush writes PROFILE.tmp and renames
 * it over PROFILE, so a new (inode, modification time) is a new flush.
 * It prints "flushes N", N the changes it saw before the allocating
 * stopped.  e2e_flushgap runs it at an interval of 10 ms with flushes
 * made long in CPU time (HEAPSCOPE_FAULT_FLUSH_CPU_MS), which the writer
 * must space out, and long asleep (HEAPSCOPE_FAULT_FLUSH_SLEEP_MS), which
 * it must not (col_writer.c).
 * Output through write(2) only. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>

#include "hsprog.h"

static const char *profile;
static size_t sizes;
static int stop; /* set by main when the allocating ends */
static uint64_t changes;

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void *watch(void *arg)
{
    (void)arg;
    struct stat st;
    ino_t ino = 0;
    struct timespec mt = {0, 0};
    int seen = stat(profile, &st) == 0;
    if (seen) {
        ino = st.st_ino;
        mt = st.st_mtim;
    }
    struct timespec ms = {0, 1000000};
    while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
        if (stat(profile, &st) == 0 &&
            (!seen || st.st_ino != ino || st.st_mtim.tv_sec != mt.tv_sec ||
             st.st_mtim.tv_nsec != mt.tv_nsec)) {
            changes += seen;
            seen = 1;
            ino = st.st_ino;
            mt = st.st_mtim;
        }
        nanosleep(&ms, NULL);
    }
    return NULL;
}

HS_SITE static void churn(uint64_t until)
{
    for (size_t n = 1; now_ms() < until; n = n % sizes + 1) {
        void *p = malloc(n);
        hs_escape(p);
        free(p);
    }
}

int main(int argc, char **argv)
{
    if (argc != 4 || atol(argv[3]) < 1) {
        hs_puts(2, "usage: hs_flushgap PROFILE MS SIZES\n");
        return 2;
    }
    profile = argv[1];
    sizes = (size_t)atol(argv[3]);
    uint64_t until = now_ms() + (uint64_t)atol(argv[2]);
    pthread_t th;
    if (pthread_create(&th, NULL, watch, NULL) != 0)
        return 1;
    churn(until);
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    pthread_join(th, NULL);
    hs_puts(1, "flushes ");
    hs_put_u64(1, changes);
    hs_puts(1, "\n");
    return 0;
}
