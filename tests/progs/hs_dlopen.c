/* hs_dlopen.c - allocations made by a dlopen'ed module, which is then
 * dlclose'd before exit.
 *
 * usage: hs_dlopen PATH-OF-libhs_plugin.so
 * The plugin allocates 10 x 256 bytes in plugin_alloc_site and frees 4;
 * after dlclose, after_dlclose_site does malloc(77) and frees it.
 * dlopen/dlclose themselves allocate too (link map, scope arrays): those
 * stacks go through main -> dlopen and are not asserted exactly. */
#include <dlfcn.h>
#include <stdlib.h>

#include "hsprog.h"

HS_SITE static void after_dlclose_site(void)
{
    void *p = malloc(77);
    if (!p)
        hs_fail("malloc");
    hs_escape(p);
    free(p);
}

int main(int argc, char **argv)
{
    if (argc != 2)
        hs_fail("usage: hs_dlopen PLUGIN");
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!h)
        hs_fail("dlopen");
    void *make_sym = dlsym(h, "hs_plugin_make");
    void *release_sym = dlsym(h, "hs_plugin_release");
    if (!make_sym || !release_sym)
        hs_fail("dlsym");
    /* ISO C has no object-to-function pointer cast; POSIX guarantees the
     * representation, so copy the bits. */
    void (*make)(void);
    void (*release)(int);
    memcpy(&make, &make_sym, sizeof make);
    memcpy(&release, &release_sym, sizeof release);
    make();
    release(4);
    if (dlclose(h) != 0)
        hs_fail("dlclose");
    after_dlclose_site();
    hs_puts(1, "dlopen done\n");
    return 0;
}
