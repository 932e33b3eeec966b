/* an_report.c - `heapscope report`: option parsing and the shared set-up
 * of both outputs (an_report_text.c, an_report_json.c).
 *
 *   heapscope report [--json] [--top N] FILE
 */
#include "analyse/an_report.h"

#include <stdlib.h>
#include <string.h>

#include "analyse/an_cmd.h"

#define AN_TOP_DEFAULT 10
#define AN_TOP_MAX 1000000

static void an_report_usage(FILE *out)
{
    fprintf(out,
            "usage: heapscope report [--json] [--top N] FILE\n"
            "\n"
            "Summarise a heapscope profile: totals, peak, leaks and the top allocation stacks.\n"
            "\n"
            "  --json     print one JSON object with the summary and every stack\n"
            "  --top N    stacks per section of the text report (default %d)\n"
            "  --help     show this help\n",
            AN_TOP_DEFAULT);
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

/* Parse "--top" values: a decimal 0..AN_TOP_MAX.  Returns 0 or -1. */
static int an_report_parse_top(const char *s, size_t *top)
{
    char *end;
    if (!s || !*s || *s == '-')
        return -1;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end || v > AN_TOP_MAX)
        return -1;
    *top = (size_t)v;
    return 0;
}

int an_report_main(int argc, char **argv)
{
    int json = 0, opts = 1;
    size_t top = AN_TOP_DEFAULT;
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (opts && !strcmp(a, "--")) {
            opts = 0;
        } else if (opts && (!strcmp(a, "--help") || !strcmp(a, "-h"))) {
            an_report_usage(stdout);
            return 0;
        } else if (opts && !strcmp(a, "--json")) {
            json = 1;
        } else if (opts && (!strcmp(a, "--top") || !strncmp(a, "--top=", 6))) {
            const char *v = a[5] == '=' ? a + 6 : (i + 1 < argc ? argv[++i] : NULL);
            if (an_report_parse_top(v, &top)) {
                fprintf(stderr, "heapscope report: --top needs a number from 0 to %d\n", AN_TOP_MAX);
                return 2;
            }
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
    }
    if (!path) {
        an_report_usage(stderr);
        return 2;
    }
    an_report_t r;
    char err[PF_ERRMSG_SIZE + 64];
    int rc = an_report_load(&r, path, err, sizeof err);
    if (rc) {
        fprintf(stderr, "heapscope report: %s: %s\n", path, err);
        an_report_close(&r);
        return 1;
    }
    r.top = top;
    rc = json ? an_report_json(&r, stdout) : an_report_text(&r, stdout);
    an_report_close(&r);
    if (fflush(stdout) || ferror(stdout)) {
        fprintf(stderr, "heapscope report: error writing the report\n");
        return 1;
    }
    if (rc) {
        fprintf(stderr, "heapscope report: out of memory\n");
        return 1;
    }
    return 0;
}
