/* an_view_bars.h - terminal bars for the histogram, timeline and tree
 * views: the width to draw in, and a bar of '#' (with an optional second,
 * longer extent drawn with '.'). */
#ifndef AN_VIEW_BARS_H
#define AN_VIEW_BARS_H

#include <stdint.h>
#include <stdio.h>

/* Columns available: `opt` when non-zero, else $COLUMNS (40..1000), else
 * 100. */
unsigned an_view_bars_width(unsigned opt);

/* Print a bar of `cols` columns: '#' for value/max of it, then '.' up to
 * value2/max (value2 <= value draws none), then spaces. */
void an_view_bars_print(FILE *out, unsigned cols, uint64_t value, uint64_t value2, uint64_t max);

#endif
