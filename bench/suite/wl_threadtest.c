/* wl_threadtest.c - Hoard's threadtest, as in the low-latency heap profiler
 * thesis: each of P threads runs 200 x SCALE iterations (the thesis: 1000), and in each allocates 30000/P objects of 8 bytes, then
 * frees them all.  The total work does not depend on P.
 * ops = P * 200 * SCALE * floor(30000 / P). */
#include "wl_suite.h"

#define OBJECTS 30000
#define OBJ_SIZE 8

static void *worker(void *arg)
{
    ws_worker_t *w = (ws_worker_t *)arg;
    long n = OBJECTS / w->threads, iters = 200L * w->scale;
    char **objs = (char **)ws_check(malloc((size_t)n * sizeof *objs));
    for (long it = 0; it < iters; it++) {
        for (long i = 0; i < n; i++) {
            objs[i] = (char *)ws_check(malloc(OBJ_SIZE));
            objs[i][0] = (char)i;
        }
        for (long i = 0; i < n; i++) {
            w->sum += (unsigned char)objs[i][0];
            free(objs[i]);
        }
        w->ops += (uint64_t)n;
    }
    free(objs);
    return NULL;
}

int main(int argc, char **argv)
{
    ws_args_t a = {1, 1};
    ws_parse(argc, argv, &a);
    return ws_run("wl-threadtest", &a, worker);
}
