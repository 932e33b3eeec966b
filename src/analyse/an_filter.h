/* an_filter.h - the options every view of `heapscope report` shares:
 * which stacks to keep (function or module substring, minimum bytes or
 * count, top N), how to name functions (C++ template arguments folded to
 * <...>) and how to merge stacks (same function sequence, or same
 * allocation site).  The matching itself is plain string work, so unit
 * tests and every view use the same rules. */
#ifndef AN_FILTER_H
#define AN_FILTER_H

#include <stddef.h>
#include <stdint.h>

#include "analyse/an_frames.h"

typedef enum an_merge {
    AN_MERGE_NONE,     /* one row per stack */
    AN_MERGE_FUNCTION, /* stacks with the same function sequence (lines ignored) */
    AN_MERGE_CALLER,   /* stacks with the same allocation site (the function
                          that called the allocator, operator new skipped) */
} an_merge_t;

typedef struct an_filter {
    const char *function;  /* a frame's function contains this; NULL: any */
    const char *module;    /* a frame's module file name contains this; NULL: any */
    uint64_t min_bytes;    /* the view's byte figure of a row is at least this */
    uint64_t min_count;    /* the view's count figure of a row is at least this */
    size_t top;            /* rows shown */
    int fold_templates;    /* "f<int, std::vector<int> >" -> "f<...>" */
    an_merge_t merge;
} an_filter_t;

/* Copy `name` into out[outsz] with every outermost template argument list
 * folded to "<...>" ("operator<", "operator<<", "operator->" are kept).
 * Always NUL-terminates (truncating).  Returns out. */
char *an_filter_fold(const char *name, char *out, size_t outsz);

/* 1 when the frames pass the function and module filters of `f`.  The
 * function filter matches the raw name and, with fold_templates, the
 * folded one. */
int an_filter_frames(const an_filter_t *f, const pf_profile_t *p, const an_frames_t *fr);

/* Index of the allocation site in fr: the first frame whose function is
 * not operator new / new[] (0 when all are).  fr->n must be > 0. */
size_t an_filter_site(const an_frames_t *fr);

/* The module file name of index m ("?" when none). */
const char *an_filter_module_name(const pf_profile_t *p, int32_t m);

/* 1 when any filter or merge is set (the default report is then replaced
 * by a stack list). */
int an_filter_active(const an_filter_t *f);

#endif
