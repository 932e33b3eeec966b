/* hs_flushgap.c - a program that keeps allocating while a thread of its
 * own counts how often the collector rewrites its profile.
 *
 * usage: hs_flushgap PROFILE MS SIZES
 *
 * For MS milliseconds the main thread allocates and frees blocks of
 * SIZES sizes (1 .. SIZES bytes) from one stack in turn, so the profile
 * has SIZES sites, none of them quiet.  Meanwhile a watcher thread looks
 * at PROFILE every millisecond: each flush writes PROFILE.tmp and renames
 * it over PROFILE, so a new (inode, modification time) is a new flush,
 * and a look that finds PROFILE.tmp finds the writer flushing.  It prints
 * "flushes N busy B of L": N the changes it saw before the allocating
 * stopped, B of its L looks found PROFILE.tmp.  e2e_flushgap runs it
 * with flushes made slow (HEAPSCOPE_FAULT_SLOW_READS) and an interval of
 * 10 ms: the writer must wait 20 times a flush's length before the next
 * (col_writer.c), so B stays a small part of L.
 * Output through write(2) only. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>

#include "hsprog.h"

static const char *profile;
static char tmp[4200];
static size_t sizes;
static volatile int stop;
static uint64_t changes, looks, busy;

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
    while (!stop) {
        looks++;
        busy += stat(tmp, &st) == 0;
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
    if (strlen(profile) + 5 > sizeof tmp)
        return 2;
    memcpy(tmp, profile, strlen(profile));
    memcpy(tmp + strlen(profile), ".tmp", 5);
    sizes = (size_t)atol(argv[3]);
    uint64_t until = now_ms() + (uint64_t)atol(argv[2]);
    pthread_t th;
    if (pthread_create(&th, NULL, watch, NULL) != 0)
        return 1;
    churn(until);
    stop = 1;
    pthread_join(th, NULL);
    hs_puts(1, "flushes ");
    hs_put_u64(1, changes);
    hs_puts(1, " busy ");
    hs_put_u64(1, busy);
    hs_puts(1, " of ");
    hs_put_u64(1, looks);
    hs_puts(1, "\n");
    return 0;
}
