#define _POSIX_C_SOURCE 200809L
/* an_html.c - write the `heapscope html` page: the embedded style and
 * script (an_asset_* from the generated an_html_assets.h) around the
 * profile's data as JSON.
 *
 * The data (read by src/analyse/html/report.js):
 *   title, exe, summary {...}            the process figures
 *   names   ["main", ...]                distinct function names
 *   frames  [name * 4 + class, ...]      class: 0 program, 1 libc,
 *                                        2 libstdc++, 3 other
 *   stacks  [[frame, ...], ...]          outermost frame first
 *   ids     [stack id, ...]
 *   figs    [allocations, bytes, leaked, peak, temporary, t, ...]
 *           six numbers per stack; t = time (ns) of its last COUNTERS
 *           snapshot, i.e. when it last allocated or freed
 *   samples [t, heap, rss, ...]          three numbers per SAMPLES entry
 *   hist    [[size_lo, size_hi, allocations, bytes], ...] power-of-two
 *           buckets of requested sizes
 * The JSON is written through a memory stream so that "</" can become
 * "<\/" and no name can close the <script> element early. */
#include "analyse/an_html.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analyse/an_flame.h"
#include "analyse/an_json.h"
#include "analyse/an_report.h"

/* The page's script and style, generated from src/analyse/html/ by
 * cmake/embed.cmake.  A build without that step still compiles, and
 * an_html_main() then says what is missing. */
#ifdef HS_HTML_ASSETS
#include HS_HTML_ASSETS
#else
static const char an_asset_report_js[] = "";
static const char an_asset_report_css[] = "";
#endif

/* Power-of-two size buckets: bucket k holds sizes [2^(k-1), 2^k), 0 in 0. */
#define HIST_N 65

static void write_hist(an_json_t *j, const pf_profile_t *p)
{
    uint64_t cnt[HIST_N] = {0}, bytes[HIST_N] = {0};
    for (size_t i = 0; i < p->n_counters; i++) {
        const pf_counter_t *c = &p->counters[i];
        int k = 0;
        for (uint64_t s = c->size_lo; s; s >>= 1)
            k++;
        cnt[k] = an_add(cnt[k], c->allocations);
        bytes[k] = an_add(bytes[k], c->bytes_allocated);
    }
    an_json_key(j, "hist");
    an_json_array_begin(j);
    for (int k = 0; k < HIST_N; k++) {
        if (!cnt[k])
            continue;
        an_json_array_begin(j);
        an_json_u64(j, k ? (uint64_t)1 << (k - 1) : 0);
        an_json_u64(j, k == 0 ? 0 : k == 64 ? UINT64_MAX : ((uint64_t)1 << k) - 1);
        an_json_u64(j, cnt[k]);
        an_json_u64(j, bytes[k]);
        an_json_array_end(j);
    }
    an_json_array_end(j);
}

/* The data object described above.  Returns 0 or a PF_E* code. */
static int write_data(an_json_t *j, an_report_t *r, const char *title)
{
    an_flame_t names; /* only its string table is used */
    memset(&names, 0, sizeof names);
    const an_summary_t *s = &r->model.sum;
    an_json_object_begin(j);
    an_json_kv_str(j, "title", title);
    an_json_kv_str(j, "exe", r->prof->info.exe);
    an_json_key(j, "summary");
    an_json_object_begin(j);
    an_json_kv_u64(j, "allocations", s->allocations);
    an_json_kv_u64(j, "frees", s->frees);
    an_json_kv_u64(j, "bytes_allocated", s->bytes_allocated);
    an_json_kv_u64(j, "temporary", s->temporary);
    an_json_kv_u64(j, "peak_bytes", s->peak_bytes);
    an_json_kv_u64(j, "peak_t", s->peak_t);
    an_json_kv_u64(j, "leaked_bytes", s->leaked_bytes);
    an_json_kv_u64(j, "leaked_allocations", s->leaked_allocations);
    an_json_kv_u64(j, "run_time_ns", s->run_time_ns);
    an_json_kv_u64(j, "threads", s->threads);
    an_json_kv_u64(j, "rss_peak", s->rss_peak);
    an_json_kv_u64(j, "stacks", r->model.n_stats);
    an_json_kv_bool(j, "final", r->prof->final);
    an_json_object_end(j);

    /* frames: (name, class) pairs interned as name * 4 + class */
    int rc = 0;
    an_json_key(j, "stacks");
    an_json_array_begin(j);
    for (size_t i = 0; i < r->model.n_stats && !rc; i++) {
        rc = an_frames_get(&r->frames, r->prof, r->syms, &r->prof->stacks[r->model.stats[i].stack]);
        an_json_array_begin(j);
        for (size_t k = r->frames.n; k-- > 0 && !rc;) {
            const an_frame_t *fr = &r->frames.v[k];
            uint32_t n = an_flame_intern(&names, fr->function ? fr->function : "??");
            if (n == UINT32_MAX)
                rc = PF_ENOMEM;
            an_json_u64(j, (uint64_t)n * 4 + an_flame_module_class(r->prof, fr->module));
        }
        an_json_array_end(j);
    }
    an_json_array_end(j);
    an_json_key(j, "names");
    an_json_array_begin(j);
    for (size_t i = 0; i < names.n_names; i++)
        an_json_str(j, names.names[i]);
    an_json_array_end(j);
    an_flame_free(&names);

    an_json_key(j, "ids");
    an_json_array_begin(j);
    for (size_t i = 0; i < r->model.n_stats; i++)
        an_json_u64(j, r->model.stats[i].id);
    an_json_array_end(j);
    an_json_key(j, "figs");
    an_json_array_begin(j);
    for (size_t i = 0; i < r->model.n_stats; i++) {
        uint64_t c[AN_FLAME_NCOSTS], t = 0;
        an_flame_stack_costs(&r->model.stats[i], c);
        for (int k = 0; k < AN_FLAME_NCOSTS; k++)
            an_json_u64(j, c[k]);
        const pf_stack_t *st = &r->prof->stacks[r->model.stats[i].stack];
        for (size_t k = 0; k < st->n_counters; k++)
            if (r->prof->counters[st->first_counter + k].t > t)
                t = r->prof->counters[st->first_counter + k].t;
        an_json_u64(j, t);
    }
    an_json_array_end(j);
    an_json_key(j, "samples");
    an_json_array_begin(j);
    for (size_t i = 0; i < r->prof->n_samples; i++) {
        an_json_u64(j, r->prof->samples[i].t);
        an_json_u64(j, r->prof->samples[i].heap);
        an_json_u64(j, r->prof->samples[i].rss);
    }
    an_json_array_end(j);
    write_hist(j, r->prof);
    an_json_object_end(j);
    return rc;
}

/* Write s as HTML text (for the <title>). */
static void html_text(FILE *out, const char *s)
{
    for (; *s; s++)
        if (*s == '<')
            fputs("&lt;", out);
        else if (*s == '&')
            fputs("&amp;", out);
        else
            fputc(*s, out);
}

/* The whole page.  Returns 0 or a PF_E* code. */
static int write_page(FILE *out, an_report_t *r, const char *title)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    if (!mem)
        return PF_ENOMEM;
    an_json_t j;
    an_json_init(&j, mem);
    int rc = write_data(&j, r, title);
    if (fclose(mem) || !buf) {
        free(buf);
        return PF_ENOMEM;
    }
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>", out);
    html_text(out, title);
    fprintf(out, "</title>\n<style>\n%s</style>\n</head>\n<body>\n"
                 "<div id=\"errors\"></div>\n<div id=\"app\">Loading...</div>\n"
                 "<script id=\"data\" type=\"application/json\">",
            an_asset_report_css);
    for (size_t i = 0; i < len; i++) {
        if (buf[i] == '<' && buf[i + 1] == '/')
            fputs("<\\", out);
        else
            fputc(buf[i], out);
    }
    fprintf(out, "</script>\n<script>\n%s</script>\n</body></html>\n", an_asset_report_js);
    free(buf);
    return rc;
}

static void usage(FILE *out)
{
    fprintf(out, "usage: heapscope html [--title TEXT] -o OUT.html FILE\n"
                 "Write one self-contained HTML report of the profile FILE (works offline):\n"
                 "summary, heap/RSS timeline (drag to select a time range), flamegraph with a\n"
                 "cost selector, sortable tables of stacks, leaks and temporaries, histogram.\n");
}

static int bad(const char *msg)
{
    fprintf(stderr, "heapscope html: %s\n", msg);
    usage(stderr);
    return 2;
}

int an_html_main(int argc, char **argv)
{
    const char *path = NULL, *outpath = NULL, *title = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--title")) {
            if (!next)
                return bad("--title needs a text");
            title = argv[++i];
        } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            if (!next)
                return bad("-o needs a file name");
            outpath = argv[++i];
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "heapscope html: unknown option '%s'\n", a);
            usage(stderr);
            return 2;
        } else if (path) {
            return bad("give one profile");
        } else
            path = a;
    }
    if (!path)
        return bad("no profile given");
    if (!outpath)
        return bad("no output given (-o OUT.html)");
#ifndef HS_HTML_ASSETS
    fprintf(stderr, "heapscope html: this heapscope was built without the page's scripts "
                    "(cmake/embed.cmake)\n");
    return 1;
#endif
    an_report_t r;
    char err[PF_ERRMSG_SIZE];
    if (an_report_load(&r, path, err, sizeof err)) {
        fprintf(stderr, "heapscope html: %s: %s\n", path, err);
        an_report_close(&r);
        return 1;
    }
    char deftitle[256];
    if (!title) {
        snprintf(deftitle, sizeof deftitle, "heapscope: %s", path);
        title = deftitle;
    }
    FILE *out = fopen(outpath, "w");
    if (!out) {
        fprintf(stderr, "heapscope html: cannot write %s: %s\n", outpath, strerror(errno));
        an_report_close(&r);
        return 1;
    }
    int rc = write_page(out, &r, title);
    if (fclose(out) && !rc)
        rc = PF_EIO;
    if (rc)
        fprintf(stderr, "heapscope html: %s\n",
                rc == PF_ENOMEM ? "out of memory" : "cannot write the page");
    an_report_close(&r);
    return rc ? 1 : 0;
}
