/* wl_hash_table.c - hash-table (after Langr & Kocicka, as in the low-latency
 * heap profiler thesis): each thread, in 1,000,000 x SCALE / P iterations
 * (the thesis: 7*10^6 per thread), inserts a randomly sized array (8-512
 * bytes) at a random position of its own table of
 * max(1024, 65536 / P) buckets.  Each insert
 * allocates exactly two blocks, the entry and its array; an entry already
 * in the bucket is freed with its array (so the table stays near 65536
 * live entries in all, ~25 MB).
 * ops = 2 * P * floor(1000000 * SCALE / P). */
#include "wl_suite.h"

#define BUCKETS 65536
#define ITERS 1000000L

typedef struct entry {
    uint64_t key;
    size_t len;
    unsigned char *data;
} entry_t;

static void *worker(void *arg)
{
    ws_worker_t *w = (ws_worker_t *)arg;
    uint64_t rng = ws_seed(w->tid);
    long n = ITERS * w->scale / w->threads;
    size_t nb = BUCKETS / (size_t)w->threads < 1024 ? 1024 : BUCKETS / (size_t)w->threads;
    entry_t **table = (entry_t **)ws_check(calloc(nb, sizeof *table));
    for (long i = 0; i < n; i++) {
        uint64_t r = ws_rand(&rng);
        size_t b = (size_t)(r % nb), len = 8 + (size_t)((r >> 20) % 505);
        entry_t *e = (entry_t *)ws_check(malloc(sizeof *e));
        e->key = r;
        e->len = len;
        e->data = (unsigned char *)ws_check(malloc(len));
        memset(e->data, (int)(r & 0xff), len);
        if (table[b]) {
            w->sum += table[b]->data[table[b]->len - 1];
            free(table[b]->data);
            free(table[b]);
        }
        table[b] = e;
    }
    ws_hold(w);
    for (size_t b = 0; b < nb; b++)
        if (table[b]) {
            free(table[b]->data);
            free(table[b]);
        }
    free(table);
    w->ops = 2 * (uint64_t)n;
    return NULL;
}

int main(int argc, char **argv)
{
    ws_args_t a = {1, 1};
    ws_parse(argc, argv, &a);
    return ws_run("wl-hash-table", &a, worker);
}
