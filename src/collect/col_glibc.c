/* col_glibc.c - glibc's view of the process's threads, which heapscope's
 * writer thread would otherwise change for the program.
 *
 * glibc runs malloc and free on cheaper paths while it believes the
 * process has one thread.  Its first pthread_create ends that for good,
 * even for a thread that only sleeps, as the writer does: a
 * single-threaded program that churns small blocks then runs up to twice
 * as slow under heapscope as its hooks alone would make it
 * (docs/BENCHMARKS.md, "Single-threaded programs").
 *
 * glibc 2.36 on x86_64 keeps two flags.  __libc_single_threaded (global)
 * drives mutexes, stdio, set*id, fork and the top of malloc.  A field of
 * each thread's control block (tcbhead_t.multiple_threads, %fs:0x18) drives
 * the inside of malloc and free (fastbins without atomics) and the dynamic
 * loader's scope waits.  pthread_create sets the creating thread's field
 * and every new thread's.  heapscope leaves the global flag as glibc set
 * it, so every lock stays a lock, and clears only the field of the thread
 * that started the writer when that thread was glibc's only one: then
 * malloc's inside works as it would without heapscope.  That is safe
 * because the writer never calls malloc or free (no qsort, no translated
 * strerror; an allocation it made anyway would come from the bootstrap
 * arena, col_hooks_cold.c, and be named in the profile) and never looks
 * up a symbol (the library is linked -z now, and the writer does not call
 * into libunwind, whose calls are bound lazily: col_unwind.c), which is
 * what the loader's scope waits are for.  It stays so: the program's own
 * pthread_create sets the field again (glibc does it once the new thread
 * runs; the pthread_create hook tells col_heap_add before,
 * col_hooks_proc.c).
 *
 * Only where this was checked: glibc 2.36 on x86_64, whose control block
 * holds its own address at 0 and 16, and whose pthread_create is seen to
 * turn the field from 0 to 1.  Other glibcs
 * (2.37 reads the global flag only) keep the writer counted.
 * HEAPSCOPE_HIDE_WRITER=0 turns this off. */
#define _GNU_SOURCE
#include <gnu/libc-version.h>
#include <stdint.h>
#include <string.h>

#include "collect/col_internal.h"

int col_glibc_tcb;
int col_writer_hidden;
int col_program_threaded;
unsigned long col_writer_boot_allocs;

#if defined(__x86_64__)
static uintptr_t tcb_word(unsigned off)
{
    uintptr_t v;
    __asm__ volatile("movq %%fs:(%1), %0" : "=r"(v) : "r"((uintptr_t)off));
    return v;
}

static void tcb_field_clear(void)
{
    __asm__ volatile("movl $0, %%fs:0x18" ::: "memory");
}
#endif

void col_glibc_init(void)
{
#if defined(__x86_64__)
    if (strcmp(gnu_get_libc_version(), "2.36") != 0)
        return;
    uintptr_t tcb = tcb_word(0), self = tcb_word(16);
    if (tcb == 0 || tcb != self || col_glibc_field() > 1u)
        return;
    col_glibc_tcb = 1;
#endif
}

int col_glibc_hide_prepare(void)
{
    if (!col_config.hide_writer || !col_glibc_tcb || col_glibc_field() != 0) {
        /* a writer started again once the program has threads is counted */
        __atomic_store_n(&col_writer_hidden, 0, __ATOMIC_RELEASE);
        return 0;
    }
    /* from here the writer's allocations go to the bootstrap arena */
    __atomic_store_n(&col_writer_hidden, 1, __ATOMIC_RELEASE);
    return 1;
}

void col_glibc_hide_commit(int prepared, int created)
{
    if (!prepared)
        return;
#if defined(__x86_64__)
    if (created && col_glibc_field() == 1) {
        tcb_field_clear();
        return;
    }
#endif
    __atomic_store_n(&col_writer_hidden, 0, __ATOMIC_RELEASE);
}
