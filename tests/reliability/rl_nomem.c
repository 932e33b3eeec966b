/* rl_nomem.c - malloc failing: impossible requests, then RLIMIT_AS lowered
 * so that the real allocator runs out.
 *
 * 1. malloc(SIZE_MAX / 2), calloc overflowing, realloc(p, SIZE_MAX / 2)
 *    (p kept), reallocarray overflowing, posix_memalign and aligned_alloc
 *    of SIZE_MAX / 2: each must fail with NULL (or ENOMEM) exactly as
 *    without a profiler.
 * 2. RLIMIT_AS set 256 MiB above the current address space size; then
 *    1 MiB blocks (rl_nomem_site) until malloc returns NULL with errno
 *    ENOMEM; all freed; a small malloc still works.
 * Prints one line per check (same text with and without heapscope) to
 * stdout, and "blocks N" (the successful 1 MiB allocations, which depend on
 * the address space left) to stderr.  Exit 0.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

__attribute__((noinline)) static void *rl_nomem_site(void)
{
    void *volatile p = malloc(1 << 20); /* not a tail call */
    return p;
}

static void rl_say(const char *what, void *p, int err)
{
    printf("%s: %s errno %s\n", what, p ? "non-NULL" : "NULL", err == ENOMEM ? "ENOMEM" : err ? "other" : "0");
}

/* Address space in use now, from /proc/self/statm (pages). */
static size_t rl_vm_size(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long pages = 0;
    if (f) {
        if (fscanf(f, "%lu", &pages) != 1)
            pages = 0;
        fclose(f);
    }
    return pages * 4096;
}

int main(void)
{
    volatile size_t huge = SIZE_MAX / 2;
    errno = 0;
    void *p = malloc(huge);
    rl_say("malloc huge", p, errno);
    errno = 0;
    p = calloc(huge, 4);
    rl_say("calloc overflow", p, errno);
    void *keep = malloc(100);
    errno = 0;
    p = realloc(keep, huge);
    rl_say("realloc huge", p, errno);
    if (p)
        keep = p;
    errno = 0;
    p = reallocarray(keep, huge, 8);
    rl_say("reallocarray overflow", p, errno);
    if (p)
        keep = p;
    free(keep);
    void *q = NULL;
    int rc = posix_memalign(&q, 64, huge);
    printf("posix_memalign huge: rc %s, %s\n", rc == ENOMEM ? "ENOMEM" : rc ? "other" : "0", q ? "non-NULL" : "NULL");
    errno = 0;
    p = aligned_alloc(4096, huge & ~(size_t)4095);
    rl_say("aligned_alloc huge", p, errno);

    struct rlimit rl;
    getrlimit(RLIMIT_AS, &rl);
    rl.rlim_cur = rl_vm_size() + (256u << 20);
    if (setrlimit(RLIMIT_AS, &rl)) {
        perror("setrlimit");
        return 1;
    }
    static void *blocks[4096];
    size_t n = 0;
    int err = 0;
    while (n < 4096) {
        errno = 0;
        void *b = rl_nomem_site();
        if (!b) {
            err = errno;
            break;
        }
        memset(b, 1, 4096);
        blocks[n++] = b;
    }
    printf("under RLIMIT_AS: malloc returned NULL: %s, errno %s\n", n < 4096 ? "yes" : "no",
           err == ENOMEM ? "ENOMEM" : "other");
    for (size_t i = 0; i < n; i++)
        free(blocks[i]);
    void *small = malloc(64);
    printf("small malloc after: %s\n", small ? "non-NULL" : "NULL");
    free(small);
    fprintf(stderr, "blocks %zu\n", n);
    return 0;
}
