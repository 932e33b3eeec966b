/* ab_measures.h - the measures of a run, by index, for the table, the CSV
 * and the charts (one list, so the three always agree). */
#ifndef AB_MEASURES_H
#define AB_MEASURES_H

#include "allocbench/ab.h"
#include "allocbench/ab_stats.h"

typedef struct ab_measure {
    const char *key;   /* CSV column, SVG file name */
    const char *title; /* chart title */
    const char *unit;  /* "s", "KiB", "calls", "" */
    int is_int;        /* printed without decimals */
} ab_measure_t;

enum {
    AB_M_WALL, AB_M_USER, AB_M_SYS, AB_M_PEAK_RSS, AB_M_MINFLT, AB_M_MAJFLT, AB_M_RSS_AFTER,
    AB_M_BRK, AB_M_MMAP, AB_M_MUNMAP, AB_M_MADVISE, AB_M_PEAK_LIVE, AB_M_RSS_AT_PEAK, AB_M_FRAG,
    AB_M_COUNT
};

extern const ab_measure_t ab_measures[AB_M_COUNT];

/* Value of measure m in r; negative when it was not measured. */
double ab_measure_value(const ab_result_t *r, int m);

/* Median and min-max of measure m over the completed repetitions of
 * workload w under allocator a (n = 0 when none has the measure). */
ab_spread_t ab_measure_spread(const ab_set_t *s, size_t w, size_t a, int m);

#endif
