/* ab_stats.c - medians with spread: the median resists the odd slow run on
 * a shared machine, and min-max shows how much the runs disagreed. */
#include <stdlib.h>

#include "allocbench/ab_stats.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

ab_spread_t ab_stats_spread(const double *v, size_t n)
{
    ab_spread_t s = {-1, -1, -1, 0};
    double *c = malloc((n ? n : 1) * sizeof *c);
    if (!c)
        return s;
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (v[i] >= 0)
            c[m++] = v[i];
    if (m) {
        qsort(c, m, sizeof *c, cmp_double);
        s.median = m % 2 ? c[m / 2] : (c[m / 2 - 1] + c[m / 2]) / 2;
        s.min = c[0];
        s.max = c[m - 1];
        s.n = (int)m;
    }
    free(c);
    return s;
}
