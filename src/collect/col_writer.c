/* col_writer.c - heapscope's own thread inside the profiled process: every
 * sample period it records heap and RSS for the timeline, every interval
 * (or when the configured signal arrives, or when the program goes quiet)
 * it writes the profile.
 *
 * The thread blocks every signal and runs with the re-entrancy guard set,
 * so its own allocations, if it made any, would go to the real allocator
 * unrecorded (to the bootstrap arena while it is kept out of glibc's
 * count, col_glibc.c).  The writer lock serialises flushes between this
 * thread, dlopen/dlclose/exec hooks and the final flush at exit.  After
 * fork the child has no writer thread; it is started by the child's next
 * cold check (col_writer_tick).
 *
 * With HEAPSCOPE_WRITER=0 (`heapscope run --no-thread`) the thread is not
 * started while the program has a single thread.  A second thread, even
 * one that sleeps, makes glibc take the locked paths of malloc, free and
 * stdio for the rest of the process (its __libc_single_threaded), which
 * makes a malloc-heavy single-threaded program up to twice as slow as
 * heapscope's hooks alone would (docs/BENCHMARKS.md, "Single-threaded
 * programs").  Then the cold check does the writer's work itself when it
 * is due, on the thread that allocates: so the timeline and the periodic
 * profile follow the program's allocations and stop while it is idle.
 * The thread starts as soon as the program has a second thread of its
 * own, or when a flush signal is configured.
 *
 * By default the thread is kept out of the flag with which glibc 2.36's
 * malloc tells a lone thread, where that flag can be checked
 * (col_glibc.c): then a single-threaded program keeps most of that speed
 * and still gets the writer's samples and its quiet-time flushes. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "collect/col_internal.h"

static pthread_mutex_t writer_mutex = PTHREAD_MUTEX_INITIALIZER;
/* Set by col_writer_trigger, and the futex the writer sleeps on between
 * samples.  Not a descriptor (an eventfd was): a program that closes
 * every descriptor it did not open, as daemons do, hands the number to a
 * file of its own, and the writer's wake-up read took its bytes
 * (e2e_closefds). */
static uint32_t wake_word;
static uint32_t stop_word;  /* col_writer_pause asks the thread to end */
static pid_t writer_tid;    /* the thread's kernel id while it runs */
static int running;       /* writer thread started in this process */
static int starting;
/* Without the thread: when its next sample and flush are due (ns). */
static uint64_t inline_sample_at, inline_flush_at;

/* glibc's: true until the process first creates a thread (2.32 and
 * later); weak, so that an older glibc reads as threaded. */
extern char __libc_single_threaded __attribute__((weak));
static const char never_single = 0;
const char *col_single_threaded = &never_single;

_Thread_local int col_tls_writer __attribute__((tls_model("initial-exec")));

void col_writer_init(void)
{
    col_glibc_init();
    if (&__libc_single_threaded != NULL)
        col_single_threaded = &__libc_single_threaded;
}

static int program_threaded(void)
{
    return !*col_single_threaded;
}

int col_writer_wanted(void)
{
    return col_config.writer || col_config.signal || program_threaded();
}

void col_writer_lock(void)
{
    pthread_mutex_lock(&writer_mutex);
}

void col_writer_unlock(void)
{
    pthread_mutex_unlock(&writer_mutex);
}

/* Async-signal-safe: wake the writer for an immediate flush. */
static void wake(void)
{
    int saved = errno;
    __atomic_store_n(&wake_word, 1, __ATOMIC_RELEASE);
    syscall(SYS_futex, &wake_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    errno = saved;
}

void col_writer_trigger(void)
{
    /* sealed: no writer, and the futex may be forbidden (col_seccomp.c) */
    if (!__atomic_load_n(&col_sealed, __ATOMIC_ACQUIRE))
        wake();
}

/* Wait up to ms milliseconds while *word is 0 (returns at once if it is
 * not).  The collector's only sleep: a seccomp filter the collector found
 * harmless lets the futex run (col_seccomp_calls.c), but may forbid
 * nanosleep (hs_convoy nosleep). */
static void futex_wait(uint32_t *word, unsigned ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
    syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
}

/* Sleep one sample period, or less if triggered; 1 if triggered. */
static int writer_sleep(void)
{
    if (__atomic_exchange_n(&wake_word, 0, __ATOMIC_ACQUIRE))
        return 1;
    futex_wait(&wake_word, col_config.sample_ms);
    return __atomic_exchange_n(&wake_word, 0, __ATOMIC_ACQUIRE) != 0;
}

/* The time `ms` milliseconds after `from` (ns): when a sample or flush
 * is next due. */
static uint64_t ms_after(uint64_t from, unsigned ms)
{
    return from + (uint64_t)ms * 1000000u;
}

/* A flush also comes when the program goes quiet: a sample period with no
 * allocation or free in any thread, after some that the file does not
 * hold yet.  A program is most often killed while it waits (a pool's
 * worker at terminate(), a server at shutdown, a hung program), so its
 * profile is then complete, and a process killed before its first
 * interval (500 ms by default) still leaves one.  At most one such flush
 * per QUIET_GAP_MIN_MS, and never more often than FLUSH_GAP_FACTOR times
 * the CPU time the last flush took, so that a program that pauses often
 * keeps the writer's share of a core small. */
#define QUIET_GAP_MIN_MS 100

/* A flush reads every thread's counters of every site and writes the
 * whole call tree: binary-trees' 65,536 sites on 16 threads take ~15 ms,
 * and a program ten times that size would keep the writer busy a third of
 * the time at the default interval of 500 ms.  So the next periodic or
 * quiet flush comes no sooner than FLUSH_GAP_FACTOR times the CPU time the
 * last one took: the writer's flushes stay under 5% of a core, whatever
 * the program's size or HEAPSCOPE_INTERVAL_MS.  CPU time, not wall time,
 * so that a flush the system held up (a stopped process, a slow disk)
 * does not hold the next one back twenty times as long. */
#define FLUSH_GAP_FACTOR 20

/* When the flush after one that began at `now` and took `cpu` ns of CPU
 * may come: ms after it, and at least FLUSH_GAP_FACTOR times `cpu`. */
static uint64_t flush_gap(uint64_t now, unsigned ms, uint64_t cpu)
{
    uint64_t at = ms_after(now, ms);
    return at < now + FLUSH_GAP_FACTOR * cpu ? now + FLUSH_GAP_FACTOR * cpu : at;
}

/* The calling thread's CPU time, ns. */
static uint64_t cpu_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A periodic flush of the writer, or of the thread that allocates (under
 * the writer lock): its CPU time in ns.  For the tests,
 * HEAPSCOPE_FAULT_FLUSH_CPU_MS adds that many ms of CPU, as a flush of a
 * program of many sites and threads takes, and _SLEEP_MS that many ms
 * asleep.  Sealed (set under the same lock), no flush and no clock: the
 * thread's CPU clock is a system call, not the vDSO's (col_seccomp.c). */
static uint64_t flush_periodic(void)
{
    if (__atomic_load_n(&col_sealed, __ATOMIC_ACQUIRE))
        return 0;
    uint64_t cpu = cpu_ns();
    col_flush(COL_FLUSH_PERIODIC);
    if (col_config.fault_flush_cpu) {
        uint64_t until = cpu_ns() + (uint64_t)col_config.fault_flush_cpu * 1000000u;
        while (cpu_ns() < until)
            ;
    }
    if (col_config.fault_flush_sleep) {
        struct timespec ts = {col_config.fault_flush_sleep / 1000,
                              col_config.fault_flush_sleep % 1000 * 1000000};
        syscall(SYS_nanosleep, &ts, NULL); /* (glibc's is a cancellation point) */
    }
    uint64_t end = cpu_ns();
    return end > cpu ? end - cpu : 0; /* (0 if the clock could not be read) */
}

/* After a flush: the writer allocates nothing, but should a call of the
 * malloc family have come from it while it was kept out of glibc's view
 * (served from the bootstrap arena instead, col_hooks_cold.c), the next
 * profile says so, once.  HEAPSCOPE_FAULT_WRITER_ALLOC makes one. */
static void writer_allocs_check(void)
{
    static int said;
    if (col_config.fault_writer_alloc) {
        void *p = malloc(100);
        free(p);
    }
    unsigned long n = __atomic_load_n(&col_writer_boot_allocs, __ATOMIC_RELAXED);
    if (n && !said) {
        said = 1;
        col_message_add("the writer thread called the malloc family %lu times while kept out of "
                        "glibc's count of threads; heapscope's bootstrap arena served them",
                        n);
    }
}

static void *writer_main(void *arg)
{
    (void)arg;
    col_tls_guard = 1;
    col_tls_writer = 1;
    __atomic_store_n(&writer_tid, gettid(), __ATOMIC_RELEASE);
    prctl(PR_SET_NAME, "heapscope", 0, 0, 0);
    uint64_t next_flush = ms_after(col_now_ns(), col_config.interval_ms);
    uint64_t quiet_from = 0;        /* no quiet flush before this time */
    uint64_t last_events = 0;       /* allocations and frees at the last sample */
    uint64_t flushed_events = 0;    /* ... at the sample before the last flush */
    for (;;) {
        int triggered = writer_sleep();
        if (__atomic_load_n(&stop_word, __ATOMIC_ACQUIRE))
            break;
        col_writer_lock();
        if (col_flush_finished()) {
            col_writer_unlock();
            break;
        }
        uint64_t events = col_sample_take();
        uint64_t now = col_now_ns();
        int quiet = events == last_events && events != flushed_events && now >= quiet_from;
        last_events = events;
        if (triggered || now >= next_flush || quiet) {
            uint64_t cpu = flush_periodic();
            writer_allocs_check();
            flushed_events = events;
            next_flush = flush_gap(now, col_config.interval_ms, cpu);
            quiet_from = flush_gap(now, QUIET_GAP_MIN_MS, cpu);
        }
        col_writer_unlock();
    }
    return NULL;
}

/* Start the writer thread of this process (once); 0 on success. */
int col_writer_start(void)
{
    if (__atomic_exchange_n(&starting, 1, __ATOMIC_ACQ_REL))
        return 0;
    int top = col_guard_enter();
    /* the seal is set under the writer lock: no writer starts after it */
    col_writer_lock();
    if (__atomic_load_n(&col_sealed, __ATOMIC_ACQUIRE)) {
        __atomic_store_n(&starting, 0, __ATOMIC_RELEASE);
        col_writer_unlock();
        col_guard_leave(top);
        return -1;
    }
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    pthread_t th;
    int hide = col_glibc_hide_prepare();
    /* not through the hook, which would take the writer for the program's */
    int rc = col_real.pthread_create ? col_real.pthread_create(&th, &attr, writer_main, NULL)
                                     : EAGAIN;
    col_glibc_hide_commit(hide, rc == 0);
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0)
        col_log("heapscope: cannot start the writer thread; the profile is written at exit only\n");
    __atomic_store_n(&running, rc == 0, __ATOMIC_RELEASE);
    col_writer_unlock();
    col_guard_leave(top);
    return rc;
}

/* 1 ms, on a futex nobody wakes */
static void nap_1ms(void)
{
    static uint32_t never;
    futex_wait(&never, 1);
}

int col_writer_pause(void)
{
    if (!__atomic_load_n(&running, __ATOMIC_ACQUIRE))
        return 0;
    int saved = errno;
    /* a thread just created may not have run yet */
    pid_t tid;
    for (int i = 0; i < 1000 && !(tid = __atomic_load_n(&writer_tid, __ATOMIC_ACQUIRE)); i++)
        nap_1ms();
    if (!tid) {
        errno = saved;
        return 0;
    }
    /* the thread sees stop_word when it wakes, after any flush it is in */
    __atomic_store_n(&stop_word, 1, __ATOMIC_RELEASE);
    wake();
    /* gone once tgkill no longer finds it; at most ~2 s (a long flush) */
    pid_t pid = getpid();
    int i = 0;
    for (; i < 2000 && syscall(SYS_tgkill, pid, tid, 0) == 0; i++)
        nap_1ms();
    if (i == 2000) { /* still there: it ends when it wakes, and none starts again */
        errno = saved;
        return 1;
    }
    __atomic_store_n(&writer_tid, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&stop_word, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&running, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&starting, 0, __ATOMIC_RELEASE);
    errno = saved;
    return 1;
}

/* A flush's own frames take under 1 KB (its buffers are static or
 * mapped), the C library's it calls (snprintf, dl_iterate_phdr) a few KB
 * more; a thread with less than INLINE_STACK left above its stack's end,
 * or on a stack that is not its own (a coroutine's), leaves the work for
 * a later check. */
#define INLINE_STACK (64 * 1024)

/* The writer's work, when due, done by the thread that allocates (no
 * writer thread: see the header).  Only from outside heapscope's own
 * regions, so no lock of heapscope's is held here. */
static void writer_inline(void)
{
    col_thread_t *t = col_tls_self;
    char here;
    uintptr_t sp = (uintptr_t)&here;
    if (col_tls_guard || !t || sp > t->stack_hi || sp < t->stack_lo + INLINE_STACK)
        return;
    uint64_t now = col_now_ns();
    if (!inline_flush_at) {
        inline_sample_at = ms_after(col_proc.start_mono_ns, col_config.sample_ms);
        inline_flush_at = ms_after(col_proc.start_mono_ns, col_config.interval_ms);
    }
    if (now < inline_sample_at && now < inline_flush_at)
        return;
    int top = col_guard_enter();
    if (pthread_mutex_trylock(&writer_mutex) == 0) {
        if (!col_flush_finished()) {
            if (now >= inline_sample_at) {
                col_sample_take();
                inline_sample_at = ms_after(now, col_config.sample_ms);
            }
            if (now >= inline_flush_at)
                inline_flush_at = flush_gap(now, col_config.interval_ms, flush_periodic());
        }
        col_writer_unlock();
    }
    col_guard_leave(top);
}

/* Called every few thousand events per thread, off the fast path: starts
 * the writer thread, or does its work where there is none. */
void col_writer_tick(void)
{
    if (UT_UNLIKELY(!__atomic_load_n(&running, __ATOMIC_ACQUIRE)) &&
        !__atomic_load_n(&starting, __ATOMIC_ACQUIRE) && col_state == COL_READY &&
        !__atomic_load_n(&col_sealed, __ATOMIC_RELAXED)) {
        int saved = errno;
        if (col_writer_wanted())
            col_writer_start();
        else
            writer_inline();
        errno = saved;
    }
}

void col_writer_atfork_prepare(void)
{
    col_writer_lock();
}

void col_writer_atfork_parent(void)
{
    col_writer_unlock();
}

void col_writer_atfork_child(void)
{
    pthread_mutex_init(&writer_mutex, NULL);
    wake_word = 0;
    stop_word = 0;
    writer_tid = 0;
    running = 0;
    starting = 0;
    inline_sample_at = inline_flush_at = 0;
    col_writer_hidden = 0; /* the next start decides again */
}
