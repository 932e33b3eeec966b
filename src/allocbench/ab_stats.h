/* ab_stats.h - median and spread of repeated measurements. */
#ifndef AB_STATS_H
#define AB_STATS_H

#include <stddef.h>

typedef struct ab_spread {
    double median, min, max;
    int n; /* values that were present (>= 0); 0: none, fields are -1 */
} ab_spread_t;

/* Median, min and max of the values of v[0..n) that are >= 0 (negative
 * means "not measured").  Even counts average the two middle values. */
ab_spread_t ab_stats_spread(const double *v, size_t n);

#endif
