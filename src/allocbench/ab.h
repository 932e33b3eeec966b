/* ab.h - the types `heapscope bench` passes between its files: an allocator
 * (what to preload and how it was identified), a workload (what to run),
 * and the result of one run (every measure; -1 where not measured). */
#ifndef AB_H
#define AB_H

#include <linux/limits.h> /* PATH_MAX, whatever the feature macros */
#include <stddef.h>

typedef struct ab_alloc {
    char name[64];          /* glibc, jemalloc, tcmalloc, mimalloc or the file's name */
    char path[PATH_MAX];    /* the shared object; for glibc the libc in use */
    char version[128];      /* Debian package and version, or the library's own */
    int preload;            /* 0 for glibc: nothing is preloaded */
} ab_alloc_t;

typedef struct ab_workload {
    char name[64];   /* "plateau", or the command's program name */
    char **argv;     /* NULL-terminated command line */
    int bundled;     /* 1: a wl-* program that prints rss_after_free_kb= */
} ab_workload_t;

typedef struct ab_result {
    double wall_s, user_s, sys_s;
    long peak_rss_kb, minflt, majflt;
    long rss_after_free_kb;            /* -1: the workload did not say */
    long ops;                          /* the workload's ops=, -1 if none */
    long brk, mmap, munmap, madvise;   /* -1: no --syscalls */
    double peak_live_bytes, rss_at_peak_kb, fragmentation; /* -1: no --fragmentation */
    int verified;                      /* 1 yes, 0 another malloc, -1 unknown */
    char malloc_from[PATH_MAX];        /* where the child's `malloc` resolved */
} ab_result_t;

/* Run context shared by the runs of one `heapscope bench`. */
typedef struct ab_ctx {
    const char *checker;  /* libheapscope-abcheck.so, or NULL if not found */
    const char *newshim;  /* libheapscope-abnew.so, or NULL if not found */
    const char *self;     /* our own executable, for `heapscope run` */
    char tmpdir[PATH_MAX];
} ab_ctx_t;

/* All runs of one `heapscope bench`: results[(rep * nw + w) * na + a];
 * done[] says which of them completed. */
typedef struct ab_set {
    size_t nw, na, nrep;
    const ab_workload_t *w;
    const ab_alloc_t *a;
    ab_result_t *r;
    unsigned char *done;
} ab_set_t;

static inline size_t ab_set_index(const ab_set_t *s, size_t rep, size_t w, size_t a)
{
    return (rep * s->nw + w) * s->na + a;
}

#endif
