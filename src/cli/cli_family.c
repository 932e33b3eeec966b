/* cli_family.c - the other profiles of one `heapscope run`: those that the
 * started process's fork children, their children, and the programs any
 * of them exec'd wrote beside the first.
 *
 * col_output.c names them: the output pattern with the process's own pid
 * (%p), or NAME.<pid>, NAME.<pid>.1, ... where the name was taken (a
 * pattern without %p, an exec'd image of the same pid).  So a candidate is
 * a file of the pattern's directory whose name the pattern matches (%p:
 * digits, %e: any name), with up to two such suffixes, modified since the
 * run began.  It is one of the run's when its INFO says it started since
 * then and its process, or its parent, is the started process or one
 * already found: so the profiles of another run writing to the same
 * directory, or of an earlier one, are left alone.  Only each candidate's
 * INFO is read (pf_load_who).  Runs after the program has exited
 * (cli_finish.c), in the launcher or the analyser. */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "common/ut_path.h"
#include "format/pf_load.h"

#define FAMILY_MAX 4096 /* profiles of a run kept at most */
/* A file's time is the kernel's coarse clock, up to a tick behind
 * CLOCK_REALTIME: a profile written just after the run began may seem
 * older.  Its INFO's start time, from CLOCK_REALTIME, is the exact test. */
#define MTIME_SLACK_NS 2000000000ull

/* Does name match pat (a file name pattern of col_output.c: %p one or
 * more digits, %e one or more characters, %% a '%'), then up to `sfx`
 * suffixes of '.' and digits? */
static int match(const char *pat, const char *name, int sfx)
{
    if (!*pat) {
        if (!*name)
            return 1;
        if (sfx == 0 || name[0] != '.' || name[1] < '0' || name[1] > '9')
            return 0;
        name++;
        while (*name >= '0' && *name <= '9')
            name++;
        return match(pat, name, sfx - 1);
    }
    if (pat[0] == '%' && (pat[1] == 'p' || pat[1] == 'e')) {
        int digits = pat[1] == 'p';
        for (const char *s = name; *s && (!digits || (*s >= '0' && *s <= '9')); s++)
            if (match(pat + 2, s + 1, sfx))
                return 1;
        return 0;
    }
    if (pat[0] == '%' && pat[1] == '%')
        return *name == '%' && match(pat + 2, name + 1, sfx);
    return *pat == *name && match(pat + 1, name + 1, sfx);
}

typedef struct candidate {
    char *path;
    uint64_t pid, ppid, start_ns;
    int kept;
} candidate_t;

/* The run's candidates in dir whose names match base, with who wrote
 * them.  Returns how many, in *out (freed by the caller). */
static size_t candidates(const char *dir, const char *base, const struct stat *first,
                         uint64_t since_ns, candidate_t **out)
{
    *out = NULL;
    DIR *d = opendir(*dir ? dir : ".");
    if (!d)
        return 0;
    candidate_t *c = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < FAMILY_MAX) {
        if (!match(base, e->d_name, 2))
            continue;
        char *path;
        if (asprintf(&path, "%s%s", dir, e->d_name) < 0)
            break;
        struct stat st;
        pf_load_who_t w;
        if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode) ||
            (uint64_t)st.st_mtim.tv_sec * 1000000000u + (uint64_t)st.st_mtim.tv_nsec +
                    MTIME_SLACK_NS < since_ns ||
            (st.st_dev == first->st_dev && st.st_ino == first->st_ino) ||
            pf_load_who(path, &w) != 0 || w.start_real_ns < since_ns) {
            free(path);
            continue;
        }
        if (n == cap) {
            size_t ncap = cap ? 2 * cap : 16;
            candidate_t *nc = realloc(c, ncap * sizeof *c);
            if (!nc) {
                free(path);
                break;
            }
            c = nc;
            cap = ncap;
        }
        c[n++] = (candidate_t){path, w.pid, w.ppid, w.start_real_ns, 0};
    }
    closedir(d);
    *out = c;
    return n;
}

static int by_start(const void *a, const void *b)
{
    const candidate_t *x = a, *y = b;
    if (x->start_ns != y->start_ns)
        return x->start_ns < y->start_ns ? -1 : 1;
    return strcmp(x->path, y->path);
}

/* Is pid the started process's, or a kept candidate's? */
static int of_family(const candidate_t *c, size_t n, uint64_t root, uint64_t pid)
{
    if (pid == root)
        return 1;
    for (size_t i = 0; i < n; i++)
        if (c[i].kept && c[i].pid == pid)
            return 1;
    return 0;
}

/* How many %p and %e name holds. */
static int wildcards(const char *name)
{
    int n = 0;
    for (const char *p = name; *p; p++)
        if (p[0] == '%' && p[1]) {
            n += p[1] == 'p' || p[1] == 'e';
            p++;
        }
    return n;
}

size_t cli_family_find(const char *first, const char *pattern, long pid, uint64_t since_ns,
                       char ***paths)
{
    *paths = NULL;
    struct stat st;
    size_t dlen = (size_t)(ut_path_base(pattern) - pattern);
    /* not looked for: a pattern with %p or %e in its directories, or with
     * more than two in its name (each tries every length: match) */
    if (pid <= 0 || stat(first, &st) != 0 || memchr(pattern, '%', dlen) ||
        wildcards(pattern + dlen) > 2)
        return 0;
    char *dir = strndup(pattern, dlen);
    if (!dir)
        return 0;
    candidate_t *c;
    size_t n = candidates(dir, pattern + dlen, &st, since_ns, &c);
    free(dir);
    if (n > 1)
        qsort(c, n, sizeof *c, by_start);
    /* parents start before their children: a pass or two finds them all */
    for (int more = 1; more;) {
        more = 0;
        for (size_t i = 0; i < n; i++)
            if (!c[i].kept && (of_family(c, n, (uint64_t)pid, c[i].pid) ||
                               of_family(c, n, (uint64_t)pid, c[i].ppid)))
                c[i].kept = more = 1;
    }
    size_t k = 0;
    char **out = n ? malloc(n * sizeof *out) : NULL;
    for (size_t i = 0; i < n; i++) {
        if (c[i].kept && out)
            out[k++] = c[i].path;
        else
            free(c[i].path);
    }
    free(c);
    *paths = out;
    return k;
}
