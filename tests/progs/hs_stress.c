/* hs_stress.c - threads that start and exit all the time, and forks while
 * other threads allocate.
 *
 *   4 workers:       churn_site, 20000 x 40 bytes each, all freed
 *   300 short threads (created and joined 30 at a time):
 *                    short_site, 5 x 64 bytes each, 4 freed, 1 kept
 *   20 forks while the workers run; each child: child_site 1 x 77 bytes,
 *                    then _exit(0) (its profile includes the inherited heap)
 * The main thread prints nothing; exit status 0 when everything joined. */
#include <pthread.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hsprog.h"

static HS_SITE void *churn_site(void)
{
    return malloc(40);
}

static void *worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 20000; i++) {
        void *p = churn_site();
        hs_escape(p);
        free(p);
    }
    return NULL;
}

static HS_SITE void *short_site(void)
{
    return malloc(64);
}

static void *short_thread(void *arg)
{
    void *p[5];
    for (int i = 0; i < 5; i++)
        p[i] = short_site();
    for (int i = 1; i < 5; i++)
        free(p[i]);
    hs_escape(p[0]);
    return p[0]; /* kept: a leak per thread */
}

static HS_SITE void child_site(void)
{
    hs_escape(malloc(77));
}

int main(void)
{
    pthread_t w[4];
    for (int i = 0; i < 4; i++)
        if (pthread_create(&w[i], NULL, worker, NULL))
            return 2;
    for (int round = 0; round < 10; round++) {
        pthread_t s[30];
        for (int i = 0; i < 30; i++)
            if (pthread_create(&s[i], NULL, short_thread, NULL))
                return 2;
        for (int i = 0; i < 2; i++) {
            pid_t pid = fork();
            if (pid == 0) {
                child_site();
                _exit(0);
            }
            int st;
            if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
                return 3;
        }
        for (int i = 0; i < 30; i++)
            pthread_join(s[i], NULL);
    }
    for (int i = 0; i < 4; i++)
        pthread_join(w[i], NULL);
    return 0;
}
