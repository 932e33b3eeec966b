/* hs_crosscheck.c - a deterministic mix of allocator calls for comparing
 * heapscope's totals with Valgrind's "total heap usage" line.
 *
 * 256 slots, 20000 steps driven by a fixed linear congruential generator:
 * an empty slot gets malloc, calloc, realloc(NULL, n) or posix_memalign; a
 * full slot is freed or realloc'ed to a new size (never to 0).  Sizes are
 * 1..4096, with one step in 64 asking for 8193..73728.  At the end the odd
 * slots are freed and the even ones leaked.
 * The program counts its own successful calls the way heapscope does
 * (realloc(p, n) = one free + one allocation) and prints
 *   allocs=A frees=F bytes=B live_blocks=L live_bytes=M
 * on stdout, with write(2) only. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>

#include "hsprog.h"

#define SLOTS 256
#define STEPS 20000

static uint64_t lcg_state = 0x2545F4914F6CDD1DULL;
static uint64_t n_allocs, n_frees, n_bytes, live_bytes, live_blocks;
static void *slot[SLOTS];
static size_t slot_size[SLOTS];

static uint32_t lcg(void)
{
    lcg_state = lcg_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(lcg_state >> 33);
}

static size_t pick_size(void)
{
    if (lcg() % 64 == 0)
        return 8193 + lcg() % 65536;
    return 1 + lcg() % 4096;
}

static void counted_alloc(int i, void *p, size_t n)
{
    if (!p)
        hs_fail("allocation failed");
    slot[i] = p;
    slot_size[i] = n;
    n_allocs++;
    n_bytes += n;
    live_blocks++;
    live_bytes += n;
}

static void counted_free(int i)
{
    free(slot[i]);
    n_frees++;
    live_blocks--;
    live_bytes -= slot_size[i];
    slot[i] = NULL;
}

HS_SITE static void mixed_step(void)
{
    int i = (int)(lcg() % SLOTS);
    uint32_t op = lcg() % 4;
    size_t n = pick_size();
    if (!slot[i]) {
        void *p = NULL;
        switch (op) {
        case 0:
            p = malloc(n);
            break;
        case 1:
            n = (n + 7) / 8 * 8;
            p = calloc(n / 8, 8);
            break;
        case 2:
            p = realloc(NULL, n);
            break;
        default:
            if (posix_memalign(&p, 64, n) != 0)
                p = NULL;
            break;
        }
        counted_alloc(i, p, n);
    } else if (op < 2) {
        counted_free(i);
    } else {
        void *p = realloc(slot[i], n);
        if (!p)
            hs_fail("realloc");
        n_frees++;
        live_blocks--;
        live_bytes -= slot_size[i];
        counted_alloc(i, p, n);
    }
}

static void print_field(const char *name, uint64_t v)
{
    hs_puts(1, name);
    hs_put_u64(1, v);
}

int main(void)
{
    for (int s = 0; s < STEPS; s++)
        mixed_step();
    for (int i = 1; i < SLOTS; i += 2)
        if (slot[i])
            counted_free(i);
    hs_escape(slot);
    print_field("allocs=", n_allocs);
    print_field(" frees=", n_frees);
    print_field(" bytes=", n_bytes);
    print_field(" live_blocks=", live_blocks);
    print_field(" live_bytes=", live_bytes);
    hs_puts(1, "\n");
    return 0;
}
