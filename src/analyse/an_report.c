/* an_report.c - `heapscope report`: option parsing and the shared set-up
 * of both outputs (an_report_text.c, an_report_json.c), and the dispatch to
 * the views (an_view.h) and to --mprof (an_mprof.h).
 *
 *   heapscope report [VIEW] [FILTERS] [--json] [--top N] FILE
 */
#include "analyse/an_report.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analyse/an_cmd.h"
#include "analyse/an_mprof.h"
#include "analyse/an_view.h"

#define AN_TOP_DEFAULT 10
#define AN_TOP_MAX 1000000

static void an_report_usage(FILE *out)
{
    fprintf(out,
            "usage: heapscope report [VIEW] [FILTERS] [--json] FILE\n"
            "\n"
            "Summarise a heapscope profile (totals, peak, leaks and the top stacks),\n"
            "or answer one question with a view (docs/REPORTS.md).\n"
            "\n"
            "views (one at a time; default: the summary report):\n"
            "  --leaks            blocks live at exit by stack, largest first\n"
            "      --suppressions FILE      LeakSanitizer rules (leak:PATTERN); repeatable\n"
            "      --no-default-suppressions  keep the C/C++ runtime's own blocks\n"
            "  --peak             the stacks live at the heap peak, with their share\n"
            "  --temporary        stacks of temporary allocations\n"
            "  --histogram        allocation sizes; --stack ID for one stack\n"
            "  --timeline         heap in use and RSS over time\n"
            "  --tree             call tree from main; --bottom-up from the allocation site;\n"
            "      --sort allocations|bytes|leaked|peak|temporary (default bytes)\n"
            "      --threshold PCT  prune subtrees below PCT%% of the total (default 1)\n"
            "  --mprof            mprof's four tables\n"
            "filters (every view):\n"
            "  --function SUBSTR  stacks with a function containing SUBSTR\n"
            "  --module SUBSTR    stacks with a frame in a module whose name contains SUBSTR\n"
            "  --min-bytes N      rows with at least N bytes (the view's byte figure)\n"
            "  --min-count N      rows with at least N blocks/allocations\n"
            "  --top N            rows shown (default %d in text, all in JSON)\n"
            "  --fold-templates   show C++ template arguments as <...>\n"
            "  --merge function   merge stacks with the same functions (lines ignored)\n"
            "  --merge caller     merge stacks by the function that called the allocator\n"
            "output:\n"
            "  --json             one JSON object (docs/REPORT-JSON.md)\n"
            "  --width N          columns for bars and charts (default: terminal, else 100)\n"
            "  --help             show this help\n",
            AN_TOP_DEFAULT);
}

/* Print a usage error and release o.  Returns 2, the exit status. */
static int an_report_bad(an_view_opts_t *o, const char *msg)
{
    fprintf(stderr, "heapscope report: %s (see heapscope report --help)\n", msg);
    an_suppress_free(&o->sup);
    return 2;
}

const char *an_report_unwinder(uint64_t u)
{
    switch (u) {
    case 0: return "frame pointers";
    case 1: return "DWARF (heapscope's CFI cache)";
    case 2: return "libunwind";
    default: return "unknown";
    }
}

int an_report_load(an_report_t *r, const char *path, char *err, size_t errsz)
{
    memset(r, 0, sizeof *r);
    r->path = path;
    r->top = AN_TOP_DEFAULT;
    int rc = pf_reader_open(path, &r->prof, err, errsz);
    if (rc)
        return rc;
    if ((rc = an_model_build(&r->model, r->prof)) || (rc = an_symbols_open(r->prof, &r->syms))) {
        snprintf(err, errsz, "out of memory");
        return rc;
    }
    return PF_OK;
}

int an_report_presymbolise(an_report_t *r, const size_t *order, size_t n)
{
    const char *const *w;
    size_t before = an_symbols_warnings(r->syms, &w);
    int rc = PF_OK;
    for (size_t i = 0; i < n && !rc; i++)
        rc = an_frames_get(&r->frames, r->prof, r->syms, &r->prof->stacks[r->model.stats[order[i]].stack]);
    size_t after = an_symbols_warnings(r->syms, &w);
    for (size_t i = before; i < after && !rc; i++)
        rc = an_model_warn(&r->model, "%s", w[i]);
    return rc;
}

int an_report_prepare(an_report_t *r, size_t nsym, size_t **order)
{
    size_t n = r->model.n_stats;
    *order = malloc((n ? n : 1) * sizeof **order);
    if (!*order)
        return PF_ENOMEM;
    int rc = an_model_order(&r->model, AN_KEY_BYTES, *order);
    if (!rc)
        rc = an_report_presymbolise(r, *order, nsym < n ? nsym : n);
    if (rc) {
        free(*order);
        *order = NULL;
    }
    return rc;
}

void an_report_close(an_report_t *r)
{
    an_frames_free(&r->frames);
    an_symbols_close(r->syms);
    an_model_free(&r->model);
    pf_reader_free(r->prof);
    memset(r, 0, sizeof *r);
}

/* Parse a decimal 0..max.  Returns 0 or -1. */
static int an_report_parse_u64(const char *s, uint64_t max, uint64_t *v)
{
    char *end;
    if (!s || !*s || *s < '0' || *s > '9')
        return -1;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 10);
    if (*end || errno || x > max)
        return -1;
    *v = x;
    return 0;
}

int an_report_main(int argc, char **argv)
{
    an_view_opts_t o;
    memset(&o, 0, sizeof o);
    o.sort = AN_KEY_BYTES;
    o.threshold = 1.0;
    int opts = 1, top_set = 0, no_default_sup = 0, sort_set = 0, thr_set = 0;
    const char *sup_files[16];
    size_t n_sup = 0;
    uint64_t top = AN_TOP_DEFAULT;
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *eq = opts && a[0] == '-' && a[1] == '-' ? strchr(a, '=') : NULL;
        size_t alen = eq ? (size_t)(eq - a) : strlen(a);
#define IS(name) (opts && alen == strlen(name) && !strncmp(a, name, alen))
#define VALUE() (eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL))
        const char *v = NULL;
        an_view_kind_t view = AN_VIEW_DEFAULT;
        if (opts && !strcmp(a, "--")) {
            opts = 0;
            continue;
        } else if (IS("--help") || IS("-h")) {
            an_report_usage(stdout);
            an_suppress_free(&o.sup);
            return 0;
        } else if (IS("--json")) {
            o.json = 1;
        } else if (IS("--leaks")) {
            view = AN_VIEW_LEAKS;
        } else if (IS("--peak")) {
            view = AN_VIEW_PEAK;
        } else if (IS("--temporary")) {
            view = AN_VIEW_TEMPORARY;
        } else if (IS("--histogram")) {
            view = AN_VIEW_HISTOGRAM;
        } else if (IS("--timeline")) {
            view = AN_VIEW_TIMELINE;
        } else if (IS("--tree")) {
            view = AN_VIEW_TREE;
        } else if (IS("--mprof")) {
            view = AN_VIEW_MPROF;
        } else if (IS("--bottom-up")) {
            o.bottom_up = 1;
        } else if (IS("--fold-templates")) {
            o.filter.fold_templates = 1;
        } else if (IS("--no-default-suppressions")) {
            no_default_sup = 1;
        } else if (IS("--top")) {
            if (an_report_parse_u64(VALUE(), AN_TOP_MAX, &top))
                return an_report_bad(&o, "--top needs a number from 0 to 1000000");
            top_set = 1;
        } else if (IS("--min-bytes")) {
            if (an_report_parse_u64(VALUE(), UINT64_MAX, &o.filter.min_bytes))
                return an_report_bad(&o, "--min-bytes needs a number of bytes");
        } else if (IS("--min-count")) {
            if (an_report_parse_u64(VALUE(), UINT64_MAX, &o.filter.min_count))
                return an_report_bad(&o, "--min-count needs a number");
        } else if (IS("--stack")) {
            if (an_report_parse_u64(VALUE(), UINT64_MAX, &o.stack_id))
                return an_report_bad(&o, "--stack needs a stack id (a number)");
            o.has_stack = 1;
        } else if (IS("--width")) {
            uint64_t w;
            if (an_report_parse_u64(VALUE(), 1000, &w) || w < 40)
                return an_report_bad(&o, "--width needs a number of columns from 40 to 1000");
            o.width = (unsigned)w;
        } else if (IS("--threshold")) {
            char *end;
            if (!(v = VALUE()) || !*v || (o.threshold = strtod(v, &end), *end) ||
                !(o.threshold >= 0 && o.threshold <= 100))
                return an_report_bad(&o, "--threshold needs a percentage from 0 to 100");
            thr_set = 1;
        } else if (IS("--function")) {
            if (!(v = VALUE()) || !*v)
                return an_report_bad(&o, "--function needs a function name (substring)");
            o.filter.function = v;
        } else if (IS("--module")) {
            if (!(v = VALUE()) || !*v)
                return an_report_bad(&o, "--module needs a module name (substring)");
            o.filter.module = v;
        } else if (IS("--merge")) {
            v = VALUE();
            if (v && !strcmp(v, "function"))
                o.filter.merge = AN_MERGE_FUNCTION;
            else if (v && !strcmp(v, "caller"))
                o.filter.merge = AN_MERGE_CALLER;
            else
                return an_report_bad(&o, "--merge needs 'function' or 'caller'");
        } else if (IS("--sort")) {
            static const char *const keys[] = {"allocations", "bytes", "leaked", "peak",
                                               "temporary"};
            v = VALUE();
            size_t k = 0;
            while (v && k < 5 && strcmp(v, keys[k]))
                k++;
            if (!v || k == 5)
                return an_report_bad(&o, "--sort needs allocations, bytes, leaked, peak or temporary");
            o.sort = (an_key_t)k;
            sort_set = 1;
        } else if (IS("--suppressions")) {
            if (!(v = VALUE()) || !*v)
                return an_report_bad(&o, "--suppressions needs a file");
            if (n_sup == sizeof sup_files / sizeof *sup_files)
                return an_report_bad(&o, "at most 16 --suppressions files");
            sup_files[n_sup++] = v;
        } else if (opts && a[0] == '-' && a[1]) {
            fprintf(stderr, "heapscope report: unknown option '%s'\n", a);
            an_report_usage(stderr);
            return 2;
        } else if (!path) {
            path = a;
        } else {
            fprintf(stderr, "heapscope report: one profile at a time ('%s' and '%s')\n", path, a);
            return 2;
        }
#undef IS
#undef VALUE
        if (view != AN_VIEW_DEFAULT) {
            if (o.kind != AN_VIEW_DEFAULT && o.kind != view)
                return an_report_bad(&o, "one view at a time (--leaks, --peak, --temporary, "
                                         "--histogram, --timeline, --tree, --mprof)");
            o.kind = view;
        }
    }
    if (!path) {
        an_report_usage(stderr);
        return 2;
    }
    if (o.bottom_up && o.kind != AN_VIEW_TREE)
        return an_report_bad(&o, "--bottom-up goes with --tree");
    if ((sort_set || thr_set) && o.kind != AN_VIEW_TREE)
        return an_report_bad(&o, "--sort and --threshold go with --tree");
    if (o.has_stack && o.kind != AN_VIEW_HISTOGRAM)
        return an_report_bad(&o, "--stack goes with --histogram");
    if ((n_sup || no_default_sup) && o.kind != AN_VIEW_LEAKS)
        return an_report_bad(&o, "--suppressions and --no-default-suppressions go with --leaks");
    if (o.kind == AN_VIEW_MPROF && an_filter_active(&o.filter))
        return an_report_bad(&o, "--mprof shows whole tables: no filters or merges");
    if (o.kind == AN_VIEW_DEFAULT && an_filter_active(&o.filter))
        o.kind = AN_VIEW_STACKS;
    o.filter.top = top_set || !o.json ? (size_t)top : SIZE_MAX;
    if (o.kind == AN_VIEW_LEAKS) {
        char err[PF_ERRMSG_SIZE + 4200];
        int rc = no_default_sup ? 0 : an_suppress_add_builtins(&o.sup);
        for (size_t i = 0; i < n_sup && !rc; i++)
            rc = an_suppress_load(&o.sup, sup_files[i], err, sizeof err);
        if (rc == PF_ENOMEM)
            snprintf(err, sizeof err, "out of memory");
        if (rc) {
            fprintf(stderr, "heapscope report: suppressions: %s\n", err);
            an_suppress_free(&o.sup);
            return 2;
        }
    }
    an_report_t r;
    char err[PF_ERRMSG_SIZE + 64];
    int rc = an_report_load(&r, path, err, sizeof err);
    if (rc) {
        fprintf(stderr, "heapscope report: %s: %s\n", path, err);
        an_report_close(&r);
        an_suppress_free(&o.sup);
        return 1;
    }
    r.top = (size_t)top;
    switch (o.kind) {
    case AN_VIEW_DEFAULT: rc = o.json ? an_report_json(&r, stdout) : an_report_text(&r, stdout); break;
    case AN_VIEW_HISTOGRAM: rc = an_view_histogram(&r, &o, stdout); break;
    case AN_VIEW_TIMELINE: rc = an_view_timeline(&r, &o, stdout); break;
    case AN_VIEW_TREE: rc = an_view_tree(&r, &o, stdout); break;
    case AN_VIEW_MPROF: rc = an_mprof_print(&r, stdout, o.json); break;
    default: rc = an_view_stacks(&r, &o, stdout); break;
    }
    an_report_close(&r);
    an_suppress_free(&o.sup);
    if (fflush(stdout) || ferror(stdout)) {
        fprintf(stderr, "heapscope report: error writing the report\n");
        return 1;
    }
    if (rc == 1) {
        fprintf(stderr, "heapscope report: %s: no stack with id %" PRIu64 "\n", path, o.stack_id);
        return 1;
    }
    if (rc) {
        fprintf(stderr, "heapscope report: out of memory\n");
        return 1;
    }
    return 0;
}
