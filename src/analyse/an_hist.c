/* an_hist.c - `heapscope report --histogram [--stack ID]`: how many
 * allocations of each requested size, over the stacks the filters keep or
 * for one stack.  Exact per size up to 8192 bytes; above, the profile's
 * buckets (16 per power of two, docs/FORMAT.md).  The text table shows
 * every size when there are at most 40, else power-of-two ranges; the
 * JSON always has the exact rows. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analyse/an_json.h"
#include "analyse/an_units.h"
#include "analyse/an_view_bars.h"
#include "analyse/an_view_group.h"
#include "common/ut_grow.h"

#define EXACT_ROWS_MAX 40

typedef struct hist_row {
    uint64_t lo, hi, allocations, bytes;
} hist_row_t;

static int cmp_row(const void *a, const void *b)
{
    const hist_row_t *x = a, *y = b;
    if (x->lo != y->lo)
        return x->lo < y->lo ? -1 : 1;
    return (x->hi > y->hi) - (x->hi < y->hi);
}

/* Append the counters of stack `st` to rows (grown as needed). */
static int add_stack(const pf_profile_t *p, const pf_stack_t *st, hist_row_t **rows, size_t *n,
                     size_t *cap)
{
    for (size_t i = 0; i < st->n_counters; i++) {
        const pf_counter_t *c = &p->counters[st->first_counter + i];
        if (ut_grow((void **)rows, cap, *n + 1, sizeof **rows))
            return PF_ENOMEM;
        (*rows)[(*n)++] = (hist_row_t){c->size_lo, c->size_hi, c->allocations, c->bytes_allocated};
    }
    return 0;
}

/* Sort rows by size and sum equal ones; returns the new count. */
static size_t merge_rows(hist_row_t *rows, size_t n)
{
    if (n > 1)
        qsort(rows, n, sizeof *rows, cmp_row);
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (o && rows[o - 1].lo == rows[i].lo && rows[o - 1].hi == rows[i].hi) {
            rows[o - 1].allocations = an_add(rows[o - 1].allocations, rows[i].allocations);
            rows[o - 1].bytes = an_add(rows[o - 1].bytes, rows[i].bytes);
        } else {
            rows[o++] = rows[i];
        }
    }
    return o;
}

/* Fold exact rows into power-of-two ranges [2^k, 2^(k+1)-1] (0 alone). */
static size_t pow2_rows(hist_row_t *rows, size_t n)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t lo = 0, hi = 0;
        if (rows[i].lo) {
            lo = 1;
            while (lo <= rows[i].lo / 2)
                lo *= 2;
            hi = lo * 2 - 1;
        }
        if (o && rows[o - 1].lo == lo) {
            rows[o - 1].allocations = an_add(rows[o - 1].allocations, rows[i].allocations);
            rows[o - 1].bytes = an_add(rows[o - 1].bytes, rows[i].bytes);
            if (rows[i].hi > rows[o - 1].hi)
                rows[o - 1].hi = rows[i].hi;
        } else {
            rows[o++] = (hist_row_t){lo, hi > rows[i].hi ? hi : rows[i].hi, rows[i].allocations,
                                     rows[i].bytes};
        }
    }
    return o;
}

static void print_text(an_report_t *r, an_view_opts_t *o, hist_row_t *rows, size_t n,
                       size_t stacks, FILE *out)
{
    uint64_t total = 0, max = 0, bytes = 0;
    for (size_t i = 0; i < n; i++) {
        total = an_add(total, rows[i].allocations);
        bytes = an_add(bytes, rows[i].bytes);
        if (rows[i].allocations > max)
            max = rows[i].allocations;
    }
    char a[AN_UNITS_BUF], b[AN_UNITS_BUF], c[AN_UNITS_BUF], d[AN_UNITS_BUF];
    fprintf(out, "heapscope report --histogram of %s\n\n", r->path);
    if (o->has_stack)
        fprintf(out, "stack %" PRIu64 ": ", o->stack_id);
    if (bytes < 1024)
        fprintf(out, "%s, %s, %s\n", an_units_noun(total, "allocation", a),
                an_units_bytes(bytes, b), an_units_noun(stacks, "stack", d));
    else
        fprintf(out, "%s, %s (%s bytes), %s\n", an_units_noun(total, "allocation", a),
                an_units_bytes(bytes, b), an_units_count(bytes, c), an_units_noun(stacks, "stack", d));
    int folded = n > EXACT_ROWS_MAX;
    if (folded) {
        n = pow2_rows(rows, n);
        fprintf(out, "%zu sizes or more: shown in power-of-two ranges (--json has every size)\n",
                (size_t)EXACT_ROWS_MAX + 1);
    }
    fprintf(out, "\n%-21s %13s %7s %12s  \n", "size (bytes)", "allocations", "share", "bytes");
    unsigned w = an_view_bars_width(o->width);
    unsigned cols = w > 60 ? w - 58 : 2;
    for (size_t i = 0; i < n; i++) {
        char range[48];
        if (rows[i].lo == rows[i].hi)
            snprintf(range, sizeof range, "%" PRIu64, rows[i].lo);
        else
            snprintf(range, sizeof range, "%" PRIu64 "-%" PRIu64, rows[i].lo, rows[i].hi);
        fprintf(out, "%-21s %13s %7s %12s  ", range, an_units_count(rows[i].allocations, a),
                an_units_percent(rows[i].allocations, total, b), an_units_bytes(rows[i].bytes, d));
        an_view_bars_print(out, cols, rows[i].allocations, 0, max);
        fputc('\n', out);
    }
    if (n == 0)
        fprintf(out, "(no allocations)\n");
}

static void print_json(an_report_t *r, an_view_opts_t *o, const hist_row_t *rows, size_t n,
                       size_t stacks, FILE *out)
{
    an_json_t j;
    uint64_t total = 0, bytes = 0;
    for (size_t i = 0; i < n; i++) {
        total = an_add(total, rows[i].allocations);
        bytes = an_add(bytes, rows[i].bytes);
    }
    an_json_init(&j, out);
    an_json_object_begin(&j);
    an_json_kv_str(&j, "view", "histogram");
    an_json_kv_str(&j, "profile", r->path);
    an_json_key(&j, "stack");
    if (o->has_stack)
        an_json_u64(&j, o->stack_id);
    else
        an_json_null(&j);
    an_json_kv_u64(&j, "stacks", stacks);
    an_json_kv_u64(&j, "allocations", total);
    an_json_kv_u64(&j, "bytes", bytes);
    an_json_key(&j, "sizes");
    an_json_array_begin(&j);
    for (size_t i = 0; i < n; i++) {
        an_json_object_begin(&j);
        an_json_kv_u64(&j, "size_lo", rows[i].lo);
        an_json_kv_u64(&j, "size_hi", rows[i].hi);
        an_json_kv_u64(&j, "allocations", rows[i].allocations);
        an_json_kv_u64(&j, "bytes", rows[i].bytes);
        an_json_object_end(&j);
    }
    an_json_array_end(&j);
    an_json_object_end(&j);
    fputc('\n', out);
}

int an_view_histogram(an_report_t *r, an_view_opts_t *o, FILE *out)
{
    hist_row_t *rows = NULL;
    size_t n = 0, cap = 0, stacks = 0;
    int rc = 0;
    if (o->has_stack) {
        const pf_stack_t *st = pf_reader_find_stack(r->prof, o->stack_id);
        if (!st)
            return 1;
        rc = add_stack(r->prof, st, &rows, &n, &cap);
        stacks = 1;
    } else {
        an_groups_t g;
        size_t *order = NULL, ng = 0;
        rc = an_view_groups_build(r, o, 0, &g);
        if (!rc)
            rc = an_view_groups_rank(&g, o, AN_KEY_ALLOCATIONS, &order, &ng);
        for (size_t i = 0; i < ng && !rc; i++) {
            const an_group_t *row = &g.v[order[i]];
            for (size_t k = 0; k < row->n_members && !rc; k++, stacks++) {
                size_t si = r->model.stats[g.members[row->first + k]].stack;
                rc = add_stack(r->prof, &r->prof->stacks[si], &rows, &n, &cap);
            }
        }
        free(order);
        an_view_groups_free(&g);
    }
    if (!rc) {
        n = merge_rows(rows, n);
        if (o->json)
            print_json(r, o, rows, n, stacks, out);
        else
            print_text(r, o, rows, n, stacks, out);
    }
    free(rows);
    return rc;
}
