/* mp_diffprog.c - two versions of one program for `heapscope diff`.
 * Without arguments (version A):
 *   site_common: 100 x 64 bytes, all freed
 *   site_shrink:  50 x 32 bytes, none freed (1,600 leaked)
 *   site_gone:    10 x 100 bytes, all freed
 * With the argument "new" (version B):
 *   site_common: 300 x 64 bytes, all freed    (+200 allocs, +12,800 bytes)
 *   site_shrink:  20 x 32 bytes, none freed   (-30, -960 bytes, -960 leaked)
 *   site_new:     40 x 256 bytes, none freed  (new: +40, +10,240, leaked)
 *   site_gone is not called (gone: -10, -1,000 bytes).
 * Nothing else allocates (hsprog.h). */
#include <stdlib.h>
#include <string.h>

#include "hsprog.h"

HS_SITE static void site_common(int n)
{
    for (int i = 0; i < n; i++) {
        void *p = malloc(64);
        hs_escape(p);
        free(p);
    }
}

HS_SITE static void site_shrink(int n)
{
    for (int i = 0; i < n; i++)
        hs_escape(malloc(32));
}

HS_SITE static void site_gone(void)
{
    for (int i = 0; i < 10; i++) {
        void *p = malloc(100);
        hs_escape(p);
        free(p);
    }
}

HS_SITE static void site_new(void)
{
    for (int i = 0; i < 40; i++)
        hs_escape(malloc(256));
}

int main(int argc, char **argv)
{
    int b = argc > 1 && strcmp(argv[1], "new") == 0;
    site_common(b ? 300 : 100);
    site_shrink(b ? 20 : 50);
    if (b)
        site_new();
    else
        site_gone();
    return 0;
}
