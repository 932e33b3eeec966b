/* ab_verify.c - verifying the allocator of each run.
 *
 * Method: the checker library (ab_checker.c) is preloaded after the
 * allocator in every timed run and reports, from inside the workload,
 * which object the dynamic linker binds `malloc` to.  That is the binding
 * every call of the program goes through, so it is stronger evidence than
 * "the library is mapped" (a preloaded library can be mapped and still lose
 * the symbol to an earlier definition).  Here we compare that object with
 * the allocator's path, both resolved with realpath(3). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "allocbench/ab_verify.h"
#include "common/ut_exe.h"

int ab_verify_find_checker(char *out, size_t cap)
{
    return ab_verify_find_lib("libheapscope-abcheck.so", "HEAPSCOPE_ABCHECK_LIB", out, cap);
}

int ab_verify_find_lib(const char *file, const char *envvar, char *out, size_t cap)
{
    const char *env = getenv(envvar);
    if (env && *env) {
        snprintf(out, cap, "%s", env);
        return access(out, R_OK) == 0 ? 0 : -1;
    }
    char dir[PATH_MAX];
    if (ut_exe_dir(dir, sizeof dir) == 0) {
        static const char *rel[] = {"/../lib/", "/" HEAPSCOPE_BIN_TO_LIB "/", "/../lib/heapscope/"};
        for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
            char cand[2 * PATH_MAX];
            snprintf(cand, sizeof cand, "%s%s%s", dir, rel[i], file);
            if (access(cand, R_OK) == 0 && realpath(cand, out))
                return 0;
        }
    }
    snprintf(out, cap, "%s/%s", HEAPSCOPE_INSTALL_LIBDIR, file);
    return access(out, R_OK) == 0 ? 0 : -1;
}

void ab_verify_read(const char *path, pid_t pid, const ab_alloc_t *a, ab_result_t *r)
{
    r->verified = -1;
    r->malloc_from[0] = 0;
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    char line[PATH_MAX + 32];
    int found = 0;
    while (fgets(line, sizeof line, f)) {
        char *sp = strchr(line, ' ');
        if (!sp)
            continue;
        line[strcspn(line, "\n")] = 0;
        long lp = strtol(line, NULL, 10);
        if (!found || lp == (long)pid) {
            snprintf(r->malloc_from, sizeof r->malloc_from, "%s", sp + 1);
            found = 1 + (lp == (long)pid);
        }
        if (found == 2)
            break;
    }
    fclose(f);
    if (!found)
        return;
    char want[PATH_MAX], got[PATH_MAX];
    if (!realpath(a->path, want) || !realpath(r->malloc_from, got)) {
        r->verified = strcmp(a->path, r->malloc_from) == 0;
        return;
    }
    r->verified = strcmp(want, got) == 0;
}
