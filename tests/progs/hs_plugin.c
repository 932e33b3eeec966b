/* hs_plugin.c - a module that hs_dlopen loads with dlopen.
 *
 * hs_plugin_make: plugin_alloc_site makes 10 x malloc(256) = 2560 bytes.
 * hs_plugin_release(k): frees k of them (the test uses 4: 1024 bytes), the
 * rest stay allocated after dlclose (6 blocks, 1536 bytes leaked). */
#include <stdlib.h>

#include "hsprog.h"

#define N 10

static void *held[N];

HS_SITE static void plugin_alloc_site(void)
{
    for (int i = 0; i < N; i++)
        if (!(held[i] = malloc(256)))
            hs_fail("malloc");
}

HS_SITE void hs_plugin_make(void)
{
    plugin_alloc_site();
}

HS_SITE void hs_plugin_release(int k)
{
    for (int i = 0; i < k && i < N; i++) {
        free(held[i]);
        held[i] = NULL;
    }
}
