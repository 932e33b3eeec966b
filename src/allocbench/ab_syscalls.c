/* ab_syscalls.c - memory system calls per run, counted by strace -c.
 * strace gets LD_PRELOAD through -E so that only the traced workload, not
 * strace itself, runs on the allocator under test; -f follows threads and
 * children, so the counts cover the whole workload. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "allocbench/ab_passes.h"
#include "allocbench/ab_run.h"

int ab_syscalls_parse(const char *text, ab_result_t *r)
{
    static const char *names[] = {"brk", "mmap", "munmap", "madvise"};
    long *dst[] = {&r->brk, &r->mmap, &r->munmap, &r->madvise};
    if (!text || !strstr(text, "syscall"))
        return -1;
    for (int i = 0; i < 4; i++)
        *dst[i] = 0;
    for (const char *p = text; p && *p;) {
        const char *eol = strchr(p, '\n');
        char line[256];
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        snprintf(line, sizeof line, "%.*s", (int)(len < 255 ? len : 255), p);
        char *tok[8];
        int nt = 0;
        for (char *s = strtok(line, " \t"); s && nt < 8; s = strtok(NULL, " \t"))
            tok[nt++] = s;
        /* % time, seconds, usecs/call, calls, [errors,] syscall */
        if (nt >= 5)
            for (int i = 0; i < 4; i++)
                if (!strcmp(tok[nt - 1], names[i]))
                    *dst[i] = strtol(tok[3], NULL, 10);
        p = eol ? eol + 1 : NULL;
    }
    return 0;
}

int ab_syscalls_count(const ab_ctx_t *ctx, const ab_workload_t *w, const ab_alloc_t *a,
                      ab_result_t *r, char *err, size_t errsz)
{
    char outp[PATH_MAX + 16], env[PATH_MAX + 16];
    snprintf(outp, sizeof outp, "%s/strace", ctx->tmpdir);
    unlink(outp);
    size_t n = 0;
    while (w->argv[n])
        n++;
    char **argv = calloc(n + 16, sizeof *argv);
    if (!argv) {
        snprintf(err, errsz, "out of memory");
        return -1;
    }
    size_t k = 0;
    argv[k++] = "strace";
    argv[k++] = "-f";
    argv[k++] = "-c";
    argv[k++] = "-e";
    argv[k++] = "trace=brk,mmap,munmap,madvise";
    argv[k++] = "-o";
    argv[k++] = outp;
    if (a->preload) {
        snprintf(env, sizeof env, "LD_PRELOAD=%s", a->path);
        argv[k++] = "-E";
        argv[k++] = env;
    }
    argv[k++] = "--";
    for (size_t i = 0; i < n; i++)
        argv[k++] = w->argv[i];
    char *out = NULL;
    int st = ab_capture(argv, NULL, 1, &out);
    free(argv);
    free(out);
    if (st != 0) {
        snprintf(err, errsz, st == 127 || st < 0 ? "cannot run strace (is it installed?)"
                                                 : "'%s' under %s failed under strace (status %d)",
                 w->name, a->name, st);
        return -1;
    }
    FILE *f = fopen(outp, "r");
    char *text = NULL;
    size_t cap = 0;
    if (f) {
        ssize_t got = getdelim(&text, &cap, 0, f);
        if (got < 0) {
            free(text);
            text = NULL;
        }
        fclose(f);
    }
    int rc = ab_syscalls_parse(text, r);
    free(text);
    if (rc < 0)
        snprintf(err, errsz, "no strace summary in %s", outp);
    return rc;
}
