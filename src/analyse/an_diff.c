/* an_diff.c - `heapscope diff A B`: load both profiles, match their stacks
 * by symbolised frames (an_diff_sites.c) and print, largest change of the
 * --sort figure first, every stack whose allocations, bytes, leaked bytes
 * or peak changed: "new" (only in B), "gone" (only in A) or "changed";
 * before that, the process totals of A and B.  --json writes the same as
 * one object (before and after figures; the change is after - before). */
#include "analyse/an_diff.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analyse/an_cmd.h"
#include "analyse/an_diff_sites.h"
#include "analyse/an_json.h"
#include "analyse/an_units.h"

static const char *const fig_names[DF_NFIG] = {"allocations", "bytes", "leaked", "peak"};

static void usage(FILE *out)
{
    fprintf(out,
            "usage: heapscope diff [--sort allocations|bytes|leaked|peak] [--top N] [--json] A B\n"
            "  per stack (matched by function, file and line of every frame), what changed\n"
            "  from profile A to profile B; largest change of the --sort figure (default\n"
            "  bytes) first; --top N stacks (default 20, 0 = all)\n");
}

static int bad(const char *msg)
{
    fprintf(stderr, "heapscope diff: %s\n", msg);
    usage(stderr);
    return 2;
}

static int sort_fig;

/* |after - before| of the sort figure, then the others, descending. */
static uint64_t absdelta(const df_site_t *s, int k)
{
    uint64_t a = s->fig[0][k], b = s->fig[1][k];
    return a > b ? a - b : b - a;
}

static int by_change(const void *x, const void *y)
{
    const df_site_t *a = x, *b = y;
    uint64_t da = absdelta(a, sort_fig), db = absdelta(b, sort_fig);
    if (da != db)
        return da < db ? 1 : -1;
    for (int k = 0; k < DF_NFIG; k++) {
        da = absdelta(a, k);
        db = absdelta(b, k);
        if (da != db)
            return da < db ? 1 : -1;
    }
    return df_key_cmp(a, b);
}

static int changed(const df_site_t *s)
{
    if (s->in[0] != s->in[1])
        return 1;
    for (int k = 0; k < DF_NFIG; k++)
        if (s->fig[0][k] != s->fig[1][k])
            return 1;
    return 0;
}

static const char *status(const df_site_t *s)
{
    return !s->in[0] ? "new" : !s->in[1] ? "gone" : "changed";
}

/* "+N", "-N" or "0" */
static void signed_delta(char *buf, size_t sz, uint64_t before, uint64_t after)
{
    if (after >= before)
        snprintf(buf, sz, after > before ? "+%" PRIu64 : "%" PRIu64, after - before);
    else
        snprintf(buf, sz, "-%" PRIu64, before - after);
}

/* A frame string of df_collect (function, 0x1f, file, 0x1f, line, 0x1e):
 * where its two separators (*fs, *ls) and its end are; 0 if it is not one. */
static int frame_split(const char *p, const char **fs, const char **ls, const char **end)
{
    *fs = strchr(p, '\x1f');
    *ls = *fs ? strchr(*fs + 1, '\x1f') : NULL;
    *end = *ls ? strchr(*ls + 1, '\x1e') : NULL;
    return *end != NULL;
}

/* The frames of a stack, "f (file:line) < g (file:line) ...", at most 6. */
static void print_frames(FILE *out, const df_site_t *d)
{
    int n = 0;
    for (size_t i = 0; i < d->nframes; i++) {
        const char *p = d->frames[i], *fs, *ls, *end;
        if (!frame_split(p, &fs, &ls, &end))
            break;
        if (n == 6) {
            fputs(" < ...", out);
            break;
        }
        const char *file = fs + 1;
        const char *slash = memchr(file, '/', (size_t)(ls - file));
        while (slash) {   /* basename */
            file = slash + 1;
            slash = memchr(file, '/', (size_t)(ls - file));
        }
        fprintf(out, "%s%.*s", n ? " < " : "", (int)(fs - p), p);
        if (ls > file)
            fprintf(out, " (%.*s:%.*s)", (int)(ls - file), file, (int)(end - ls - 1), ls + 1);
        n++;
    }
    if (n == 0)
        fputs("(no frames)", out);
    fputc('\n', out);
}

static void json_frames(an_json_t *j, const df_site_t *d)
{
    an_json_key(j, "frames");
    an_json_array_begin(j);
    for (size_t i = 0; i < d->nframes; i++) {
        const char *p = d->frames[i], *fs, *ls, *end;
        if (!frame_split(p, &fs, &ls, &end))
            break;
        an_json_object_begin(j);
        an_json_key(j, "function");
        an_json_strn(j, p, (size_t)(fs - p));
        an_json_key(j, "file");
        if (ls > fs + 1)
            an_json_strn(j, fs + 1, (size_t)(ls - fs - 1));
        else
            an_json_null(j);
        an_json_kv_u64(j, "line", strtoull(ls + 1, NULL, 10));
        an_json_object_end(j);
    }
    an_json_array_end(j);
}

static void json_figs(an_json_t *j, const char *key, const uint64_t *v)
{
    an_json_key(j, key);
    an_json_object_begin(j);
    for (int k = 0; k < DF_NFIG; k++)
        an_json_kv_u64(j, fig_names[k], v[k]);
    an_json_object_end(j);
}

static void totals_of(const an_report_t *r, uint64_t t[DF_NFIG])
{
    t[DF_ALLOCS] = r->model.sum.allocations;
    t[DF_BYTES] = r->model.sum.bytes_allocated;
    t[DF_LEAKED] = r->model.sum.leaked_bytes;
    t[DF_PEAK] = r->model.sum.peak_bytes;
}

static int print_diff(FILE *out, const an_report_t *ra, const an_report_t *rb,
                      const df_sites_t *s, uint64_t top, int json)
{
    uint64_t ta[DF_NFIG], tb[DF_NFIG];
    totals_of(ra, ta);
    totals_of(rb, tb);
    size_t n_changed = 0, n_new = 0, n_gone = 0;
    for (size_t i = 0; i < s->n; i++)
        if (changed(&s->v[i])) {
            n_changed++;
            n_new += !s->v[i].in[0];
            n_gone += !s->v[i].in[1];
        }
    size_t shown = top && top < n_changed ? (size_t)top : n_changed;
    if (json) {
        an_json_t j;
        an_json_init(&j, out);
        an_json_object_begin(&j);
        an_json_kv_str(&j, "before", ra->path);
        an_json_kv_str(&j, "after", rb->path);
        an_json_kv_str(&j, "sort", fig_names[sort_fig]);
        an_json_key(&j, "totals");
        an_json_object_begin(&j);
        json_figs(&j, "before", ta);
        json_figs(&j, "after", tb);
        an_json_object_end(&j);
        an_json_kv_u64(&j, "stacks_changed", n_changed);
        an_json_kv_u64(&j, "stacks_new", n_new);
        an_json_kv_u64(&j, "stacks_gone", n_gone);
        an_json_key(&j, "stacks");
        an_json_array_begin(&j);
        for (size_t i = 0; i < shown; i++) {
            const df_site_t *d = &s->v[i];
            an_json_object_begin(&j);
            an_json_kv_str(&j, "status", status(d));
            json_figs(&j, "before", d->fig[0]);
            json_figs(&j, "after", d->fig[1]);
            json_frames(&j, d);
            an_json_object_end(&j);
        }
        an_json_array_end(&j);
        an_json_object_end(&j);
        fputc('\n', out);
    } else {
        fprintf(out, "heapscope diff: %s -> %s\n\n", ra->path, rb->path);
        fprintf(out, "%-12s %14s %14s %14s\n", "totals", "before", "after", "change");
        for (int k = 0; k < DF_NFIG; k++) {
            char d[32];
            signed_delta(d, sizeof d, ta[k], tb[k]);
            fprintf(out, "%-12s %14" PRIu64 " %14" PRIu64 " %14s\n", fig_names[k], ta[k], tb[k], d);
        }
        char nc[AN_UNITS_BUF], nn[AN_UNITS_BUF], ng[AN_UNITS_BUF], ns[AN_UNITS_BUF];
        fprintf(out, "\n%s changed (%s new, %s gone), largest change of %s first"
                     "; showing %s\n\n", an_units_noun(n_changed, "stack", nc),
                an_units_count(n_new, nn), an_units_count(n_gone, ng), fig_names[sort_fig],
                an_units_count(shown, ns));
        fprintf(out, "%-8s %12s %14s %14s %14s  %s\n", "status", "allocations", "bytes",
                "leaked", "peak", "stack (innermost first)");
        for (size_t i = 0; i < shown; i++) {
            const df_site_t *d = &s->v[i];
            char c[DF_NFIG][32];
            for (int k = 0; k < DF_NFIG; k++)
                signed_delta(c[k], sizeof c[k], d->fig[0][k], d->fig[1][k]);
            fprintf(out, "%-8s %12s %14s %14s %14s  ", status(d), c[0], c[1], c[2], c[3]);
            print_frames(out, d);
        }
    }
    fflush(out);
    return ferror(out) ? PF_EIO : PF_OK;
}

static int load(an_report_t *r, const char *path)
{
    char err[PF_ERRMSG_SIZE + 64];
    memset(r, 0, sizeof *r);
    int rc = an_report_load(r, path, err, sizeof err);
    if (rc != PF_OK)
        fprintf(stderr, "heapscope diff: %s\n", err);
    return rc;
}

int an_diff_main(int argc, char **argv)
{
    const char *paths[2] = {NULL, NULL};
    int np = 0, json = 0, opts = 1;
    uint64_t top = 20;
    sort_fig = DF_BYTES;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (opts && !strcmp(a, "--")) {
            opts = 0;
        } else if (opts && (!strcmp(a, "--help") || !strcmp(a, "-h"))) {
            usage(stdout);
            return 0;
        } else if (opts && !strcmp(a, "--json")) {
            json = 1;
        } else if (opts && (!strcmp(a, "--sort") || !strncmp(a, "--sort=", 7))) {
            const char *v = a[6] == '=' ? a + 7 : (i + 1 < argc ? argv[++i] : NULL);
            int k = -1;
            for (int f = 0; v && f < DF_NFIG; f++)
                if (!strcmp(v, fig_names[f]))
                    k = f;
            if (k < 0)
                return bad("--sort needs allocations, bytes, leaked or peak");
            sort_fig = k;
        } else if (opts && (!strcmp(a, "--top") || !strncmp(a, "--top=", 6))) {
            const char *v = a[5] == '=' ? a + 6 : (i + 1 < argc ? argv[++i] : NULL);
            char *end = NULL;
            if (!v || !*v || *v == '-' || (top = strtoull(v, &end, 10), *end))
                return bad("--top needs a number (0 = all)");
        } else if (opts && a[0] == '-' && a[1]) {
            fprintf(stderr, "heapscope diff: unknown option %s\n", a);
            usage(stderr);
            return 2;
        } else if (np < 2) {
            paths[np++] = a;
        } else {
            return bad("give exactly two profiles, A and B");
        }
    }
    if (np != 2)
        return bad("give exactly two profiles, A and B");
    an_report_t ra, rb;
    int rc = load(&ra, paths[0]);
    if (rc == PF_OK)
        rc = load(&rb, paths[1]);
    else
        memset(&rb, 0, sizeof rb);
    int status_code = rc == PF_OK ? 0 : 1;
    df_sites_t s = {0};
    if (rc == PF_OK) {
        rc = df_collect(&s, &ra, 0);
        if (rc == PF_OK)
            rc = df_collect(&s, &rb, 1);
        if (rc == PF_OK)
            rc = df_match(&s);
        if (rc == PF_OK) {
            size_t out = 0;   /* keep changed stacks only */
            for (size_t i = 0; i < s.n; i++) {
                if (changed(&s.v[i]))
                    s.v[out++] = s.v[i];
                else
                    df_site_drop(&s.v[i]);
            }
            s.n = out;
            qsort(s.v, s.n, sizeof *s.v, by_change);
            rc = print_diff(stdout, &ra, &rb, &s, top, json);
        }
        if (rc != PF_OK) {
            fprintf(stderr, "heapscope diff: %s\n",
                    rc == PF_ENOMEM ? "out of memory" : "cannot write the output");
            status_code = 1;
        }
    }
    df_free(&s);
    an_report_close(&ra);
    an_report_close(&rb);
    return status_code;
}
