/* wl_deep.c - allocations far down the stack, as in a C++ service or an
 * interpreter: each request goes 16 frames down a dispatch chain, through
 * one of three handlers (another call site each), 24 more frames down, and
 * there makes 64 allocations of 16-256 bytes from four call sites, each
 * freed at once.  Stacks of 45-50 frames, of which a dozen distinct ones
 * repeat in random order: the recorder's cache of recent stacks must keep
 * stacks deeper than an entry's own 20 checks (col_internal.h).
 *
 * Not one of the issue-5 suite's workloads (bench/run runs it only with
 * `--workloads deep`); it measures the deep-stack path (docs/BENCHMARKS.md,
 * "Deep stacks").  (8,000,000·S)/P allocations per thread, in requests of
 * 64: ops = P * 64 * ((8000000 * S / P) / 64). */
#include "wl_suite.h"

#define DISPATCH 16
#define HANDLER 24
#define PER_REQUEST 64

typedef struct req {
    uint64_t rng;
    uint64_t sum;
} req_t;

/* The four allocation sites: four functions whose bodies differ (the tag
 * byte), so that the compiler does not fold them into one. */
#define DEEP_SITE(tag)                                                                            \
    __attribute__((noinline)) static void *site_##tag(size_t n)                                   \
    {                                                                                             \
        unsigned char *p = ws_check(malloc(n));                                                   \
        p[n - 1] = (unsigned char)#tag[0];                                                        \
        return p;                                                                                 \
    }
DEEP_SITE(a)
DEEP_SITE(b)
DEEP_SITE(c)
DEEP_SITE(d)

/* The request's own work: 64 allocations from the four sites, each
 * written, summed and freed. */
__attribute__((noinline)) static void work(req_t *r)
{
    for (int i = 0; i < PER_REQUEST; i++) {
        uint64_t x = ws_rand(&r->rng);
        size_t n = 16 + (size_t)(x % 241);
        unsigned char *p;
        switch ((x >> 32) & 3) {
        case 0: p = site_a(n); break;
        case 1: p = site_b(n); break;
        case 2: p = site_c(n); break;
        default: p = site_d(n); break;
        }
        p[0] = (unsigned char)i;
        r->sum += p[0] + n;
        free(p);
    }
}

__attribute__((noinline)) static void layer(req_t *r, int depth)
{
    if (depth > 0)
        layer(r, depth - 1);
    else
        work(r);
    __asm__ volatile("" ::: "memory"); /* not a tail call */
}

__attribute__((noinline)) static void handler(req_t *r, int kind)
{
    if (kind == 0) /* three call sites (not merged: their arguments differ) */
        layer(r, HANDLER);
    else if (kind == 1)
        layer(r, HANDLER - 1);
    else
        layer(r, HANDLER - 2);
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void dispatch(req_t *r, int depth, int kind)
{
    if (depth > 0)
        dispatch(r, depth - 1, kind);
    else
        handler(r, kind);
    __asm__ volatile("" ::: "memory");
}

static void *worker(void *arg)
{
    ws_worker_t *w = (ws_worker_t *)arg;
    long requests = (8000000L * w->scale / w->threads) / PER_REQUEST;
    req_t r = {ws_seed(w->tid), 0};
    for (long i = 0; i < requests; i++)
        dispatch(&r, DISPATCH, (int)(ws_rand(&r.rng) % 3));
    w->ops += (uint64_t)requests * PER_REQUEST;
    w->sum += r.sum;
    return NULL;
}

int main(int argc, char **argv)
{
    ws_args_t a = {1, 1};
    ws_parse(argc, argv, &a);
    return ws_run("wl-deep", &a, worker);
}
