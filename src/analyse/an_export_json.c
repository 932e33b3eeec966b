/* an_export_json.c - the whole profile as one JSON object: information
 * about the run, the summary, the modules, every stack with its
 * symbolised frames, its sums and its counters per size range, the heap
 * samples over time and the warnings.  docs/EXPORTS.md lists the fields;
 * unlike `report --json` (a report, sorted and filtered), this is the
 * profile itself, in id order, with nothing left out.
 */
#include "analyse/an_export.h"

#include "analyse/an_json.h"

static void xj_info(an_json_t *j, const an_report_t *r)
{
    const pf_profile_t *p = r->prof;
    const pf_info_t *in = &p->info;
    an_json_key(j, "info");
    an_json_object_begin(j);
    an_json_kv_u64(j, "format_major", p->major);
    an_json_kv_u64(j, "format_minor", p->minor);
    an_json_kv_u64(j, "pid", in->pid);
    an_json_kv_u64(j, "ppid", in->ppid);
    an_json_kv_str(j, "exe", in->exe);
    an_json_key(j, "argv");
    an_json_array_begin(j);
    for (uint32_t i = 0; i < in->argc; i++)
        an_json_str(j, in->argv[i]);
    an_json_array_end(j);
    an_json_kv_u64(j, "start_real_ns", in->start_real_ns);
    an_json_kv_str(j, "unwinder", an_report_unwinder(in->unwinder));
    an_json_kv_u64(j, "max_depth", in->max_depth);
    an_json_kv_u64(j, "interval_ms", in->interval_ms);
    an_json_kv_u64(j, "sample_ms", in->sample_ms);
    an_json_kv_str(j, "allocator", in->allocator);
    an_json_kv_bool(j, "final", p->final);
    an_json_kv_bool(j, "truncated", p->truncated);
    an_json_object_end(j);
}

static void xj_summary(an_json_t *j, const an_summary_t *s)
{
    an_json_key(j, "totals");
    an_json_object_begin(j);
    an_json_kv_bool(j, "from_totals_record", s->from_totals);
    an_json_kv_u64(j, "allocations", s->allocations);
    an_json_kv_u64(j, "frees", s->frees);
    an_json_kv_u64(j, "bytes_allocated", s->bytes_allocated);
    an_json_kv_u64(j, "bytes_freed", s->bytes_freed);
    an_json_kv_u64(j, "temporary_allocations", s->temporary);
    an_json_kv_u64(j, "peak_bytes", s->peak_bytes);
    an_json_kv_u64(j, "peak_t_ns", s->peak_t);
    an_json_kv_u64(j, "peak_error_bytes", s->peak_error);
    an_json_kv_u64(j, "leaked_bytes", s->leaked_bytes);
    an_json_kv_u64(j, "leaked_allocations", s->leaked_allocations);
    an_json_kv_u64(j, "run_time_ns", s->run_time_ns);
    an_json_kv_u64(j, "threads", s->threads);
    an_json_kv_u64(j, "unknown_frees", s->unknown_frees);
    an_json_kv_u64(j, "lost_allocations", s->lost_allocations);
    an_json_kv_u64(j, "shadow_overwrites", s->shadow_overwrites);
    an_json_kv_u64(j, "rss_peak_bytes", s->rss_peak);
    an_json_object_end(j);
}

static void xj_modules(an_json_t *j, const pf_profile_t *p)
{
    an_json_key(j, "modules");
    an_json_array_begin(j);
    for (size_t i = 0; i < p->n_modules; i++) {
        const pf_module_t *m = &p->modules[i];
        an_json_object_begin(j);
        an_json_kv_u64(j, "index", i);
        an_json_kv_str(j, "path", m->path);
        an_json_key(j, "build_id");
        an_json_hexbytes(j, m->build_id, m->build_id_len);
        an_json_key(j, "start");
        an_json_hex(j, m->start);
        an_json_key(j, "end");
        an_json_hex(j, m->end);
        an_json_key(j, "load_bias");
        an_json_hex(j, m->load_bias);
        an_json_kv_u64(j, "t_load_ns", m->t_load);
        an_json_key(j, "t_unload_ns");
        if (m->unloaded)
            an_json_u64(j, m->t_unload);
        else
            an_json_null(j);
        an_json_object_end(j);
    }
    an_json_array_end(j);
}

/* One stack: sums, frames (innermost first) and counters per size. */
static int xj_stack(an_json_t *j, an_report_t *r, const an_stats_t *s)
{
    const pf_profile_t *p = r->prof;
    const pf_stack_t *st = &p->stacks[s->stack];
    int rc = an_frames_get(&r->frames, p, r->syms, st);
    if (rc)
        return rc;
    an_json_object_begin(j);
    an_json_kv_u64(j, "id", s->id);
    an_json_kv_u64(j, "allocations", s->allocations);
    an_json_kv_u64(j, "frees", s->frees);
    an_json_kv_u64(j, "bytes_allocated", s->bytes_allocated);
    an_json_kv_u64(j, "bytes_freed", s->bytes_freed);
    an_json_kv_u64(j, "temporary_allocations", s->temporary);
    an_json_kv_u64(j, "peak_bytes", s->peak_bytes);
    an_json_kv_u64(j, "leaked_bytes", s->leaked_bytes);
    an_json_kv_u64(j, "leaked_allocations", s->leaked_allocations);
    an_json_key(j, "frames");
    an_json_array_begin(j);
    for (size_t i = 0; i < r->frames.n; i++) {
        const an_frame_t *f = &r->frames.v[i];
        an_json_object_begin(j);
        an_json_kv_str(j, "function", f->function);
        an_json_kv_str(j, "file", f->file);
        an_json_kv_u64(j, "line", f->line);
        an_json_kv_bool(j, "inlined", f->inlined);
        an_json_key(j, "address");
        an_json_hex(j, f->address);
        an_json_key(j, "module");
        if (f->module >= 0)
            an_json_u64(j, (uint64_t)f->module);
        else
            an_json_null(j);
        an_json_object_end(j);
    }
    an_json_array_end(j);
    an_json_key(j, "sizes");
    an_json_array_begin(j);
    for (size_t i = 0; i < st->n_counters; i++) {
        const pf_counter_t *c = &p->counters[st->first_counter + i];
        an_json_object_begin(j);
        an_json_kv_u64(j, "size_lo", c->size_lo);
        an_json_kv_u64(j, "size_hi", c->size_hi);
        an_json_kv_u64(j, "allocations", c->allocations);
        an_json_kv_u64(j, "bytes_allocated", c->bytes_allocated);
        an_json_kv_u64(j, "frees", c->frees);
        an_json_kv_u64(j, "bytes_freed", c->bytes_freed);
        an_json_kv_u64(j, "temporary_allocations", c->temporary);
        an_json_kv_u64(j, "peak_blocks", c->peak_blocks);
        an_json_kv_u64(j, "peak_bytes", c->peak_bytes);
        an_json_object_end(j);
    }
    an_json_array_end(j);
    an_json_object_end(j);
    return PF_OK;
}

int an_export_json(an_report_t *r, FILE *out)
{
    const pf_profile_t *p = r->prof;
    an_json_t j;
    an_json_init(&j, out);
    an_json_object_begin(&j);
    an_json_kv_str(&j, "format", "heapscope-export");
    an_json_kv_u64(&j, "version", 1);
    xj_info(&j, r);
    xj_summary(&j, &r->model.sum);
    xj_modules(&j, p);
    an_json_key(&j, "stacks");
    an_json_array_begin(&j);
    int rc = PF_OK;
    for (size_t i = 0; i < r->model.n_stats && !rc; i++)
        rc = xj_stack(&j, r, &r->model.stats[i]);
    an_json_array_end(&j);
    an_json_key(&j, "samples");
    an_json_array_begin(&j);
    for (size_t i = 0; i < p->n_samples; i++) {
        const pf_sample_t *s = &p->samples[i];
        an_json_object_begin(&j);
        an_json_kv_u64(&j, "t_ns", s->t);
        an_json_kv_u64(&j, "heap_bytes", s->heap);
        an_json_kv_u64(&j, "rss_bytes", s->rss);
        an_json_kv_u64(&j, "allocations", s->allocations);
        an_json_kv_u64(&j, "frees", s->frees);
        an_json_object_end(&j);
    }
    an_json_array_end(&j);
    an_json_key(&j, "warnings");
    an_json_array_begin(&j);
    for (size_t i = 0; i < r->model.n_warnings; i++)
        an_json_str(&j, r->model.warnings[i]);
    an_json_array_end(&j);
    an_json_object_end(&j);
    fputc('\n', out);
    if (!rc && ferror(out))
        rc = PF_EIO;
    return rc;
}
