/* an_mprof_data.h - what the mprof tables are computed from, built once
 * from a loaded profile: mprof's per-function "mpdata" (bytes, counts and
 * kept bytes per size class), the caller/callee pairs of the allocation
 * call graph, the 5-function partial paths of the leak table and the
 * allocation bins.  Internal to the an_mprof_*.c files.
 *
 * mprof works on functions: every frame of a stack (innermost first, the
 * caller of malloc being frame 0) is reduced to its function name, and the
 * chain ends at `main` (mprof stopped its walk at crt0's return point).
 * Each pair of adjacent functions on a chain is credited with the bytes
 * of the allocation, once per occurrence, exactly like mprof's monitor. */
#ifndef AN_MPROF_DATA_H
#define AN_MPROF_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "analyse/an_report.h"

/* Size classes of mprof: s <= 32 < m <= 256 < l <= 2048 < x. */
enum { MP_S, MP_M, MP_L, MP_X, MP_NCLASS };
#define MP_NBINS 1025        /* sizes 0..1024; larger ones in `big` */
#define MP_LEAK_DEPTH 5      /* functions in a leak table path */

typedef struct mp_data {
    uint64_t bytes[MP_NCLASS];
    uint64_t count[MP_NCLASS];
    uint64_t kept[MP_NCLASS];   /* only meaningful for a function's leaf data */
} mp_data_t;

typedef struct mp_func {
    char *name;
    mp_data_t leaf;             /* direct allocations */
    uint64_t srefs;             /* allocations over self-edges (F -> F) */
    int scc;                    /* index of its unit in the call graph */
} mp_func_t;

typedef struct mp_edge {
    uint32_t parent, child;     /* function indices */
    mp_data_t d;
} mp_edge_t;

typedef struct mp_leak {
    uint32_t f[MP_LEAK_DEPTH];  /* innermost first */
    int n;                      /* functions used */
    int rooted;                 /* the whole chain fits (reached main) */
    uint64_t allocs, bytes, frees, bytes_freed;
} mp_leak_t;

typedef struct mp_bin {
    uint64_t allocs, frees, bytes, bytes_freed;
} mp_bin_t;

typedef struct mp {
    mp_func_t *funcs;
    size_t n_funcs, cap_funcs;
    uint32_t *fhash;            /* open addressing, index+1, 0 empty */
    size_t fhash_cap;
    mp_edge_t *edges;
    size_t n_edges, cap_edges;
    uint32_t *ehash;
    size_t ehash_cap;
    mp_leak_t *leaks;
    size_t n_leaks, cap_leaks;
    uint32_t *lhash;
    size_t lhash_cap;
    mp_bin_t bins[MP_NBINS];
    mp_bin_t big;               /* sizes above 1024 */
    uint64_t total_allocs, total_bytes, total_frees, total_kept;
    size_t truncated_stacks;    /* stacks the depth cap cut (no root) */
} mp_t;

/* The size class of a request of n bytes. */
int mp_class(uint64_t n);

/* Build mp from the profile of r.  Returns PF_OK or PF_ENOMEM. */
int mp_build(mp_t *mp, an_report_t *r);
void mp_free(mp_t *mp);

/* Sum of the four classes of an array. */
uint64_t mp_sum4(const uint64_t v[MP_NCLASS]);

/* Formatting rules of mprof 3.0 (blank = 0, "." < 1, "**" = 100, else the
 * truncated integer).  mp_breakdown writes " %2s %2s %2s %2s" (12 chars)
 * of 100 * v[c] / denom into buf[13]; mp_percent writes "", "(.)", "(n)"
 * or "(**)" of 100 * v / denom into buf[8]. */
void mp_breakdown(char buf[13], const uint64_t v[MP_NCLASS], uint64_t denom);
void mp_percent(char buf[8], uint64_t v, uint64_t denom);

/* The tables; each writes text or, with j != NULL, one JSON member. */
struct an_json;
int mp_print_bins(const mp_t *mp, FILE *out, struct an_json *j);
int mp_print_leaks(const mp_t *mp, FILE *out, struct an_json *j);
int mp_print_direct(const mp_t *mp, FILE *out, struct an_json *j);
int mp_print_graph(mp_t *mp, FILE *out, struct an_json *j);

#endif
