/* hs_lifecycle.c - allocations before main, after main returns and after
 * exec.
 *
 *   constructor   ctor_site:      3 x 111 bytes, never freed
 *   main          main_site:      2 x 222 bytes, freed
 *   atexit        atexit_site:    4 x 333 bytes, never freed
 *   destructor    dtor_site:      5 x 44 bytes, freed
 * With argument "exec", main execs this program again with "child"
 * (atexit handlers and destructors do not run in the replaced image); the
 * child's main makes exec_child_site: 6 x 555 bytes, never freed. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hsprog.h"

static HS_SITE void ctor_site(void)
{
    for (int i = 0; i < 3; i++)
        hs_escape(malloc(111));
}

static HS_SITE void main_site(void)
{
    void *p[2];
    for (int i = 0; i < 2; i++)
        p[i] = malloc(222);
    for (int i = 0; i < 2; i++) {
        hs_escape(p[i]);
        free(p[i]);
    }
}

static HS_SITE void atexit_site(void)
{
    for (int i = 0; i < 4; i++)
        hs_escape(malloc(333));
}

static HS_SITE void dtor_site(void)
{
    for (int i = 0; i < 5; i++) {
        void *p = malloc(44);
        hs_escape(p);
        free(p);
    }
}

static HS_SITE void exec_child_site(void)
{
    for (int i = 0; i < 6; i++)
        hs_escape(malloc(555));
}

__attribute__((constructor)) static void before_main(void)
{
    ctor_site();
}

__attribute__((destructor)) static void after_exit(void)
{
    dtor_site();
}

int main(int argc, char **argv)
{
    atexit(atexit_site);
    if (argc > 1 && !strcmp(argv[1], "child")) {
        exec_child_site();
        return 0;
    }
    main_site();
    if (argc > 1 && !strcmp(argv[1], "exec")) {
        char *args[] = {argv[0], "child", NULL};
        execv("/proc/self/exe", args);
        return 99;
    }
    return 0;
}
