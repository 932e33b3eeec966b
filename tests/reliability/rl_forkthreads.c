/* rl_forkthreads.c - fork while other threads allocate.
 *
 * THREADS threads allocate and free in a loop until told to stop; main
 * forks FORKS children meanwhile.  Each child (one thread: the forking one)
 * mallocs and frees 10 blocks at rl_child_site and exits with status 7
 * through exit() (so atexit handlers and the collector's flush run).  A
 * child that deadlocks in malloc or in the collector is killed by its
 * alarm(20) and makes main fail.  Prints "children ok N"; exit 0 when all
 * FORKS children exited with 7.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define THREADS 3
#define FORKS 40

static atomic_int rl_stop;

__attribute__((noinline)) static void *rl_child_site(void)
{
    void *volatile p = malloc(48); /* not a tail call */
    return p;
}

static void *rl_alloc_loop(void *arg)
{
    unsigned seed = (unsigned)(size_t)arg;
    void *keep[16] = {0};
    while (!atomic_load(&rl_stop)) {
        seed = seed * 1103515245u + 12345u;
        int k = (int)((seed >> 8) & 15);
        free(keep[k]);
        keep[k] = malloc(16 + (seed >> 12) % 5000);
    }
    for (int k = 0; k < 16; k++)
        free(keep[k]);
    return NULL;
}

int main(void)
{
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, rl_alloc_loop, (void *)(size_t)(i + 1));
    int ok = 0;
    for (int i = 0; i < FORKS; i++) {
        pid_t pid = fork();
        if (pid == 0) {
            alarm(20);
            for (int k = 0; k < 10; k++)
                free(rl_child_site());
            exit(7);
        }
        int st = 0;
        if (pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 7)
            ok++;
        else
            fprintf(stderr, "child %d: status %#x\n", (int)pid, st);
    }
    atomic_store(&rl_stop, 1);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    printf("children ok %d\n", ok);
    return ok == FORKS ? 0 : 1;
}
