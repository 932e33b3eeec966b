/* pf_read_info.c - decoders of the process-level records: INFO, TOTALS,
 * END and MESSAGE (docs/FORMAT.md gives the field tables).
 *
 * INFO must be the first record and appear once; TOTALS and END at most
 * once.  Payload bytes after the known fields are ignored (a newer minor
 * version appends fields).
 */
#include <stdlib.h>

#include "format/pf_read_int.h"

int pf_read_info(pf_cur_t *c)
{
    pf_parse_t *ps = c->ps;
    pf_info_t *in = &ps->prof->info;
    int rc;
    if (ps->seen_info)
        return PF_CORRUPT(ps, "a second INFO record");
    ps->seen_info = 1;
    if ((rc = pf_cur_u(c, "pid", &in->pid)) || (rc = pf_cur_u(c, "ppid", &in->ppid)) ||
        (rc = pf_cur_u(c, "start_real_ns", &in->start_real_ns)) ||
        (rc = pf_cur_u(c, "start_mono_ns", &in->start_mono_ns)) ||
        (rc = pf_cur_u(c, "flags", &in->flags)) || (rc = pf_cur_str(c, "exe", &in->exe)))
        return rc;
    uint64_t argc;
    if ((rc = pf_cur_count(c, "argc", 1, &argc)))
        return rc;
    in->argv = calloc(argc ? argc : 1, sizeof *in->argv);
    if (!in->argv)
        return PF_NOMEM(ps);
    for (uint64_t i = 0; i < argc; i++) {
        if ((rc = pf_cur_str(c, "argv", &in->argv[i])))
            return rc;
        in->argc = (uint32_t)(i + 1);
    }
    if ((rc = pf_cur_u(c, "unwinder", &in->unwinder)) ||
        (rc = pf_cur_u(c, "max_depth", &in->max_depth)) ||
        (rc = pf_cur_u(c, "interval_ms", &in->interval_ms)) ||
        (rc = pf_cur_u(c, "sample_ms", &in->sample_ms)) ||
        (rc = pf_cur_u(c, "peak_slack", &in->peak_slack)) ||
        (rc = pf_cur_str(c, "allocator", &in->allocator)))
        return rc;
    return PF_OK;
}

int pf_read_totals(pf_cur_t *c)
{
    pf_profile_t *p = c->ps->prof;
    pf_totals_t *t = &p->totals;
    int rc;
    if (p->has_totals)
        return PF_CORRUPT(c->ps, "a second TOTALS record");
    if ((rc = pf_cur_u(c, "t", &t->t)) || (rc = pf_cur_u(c, "flags", &t->flags)) ||
        (rc = pf_cur_u(c, "allocations", &t->allocations)) ||
        (rc = pf_cur_u(c, "frees", &t->frees)) ||
        (rc = pf_cur_u(c, "bytes_allocated", &t->bytes_allocated)) ||
        (rc = pf_cur_u(c, "bytes_freed", &t->bytes_freed)) ||
        (rc = pf_cur_u(c, "temporary", &t->temporary)) ||
        (rc = pf_cur_u(c, "peak_bytes", &t->peak_bytes)) ||
        (rc = pf_cur_u(c, "peak_t", &t->peak_t)) ||
        (rc = pf_cur_u(c, "peak_error", &t->peak_error)) ||
        (rc = pf_cur_u(c, "threads", &t->threads)) ||
        (rc = pf_cur_u(c, "unknown_frees", &t->unknown_frees)) ||
        (rc = pf_cur_u(c, "lost_allocations", &t->lost_allocations)) ||
        (rc = pf_cur_u(c, "shadow_overwrites", &t->shadow_overwrites)) ||
        (rc = pf_cur_u(c, "stacks", &t->stacks)) || (rc = pf_cur_u(c, "rss_peak", &t->rss_peak)))
        return rc;
    /* appended later: optional */
    if (c->p < c->end && (rc = pf_cur_u(c, "untracked", &t->untracked)))
        return rc;
    p->has_totals = 1;
    return PF_OK;
}

int pf_read_end(pf_cur_t *c)
{
    pf_profile_t *p = c->ps->prof;
    int rc;
    if (p->has_end)
        return PF_CORRUPT(c->ps, "a second END record");
    if ((rc = pf_cur_u(c, "t", &p->end_t)) || (rc = pf_cur_u(c, "reason", &p->end_reason)))
        return rc;
    p->has_end = 1;
    return PF_OK;
}

int pf_read_message(pf_cur_t *c)
{
    pf_parse_t *ps = c->ps;
    pf_profile_t *p = ps->prof;
    char *text;
    int rc = pf_cur_str(c, "text", &text);
    if (rc)
        return rc;
    char **m = pf_read_grow(p->messages, &ps->cap_messages, p->n_messages + 1, sizeof *m);
    if (!m) {
        free(text);
        return PF_NOMEM(ps);
    }
    p->messages = m;
    p->messages[p->n_messages++] = text;
    return PF_OK;
}
