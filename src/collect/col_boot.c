/* col_boot.c - start and end of the collector: finds the real allocator
 * with dlsym(RTLD_NEXT), serves the allocations dlsym itself makes from a
 * static arena, sets up every part once, and writes the final profile when
 * the library is finalised (after the program's own destructors).
 *
 * Start happens on the first intercepted call or in the library
 * constructor, whichever comes first; a second thread arriving during start
 * waits for it.  Nothing here is ever torn down: allocations after our
 * destructor still go through the hooks and still work. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "collect/col_dwarf.h"
#include "collect/col_internal.h"
#include "collect/col_record.h"
#include "heapscope/profile.h"

col_real_t col_real;
col_process_t col_proc;
volatile int col_state = COL_UNINIT;
_Thread_local int col_tls_guard __attribute__((tls_model("initial-exec")));

/* ---- bootstrap arena: serves dlsym's allocations before malloc is known */

unsigned char col_boot_arena[COL_BOOT_ARENA_SIZE] UT_ALIGNED(64);
static size_t boot_used;

/* Each block is preceded by 16 bytes holding its size.  Taken with a
 * compare-and-swap: dlsym's calls come before the writer thread exists,
 * but the writer's come from its own thread (col_hooks_cold.c). */
void *col_boot_alloc(size_t size, size_t align)
{
    if (align < 16)
        align = 16;
    size_t used = __atomic_load_n(&boot_used, __ATOMIC_RELAXED), start;
    do {
        start = (used + 16 + align - 1) & ~(align - 1);
        if (size > COL_BOOT_ARENA_SIZE || start + size > COL_BOOT_ARENA_SIZE)
            return NULL;
    } while (!__atomic_compare_exchange_n(&boot_used, &used, start + size, 0, __ATOMIC_RELAXED,
                                          __ATOMIC_RELAXED));
    memcpy(col_boot_arena + start - 16, &size, sizeof size);
    return col_boot_arena + start;
}

size_t col_boot_size(const void *p)
{
    size_t size;
    memcpy(&size, (const unsigned char *)p - 16, sizeof size);
    return size;
}

/* ---- start ------------------------------------------------------------ */

uint64_t col_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *resolve(const char *name, int required)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (!f && required) {
        col_log("heapscope: cannot find %s in the next library; profiling disabled\n", name);
    }
    return f;
}

static int resolve_all(void)
{
    col_real_t *r = &col_real;
    *(void **)&r->malloc = resolve("malloc", 1);
    *(void **)&r->free = resolve("free", 1);
    *(void **)&r->calloc = resolve("calloc", 1);
    *(void **)&r->realloc = resolve("realloc", 1);
    *(void **)&r->reallocarray = resolve("reallocarray", 0);
    *(void **)&r->posix_memalign = resolve("posix_memalign", 1);
    *(void **)&r->aligned_alloc = resolve("aligned_alloc", 0);
    *(void **)&r->memalign = resolve("memalign", 0);
    *(void **)&r->valloc = resolve("valloc", 0);
    *(void **)&r->pvalloc = resolve("pvalloc", 0);
    *(void **)&r->malloc_usable_size = resolve("malloc_usable_size", 1);
    *(void **)&r->dlopen = resolve("dlopen", 0);
    *(void **)&r->dlclose = resolve("dlclose", 0);
    *(void **)&r->execve = resolve("execve", 0);
    *(void **)&r->execvpe = resolve("execvpe", 0);
    *(void **)&r->fexecve = resolve("fexecve", 0);
    *(void **)&r->exit_ = resolve("_exit", 1);
    *(void **)&r->prctl = resolve("prctl", 0);
    *(void **)&r->syscall = resolve("syscall", 0);
    *(void **)&r->unshare = resolve("unshare", 0);
    *(void **)&r->setns = resolve("setns", 0);
    *(void **)&r->pipe2 = resolve("pipe2", 0);
    *(void **)&r->pthread_create = resolve("pthread_create", 0);
    return r->malloc && r->free && r->calloc && r->realloc && r->posix_memalign &&
                   r->malloc_usable_size && r->exit_
               ? 0
               : -1;
}

/* Which library really allocates, and the shadow granule it allows: glibc
 * never places two live blocks within 32 bytes (MINSIZE on x86-64); other
 * allocators (jemalloc, tcmalloc, mimalloc) place blocks 16 bytes apart and
 * 8-byte ones 8 bytes apart, which the shadow map keeps apart by their
 * address's bit 3 (col_shadow_leaf). */
static void identify_allocator(void)
{
    Dl_info info;
    void *addr;
    memcpy(&addr, &col_real.malloc, sizeof addr); /* function to object pointer */
    col_proc.granule_shift = 4;
    const char *path = col_modules_path_of(addr, NULL); /* dladdr only for the program's own */
    if (!path && dladdr(addr, &info))
        path = info.dli_fname;
    if (path) {
        strncpy(col_proc.allocator, path, sizeof col_proc.allocator - 1);
        if (col_modules_is_libc(path))
            col_proc.granule_shift = COL_SHADOW_GLIBC_SHIFT;
    }
}

static void on_signal(int sig)
{
    (void)sig;
    col_writer_trigger();
}

static void install_signal(void)
{
    if (!col_config.signal)
        return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(col_config.signal, &sa, NULL);
}

static void atfork_prepare(void)
{
    col_unwind_atfork_prepare(); /* first: a walk in libunwind needs none of the locks below */
    col_writer_atfork_prepare();
    col_thread_atfork_prepare();
    col_node_atfork_prepare();
    col_site_atfork_prepare();
    col_shadow_atfork_prepare();
}

static void atfork_parent(void)
{
    col_shadow_atfork_release();
    col_site_atfork_parent();
    col_node_atfork_parent();
    col_thread_atfork_parent();
    col_writer_atfork_parent();
    col_unwind_atfork_parent();
}

/* In the child: new pid, new output file, no writer thread yet (it starts
 * on the child's next cold check), same counters (the heap is inherited). */
static void atfork_child(void)
{
    col_shadow_atfork_release();
    col_site_atfork_child();
    col_node_atfork_child();
    col_thread_atfork_child();
    col_proc.ppid = col_proc.pid;
    if (!__atomic_load_n(&col_sealed, __ATOMIC_ACQUIRE)) /* else no call (col_seccomp.c) */
        col_proc.pid = (int)getpid();
    col_proc.flags |= PF_INFO_FORKED;
    col_output_reset_child();
    col_flush_reset_child();
    col_writer_atfork_child();
    col_unwind_atfork_child();
}

static void boot_once(void)
{
    col_tls_guard = 1;
    if (resolve_all() < 0) {
        col_state = COL_OFF;
        return;
    }
    col_config_load();
    if (col_config.disabled) {
        col_state = COL_OFF;
        return;
    }
    col_proc.pid = (int)getpid();
    col_proc.ppid = (int)getppid();
    col_proc.start_mono_ns = col_now_ns();
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    col_proc.start_real_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    if (col_config.root_pid && col_config.root_pid != col_proc.pid)
        col_proc.flags |= PF_INFO_EXECED;
    identify_allocator();
    col_fd_prepare();
    col_writer_init();
    col_seccomp_init();
    if (col_node_init() < 0 || col_site_init() < 0 || col_shadow_init() < 0 || col_thread_init() < 0 ||
        col_unwind_init() < 0) {
        col_log("heapscope: cannot reserve memory for the collector; profiling disabled\n");
        col_state = COL_OFF;
        return;
    }
    col_writer_lock();
    col_modules_scan();
    col_modules_self_range(&col_proc.self_lo, &col_proc.self_hi);
    col_ext_check();
    col_writer_unlock();
    col_heap.slack = 0;
    pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
    install_signal();
    __atomic_store_n(&col_state, COL_READY, __ATOMIC_RELEASE);
    if (col_writer_wanted())
        col_writer_start(); /* else with the program's second thread (col_writer.c) */
}

/* Bring the collector up; safe to call from any thread, any number of
 * times.  Returns with col_state READY or OFF, except on the booting
 * thread itself (re-entered through dlsym), which sees BOOTING. */
void col_boot_init(void)
{
    int s = __atomic_load_n(&col_state, __ATOMIC_ACQUIRE);
    if (s == COL_READY || s == COL_OFF)
        return;
    int expect = COL_UNINIT;
    if (__atomic_compare_exchange_n(&col_state, &expect, COL_BOOTING, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE)) {
        int saved_errno = errno;
        int saved_guard = col_tls_guard;
        boot_once();
        col_tls_guard = saved_guard;
        errno = saved_errno;
        return;
    }
    if (col_tls_guard)
        return; /* re-entered on the booting thread */
    while (__atomic_load_n(&col_state, __ATOMIC_ACQUIRE) == COL_BOOTING)
        sched_yield();
}

__attribute__((constructor(101))) static void col_boot_ctor(void)
{
    col_boot_init();
}

/* Final profile: runs in _dl_fini, after the program's atexit handlers and
 * static destructors. */
__attribute__((destructor(101))) static void col_boot_dtor(void)
{
    /* sealed: no call at all, getpid's neither (col_seccomp.c) */
    if (col_state != COL_READY || __atomic_load_n(&col_sealed, __ATOMIC_ACQUIRE) ||
        col_proc.pid != (int)getpid())
        return;
    int saved_errno = errno;
    int top = col_guard_enter();
    col_unwind_report();
    col_record_report();
    col_dwarf_report();
    col_memstat_report();
    col_writer_lock();
    col_flush(COL_FLUSH_FINAL);
    col_writer_unlock();
    col_guard_leave(top);
    errno = saved_errno;
}
