/* hs_nothread.c - heapscope's own thread against glibc's single-thread
 * paths (`heapscope run --no-thread`, HEAPSCOPE_WRITER=0; col_writer.c).
 *
 * hs_nothread kill:
 *   kept_site:   10 x malloc(256) = 2,560 bytes, kept
 *   churn_site:  malloc(32) + free pairs for 300 ms (several intervals of
 *                --interval 50; how many pairs depends on the machine)
 *   then prints "single S tcb T threads N" (S: glibc's
 *   __libc_single_threaded, 1 while no thread was ever created in the
 *   process; T: this thread's multiple_threads field of glibc's thread
 *   control block, which glibc 2.36's malloc reads, or - on another glibc
 *   or machine; N: the Threads: of /proc/self/status) and sends itself
 *   SIGKILL.
 * hs_nothread thread:
 *   starts and joins a thread that allocates nothing (pthread_create
 *   itself allocates in glibc), then churn_site: 20,000 pairs of
 *   malloc(32) + free, then prints "single S tcb T threads N" and exits 0.
 * hs_nothread hidden PLUGIN:
 *   the writer thread kept out of glibc's count (col_glibc.c), under
 *   stress: for 300 ms, rounds of bins_site (64 x malloc(16..40), kept in
 *   glibc's fastbins and tcache) and their 64 frees, each round with a
 *   dl_iterate_phdr (the loader lock the writer's flush takes too) and
 *   every 64th with a dlopen and dlclose of PLUGIN; then a child forked
 *   makes 1,000 rounds and exits 0; then "single S tcb T threads N" and
 *   "rounds R" (R: the rounds made by the parent, before the fork).
 *   Then a thread of the program frees the 10,000 blocks of cross_site
 *   (malloc(24) by the main thread), while the main thread makes 1,000
 *   rounds more; "single S tcb T threads N" again, and exit 0. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/single_threaded.h>
#include <sys/wait.h>
#if defined(__x86_64__)
#include <gnu/libc-version.h>
#endif

#include "hsclock.h"
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

/* This thread's multiple_threads field of glibc's thread control block
 * (glibc 2.36, x86_64), or -1. */
static int tcb_field(void)
{
#if defined(__x86_64__)
    if (!strcmp(gnu_get_libc_version(), "2.36")) {
        int v;
        __asm__ volatile("movl %%fs:0x18, %0" : "=r"(v));
        return v;
    }
#endif
    return -1;
}

static void report(void)
{
    hs_puts(1, "single ");
    hs_put_u64(1, (uint64_t)__libc_single_threaded);
    hs_puts(1, " tcb ");
    int tcb = tcb_field();
    if (tcb < 0)
        hs_puts(1, "-");
    else
        hs_put_u64(1, (uint64_t)tcb);
    hs_puts(1, " threads ");
    hs_put_u64(1, threads_now());
    hs_puts(1, "\n");
}

static void *idle(void *arg)
{
    return arg;
}

HS_SITE static void bins_site(void **out)
{
    for (int i = 0; i < 64; i++)
        if (!(out[i] = malloc(16 + (size_t)(i % 25))))
            hs_fail("malloc");
}

static int count_module(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)info;
    (void)size;
    ++*(int *)data;
    return 0;
}

/* One round: 64 blocks made and freed, and the loader lock taken. */
static void round_once(void)
{
    void *p[64];
    bins_site(p);
    hs_escape(p);
    for (int i = 0; i < 64; i++)
        free(p[i]);
    int n = 0;
    dl_iterate_phdr(count_module, &n);
    if (n < 2)
        hs_fail("dl_iterate_phdr");
}

#define CROSS_N 10000

HS_SITE static void cross_site(void **out)
{
    for (int i = 0; i < CROSS_N; i++)
        if (!(out[i] = malloc(24)))
            hs_fail("malloc");
}

static void *free_all(void *arg)
{
    void **blocks = arg;
    for (int i = 0; i < CROSS_N; i++)
        free(blocks[i]);
    return NULL;
}

static int hidden(const char *plugin)
{
    uint64_t rounds = 0;
    for (uint64_t end = hs_now_ms() + 300; hs_now_ms() < end; rounds++) {
        round_once();
        if (rounds % 64 == 0) {
            void *h = dlopen(plugin, RTLD_NOW);
            if (!h || dlclose(h))
                hs_fail("dlopen");
        }
    }
    pid_t child = fork();
    if (child < 0)
        hs_fail("fork");
    if (child == 0) {
        for (int i = 0; i < 1000; i++)
            round_once();
        _exit(0);
    }
    int status;
    if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status))
        hs_fail("child");
    report();
    hs_puts(1, "rounds ");
    hs_put_u64(1, rounds);
    hs_puts(1, "\n");
    static void *blocks[CROSS_N];
    cross_site(blocks);
    pthread_t th;
    if (pthread_create(&th, NULL, free_all, blocks))
        hs_fail("pthread_create");
    for (int i = 0; i < 1000; i++)
        round_once();
    if (pthread_join(th, NULL))
        hs_fail("pthread_join");
    report();
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "kill")) {
        void *kept[10];
        kept_site(kept);
        hs_escape(kept);
        for (uint64_t end = hs_now_ms() + 300; hs_now_ms() < end;)
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
    if (argc == 3 && !strcmp(argv[1], "hidden"))
        return hidden(argv[2]);
    hs_fail("usage: hs_nothread kill|thread|hidden PLUGIN");
}
