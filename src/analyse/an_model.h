/* an_model.h - figures derived from a profile: per-stack sums over its
 * COUNTERS entries, the process summary, the list of warnings every report
 * shows, and deterministic orderings of the stacks.
 *
 * Everything here is plain arithmetic on a pf_profile_t (no symbols, no
 * output), so unit tests can check it against hand-computed values.
 */
#ifndef AN_MODEL_H
#define AN_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "format/pf_reader.h"

/* Sums over one stack's COUNTERS entries (all sizes).  Live figures are
 * clamped at zero per entry (a mid-update snapshot can show more frees). */
typedef struct an_stats {
    size_t stack;          /* index into prof->stacks */
    uint64_t id;           /* the stack id */
    uint64_t allocations;
    uint64_t frees;
    uint64_t bytes_allocated;
    uint64_t bytes_freed;
    uint64_t temporary;
    uint64_t peak_blocks;
    uint64_t peak_bytes;
    uint64_t leaked_bytes;       /* live bytes: leaked when the profile is final */
    uint64_t leaked_allocations; /* live blocks */
} an_stats_t;

/* Process-wide figures: TOTALS when the file has it, else sums of the
 * stacks (a profile truncated before TOTALS). */
typedef struct an_summary {
    int from_totals;
    uint64_t allocations;
    uint64_t frees;
    uint64_t bytes_allocated;
    uint64_t bytes_freed;
    uint64_t temporary;
    uint64_t peak_bytes;
    uint64_t peak_t;
    uint64_t peak_error;
    uint64_t leaked_bytes;
    uint64_t leaked_allocations;
    uint64_t run_time_ns;
    uint64_t threads;
    uint64_t unknown_frees;
    uint64_t lost_allocations;
    uint64_t untracked_allocations; /* not marked live: their frees are unknown */
    uint64_t shadow_overwrites;
    uint64_t rss_peak;
} an_summary_t;

/* Keys the reports sort stacks by, always descending, ties by stack id. */
typedef enum an_key {
    AN_KEY_ALLOCATIONS,
    AN_KEY_BYTES,
    AN_KEY_LEAKED,
    AN_KEY_PEAK,
    AN_KEY_TEMPORARY,
} an_key_t;

typedef struct an_model {
    const pf_profile_t *prof;
    an_stats_t *stats;     /* one per prof->stacks, same order (by id) */
    size_t n_stats;
    an_summary_t sum;
    uint64_t overfreed;    /* counter entries with more frees than allocations */
    char **warnings;
    size_t n_warnings, cap_warnings;
} an_model_t;

/* Compute stats, summary and the profile's warnings.  The profile must
 * outlive the model.  Returns 0, or PF_ENOMEM (model then empty but safe
 * to pass to an_model_free). */
int an_model_build(an_model_t *m, const pf_profile_t *p);

/* Append a printf-formatted warning.  Returns 0 or PF_ENOMEM. */
int an_model_warn(an_model_t *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The figure a key sorts by. */
uint64_t an_model_key(const an_stats_t *s, an_key_t key);

/* Fill order[n_stats] with indexes into m->stats, sorted by `key`
 * descending and then stack id ascending.  Returns 0 or PF_ENOMEM. */
int an_model_order(const an_model_t *m, an_key_t key, size_t *order);

void an_model_free(an_model_t *m);

/* Saturating arithmetic for untrusted figures. */
static inline uint64_t an_add(uint64_t a, uint64_t b)
{
    return a + b < a ? UINT64_MAX : a + b;
}
static inline uint64_t an_sub(uint64_t a, uint64_t b)
{
    return a > b ? a - b : 0;
}

#endif
