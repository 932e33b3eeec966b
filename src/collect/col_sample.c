/* col_sample.c - the timeline: heap in use, RSS and event counts every
 * sample period, kept in memory until the profile is written.  Also times
 * the global peak: the first sample that sees a new peak value stamps it,
 * so peak_t is exact to one sample period.  Writer lock held by callers. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "collect/col_internal.h"

#define MAX_SAMPLES 65536

static col_sample_t *samples;
static size_t nsamples;
static unsigned stride = 1, skipped; /* keep one sample in `stride` once full */
static uint64_t rss_peak;
static long page_size;

/* /proc/self/statm is opened for each sample (~5 us in a 10 ms period),
 * not kept open: a program that closes every descriptor it did not open
 * would hand the number to one of its own files. */
static uint64_t read_rss(void)
{
    if (__atomic_load_n(&col_sealed, __ATOMIC_RELAXED))
        return 0; /* no /proc file may be opened */
    if (!page_size)
        page_size = sysconf(_SC_PAGESIZE);
    char buf[128];
    int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0); /* as col_flush.c's cmdline */
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = 0;
    char *p = buf;
    strtoull(p, &p, 10); /* size */
    return strtoull(p, NULL, 10) * (uint64_t)page_size;
}

uint64_t col_sample_take(void)
{
    uint64_t now = col_now_ns() - col_proc.start_mono_ns;
    int64_t peak = __atomic_load_n(&col_heap.peak, __ATOMIC_RELAXED);
    if (peak != col_heap.peak_seen) {
        col_heap.peak_seen = peak;
        col_heap.peak_t = now;
    }
    col_sample_t s = {.t = now};
    int64_t live = __atomic_load_n(&col_heap.live, __ATOMIC_RELAXED);
    s.heap = live > 0 ? (uint64_t)live : 0;
    s.rss = read_rss();
    if (s.rss > rss_peak)
        rss_peak = s.rss;
    /* every thread's frees before any thread's allocations, so that a
     * block whose free is counted has its allocation counted too, on
     * whichever thread (as col_flush.c's recount_allocs) */
    for (col_thread_t *t = col_thread_all(); t; t = t->next) {
        s.frees += __atomic_load_n(&t->n_frees, __ATOMIC_ACQUIRE);
        col_fault_slow_read();
    }
    for (col_thread_t *t = col_thread_all(); t; t = t->next) {
        s.allocs += __atomic_load_n(&t->n_allocs, __ATOMIC_ACQUIRE);
        col_fault_slow_read();
    }
    uint64_t events = s.allocs + s.frees;
    if (++skipped < stride)
        return events;
    skipped = 0;
    if (!samples) {
        samples = col_vm_map(MAX_SAMPLES * sizeof *samples);
        if (!samples)
            return events;
    }
    if (nsamples == MAX_SAMPLES) {
        /* full: keep every other sample, and from now on one in 2x */
        for (size_t i = 0; i < MAX_SAMPLES / 2; i++)
            samples[i] = samples[2 * i];
        nsamples = MAX_SAMPLES / 2;
        stride *= 2;
    }
    samples[nsamples++] = s;
    return events;
}

const col_sample_t *col_samples(size_t *count)
{
    *count = nsamples;
    return samples;
}

uint64_t col_rss_peak(void)
{
    return rss_peak;
}
