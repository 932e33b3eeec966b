/* wl_prodcons.c - one thread allocates while the others free (the
 * producer/consumer pattern of xmalloc-test): the producer allocates blocks
 * of 16-512 B, writes them and passes them round-robin to THREADS-1
 * consumers (THREADS >= 2, default 2) through bounded queues; each consumer
 * reads and frees what it receives.  Every free is a remote free, which
 * stresses the path back to the allocating thread's heap (glibc arenas,
 * tcmalloc's central cache, mimalloc's delayed frees).  1M x SCALE blocks. */
#include <pthread.h>

#include "wl_alloc.h"

#define QCAP 4096
#define BLOCKS 1000000

typedef struct queue {
    pthread_mutex_t mu;
    pthread_cond_t not_empty, not_full;
    unsigned char *slot[QCAP];
    size_t head, tail; /* head - tail items queued */
    uint64_t ops, sum;
} queue_t;

static void q_push(queue_t *q, unsigned char *b)
{
    pthread_mutex_lock(&q->mu);
    while (q->head - q->tail == QCAP)
        pthread_cond_wait(&q->not_full, &q->mu);
    q->slot[q->head++ % QCAP] = b;
    pthread_cond_signal(&q->not_empty);
    pthread_mutex_unlock(&q->mu);
}

/* Take up to `max` items into `out`; NULL in the queue ends the consumer. */
static size_t q_pop(queue_t *q, unsigned char **out, size_t max)
{
    pthread_mutex_lock(&q->mu);
    while (q->head == q->tail)
        pthread_cond_wait(&q->not_empty, &q->mu);
    size_t n = 0;
    while (q->head != q->tail && n < max)
        out[n++] = q->slot[q->tail++ % QCAP];
    pthread_cond_signal(&q->not_full);
    pthread_mutex_unlock(&q->mu);
    return n;
}

static void *consumer(void *arg)
{
    queue_t *q = arg;
    unsigned char *batch[256];
    for (;;) {
        size_t n = q_pop(q, batch, 256);
        for (size_t i = 0; i < n; i++) {
            if (!batch[i])
                return NULL;
            q->sum += batch[i][0];
            free(batch[i]);
            q->ops++;
        }
    }
}

int main(int argc, char **argv)
{
    wl_args_t a = {2, 1};
    wl_parse(argc, argv, &a);
    int nc = a.threads > 1 ? a.threads - 1 : 1;
    queue_t *q = calloc((size_t)nc, sizeof *q);
    pthread_t *tid = calloc((size_t)nc, sizeof *tid);
    for (int c = 0; c < nc; c++) {
        pthread_mutex_init(&q[c].mu, NULL);
        pthread_cond_init(&q[c].not_empty, NULL);
        pthread_cond_init(&q[c].not_full, NULL);
        pthread_create(&tid[c], NULL, consumer, &q[c]);
    }
    uint64_t seed = 0xFEEDFACECAFEBEEFULL, ops = 0, sum = 0;
    uint64_t blocks = (uint64_t)BLOCKS * (uint64_t)a.scale;
    for (uint64_t i = 0; i < blocks; i++) {
        size_t sz = 16 + wl_rand(&seed) % 497;
        unsigned char *b = malloc(sz);
        if (!b)
            abort();
        memset(b, (int)(i & 0x7f), sz < 32 ? sz : 32);
        q_push(&q[i % (uint64_t)nc], b);
        ops++;
    }
    for (int c = 0; c < nc; c++)
        q_push(&q[c], NULL);
    for (int c = 0; c < nc; c++) {
        pthread_join(tid[c], NULL);
        ops += q[c].ops;
        sum += q[c].sum;
    }
    free(q);
    free(tid);
    wl_report("prodcons", &a, ops, sum);
    return 0;
}
