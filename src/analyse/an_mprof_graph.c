/* an_mprof_graph.c - mprof's Table 4, the allocation call graph in gprof's
 * style.  Functions are nodes, caller/callee pairs are edges carrying the
 * bytes and allocation counts that passed over them.  Recursion makes
 * pairs count an allocation more than once (main -> f -> g -> f -> g
 * credits f -> g twice), so, like mprof and gprof, every strongly
 * connected component (Tarjan) of more than one function is merged into a
 * "<cycle N>" unit; edges inside it only add to its recursion count.
 *
 * Each entry: ancestors (an "all" row first when there are several), the
 * entry line (the rule in the frac column), descendents (an "all" row last
 * when there are several).  Entries are sorted by self + desc bytes; a
 * cycle's entry is preceded by the list of its member functions. */
#include "analyse/an_mprof_data.h"

#include <stdlib.h>
#include <string.h>

#include "analyse/an_json.h"
#include "analyse/an_units.h"

#define SEPARATOR "-------------------------------s--m--l--x----s--m--l--x----------\n"

typedef struct unit_edge {
    size_t parent, child;        /* unit indices */
    mp_data_t d;
} unit_edge_t;

typedef struct unit {
    char name[64];               /* function name is used when cycle == 0 */
    const char *fname;
    int cycle;                   /* N of <cycle N>, 0 for one function */
    mp_data_t self;
    uint64_t recur;              /* self-edges and edges inside the cycle */
    uint64_t in_bytes, in_count, out_bytes, out_count;
    mp_data_t in;                /* sum over parent edges, per class */
    mp_data_t outd;              /* sum over child edges, per class */
    long index;
} unit_t;

typedef struct graph {
    unit_t *units;
    size_t n_units;
    unit_edge_t *edges;
    size_t n_edges;
    size_t *order;               /* units by decreasing self + desc */
} graph_t;

/* ---- Tarjan's strongly connected components over the functions ------ */

typedef struct tarjan {
    const mp_t *mp;
    size_t *adj_first, *adj;     /* CSR adjacency: children of each function */
    long *index, *low;
    int *on_stack;
    size_t *stack, sp;
    long next;
    size_t n_comp;
} tarjan_t;

static void strongconnect(tarjan_t *t, size_t v)
{
    t->index[v] = t->low[v] = t->next++;
    t->stack[t->sp++] = v;
    t->on_stack[v] = 1;
    for (size_t k = t->adj_first[v]; k < t->adj_first[v + 1]; k++) {
        size_t w = t->adj[k];
        if (t->index[w] < 0) {
            strongconnect(t, w);
            if (t->low[w] < t->low[v])
                t->low[v] = t->low[w];
        } else if (t->on_stack[w] && t->index[w] < t->low[v]) {
            t->low[v] = t->index[w];
        }
    }
    if (t->low[v] == t->index[v]) {
        size_t w;
        do {
            w = t->stack[--t->sp];
            t->on_stack[w] = 0;
            t->mp->funcs[w].scc = (int)t->n_comp;
        } while (w != v);
        t->n_comp++;
    }
}

/* Set funcs[].scc to component numbers; returns the number of components
 * or -1 when out of memory. */
static long find_sccs(mp_t *mp)
{
    size_t n = mp->n_funcs;
    tarjan_t t = {0};
    t.mp = mp;
    t.adj_first = calloc(n + 1, sizeof *t.adj_first);
    t.adj = malloc((mp->n_edges + 1) * sizeof *t.adj);
    t.index = malloc((n + 1) * sizeof *t.index);
    t.low = malloc((n + 1) * sizeof *t.low);
    t.on_stack = calloc(n + 1, sizeof *t.on_stack);
    t.stack = malloc((n + 1) * sizeof *t.stack);
    long rc = -1;
    if (t.adj_first && t.adj && t.index && t.low && t.on_stack && t.stack) {
        for (size_t e = 0; e < mp->n_edges; e++)
            t.adj_first[mp->edges[e].parent + 1]++;
        for (size_t i = 0; i < n; i++)
            t.adj_first[i + 1] += t.adj_first[i];
        size_t *fill = calloc(n + 1, sizeof *fill);
        if (fill) {
            for (size_t e = 0; e < mp->n_edges; e++) {
                size_t p = mp->edges[e].parent;
                t.adj[t.adj_first[p] + fill[p]++] = mp->edges[e].child;
            }
            free(fill);
            for (size_t i = 0; i < n; i++)
                t.index[i] = -1;
            for (size_t i = 0; i < n; i++)
                if (t.index[i] < 0)
                    strongconnect(&t, i);
            rc = (long)t.n_comp;
        }
    }
    free(t.adj_first);
    free(t.adj);
    free(t.index);
    free(t.low);
    free(t.on_stack);
    free(t.stack);
    return rc;
}

/* ---- units and the edges between them -------------------------------- */

static void add_data(mp_data_t *to, const mp_data_t *d)
{
    for (int c = 0; c < MP_NCLASS; c++) {
        to->bytes[c] += d->bytes[c];
        to->count[c] += d->count[c];
        to->kept[c] += d->kept[c];
    }
}

static const graph_t *sort_g;

static int by_self_desc(const void *a, const void *b)
{
    const unit_t *x = &sort_g->units[*(const size_t *)a];
    const unit_t *y = &sort_g->units[*(const size_t *)b];
    uint64_t sx = mp_sum4(x->self.bytes) + x->out_bytes;
    uint64_t sy = mp_sum4(y->self.bytes) + y->out_bytes;
    if (sx != sy)
        return sx < sy ? 1 : -1;
    if ((x->in_count == 0) != (y->in_count == 0))  /* callers before callees */
        return x->in_count == 0 ? -1 : 1;
    return strcmp(x->cycle ? x->name : x->fname, y->cycle ? y->name : y->fname);
}

static int build_graph(mp_t *mp, graph_t *g)
{
    memset(g, 0, sizeof *g);
    long nc = find_sccs(mp);
    if (nc < 0)
        return PF_ENOMEM;
    size_t *members = calloc((size_t)nc + 1, sizeof *members);
    g->units = calloc((size_t)nc + 1, sizeof *g->units);
    g->edges = calloc(mp->n_edges + 1, sizeof *g->edges);
    g->order = malloc(((size_t)nc + 1) * sizeof *g->order);
    if (!members || !g->units || !g->edges || !g->order) {
        free(members);
        return PF_ENOMEM;
    }
    g->n_units = (size_t)nc;
    for (size_t i = 0; i < mp->n_funcs; i++) {
        unit_t *u = &g->units[mp->funcs[i].scc];
        members[mp->funcs[i].scc]++;
        u->fname = mp->funcs[i].name;
        add_data(&u->self, &mp->funcs[i].leaf);
        u->recur += mp->funcs[i].srefs;
    }
    int ncycle = 0;
    /* Number cycles in function order so that the names are stable. */
    for (size_t i = 0; i < mp->n_funcs; i++) {
        unit_t *u = &g->units[mp->funcs[i].scc];
        if (members[mp->funcs[i].scc] > 1 && u->cycle == 0) {
            u->cycle = ++ncycle;
            snprintf(u->name, sizeof u->name, "<cycle %d>", u->cycle);
        }
    }
    free(members);
    /* Merge function edges into unit edges (linear probe on the small
     * per-parent lists would do; a sort keeps it simple and O(E log E)). */
    for (size_t e = 0; e < mp->n_edges; e++) {
        const mp_edge_t *fe = &mp->edges[e];
        size_t pu = (size_t)mp->funcs[fe->parent].scc, cu = (size_t)mp->funcs[fe->child].scc;
        if (pu == cu) {
            g->units[pu].recur += mp_sum4(fe->d.count);
            continue;
        }
        unit_edge_t *ue = NULL;
        for (size_t k = 0; k < g->n_edges; k++)
            if (g->edges[k].parent == pu && g->edges[k].child == cu) {
                ue = &g->edges[k];
                break;
            }
        if (!ue) {
            ue = &g->edges[g->n_edges++];
            ue->parent = pu;
            ue->child = cu;
        }
        add_data(&ue->d, &fe->d);
    }
    for (size_t k = 0; k < g->n_edges; k++) {
        unit_edge_t *ue = &g->edges[k];
        unit_t *p = &g->units[ue->parent], *c = &g->units[ue->child];
        p->out_bytes += mp_sum4(ue->d.bytes);
        p->out_count += mp_sum4(ue->d.count);
        add_data(&p->outd, &ue->d);
        c->in_bytes += mp_sum4(ue->d.bytes);
        c->in_count += mp_sum4(ue->d.count);
        add_data(&c->in, &ue->d);
    }
    for (size_t i = 0; i < g->n_units; i++)
        g->order[i] = i;
    sort_g = g;
    qsort(g->order, g->n_units, sizeof *g->order, by_self_desc);
    for (size_t i = 0; i < g->n_units; i++)
        g->units[g->order[i]].index = (long)i;
    return PF_OK;
}

static void free_graph(graph_t *g)
{
    free(g->units);
    free(g->edges);
    free(g->order);
}

static const char *uname(const unit_t *u) { return u->cycle ? u->name : u->fname; }

/* ---- text -------------------------------------------------------------- */

/* One row in mprof's "%-5s%7s%9s %-5s |%-12s |%-12s |%8s%-9s%-s" layout,
 * trailing blanks removed. */
static void row(FILE *out, const char *idx, const char *sd, const char *bytes,
                const char *pct, const char *size, const char *frac,
                const char *called, const char *total, const char *name)
{
    char line[512];
    int n = snprintf(line, sizeof line, "%-5s%7s%9s %-5s |%-12s |%-12s |%8s%-9s%-s",
                     idx, sd, bytes, pct, size, frac, called, total, name);
    if (n < 0)
        return;
    size_t len = strlen(line);
    while (len > 0 && line[len - 1] == ' ')
        len--;
    fprintf(out, "%.*s\n", (int)len, line);
}

static void u64s(char *buf, size_t sz, uint64_t v)
{
    snprintf(buf, sz, "%llu", (unsigned long long)v);
}

/* An ancestor (child == 0) or descendent row for edge e of unit u. */
static void edge_row(FILE *out, const graph_t *g, const unit_edge_t *e, int child,
                     uint64_t all)
{
    const unit_t *other = &g->units[child ? e->child : e->parent];
    char bytes[24], pct[8], size[13], frac[13], called[24], total[32], name[160];
    uint64_t b = mp_sum4(e->d.bytes);
    u64s(bytes, sizeof bytes, b);
    mp_percent(pct, b, all);
    mp_breakdown(size, e->d.bytes, b);
    mp_breakdown(frac, e->d.bytes, all);
    u64s(called, sizeof called, mp_sum4(e->d.count));
    snprintf(total, sizeof total, "/%llu",
             (unsigned long long)(child ? other->in_count : other->out_count));
    snprintf(name, sizeof name, "    %s [%ld]", uname(other), other->index);
    row(out, "", "", bytes, pct, size, frac, called, total, name);
}

static void all_row(FILE *out, const mp_data_t *d, uint64_t all)
{
    char bytes[24], size[13];
    u64s(bytes, sizeof bytes, all);
    mp_breakdown(size, d->bytes, all);
    row(out, "", "all", bytes, "", size, "", "", "", "");
}

static int by_edge_bytes(const void *a, const void *b)
{
    uint64_t x = mp_sum4((*(const unit_edge_t *const *)a)->d.bytes);
    uint64_t y = mp_sum4((*(const unit_edge_t *const *)b)->d.bytes);
    return x < y ? 1 : x > y ? -1 : 0;
}

/* The member list printed before a cycle's entry. */
static void cycle_members(FILE *out, const mp_t *mp, const graph_t *g, size_t ui)
{
    const unit_t *u = &g->units[ui];
    uint64_t self = mp_sum4(u->self.bytes);
    char idx[24], sd[16], bytes[24], pct[8], size[13], called[24], rec[24], name[160];
    snprintf(idx, sizeof idx, "[%ld]", u->index);
    snprintf(sd, sizeof sd, "%.1f",
             mp->total_bytes ? 100.0 * (double)(self + u->out_bytes) / (double)mp->total_bytes : 0.0);
    u64s(bytes, sizeof bytes, self);
    mp_percent(pct, self, self + u->out_bytes);
    mp_breakdown(size, u->self.bytes, self);
    u64s(called, sizeof called, u->in_count);
    snprintf(rec, sizeof rec, "+%llu", (unsigned long long)u->recur);
    snprintf(name, sizeof name, "%s as a whole [%ld]", u->name, u->index);
    row(out, idx, sd, bytes, pct, size, " -----------", called, rec, name);
    for (size_t i = 0; i < mp->n_funcs; i++) {
        const mp_func_t *f = &mp->funcs[i];
        if ((size_t)f->scc != ui)
            continue;
        char fb[24], fp[8], fs[13], ff[13], fn[160];
        uint64_t b = mp_sum4(f->leaf.bytes);
        u64s(fb, sizeof fb, b);
        mp_percent(fp, b, self);
        mp_breakdown(fs, f->leaf.bytes, b);
        mp_breakdown(ff, f->leaf.bytes, self);
        snprintf(fn, sizeof fn, "    %s in %s", f->name, u->name);
        row(out, "", "", fb, fp, fs, ff, "", "", fn);
    }
    fputs(SEPARATOR, out);
}

static int print_entry(FILE *out, const mp_t *mp, const graph_t *g, size_t ui,
                       const unit_edge_t **tmp)
{
    const unit_t *u = &g->units[ui];
    if (u->cycle)
        cycle_members(out, mp, g, ui);
    size_t np = 0, nch = 0;
    for (size_t k = 0; k < g->n_edges; k++)
        if (g->edges[k].child == ui)
            tmp[np++] = &g->edges[k];
    qsort(tmp, np, sizeof *tmp, by_edge_bytes);
    if (np > 1)
        all_row(out, &u->in, u->in_bytes);
    for (size_t k = 0; k < np; k++)
        edge_row(out, g, tmp[k], 0, u->in_bytes);

    uint64_t self = mp_sum4(u->self.bytes);
    char idx[24], sd[16], bytes[24], pct[8], size[13], called[24], rec[24], name[160];
    snprintf(idx, sizeof idx, "[%ld]", u->index);
    snprintf(sd, sizeof sd, "%.1f",
             mp->total_bytes ? 100.0 * (double)(self + u->out_bytes) / (double)mp->total_bytes : 0.0);
    u64s(bytes, sizeof bytes, self);
    mp_percent(pct, self, self + u->out_bytes);
    mp_breakdown(size, u->self.bytes, self);
    u64s(called, sizeof called, u->in_count);
    rec[0] = 0;
    if (u->recur)
        snprintf(rec, sizeof rec, "+%llu", (unsigned long long)u->recur);
    snprintf(name, sizeof name, "%s [%ld]", uname(u), u->index);
    row(out, idx, sd, bytes, pct, size, " -----------", called, rec, name);

    for (size_t k = 0; k < g->n_edges; k++)
        if (g->edges[k].parent == ui)
            tmp[nch++] = &g->edges[k];
    qsort(tmp, nch, sizeof *tmp, by_edge_bytes);
    for (size_t k = 0; k < nch; k++)
        edge_row(out, g, tmp[k], 1, u->out_bytes);
    if (nch > 1)
        all_row(out, &u->outd, u->out_bytes);
    fputs(SEPARATOR, out);
    if (!u->cycle && np > 0 && u->in_bytes != self + u->out_bytes)
        fprintf(out, "Parent and child disagree on data allocation in %s: %llu over callers, "
                "%llu self + desc\n", uname(u), (unsigned long long)u->in_bytes,
                (unsigned long long)(self + u->out_bytes));
    return 0;
}

/* ---- JSON -------------------------------------------------------------- */

static void json_edges(an_json_t *j, const graph_t *g, size_t ui, int children)
{
    an_json_key(j, children ? "children" : "parents");
    an_json_array_begin(j);
    for (size_t k = 0; k < g->n_edges; k++) {
        const unit_edge_t *e = &g->edges[k];
        if ((children ? e->parent : e->child) != ui)
            continue;
        const unit_t *o = &g->units[children ? e->child : e->parent];
        an_json_object_begin(j);
        an_json_kv_str(j, "name", uname(o));
        an_json_kv_u64(j, "index", (uint64_t)o->index);
        an_json_kv_u64(j, "bytes", mp_sum4(e->d.bytes));
        an_json_kv_u64(j, "called", mp_sum4(e->d.count));
        an_json_kv_u64(j, "total", children ? o->in_count : o->out_count);
        an_json_object_end(j);
    }
    an_json_array_end(j);
}

static void json_entry(an_json_t *j, const mp_t *mp, const graph_t *g, size_t ui)
{
    const unit_t *u = &g->units[ui];
    an_json_object_begin(j);
    an_json_kv_u64(j, "index", (uint64_t)u->index);
    an_json_kv_str(j, "name", uname(u));
    if (u->cycle) {
        an_json_key(j, "members");
        an_json_array_begin(j);
        for (size_t i = 0; i < mp->n_funcs; i++)
            if ((size_t)mp->funcs[i].scc == ui)
                an_json_str(j, mp->funcs[i].name);
        an_json_array_end(j);
    }
    an_json_kv_u64(j, "self", mp_sum4(u->self.bytes));
    an_json_kv_u64(j, "self_desc", mp_sum4(u->self.bytes) + u->out_bytes);
    an_json_kv_u64(j, "called", u->in_count);
    an_json_kv_u64(j, "recursive", u->recur);
    json_edges(j, g, ui, 0);
    json_edges(j, g, ui, 1);
    an_json_object_end(j);
}

int mp_print_graph(mp_t *mp, FILE *out, an_json_t *j)
{
    graph_t g;
    int rc = build_graph(mp, &g);
    const unit_edge_t **tmp = malloc((g.n_edges + 1) * sizeof *tmp);
    if (rc != PF_OK || !tmp) {
        free(tmp);
        free_graph(&g);
        return PF_ENOMEM;
    }
    if (j) {
        an_json_key(j, "call_graph");
        an_json_array_begin(j);
        for (size_t i = 0; i < g.n_units; i++)
            json_entry(j, mp, &g, g.order[i]);
        an_json_array_end(j);
    } else {
        fprintf(out, "\f\n--------- Allocation Call Graph ------------\n\n");
        fprintf(out, "        self                |     /ances  |     /ances  |  called/total       ancestors\n");
        fprintf(out, "index    +       self (%%)   | size-func   | frac        |  called/recur   name [index]\n");
        fprintf(out, "        desc                |     \\desc   |     \\desc   |  called/total       descendents\n");
        fputs(SEPARATOR, out);
        char cut[AN_UNITS_BUF];
        if (mp->truncated_stacks)
            fprintf(out, "note: stacks the depth cap cut: %s; their outermost functions are "
                         "missing, so callers and self + desc of those functions can disagree\n",
                    an_units_count(mp->truncated_stacks, cut));
        for (size_t i = 0; i < g.n_units; i++)
            print_entry(out, mp, &g, g.order[i], tmp);
    }
    free(tmp);
    free_graph(&g);
    return 0;
}
