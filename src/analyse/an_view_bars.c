/* an_view_bars.c - terminal bars (an_view_bars.h). */
#include "analyse/an_view_bars.h"

#include <stdlib.h>

unsigned an_view_bars_width(unsigned opt)
{
    if (opt)
        return opt;
    const char *c = getenv("COLUMNS");
    long v = c ? strtol(c, NULL, 10) : 0;
    return v >= 40 && v <= 1000 ? (unsigned)v : 100;
}

static unsigned scale(uint64_t v, uint64_t max, unsigned cols)
{
    if (!max)
        return 0;
    long double x = (long double)v * cols / (long double)max;
    unsigned n = (unsigned)(x + 0.5L);
    if (n == 0 && v)
        n = 1; /* something is there: show it */
    return n > cols ? cols : n;
}

void an_view_bars_print(FILE *out, unsigned cols, uint64_t value, uint64_t value2, uint64_t max)
{
    unsigned a = scale(value, max, cols), b = scale(value2, max, cols);
    for (unsigned i = 0; i < cols; i++)
        fputc(i < a ? '#' : i < b ? '.' : ' ', out);
}
