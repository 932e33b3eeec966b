/* hs_sigexit.c - _exit from a signal handler while another thread holds
 * malloc's arena lock, just after the C library loaded a module by itself.
 *
 * sigexit_site: 5 x malloc(300), kept (1500 bytes).  Thread A calls
 * malloc_stats(), which locks the main arena and, holding it, writes to
 * stderr: stderr is made a full pipe first, so A blocks there with the
 * lock held, for good.  Then thread B (its own arena) calls iconv_open,
 * which loads a gconv module through glibc's internal dlopen, which no
 * dlopen hook sees: the collector's module list is out of date.  Right
 * after, the main thread raises SIGUSR1, whose handler calls _exit(7).  A
 * collector that allocates while it writes its final profile there (its
 * module scan did) waits on the main arena forever; the program must end
 * with status 7.  It prints nothing. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <iconv.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>

#include "hsprog.h"

static void *kept[5];
static int go[2], done[2];

HS_SITE static void sigexit_site(void)
{
    for (int i = 0; i < 5; i++) {
        if (!(kept[i] = malloc(300)))
            hs_fail("malloc");
        hs_escape(kept[i]);
    }
}

static void on_usr1(int sig)
{
    (void)sig;
    _exit(7);
}

static void *stats_thread(void *arg)
{
    (void)arg;
    malloc_stats(); /* blocks on the full stderr with the arena locked */
    return NULL;
}

static void *iconv_thread(void *arg)
{
    (void)arg;
    char c;
    if (read(go[0], &c, 1) != 1)
        return NULL;
    iconv_t cd = iconv_open("UTF-16", "UTF-8");
    c = cd == (iconv_t)-1 ? 'x' : 'k';
    if (write(done[1], &c, 1) != 1)
        return NULL;
    return NULL;
}

int main(void)
{
    sigexit_site();
    if (pipe(go) != 0 || pipe(done) != 0)
        hs_fail("pipe");
    struct sigaction sa = {.sa_handler = on_usr1};
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGUSR1, &sa, NULL) != 0)
        hs_fail("sigaction");
    pthread_t a, b;
    if (pthread_create(&b, NULL, iconv_thread, NULL) != 0)
        hs_fail("pthread_create");
    int p[2];
    if (pipe2(p, O_NONBLOCK) != 0)
        hs_fail("pipe2");
    char fill[4096] = {0};
    while (write(p[1], fill, sizeof fill) > 0)
        ;
    if (fcntl(p[1], F_SETFL, 0) != 0 || dup2(p[1], 2) != 2)
        hs_fail("stderr");
    if (pthread_create(&a, NULL, stats_thread, NULL) != 0)
        _exit(97);
    struct timespec ts = {0, 200 * 1000 * 1000}; /* A is blocked by then */
    while (nanosleep(&ts, &ts) != 0)
        ;
    char c = 'g';
    if (write(go[1], &c, 1) != 1 || read(done[0], &c, 1) != 1 || c != 'k')
        _exit(98); /* stderr is full: hs_fail would block */
    raise(SIGUSR1);
    _exit(99);
}
