/* an_export.h - `heapscope export`: a profile in other tools' formats.
 *
 * an_export.c parses the options and dispatches to one writer per format
 * (an_export_<format>.c); an_export_stacks.c holds what several writers
 * share (the costs, a string interning table, a frame's location key).
 * Every writer takes a profile loaded with an_report_load() and writes to
 * an open FILE; docs/EXPORTS.md describes each output.
 */
#ifndef AN_EXPORT_H
#define AN_EXPORT_H

#include <stdint.h>
#include <stdio.h>

#include "analyse/an_report.h"

/* `heapscope export --format F [--cost C] [-o OUT] FILE`; argv[0] is
 * "export".  Returns the exit status: 0 written, 1 the profile cannot be
 * read or OUT cannot be written, 2 bad usage (message on stderr). */
int an_export_main(int argc, char **argv);

/* The per-stack figures the exports weigh stacks by (--cost). */
typedef enum an_export_cost {
    AN_EXPORT_ALLOCATIONS,  /* allocation calls */
    AN_EXPORT_BYTES,        /* bytes allocated */
    AN_EXPORT_LEAKED,       /* bytes live at the end */
    AN_EXPORT_PEAK,         /* bytes live at the heap peak */
    AN_EXPORT_TEMPORARY,    /* temporary allocations */
    AN_EXPORT_NCOSTS
} an_export_cost_t;

const char *an_export_cost_name(an_export_cost_t c);
/* 0 and *c set when s names a cost, else -1. */
int an_export_cost_parse(const char *s, an_export_cost_t *c);
/* The unit of a cost: "count" or "bytes". */
const char *an_export_cost_unit(an_export_cost_t c);
uint64_t an_export_cost_of(const an_stats_t *s, an_export_cost_t c);

/* The writers.  Each returns 0, PF_ENOMEM, or PF_EIO (write error). */
int an_export_pprof(an_report_t *r, FILE *out);
int an_export_folded(an_report_t *r, an_export_cost_t cost, FILE *out);
int an_export_speedscope(an_report_t *r, FILE *out);
int an_export_massif(an_report_t *r, FILE *out);
int an_export_json(an_report_t *r, FILE *out);

#endif
