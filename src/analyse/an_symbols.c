/* an_symbols.c - the symboliser of an_symbols.h: per-module libdwfl
 * sessions opened on first use, a cache of resolved frames per
 * (module, return address), and demangled names interned per mangled
 * string.
 *
 * Storage: `entries` maps a cache slot to a run of `syms`; names and file
 * names point into libdwfl's data (alive until an_symbols_close) or into
 * `owned` (demangled names and the module warnings).
 */
#define _POSIX_C_SOURCE 200809L

#include "analyse/an_symbols.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyse/an_demangle.h"
#include "analyse/an_symaddr.h"
#include "analyse/an_symfile.h"
#include "format/pf_read_map.h"
#include "common/ut_grow.h"

enum { AN_MOD_UNTRIED, AN_MOD_READY, AN_MOD_FAILED };

typedef struct an_symmod {
    int state;
    an_symfile_t file;
} an_symmod_t;

typedef struct an_symrun {
    uint32_t first;
    uint32_t count;
} an_symrun_t;

struct an_symbols {
    const pf_profile_t *prof;
    an_symmod_t *mods;     /* one per prof->modules */
    pf_map_t cache;        /* (module + 1, ip) -> index into runs */
    an_symrun_t *runs;
    size_t n_runs, cap_runs;
    an_sym_t *syms;
    size_t n_syms, cap_syms;
    pf_map_t names;        /* (mangled string address, 0) -> index into owned */
    char **owned;
    size_t n_owned, cap_owned;
    const char **warnings;
    size_t n_warnings, cap_warnings;
};

static const char an_sym_unknown[] = "??";

/* Keep a malloc'd string until close.  Returns it, or NULL (and frees it)
 * when out of memory. */
static char *an_symbols_own(an_symbols_t *s, char *str)
{
    void *arr = s->owned;
    if (ut_grow(&arr, &s->cap_owned, s->n_owned + 1, sizeof *s->owned)) {
        free(str);
        return NULL;
    }
    s->owned = arr;
    s->owned[s->n_owned++] = str;
    return str;
}

int an_symbols_open(const pf_profile_t *p, an_symbols_t **out)
{
    an_symbols_t *s = calloc(1, sizeof *s);
    *out = NULL;
    if (!s)
        return PF_ENOMEM;
    s->prof = p;
    s->mods = calloc(p->n_modules ? p->n_modules : 1, sizeof *s->mods);
    if (!s->mods) {
        free(s);
        return PF_ENOMEM;
    }
    pf_map_init(&s->cache);
    pf_map_init(&s->names);
    *out = s;
    return PF_OK;
}

/* Record a module warning (formatted). */
static void an_symbols_warn(an_symbols_t *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void an_symbols_warn(an_symbols_t *s, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    void *arr = (void *)s->warnings;
    char *w = strdup(buf);
    if (!w || !an_symbols_own(s, w) ||
        ut_grow(&arr, &s->cap_warnings, s->n_warnings + 1, sizeof *s->warnings))
        return;
    s->warnings = arr;
    s->warnings[s->n_warnings++] = w;
}

/* The ready libdwfl module for module index `mi`, or NULL. */
static Dwfl_Module *an_symbols_module(an_symbols_t *s, int32_t mi)
{
    if (mi < 0 || (size_t)mi >= s->prof->n_modules)
        return NULL;
    an_symmod_t *m = &s->mods[mi];
    if (m->state == AN_MOD_UNTRIED) {
        char why[512];
        const pf_module_t *pm = &s->prof->modules[mi];
        if (an_symfile_open(pm, &m->file, why, sizeof why) == 0) {
            m->state = AN_MOD_READY;
        } else {
            m->state = AN_MOD_FAILED;
            an_symbols_warn(s, "no symbols for %s: %s; its frames show as module+offset", pm->path,
                            why);
        }
    }
    return m->state == AN_MOD_READY ? m->file.mod : NULL;
}

/* Demangled form of `name`, interned; `name` itself when not mangled. */
static const char *an_symbols_demangle(an_symbols_t *s, const char *name)
{
    uint32_t idx;
    if (!name || name[0] != '_' || name[1] != 'Z')
        return name;
    if (pf_map_get(&s->names, (uint64_t)(uintptr_t)name, 0, &idx))
        return s->owned[idx];
    char *d = an_demangle(name);
    if (!d)
        return name;
    if (!an_symbols_own(s, d))
        return name;
    /* a failed insert only costs a second demangling later */
    (void)pf_map_put(&s->names, (uint64_t)(uintptr_t)name, 0, (uint32_t)(s->n_owned - 1));
    return d;
}

/* Resolve (ip, module) into a new run.  Returns 0 or -1 (out of memory). */
static int an_symbols_resolve(an_symbols_t *s, uint64_t ip, int32_t mi, uint32_t *run)
{
    an_sym_t tmp[AN_SYM_MAX_INLINE];
    size_t n = 0;
    Dwfl_Module *mod = an_symbols_module(s, mi);
    if (mod)
        n = an_symaddr_resolve(mod, ip ? ip - 1 : 0, tmp, AN_SYM_MAX_INLINE);
    if (!n)
        tmp[n++] = (an_sym_t){NULL, NULL, 0, 0};
    for (size_t i = 0; i < n; i++)
        tmp[i].function = tmp[i].function ? an_symbols_demangle(s, tmp[i].function) : an_sym_unknown;
    void *syms = s->syms, *runs = s->runs;
    if (s->n_syms + n > UINT32_MAX || s->n_runs >= UINT32_MAX ||
        ut_grow(&syms, &s->cap_syms, s->n_syms + n, sizeof *s->syms))
        return -1;
    s->syms = syms;
    if (ut_grow(&runs, &s->cap_runs, s->n_runs + 1, sizeof *s->runs))
        return -1;
    s->runs = runs;
    memcpy(&s->syms[s->n_syms], tmp, n * sizeof *tmp);
    s->runs[s->n_runs] = (an_symrun_t){(uint32_t)s->n_syms, (uint32_t)n};
    s->n_syms += n;
    *run = (uint32_t)s->n_runs++;
    return 0;
}

int an_symbols_lookup(an_symbols_t *s, uint64_t ip, int32_t module, const an_sym_t **syms,
                      uint32_t *n)
{
    static const an_sym_t unknown = {an_sym_unknown, NULL, 0, 0};
    uint32_t run;
    uint64_t key = (uint64_t)(int64_t)module + 1;
    if (!pf_map_get(&s->cache, key, ip, &run)) {
        if (an_symbols_resolve(s, ip, module, &run) ||
            pf_map_put(&s->cache, key, ip, run)) {
            *syms = &unknown;
            *n = 1;
            return PF_ENOMEM;
        }
    }
    *syms = &s->syms[s->runs[run].first];
    *n = s->runs[run].count;
    return PF_OK;
}

const char *an_symbols_file(const an_symbols_t *s, int32_t module)
{
    if (module < 0 || (size_t)module >= s->prof->n_modules)
        return NULL;
    return s->mods[module].state == AN_MOD_READY ? s->mods[module].file.path : NULL;
}

size_t an_symbols_warnings(const an_symbols_t *s, const char *const **list)
{
    *list = s->warnings;
    return s->n_warnings;
}

void an_symbols_close(an_symbols_t *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->prof->n_modules; i++)
        an_symfile_close(&s->mods[i].file);
    free(s->mods);
    pf_map_free(&s->cache);
    pf_map_free(&s->names);
    free(s->runs);
    free(s->syms);
    for (size_t i = 0; i < s->n_owned; i++)
        free(s->owned[i]);
    free(s->owned);
    free(s->warnings);
    free(s);
}
