/* wl_churn.c - threads that live for one short request each, as in a
 * server that starts a thread per connection or a pool that keeps
 * restarting: in (320 * SCALE) / P rounds, P threads start together, each
 * makes 200 allocations of 16-271 bytes from two call sites (a request's
 * parse and its reply), freeing each at once, and exits; the round joins
 * them before the next starts.  So 320 * SCALE threads in all whatever P,
 * at most P alive at once, and little work per thread: what a profiler
 * pays per thread (its state, its unwinder's memory, the pages it touches
 * first) shows.
 *
 * Not one of the issue-5 suite's workloads (bench/run runs it only with
 * `--workloads churn`); it measures the per-thread cost
 * (docs/BENCHMARKS.md, "Thread churn").
 * ops = P * ((320 * S) / P) * 200. */
#include "wl_suite.h"

#define THREADS_PER_SCALE 320
#define PER_THREAD 200

__attribute__((noinline)) static unsigned char *parse_site(size_t n)
{
    unsigned char *p = (unsigned char *)ws_check(malloc(n));
    p[0] = 'p';
    return p;
}

__attribute__((noinline)) static unsigned char *reply_site(size_t n)
{
    unsigned char *p = (unsigned char *)ws_check(malloc(n));
    p[0] = 'r';
    return p;
}

static void *request(void *arg)
{
    ws_worker_t *w = (ws_worker_t *)arg;
    uint64_t rng = w->sum; /* the round's seed for this thread */
    uint64_t sum = 0;
    for (int i = 0; i < PER_THREAD; i++) {
        size_t n = 16 + (size_t)(ws_rand(&rng) % 256);
        unsigned char *p = (i & 1) ? reply_site(n) : parse_site(n);
        p[n - 1] = (unsigned char)i;
        sum += p[0] + p[n - 1];
        free(p);
    }
    w->sum = sum;
    return NULL;
}

int main(int argc, char **argv)
{
    ws_args_t a = {1, 1};
    ws_parse(argc, argv, &a);
    long rounds = (long)THREADS_PER_SCALE * a.scale / a.threads;
    ws_worker_t *w = (ws_worker_t *)ws_check(aligned_alloc(WS_LINE, (size_t)a.threads * sizeof *w));
    uint64_t sum = 0, ops = 0;
    for (long r = 0; r < rounds; r++) {
        memset(w, 0, (size_t)a.threads * sizeof *w);
        for (int t = 0; t < a.threads; t++) {
            w[t].tid = t;
            w[t].sum = ws_seed((int)(r * a.threads + t));
            if (pthread_create(&w[t].th, NULL, request, &w[t])) {
                fprintf(stderr, "wl-churn: cannot create a thread\n");
                return 1;
            }
        }
        for (int t = 0; t < a.threads; t++) {
            pthread_join(w[t].th, NULL);
            sum += w[t].sum;
            ops += PER_THREAD;
        }
    }
    free(w);
    printf("wl-churn threads=%d ops=%llu checksum=%llu\n", a.threads, (unsigned long long)ops,
           (unsigned long long)sum);
    return 0;
}
