/* an_mprof_bins.c - mprof's Table 1, the allocation bins: allocations,
 * bytes, frees and kept bytes per request size 0..1024, one "> 1024" row,
 * "other bins" (rows the normal filter left out) and <TOTAL>.  The types
 * column of mprof (struct names of that size, from stabs) stays empty:
 * heapscope does not read DWARF types. */
#include "analyse/an_mprof_data.h"

#include "analyse/an_json.h"

/* mprof's -normal row filter: any size above 100, or more than 1/500 of
 * all allocations. */
static int shown(const mp_bin_t *b, size_t size, uint64_t total_allocs)
{
    if (b->allocs == 0)
        return 0;
    return size > 100 || b->allocs * 500 > total_allocs;
}

static void row(FILE *out, const char *label, const mp_bin_t *b, const mp_t *mp)
{
    char pb[8], pk[8];
    uint64_t kept = b->bytes - b->bytes_freed;
    mp_percent(pb, b->bytes, mp->total_bytes);
    mp_percent(pk, kept, mp->total_kept);
    fprintf(out, "%11s%10llu%10llu %-4s%10llu%10llu %-4s\n", label,
            (unsigned long long)b->allocs, (unsigned long long)b->bytes, pb,
            (unsigned long long)b->frees, (unsigned long long)kept, pk);
}

static void json_bin(an_json_t *j, const char *size, uint64_t n, const mp_bin_t *b)
{
    an_json_object_begin(j);
    if (size)
        an_json_kv_str(j, "size", size);
    else
        an_json_kv_u64(j, "size", n);
    an_json_kv_u64(j, "allocs", b->allocs);
    an_json_kv_u64(j, "bytes", b->bytes);
    an_json_kv_u64(j, "frees", b->frees);
    an_json_kv_u64(j, "kept", b->bytes - b->bytes_freed);
    an_json_object_end(j);
}

int mp_print_bins(const mp_t *mp, FILE *out, an_json_t *j)
{
    mp_bin_t other = {0, 0, 0, 0};
    if (j) {
        an_json_key(j, "bins");
        an_json_array_begin(j);
        for (size_t i = 0; i < MP_NBINS; i++)
            if (mp->bins[i].allocs || mp->bins[i].frees)
                json_bin(j, NULL, i, &mp->bins[i]);
        if (mp->big.allocs || mp->big.frees)
            json_bin(j, "> 1024", 0, &mp->big);
        an_json_array_end(j);
        return 0;
    }
    fprintf(out, "--------- Allocation Bins with possible Types ------------\n\n");
    fprintf(out, "%11s%10s%10s %-4s%10s%10s %-4s    %-8s\n", "size:", "allocs",
            "bytes", "(%)", "frees", "kept", "(%)", "types");
    for (size_t i = 0; i < MP_NBINS; i++) {
        const mp_bin_t *b = &mp->bins[i];
        if (shown(b, i, mp->total_allocs)) {
            char label[24];
            snprintf(label, sizeof label, "%zu", i);
            row(out, label, b, mp);
        } else {
            other.allocs += b->allocs;
            other.frees += b->frees;
            other.bytes += b->bytes;
            other.bytes_freed += b->bytes_freed;
        }
    }
    row(out, "> 1024", &mp->big, mp);
    if (other.allocs || other.frees)
        row(out, "other bins", &other, mp);
    fprintf(out, "%11s%10llu%10llu %-4s%10llu%10llu\n\n", "<TOTAL>",
            (unsigned long long)mp->total_allocs, (unsigned long long)mp->total_bytes,
            "", (unsigned long long)mp->total_frees, (unsigned long long)mp->total_kept);
    return 0;
}
