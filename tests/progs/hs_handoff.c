/* hs_handoff.c - blocks allocated by one thread and freed by another at
 * a high rate while heapscope's writer reads the counters: a profile
 * written while the program runs must never count a free without its
 * allocation (tests/e2e/test_handoff.py).
 *
 * hs_handoff MS:
 *   a second thread, for MS milliseconds and at least 20,000 times:
 *   handoff_site: malloc(48), put in a one-block mailbox that the main
 *   thread empties and frees; then churn_site: malloc(24) + free on the
 *   second thread itself.  A thread that waits for the other yields the
 *   CPU now and then, so that the two move on when they share one.  (The
 *   allocating thread is the newer one, which heapscope reads first.)
 *   So at any moment handoff_site has at most 3 blocks live (one being
 *   made, one in the mailbox, one being freed) and churn_site at most 1.
 *   Then the main thread prints "handoffs N" and sends itself SIGKILL:
 *   the profile on disk is the last one written while both threads ran. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>

#include "hsclock.h"
#include "hsprog.h"

static void *mailbox;
static int done;
static uint64_t handoffs;

HS_SITE static void *handoff_site(void)
{
    void *p = malloc(48);
    if (!p)
        hs_fail("malloc");
    return p;
}

HS_SITE static void churn_site(void)
{
    void *p = malloc(24);
    if (!p)
        hs_fail("malloc");
    hs_escape(p);
    free(p);
}

/* A wait's k-th turn: after every 64 turns, yield. */
static void waited(unsigned k)
{
    if (k % 64 == 63)
        sched_yield();
}

static void *producer(void *arg)
{
    uint64_t n = 0;
    for (uint64_t end = hs_now_ms() + *(uint64_t *)arg; n < 20000 || hs_now_ms() < end;) {
        for (int i = 0; i < 100; i++, n++) {
            void *p = handoff_site();
            for (unsigned k = 0; __atomic_load_n(&mailbox, __ATOMIC_ACQUIRE); k++)
                waited(k);
            __atomic_store_n(&mailbox, p, __ATOMIC_RELEASE);
            churn_site();
        }
    }
    handoffs = n;
    __atomic_store_n(&done, 1, __ATOMIC_RELEASE);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 2)
        hs_fail("usage: hs_handoff MS");
    uint64_t ms = strtoull(argv[1], NULL, 10);
    pthread_t th;
    if (pthread_create(&th, NULL, producer, &ms))
        hs_fail("pthread_create");
    for (unsigned k = 0;; k++) {
        void *p = __atomic_exchange_n(&mailbox, NULL, __ATOMIC_ACQUIRE);
        if (p) {
            free(p);
            k = 0;
        } else if (__atomic_load_n(&done, __ATOMIC_ACQUIRE)) {
            break;
        } else {
            waited(k);
        }
    }
    hs_puts(1, "handoffs ");
    hs_put_u64(1, handoffs);
    hs_puts(1, "\n");
    kill(getpid(), SIGKILL);
    hs_fail("still alive after SIGKILL");
}
