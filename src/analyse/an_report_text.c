/* an_report_text.c - `heapscope report FILE`: the summary, then the top
 * stacks by allocations, bytes, leaked bytes, share of the peak and
 * temporary allocations, each with its symbolised frames.  Fits 100
 * columns; numbers are shown with units and exactly where it matters. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analyse/an_cmd.h"
#include "analyse/an_quote.h"
#include "analyse/an_report.h"
#include "analyse/an_units.h"

#define MAX_FRAMES_SHOWN 16

static const char *base_name(const char *p)
{
    const char *s = p ? strrchr(p, '/') : NULL;
    return s ? s + 1 : (p ? p : "?");
}

static void print_summary(an_report_t *r, FILE *out)
{
    const pf_profile_t *p = r->prof;
    const an_summary_t *s = &r->model.sum;
    char a[AN_UNITS_BUF], b[AN_UNITS_BUF], c[AN_UNITS_BUF];
    fprintf(out, "heapscope report of %s\n\n", r->path);
    fprintf(out, "  program          ");
    an_quote_argv(out, p->info.argv, p->info.argc, 8);
    fprintf(out, "  (pid %" PRIu64 ")\n", p->info.pid);
    fprintf(out, "  run time         %s%s\n", an_units_time(s->run_time_ns, a),
            p->final ? "" : " (profile not final)");
    fprintf(out, "  allocations      %s, %s (%s)\n", an_units_noun(s->allocations, "call", a),
            an_units_bytes(s->bytes_allocated, b), an_units_noun(s->bytes_allocated, "byte", c));
    fprintf(out, "  frees            %s\n", an_units_count(s->frees, a));
    fprintf(out, "  peak heap        %s (%s) at %s", an_units_bytes(s->peak_bytes, a),
            an_units_noun(s->peak_bytes, "byte", b), an_units_time(s->peak_t, c));
    if (s->peak_error)
        fprintf(out, ", exact to %s", an_units_bytes(s->peak_error, a));
    fprintf(out, "\n");
    fprintf(out, "  %-16s %s (%s) in %s\n", p->final ? "leaked" : "live at snapshot",
            an_units_bytes(s->leaked_bytes, a), an_units_noun(s->leaked_bytes, "byte", b),
            an_units_noun(s->leaked_allocations, "block", c));
    fprintf(out, "  temporary        %s (%s of all)\n", an_units_noun(s->temporary, "allocation", a),
            an_units_percent(s->temporary, s->allocations, b));
    fprintf(out, "  peak RSS         %s\n", an_units_bytes(s->rss_peak, a));
    fprintf(out, "  stacks           %s, unwinder %s, %s\n",
            an_units_count(r->model.n_stats, a), an_report_unwinder(p->info.unwinder),
            an_units_noun(s->threads, "thread", b));
    for (size_t i = 0; i < r->model.n_warnings; i++)
        fprintf(out, "  warning: %s\n", r->model.warnings[i]);
}

static int print_frames(an_report_t *r, FILE *out, const an_stats_t *st)
{
    int rc = an_frames_get(&r->frames, r->prof, r->syms, &r->prof->stacks[st->stack]);
    if (rc)
        return rc;
    if (r->frames.n == 0)
        fprintf(out, "      (no frames)\n");
    for (size_t i = 0; i < r->frames.n && i < MAX_FRAMES_SHOWN; i++) {
        const an_frame_t *f = &r->frames.v[i];
        const char *mod = f->module >= 0 ? base_name(r->prof->modules[f->module].path) : "?";
        fprintf(out, "      #%-2zu %s", i, f->function);
        if (f->inlined)
            fprintf(out, " [inlined]");
        if (f->file)
            fprintf(out, "  %s:%" PRIu32, f->file, f->line);
        if (!strcmp(f->function, "??") && f->module >= 0)
            fprintf(out, "  %s+0x%" PRIx64, mod, f->address - r->prof->modules[f->module].load_bias);
        else
            fprintf(out, "  (%s)", mod);
        fprintf(out, "\n");
    }
    if (r->frames.n > MAX_FRAMES_SHOWN)
        fprintf(out, "      ... %zu more frame%s\n", r->frames.n - MAX_FRAMES_SHOWN,
                r->frames.n - MAX_FRAMES_SHOWN == 1 ? "" : "s");
    return 0;
}

static void print_figures(FILE *out, size_t rank, const an_stats_t *st, uint64_t peak)
{
    char a[AN_UNITS_BUF], b[AN_UNITS_BUF], c[AN_UNITS_BUF], d[AN_UNITS_BUF], e[AN_UNITS_BUF],
        f[AN_UNITS_BUF], g[AN_UNITS_BUF];
    fprintf(out, "  %zu. %s, %s; leaked %s in %s; peak %s (%s); temporary %s\n",
            rank, an_units_noun(st->allocations, "allocation", a), an_units_bytes(st->bytes_allocated, b),
            an_units_bytes(st->leaked_bytes, c), an_units_noun(st->leaked_allocations, "block", d),
            an_units_bytes(st->peak_bytes, e), an_units_percent(st->peak_bytes, peak, f),
            an_units_count(st->temporary, g));
}

static int print_section(an_report_t *r, FILE *out, const char *title, an_key_t key, size_t *order)
{
    int rc = an_model_order(&r->model, key, order);
    if (rc)
        return rc;
    size_t shown = 0;
    for (size_t i = 0; i < r->model.n_stats && shown < r->top; i++) {
        const an_stats_t *st = &r->model.stats[order[i]];
        if (an_model_key(st, key) == 0)
            break;
        if (!shown)
            fprintf(out, "\n%s\n", title);
        print_figures(out, ++shown, st, r->model.sum.peak_bytes);
        if ((rc = print_frames(r, out, st)))
            return rc;
    }
    return 0;
}

int an_report_text(an_report_t *r, FILE *out)
{
    /* symbolise first, so that missing-symbol warnings are in the summary */
    size_t *order;
    int rc = an_report_prepare(r, r->top * 5, &order);
    if (!rc) {
        print_summary(r, out);
        const char *leak_title = r->prof->final ? "top stacks by leaked bytes (live at exit)"
                                                : "top stacks by bytes live at the last snapshot";
        rc = print_section(r, out, "top stacks by allocations", AN_KEY_ALLOCATIONS, order);
        if (!rc)
            rc = print_section(r, out, "top stacks by bytes allocated", AN_KEY_BYTES, order);
        if (!rc)
            rc = print_section(r, out, leak_title, AN_KEY_LEAKED, order);
        if (!rc)
            rc = print_section(r, out, "top stacks by share of the peak heap", AN_KEY_PEAK, order);
        if (!rc)
            rc = print_section(r, out, "top stacks by temporary allocations", AN_KEY_TEMPORARY,
                               order);
    }
    free(order);
    return rc;
}

int an_run_summary(const char *path, FILE *out)
{
    pf_profile_t *p;
    char err[PF_ERRMSG_SIZE];
    int rc = pf_reader_open(path, &p, err, sizeof err);
    if (rc) {
        fprintf(out, "heapscope: cannot read the profile %s: %s\n", path, err);
        return rc;
    }
    an_model_t m;
    rc = an_model_build(&m, p);
    if (!rc) {
        const an_summary_t *s = &m.sum;
        char a[AN_UNITS_BUF], b[AN_UNITS_BUF], c[AN_UNITS_BUF], d[AN_UNITS_BUF], e[AN_UNITS_BUF];
        fprintf(out, "heapscope: %s (%s), %s, peak %s at %s\n",
                an_units_noun(s->allocations, "allocation", a), an_units_bytes(s->bytes_allocated, b),
                an_units_noun(s->frees, "free", c), an_units_bytes(s->peak_bytes, d),
                an_units_time(s->peak_t, e));
        fprintf(out, "heapscope: %s %s in %s, %s (%s)\n",
                p->final ? "leaked" : "live at the last snapshot", an_units_bytes(s->leaked_bytes, a),
                an_units_noun(s->leaked_allocations, "block", b),
                an_units_noun(s->temporary, "temporary allocation", c),
                an_units_percent(s->temporary, s->allocations, d));
        fprintf(out, "heapscope: profile %s; see `heapscope report %s`\n", path, path);
    }
    an_model_free(&m);
    pf_reader_free(p);
    return rc;
}
