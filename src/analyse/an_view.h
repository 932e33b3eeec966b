/* an_view.h - the views of `heapscope report` besides the default report:
 * each answers one question (what leaked, what made the peak, what was
 * temporary, which sizes, how the heap grew, where in the call tree), as
 * text for 80-120 columns or as JSON (docs/REPORT-JSON.md, "Views").
 * All share the filters of an_filter.h, parsed by an_report.c. */
#ifndef AN_VIEW_H
#define AN_VIEW_H

#include <stdio.h>

#include "analyse/an_filter.h"
#include "analyse/an_report.h"
#include "analyse/an_suppress.h"

typedef enum an_view_kind {
    AN_VIEW_DEFAULT,   /* the summary report (an_report_text/json) */
    AN_VIEW_STACKS,    /* the default with filters: stacks by bytes allocated */
    AN_VIEW_LEAKS,
    AN_VIEW_PEAK,
    AN_VIEW_TEMPORARY,
    AN_VIEW_HISTOGRAM,
    AN_VIEW_TIMELINE,
    AN_VIEW_TREE,
    AN_VIEW_MPROF,
} an_view_kind_t;

typedef struct an_view_opts {
    an_view_kind_t kind;
    int json;
    an_filter_t filter;
    an_suppress_t sup;        /* --leaks: the rules in force */
    int bottom_up;            /* --tree --bottom-up */
    an_key_t sort;            /* --tree --sort KEY */
    double threshold;         /* --tree: prune subtrees below this % of the total */
    int has_stack;            /* --histogram --stack ID */
    uint64_t stack_id;
    unsigned width;           /* terminal columns for bars and charts */
} an_view_opts_t;

/* The ranked stack lists: --leaks, --peak, --temporary and the filtered
 * default (AN_VIEW_STACKS).  Return 0, PF_ENOMEM. */
int an_view_stacks(an_report_t *r, an_view_opts_t *o, FILE *out);
/* --histogram [--stack ID]; returns 1 when the stack id does not exist. */
int an_view_histogram(an_report_t *r, an_view_opts_t *o, FILE *out);
/* --timeline */
int an_view_timeline(an_report_t *r, an_view_opts_t *o, FILE *out);
/* --tree [--bottom-up] */
int an_view_tree(an_report_t *r, an_view_opts_t *o, FILE *out);

#endif
