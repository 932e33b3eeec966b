/* ab_measures.c - names and accessors of the measures (see ab_measures.h). */
#include <stdlib.h>

#include "allocbench/ab_measures.h"

const ab_measure_t ab_measures[AB_M_COUNT] = {
    [AB_M_WALL] = {"wall_s", "Wall time", "s", 0},
    [AB_M_USER] = {"user_s", "User CPU time", "s", 0},
    [AB_M_SYS] = {"sys_s", "System CPU time", "s", 0},
    [AB_M_PEAK_RSS] = {"peak_rss_kb", "Peak RSS", "KiB", 1},
    [AB_M_MINFLT] = {"minor_faults", "Minor page faults", "faults", 1},
    [AB_M_MAJFLT] = {"major_faults", "Major page faults", "faults", 1},
    [AB_M_RSS_AFTER] = {"rss_after_free_kb", "RSS after freeing everything", "KiB", 1},
    [AB_M_BRK] = {"brk_calls", "brk calls", "calls", 1},
    [AB_M_MMAP] = {"mmap_calls", "mmap calls", "calls", 1},
    [AB_M_MUNMAP] = {"munmap_calls", "munmap calls", "calls", 1},
    [AB_M_MADVISE] = {"madvise_calls", "madvise calls", "calls", 1},
    [AB_M_PEAK_LIVE] = {"peak_live_bytes", "Live bytes at peak", "bytes", 1},
    [AB_M_RSS_AT_PEAK] = {"rss_at_peak_kb", "RSS at the heap peak", "KiB", 1},
    [AB_M_FRAG] = {"fragmentation", "Fragmentation (peak RSS / live bytes at peak)", "", 0},
};

double ab_measure_value(const ab_result_t *r, int m)
{
    switch (m) {
    case AB_M_WALL: return r->wall_s;
    case AB_M_USER: return r->user_s;
    case AB_M_SYS: return r->sys_s;
    case AB_M_PEAK_RSS: return (double)r->peak_rss_kb;
    case AB_M_MINFLT: return (double)r->minflt;
    case AB_M_MAJFLT: return (double)r->majflt;
    case AB_M_RSS_AFTER: return (double)r->rss_after_free_kb;
    case AB_M_BRK: return (double)r->brk;
    case AB_M_MMAP: return (double)r->mmap;
    case AB_M_MUNMAP: return (double)r->munmap;
    case AB_M_MADVISE: return (double)r->madvise;
    case AB_M_PEAK_LIVE: return r->peak_live_bytes;
    case AB_M_RSS_AT_PEAK: return r->rss_at_peak_kb;
    case AB_M_FRAG: return r->fragmentation;
    default: return -1;
    }
}

ab_spread_t ab_measure_spread(const ab_set_t *s, size_t w, size_t a, int m)
{
    ab_spread_t none = {-1, -1, -1, 0};
    double *v = malloc((s->nrep ? s->nrep : 1) * sizeof *v);
    if (!v)
        return none;
    for (size_t rep = 0; rep < s->nrep; rep++) {
        size_t i = ab_set_index(s, rep, w, a);
        v[rep] = s->done[i] ? ab_measure_value(&s->r[i], m) : -1;
    }
    ab_spread_t sp = ab_stats_spread(v, s->nrep);
    free(v);
    return sp;
}
