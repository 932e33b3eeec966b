/* core_heap.cpp - a program with a known glibc heap, for `heapscope core`.
 *
 * It makes every block listed below, prints one line per block
 *     block <user pointer, hex> <class> <leak state>
 * then glibc's own mallinfo2() (called after the last malloc/free), then
 * "READY", and blocks reading stdin until the test (test_core_heap.py) has
 * dumped it with gcore and read it with `heapscope core --pid`.
 *
 * Main arena (request -> chunk size):
 *   live:     10 x 100 (112), 5 x 1000 (1008), guards of 24 (32)
 *   tcache:   7 x 256 (272) and 7 x 40 (48), freed with their bins full
 *   fastbin:  3 x 40 (48): freed after the 48-byte tcache bin is full
 *   smallbin: 2 x 256 (272): freed to unsorted, then sorted by malloc(2000)
 *   largebin: 2 x 1500 (1520): likewise
 *   unsorted: 1 x 1200 (1216): freed last (no malloc after it)
 *   mmapped:  1 x 1 MiB, reachable
 * Leaks: 3 x 152 definitely lost; a cycle of two 168-byte blocks (one
 * definite, one indirect, Valgrind's rule); a lost 72-byte block whose only
 * reference to a 56-byte child is (definite + indirect); a leaked
 * hs::Leaky (vtable).  Reachable: a 64-byte root with an 88-byte child,
 * a 120-byte block held only through an interior pointer.
 * Thread arena (one thread, blocked): 6 x 64 (80) live, 9 x 64 freed
 * (7 tcache, 2 fastbin).
 */
#include <malloc.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

namespace hs {
struct Leaky {
    virtual ~Leaky() {}
    virtual int f() { return 1; }
    char pad[120];
};
} // namespace hs

static char g_out[1 << 16];
static size_t g_len;
static void *volatile g_keep[256];
static int g_nkeep;
static void *volatile g_root, *volatile g_interior, *volatile g_big;
static int g_ready[2], g_block[2];

static void emit(const void *p, const char *cls, const char *leak)
{
    g_len += (size_t)snprintf(g_out + g_len, sizeof g_out - g_len, "block %lx %s %s\n",
                              (unsigned long)(uintptr_t)p, cls, leak);
}

static void *keep(size_t n, const char *cls)
{
    void *p = malloc(n);
    memset(p, 0, n);
    g_keep[g_nkeep++] = p;
    emit(p, cls, "reachable");
    return p;
}

static void *thread_main(void *)
{
    void *fr[9];
    for (int i = 0; i < 6; i++)
        keep(64, "in_use");
    for (int i = 0; i < 9; i++)
        fr[i] = malloc(64);
    for (int i = 0; i < 9; i++) {
        emit(fr[i], i < 7 ? "tcache" : "fastbin", "-");
        free(fr[i]);
    }
    char c = 1;
    if (write(g_ready[1], &c, 1) != 1)
        abort();
    if (read(g_block[0], &c, 1) < 0)
        abort();
    return NULL;
}

__attribute__((noinline)) static void make_leaks(void)
{
    void *volatile p[8];
    for (int i = 0; i < 3; i++) {
        p[i] = malloc(152);
        memset(p[i], 0x11, 152);
        emit(p[i], "in_use", "definite");
    }
    void **a = (void **)malloc(168), **b = (void **)malloc(168);
    a[0] = b;
    b[0] = a;
    emit(a, "in_use", "cycle");
    emit(b, "in_use", "cycle");
    void **parent = (void **)calloc(1, 72);
    parent[0] = calloc(1, 56);
    emit(parent, "in_use", "definite");
    emit(parent[0], "in_use", "indirect");
    hs::Leaky *l = new hs::Leaky();
    memset(l->pad, 0, sizeof l->pad);
    emit(l, "in_use", "definite");
    a = b = parent = NULL;
    l = NULL;
    for (int i = 0; i < 8; i++)
        p[i] = NULL;
}

__attribute__((noinline)) static void make_heap(void)
{
    void *s[9], *lg[2], *u, *f[10];
    for (int i = 0; i < 10; i++)
        keep(100, "in_use");
    for (int i = 0; i < 5; i++)
        keep(1000, "in_use");
    void **root = (void **)calloc(1, 64);
    root[0] = calloc(1, 88);
    g_root = root;
    emit(root, "in_use", "reachable");
    emit(root[0], "in_use", "reachable");
    char *in = (char *)calloc(1, 120);
    g_interior = in + 40;
    emit(in, "in_use", "reachable");
    g_big = malloc(1 << 20);
    emit(g_big, "mmapped", "reachable");
    make_leaks();
    for (int i = 0; i < 9; i++) {
        s[i] = malloc(256);
        keep(24, "in_use");
    }
    for (int i = 0; i < 2; i++) {
        lg[i] = malloc(1500);
        keep(24, "in_use");
    }
    u = malloc(1200);
    keep(24, "in_use");
    for (int i = 0; i < 10; i++)
        f[i] = malloc(40);
    keep(24, "in_use");
    /* frees: 7 tcache + 2 unsorted of 272, 2 unsorted of 1520 */
    for (int i = 0; i < 9; i++) {
        emit(s[i], i < 7 ? "tcache" : "smallbin", "-");
        free(s[i]);
    }
    for (int i = 0; i < 2; i++) {
        emit(lg[i], "largebin", "-");
        free(lg[i]);
    }
    keep(2000, "in_use"); /* sorts the unsorted chunks into their bins */
    emit(u, "unsorted", "-");
    free(u);
    for (int i = 0; i < 10; i++) {
        emit(f[i], i < 7 ? "tcache" : "fastbin", "-");
        free(f[i]);
    }
}

int main(void)
{
    if (pipe(g_ready) || pipe(g_block))
        return 1;
    pthread_t t;
    malloc_usable_size(NULL);
    if (pthread_create(&t, NULL, thread_main, NULL))
        return 1;
    char c;
    if (read(g_ready[0], &c, 1) != 1)
        return 1;
    make_heap();
    struct mallinfo2 mi = mallinfo2();
    g_len += (size_t)snprintf(g_out + g_len, sizeof g_out - g_len,
                              "mallinfo2 arena=%zu ordblks=%zu smblks=%zu hblks=%zu hblkhd=%zu "
                              "usmblks=%zu fsmblks=%zu uordblks=%zu fordblks=%zu keepcost=%zu\nREADY\n",
                              mi.arena, mi.ordblks, mi.smblks, mi.hblks, mi.hblkhd, mi.usmblks,
                              mi.fsmblks, mi.uordblks, mi.fordblks, mi.keepcost);
    if (write(1, g_out, g_len) != (ssize_t)g_len)
        return 1;
    if (read(0, &c, 1) < 0)
        return 1;
    return 0;
}
