/* an_model.c - per-stack sums, the summary and stack orderings of
 * an_model.h.
 *
 * A stack's figures are the sums of its COUNTERS entries over all sizes.
 * The summary prefers TOTALS (it also counts allocations that have no
 * stack); without it the stack sums stand in.  Sorting copies (key, id,
 * index) triples so that the comparison needs no global state and ties are
 * broken by the unique stack id: the order is total and reproducible.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "analyse/an_model.h"
#include "analyse/an_warnings.h"
#include "common/ut_grow.h"

/* Sum the counters of stack `si` into *st. */
static void an_model_stack(an_model_t *m, size_t si, an_stats_t *st)
{
    const pf_profile_t *p = m->prof;
    const pf_stack_t *s = &p->stacks[si];
    *st = (an_stats_t){.stack = si, .id = s->id};
    for (size_t i = 0; i < s->n_counters; i++) {
        const pf_counter_t *c = &p->counters[s->first_counter + i];
        st->allocations = an_add(st->allocations, c->allocations);
        st->frees = an_add(st->frees, c->frees);
        st->bytes_allocated = an_add(st->bytes_allocated, c->bytes_allocated);
        st->bytes_freed = an_add(st->bytes_freed, c->bytes_freed);
        st->temporary = an_add(st->temporary, c->temporary);
        st->peak_blocks = an_add(st->peak_blocks, c->peak_blocks);
        st->peak_bytes = an_add(st->peak_bytes, c->peak_bytes);
        st->leaked_allocations = an_add(st->leaked_allocations, an_sub(c->allocations, c->frees));
        st->leaked_bytes = an_add(st->leaked_bytes, an_sub(c->bytes_allocated, c->bytes_freed));
        if (c->frees > c->allocations || c->bytes_freed > c->bytes_allocated)
            m->overfreed++;
    }
}

/* Run time: the last snapshot's time (the exit time when final). */
static uint64_t an_model_run_time(const pf_profile_t *p)
{
    uint64_t t = 0;
    if (p->has_totals)
        t = p->totals.t;
    if (p->has_end && p->end_t > t)
        t = p->end_t;
    for (size_t i = 0; i < p->n_samples; i++)
        if (p->samples[i].t > t)
            t = p->samples[i].t;
    return t;
}

static void an_model_summary(an_model_t *m)
{
    const pf_profile_t *p = m->prof;
    an_summary_t *s = &m->sum;
    if (p->has_totals) {
        const pf_totals_t *t = &p->totals;
        s->from_totals = 1;
        s->allocations = t->allocations;
        s->frees = t->frees;
        s->bytes_allocated = t->bytes_allocated;
        s->bytes_freed = t->bytes_freed;
        s->temporary = t->temporary;
        s->peak_bytes = t->peak_bytes;
        s->peak_t = t->peak_t;
        s->peak_error = t->peak_error;
        s->threads = t->threads;
        s->unknown_frees = t->unknown_frees;
        s->lost_allocations = t->lost_allocations;
        s->untracked_allocations = t->untracked;
        s->shadow_overwrites = t->shadow_overwrites;
        s->rss_peak = t->rss_peak;
        s->leaked_allocations = an_sub(t->allocations, t->frees);
        s->leaked_bytes = an_sub(t->bytes_allocated, t->bytes_freed);
    } else {
        for (size_t i = 0; i < m->n_stats; i++) {
            const an_stats_t *st = &m->stats[i];
            s->allocations = an_add(s->allocations, st->allocations);
            s->frees = an_add(s->frees, st->frees);
            s->bytes_allocated = an_add(s->bytes_allocated, st->bytes_allocated);
            s->bytes_freed = an_add(s->bytes_freed, st->bytes_freed);
            s->temporary = an_add(s->temporary, st->temporary);
            s->peak_bytes = an_add(s->peak_bytes, st->peak_bytes);
            s->leaked_allocations = an_add(s->leaked_allocations, st->leaked_allocations);
            s->leaked_bytes = an_add(s->leaked_bytes, st->leaked_bytes);
        }
        for (size_t i = 0; i < p->n_samples; i++)
            if (p->samples[i].rss > s->rss_peak)
                s->rss_peak = p->samples[i].rss;
    }
    s->run_time_ns = an_model_run_time(p);
}

int an_model_build(an_model_t *m, const pf_profile_t *p)
{
    *m = (an_model_t){.prof = p};
    if (p->n_stacks) {
        m->stats = calloc(p->n_stacks, sizeof *m->stats);
        if (!m->stats)
            return PF_ENOMEM;
    }
    m->n_stats = p->n_stacks;
    for (size_t i = 0; i < p->n_stacks; i++)
        an_model_stack(m, i, &m->stats[i]);
    an_model_summary(m);
    return an_warnings_add(m);
}

int an_model_warn(an_model_t *m, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return 0;
    char *s = malloc((size_t)n + 1);
    if (!s)
        return PF_ENOMEM;
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    if (ut_grow((void **)&m->warnings, &m->cap_warnings, m->n_warnings + 1, sizeof *m->warnings)) {
        free(s);
        return PF_ENOMEM;
    }
    m->warnings[m->n_warnings++] = s;
    return 0;
}

uint64_t an_model_key(const an_stats_t *s, an_key_t key)
{
    switch (key) {
    case AN_KEY_ALLOCATIONS: return s->allocations;
    case AN_KEY_BYTES: return s->bytes_allocated;
    case AN_KEY_LEAKED: return s->leaked_bytes;
    case AN_KEY_PEAK: return s->peak_bytes;
    case AN_KEY_TEMPORARY: return s->temporary;
    }
    return 0;
}

typedef struct an_sortent {
    uint64_t key;
    uint64_t id;
    size_t idx;
} an_sortent_t;

static int an_model_cmp(const void *a, const void *b)
{
    const an_sortent_t *x = a, *y = b;
    if (x->key != y->key)
        return x->key > y->key ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

int an_model_order(const an_model_t *m, an_key_t key, size_t *order)
{
    if (!m->n_stats)
        return 0;
    an_sortent_t *e = malloc(m->n_stats * sizeof *e);
    if (!e)
        return PF_ENOMEM;
    for (size_t i = 0; i < m->n_stats; i++)
        e[i] = (an_sortent_t){an_model_key(&m->stats[i], key), m->stats[i].id, i};
    qsort(e, m->n_stats, sizeof *e, an_model_cmp);
    for (size_t i = 0; i < m->n_stats; i++)
        order[i] = e[i].idx;
    free(e);
    return 0;
}

void an_model_free(an_model_t *m)
{
    free(m->stats);
    for (size_t i = 0; i < m->n_warnings; i++)
        free(m->warnings[i]);
    free(m->warnings);
    *m = (an_model_t){0};
}
