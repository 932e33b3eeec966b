/* an_view_stacks.c - the ranked stack views of `heapscope report`:
 *   --leaks      blocks live at exit, after suppressions, largest first
 *   --peak       the stacks live at the global heap peak, with their share
 *   --temporary  temporary allocations (freed before the thread allocated
 *                again), count and share of all allocations
 *   (filters without a view) stacks by bytes allocated
 * Each row is a stack, or stacks merged by --merge, with the view's byte
 * and count figures and its share of the view's total. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analyse/an_json.h"
#include "analyse/an_units.h"
#include "analyse/an_view_group.h"

#define MAX_FRAMES_SHOWN 16

typedef struct view_def {
    const char *name;      /* JSON "view" */
    an_key_t key;
    int suppress;
} view_def_t;

static view_def_t view_def(an_view_kind_t k)
{
    switch (k) {
    case AN_VIEW_LEAKS: return (view_def_t){"leaks", AN_KEY_LEAKED, 1};
    case AN_VIEW_PEAK: return (view_def_t){"peak", AN_KEY_PEAK, 0};
    case AN_VIEW_TEMPORARY: return (view_def_t){"temporary", AN_KEY_TEMPORARY, 0};
    default: return (view_def_t){"stacks", AN_KEY_BYTES, 0};
    }
}

/* "1000 B" below 1 KiB, else "1.3 KiB (1,300 bytes)"; buf[2 * AN_UNITS_BUF]. */
static const char *bytes_exact(uint64_t n, char *buf)
{
    char a[AN_UNITS_BUF], b[AN_UNITS_BUF];
    if (n < 1024)
        snprintf(buf, 2 * AN_UNITS_BUF, "%s", an_units_bytes(n, a));
    else
        snprintf(buf, 2 * AN_UNITS_BUF, "%s (%s)", an_units_bytes(n, a), an_units_noun(n, "byte", b));
    return buf;
}

/* parts per million of part/whole, 0 when whole is 0 */
static uint64_t ppm(uint64_t part, uint64_t whole)
{
    if (!whole)
        return 0;
    return (uint64_t)((long double)part * 1000000.0L / (long double)whole + 0.5L);
}

/* The share a row's figure is of: the view's total. */
static uint64_t view_total(an_report_t *r, an_key_t key, const an_groups_t *g)
{
    const an_summary_t *s = &r->model.sum;
    switch (key) {
    case AN_KEY_LEAKED: {
        uint64_t t = 0;
        for (size_t i = 0; i < g->n; i++)
            t = an_add(t, g->v[i].st.leaked_bytes);
        return t;
    }
    case AN_KEY_PEAK: return s->peak_bytes;
    case AN_KEY_TEMPORARY: return s->allocations;
    default: return s->bytes_allocated;
    }
}

/* "4 stacks" or, with merged rows, "4 stacks in 2 rows"; buf[64]. */
static const char *stacks_rows(const an_groups_t *g, const size_t *order, size_t rows, char *buf)
{
    size_t stacks = 0;
    for (size_t i = 0; i < rows; i++)
        stacks += g->v[order[i]].n_members;
    if (stacks == rows)
        snprintf(buf, 64, "%zu stack%s", stacks, stacks == 1 ? "" : "s");
    else
        snprintf(buf, 64, "%zu stacks in %zu row%s", stacks, rows, rows == 1 ? "" : "s");
    return buf;
}

static void print_header(an_report_t *r, an_view_opts_t *o, view_def_t d, const an_groups_t *g,
                         uint64_t total, const size_t *order, size_t n, FILE *out)
{
    char sr[64];
    const char *rows = stacks_rows(g, order, n, sr);
    const an_summary_t *s = &r->model.sum;
    char a[AN_UNITS_BUF], b[AN_UNITS_BUF], c[AN_UNITS_BUF], e[AN_UNITS_BUF], x[2 * AN_UNITS_BUF];
    if (d.key == AN_KEY_BYTES)
        fprintf(out, "heapscope report of %s: the stacks that pass the filters\n\n", r->path);
    else
        fprintf(out, "heapscope report --%s of %s\n\n", d.name, r->path);
    switch (d.key) {
    case AN_KEY_LEAKED: {
        uint64_t blocks = 0;
        for (size_t i = 0; i < g->n; i++)
            blocks = an_add(blocks, g->v[i].st.leaked_allocations);
        fprintf(out, "%s %s in %s, %s\n",
                r->prof->final ? "leaked (live at exit)" : "live at the last snapshot",
                bytes_exact(total, x), an_units_noun(blocks, "block", c), rows);
        size_t builtin = 0;
        for (size_t i = 0; i < o->sup.n; i++)
            builtin += o->sup.v[i].builtin != 0;
        fprintf(out, "suppressed %s in %s, %s (%zu rule%s, %zu built-in)\n",
                bytes_exact(g->suppressed_bytes, x), an_units_noun(g->suppressed_blocks, "block", c),
                an_units_noun(g->suppressed_stacks, "stack", e), o->sup.n, o->sup.n == 1 ? "" : "s",
                builtin);
        for (size_t i = 0; i < o->sup.n; i++)
            if (o->sup.v[i].hits)
                fprintf(out, "  %5lu x leak:%s%s\n", o->sup.v[i].hits, o->sup.v[i].pattern,
                        o->sup.v[i].builtin ? "  (built-in)" : "");
        if (!r->prof->final)
            fprintf(out, "warning: the profile is not final: live blocks may still be freed\n");
        break;
    }
    case AN_KEY_PEAK:
        fprintf(out, "peak heap %s (%s) at %s", an_units_bytes(total, a),
                an_units_noun(total, "byte", b), an_units_time(s->peak_t, c));
        if (s->peak_error)
            fprintf(out, ", exact to %s", an_units_bytes(s->peak_error, a));
        fprintf(out, "; %s live then\n", rows);
        break;
    case AN_KEY_TEMPORARY:
        fprintf(out, "%s of %s (%s), %s\n",
                an_units_noun(s->temporary, "temporary allocation", a), an_units_count(s->allocations, b),
                an_units_percent(s->temporary, s->allocations, c), rows);
        break;
    default:
        fprintf(out, "all stacks: %s, %s (%s); matching: %s\n",
                an_units_noun(s->allocations, "allocation", a),
                an_units_bytes(s->bytes_allocated, b), an_units_noun(s->bytes_allocated, "byte", c), rows);
        break;
    }
}

static void print_row(an_key_t key, size_t rank, const an_group_t *row, uint64_t total, FILE *out)
{
    const an_stats_t *st = &row->st;
    char a[AN_UNITS_BUF], b[AN_UNITS_BUF], c[AN_UNITS_BUF], e[AN_UNITS_BUF], x[2 * AN_UNITS_BUF];
    uint64_t bytes, count;
    an_view_key_figures(st, key, &bytes, &count);
    fprintf(out, "\n%3zu. ", rank);
    switch (key) {
    case AN_KEY_LEAKED:
    case AN_KEY_PEAK:
        fprintf(out, "%s in %s, %s of the %s", bytes_exact(bytes, x), an_units_noun(count, "block", c),
                an_units_percent(bytes, total, e), key == AN_KEY_PEAK ? "peak" : "leaks");
        break;
    case AN_KEY_TEMPORARY:
        fprintf(out, "%s temporary of %s (%s of all allocations)",
                an_units_count(count, a), an_units_noun(st->allocations, "allocation", b),
                an_units_percent(count, total, c));
        break;
    default:
        fprintf(out, "%s, %s, %s of all bytes", an_units_noun(count, "allocation", a),
                bytes_exact(bytes, x), an_units_percent(bytes, total, e));
        break;
    }
    if (row->n_members > 1)
        fprintf(out, "; %zu stacks merged", row->n_members);
    fprintf(out, "; stack %" PRIu64 "\n", st->id);
}

static void json_stats(an_json_t *j, const an_stats_t *st)
{
    an_json_kv_u64(j, "allocations", st->allocations);
    an_json_kv_u64(j, "frees", st->frees);
    an_json_kv_u64(j, "bytes_allocated", st->bytes_allocated);
    an_json_kv_u64(j, "bytes_freed", st->bytes_freed);
    an_json_kv_u64(j, "peak_bytes", st->peak_bytes);
    an_json_kv_u64(j, "peak_allocations", st->peak_blocks);
    an_json_kv_u64(j, "leaked_bytes", st->leaked_bytes);
    an_json_kv_u64(j, "leaked_allocations", st->leaked_allocations);
    an_json_kv_u64(j, "temporary_allocations", st->temporary);
}

static int json_view(an_report_t *r, an_view_opts_t *o, view_def_t d, const an_groups_t *g,
                     const size_t *order, size_t rows, uint64_t total, FILE *out)
{
    const an_summary_t *s = &r->model.sum;
    an_json_t j;
    an_json_init(&j, out);
    an_json_object_begin(&j);
    an_json_kv_str(&j, "view", d.name);
    an_json_kv_str(&j, "profile", r->path);
    an_json_kv_bool(&j, "final", r->prof->final);
    an_json_kv_u64(&j, "total", total);
    an_json_kv_u64(&j, "allocations", s->allocations);
    an_json_kv_u64(&j, "peak_bytes", s->peak_bytes);
    an_json_kv_u64(&j, "peak_time_ns", s->peak_t);
    an_json_kv_u64(&j, "peak_error", s->peak_error);
    an_json_kv_u64(&j, "temporary_allocations", s->temporary);
    an_json_kv_u64(&j, "rows", rows);
    if (d.suppress) {
        an_json_key(&j, "suppressed");
        an_json_object_begin(&j);
        an_json_kv_u64(&j, "stacks", g->suppressed_stacks);
        an_json_kv_u64(&j, "bytes", g->suppressed_bytes);
        an_json_kv_u64(&j, "blocks", g->suppressed_blocks);
        an_json_key(&j, "rules");
        an_json_array_begin(&j);
        for (size_t i = 0; i < o->sup.n; i++) {
            an_json_object_begin(&j);
            an_json_kv_str(&j, "pattern", o->sup.v[i].pattern);
            an_json_kv_bool(&j, "builtin", o->sup.v[i].builtin);
            an_json_kv_u64(&j, "stacks", o->sup.v[i].hits);
            an_json_object_end(&j);
        }
        an_json_array_end(&j);
        an_json_object_end(&j);
    }
    an_json_key(&j, "stacks");
    an_json_array_begin(&j);
    int rc = 0;
    for (size_t i = 0; i < rows && !rc; i++) {
        const an_group_t *row = &g->v[order[i]];
        uint64_t bytes, count;
        an_view_key_figures(&row->st, d.key, &bytes, &count);
        an_json_object_begin(&j);
        an_json_kv_u64(&j, "id", row->st.id);
        an_json_key(&j, "stack_ids");
        an_json_array_begin(&j);
        for (size_t k = 0; k < row->n_members; k++)
            an_json_u64(&j, r->model.stats[g->members[row->first + k]].id);
        an_json_array_end(&j);
        an_json_kv_u64(&j, "bytes", bytes);
        an_json_kv_u64(&j, "count", count);
        an_json_kv_u64(&j, "share_ppm", ppm(d.key == AN_KEY_TEMPORARY ? count : bytes, total));
        json_stats(&j, &row->st);
        an_json_key(&j, "frames");
        rc = an_view_frames_json(r, o, row, &j);
        an_json_object_end(&j);
    }
    an_json_array_end(&j);
    an_json_object_end(&j);
    fputc('\n', out);
    return rc;
}

int an_view_stacks(an_report_t *r, an_view_opts_t *o, FILE *out)
{
    view_def_t d = view_def(o->kind);
    an_groups_t g;
    size_t *order = NULL, n = 0;
    int rc = an_view_groups_build(r, o, d.suppress, &g);
    if (!rc)
        rc = an_view_groups_rank(&g, o, d.key, &order, &n);
    if (!rc) {
        uint64_t total = view_total(r, d.key, &g);
        size_t rows = n < o->filter.top ? n : o->filter.top;
        if (o->json) {
            rc = json_view(r, o, d, &g, order, rows, total, out);
        } else {
            print_header(r, o, d, &g, total, order, n, out);
            if (n == 0)
                fprintf(out, "\nno stacks%s\n", d.key == AN_KEY_LEAKED ? ": no leaks" : "");
            for (size_t i = 0; i < rows && !rc; i++) {
                print_row(d.key, i + 1, &g.v[order[i]], total, out);
                rc = an_view_frames_text(r, o, &g.v[order[i]], out, MAX_FRAMES_SHOWN);
            }
            if (rows < n)
                fprintf(out, "\n... %zu more row%s (--top N shows more)\n", n - rows,
                        n - rows == 1 ? "" : "s");
        }
    }
    free(order);
    an_view_groups_free(&g);
    return rc;
}
