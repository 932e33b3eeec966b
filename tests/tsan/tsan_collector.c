/* tsan_collector.c - the collector's lock-free tables under ThreadSanitizer.
 *
 * Built with -fsanitize=thread (tests/tsan/CMakeLists.txt) from the
 * collector's own sources, not through the preload library (the TSan
 * runtime cannot be preloaded into another program):
 *
 * - col_stack.c: 4 threads intern 40,000 stacks each, drawn from a pool of
 *   6,000 distinct ones, so they race to insert the same new stacks and
 *   the index grows under them; a fifth thread reads every record as the
 *   writer thread does (col_stack_count, col_stack_get) all along.  After:
 *   every thread got the same id for the same stack, distinct stacks have
 *   distinct ids, and 6,001 ids exist (with the "lost" pseudo-stack).
 * - col_shadow.c: the same 4 threads mark and clear blocks at interleaved
 *   addresses of the same leaves (racing to install each leaf), and put
 *   and take exact sizes in the striped side table; every value read back
 *   is the one the thread wrote.
 * TSan reports any data race and fails the test (halt_on_error=1).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/col_internal.h"

/* What col_stack.c and col_shadow.c read from the rest of the collector. */
col_process_t col_proc = {.granule_shift = 5};
col_config_t col_config = {.fault_shadow_leaves = -1};

#define THREADS 4
#define POOL 6000
#define ROUNDS 40000
#define DEPTH_MAX 24

static uint32_t got[THREADS][POOL];
static int failures;
static int done;

static void fail(const char *what, long a, long b)
{
    if (__atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED) <= 10)
        fprintf(stderr, "FAIL %s (%ld, %ld)\n", what, a, b);
}

/* Stack number k of the pool: depth 1-24, frames derived from k. */
static int pool_stack(uint32_t k, uintptr_t *ips)
{
    int depth = 1 + (int)(k % DEPTH_MAX);
    for (int i = 0; i < depth; i++)
        ips[i] = 0x400000 + (uintptr_t)k * 0x1000 + (uintptr_t)i * 8;
    return depth;
}

static void *interner(void *arg)
{
    int t = (int)(intptr_t)arg;
    uint64_t rng = 0x9e3779b97f4a7c15ull * (uint64_t)(t + 1);
    uintptr_t ips[DEPTH_MAX];
    for (int r = 0; r < ROUNDS; r++) {
        rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
        uint32_t k = (uint32_t)(rng % POOL);
        int n = pool_stack(k, ips);
        uint32_t id = col_stack_intern(ips, n, 0);
        if (id <= COL_STACK_LOST)
            fail("intern gave no id", k, id);
        else if (got[t][k] && got[t][k] != id)
            fail("one stack, two ids", got[t][k], id);
        else if (!col_stack_is(id, ips, n))
            fail("the id's record is not the stack", k, id);
        got[t][k] = id;
    }
    /* the shadow map: this thread's granules interleave with the others'
     * in every leaf, so the threads race to install the same leaves */
    uint64_t stride = 32 * THREADS;
    for (uint64_t i = 0; i < 200000; i++) {
        void *p = (void *)(uintptr_t)(0x100000000ull + (uint64_t)t * 32 + i * stride * 37);
        uint32_t *s = col_shadow_slot(p, 1);
        if (!s) {
            fail("no shadow slot", t, (long)i);
            break;
        }
        uint32_t v = ((uint32_t)(i % 1000 + 2) << COL_SLACK_BITS) | (uint32_t)t;
        __atomic_store_n(s, v, __ATOMIC_RELAXED);
        if (i % 7 == 0 && col_shadow_size_put(p, i * 4096 + (uint64_t)t) != 0)
            fail("side table put", t, (long)i);
        if (i % 7 == 0 && col_shadow_size_take(p) != i * 4096 + (uint64_t)t)
            fail("side table size", t, (long)i);
        if (col_shadow_take(p) != v)
            fail("shadow value", t, (long)i);
    }
    return NULL;
}

/* Reads every published record, as the profile writer does. */
static void *reader(void *arg)
{
    (void)arg;
    while (!__atomic_load_n(&done, __ATOMIC_ACQUIRE)) {
        uint32_t n = col_stack_count();
        for (uint32_t id = 2; id <= n; id++) {
            const col_stack_rec_t *r = col_stack_get(id);
            if (r->id != id || r->depth == 0 || r->depth > DEPTH_MAX)
                fail("record of a published id", id, r->id);
        }
    }
    return NULL;
}

int main(void)
{
    if (col_stack_init() != 0 || col_shadow_init() != 0) {
        fprintf(stderr, "FAIL init\n");
        return 1;
    }
    pthread_t th[THREADS], rd;
    pthread_create(&rd, NULL, reader, NULL);
    for (int t = 0; t < THREADS; t++)
        pthread_create(&th[t], NULL, interner, (void *)(intptr_t)t);
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    __atomic_store_n(&done, 1, __ATOMIC_RELEASE);
    pthread_join(rd, NULL);

    static uint32_t owner[POOL + 2];
    for (uint32_t k = 0; k < POOL; k++) {
        uint32_t id = 0;
        for (int t = 0; t < THREADS; t++) {
            if (!got[t][k])
                continue;
            if (id && got[t][k] != id)
                fail("threads disagree on a stack's id", id, got[t][k]);
            id = got[t][k];
        }
        if (!id)
            continue; /* never drawn */
        if (id > POOL + 1 || owner[id])
            fail("two stacks share an id", k, id);
        else
            owner[id] = k + 1;
    }
    uint32_t count = col_stack_count();
    if (count != POOL + 1)
        fail("ids handed out", POOL + 1, count);
    printf("tsan_collector: %u stacks interned by %d threads, %d failures\n", count, THREADS,
           failures);
    return failures != 0;
}
