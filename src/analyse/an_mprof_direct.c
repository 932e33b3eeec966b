/* an_mprof_direct.c - mprof's Table 3, the direct allocation table (the
 * analogue of gprof's flat profile): for each function that called an
 * allocation function itself, its share of all bytes, bytes, bytes kept,
 * calls, and two size breakdowns: "% mem(size)" (class bytes / all bytes
 * of the program) and "% all kept" (class kept bytes / all kept bytes).
 * <TOTAL> comes first, then functions by decreasing direct bytes. */
#include "analyse/an_mprof_data.h"

#include <stdlib.h>
#include <string.h>

#include "analyse/an_json.h"

static const mp_t *sort_mp;

static int by_bytes(const void *a, const void *b)
{
    const mp_func_t *x = &sort_mp->funcs[*(const size_t *)a];
    const mp_func_t *y = &sort_mp->funcs[*(const size_t *)b];
    uint64_t bx = mp_sum4(x->leaf.bytes), by = mp_sum4(y->leaf.bytes);
    if (bx != by)
        return bx < by ? 1 : -1;
    return strcmp(x->name, y->name);
}

static void row(FILE *out, const char *pct, const mp_data_t *d, const mp_t *mp,
                const char *name)
{
    char bm[13], bk[13];
    mp_breakdown(bm, d->bytes, mp->total_bytes);
    mp_breakdown(bk, d->kept, mp->total_kept);
    fprintf(out, "  %8s %12llu |%-12s | %12llu |%-12s | %12llu   %s\n", pct,
            (unsigned long long)mp_sum4(d->bytes), bm,
            (unsigned long long)mp_sum4(d->kept), bk,
            (unsigned long long)mp_sum4(d->count), name);
}

static void json_classes(an_json_t *j, const char *key, const uint64_t v[MP_NCLASS])
{
    static const char *names[MP_NCLASS] = {"small", "medium", "large", "xlarge"};
    an_json_key(j, key);
    an_json_object_begin(j);
    for (int c = 0; c < MP_NCLASS; c++)
        an_json_kv_u64(j, names[c], v[c]);
    an_json_object_end(j);
}

int mp_print_direct(const mp_t *mp, FILE *out, an_json_t *j)
{
    size_t *order = malloc((mp->n_funcs + 1) * sizeof *order);
    if (!order)
        return PF_ENOMEM;
    size_t n = 0;
    mp_data_t total;
    memset(&total, 0, sizeof total);
    for (size_t i = 0; i < mp->n_funcs; i++) {
        const mp_data_t *d = &mp->funcs[i].leaf;
        if (mp_sum4(d->bytes) == 0 && mp_sum4(d->count) == 0)
            continue;
        order[n++] = i;
        for (int c = 0; c < MP_NCLASS; c++) {
            total.bytes[c] += d->bytes[c];
            total.count[c] += d->count[c];
            total.kept[c] += d->kept[c];
        }
    }
    sort_mp = mp;
    qsort(order, n, sizeof *order, by_bytes);
    if (j) {
        an_json_key(j, "direct");
        an_json_array_begin(j);
        for (size_t i = 0; i < n; i++) {
            const mp_func_t *f = &mp->funcs[order[i]];
            an_json_object_begin(j);
            an_json_kv_str(j, "function", f->name);
            an_json_kv_u64(j, "bytes", mp_sum4(f->leaf.bytes));
            an_json_kv_u64(j, "bytes_kept", mp_sum4(f->leaf.kept));
            an_json_kv_u64(j, "calls", mp_sum4(f->leaf.count));
            json_classes(j, "bytes_by_class", f->leaf.bytes);
            json_classes(j, "kept_by_class", f->leaf.kept);
            json_classes(j, "calls_by_class", f->leaf.count);
            an_json_object_end(j);
        }
        an_json_array_end(j);
        free(order);
        return 0;
    }
    fprintf(out, "---------  Direct Allocation Table ------------\n\n");
    fprintf(out, "  %8s %12s |%-12s | %12s |%-12s | %12s   %-s\n", " % mem", "bytes",
            " % mem(size)", "bytes kept", "  % all kept", "calls", "name");
    fprintf(out, "---------------------------s--m--l--x-------------------s--m--l--x---------------\n");
    row(out, "-----", &total, mp, "<TOTAL>");
    for (size_t i = 0; i < n; i++) {
        const mp_func_t *f = &mp->funcs[order[i]];
        char pct[32];
        double v = mp->total_bytes ? 100.0 * (double)mp_sum4(f->leaf.bytes) / (double)mp->total_bytes : 0.0;
        snprintf(pct, sizeof pct, "%8.1f", v);
        row(out, pct, &f->leaf, mp, f->name);
    }
    fputc('\n', out);
    free(order);
    return 0;
}
