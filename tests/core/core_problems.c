/* core_problems.c - the three problem programs of the core-analysis thesis,
 * recreated for x86-64 glibc, one per mode (argv[1]):
 *   leak     a 100-node list whose head is dropped (1 definite, 99
 *            indirect), 20 blocks lost by overwriting one pointer in a loop
 *            (20 definite), a 50-node list kept by a global (reachable)
 *   pinned   1000 x malloc(1000), all freed but the last one: 999 chunks of
 *            1008 bytes (7 in tcache, the rest coalesced) pinned below it
 *   frag     1000 x malloc(1000) interleaved with 1000 x malloc(100) that
 *            stay; the 1000-byte ones are freed: 993 unsorted + 7 tcache
 *            holes of 1008 bytes that cannot merge
 * It prints "block ADDR KIND" lines, its mallinfo2() and READY, then waits
 * for stdin to close (test_core_problems.py reads it with --pid).
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct node {
    struct node *next;
    char pad[40];
};

static char g_out[1 << 18];
static size_t g_len;
static void *volatile g_keep;
static void *volatile g_small[1000];

static void emit(const void *p, const char *kind)
{
    g_len += (size_t)snprintf(g_out + g_len, sizeof g_out - g_len, "block %lx %s\n",
                              (unsigned long)(uintptr_t)p, kind);
}

static struct node *list(int n, const char *head_kind, const char *kind)
{
    struct node *h = NULL;
    for (int i = 0; i < n; i++) {
        struct node *x = calloc(1, sizeof *x);
        x->next = h;
        h = x;
    }
    for (struct node *x = h; x; x = x->next)
        emit(x, x == h ? head_kind : kind);
    return h;
}

__attribute__((noinline)) static void leak(void)
{
    g_keep = list(50, "reachable", "reachable");
    struct node *volatile lost = list(100, "definite", "indirect");
    lost = NULL;
    void *volatile p = NULL;
    for (int i = 0; i < 20; i++) {
        p = malloc(200);
        memset(p, 0, 200);
        emit(p, "definite");
    }
    p = NULL;
    (void)lost;
}

__attribute__((noinline)) static void pinned(void)
{
    void *b[1000];
    for (int i = 0; i < 1000; i++)
        b[i] = malloc(1000);
    for (int i = 0; i < 999; i++) {
        emit(b[i], "free");
        free(b[i]);
    }
    g_keep = b[999];
    emit(b[999], "pin");
}

__attribute__((noinline)) static void frag(void)
{
    void *b[1000];
    for (int i = 0; i < 1000; i++) {
        b[i] = malloc(1000);
        g_small[i] = malloc(100);
    }
    for (int i = 0; i < 1000; i++) {
        emit(b[i], i < 7 ? "tcache" : "unsorted");
        free(b[i]);
    }
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    if (!strcmp(argv[1], "leak"))
        leak();
    else if (!strcmp(argv[1], "pinned"))
        pinned();
    else if (!strcmp(argv[1], "frag"))
        frag();
    else
        return 2;
    struct mallinfo2 mi = mallinfo2();
    g_len += (size_t)snprintf(g_out + g_len, sizeof g_out - g_len,
                              "mallinfo2 arena=%zu ordblks=%zu smblks=%zu hblks=%zu hblkhd=%zu "
                              "usmblks=%zu fsmblks=%zu uordblks=%zu fordblks=%zu keepcost=%zu\nREADY\n",
                              mi.arena, mi.ordblks, mi.smblks, mi.hblks, mi.hblkhd, mi.usmblks,
                              mi.fsmblks, mi.uordblks, mi.fordblks, mi.keepcost);
    if (write(1, g_out, g_len) != (ssize_t)g_len)
        return 1;
    char c;
    if (read(0, &c, 1) < 0)
        return 1;
    return 0;
}
