/* an_mprof.h - `heapscope report --mprof`: the four tables of Zorn and
 * Hilfinger's mprof (bin table, direct allocation table, leak table of
 * partial call paths, allocation call graph). */
#ifndef AN_MPROF_H
#define AN_MPROF_H

#include <stdio.h>

#include "analyse/an_report.h"

/* Print the four tables of the loaded profile `r` to `out`, as text or
 * (json != 0) as one JSON object.  Returns 0, or PF_ENOMEM / PF_EIO. */
int an_mprof_print(an_report_t *r, FILE *out, int json);

#endif
