/* pf_read_finish.c - the reader's last step, after the final record:
 * sort stacks by id and counters by (stack id, size_lo), give each stack
 * its slice of counters, add an empty stack 0 when counters name the
 * "unknown stack", and decide whether the profile is final.
 *
 * Sorting makes every later walk deterministic whatever order the writer
 * used.  Stack ids are unique (the reader refuses duplicates), and so are
 * (stack id, size_lo) keys, so the orders are total.
 */
#include <stdio.h>
#include <stdlib.h>

#include "format/pf_read_int.h"

static int pf_read_cmp_stack(const void *a, const void *b)
{
    const pf_stack_t *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

static int pf_read_cmp_counter(const void *a, const void *b)
{
    const pf_counter_t *x = a, *y = b;
    if (x->stack_id != y->stack_id)
        return x->stack_id < y->stack_id ? -1 : 1;
    return x->size_lo < y->size_lo ? -1 : x->size_lo > y->size_lo;
}

/* Append the empty stack 0 unless a STACKS record defined one. */
static int pf_read_add_stack0(pf_parse_t *ps)
{
    pf_profile_t *p = ps->prof;
    uint32_t idx;
    if (!ps->uses_stack0 || pf_map_get(&ps->stack_ids, 0, 0, &idx))
        return PF_OK;
    pf_stack_t *st = pf_read_grow(p->stacks, &ps->cap_stacks, p->n_stacks + 1, sizeof *st);
    if (!st)
        return PF_NOMEM(ps);
    p->stacks = st;
    pf_stack_t *s = &st[p->n_stacks++];
    s->id = 0;
    s->flags = 0;
    s->leaf = 0;
    s->depth = 0;
    s->first_counter = 0;
    s->n_counters = 0;
    return PF_OK;
}

int pf_read_finish(pf_parse_t *ps)
{
    pf_profile_t *p = ps->prof;
    ps->rec_no = 0;
    int rc = pf_read_add_stack0(ps);
    if (rc)
        return rc;
    if (!p->has_totals && !p->truncated) {
        p->truncated = 1;
        snprintf(p->truncated_why, sizeof p->truncated_why,
                 "the file ends after %llu records without a TOTALS record",
                 (unsigned long long)p->records);
    }
    if (p->n_stacks)
        qsort(p->stacks, p->n_stacks, sizeof *p->stacks, pf_read_cmp_stack);
    if (p->n_counters)
        qsort(p->counters, p->n_counters, sizeof *p->counters, pf_read_cmp_counter);
    /* Both sorted by stack id and every counter's stack exists: merge. */
    size_t ci = 0;
    for (size_t si = 0; si < p->n_stacks; si++) {
        pf_stack_t *s = &p->stacks[si];
        while (ci < p->n_counters && p->counters[ci].stack_id < s->id)
            ci++;
        s->first_counter = ci;
        while (ci < p->n_counters && p->counters[ci].stack_id == s->id)
            ci++;
        s->n_counters = ci - s->first_counter;
    }
    p->final = p->has_end && !p->truncated;
    return PF_OK;
}

const pf_stack_t *pf_reader_find_stack(const pf_profile_t *p, uint64_t id)
{
    size_t lo = 0, hi = p->n_stacks;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (p->stacks[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < p->n_stacks && p->stacks[lo].id == id ? &p->stacks[lo] : NULL;
}
