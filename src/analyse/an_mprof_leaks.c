/* an_mprof_leaks.c - mprof's Table 2, the partial call paths of memory
 * leaks: every 5-function path (merged by function names) whose
 * allocations were not all freed, by decreasing kept bytes.  Percentages
 * are of the sums over the leaking paths only, as in mprof 3.0; the frees
 * columns appear only when some leaking path freed anything.  "||" starts
 * a path that reached main, "..." one cut at 5 functions. */
#include "analyse/an_mprof_data.h"

#include <stdlib.h>

#include "analyse/an_json.h"

static int by_kept(const void *a, const void *b)
{
    const mp_leak_t *x = *(const mp_leak_t *const *)a, *y = *(const mp_leak_t *const *)b;
    uint64_t kx = x->bytes - x->bytes_freed, ky = y->bytes - y->bytes_freed;
    if (kx != ky)
        return kx < ky ? 1 : -1;
    return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : 0;
}

static void path(FILE *out, const mp_t *mp, const mp_leak_t *l)
{
    fputs(l->rooted ? "||" : "...", out);
    for (int i = l->n - 1; i >= 0; i--)
        fprintf(out, " > %s", mp->funcs[l->f[i]].name);
    fputc('\n', out);
}

int mp_print_leaks(const mp_t *mp, FILE *out, an_json_t *j)
{
    const mp_leak_t **v = malloc((mp->n_leaks + 1) * sizeof *v);
    if (!v)
        return PF_ENOMEM;
    size_t n = 0;
    uint64_t t_kept = 0, t_bytes = 0, t_freed = 0, t_frees = 0;
    for (size_t i = 0; i < mp->n_leaks; i++) {
        const mp_leak_t *l = &mp->leaks[i];
        if (l->allocs == l->frees && l->bytes == l->bytes_freed)
            continue;
        v[n++] = l;
        t_kept += l->bytes - l->bytes_freed;
        t_bytes += l->bytes;
        t_freed += l->bytes_freed;
        t_frees += l->frees;
    }
    qsort(v, n, sizeof *v, by_kept);
    if (j) {
        an_json_key(j, "leaks");
        an_json_array_begin(j);
        for (size_t i = 0; i < n; i++) {
            an_json_object_begin(j);
            an_json_kv_u64(j, "kept", v[i]->bytes - v[i]->bytes_freed);
            an_json_kv_u64(j, "allocs", v[i]->allocs);
            an_json_kv_u64(j, "bytes", v[i]->bytes);
            an_json_kv_u64(j, "frees", v[i]->frees);
            an_json_kv_u64(j, "bytes_freed", v[i]->bytes_freed);
            an_json_kv_bool(j, "rooted", v[i]->rooted);
            an_json_key(j, "path");  /* outermost first, like the text */
            an_json_array_begin(j);
            for (int k = v[i]->n - 1; k >= 0; k--)
                an_json_str(j, mp->funcs[v[i]->f[k]].name);
            an_json_array_end(j);
            an_json_object_end(j);
        }
        an_json_array_end(j);
        free(v);
        return 0;
    }
    fprintf(out, "--------- Partial Dynamic Call Paths for Memory Leaks ------------\n\n");
    fprintf(out, "Total bytes not freed: %llu\n\n", (unsigned long long)t_kept);
    if (t_frees)
        fprintf(out, "%10s %-4s%10s%10s %-4s%10s%10s %-4s    %-8s\n", "kept bytes", "(%)",
                "allocs", "bytes", "(%)", "frees", "bytes", "(%)", "path");
    else
        fprintf(out, "%10s %-4s%10s%10s %-4s    %-8s\n", "kept bytes", "(%)",
                "allocs", "bytes", "(%)", "path");
    for (size_t i = 0; i < n; i++) {
        const mp_leak_t *l = v[i];
        if (l->bytes * 200 < t_bytes)  /* -normal: under 0.5% not shown */
            continue;
        char pk[8], pb[8], pf[8];
        uint64_t kept = l->bytes - l->bytes_freed;
        mp_percent(pk, kept, t_kept);
        mp_percent(pb, l->bytes, t_bytes);
        mp_percent(pf, l->bytes_freed, t_freed);
        fprintf(out, "%10llu %-4s%10llu%10llu %-4s", (unsigned long long)kept, pk,
                (unsigned long long)l->allocs, (unsigned long long)l->bytes, pb);
        if (t_frees)
            fprintf(out, "%10llu%10llu %-4s", (unsigned long long)l->frees,
                    (unsigned long long)l->bytes_freed, pf);
        fputs("   ", out);
        path(out, mp, l);
    }
    fputc('\n', out);
    free(v);
    return 0;
}
