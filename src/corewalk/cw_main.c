/* cw_main.c - `heapscope core`: option parsing and the run of one walk.
 *
 *   heapscope core [--json] [--summary] [--fragmentation] [--leaks] [--chunks]
 *                  [--no-symbols] (CORE | --pid PID)
 *
 * Exit status: 0 report printed, 1 input that cannot be analysed (not a
 * core, truncated, other architecture, no heap, process not traceable),
 * 2 usage error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cw.h"
#include "cw_cmd.h"

static void usage(FILE *o)
{
    fprintf(o, "usage: heapscope core [--json] [--summary] [--fragmentation] [--leaks] [--chunks]\n"
               "                      [--no-symbols] (CORE | --pid PID)\n"
               "glibc heap of an x86-64 core file or of a live process (stopped while read):\n"
               "arenas, chunk classes, mallinfo2, fragmentation, leak candidates.\n");
}

/* Walks the core or process named by argv and prints the report. */
int cw_main(int argc, char **argv)
{
    int json = 0, views = 0, use_symbols = 1, pid = 0;
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--json")) json = 1;
        else if (!strcmp(a, "--summary")) views |= CW_VIEW_SUMMARY;
        else if (!strcmp(a, "--fragmentation")) views |= CW_VIEW_FRAG;
        else if (!strcmp(a, "--leaks")) views |= CW_VIEW_LEAKS;
        else if (!strcmp(a, "--chunks")) views |= CW_VIEW_CHUNKS;
        else if (!strcmp(a, "--no-symbols")) use_symbols = 0;
        else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--pid") && i + 1 < argc) {
            char *end;
            long v = strtol(argv[++i], &end, 10);
            if (*end || v <= 0 || v > 0x7fffffff) {
                fprintf(stderr, "heapscope core: bad pid '%s'\n", argv[i]);
                return 2;
            }
            pid = (int)v;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "heapscope core: unknown option '%s'\n", a);
            usage(stderr);
            return 2;
        } else if (!path) {
            path = a;
        } else {
            usage(stderr);
            return 2;
        }
    }
    if (!!path == !!pid) {
        usage(stderr);
        return 2;
    }
    /* Text: the summary unless a view is named.  JSON is for programs: the
     * whole analysis (all but the chunk list) unless views are named. */
    if (!views)
        views = json ? CW_VIEW_SUMMARY | CW_VIEW_FRAG | CW_VIEW_LEAKS : CW_VIEW_SUMMARY;
    char err[512];
    cw_core_t *c;
    int rc = pid ? cw_core_open_pid(pid, &c, err, sizeof err) : cw_core_open_file(path, &c, err, sizeof err);
    if (rc) {
        fprintf(stderr, "heapscope core: %s\n", err);
        return 1;
    }
    cw_walk_t *w;
    if (cw_walk_run(c, use_symbols, &w, err, sizeof err)) {
        fprintf(stderr, "heapscope core: %s\n", err);
        cw_core_close(c);
        return 1;
    }
    cw_frag_t f;
    cw_leaks_t l = {0};
    cw_frag_compute(w, &f);
    if (views & (CW_VIEW_LEAKS | CW_VIEW_CHUNKS))
        cw_mark_run(w, &l);
    if (json)
        cw_report_json(stdout, w, views, &f, &l);
    else
        cw_report_text(stdout, w, views, &f, &l);
    cw_frag_free(&f);
    cw_walk_free(w);
    cw_core_close(c);
    return 0;
}
