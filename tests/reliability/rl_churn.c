/* rl_churn.c - threads created and destroyed in a tight loop: THREADS
 * threads one after another (at most 4 alive at once), each allocating
 * 3 blocks of 100 bytes at rl_churn_site and freeing 2 of them; main frees
 * the third after the join.  So rl_churn_site: 3 * THREADS allocations,
 * all freed.  Argument: the number of threads (default 10000).  Exit 0.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static void *rl_churn_site(void)
{
    void *volatile p = malloc(100); /* not a tail call: keep this frame */
    return p;
}

static void *rl_thread(void *arg)
{
    (void)arg;
    void *a = rl_churn_site(), *b = rl_churn_site(), *c = rl_churn_site();
    free(a);
    free(b);
    return c;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 10000;
    pthread_t t[4];
    for (long i = 0; i < n; i += 4) {
        int k = 0;
        for (; k < 4 && i + k < n; k++)
            if (pthread_create(&t[k], NULL, rl_thread, NULL))
                return 2;
        for (int j = 0; j < k; j++) {
            void *r;
            pthread_join(t[j], &r);
            free(r);
        }
    }
    printf("threads %ld\n", n);
    return 0;
}
