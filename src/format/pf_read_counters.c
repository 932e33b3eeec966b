/* pf_read_counters.c - COUNTERS and SAMPLES records.
 *
 * COUNTERS entries are cumulative; a later entry for the same
 * (stack_id, size_lo) replaces the earlier one (docs/FORMAT.md).  An entry
 * must name a stack defined by an earlier STACKS record, or stack 0
 * ("unknown stack").  Counter values are taken as written: a snapshot
 * taken while other threads update their tables may show more frees than
 * allocations, and the analyser clamps live figures at zero.
 */
#include "format/pf_read_int.h"

/* Decode one COUNTERS entry's fields after stack_id into *e. */
static int pf_read_counter_fields(pf_cur_t *c, pf_counter_t *e)
{
    int rc;
    if ((rc = pf_cur_u(c, "size_lo", &e->size_lo)) || (rc = pf_cur_u(c, "size_hi", &e->size_hi)) ||
        (rc = pf_cur_u(c, "allocations", &e->allocations)) ||
        (rc = pf_cur_u(c, "bytes_allocated", &e->bytes_allocated)) ||
        (rc = pf_cur_u(c, "frees", &e->frees)) ||
        (rc = pf_cur_u(c, "bytes_freed", &e->bytes_freed)) ||
        (rc = pf_cur_u(c, "temporary", &e->temporary)) ||
        (rc = pf_cur_u(c, "peak_blocks", &e->peak_blocks)) ||
        (rc = pf_cur_u(c, "peak_bytes", &e->peak_bytes)))
        return rc;
    return PF_OK;
}

int pf_read_counters(pf_cur_t *c)
{
    pf_parse_t *ps = c->ps;
    pf_profile_t *p = ps->prof;
    uint64_t t, count;
    int rc;
    if ((rc = pf_cur_u(c, "t", &t)) || (rc = pf_cur_count(c, "count", 10, &count)))
        return rc;
    pf_counter_t *cs = pf_read_grow(p->counters, &ps->cap_counters, p->n_counters + count,
                                    sizeof *cs);
    if (!cs)
        return PF_NOMEM(ps);
    p->counters = cs;
    for (uint64_t i = 0; i < count; i++) {
        pf_counter_t e = {0};
        uint32_t idx;
        e.t = t;
        if ((rc = pf_cur_u(c, "stack_id", &e.stack_id)) || (rc = pf_read_counter_fields(c, &e)))
            return rc;
        if (e.stack_id == 0)
            ps->uses_stack0 = 1;
        else if (!pf_map_get(&ps->stack_ids, e.stack_id, 0, &idx))
            return PF_CORRUPT(ps, "entry %llu names stack %llu, which no earlier STACKS record defines",
                              (unsigned long long)i, (unsigned long long)e.stack_id);
        if (e.size_lo > e.size_hi)
            return PF_CORRUPT(ps, "entry %llu (stack %llu) has size_lo %llu above size_hi %llu",
                              (unsigned long long)i, (unsigned long long)e.stack_id,
                              (unsigned long long)e.size_lo, (unsigned long long)e.size_hi);
        if (pf_map_get(&ps->counter_keys, e.stack_id, e.size_lo, &idx)) {
            cs[idx] = e;
            p->counters_replaced++;
            continue;
        }
        if (p->n_counters >= UINT32_MAX)
            return PF_CORRUPT(ps, "too many counter entries");
        if (pf_map_put(&ps->counter_keys, e.stack_id, e.size_lo, (uint32_t)p->n_counters))
            return PF_NOMEM(ps);
        cs[p->n_counters++] = e;
    }
    return PF_OK;
}

int pf_read_samples(pf_cur_t *c)
{
    pf_parse_t *ps = c->ps;
    pf_profile_t *p = ps->prof;
    uint64_t count;
    int rc;
    if ((rc = pf_cur_count(c, "count", 5, &count)))
        return rc;
    pf_sample_t *ss = pf_read_grow(p->samples, &ps->cap_samples, p->n_samples + count, sizeof *ss);
    if (!ss)
        return PF_NOMEM(ps);
    p->samples = ss;
    for (uint64_t i = 0; i < count; i++) {
        pf_sample_t *s = &ss[p->n_samples];
        if ((rc = pf_cur_u(c, "t", &s->t)) || (rc = pf_cur_u(c, "heap", &s->heap)) ||
            (rc = pf_cur_u(c, "rss", &s->rss)) || (rc = pf_cur_u(c, "allocations", &s->allocations)) ||
            (rc = pf_cur_u(c, "frees", &s->frees)))
            return rc;
        p->n_samples++;
    }
    return PF_OK;
}
