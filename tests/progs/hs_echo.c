/* hs_echo.c - copies stdin to stdout and exits with status 3.
 *
 * echo_buffer_site: one malloc(65536), freed at the end: 1 allocation. */
#include <stdlib.h>

#include "hsprog.h"

HS_SITE static char *echo_buffer_site(void)
{
    char *b = malloc(65536);
    if (!b)
        hs_fail("malloc");
    return b;
}

int main(void)
{
    char *buf = echo_buffer_site();
    for (;;) {
        ssize_t n = read(0, buf, 65536);
        if (n <= 0)
            break;
        for (ssize_t off = 0; off < n;) {
            ssize_t w = write(1, buf + off, (size_t)(n - off));
            if (w <= 0)
                hs_fail("write");
            off += w;
        }
    }
    free(buf);
    return 3;
}
