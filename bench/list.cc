// list.cc - the allocation-bound workload of the collector issue (after
// MemHawk's README): T threads, each builds a std::list of N ints with
// push_back and destroys it with pop_front, R rounds.  One call site,
// shallow stacks: the best case for a stack cache and the worst case for a
// per-event lock.  Usage: hs-bench-list [THREADS=16] [N=1000000] [ROUNDS=1]
#include <cstdio>
#include <cstdlib>
#include <list>
#include <thread>
#include <vector>

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

int main(int argc, char **argv)
{
    int threads = argc > 1 ? std::atoi(argv[1]) : 16;
    long n = argc > 2 ? std::atol(argv[2]) : 1000000;
    int rounds = argc > 3 ? std::atoi(argv[3]) : 1;
    std::vector<std::thread> pool;
    std::vector<long> sums(threads);
    for (int t = 0; t < threads; t++)
        pool.emplace_back([&, t] {
            for (int r = 0; r < rounds; r++)
                sums[t] += build_and_destroy(n);
        });
    for (auto &th : pool)
        th.join();
    long total = 0;
    for (long s : sums)
        total += s;
    return total == (long)threads * rounds * (n * (n - 1) / 2) ? 0 : 1;
}
