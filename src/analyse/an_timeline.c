/* an_timeline.c - `heapscope report --timeline`: heap in use and RSS over
 * time, from the profile's SAMPLES records (taken every HEAPSCOPE_SAMPLE_MS
 * by the collector).  The text shows at most ROWS_MAX rows: consecutive
 * samples are combined, each row keeping the highest heap of its samples
 * (so the peak is never averaged away) with the RSS of that sample, and a
 * bar chart ('#' heap, '.' RSS beyond it) scaled to the highest RSS.  The
 * JSON has every sample.  Samples are process-wide: stack filters do not
 * change them (the text says so when filters are given). */
#include <inttypes.h>
#include <stdlib.h>

#include "analyse/an_json.h"
#include "analyse/an_units.h"
#include "analyse/an_view_bars.h"
#include "analyse/an_view.h"

#define ROWS_MAX 100

static void print_json(an_report_t *r, FILE *out)
{
    const pf_profile_t *p = r->prof;
    uint64_t max_heap = 0, max_rss = 0;
    for (size_t i = 0; i < p->n_samples; i++) {
        if (p->samples[i].heap > max_heap)
            max_heap = p->samples[i].heap;
        if (p->samples[i].rss > max_rss)
            max_rss = p->samples[i].rss;
    }
    an_json_t j;
    an_json_init(&j, out);
    an_json_object_begin(&j);
    an_json_kv_str(&j, "view", "timeline");
    an_json_kv_str(&j, "profile", r->path);
    an_json_kv_u64(&j, "sample_ms", p->info.sample_ms);
    an_json_kv_u64(&j, "peak_bytes", r->model.sum.peak_bytes);
    an_json_kv_u64(&j, "peak_time_ns", r->model.sum.peak_t);
    an_json_kv_u64(&j, "max_heap", max_heap);
    an_json_kv_u64(&j, "max_rss", max_rss);
    an_json_key(&j, "samples");
    an_json_array_begin(&j);
    for (size_t i = 0; i < p->n_samples; i++) {
        const pf_sample_t *s = &p->samples[i];
        an_json_object_begin(&j);
        an_json_kv_u64(&j, "t_ns", s->t);
        an_json_kv_u64(&j, "heap", s->heap);
        an_json_kv_u64(&j, "rss", s->rss);
        an_json_kv_u64(&j, "allocations", s->allocations);
        an_json_kv_u64(&j, "frees", s->frees);
        an_json_object_end(&j);
    }
    an_json_array_end(&j);
    an_json_object_end(&j);
    fputc('\n', out);
}

int an_view_timeline(an_report_t *r, an_view_opts_t *o, FILE *out)
{
    if (o->json) {
        print_json(r, out);
        return 0;
    }
    const pf_profile_t *p = r->prof;
    size_t n = p->n_samples, per = (n + ROWS_MAX - 1) / ROWS_MAX;
    uint64_t max_rss = 0, max_heap = 0;
    for (size_t i = 0; i < n; i++) {
        if (p->samples[i].rss > max_rss)
            max_rss = p->samples[i].rss;
        if (p->samples[i].heap > max_heap)
            max_heap = p->samples[i].heap;
    }
    uint64_t scale = max_rss > max_heap ? max_rss : max_heap;
    char a[AN_UNITS_BUF], b[AN_UNITS_BUF], c[AN_UNITS_BUF];
    fprintf(out, "heapscope report --timeline of %s\n\n", r->path);
    char ns[AN_UNITS_BUF];
    fprintf(out, "%s every %" PRIu64 " ms; peak heap %s at %s; highest RSS %s\n",
            an_units_noun(n, "sample", ns), p->info.sample_ms, an_units_bytes(r->model.sum.peak_bytes, a),
            an_units_time(r->model.sum.peak_t, b), an_units_bytes(max_rss, c));
    if (per > 1)
        fprintf(out, "one row per %s samples, with the highest heap among them\n",
                an_units_count(per, a));
    if (an_filter_active(&o->filter))
        fprintf(out, "note: samples are process-wide; stack filters do not apply\n");
    if (n == 0) {
        fprintf(out, "\n(no samples: the program ended before the first one)\n");
        return 0;
    }
    unsigned w = an_view_bars_width(o->width);
    unsigned cols = w > 46 ? w - 44 : 2;
    fprintf(out, "\n%12s %12s %12s  # heap, . RSS (full width %s)\n", "time", "heap", "RSS",
            an_units_bytes(scale, a));
    for (size_t i = 0; i < n; i += per) {
        size_t best = i;
        for (size_t k = i; k < i + per && k < n; k++)
            if (p->samples[k].heap > p->samples[best].heap)
                best = k;
        const pf_sample_t *s = &p->samples[best];
        fprintf(out, "%12s %12s %12s  ", an_units_time(s->t, a), an_units_bytes(s->heap, b),
                an_units_bytes(s->rss, c));
        an_view_bars_print(out, cols, s->heap, s->rss, scale);
        fputc('\n', out);
    }
    return 0;
}
