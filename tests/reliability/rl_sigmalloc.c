/* rl_sigmalloc.c - signals delivered while threads are inside malloc, to a
 * handler that itself calls malloc and free.
 *
 * THREADS threads (and main) allocate and free blocks of 2,000..60,000
 * bytes in a loop (ROUNDS each) while an interval timer sends SIGPROF
 * every 100 us of CPU time; the handler mallocs and frees 24 bytes
 * (rl_handler_site) and counts its calls.  Under heapscope the handler's
 * malloc interrupts the collector's own hook: it must neither deadlock
 * nor lose counts.  glibc itself is safe here: the workers never use the
 * 24-byte tcache bin, and each thread puts one chunk in it (with SIGPROF
 * blocked) before it lets the signal in, so the handler's malloc and free
 * never take an arena lock.
 *
 * Prints "worker allocations N" (= (THREADS + 1) * ROUNDS) and "handler
 * allocations M" (the handler's calls, M > 0 unless the machine was too
 * slow to deliver one signal), exit 0.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#define THREADS 3
#define ROUNDS 40000

static atomic_long rl_handled;

__attribute__((noinline)) static void rl_handler_site(void)
{
    void *volatile p = malloc(24);
    if (p) {
        memset(p, 1, 24);
        atomic_fetch_add(&rl_handled, 1);
    }
    free(p);
}

static void rl_handler(int sig)
{
    (void)sig;
    rl_handler_site();
}

/* Put a 24-byte chunk in this thread's tcache, then let SIGPROF in. */
__attribute__((noinline)) static void rl_warm_and_unblock(void)
{
    void *volatile p = malloc(24); /* volatile: the pair must not be optimised away */
    free(p);
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGPROF);
    pthread_sigmask(SIG_UNBLOCK, &s, NULL);
}

__attribute__((noinline)) static void *rl_worker_site(size_t n)
{
    void *volatile p = malloc(n); /* not a tail call: keep this frame */
    return p;
}

static void *rl_worker(void *arg)
{
    unsigned seed = (unsigned)(size_t)arg;
    rl_warm_and_unblock();
    void *keep[8] = {0};
    for (int i = 0; i < ROUNDS; i++) {
        seed = seed * 1103515245u + 12345u;
        size_t n = 2000 + (seed >> 8) % 58000;
        int k = (int)((seed >> 4) & 7);
        free(keep[k]);
        keep[k] = rl_worker_site(n);
        if (keep[k])
            memset(keep[k], 0, 64);
    }
    for (int k = 0; k < 8; k++)
        free(keep[k]);
    return NULL;
}

int main(void)
{
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGPROF);
    pthread_sigmask(SIG_BLOCK, &s, NULL); /* threads inherit it blocked */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = rl_handler;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGPROF, &sa, NULL);
    struct itimerval it = {{0, 100}, {0, 100}};
    setitimer(ITIMER_PROF, &it, NULL);
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        if (pthread_create(&t[i], NULL, rl_worker, (void *)(size_t)(i + 1)))
            return 2;
    rl_worker((void *)(size_t)99);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    pthread_sigmask(SIG_BLOCK, &s, NULL);
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_PROF, &off, NULL);
    printf("worker allocations %d\n", (THREADS + 1) * ROUNDS);
    printf("handler allocations %ld\n", atomic_load(&rl_handled));
    return 0;
}
