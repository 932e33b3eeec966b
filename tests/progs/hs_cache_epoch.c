/* hs_cache_epoch.c - one stack allocating before and after the module map
 * changes: the recorder's cache of recent stacks must take the stack again
 * once a dlopen has made its entry stale.
 *
 * usage: hs_cache_epoch PATH-OF-libhs_plugin.so
 * loop_site: 2000 x (malloc(40), free), all from one call; before the
 * 1001st, reload() dlopens and dlcloses the plugin (which allocate, from
 * other stacks).  loop_site's totals: 2000 allocations and frees of 40
 * bytes. */
#include <dlfcn.h>
#include <stdlib.h>

#include "hsprog.h"

HS_SITE static void reload(const char *plugin)
{
    void *h = dlopen(plugin, RTLD_NOW | RTLD_LOCAL);
    if (!h || dlclose(h) != 0)
        hs_fail("dlopen/dlclose");
}

HS_SITE static void loop_site(const char *plugin)
{
    for (int i = 0; i < 2000; i++) {
        if (i == 1000)
            reload(plugin);
        void *p = malloc(40);
        if (!p)
            hs_fail("malloc");
        hs_escape(p);
        free(p);
    }
}

int main(int argc, char **argv)
{
    if (argc != 2)
        hs_fail("usage: hs_cache_epoch PLUGIN");
    loop_site(argv[1]);
    hs_puts(1, "cache epoch done\n");
    return 0;
}
