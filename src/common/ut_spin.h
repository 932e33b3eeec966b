/* ut_spin.h - a tiny test-and-test-and-set spinlock for the collector's
 * rare paths (new thread, new stack, side table), where a pthread mutex
 * could call into code that is not safe inside malloc.  An int, 0 =
 * unlocked, so it needs no initialisation and can be reset after fork. */
#ifndef UT_SPIN_H
#define UT_SPIN_H

static inline void ut_spin_lock(int *l)
{
    while (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE))
        while (__atomic_load_n(l, __ATOMIC_RELAXED))
            __builtin_ia32_pause();
}

static inline void ut_spin_unlock(int *l)
{
    __atomic_store_n(l, 0, __ATOMIC_RELEASE);
}

#endif
