/* ut_spin.h - a tiny test-and-test-and-set spinlock for the collector's
 * rare paths (new thread, new stack, side table), where a pthread mutex
 * could call into code that is not safe inside malloc.  An int, 0 =
 * unlocked, so it needs no initialisation and can be reset after fork. */
#ifndef UT_SPIN_H
#define UT_SPIN_H

#include <sched.h>

/* The collector's seal (col_seccomp.c): set once a seccomp filter may
 * forbid sched_yield, after which waits only spin. */
extern int col_sealed;

/* One round of waiting for a held lock (*spins rounds so far): spin
 * briefly, then yield the CPU.  With more threads than cores the holder
 * may have been preempted, and spinning until the waiter's own time slice
 * ends would cost milliseconds per acquisition (8 threads meeting the same
 * new stacks on 2 cores spent 28% of a run here). */
static inline void ut_spin_pause(unsigned *spins)
{
    if (++*spins < 100 || __atomic_load_n(&col_sealed, __ATOMIC_RELAXED))
        __builtin_ia32_pause();
    else
        sched_yield();
}

static inline void ut_spin_lock(int *l)
{
    unsigned spins = 0;
    while (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE))
        while (__atomic_load_n(l, __ATOMIC_RELAXED))
            ut_spin_pause(&spins);
}

/* Take the lock if it is free; 1 if taken. */
static inline int ut_spin_trylock(int *l)
{
    return !__atomic_load_n(l, __ATOMIC_RELAXED) && !__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE);
}

/* Wait, without taking it, until the lock is free. */
static inline void ut_spin_wait(const int *l)
{
    unsigned spins = 0;
    while (__atomic_load_n(l, __ATOMIC_ACQUIRE))
        ut_spin_pause(&spins);
}

static inline void ut_spin_unlock(int *l)
{
    __atomic_store_n(l, 0, __ATOMIC_RELEASE);
}

#endif
