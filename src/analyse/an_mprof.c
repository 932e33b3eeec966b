/* an_mprof.c - `heapscope report --mprof`: build mprof's data from the
 * profile (an_mprof_data.c) and print the four tables in mprof 3.0's
 * order (bins, leaks, direct allocations, call graph), each table after a
 * form feed, or all four as one JSON object. */
#include "analyse/an_mprof.h"

#include "analyse/an_json.h"
#include "analyse/an_mprof_data.h"

int an_mprof_print(an_report_t *r, FILE *out, int json)
{
    mp_t mp;
    int rc = mp_build(&mp, r);
    if (rc != PF_OK) {
        mp_free(&mp);
        return rc;
    }
    an_json_t j;
    an_json_t *jp = NULL;
    if (json) {
        an_json_init(&j, out);
        jp = &j;
        an_json_object_begin(jp);
        an_json_key(jp, "totals");
        an_json_object_begin(jp);
        an_json_kv_u64(jp, "allocs", mp.total_allocs);
        an_json_kv_u64(jp, "bytes", mp.total_bytes);
        an_json_kv_u64(jp, "frees", mp.total_frees);
        an_json_kv_u64(jp, "kept", mp.total_kept);
        an_json_kv_u64(jp, "truncated_stacks", mp.truncated_stacks);
        an_json_object_end(jp);
    } else {
        fprintf(out, "--------- MPROF (heapscope) of %s ------------\n\n", r->path);
    }
    if (!json)
        fputc('\f', out);
    rc = mp_print_bins(&mp, out, jp);
    if (!rc) {
        if (!json)
            fputc('\f', out);
        rc = mp_print_leaks(&mp, out, jp);
    }
    if (!rc) {
        if (!json)
            fputc('\f', out);
        rc = mp_print_direct(&mp, out, jp);
    }
    if (!rc)
        rc = mp_print_graph(&mp, out, jp);
    if (json && !rc) {
        an_json_object_end(jp);
        fputc('\n', out);
    }
    mp_free(&mp);
    if (!rc && (fflush(out) != 0 || ferror(out)))
        rc = PF_EIO;
    return rc;
}
