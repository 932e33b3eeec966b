/* wl_phased.c - the "peaks/phases" memory shape with the classic cause of
 * external fragmentation: phases alternate small blocks (32-256 B) and large
 * ones (4-64 KiB).  Each phase allocates 16 MiB, then frees 90 % of it in
 * random order and keeps every tenth block as a survivor, so later phases
 * must fit around the survivors of earlier ones.  8 x SCALE phases per
 * thread; everything is freed at the end. */
#include <pthread.h>

#include "wl_alloc.h"

#define PHASE_BYTES ((size_t)16 << 20)

typedef struct part {
    int phases;
    uint64_t seed, ops, sum;
} part_t;

static void *phased_thread(void *arg)
{
    part_t *p = arg;
    size_t kcap = 1024, nkeep = 0;
    void **keep = malloc(kcap * sizeof *keep);
    size_t cap = PHASE_BYTES / 32 + 1;
    unsigned char **blk = malloc(cap * sizeof *blk);
    if (!keep || !blk)
        abort();
    for (int ph = 0; ph < p->phases; ph++) {
        int small = (ph % 2) == 0;
        size_t n = 0, held = 0;
        while (held < PHASE_BYTES && n < cap) {
            size_t sz = small ? 32 + wl_rand(&p->seed) % 225 : 4096 + wl_rand(&p->seed) % 61441;
            blk[n] = malloc(sz);
            if (!blk[n])
                abort();
            memset(blk[n], (int)ph, sz); /* every page resident: RSS tracks the heap */
            p->sum += blk[n][0];
            held += sz;
            n++;
            p->ops++;
        }
        for (size_t i = n; i > 1; i--) { /* shuffle, then free 9 of 10 */
            size_t j = wl_rand(&p->seed) % i;
            unsigned char *t = blk[i - 1];
            blk[i - 1] = blk[j];
            blk[j] = t;
        }
        for (size_t i = 0; i < n; i++) {
            if (i % 10 == 0) {
                if (nkeep == kcap) {
                    kcap *= 2;
                    keep = realloc(keep, kcap * sizeof *keep);
                    if (!keep)
                        abort();
                }
                keep[nkeep++] = blk[i];
            } else {
                free(blk[i]);
                p->ops++;
            }
        }
    }
    for (size_t i = 0; i < nkeep; i++, p->ops++)
        free(keep[i]);
    free(keep);
    free(blk);
    return NULL;
}

int main(int argc, char **argv)
{
    wl_args_t a = {1, 1};
    wl_parse(argc, argv, &a);
    part_t *parts = calloc((size_t)a.threads, sizeof *parts);
    pthread_t *tid = calloc((size_t)a.threads, sizeof *tid);
    for (int t = 0; t < a.threads; t++) {
        parts[t].phases = 8 * a.scale;
        parts[t].seed = 0x0123456789ABCDEFULL + (uint64_t)t;
        pthread_create(&tid[t], NULL, phased_thread, &parts[t]);
    }
    uint64_t ops = 0, sum = 0;
    for (int t = 0; t < a.threads; t++) {
        pthread_join(tid[t], NULL);
        ops += parts[t].ops;
        sum += parts[t].sum;
    }
    free(parts);
    free(tid);
    wl_report("phased", &a, ops, sum);
    return 0;
}
