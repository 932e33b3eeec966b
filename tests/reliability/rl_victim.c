/* rl_victim.c - a program to kill: ROUNDS rounds, 10 ms apart, each
 * allocating 10 blocks of 100 bytes at rl_victim_site and freeing 5 of them
 * (so a complete run makes 2,000 allocations and 1,000 frees, and leaks
 * 1,000 blocks).  Argument "segv" or "abort": fault by itself in the round
 * given as the second argument.  Exit 0 after the last round.
 */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ROUNDS 200

__attribute__((noinline)) static void *rl_victim_site(void)
{
    void *volatile p = malloc(100); /* not a tail call: keep this frame */
    return p;
}

int main(int argc, char **argv)
{
    int fault_round = argc > 2 ? atoi(argv[2]) : -1;
    for (int r = 0; r < ROUNDS; r++) {
        void *b[10];
        for (int i = 0; i < 10; i++)
            b[i] = rl_victim_site();
        for (int i = 0; i < 5; i++)
            free(b[i]);
        if (r == fault_round) {
            if (!strcmp(argv[1], "abort"))
                abort();
            raise(SIGSEGV);
        }
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    puts("done");
    return 0;
}
