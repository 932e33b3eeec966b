// wl_list.cc - the MemHawk list workload (as bench/list.cc): each of P
// threads builds a std::list<long> of 1,000,000 x SCALE elements with
// push_back and destroys it with pop_front.  One call site, shallow stacks:
// the best case for a stack cache and the worst case for a per-event lock.
// MemHawk's benchmark is `wl-list -t 16` (16 M allocations of 24-byte nodes,
// 512 MB live at the peak).  ops = P * 1000000 * SCALE.
#include <list>

#include "wl_suite.h"

__attribute__((noinline)) static long build_and_destroy(long n)
{
    std::list<long> l;
    for (long i = 0; i < n; i++)
        l.push_back(i);
    long sum = 0;
    while (!l.empty()) {
        sum += l.front();
        l.pop_front();
    }
    return sum;
}

static void *worker(void *arg)
{
    ws_worker_t *w = static_cast<ws_worker_t *>(arg);
    long n = 1000000L * w->scale;
    w->sum = (uint64_t)build_and_destroy(n);
    w->ops = (uint64_t)n;
    return nullptr;
}

int main(int argc, char **argv)
{
    ws_args_t a = {1, 1};
    ws_parse(argc, argv, &a);
    return ws_run("wl-list", &a, worker);
}
