/* ab_frag.c - fragmentation at the peak: footprint over live bytes.
 * The workload runs under our own `heapscope run` (this executable), with
 * the allocator preloaded after the collector, so the collector sees every
 * request and forwards it to the allocator.  The profile's `peak_bytes` is
 * the requested bytes live at the peak; its timeline's RSS nearest the
 * peak's time is kept as rss_at_peak_kb.
 *
 * The ratio itself divides the peak RSS of the *timed* run (no collector)
 * by those live bytes: the collector's own memory is part of the RSS in its
 * timeline and it depends on the allocator (measured on the 100 MiB
 * plateau: +14 MiB under glibc, +57 MiB under jemalloc, tcmalloc and
 * mimalloc, whose blocks are spread over more address space), so a ratio
 * from the collector's RSS would compare the collector, not the allocators.
 * For workloads whose RSS peaks with the heap (every bundled memory shape)
 * the timed run's peak RSS is the footprint at the heap's peak.
 *
 * Allocators that define C++ operator new get libheapscope-abnew.so in
 * front of them in this pass (ab_newshim.c), or the collector would not
 * see a C++ program's `new`. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "allocbench/ab_passes.h"
#include "allocbench/ab_run.h"

/* The number after `"key":` in json at or after `from`, in *v; returns the
 * position after it or NULL. */
static const char *json_num(const char *from, const char *key, double *v)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = strstr(from, pat);
    if (!p)
        return NULL;
    p += strlen(pat);
    char *end;
    *v = strtod(p, &end);
    return end == p ? NULL : end;
}

int ab_frag_parse(const char *json, double *peak_bytes, double *rss_bytes)
{
    double peak_t, rss_peak;
    if (!json || !json_num(json, "peak_bytes", peak_bytes) ||
        !json_num(json, "peak_time_ns", &peak_t) || !json_num(json, "rss_peak", &rss_peak))
        return -1;
    *rss_bytes = rss_peak;
    const char *p = strstr(json, "\"timeline\":");
    const char *stop = p ? strstr(p, "]") : NULL;
    double best = -1;
    while (p && stop) {
        double t, rss;
        const char *q = json_num(p, "t_ns", &t);
        if (!q || q > stop)
            break;
        const char *q2 = json_num(q, "rss", &rss);
        if (!q2 || q2 > stop)
            break;
        double d = t > peak_t ? t - peak_t : peak_t - t;
        if (best < 0 || d < best) {
            best = d;
            *rss_bytes = rss;
        }
        p = q2;
    }
    return 0;
}

int ab_frag_measure(const ab_ctx_t *ctx, const ab_workload_t *w, const ab_alloc_t *a,
                    ab_result_t *r, char *err, size_t errsz)
{
    char prof[PATH_MAX + 16];
    snprintf(prof, sizeof prof, "%s/frag.hsp", ctx->tmpdir);
    unlink(prof);
    size_t n = 0;
    while (w->argv[n])
        n++;
    char **argv = calloc(n + 8, sizeof *argv);
    if (!argv) {
        snprintf(err, errsz, "out of memory");
        return -1;
    }
    size_t k = 0;
    argv[k++] = (char *)ctx->self;
    argv[k++] = "run";
    argv[k++] = "-q";
    argv[k++] = "-o";
    argv[k++] = prof;
    argv[k++] = "--";
    for (size_t i = 0; i < n; i++)
        argv[k++] = w->argv[i];
    /* `heapscope run` puts the collector in front of an existing
     * LD_PRELOAD: collector, then the operator new shim, then the
     * allocator (glibc needs no shim: libstdc++'s new calls malloc). */
    char preload[2 * PATH_MAX + 2];
    snprintf(preload, sizeof preload, "%s%s%s", a->preload && ctx->newshim ? ctx->newshim : "",
             a->preload && ctx->newshim ? ":" : "", a->preload ? a->path : "");
    char *out = NULL;
    int st = ab_capture(argv, a->preload ? preload : NULL, 1, &out);
    free(out);
    free(argv);
    if (st != 0) {
        snprintf(err, errsz, "'%s' under %s failed under the collector (status %d)", w->name,
                 a->name, st);
        return -1;
    }
    char *rep[] = {(char *)ctx->self, "report", "--json", prof, NULL};
    char *json = NULL;
    st = ab_capture(rep, NULL, 1, &json);
    double peak = 0, rss = 0;
    int rc = st == 0 ? ab_frag_parse(json, &peak, &rss) : -1;
    free(json);
    unlink(prof);
    if (rc < 0 || peak <= 0) {
        snprintf(err, errsz, "no peak in the profile of '%s' under %s", w->name, a->name);
        return -1;
    }
    r->peak_live_bytes = peak;
    r->rss_at_peak_kb = rss / 1024;
    r->fragmentation = r->peak_rss_kb > 0 ? (double)r->peak_rss_kb * 1024 / peak : -1;
    return 0;
}
