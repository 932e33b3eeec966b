/* wl_larson.c - a larson-style server workload (after Larson & Krishnan's
 * benchmark): each of P "lineages" owns 1000 slots of blocks.  The lineage's
 * first thread fills them; then 10 generations of worker threads, one after
 * the other, each inherit the slots, make floor(500000 * SCALE / P) random
 * replacements (free the block in a random slot, allocate a new one of
 * 16-512 bytes) and exit; the lineage's first thread finally frees what is
 * left.  So nearly every block is allocated by one thread and freed by
 * another (one already gone), as when a server hands connections between
 * threads, and new threads keep starting.
 * ops = P * 1000 + P * 10 * floor(500000 * SCALE / P). */
#include "wl_suite.h"

#define SLOTS 1000
#define GENERATIONS 10
#define REPLACEMENTS 500000L

typedef struct lineage {
    unsigned char *slot[SLOTS];
    uint64_t rng, sum;
    long replacements;
} lineage_t;

/* One generation: random replacements in the inherited slots. */
static void *generation(void *arg)
{
    lineage_t *l = (lineage_t *)arg;
    for (long i = 0; i < l->replacements; i++) {
        uint64_t r = ws_rand(&l->rng);
        size_t k = (size_t)(r % SLOTS), size = 16 + (size_t)((r >> 16) % 497);
        l->sum += l->slot[k][0];
        free(l->slot[k]);
        l->slot[k] = (unsigned char *)ws_check(malloc(size));
        l->slot[k][0] = (unsigned char)size;
    }
    return NULL;
}

static void *worker(void *arg)
{
    ws_worker_t *w = (ws_worker_t *)arg;
    lineage_t *l = (lineage_t *)ws_check(calloc(1, sizeof *l));
    l->rng = ws_seed(w->tid);
    l->replacements = REPLACEMENTS * w->scale / w->threads;
    for (size_t k = 0; k < SLOTS; k++) {
        l->slot[k] = (unsigned char *)ws_check(malloc(16 + k % 497));
        l->slot[k][0] = (unsigned char)k;
    }
    for (int g = 0; g < GENERATIONS; g++) {
        pthread_t th;
        if (pthread_create(&th, NULL, generation, l)) {
            fprintf(stderr, "wl-larson: cannot create a thread\n");
            exit(1);
        }
        pthread_join(th, NULL);
    }
    for (size_t k = 0; k < SLOTS; k++) {
        l->sum += l->slot[k][0];
        free(l->slot[k]);
    }
    w->sum = l->sum;
    w->ops = SLOTS + (uint64_t)GENERATIONS * (uint64_t)l->replacements;
    free(l);
    return NULL;
}

int main(int argc, char **argv)
{
    ws_args_t a = {1, 1};
    ws_parse(argc, argv, &a);
    return ws_run("wl-larson", &a, worker);
}
