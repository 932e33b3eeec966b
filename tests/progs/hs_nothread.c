/* hs_nothread.c - heapscope's own thread against glibc's single-thread
 * paths (`heapscope run --no-thread`, HEAPSCOPE_WRITER=0; col_writer.c).
 *
 * hs_nothread kill:
 *   kept_site:   10 x malloc(256) = 2,560 bytes, kept
 *   churn_site:  malloc(32) + free pairs for 300 ms (several intervals of
 *                --interval 50; how many pairs depends on the machine)
 *   then prints "single S threads N" (S: glibc's __libc_single_threaded,
 *   1 while no thread was ever created in the process; N: the Threads: of
 *   /proc/self/status) and sends itself SIGKILL.
 * hs_nothread thread:
 *   starts and joins a thread that allocates nothing (pthread_create
 *   itself allocates in glibc), then churn_site: 20,000 pairs of
 *   malloc(32) + free, then prints "single S threads N" and exits 0. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/single_threaded.h>
#include <time.h>

#include "hsprog.h"

HS_SITE static void kept_site(void **out)
{
    for (int i = 0; i < 10; i++)
        if (!(out[i] = malloc(256)))
            hs_fail("malloc");
}

HS_SITE static void churn_site(void)
{
    void *p = malloc(32);
    if (!p)
        hs_fail("malloc");
    hs_escape(p);
    free(p);
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* The Threads: count of /proc/self/status, read without allocating. */
static unsigned threads_now(void)
{
    char buf[4096];
    int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (n <= 0)
        hs_fail("read /proc/self/status");
    buf[n] = '\0';
    const char *p = strstr(buf, "\nThreads:");
    if (!p)
        hs_fail("no Threads: line");
    return (unsigned)strtoul(p + 9, NULL, 10);
}

static void report(void)
{
    hs_puts(1, "single ");
    hs_put_u64(1, (uint64_t)__libc_single_threaded);
    hs_puts(1, " threads ");
    hs_put_u64(1, threads_now());
    hs_puts(1, "\n");
}

static void *idle(void *arg)
{
    return arg;
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "kill")) {
        void *kept[10];
        kept_site(kept);
        hs_escape(kept);
        for (uint64_t end = now_ms() + 300; now_ms() < end;)
            for (int i = 0; i < 1000; i++)
                churn_site();
        report();
        kill(getpid(), SIGKILL);
        hs_fail("still alive after SIGKILL");
    }
    if (argc == 2 && !strcmp(argv[1], "thread")) {
        pthread_t th;
        if (pthread_create(&th, NULL, idle, NULL) || pthread_join(th, NULL))
            hs_fail("pthread");
        for (int i = 0; i < 20000; i++)
            churn_site();
        report();
        return 0;
    }
    hs_fail("usage: hs_nothread kill|thread");
}
