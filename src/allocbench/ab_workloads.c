/* ab_workloads.c - discovering the bundled workloads.  They are whatever
 * executable wl-NAME files sit in the bench directory (bench/suite and
 * bench/alloc both build there), so adding a workload needs no change
 * here. */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "allocbench/ab_workloads.h"
#include "common/ut_exe.h"

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

int ab_workloads_dir(char *out, size_t cap)
{
    const char *env = getenv("HEAPSCOPE_BENCH_DIR");
    if (env && *env) {
        snprintf(out, cap, "%s", env);
        return is_dir(out) ? 0 : -1;
    }
    char dir[PATH_MAX];
    if (ut_exe_dir(dir, sizeof dir) == 0) {
        static const char *rel[] = {"/../bench", "/" HEAPSCOPE_BIN_TO_LIBEXEC "/heapscope"};
        for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
            char cand[PATH_MAX + 32];
            snprintf(cand, sizeof cand, "%s%s", dir, rel[i]);
            if (is_dir(cand) && realpath(cand, out))
                return 0;
        }
    }
    snprintf(out, cap, "%s/heapscope", HEAPSCOPE_INSTALL_LIBEXECDIR);
    return is_dir(out) ? 0 : -1;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int ab_workloads_list(const char *dir, char ***names, size_t *n)
{
    *names = NULL;
    *n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    size_t cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, "wl-", 3) != 0 || !e->d_name[3])
            continue;
        char path[PATH_MAX + 256];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(path, &st) < 0 || !S_ISREG(st.st_mode) || access(path, X_OK) < 0)
            continue;
        if (*n == cap) {
            cap = cap ? cap * 2 : 16;
            char **nn = realloc(*names, cap * sizeof *nn);
            if (!nn)
                break;
            *names = nn;
        }
        (*names)[*n] = strdup(e->d_name + 3);
        if ((*names)[*n])
            (*n)++;
    }
    closedir(d);
    if (*n)
        qsort(*names, *n, sizeof **names, cmp_str);
    return 0;
}

void ab_workloads_free(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}
