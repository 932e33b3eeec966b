/* hs_realloc_thread.c - realloc as the first allocation call of a thread,
 * and realloc after the thread's exit began (in a thread-specific-data
 * destructor that runs after heapscope's own).  Either used to hang: the
 * realloc hook's cold path called realloc() again, whose fast-path test
 * failed again for a thread the collector had not attached.
 *
 * handed_source (main):      malloc(24)                   1 alloc,  24 bytes
 * first_is_realloc (thread A, its first call): realloc of that block to
 *                            200 bytes                    1 alloc, 200 bytes
 *                            (frees handed_source's block)
 * first_is_realloc_null (thread B, its first call): realloc(NULL, 48)
 *                                                         1 alloc,  48 bytes
 * late_realloc (thread B's key destructor): realloc(NULL, 72), then that
 *                            block to 96 bytes, then free 2 allocs, 168 bytes
 * release (main):            frees A's and B's blocks.
 * Every block is freed; the main thread's pthread_create also callocs each
 * thread's DTV (glibc), live until exit. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdlib.h>

#include "hsprog.h"

static void *handed;
static void *from_a, *from_b;
static pthread_key_t key;

HS_SITE static void *handed_source(void)
{
    void *p = malloc(24);
    if (!p)
        hs_fail("malloc");
    return p;
}

HS_SITE static void *first_is_realloc(void *p)
{
    void *q = realloc(p, 200);
    if (!q)
        hs_fail("realloc");
    return q;
}

HS_SITE static void *first_is_realloc_null(void)
{
    void *q = realloc(NULL, 48);
    if (!q)
        hs_fail("realloc(NULL)");
    return q;
}

HS_SITE static void late_realloc(void *arg)
{
    (void)arg;
    void *p = realloc(NULL, 72);
    if (!p)
        hs_fail("realloc(NULL) at thread exit");
    void *q = realloc(p, 96);
    if (!q)
        hs_fail("realloc at thread exit");
    free(q);
}

static void *thread_a(void *arg)
{
    (void)arg;
    from_a = first_is_realloc(handed);
    return NULL;
}

static void *thread_b(void *arg)
{
    (void)arg;
    from_b = first_is_realloc_null();
    if (pthread_setspecific(key, &key) != 0) /* late_realloc runs at exit */
        hs_fail("pthread_setspecific");
    return NULL;
}

HS_SITE static void release(void)
{
    free(from_a);
    free(from_b);
}

int main(void)
{
    pthread_t a, b;
    if (pthread_key_create(&key, late_realloc) != 0)
        hs_fail("pthread_key_create");
    handed = handed_source();
    if (pthread_create(&a, NULL, thread_a, NULL) != 0 || pthread_join(a, NULL) != 0)
        hs_fail("thread a");
    if (pthread_create(&b, NULL, thread_b, NULL) != 0 || pthread_join(b, NULL) != 0)
        hs_fail("thread b");
    release();
    hs_puts(1, "realloc threads done\n");
    return 0;
}
