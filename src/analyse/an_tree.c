/* an_tree.c - `heapscope report --tree [--bottom-up]`: the stacks as a
 * call tree of functions, like massif's or heaptrack's.
 *
 * Top-down, each path starts at main (at the outermost frame when a stack
 * has no main) and ends at the function that called the allocator; bottom-
 * up, it starts at that function and goes out to main.  A node's inclusive
 * figures sum the stacks through it, its self figures the stacks that end
 * there, so inclusive = self + the children's inclusive.  Children are
 * sorted by --sort (default bytes allocated); subtrees whose inclusive
 * figure is below --threshold percent of the total (or below --min-bytes /
 * --min-count) are pruned and summed into one "below threshold" line, as
 * are the children past the first --top N (default 10 in text).
 * Recursion shows as nested nodes of the same function. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyse/an_json.h"
#include "analyse/an_units.h"
#include "analyse/an_view_bars.h"
#include "analyse/an_view_group.h"
#include "common/ut_grow.h"

#define FOLD_BUF 1024
#define INDENT_MAX 40  /* levels indented; deeper ones print their depth */

/* The figures a node sums (an_stats_t without what the tree never shows). */
typedef struct tfig {
    uint64_t allocations, bytes_allocated, leaked_bytes, leaked_allocations, peak_bytes,
        peak_blocks, temporary;
} tfig_t;

typedef struct tnode {
    const char *name;      /* the symboliser's string, or own copy (folded) */
    int owned;
    int32_t module;
    size_t parent, first_child, next_sibling; /* 0: none (node 0 is the root) */
    tfig_t incl, self;
} tnode_t;

typedef struct tree {
    tnode_t *v;
    size_t n, cap;
    size_t *hash;          /* open addressing: node index, 0 empty */
    size_t hcap;
} tree_t;

static uint64_t hash_of(size_t parent, const char *s)
{
    uint64_t h = 1469598103934665603ull ^ parent;
    while (*s)
        h = (h ^ (unsigned char)*s++) * 1099511628211ull;
    /* FNV's low bits mix poorly and the table is indexed by them */
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h;
}

static int grow_hash(tree_t *t)
{
    size_t cap = t->hcap ? t->hcap * 2 : 1024;
    size_t *h = calloc(cap, sizeof *h);
    if (!h)
        return PF_ENOMEM;
    for (size_t i = 1; i < t->n; i++) {
        size_t k = hash_of(t->v[i].parent, t->v[i].name) & (cap - 1);
        while (h[k])
            k = (k + 1) & (cap - 1);
        h[k] = i;
    }
    free(t->hash);
    t->hash = h;
    t->hcap = cap;
    return 0;
}

/* The child of `parent` named `name`, created when missing; 0 on ENOMEM.
 * `name` is copied when `copy` is set, else it must outlive the tree (the
 * symboliser's strings do). */
static size_t child(tree_t *t, size_t parent, const char *name, int32_t module, int copy)
{
    if ((t->n + 1) * 2 > t->hcap && grow_hash(t))
        return 0;
    size_t k = hash_of(parent, name) & (t->hcap - 1);
    for (; t->hash[k]; k = (k + 1) & (t->hcap - 1)) {
        tnode_t *c = &t->v[t->hash[k]];
        if (c->parent == parent && !strcmp(c->name, name))
            return t->hash[k];
    }
    if (ut_grow((void **)&t->v, &t->cap, t->n + 1, sizeof *t->v))
        return 0;
    tnode_t *c = &t->v[t->n];
    memset(c, 0, sizeof *c);
    c->name = name;
    if (copy) {
        size_t len = strlen(name) + 1;
        char *d = malloc(len);
        if (!d)
            return 0;
        c->name = memcpy(d, name, len);
        c->owned = 1;
    }
    c->module = module;
    c->parent = parent;
    c->next_sibling = t->v[parent].first_child;
    t->v[parent].first_child = t->n;
    t->hash[k] = t->n;
    return t->n++;
}

static void add_stats(tfig_t *a, const an_stats_t *b)
{
    a->allocations = an_add(a->allocations, b->allocations);
    a->bytes_allocated = an_add(a->bytes_allocated, b->bytes_allocated);
    a->leaked_bytes = an_add(a->leaked_bytes, b->leaked_bytes);
    a->leaked_allocations = an_add(a->leaked_allocations, b->leaked_allocations);
    a->peak_bytes = an_add(a->peak_bytes, b->peak_bytes);
    a->peak_blocks = an_add(a->peak_blocks, b->peak_blocks);
    a->temporary = an_add(a->temporary, b->temporary);
}

/* The figure of `f` that key sorts by, and the (bytes, count) pair the
 * --min-bytes / --min-count filters look at (as an_view_key_figures). */
static uint64_t fig_key(const tfig_t *f, an_key_t key)
{
    switch (key) {
    case AN_KEY_ALLOCATIONS: return f->allocations;
    case AN_KEY_LEAKED: return f->leaked_bytes;
    case AN_KEY_PEAK: return f->peak_bytes;
    case AN_KEY_TEMPORARY: return f->temporary;
    default: return f->bytes_allocated;
    }
}

static void fig_minimums(const tfig_t *f, an_key_t key, uint64_t *bytes, uint64_t *count)
{
    an_stats_t s = {0};
    s.allocations = f->allocations;
    s.bytes_allocated = f->bytes_allocated;
    s.leaked_bytes = f->leaked_bytes;
    s.leaked_allocations = f->leaked_allocations;
    s.peak_bytes = f->peak_bytes;
    s.peak_blocks = f->peak_blocks;
    s.temporary = f->temporary;
    an_view_key_figures(&s, key, bytes, count);
}

/* Add one stack's path (frames in r->frames) with figures st. */
static int add_path(tree_t *t, an_report_t *r, const an_view_opts_t *o, const an_stats_t *st)
{
    const an_frames_t *fr = &r->frames;
    size_t n = fr->n, main_at = n;
    for (size_t i = n; i-- > 0;)
        if (!strcmp(fr->v[i].function, "main")) {
            main_at = i;
            break;
        }
    size_t last = main_at < n ? main_at : (n ? n - 1 : 0); /* outermost frame kept */
    size_t node = 0;
    char buf[FOLD_BUF];
    add_stats(&t->v[0].incl, st);
    for (size_t s = 0; s < (n ? last + 1 : 0); s++) {
        size_t i = o->bottom_up ? s : last - s;
        const an_frame_t *f = &fr->v[i];
        const char *name = f->function;
        int copy = o->filter.fold_templates;
        if (!strcmp(name, "??") && f->module >= 0) {
            /* unknown functions stay apart: name them by module+offset */
            snprintf(buf, sizeof buf, "?? %s+0x%" PRIx64, an_filter_module_name(r->prof, f->module),
                     f->address - r->prof->modules[f->module].load_bias);
            name = buf;
            copy = 1;
        } else if (o->filter.fold_templates) {
            name = an_filter_fold(name, buf, sizeof buf);
        }
        if (!(node = child(t, node, name, f->module, copy)))
            return PF_ENOMEM;
        add_stats(&t->v[node].incl, st);
    }
    add_stats(&t->v[node].self, st);
    return 0;
}

/* Children of node `p` sorted by key descending (ties by name), in a new
 * array *out (caller frees).  Returns their number; SIZE_MAX on ENOMEM. */
static const tree_t *sort_tree;
static an_key_t sort_key;

static int cmp_child(const void *a, const void *b)
{
    const tnode_t *x = &sort_tree->v[*(const size_t *)a], *y = &sort_tree->v[*(const size_t *)b];
    uint64_t kx = fig_key(&x->incl, sort_key), ky = fig_key(&y->incl, sort_key);
    if (kx != ky)
        return kx > ky ? -1 : 1;
    return strcmp(x->name, y->name);
}

static size_t children(const tree_t *t, size_t p, an_key_t key, size_t **out)
{
    size_t n = 0;
    for (size_t c = t->v[p].first_child; c; c = t->v[c].next_sibling)
        n++;
    *out = malloc((n ? n : 1) * sizeof **out);
    if (!*out)
        return SIZE_MAX;
    n = 0;
    for (size_t c = t->v[p].first_child; c; c = t->v[c].next_sibling)
        (*out)[n++] = c;
    sort_tree = t;
    sort_key = key;
    qsort(*out, n, sizeof **out, cmp_child);
    return n;
}

/* 1 when node c is shown: its key figure reaches the threshold and the
 * --min-bytes / --min-count filters. */
static int shown(const tree_t *t, const an_view_opts_t *o, size_t c, uint64_t total)
{
    uint64_t k = fig_key(&t->v[c].incl, o->sort), bytes, count;
    fig_minimums(&t->v[c].incl, o->sort, &bytes, &count);
    return k > 0 && (long double)k * 100.0L >= (long double)o->threshold * (long double)total &&
           bytes >= o->filter.min_bytes && count >= o->filter.min_count;
}

static int key_is_bytes(an_key_t k)
{
    return k == AN_KEY_BYTES || k == AN_KEY_LEAKED || k == AN_KEY_PEAK;
}

static const char *figure(an_key_t k, uint64_t v, char *buf)
{
    return key_is_bytes(k) ? an_units_bytes(v, buf) : an_units_count(v, buf);
}

typedef struct walk {
    an_report_t *r;
    const an_view_opts_t *o;
    const tree_t *t;
    uint64_t total;
    FILE *out;
    an_json_t j;
    size_t next_id;
    unsigned width;
} walk_t;

static void text_line(walk_t *w, size_t depth, const char *name, const char *module, uint64_t incl,
                      uint64_t self, int has_self)
{
    char a[AN_UNITS_BUF], b[AN_UNITS_BUF], c[AN_UNITS_BUF];
    int used = fprintf(w->out, "%11s %6s %11s  ", figure(w->o->sort, incl, a),
                       an_units_percent(incl, w->total, b),
                       has_self ? figure(w->o->sort, self, c) : "");
    size_t ind = depth < INDENT_MAX ? depth : INDENT_MAX;
    if (depth > INDENT_MAX)
        used += fprintf(w->out, "[%zu] ", depth);
    used += fprintf(w->out, "%*s", (int)(2 * ind), "");
    /* an unknown function's node name carries its module: show "?? +0xOFF" */
    const char *plus = !strncmp(name, "?? ", 3) ? strrchr(name, '+') : NULL;
    char unknown[48];
    if (plus) {
        snprintf(unknown, sizeof unknown, "?? %s", plus);
        name = unknown;
    }
    int room = (int)w->width - used - (module ? (int)strlen(module) + 3 : 0);
    if (room < 20)
        room = 20;
    if ((int)strlen(name) > room)
        fprintf(w->out, "%.*s...", room - 3, name);
    else
        fprintf(w->out, "%s", name);
    if (module)
        fprintf(w->out, "  (%s)", module);
    fputc('\n', w->out);
}

static void json_figures(an_json_t *j, const char *key, const tfig_t *s)
{
    an_json_key(j, key);
    an_json_object_begin(j);
    an_json_kv_u64(j, "allocations", s->allocations);
    an_json_kv_u64(j, "bytes_allocated", s->bytes_allocated);
    an_json_kv_u64(j, "leaked_bytes", s->leaked_bytes);
    an_json_kv_u64(j, "leaked_allocations", s->leaked_allocations);
    an_json_kv_u64(j, "peak_bytes", s->peak_bytes);
    an_json_kv_u64(j, "temporary_allocations", s->temporary);
    an_json_object_end(j);
}

/* Print node p's shown children (depth-first), then one line for the
 * pruned ones.  Iterative in the caller's depth would be nicer; the
 * recursion depth is bounded by PF_READ_MAX_DEPTH frames (plus inlines). */
static int walk(walk_t *w, size_t p, size_t depth, uint64_t parent_id)
{
    size_t *kids, n = children(w->t, p, w->o->sort, &kids);
    if (n == SIZE_MAX)
        return PF_ENOMEM;
    int rc = 0;
    size_t pruned = 0, past_top = 0, shown_n = 0;
    uint64_t pruned_key = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        const tnode_t *c = &w->t->v[kids[i]];
        int keep = shown(w->t, w->o, kids[i], w->total);
        if (keep && shown_n >= w->o->filter.top) {
            keep = 0;
            past_top++;
        }
        if (!keep) {
            if (fig_key(&c->incl, w->o->sort)) {
                pruned++;
                pruned_key = an_add(pruned_key, fig_key(&c->incl, w->o->sort));
            }
            continue;
        }
        shown_n++;
        uint64_t id = ++w->next_id;
        const char *mod = an_filter_module_name(w->r->prof, c->module);
        if (w->o->json) {
            an_json_object_begin(&w->j);
            an_json_kv_u64(&w->j, "id", id);
            an_json_kv_u64(&w->j, "parent", parent_id);
            an_json_kv_u64(&w->j, "depth", depth);
            an_json_kv_str(&w->j, "function", c->name);
            an_json_kv_str(&w->j, "module", mod);
            an_json_kv_u64(&w->j, "inclusive", fig_key(&c->incl, w->o->sort));
            an_json_kv_u64(&w->j, "self", fig_key(&c->self, w->o->sort));
            json_figures(&w->j, "inclusive_figures", &c->incl);
            json_figures(&w->j, "self_figures", &c->self);
            an_json_object_end(&w->j);
        } else {
            text_line(w, depth, c->name, mod, fig_key(&c->incl, w->o->sort),
                      fig_key(&c->self, w->o->sort), 1);
        }
        rc = walk(w, kids[i], depth + 1, id);
    }
    if (pruned && !w->o->json) {
        char name[96];
        if (!past_top)
            snprintf(name, sizeof name, "(%zu below threshold)", pruned);
        else if (past_top == pruned)
            snprintf(name, sizeof name, "(%zu more, past --top %zu)", pruned, w->o->filter.top);
        else
            snprintf(name, sizeof name, "(%zu below threshold or past --top %zu)", pruned,
                     w->o->filter.top);
        text_line(w, depth, name, NULL, pruned_key, 0, 0);
    }
    free(kids);
    return rc;
}

static void tree_free(tree_t *t)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->v[i].owned)
            free((char *)t->v[i].name);
    free(t->v);
    free(t->hash);
}

static const char *const key_names[] = {"allocations", "bytes", "leaked", "peak", "temporary"};
static const char *const key_labels[] = {"allocations", "allocated", "leaked", "live at the peak",
                                         "temporary allocations"};

int an_view_tree(an_report_t *r, an_view_opts_t *o, FILE *out)
{
    tree_t t = {0};
    an_groups_t g;
    an_view_opts_t ob = *o;
    ob.filter.merge = AN_MERGE_NONE; /* the tree merges by function anyway */
    int rc = an_view_groups_build(r, &ob, 0, &g);
    if (!rc && !(t.v = calloc(1024, sizeof *t.v)))
        rc = PF_ENOMEM;
    if (!rc) {
        t.cap = 1024;
        t.n = 1;
        t.v[0].module = -1;
        rc = grow_hash(&t);
    }
    for (size_t i = 0; i < g.n && !rc; i++) {
        const an_stats_t *st = &g.v[i].st;
        rc = an_frames_get(&r->frames, r->prof, r->syms, &r->prof->stacks[st->stack]);
        if (!rc)
            rc = add_path(&t, r, o, st);
    }
    walk_t w = {r, o, &t, 0, out, {0}, 0, an_view_bars_width(o->width)};
    if (!rc) {
        w.total = fig_key(&t.v[0].incl, o->sort);
        if (o->json) {
            an_json_init(&w.j, out);
            an_json_object_begin(&w.j);
            an_json_kv_str(&w.j, "view", o->bottom_up ? "tree-bottom-up" : "tree");
            an_json_kv_str(&w.j, "profile", r->path);
            an_json_kv_str(&w.j, "sort", key_names[o->sort]);
            an_json_kv_u64(&w.j, "total", w.total);
            an_json_kv_u64(&w.j, "threshold_permille", (uint64_t)(o->threshold * 10.0 + 0.5));
            an_json_key(&w.j, "nodes");
            an_json_array_begin(&w.j);
        } else {
            char a[AN_UNITS_BUF], ns[AN_UNITS_BUF];
            fprintf(out, "heapscope report --tree%s of %s\n\n", o->bottom_up ? " --bottom-up" : "",
                    r->path);
            size_t stacks = 0;
            for (size_t i = 0; i < g.n; i++)
                stacks += an_model_key(&g.v[i].st, o->sort) != 0;
            /* a count with its noun, or bytes with what they are */
            if (key_is_bytes(o->sort))
                fprintf(out, "%s %s", figure(o->sort, w.total, a), key_labels[o->sort]);
            else
                fprintf(out, "%s", an_units_noun(w.total, o->sort == AN_KEY_TEMPORARY
                                                              ? "temporary allocation"
                                                              : "allocation", a));
            fprintf(out, " in %s; %s; ", an_units_noun(stacks, "stack", ns),
                    o->bottom_up ? "bottom-up from the allocation sites out to main"
                                 : "top-down from main");
            if (o->threshold > 0)
                fprintf(out, "subtrees under %.4g%% pruned\n\n", o->threshold);
            else
                fprintf(out, "nothing pruned\n\n");
            fprintf(out, "%11s %6s %11s  %s\n", "inclusive", "", "self", "function");
        }
        rc = walk(&w, 0, 0, 0);
        if (o->json) {
            an_json_array_end(&w.j);
            an_json_object_end(&w.j);
            fputc('\n', out);
        }
    }
    tree_free(&t);
    an_view_groups_free(&g);
    return rc;
}
