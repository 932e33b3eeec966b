// rl_throw.cpp - a C++ program that throws exceptions across frames.
//
// Each throw allocates its exception object with __cxa_allocate_exception,
// which calls malloc, and the end of the catch frees it: ITER iterations
// each throw one exception three frames below the final catch (noinline
// functions); the middle frame catches it and, for even i, throws a new one
// (a second allocation), for odd i rethrows it (no allocation).  So the
// profile must show exactly ITER + ITER / 2 = 750 allocations, all freed,
// through __cxa_allocate_exception.  Prints the number caught and their
// checksum; exit 0.
#include <cstdio>
#include <cstdlib>

#define ITER 500

struct rl_error {
    int code;
    long pad[4];
};

__attribute__((noinline)) static void rl_level3(int i)
{
    if (i >= 0)
        throw rl_error{i, {0, 0, 0, 0}};
}

__attribute__((noinline)) static void rl_level2(int i)
{
    try {
        rl_level3(i);
    } catch (rl_error &e) {
        if (e.code % 2)
            throw; // rethrow: the same object, no new allocation
        throw rl_error{e.code + 1, {0, 0, 0, 0}}; // a new one
    }
}

__attribute__((noinline)) static long rl_level1(int i)
{
    try {
        rl_level2(i);
    } catch (const rl_error &e) {
        return e.code;
    }
    return -1;
}

int main()
{
    long sum = 0;
    int caught = 0;
    for (int i = 0; i < ITER; i++) {
        long v = rl_level1(i);
        if (v >= 0) {
            caught++;
            sum += v;
        }
    }
    std::printf("caught %d sum %ld\n", caught, sum);
    return 0;
}
