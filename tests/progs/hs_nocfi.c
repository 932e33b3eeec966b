/* hs_nocfi.c - stacks through a frame no FDE covers (nocfi_call,
 * hs_nocfi_call.S), told apart only by the rbp that frame holds.
 *
 * 100 rounds of: two calls of nocfi_site through nocfi_call with rbp 0,
 * then two with rbp pointing at a frame-pointer pair in main's frame
 * (saved rbp 0, return address into nocfi_outer, then zeros).  Each call mallocs 24
 * bytes and frees them: 400 allocations of 9,600 bytes, all freed.
 *
 * With rbp 0 the stack ends at nocfi_call, for libunwind and for
 * heapscope's DWARF walk alike (200 allocations).  With another rbp
 * libunwind takes it for a frame pointer (and ends in nocfi_outer, at
 * the zeros), unless its cache learnt nocfi_call as an
 * outermost frame; the DWARF walk leaves those 200 stacks to libunwind.
 * nocfi_site saves that rbp next to its return address: a walk that
 * reuses an earlier one must compare it. */
#include <stdint.h>
#include <stdlib.h>

#include "hsprog.h"

void nocfi_call(void (*fn)(void), uintptr_t bp);

HS_SITE static void nocfi_site(void)
{
    void *p = malloc(24);
    if (!p)
        hs_fail("malloc");
    hs_escape(p);
    free(p);
}

HS_SITE static void nocfi_outer(void)
{
    hs_puts(1, "nocfi_outer\n"); /* never called: its code is a return address */
}

int main(void)
{
    volatile uintptr_t pair[8] = {0, (uintptr_t)nocfi_outer + 4}; /* the rest 0: where libunwind looks next */
    for (int round = 0; round < 100; round++) {
        for (int i = 0; i < 2; i++)
            nocfi_call(nocfi_site, 0);
        for (int i = 0; i < 2; i++)
            nocfi_call(nocfi_site, (uintptr_t)pair);
    }
    hs_escape((const void *)pair);
    hs_puts(1, "nocfi done\n");
    return 0;
}
