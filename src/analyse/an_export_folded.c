/* an_export_folded.c - Brendan Gregg's folded stacks: one line per
 * distinct call path, "outermost;...;allocation_site VALUE", the format
 * flamegraph.pl, inferno and speedscope read.
 *
 * Each stack is symbolised (inlined calls are frames of their own), its
 * function names are joined outermost first, and stacks whose paths come
 * out equal (different return addresses in the same functions) are summed
 * into one line.  Lines are sorted bytewise; stacks whose cost is zero are
 * left out, as flamegraph.pl would ignore them anyway.
 */
#include "analyse/an_export.h"
#include "common/ut_grow.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

typedef struct folded_line {
    char *path;
    uint64_t value;
} folded_line_t;

static int folded_cmp(const void *a, const void *b)
{
    return strcmp(((const folded_line_t *)a)->path, ((const folded_line_t *)b)->path);
}

/* Append `s` to buf[*len] (capacity *cap); unless `raw`, ';' and
 * newlines, which would break the format, become ':' and ' '.  Returns 0
 * or -1. */
static int folded_append(char **buf, size_t *len, size_t *cap, const char *s, int raw)
{
    size_t n = strlen(s);
    if (ut_grow((void **)buf, cap, *len + n + 2, 1))
        return -1;
    for (size_t i = 0; i < n; i++)
        (*buf)[(*len)++] = raw ? s[i] : s[i] == ';' ? ':' : (s[i] == '\n' || s[i] == '\r') ? ' ' : s[i];
    (*buf)[*len] = '\0';
    return 0;
}

/* The folded path of stack `s` in a new string, or NULL (no memory). */
static char *folded_path(an_report_t *r, const an_stats_t *s)
{
    if (an_frames_get(&r->frames, r->prof, r->syms, &r->prof->stacks[s->stack]))
        return NULL;
    char *buf = NULL;
    size_t len = 0, cap = 0;
    if (r->frames.n == 0 && folded_append(&buf, &len, &cap, "[no frames]", 0))
        return NULL;
    for (size_t i = r->frames.n; i-- > 0;) {
        if ((i + 1 < r->frames.n && folded_append(&buf, &len, &cap, ";", 1)) ||
            folded_append(&buf, &len, &cap, r->frames.v[i].function, 0)) {
            free(buf);
            return NULL;
        }
    }
    return buf;
}

int an_export_folded(an_report_t *r, an_export_cost_t cost, FILE *out)
{
    const an_model_t *m = &r->model;
    folded_line_t *lines = malloc((m->n_stats ? m->n_stats : 1) * sizeof *lines);
    if (!lines)
        return PF_ENOMEM;
    size_t n = 0;
    int rc = PF_OK;
    for (size_t i = 0; i < m->n_stats; i++) {
        uint64_t v = an_export_cost_of(&m->stats[i], cost);
        if (!v)
            continue;
        char *p = folded_path(r, &m->stats[i]);
        if (!p) {
            rc = PF_ENOMEM;
            break;
        }
        lines[n].path = p;
        lines[n++].value = v;
    }
    if (!rc) {
        qsort(lines, n, sizeof *lines, folded_cmp);
        for (size_t i = 0; i < n;) {
            uint64_t v = 0;
            size_t j = i;
            for (; j < n && !strcmp(lines[j].path, lines[i].path); j++)
                v = an_add(v, lines[j].value);
            if (fprintf(out, "%s %" PRIu64 "\n", lines[i].path, v) < 0) {
                rc = PF_EIO;
                break;
            }
            i = j;
        }
    }
    for (size_t i = 0; i < n; i++)
        free(lines[i].path);
    free(lines);
    return rc;
}
