/* realloc.c - hs-bench-realloc: a single-threaded program that grows its
 * buffers with realloc by small steps, as naive string building does, for
 * bench/overhead (docs/BENCHMARKS.md, "Blocks grown with realloc").
 *
 * hs-bench-realloc BUFFERS: BUFFERS x (100 reallocs, each 8 bytes longer
 * plus 0-7 bytes of slack, writing the new 8 bytes, then a free); most
 * reallocs grow the block in place.  Prints the bytes written. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    long buffers = argc > 1 ? atol(argv[1]) : 300000;
    size_t total = 0;
    for (long i = 0; i < buffers; i++) {
        char *b = NULL;
        size_t len = 0;
        for (int k = 0; k < 100; k++) {
            char *n = realloc(b, len + 8 + (size_t)(k & 7));
            if (!n) {
                free(b);
                return 1;
            }
            b = n;
            memset(b + len, 'a', 8);
            len += 8;
        }
        total += len;
        free(b);
    }
    printf("%zu\n", total);
    return 0;
}
