/* an_diff_sites.h - the per-stack figures of two profiles, keyed by their
 * symbolised frames and matched (internal to an_diff*.c). */
#ifndef AN_DIFF_SITES_H
#define AN_DIFF_SITES_H

#include <stddef.h>
#include <stdint.h>

#include "analyse/an_export_stacks.h"
#include "analyse/an_report.h"

enum { DF_ALLOCS, DF_BYTES, DF_LEAKED, DF_PEAK, DF_NFIG };

/* A stack's key is its frames, innermost first, each a string
 * "function\x1f" "file\x1f" "line\x1e" interned in df_sites_t.frames (one
 * copy per distinct frame, shared by every stack of both profiles). */
typedef struct df_site {
    const char **frames;
    size_t nframes;
    int side;         /* while collecting: 0 = A, 1 = B */
    int in[2];        /* seen in A, in B */
    uint64_t fig[2][DF_NFIG];
} df_site_t;

typedef struct df_sites {
    df_site_t *v;
    size_t n, cap;
    an_xintern_t frames; /* every distinct frame once */
} df_sites_t;

/* Append one entry per stack of the loaded profile r, as side 0 or 1.
 * Returns PF_OK or PF_ENOMEM. */
int df_collect(df_sites_t *s, an_report_t *r, int side);

/* Merge entries with the same key (summing each side), leaving one site
 * per distinct stack with in[] set.  Returns PF_OK or PF_ENOMEM. */
int df_match(df_sites_t *s);

/* Orders keys as the concatenations of their frames would compare with
 * strcmp (so the output does not depend on the order frames were met). */
int df_key_cmp(const df_site_t *a, const df_site_t *b);

/* Drop one entry's key (the interned frames stay with s). */
void df_site_drop(df_site_t *d);

void df_free(df_sites_t *s);

#endif
