/* an_view_group.c - filter and merge stacks into the rows of a view
 * (an_view_group.h). */
#include "analyse/an_view_group.h"

#include "analyse/an_view_bars.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FOLD_BUF 1024

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    return d ? memcpy(d, s, n) : NULL;
}

typedef struct keyed {
    size_t stat;            /* index into model.stats */
    char *key;              /* merge key, NULL under AN_MERGE_NONE */
} keyed_t;

/* The name a view shows for frame f: folded under --fold-templates. */
static const char *shown_name(const an_view_opts_t *o, const an_frame_t *f, char *buf)
{
    return o->filter.fold_templates ? an_filter_fold(f->function, buf, FOLD_BUF) : f->function;
}

/* The name frame f merges by: its shown name, or for an unknown function
 * "??" with its module and offset (two unknown functions stay apart). */
static const char *key_name(const an_report_t *r, const an_view_opts_t *o, const an_frame_t *f,
                            char *buf)
{
    if (strcmp(f->function, "??") || f->module < 0)
        return shown_name(o, f, buf);
    snprintf(buf, FOLD_BUF, "?? %s+0x%" PRIx64, an_filter_module_name(r->prof, f->module),
             f->address - r->prof->modules[f->module].load_bias);
    return buf;
}

/* The merge key of the frames in fr (malloc'd), "" for no frames. */
static char *merge_key(const an_report_t *r, const an_view_opts_t *o, const an_frames_t *fr)
{
    char buf[FOLD_BUF];
    if (fr->n == 0)
        return dup_str("");
    if (o->filter.merge == AN_MERGE_CALLER)
        return dup_str(key_name(r, o, &fr->v[an_filter_site(fr)], buf));
    size_t len = 1;
    for (size_t i = 0; i < fr->n; i++)
        len += strlen(key_name(r, o, &fr->v[i], buf)) + 1;
    char *k = malloc(len), *w = k;
    if (!k)
        return NULL;
    for (size_t i = 0; i < fr->n; i++) {
        const char *s = key_name(r, o, &fr->v[i], buf);
        size_t n = strlen(s);
        memcpy(w, s, n);
        w += n;
        *w++ = '\n';
    }
    *w = '\0';
    return k;
}

static int cmp_keyed(const void *a, const void *b)
{
    const keyed_t *x = a, *y = b;
    if (x->key && y->key) {
        int c = strcmp(x->key, y->key);
        if (c)
            return c;
    }
    return x->stat < y->stat ? -1 : x->stat > y->stat;
}

static void add_stats(an_stats_t *a, const an_stats_t *b)
{
    a->allocations = an_add(a->allocations, b->allocations);
    a->frees = an_add(a->frees, b->frees);
    a->bytes_allocated = an_add(a->bytes_allocated, b->bytes_allocated);
    a->bytes_freed = an_add(a->bytes_freed, b->bytes_freed);
    a->temporary = an_add(a->temporary, b->temporary);
    a->peak_blocks = an_add(a->peak_blocks, b->peak_blocks);
    a->peak_bytes = an_add(a->peak_bytes, b->peak_bytes);
    a->leaked_bytes = an_add(a->leaked_bytes, b->leaked_bytes);
    a->leaked_allocations = an_add(a->leaked_allocations, b->leaked_allocations);
}

int an_view_groups_build(an_report_t *r, an_view_opts_t *o, int suppress, an_groups_t *g)
{
    memset(g, 0, sizeof *g);
    size_t n = r->model.n_stats, kept = 0;
    keyed_t *k = malloc((n ? n : 1) * sizeof *k);
    g->members = malloc((n ? n : 1) * sizeof *g->members);
    g->v = malloc((n ? n : 1) * sizeof *g->v);
    int rc = k && g->members && g->v ? PF_OK : PF_ENOMEM;
    for (size_t i = 0; i < n && !rc; i++) {
        const an_stats_t *st = &r->model.stats[i];
        if ((rc = an_frames_get(&r->frames, r->prof, r->syms, &r->prof->stacks[st->stack])))
            break;
        if (!an_filter_frames(&o->filter, r->prof, &r->frames))
            continue;
        if (suppress && st->leaked_bytes && an_suppress_stack(&o->sup, r->prof, &r->frames)) {
            g->suppressed_stacks++;
            g->suppressed_bytes = an_add(g->suppressed_bytes, st->leaked_bytes);
            g->suppressed_blocks = an_add(g->suppressed_blocks, st->leaked_allocations);
            continue;
        }
        k[kept].stat = i;
        k[kept].key = NULL;
        if (o->filter.merge != AN_MERGE_NONE && !(k[kept].key = merge_key(r, o, &r->frames)))
            rc = PF_ENOMEM;
        kept++;
    }
    if (!rc) {
        /* stats are in stack id order already; merging sorts by key */
        if (o->filter.merge != AN_MERGE_NONE)
            qsort(k, kept, sizeof *k, cmp_keyed);
        for (size_t i = 0; i < kept; i++) {
            const an_stats_t *st = &r->model.stats[k[i].stat];
            if (i == 0 || !k[i].key || strcmp(k[i].key, k[i - 1].key)) {
                an_group_t *row = &g->v[g->n++];
                row->st = *st;
                row->first = i;
                row->n_members = 1;
            } else {
                an_group_t *row = &g->v[g->n - 1];
                add_stats(&row->st, st);
                row->n_members++;
                if (st->id < row->st.id) {
                    row->st.id = st->id;
                    row->st.stack = st->stack;
                }
            }
            g->members[i] = k[i].stat;
        }
    }
    for (size_t i = 0; k && i < kept; i++)
        free(k[i].key);
    free(k);
    return rc;
}

void an_view_key_figures(const an_stats_t *s, an_key_t key, uint64_t *bytes, uint64_t *count)
{
    switch (key) {
    case AN_KEY_LEAKED: *bytes = s->leaked_bytes; *count = s->leaked_allocations; break;
    case AN_KEY_PEAK: *bytes = s->peak_bytes; *count = s->peak_blocks; break;
    case AN_KEY_TEMPORARY: *bytes = s->bytes_allocated; *count = s->temporary; break;
    default: *bytes = s->bytes_allocated; *count = s->allocations; break;
    }
}

static const an_groups_t *rank_g;
static an_key_t rank_key;

static int cmp_rank(const void *a, const void *b)
{
    const an_stats_t *x = &rank_g->v[*(const size_t *)a].st, *y = &rank_g->v[*(const size_t *)b].st;
    uint64_t kx = an_model_key(x, rank_key), ky = an_model_key(y, rank_key);
    if (kx != ky)
        return kx > ky ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

int an_view_groups_rank(const an_groups_t *g, const an_view_opts_t *o, an_key_t key,
                        size_t **order, size_t *n)
{
    *n = 0;
    *order = malloc((g->n ? g->n : 1) * sizeof **order);
    if (!*order)
        return PF_ENOMEM;
    for (size_t i = 0; i < g->n; i++) {
        uint64_t bytes, count;
        an_view_key_figures(&g->v[i].st, key, &bytes, &count);
        if (an_model_key(&g->v[i].st, key) == 0 || bytes < o->filter.min_bytes ||
            count < o->filter.min_count)
            continue;
        (*order)[(*n)++] = i;
    }
    rank_g = g;
    rank_key = key;
    qsort(*order, *n, sizeof **order, cmp_rank);
    return 0;
}

/* Frames of row g shown under the merge mode: how many. */
static size_t shown_frames(const an_view_opts_t *o, const an_frames_t *fr)
{
    if (o->filter.merge == AN_MERGE_CALLER && fr->n)
        return an_filter_site(fr) + 1;
    return fr->n;
}

int an_view_frames_text(an_report_t *r, const an_view_opts_t *o, const an_group_t *g, FILE *out,
                        size_t max)
{
    int rc = an_frames_get(&r->frames, r->prof, r->syms, &r->prof->stacks[g->st.stack]);
    if (rc)
        return rc;
    size_t n = shown_frames(o, &r->frames);
    char buf[FOLD_BUF];
    unsigned width = an_view_bars_width(o->width);
    if (n == 0)
        fprintf(out, "      (no frames)\n");
    for (size_t i = 0; i < n && i < max; i++) {
        const an_frame_t *f = &r->frames.v[i];
        /* what follows the name, then the name cut to fit the width */
        char rest[1200];
        int len = 0;
        if (f->inlined)
            len += snprintf(rest + len, sizeof rest - (size_t)len, " [inlined]");
        if (f->file && o->filter.merge == AN_MERGE_NONE)
            len += snprintf(rest + len, sizeof rest - (size_t)len, "  %.900s:%" PRIu32, f->file,
                            f->line);
        else if (f->file)
            len += snprintf(rest + len, sizeof rest - (size_t)len, "  %.900s", f->file);
        if (!strcmp(f->function, "??") && f->module >= 0)
            snprintf(rest + len, sizeof rest - (size_t)len, "  %.200s+0x%" PRIx64,
                     an_filter_module_name(r->prof, f->module),
                     f->address - r->prof->modules[f->module].load_bias);
        else
            snprintf(rest + len, sizeof rest - (size_t)len, "  (%.200s)",
                     an_filter_module_name(r->prof, f->module));
        const char *name = shown_name(o, f, buf);
        int room = (int)width - 10 - (int)strlen(rest);
        if (room < 40)
            room = 40; /* a long file name wraps rather than hiding the function */
        char folded[FOLD_BUF];
        if ((int)strlen(name) > room && !o->filter.fold_templates)
            name = an_filter_fold(name, folded, sizeof folded); /* too long: fold first */
        if ((int)strlen(name) > room)
            fprintf(out, "      #%-2zu %.*s...%s\n", i, room - 3, name, rest);
        else
            fprintf(out, "      #%-2zu %s%s\n", i, name, rest);
    }
    if (n > max)
        fprintf(out, "      ... %zu more frame%s\n", n - max, n - max == 1 ? "" : "s");
    return 0;
}

int an_view_frames_json(an_report_t *r, const an_view_opts_t *o, const an_group_t *g,
                        an_json_t *j)
{
    int rc = an_frames_get(&r->frames, r->prof, r->syms, &r->prof->stacks[g->st.stack]);
    size_t n = rc ? 0 : shown_frames(o, &r->frames);
    char buf[FOLD_BUF];
    an_json_array_begin(j);
    for (size_t i = 0; i < n; i++) {
        const an_frame_t *f = &r->frames.v[i];
        an_json_object_begin(j);
        an_json_kv_str(j, "function", shown_name(o, f, buf));
        an_json_kv_str(j, "file", f->file);
        an_json_kv_u64(j, "line", o->filter.merge == AN_MERGE_NONE ? f->line : 0);
        an_json_kv_str(j, "module", f->module >= 0 ? r->prof->modules[f->module].path : NULL);
        an_json_key(j, "address");
        an_json_hex(j, f->address);
        an_json_kv_u64(j, "offset", f->module >= 0 ? f->address - r->prof->modules[f->module].load_bias : 0);
        an_json_kv_bool(j, "inlined", f->inlined);
        an_json_object_end(j);
    }
    an_json_array_end(j);
    return rc;
}

void an_view_groups_free(an_groups_t *g)
{
    free(g->v);
    free(g->members);
    memset(g, 0, sizeof *g);
}
