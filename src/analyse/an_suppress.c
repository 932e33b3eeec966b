/* an_suppress.c - LeakSanitizer-style leak suppressions (an_suppress.h). */
#include "analyse/an_suppress.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyse/an_filter.h"
#include "common/ut_grow.h"

/* Allocations the runtimes make once and keep until exit on purpose:
 *  - libstdc++'s emergency exception-handling pool, allocated by a static
 *    constructor of eh_alloc.cc (the pool's constructor) when libstdc++ is
 *    loaded;
 *  - the dynamic loader's own allocations (TLS blocks, dlopen state) whose
 *    caller is ld-linux;
 *  - libc's stdio buffers (_IO_file_doallocate) of streams left open at
 *    exit, and the locale/once-only data of libc's own initialisation.
 * Each pattern is as specific as the symbols allow: libstdc++ and ld-linux
 * frames without symbols are matched by module only when the stack also
 * runs through the loader's initialiser (see an_suppress_stack). */
static const char *const an_suppress_builtins[] = {
    "_GLOBAL__sub_I_eh_alloc.cc",
    "eh_alloc.cc",
    "(anonymous namespace)::pool::pool",
    "__gnu_cxx::__freeres",
    "_IO_file_doallocate",
    "_dl_allocate_tls",
    "_dl_new_object",
    "__libc_setlocale",
    "_nl_load_locale",
    /* rules on the allocation site's module, see site_rule() */
    "@init:libstdc++.so",
    "@site:ld-linux",
};

static int add_rule(an_suppress_t *s, const char *pat, size_t len, int builtin)
{
    if (ut_grow((void **)&s->v, &s->cap, s->n + 1, sizeof *s->v))
        return PF_ENOMEM;
    char *p = malloc(len + 1);
    if (!p)
        return PF_ENOMEM;
    memcpy(p, pat, len);
    p[len] = '\0';
    s->v[s->n++] = (an_suppress_rule_t){p, builtin, 0};
    return 0;
}

int an_suppress_add_builtins(an_suppress_t *s)
{
    for (size_t i = 0; i < sizeof an_suppress_builtins / sizeof *an_suppress_builtins; i++)
        if (add_rule(s, an_suppress_builtins[i], strlen(an_suppress_builtins[i]), 1))
            return PF_ENOMEM;
    return 0;
}

int an_suppress_load(an_suppress_t *s, const char *path, char *err, size_t errsz)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errsz, "%s: %s", path, strerror(errno));
        return PF_EIO;
    }
    char line[4096];
    int rc = 0;
    for (unsigned long no = 1; !rc && fgets(line, sizeof line, f); no++) {
        size_t len = strlen(line);
        if (len == sizeof line - 1 && line[len - 1] != '\n') {
            snprintf(err, errsz, "%s:%lu: line too long", path, no);
            rc = PF_ECORRUPT;
            break;
        }
        char *b = line, *e = line + len;
        while (*b == ' ' || *b == '\t')
            b++;
        while (e > b && (e[-1] == '\n' || e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t'))
            e--;
        if (b == e || *b == '#')
            continue;
        if (strncmp(b, "leak:", 5) || e - b == 5) {
            char shown[61]; /* the line as printable text, for the message */
            size_t k = 0;
            for (const char *q = b; q < e && k < sizeof shown - 1; q++)
                shown[k++] = (*q >= 0x20 && *q < 0x7f) ? *q : '?';
            shown[k] = 0;
            snprintf(err, errsz, "%s:%lu: expected 'leak:PATTERN', got '%s'", path, no, shown);
            rc = PF_ECORRUPT;
            break;
        }
        if ((rc = add_rule(s, b + 5, (size_t)(e - b - 5), 0)))
            snprintf(err, errsz, "out of memory");
    }
    if (!rc && ferror(f)) {
        snprintf(err, errsz, "%s: read error", path);
        rc = PF_EIO;
    }
    fclose(f);
    return rc;
}

/* Glob match of p[0..pn) against the whole of s[0..sn) with '*'. */
static int glob(const char *p, size_t pn, const char *s, size_t sn)
{
    size_t pi = 0, si = 0, star = (size_t)-1, mark = 0;
    while (si < sn) {
        if (pi < pn && p[pi] == '*') {
            star = pi++;
            mark = si;
        } else if (pi < pn && p[pi] == s[si]) {
            pi++;
            si++;
        } else if (star != (size_t)-1) {
            pi = star + 1;
            si = ++mark;
        } else {
            return 0;
        }
    }
    while (pi < pn && p[pi] == '*')
        pi++;
    return pi == pn;
}

int an_suppress_match(const char *pattern, const char *str)
{
    size_t pn = strlen(pattern);
    int start = pn && pattern[0] == '^', end = pn > (size_t)start && pattern[pn - 1] == '$';
    pn -= (size_t)start + (size_t)end;
    /* unanchored ends behave as if the pattern had a '*' there */
    char *p = malloc(pn + 3);
    if (!p)
        return 0;
    size_t n = 0;
    if (!start)
        p[n++] = '*';
    memcpy(p + n, pattern + start, pn);
    n += pn;
    if (!end)
        p[n++] = '*';
    int hit = glob(p, n, str, strlen(str));
    free(p);
    return hit;
}

/* Built-in rules that LSan's patterns cannot say:
 *   "@site:MOD"  the allocation site (frame 0) is in a module whose file
 *                name starts with MOD (the dynamic loader's own blocks);
 *   "@init:MOD"  the same, and the stack runs through the loader's
 *                initialiser _dl_init: the library's own static
 *                constructor (libstdc++'s emergency pool, whose frames
 *                have no symbols in a stripped libstdc++.so).
 * Returns 1 when `pat` is such a rule and matches, 0 otherwise. */
static int site_rule(const char *pat, const pf_profile_t *p, const an_frames_t *fr)
{
    int init = !strncmp(pat, "@init:", 6);
    if ((!init && strncmp(pat, "@site:", 6)) || fr->n == 0 || fr->v[0].module < 0)
        return 0;
    if (strncmp(an_filter_module_name(p, fr->v[0].module), pat + 6, strlen(pat + 6)))
        return 0;
    if (!init)
        return 1;
    for (size_t i = 1; i < fr->n; i++)
        if (!strcmp(fr->v[i].function, "_dl_init"))
            return 1;
    return 0;
}

an_suppress_rule_t *an_suppress_stack(an_suppress_t *s, const pf_profile_t *p,
                                      const an_frames_t *fr)
{
    for (size_t r = 0; r < s->n; r++) {
        const char *pat = s->v[r].pattern;
        if (s->v[r].builtin && pat[0] == '@') {
            if (site_rule(pat, p, fr)) {
                s->v[r].hits++;
                return &s->v[r];
            }
            continue;
        }
        for (size_t i = 0; i < fr->n; i++) {
            const an_frame_t *f = &fr->v[i];
            const char *file = f->file ? strrchr(f->file, '/') : NULL;
            if (an_suppress_match(pat, f->function) ||
                (f->module >= 0 && an_suppress_match(pat, an_filter_module_name(p, f->module))) ||
                (f->file && (an_suppress_match(pat, f->file) ||
                             (file && an_suppress_match(pat, file + 1))))) {
                s->v[r].hits++;
                return &s->v[r];
            }
        }
    }
    return NULL;
}

void an_suppress_free(an_suppress_t *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i].pattern);
    free(s->v);
    *s = (an_suppress_t){0};
}
