/* ab_output.h - the three outputs of `heapscope bench`: the terminal table
 * (ab_table.c), the CSV (ab_csv.c) and the SVG charts (ab_svg.c). */
#ifndef AB_OUTPUT_H
#define AB_OUTPUT_H

#include <stdio.h>

#include "allocbench/ab.h"

/* Per workload, one line per allocator: medians of every measured quantity,
 * normalised to the baseline allocator (glibc if present, else the first)
 * whose line shows absolute figures; [min-max] spread for times. */
void ab_table_print(const ab_set_t *s, FILE *out);

/* One row per workload, allocator and repetition (completed runs only);
 * threads and scale as given ("" for the workload's default).  Returns 0,
 * or -1 with errno if the file cannot be written. */
int ab_csv_write(const ab_set_t *s, const char *path, const char *threads, const char *scale);

/* One chart per measure that has data, DIR/MEASURE.svg: grouped bars (one
 * group per workload, one bar per allocator: the median, a whisker for
 * min-max) and a legend.  Creates DIR if needed.  Returns the number of
 * files written, or -1 with a message in err. */
int ab_svg_write(const ab_set_t *s, const char *dir, char *err, size_t errsz);

#endif
