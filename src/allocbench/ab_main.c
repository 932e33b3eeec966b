/* ab_main.c - `heapscope bench`: options, the run loop, the outputs.
 *
 * Every repetition runs every workload under every allocator, so the
 * allocators alternate and slow drifts of the machine (heat, other load)
 * spread over all of them instead of favouring the first.  Each run is a
 * timed run (ab_run.c), then optionally a strace run (--syscalls) and a run
 * under the collector (--fragmentation); those extra runs are separate so
 * they never slow the timed one. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "allocbench/ab_alloc.h"
#include "allocbench/ab_cmd.h"
#include "allocbench/ab_output.h"
#include "allocbench/ab_passes.h"
#include "allocbench/ab_run.h"
#include "allocbench/ab_verify.h"
#include "allocbench/ab_workloads.h"
#include "common/ut_exe.h"

#define AB_MAX 64 /* allocators, workloads */

typedef struct ab_opts {
    const char *allocators; /* NULL: the four known, those installed */
    long repeat;
    const char *threads, *scale, *csv, *svg;
    int syscalls, fragmentation, list;
    const char *names[AB_MAX];
    size_t nnames;
    char **command; /* after --, or NULL */
} ab_opts_t;

static void usage(FILE *out)
{
    fprintf(out,
            "usage: heapscope bench [OPTIONS] [WORKLOAD...] [-- COMMAND ARGS...]\n"
            "       heapscope bench --list\n"
            "\n"
            "Runs workloads under several malloc implementations (swapped in with\n"
            "LD_PRELOAD) and compares time, memory and system calls.  Without WORKLOAD\n"
            "or COMMAND, runs every bundled workload.\n"
            "  --allocators LIST  comma-separated: glibc, jemalloc, tcmalloc, mimalloc or\n"
            "                     a path to a .so (default: those four that are installed)\n"
            "  --repeat N         runs of each workload per allocator (default 3)\n"
            "  --threads N        passed to bundled workloads as -t N\n"
            "  --scale S          passed to bundled workloads as -s S\n"
            "  --csv FILE         one row per workload, allocator and repetition\n"
            "  --svg DIR          one bar chart per measure, DIR/MEASURE.svg\n"
            "  --syscalls         also count brk/mmap/munmap/madvise (separate strace run)\n"
            "  --fragmentation    also run under the collector for the live bytes at the\n"
            "                     peak: fragmentation = peak RSS / live bytes at peak\n"
            "  --list             name the bundled workloads\n");
}

/* Parse a number in [lo, hi]; -1 with a message if it is not one. */
static long number(const char *opt, const char *v, long lo, long hi)
{
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (errno || !*v || *end || n < lo || n > hi) {
        fprintf(stderr, "heapscope bench: %s must be a number from %ld to %ld, not '%s'\n", opt,
                lo, hi, v);
        return -1;
    }
    return n;
}

/* Fill o from argv; 0, 1 (--help printed) or -1 (message printed). */
static int parse(int argc, char **argv, ab_opts_t *o)
{
    static const char *valued[] = {"--allocators", "--repeat", "--threads", "--scale", "--csv",
                                   "--svg"};
    const char **dst[] = {&o->allocators, NULL, &o->threads, &o->scale, &o->csv, &o->svg};
    const char *repeat = NULL;
    dst[1] = &repeat;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "heapscope bench: '--' needs a command after it\n");
                return -1;
            }
            o->command = argv + i + 1;
            break;
        }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 1;
        }
        if (!strcmp(a, "--list")) {
            o->list = 1;
            continue;
        }
        if (!strcmp(a, "--syscalls")) {
            o->syscalls = 1;
            continue;
        }
        if (!strcmp(a, "--fragmentation")) {
            o->fragmentation = 1;
            continue;
        }
        size_t k, nv = sizeof valued / sizeof valued[0];
        for (k = 0; k < nv; k++) {
            size_t l = strlen(valued[k]);
            if (!strcmp(a, valued[k])) {
                if (i + 1 >= argc) {
                    fprintf(stderr, "heapscope bench: %s needs a value\n", a);
                    return -1;
                }
                *dst[k] = argv[++i];
                break;
            }
            if (!strncmp(a, valued[k], l) && a[l] == '=') {
                *dst[k] = a + l + 1;
                break;
            }
        }
        if (k < nv)
            continue;
        if (a[0] == '-') {
            fprintf(stderr, "heapscope bench: unknown option '%s'\n", a);
            usage(stderr);
            return -1;
        }
        if (o->nnames == AB_MAX) {
            fprintf(stderr, "heapscope bench: at most %d workloads\n", AB_MAX);
            return -1;
        }
        o->names[o->nnames++] = a;
    }
    o->repeat = 3;
    if (repeat && (o->repeat = number("--repeat", repeat, 1, 1000)) < 0)
        return -1;
    if (o->threads && number("--threads", o->threads, 1, 4096) < 0)
        return -1;
    if (o->scale && number("--scale", o->scale, 1, 4096) < 0)
        return -1;
    return 0;
}

/* Resolve the allocator list into a[]; returns the count, or -1. */
static int resolve_allocators(const ab_opts_t *o, ab_alloc_t *a)
{
    char err[PATH_MAX + 256];
    int n = 0;
    if (!o->allocators) { /* default: the known ones that are installed */
        static const char *def[] = {"glibc", "jemalloc", "tcmalloc", "mimalloc"};
        for (size_t i = 0; i < 4; i++) {
            if (ab_alloc_resolve(def[i], &a[n], err, sizeof err) == 0)
                n++;
            else
                fprintf(stderr, "heapscope bench: skipping %s: %s\n", def[i], err);
        }
        return n;
    }
    char *list = strdup(o->allocators), *save = NULL;
    if (!list)
        return -1;
    for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (n == AB_MAX) {
            fprintf(stderr, "heapscope bench: at most %d allocators\n", AB_MAX);
            free(list);
            return -1;
        }
        if (ab_alloc_resolve(tok, &a[n], err, sizeof err) < 0) {
            fprintf(stderr, "heapscope bench: %s\n", err);
            free(list);
            return -1;
        }
        n++;
    }
    free(list);
    if (!n)
        fprintf(stderr, "heapscope bench: --allocators names no allocator\n");
    return n ? n : -1;
}

/* argv of bundled workload `name` in dir, with -t/-s as given. */
static char **bundled_argv(const char *dir, const char *name, const ab_opts_t *o)
{
    char **argv = calloc(6, sizeof *argv);
    if (!argv || asprintf(&argv[0], "%s/wl-%s", dir, name) < 0) {
        free(argv);
        return NULL;
    }
    int k = 1;
    if (o->threads) {
        argv[k++] = "-t";
        argv[k++] = (char *)o->threads;
    }
    if (o->scale) {
        argv[k++] = "-s";
        argv[k++] = (char *)o->scale;
    }
    return argv;
}

/* Fill w[] from the names (or all bundled ones) and the command; returns
 * the count, or -1 with a message. */
static int resolve_workloads(const ab_opts_t *o, ab_workload_t *w)
{
    char dir[PATH_MAX];
    char **all = NULL;
    size_t nall = 0;
    int have_dir = ab_workloads_dir(dir, sizeof dir) == 0;
    if (have_dir)
        ab_workloads_list(dir, &all, &nall);
    int n = 0;
    if (!o->nnames && !o->command) {
        if (!nall) {
            fprintf(stderr, "heapscope bench: no bundled workloads found (looked in %s; set "
                            "HEAPSCOPE_BENCH_DIR)\n",
                    have_dir ? dir : "../bench, libexec/heapscope");
            ab_workloads_free(all, nall);
            return -1;
        }
        for (size_t i = 0; i < nall && n < AB_MAX; i++, n++) {
            snprintf(w[n].name, sizeof w[n].name, "%s", all[i]);
            w[n].argv = bundled_argv(dir, all[i], o);
            w[n].bundled = 1;
        }
    }
    for (size_t i = 0; i < o->nnames; i++) {
        const char *name = o->names[i];
        if (!strncmp(name, "wl-", 3))
            name += 3;
        size_t k = 0;
        while (k < nall && strcmp(all[k], name))
            k++;
        if (k == nall) {
            fprintf(stderr, "heapscope bench: unknown workload '%s' (`heapscope bench --list` "
                            "names them)\n",
                    o->names[i]);
            ab_workloads_free(all, nall);
            return -1;
        }
        snprintf(w[n].name, sizeof w[n].name, "%s", name);
        w[n].argv = bundled_argv(dir, name, o);
        w[n++].bundled = 1;
    }
    ab_workloads_free(all, nall);
    if (o->command && n < AB_MAX) {
        const char *base = strrchr(o->command[0], '/');
        snprintf(w[n].name, sizeof w[n].name, "%s", base ? base + 1 : o->command[0]);
        w[n].argv = o->command;
        w[n++].bundled = 0;
    }
    for (int i = 0; i < n; i++)
        if (!w[i].argv) {
            fprintf(stderr, "heapscope bench: out of memory\n");
            return -1;
        }
    return n;
}

static int list_workloads(void)
{
    char dir[PATH_MAX];
    char **all = NULL;
    size_t n = 0;
    if (ab_workloads_dir(dir, sizeof dir) < 0 || ab_workloads_list(dir, &all, &n) < 0 || !n) {
        fprintf(stderr, "heapscope bench: no bundled workloads found (set HEAPSCOPE_BENCH_DIR)\n");
        return 1;
    }
    for (size_t i = 0; i < n; i++)
        printf("%s\n", all[i]);
    ab_workloads_free(all, n);
    return 0;
}

/* Remove the scratch files and the scratch directory. */
static void cleanup_tmp(const ab_ctx_t *ctx)
{
    static const char *files[] = {"stdout", "verify", "strace", "frag.hsp"};
    char p[PATH_MAX + 32];
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", ctx->tmpdir, files[i]);
        unlink(p);
    }
    rmdir(ctx->tmpdir);
}

/* One repetition of workload w under allocator a: the timed run and the
 * extra passes.  Returns 0, 1 (ran, but used another malloc) or -1. */
static int run_one(const ab_ctx_t *ctx, const ab_opts_t *o, const ab_workload_t *w,
                   const ab_alloc_t *a, ab_result_t *r)
{
    char err[PATH_MAX + 512];
    memset(r, 0, sizeof *r);
    r->brk = r->mmap = r->munmap = r->madvise = -1;
    r->peak_live_bytes = r->rss_at_peak_kb = r->fragmentation = -1;
    if (ab_run_timed(ctx, w, a, r, err, sizeof err) < 0) {
        fprintf(stderr, "heapscope bench: %s\n", err);
        return -1;
    }
    if (o->syscalls && ab_syscalls_count(ctx, w, a, r, err, sizeof err) < 0) {
        fprintf(stderr, "heapscope bench: %s\n", err);
        return -1;
    }
    if (o->fragmentation && ab_frag_measure(ctx, w, a, r, err, sizeof err) < 0) {
        fprintf(stderr, "heapscope bench: %s\n", err);
        return -1;
    }
    if (r->verified == 0) {
        fprintf(stderr, "heapscope bench: '%s' under %s used malloc from %s, not %s\n", w->name,
                a->name, r->malloc_from, a->path);
        return 1;
    }
    return 0;
}

int ab_main(int argc, char **argv)
{
    ab_opts_t o;
    memset(&o, 0, sizeof o);
    int rc = parse(argc, argv, &o);
    if (rc)
        return rc > 0 ? 0 : 2;
    if (o.list)
        return list_workloads();
    static ab_alloc_t allocs[AB_MAX];
    static ab_workload_t works[AB_MAX + 1];
    int na = resolve_allocators(&o, allocs);
    if (na <= 0)
        return 2;
    int nw = resolve_workloads(&o, works);
    if (nw <= 0)
        return 2;

    ab_ctx_t ctx;
    char checker[PATH_MAX], self[PATH_MAX];
    memset(&ctx, 0, sizeof ctx);
    if (ab_verify_find_checker(checker, sizeof checker) == 0)
        ctx.checker = checker;
    else
        fprintf(stderr, "heapscope bench: libheapscope-abcheck.so not found: runs will not be "
                        "verified (set HEAPSCOPE_ABCHECK_LIB)\n");
    char newshim[PATH_MAX];
    if (o.fragmentation) {
        if (ab_verify_find_lib("libheapscope-abnew.so", "HEAPSCOPE_ABNEW_LIB", newshim,
                               sizeof newshim) == 0)
            ctx.newshim = newshim;
        else
            fprintf(stderr, "heapscope bench: libheapscope-abnew.so not found: C++ programs' "
                            "live bytes will be missed under allocators that define operator "
                            "new\n");
    }
    ut_exe_path(self, sizeof self); /* "" without /proc */
    ctx.self = self;
    const char *tmp = getenv("TMPDIR");
    snprintf(ctx.tmpdir, sizeof ctx.tmpdir, "%s/heapscope-bench.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(ctx.tmpdir)) {
        fprintf(stderr, "heapscope bench: cannot create %s: %s\n", ctx.tmpdir, strerror(errno));
        return 1;
    }

    ab_set_t set = {(size_t)nw, (size_t)na, (size_t)o.repeat, works, allocs, NULL, NULL};
    size_t total = set.nrep * set.nw * set.na;
    set.r = calloc(total, sizeof *set.r);
    set.done = calloc(total, 1);
    if (!set.r || !set.done) {
        fprintf(stderr, "heapscope bench: out of memory\n");
        cleanup_tmp(&ctx);
        return 1;
    }
    int status = 0, failed = 0;
    size_t count = 0;
    for (size_t rep = 0; rep < set.nrep && !failed; rep++)
        for (size_t w = 0; w < set.nw && !failed; w++)
            for (size_t a = 0; a < set.na && !failed; a++) {
                size_t i = ab_set_index(&set, rep, w, a);
                fprintf(stderr, "[%zu/%zu] %s under %s, run %zu", ++count, total, works[w].name,
                        allocs[a].name, rep + 1);
                int r = run_one(&ctx, &o, &works[w], &allocs[a], &set.r[i]);
                if (r < 0) {
                    failed = 1;
                    status = 1;
                    break;
                }
                fprintf(stderr, ": %.3f s, %ld KiB%s\n", set.r[i].wall_s, set.r[i].peak_rss_kb,
                        set.r[i].verified == 1 ? "" : set.r[i].verified == 0 ? " (WRONG malloc)"
                                                                             : " (unverified)");
                set.done[i] = 1;
                if (r > 0)
                    status = 1;
            }
    cleanup_tmp(&ctx);
    size_t ndone = 0;
    for (size_t i = 0; i < total; i++)
        ndone += set.done[i];
    if (ndone) {
        printf("\n");
        ab_table_print(&set, stdout);
        if (o.csv && ab_csv_write(&set, o.csv, o.threads, o.scale) < 0) {
            fprintf(stderr, "heapscope bench: cannot write %s: %s\n", o.csv, strerror(errno));
            status = 1;
        }
        if (o.svg) {
            char err[PATH_MAX + 256];
            if (ab_svg_write(&set, o.svg, err, sizeof err) < 0) {
                fprintf(stderr, "heapscope bench: %s\n", err);
                status = 1;
            }
        }
    }
    if (failed)
        fprintf(stderr, "heapscope bench: stopped after a failed run\n");
    for (int w = 0; w < nw; w++)
        if (works[w].bundled) {
            free(works[w].argv[0]);
            free(works[w].argv);
        }
    free(set.r);
    free(set.done);
    return status;
}
