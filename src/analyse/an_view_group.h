/* an_view_group.h - the rows of a view: stacks that pass the filters,
 * merged by --merge, with their figures summed.  Views rank the rows by
 * their own figure and print each with the frames of its first stack. */
#ifndef AN_VIEW_GROUP_H
#define AN_VIEW_GROUP_H

#include <stddef.h>

#include "analyse/an_json.h"
#include "analyse/an_view.h"

typedef struct an_group {
    an_stats_t st;          /* sums; st.stack and st.id are the first member's */
    size_t first;           /* index into groups.members */
    size_t n_members;       /* stacks merged into this row */
} an_group_t;

typedef struct an_groups {
    an_group_t *v;
    size_t n;
    size_t *members;        /* indexes into model.stats, grouped by row */
    /* stacks with leaked bytes that a suppression removed (leaks only) */
    uint64_t suppressed_stacks, suppressed_bytes, suppressed_blocks;
} an_groups_t;

/* Build the rows of the profile in r for the filters of o (function,
 * module, merge; min/top are the views' business).  With `suppress`, live
 * stacks matching a rule of o->sup are left out and counted.  Returns 0 or
 * PF_ENOMEM; an_view_groups_free() in either case. */
int an_view_groups_build(an_report_t *r, an_view_opts_t *o, int suppress, an_groups_t *g);

/* Row indexes of g sorted by `key` descending (ties by stack id), leaving
 * out rows whose key figure is 0, whose byte figure is below
 * o->filter.min_bytes or whose count figure is below min_count.
 * Writes *n rows into a new array *order (caller frees).  Returns 0 or
 * PF_ENOMEM. */
int an_view_groups_rank(const an_groups_t *g, const an_view_opts_t *o, an_key_t key,
                        size_t **order, size_t *n);

/* The (bytes, count) figures a key filters on. */
void an_view_key_figures(const an_stats_t *s, an_key_t key, uint64_t *bytes, uint64_t *count);

/* Print the frames of row g (its first stack) as text, indented, at most
 * `max` frames: without line numbers under --merge function, only up to
 * the allocation site under --merge caller, names folded with
 * --fold-templates. */
int an_view_frames_text(an_report_t *r, const an_view_opts_t *o, const an_group_t *g, FILE *out,
                        size_t max);
/* The same frames as a JSON array value. */
int an_view_frames_json(an_report_t *r, const an_view_opts_t *o, const an_group_t *g,
                        an_json_t *j);

void an_view_groups_free(an_groups_t *g);

#endif
