/* an_export_massif.c - Valgrind massif's out-file format, so that
 * ms_print and massif-visualizer show heapscope's timeline.
 *
 *   desc:/cmd:/time_unit: ms
 *   snapshot=N, time=, mem_heap_B=, mem_heap_extra_B=0, mem_stacks_B=0,
 *   heap_tree=empty|peak|detailed, then for a detailed one the tree:
 *     n<children>: <bytes> (heap allocation functions) malloc/new/new[], ...
 *      n<children>: <bytes> 0x<addr>: <function> (<file>:<line>)
 *   one space of indentation per level, children largest first.
 *
 * Snapshots: one at time 0, one per SAMPLES entry (empty trees: samples
 * carry only the heap total), the heap peak at its time as the "peak"
 * snapshot with a tree of each stack's bytes at the peak, and a last
 * "detailed" snapshot at the end of the run with the bytes still live.
 * The trees grow from the allocation site towards main, as massif's do;
 * inlined calls are levels of their own.  Times are in milliseconds.
 */
#include "analyse/an_export.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analyse/an_export_stacks.h"
#include "analyse/an_quote.h"

typedef struct ms_node {
    uint64_t bytes;
    uint32_t frame;           /* index into the frame-label table */
    uint32_t first_child, next_sibling; /* node indexes, 0 = none */
    uint32_t n_children;
} ms_node_t;

typedef struct ms_tree {
    ms_node_t *nodes;         /* node 0 is the root */
    size_t n, cap;
    an_xintern_t keys;        /* "parent\x1f frame" -> key index */
    uint32_t *key_node;       /* key index -> node index */
    an_xintern_t labels;      /* "0x...: fn (file:line)" */
} ms_tree_t;

/* The child of `parent` for frame label `label`, created when new.
 * Returns the node index, or 0 when out of memory. */
static uint32_t ms_child(ms_tree_t *t, uint32_t parent, const char *label)
{
    uint32_t lab = an_xintern_str(&t->labels, label);
    if (lab == UINT32_MAX)
        return 0;
    char key[32];
    int len = snprintf(key, sizeof key, "%" PRIu32 ":%" PRIu32, parent, lab);
    int added;
    uint32_t k = an_xintern_add(&t->keys, key, (size_t)len, &added);
    if (k == UINT32_MAX)
        return 0;
    if (!added)
        return t->key_node[k];
    if (t->n == t->cap) {
        size_t cap = t->cap * 2 + 64;
        ms_node_t *v = realloc(t->nodes, cap * sizeof *v);
        uint32_t *kn = realloc(t->key_node, cap * sizeof *kn);
        if (kn)
            t->key_node = kn;
        if (!v || !kn) {
            if (v)
                t->nodes = v;
            return 0;
        }
        t->nodes = v;
        t->cap = cap;
    }
    uint32_t id = (uint32_t)t->n++;
    t->key_node[k] = id;
    ms_node_t *nd = &t->nodes[id];
    memset(nd, 0, sizeof *nd);
    nd->frame = lab;
    nd->next_sibling = t->nodes[parent].first_child;
    t->nodes[parent].first_child = id;
    t->nodes[parent].n_children++;
    return id;
}

/* The tree of every stack's cost c, allocation site first.  Returns 0 or
 * PF_ENOMEM. */
static int ms_build(ms_tree_t *t, an_report_t *r, an_export_cost_t c)
{
    const an_model_t *m = &r->model;
    t->nodes = calloc(64, sizeof *t->nodes);
    t->key_node = calloc(64, sizeof *t->key_node);
    if (!t->nodes || !t->key_node)
        return PF_ENOMEM;
    t->cap = 64;
    t->n = 1;
    for (size_t i = 0; i < m->n_stats; i++) {
        uint64_t v = an_export_cost_of(&m->stats[i], c);
        if (!v)
            continue;
        if (an_frames_get(&r->frames, r->prof, r->syms, &r->prof->stacks[m->stats[i].stack]))
            return PF_ENOMEM;
        t->nodes[0].bytes = an_add(t->nodes[0].bytes, v);
        uint32_t node = 0;
        for (size_t k = 0; k < r->frames.n; k++) {
            const an_frame_t *f = &r->frames.v[k];
            char label[1024];
            if (f->file)
                snprintf(label, sizeof label, "0x%" PRIX64 ": %s (%s:%" PRIu32 ")", f->address,
                         f->function, an_export_basename(f->file), f->line);
            else
                snprintf(label, sizeof label, "0x%" PRIX64 ": %s (in %s)", f->address, f->function,
                         f->module >= 0 && (size_t)f->module < r->prof->n_modules &&
                                 r->prof->modules[f->module].path
                             ? r->prof->modules[f->module].path
                             : "???");
            for (char *p = label; *p; p++)
                if (*p == '\n' || *p == '\r')
                    *p = ' ';
            node = ms_child(t, node, label);
            if (!node)
                return PF_ENOMEM;
            t->nodes[node].bytes = an_add(t->nodes[node].bytes, v);
        }
    }
    return PF_OK;
}

static void ms_tree_free(ms_tree_t *t)
{
    free(t->nodes);
    free(t->key_node);
    an_xintern_free(&t->keys);
    an_xintern_free(&t->labels);
}

static const ms_tree_t *ms_sort_tree;

/* Children largest first, then by label so the output is stable. */
static int ms_child_cmp(const void *a, const void *b)
{
    const ms_node_t *x = &ms_sort_tree->nodes[*(const uint32_t *)a];
    const ms_node_t *y = &ms_sort_tree->nodes[*(const uint32_t *)b];
    if (x->bytes != y->bytes)
        return x->bytes > y->bytes ? -1 : 1;
    return strcmp(ms_sort_tree->labels.strs[x->frame], ms_sort_tree->labels.strs[y->frame]);
}

/* Write node `id` at `depth` and its subtree.  Returns 0 or PF_ENOMEM. */
static int ms_write_node(FILE *out, const ms_tree_t *t, uint32_t id, unsigned depth)
{
    const ms_node_t *nd = &t->nodes[id];
    fprintf(out, "%*sn%" PRIu32 ": %" PRIu64 " %s\n", (int)depth, "", nd->n_children, nd->bytes,
            id ? t->labels.strs[nd->frame]
               : "(heap allocation functions) malloc/new/new[], --alloc-fns, etc.");
    if (!nd->n_children)
        return PF_OK;
    uint32_t *kids = malloc(nd->n_children * sizeof *kids);
    if (!kids)
        return PF_ENOMEM;
    uint32_t n = 0;
    for (uint32_t c = nd->first_child; c && n < nd->n_children; c = t->nodes[c].next_sibling)
        kids[n++] = c;
    ms_sort_tree = t;
    qsort(kids, n, sizeof *kids, ms_child_cmp);
    int rc = PF_OK;
    for (uint32_t i = 0; i < n && !rc; i++)
        rc = ms_write_node(out, t, kids[i], depth + 1);
    free(kids);
    return rc;
}

/* One snapshot; tree NULL writes heap_tree=empty. */
static int ms_snapshot(FILE *out, unsigned *num, uint64_t t_ns, uint64_t heap, const char *kind,
                       const ms_tree_t *tree)
{
    fprintf(out,
            "#-----------\nsnapshot=%u\n#-----------\ntime=%" PRIu64 "\nmem_heap_B=%" PRIu64
            "\nmem_heap_extra_B=0\nmem_stacks_B=0\nheap_tree=%s\n",
            (*num)++, t_ns / 1000000u, heap, tree ? kind : "empty");
    return tree ? ms_write_node(out, tree, 0, 0) : PF_OK;
}

int an_export_massif(an_report_t *r, FILE *out)
{
    const pf_profile_t *p = r->prof;
    const an_summary_t *sum = &r->model.sum;
    ms_tree_t peak, live;
    memset(&peak, 0, sizeof peak);
    memset(&live, 0, sizeof live);
    int rc = ms_build(&peak, r, AN_EXPORT_PEAK);
    if (!rc)
        rc = ms_build(&live, r, AN_EXPORT_LEAKED);
    if (!rc) {
        /* one line each: a newline in the path or an argument would end it */
        fputs("desc: heapscope profile ", out);
        an_quote_arg(out, r->path);
        fputs("\ncmd: ", out);
        if (p->info.argc)
            an_quote_argv(out, p->info.argv, p->info.argc, 0);
        else
            an_quote_arg(out, p->info.exe ? p->info.exe : "?");
        fprintf(out, "\ntime_unit: ms\n");
        unsigned num = 0;
        rc = ms_snapshot(out, &num, 0, 0, NULL, NULL);
        uint64_t end = sum->run_time_ns;
        int peak_done = 0;
        for (size_t i = 0; i < p->n_samples && !rc; i++) {
            const pf_sample_t *s = &p->samples[i];
            if (!peak_done && s->t >= sum->peak_t) {
                rc = ms_snapshot(out, &num, sum->peak_t, sum->peak_bytes, "peak", &peak);
                peak_done = 1;
            }
            if (!rc && s->t <= end)
                rc = ms_snapshot(out, &num, s->t, s->heap, NULL, NULL);
        }
        if (!rc && !peak_done)
            rc = ms_snapshot(out, &num, sum->peak_t, sum->peak_bytes, "peak", &peak);
        if (!rc)
            rc = ms_snapshot(out, &num, end > sum->peak_t ? end : sum->peak_t, sum->leaked_bytes,
                             "detailed", &live);
        if (!rc && ferror(out))
            rc = PF_EIO;
    }
    ms_tree_free(&peak);
    ms_tree_free(&live);
    return rc;
}
