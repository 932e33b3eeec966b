/* an_report_json.c - `heapscope report --json`: one JSON object, a public
 * interface (documented in docs/REPORT-JSON.md; fields are only added):
 *   { "summary": {...}, "stacks": [ {..., "sizes": [...], "frames": [...]} ],
 *     "timeline": [ {"t_ns", "heap", "rss"} ], "modules": [...] }
 * Stacks: all of them, by bytes allocated descending, then id. */
#include <stdlib.h>
#include <string.h>

#include "analyse/an_json.h"
#include "analyse/an_report.h"

static const char *base_name(const char *p)
{
    const char *s = p ? strrchr(p, '/') : NULL;
    return s ? s + 1 : p;
}

static void json_summary(an_report_t *r, an_json_t *j)
{
    const an_summary_t *s = &r->model.sum;
    const pf_profile_t *p = r->prof;
    an_json_key(j, "summary");
    an_json_object_begin(j);
    an_json_kv_str(j, "program", p->info.argc ? base_name(p->info.argv[0]) : base_name(p->info.exe));
    an_json_kv_str(j, "exe", p->info.exe);
    an_json_kv_u64(j, "pid", p->info.pid);
    an_json_kv_u64(j, "ppid", p->info.ppid);
    an_json_kv_u64(j, "allocations", s->allocations);
    an_json_kv_u64(j, "frees", s->frees);
    an_json_kv_u64(j, "bytes_allocated", s->bytes_allocated);
    an_json_kv_u64(j, "bytes_freed", s->bytes_freed);
    an_json_kv_u64(j, "peak_bytes", s->peak_bytes);
    an_json_kv_u64(j, "peak_time_ns", s->peak_t);
    an_json_kv_u64(j, "peak_error", s->peak_error);
    an_json_kv_u64(j, "leaked_bytes", s->leaked_bytes);
    an_json_kv_u64(j, "leaked_allocations", s->leaked_allocations);
    an_json_kv_u64(j, "temporary_allocations", s->temporary);
    an_json_kv_u64(j, "run_time_ns", s->run_time_ns);
    an_json_kv_u64(j, "threads", s->threads);
    an_json_kv_u64(j, "unknown_frees", s->unknown_frees);
    an_json_kv_u64(j, "lost_allocations", s->lost_allocations);
    an_json_kv_u64(j, "untracked_allocations", s->untracked_allocations);
    an_json_kv_u64(j, "shadow_overwrites", s->shadow_overwrites);
    an_json_kv_u64(j, "rss_peak", s->rss_peak);
    an_json_kv_u64(j, "stacks", r->model.n_stats);
    an_json_kv_str(j, "unwinder", an_report_unwinder(p->info.unwinder));
    an_json_kv_bool(j, "final", p->final);
    an_json_kv_bool(j, "truncated", p->truncated);
    an_json_key(j, "warnings");
    an_json_array_begin(j);
    for (size_t i = 0; i < r->model.n_warnings; i++)
        an_json_str(j, r->model.warnings[i]);
    an_json_array_end(j);
    an_json_object_end(j);
}

static int json_stack(an_report_t *r, an_json_t *j, const an_stats_t *st)
{
    const pf_profile_t *p = r->prof;
    const pf_stack_t *ps = &p->stacks[st->stack];
    an_json_object_begin(j);
    an_json_kv_u64(j, "id", st->id);
    an_json_kv_u64(j, "allocations", st->allocations);
    an_json_kv_u64(j, "frees", st->frees);
    an_json_kv_u64(j, "bytes_allocated", st->bytes_allocated);
    an_json_kv_u64(j, "bytes_freed", st->bytes_freed);
    an_json_kv_u64(j, "peak_bytes", st->peak_bytes);
    an_json_kv_u64(j, "peak_allocations", st->peak_blocks);
    an_json_kv_u64(j, "leaked_bytes", st->leaked_bytes);
    an_json_kv_u64(j, "leaked_allocations", st->leaked_allocations);
    an_json_kv_u64(j, "temporary_allocations", st->temporary);
    an_json_kv_bool(j, "truncated", (ps->flags & 1u) != 0);
    an_json_key(j, "sizes");
    an_json_array_begin(j);
    for (size_t i = 0; i < ps->n_counters; i++) {
        const pf_counter_t *c = &p->counters[ps->first_counter + i];
        an_json_object_begin(j);
        an_json_kv_u64(j, "size_lo", c->size_lo);
        an_json_kv_u64(j, "size_hi", c->size_hi);
        an_json_kv_u64(j, "allocations", c->allocations);
        an_json_kv_u64(j, "bytes", c->bytes_allocated);
        an_json_object_end(j);
    }
    an_json_array_end(j);
    int rc = an_frames_get(&r->frames, p, r->syms, ps);
    an_json_key(j, "frames");
    an_json_array_begin(j);
    for (size_t i = 0; !rc && i < r->frames.n; i++) {
        const an_frame_t *f = &r->frames.v[i];
        an_json_object_begin(j);
        an_json_kv_str(j, "function", f->function);
        an_json_key(j, "file");
        if (f->file)
            an_json_str(j, f->file);
        else
            an_json_null(j);
        an_json_kv_u64(j, "line", f->line);
        an_json_key(j, "module");
        if (f->module >= 0)
            an_json_str(j, p->modules[f->module].path);
        else
            an_json_null(j);
        an_json_key(j, "address");
        an_json_hex(j, f->address);
        an_json_kv_bool(j, "inlined", f->inlined);
        an_json_object_end(j);
    }
    an_json_array_end(j);
    an_json_object_end(j);
    return rc;
}

int an_report_json(an_report_t *r, FILE *out)
{
    size_t n = r->model.n_stats, *order;
    int rc = an_report_prepare(r, n, &order);
    if (rc)
        return rc;
    an_json_t j;
    an_json_init(&j, out);
    an_json_object_begin(&j);
    json_summary(r, &j);
    an_json_key(&j, "stacks");
    an_json_array_begin(&j);
    for (size_t i = 0; i < n && !rc; i++)
        rc = json_stack(r, &j, &r->model.stats[order[i]]);
    an_json_array_end(&j);
    an_json_key(&j, "timeline");
    an_json_array_begin(&j);
    for (size_t i = 0; i < r->prof->n_samples; i++) {
        const pf_sample_t *s = &r->prof->samples[i];
        an_json_object_begin(&j);
        an_json_kv_u64(&j, "t_ns", s->t);
        an_json_kv_u64(&j, "heap", s->heap);
        an_json_kv_u64(&j, "rss", s->rss);
        an_json_kv_u64(&j, "allocations", s->allocations);
        an_json_kv_u64(&j, "frees", s->frees);
        an_json_object_end(&j);
    }
    an_json_array_end(&j);
    an_json_key(&j, "modules");
    an_json_array_begin(&j);
    for (size_t i = 0; i < r->prof->n_modules; i++) {
        const pf_module_t *m = &r->prof->modules[i];
        an_json_object_begin(&j);
        an_json_kv_str(&j, "path", m->path);
        an_json_key(&j, "build_id");
        an_json_hexbytes(&j, m->build_id, m->build_id_len);
        an_json_key(&j, "start");
        an_json_hex(&j, m->start);
        an_json_kv_bool(&j, "unloaded", m->unloaded);
        an_json_key(&j, "symbols");
        const char *f = an_symbols_file(r->syms, (int32_t)i);
        if (f)
            an_json_str(&j, f);
        else
            an_json_null(&j);
        an_json_object_end(&j);
    }
    an_json_array_end(&j);
    an_json_object_end(&j);
    fputc('\n', out);
    free(order);
    return rc;
}
