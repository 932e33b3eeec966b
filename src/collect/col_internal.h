/* col_internal.h - shared state and internal API of the preload collector.
 *
 * Reading order for a newcomer: col_hooks.c (the interposed malloc family)
 * -> col_record.c (what one allocation or free updates) -> col_thread.c
 * (per-thread counter tables) -> col_stack.c (unique stacks) ->
 * col_shadow.c (live blocks) -> col_writer.c / col_flush.c (the profile).
 *
 * Threading model: every program thread owns a col_thread_t and is the only
 * writer of its counters; the writer thread reads them with relaxed loads.
 * Unique stacks are interned in one process-wide, insert-only table that is
 * read without locks.  Live blocks are found by address in a shadow map.
 * Nothing on the allocation path takes a lock, does I/O or calls malloc.
 */
#ifndef COL_INTERNAL_H
#define COL_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <pthread.h>

#include "common/ut_compiler.h"
#include "heapscope/profile.h"

/* ---- configuration (col_config.c) ------------------------------------ */

typedef struct col_config {
    int unwinder;          /* enum pf_unwinder */
    int max_depth;         /* frames kept per stack */
    unsigned interval_ms;  /* flush period */
    unsigned sample_ms;    /* timeline sample period */
    int64_t peak_slack;    /* bytes a thread may keep unpublished (>1 thread) */
    int signal;            /* signal that triggers a flush, 0 = none */
    int quiet;             /* no diagnostics on stderr */
    int disabled;          /* HEAPSCOPE_DISABLE: pass everything through */
    int verify_unwind;     /* HEAPSCOPE_UNWIND_VERIFY: check dwarf against libunwind */
    char output[1024];     /* output file pattern (%p pid, %e program) */
    int output_explicit;   /* HEAPSCOPE_OUTPUT was set */
    int root_pid;          /* HEAPSCOPE_ROOT_PID: the launcher's child */
    long fault_shadow_leaves; /* HEAPSCOPE_FAULT_SHADOW_LEAVES (tests): leaves
                                 mapped before mapping fails; -1 = never fails */
} col_config_t;

extern col_config_t col_config;
void col_config_load(void);

#define COL_MAX_DEPTH 256

/* ---- the collector's own memory (col_vm.c) ---------------------------- */

void *col_vm_map(size_t size);                  /* zeroed, MAP_NORESERVE; NULL */
void col_vm_unmap(void *p, size_t size);        /* p may be NULL */
void *col_vm_grow(void *p, size_t old_size, size_t new_size); /* mremap; NULL */

/* ---- real allocator (col_boot.c) -------------------------------------- */

typedef struct col_real {
    void *(*malloc)(size_t);
    void (*free)(void *);
    void *(*calloc)(size_t, size_t);
    void *(*realloc)(void *, size_t);
    void *(*reallocarray)(void *, size_t, size_t);
    int (*posix_memalign)(void **, size_t, size_t);
    void *(*aligned_alloc)(size_t, size_t);
    void *(*memalign)(size_t, size_t);
    void *(*valloc)(size_t);
    void *(*pvalloc)(size_t);
    size_t (*malloc_usable_size)(void *);
    void *(*dlopen)(const char *, int);
    int (*dlclose)(void *);
    int (*execve)(const char *, char *const[], char *const[]);
    int (*execvpe)(const char *, char *const[], char *const[]);
    int (*fexecve)(int, char *const[], char *const[]);
    void (*exit_)(int) __attribute__((noreturn));
} col_real_t;

extern col_real_t col_real;

/* 0 before init, 1 while initialising, 2 ready, 3 disabled */
extern volatile int col_state;
enum { COL_UNINIT = 0, COL_BOOTING = 1, COL_READY = 2, COL_OFF = 3 };

void col_boot_init(void);                       /* idempotent, any thread */
#define COL_BOOT_ARENA_SIZE (256 * 1024)
extern unsigned char col_boot_arena[COL_BOOT_ARENA_SIZE];
/* p from the bootstrap arena? (one unsigned compare) */
UT_INLINE int col_boot_owns(const void *p)
{
    return (uintptr_t)p - (uintptr_t)col_boot_arena < COL_BOOT_ARENA_SIZE;
}
void *col_boot_alloc(size_t size, size_t align); /* bootstrap arena (dlsym) */
size_t col_boot_size(const void *p);

/* Re-entrancy guard: set while heapscope itself runs on this thread, so
 * that allocations it causes (libunwind, dl_iterate_phdr, stdio in the
 * writer) go straight to the real allocator, unrecorded. */
extern _Thread_local int col_tls_guard __attribute__((tls_model("initial-exec")));

/* Process facts fixed at start (or after fork). */
typedef struct col_process {
    int pid;
    int ppid;
    unsigned flags;             /* PF_INFO_* */
    uint64_t start_mono_ns;
    uint64_t start_real_ns;
    uintptr_t self_lo, self_hi; /* libheapscope.so's own text */
    unsigned granule_shift;     /* shadow granule: 5 for glibc, 3 otherwise */
    char allocator[512];        /* module providing the real malloc */
} col_process_t;

extern col_process_t col_proc;

uint64_t col_now_ns(void);      /* CLOCK_MONOTONIC */

/* ---- per-thread state (col_thread.c) ---------------------------------- */

/* Counters of one (stack, size key) pair, as seen by one thread.  Frees of
 * blocks allocated on other threads land in the freeing thread's entry, so
 * every field is a per-thread partial sum; the writer adds them up. */
typedef struct col_entry {
    uint32_t stack_id;
    uint32_t peak_gen;      /* col_heap.peak_gen when peak_* were saved */
    uint64_t size;          /* size key: exact size or bucket low bound */
    uint64_t allocs, bytes, frees, bytes_freed, temporary;
    int64_t peak_blocks, peak_bytes; /* live partials at the last peak */
} col_entry_t;

#define COL_MAX_STACKS (1u << 24) /* stack ids fit the shadow value's 24 bits */
#define COL_BYID_BITS 12          /* a leaf of by_id covers 4096 stack ids */
#define COL_BYID_LEAVES (COL_MAX_STACKS >> COL_BYID_BITS)

#define COL_CHUNK_BITS 12
#define COL_CHUNK_ENTRIES (1u << COL_CHUNK_BITS)
#define COL_MAX_CHUNKS 1024 /* 4M entries per thread */

typedef struct col_byid {
    uint32_t entry; /* entry number + 1, 0 = none */
    uint32_t next;  /* stack id, 0 = none */
} col_byid_t;

typedef struct col_thread {
    /* --- owner-only hot fields --- */
    uint64_t *index;        /* open addressing: hash tag << 32 | entry number + 1 */
    uint32_t index_mask;
    uint32_t index_used;
    col_entry_t *last;      /* entry of the previous lookup */
    int64_t pending;        /* live-byte change not yet published */
    const void *last_alloc; /* for temporary allocations */
    uintptr_t stack_lo, stack_hi;
    uint32_t tick;          /* events until the next cold check */
    uint32_t memo_id;       /* stack of this thread's previous allocation */
    uint64_t memo_token;    /* the unwinder's name for those frames, 0: none */
    const void *memo_frame; /* the hook frame of that walk, and the return */
    uintptr_t memo_ra;      /* address there: a cheap first test of the memo */
    /* --- read by the writer --- */
    uint32_t nentries;      /* published with release */
    uint64_t n_allocs, n_frees, n_unknown_frees, n_lost, n_shadow_overwrites;
    uint64_t n_untracked;   /* blocks the shadow could not mark live */
    col_entry_t *chunks[COL_MAX_CHUNKS];
    /* Per stack id, in leaves mapped on first use: the entry number + 1 of
     * the stack's last used size key, and the stack this thread allocated
     * from next, last time.  Ids are handed out in the order stacks are
     * first seen, so a program repeating its pattern walks this table (and
     * its entries) in order, where the hashed indexes jump. */
    col_byid_t *by_id[COL_BYID_LEAVES];
    /* --- registry --- */
    struct col_thread *next; /* all states ever created, never unlinked */
    int in_use;              /* owned by a live thread */
    int shared;              /* the late-events state, used under a lock */
} col_thread_t;

extern _Thread_local col_thread_t *col_tls_self __attribute__((tls_model("initial-exec")));

int col_thread_init(void);                /* once, at start */
col_thread_t *col_thread_attach(void);   /* cold: state for this thread */
int col_thread_max_live(void);           /* most threads alive at once */
int col_thread_seen(void);               /* threads that ever attached */
col_thread_t *col_thread_all(void);      /* head of the registry list */
col_entry_t *col_thread_entry_slow(col_thread_t *t, uint32_t stack_id, uint64_t size);
/* The stack this thread allocated from after stack id last time (0: none),
 * and remembering it. */
uint32_t col_thread_next_guess(const col_thread_t *t, uint32_t id);
void col_thread_set_next(col_thread_t *t, uint32_t id, uint32_t next);
int col_thread_live_count(void);
void col_thread_lock_shared(void);
void col_thread_unlock_shared(void);
col_thread_t *col_thread_shared(void);
void col_thread_atfork_prepare(void);
void col_thread_atfork_parent(void);
void col_thread_atfork_child(void);

/* Entry of (stack_id, size key) in t, created if needed.  NULL if the
 * thread's table is full (the caller counts the event as lost). */
UT_INLINE col_entry_t *col_thread_entry(col_thread_t *t, uint32_t stack_id, uint64_t key)
{
    col_entry_t *e = t->last;
    if (UT_LIKELY(e && e->stack_id == stack_id && e->size == key))
        return e;
    return col_thread_entry_slow(t, stack_id, key);
}

/* Exact size up to PF_EXACT_SIZE_MAX, else the lowest size of its bucket
 * (16 buckets per power of two; the first, 8193..8703, starts above the
 * exact sizes). */
UT_INLINE uint64_t col_size_key(uint64_t size)
{
    if (UT_LIKELY(size <= PF_EXACT_SIZE_MAX))
        return size;
    unsigned top = 63u - (unsigned)__builtin_clzll(size);
    uint64_t lo = size & ~((1ull << (top - 4)) - 1);
    return lo > PF_EXACT_SIZE_MAX ? lo : PF_EXACT_SIZE_MAX + 1;
}

/* ---- global heap counter and peak (col_record.c) ---------------------- */

typedef struct col_heap {
    int64_t live UT_ALIGNED(UT_CACHE_LINE); /* published live bytes */
    int64_t peak UT_ALIGNED(UT_CACHE_LINE);
    uint32_t peak_gen;
    int64_t slack;          /* current publication slack */
    uint64_t peak_t;        /* set by the writer's sampler */
    int64_t peak_seen;      /* peak value the sampler last timed */
} col_heap_t;

extern col_heap_t col_heap;

/* frame: a frame of heapscope's own (built with frame pointers) on the
 * current stack, normally the hook's; unwinding starts at its caller. */
void col_record_alloc(void *ptr, size_t size, const void *frame);
void col_record_free(void *ptr);

/* realloc support: take the old block's record out of the shadow before
 * the real realloc, then commit (it was freed) or restore (realloc failed). */
typedef struct col_taken {
    void *ptr;
    uint32_t value;
    uint64_t size;
    int valid;
} col_taken_t;
void col_record_take(void *ptr, col_taken_t *tk);
void col_record_commit_free(col_taken_t *tk);
void col_record_restore(col_taken_t *tk);
void col_record_publish_thread(col_thread_t *t);

/* ---- unique stacks (col_stack.c) -------------------------------------- */

#define COL_STACK_LOST 1u /* pseudo-stack of allocations with no stack */

typedef struct col_stack_rec {
    uint64_t hash;
    uint16_t depth;         /* <= COL_MAX_DEPTH */
    uint16_t flags;         /* PF_STACK_* */
    uint32_t id;            /* the index finds records, records name their id */
    uintptr_t ips[];
} col_stack_rec_t;

int col_stack_init(void);
uint32_t col_stack_intern(const uintptr_t *ips, int depth, unsigned flags);
/* Is stack `id` exactly these frames?  Cheaper than interning: no hash. */
int col_stack_is(uint32_t id, const uintptr_t *ips, int depth);
uint32_t col_stack_count(void);               /* ids are 1 .. count */
const col_stack_rec_t *col_stack_get(uint32_t id);
void col_stack_atfork_prepare(void);
void col_stack_atfork_release(void);

/* ---- shadow map of live blocks (col_shadow.c) ------------------------- */

int col_shadow_init(void);

/* The map: dir[address >> (shift + COL_SHADOW_LEAF_BITS)] is a leaf of
 * 2^COL_SHADOW_LEAF_BITS values (NULL until first used). */
#define COL_SHADOW_LEAF_BITS 20
typedef struct col_shadow_map {
    uint32_t **dir;
    uint64_t dir_len;
    unsigned shift;
} col_shadow_map_t;
extern col_shadow_map_t col_shadow;
uint32_t *col_shadow_leaf_install(uint64_t d);

/* The value slot of ptr; with create, its leaf is mapped if needed.  NULL
 * when ptr is outside the map (or a leaf cannot be mapped). */
UT_INLINE uint32_t *col_shadow_slot(const void *ptr, int create)
{
    uint64_t g = (uint64_t)(uintptr_t)ptr >> col_shadow.shift;
    uint64_t d = g >> COL_SHADOW_LEAF_BITS;
    if (UT_UNLIKELY(d >= col_shadow.dir_len))
        return NULL;
    uint32_t *leaf = __atomic_load_n(&col_shadow.dir[d], __ATOMIC_ACQUIRE);
    if (UT_UNLIKELY(leaf == NULL)) {
        if (!create || (leaf = col_shadow_leaf_install(d)) == NULL)
            return NULL;
    }
    return &leaf[g & ((1u << COL_SHADOW_LEAF_BITS) - 1)];
}

/* Mark ptr live with the given value (non-zero); returns the value that
 * was there (non-zero means a free was missed). */
UT_INLINE uint32_t col_shadow_set(const void *ptr, uint32_t value)
{
    uint32_t *s = col_shadow_slot(ptr, 1);
    if (UT_UNLIKELY(s == NULL))
        return 0;
    uint32_t old = __atomic_load_n(s, __ATOMIC_RELAXED);
    __atomic_store_n(s, value, __ATOMIC_RELAXED);
    return old;
}

/* Read and clear; 0 if ptr is not a live block heapscope recorded. */
UT_INLINE uint32_t col_shadow_take(const void *ptr)
{
    uint32_t *s = col_shadow_slot(ptr, 0);
    if (UT_UNLIKELY(s == NULL))
        return 0;
    uint32_t v = __atomic_load_n(s, __ATOMIC_RELAXED);
    if (v)
        __atomic_store_n(s, 0, __ATOMIC_RELAXED);
    return v;
}
/* Exact sizes of blocks whose slack does not fit in the shadow value. */
/* 0, or -1 when the side table cannot grow (the size is not kept). */
int col_shadow_size_put(const void *ptr, uint64_t size);
uint64_t col_shadow_size_take(const void *ptr);
void col_shadow_atfork_prepare(void);
void col_shadow_atfork_release(void);

#define COL_SLACK_BITS 8
#define COL_SLACK_BIG 0xffu

/* ---- unwinding (col_unwind.c) ----------------------------------------- */

int col_unwind_init(void);
void col_unwind_modules_changed(void);  /* after dlopen/dlclose */
void col_unwind_report(void);           /* unwinder statistics as a MESSAGE */
void col_unwind_thread_exit(void);      /* free this thread's unwinder memory */
/* The unwinders behind col_unwind (col_unwind.c): the frame-pointer walk
 * with its memo, libunwind for a frame the DWARF unwinder cannot express,
 * and the general case (libunwind mode, HEAPSCOPE_UNWIND_VERIFY). */
int col_unwind_fp(col_thread_t *t, const void *frame, uintptr_t *ips, int max, unsigned *flags,
                  uint64_t expect, uint64_t *token);
int col_unwind_dwarf_fallback(uintptr_t *ips, int max, unsigned *flags, uint64_t *token);
int col_unwind_any(col_thread_t *t, const void *frame, uintptr_t *ips, int max, unsigned *flags,
                   uint64_t expect, uint64_t *token);
int col_dwarf_backtrace(const void *start, uintptr_t *ips, int max, uintptr_t skip_lo,
                        uintptr_t skip_hi, uintptr_t stack_lo, uintptr_t stack_hi, int *truncated,
                        uint64_t expect, uint64_t *token);
/* Is the stack above frame exactly the walk named token (non-zero)?  Only
 * the unwinder's memo check: no frame written, nothing walked. */
int col_unwind_fp_same(const col_thread_t *t, const void *frame, uint64_t token);
int col_dwarf_same(const void *start, uint64_t token);

UT_INLINE int col_unwind_same(const col_thread_t *t, const void *frame, uint64_t token)
{
    if (UT_UNLIKELY(col_config.verify_unwind))
        return 0; /* verification needs the walk */
    if (col_config.unwinder == PF_UNWIND_DWARF)
        return col_dwarf_same(frame, token);
    if (col_config.unwinder == PF_UNWIND_FP)
        return col_unwind_fp_same(t, frame, token);
    return 0;
}

/* Return addresses of the current stack, innermost first, without
 * heapscope's own frames, starting at the caller of `frame` (see
 * col_record_alloc).  *flags gets PF_STACK_TRUNCATED when cut.
 * *token (0: none) names the result: the same token means the same frames
 * as an earlier call on this thread; when it equals `expect`, ips was not
 * written (the caller still has those frames' stack id).  Inline, so that
 * the common modes cost one call. */
UT_INLINE int col_unwind(col_thread_t *t, const void *frame, uintptr_t *ips, int max,
                         unsigned *flags, uint64_t expect, uint64_t *token)
{
    if (UT_LIKELY(!col_config.verify_unwind)) {
        if (col_config.unwinder == PF_UNWIND_DWARF) {
            int truncated = 0;
            int n = col_dwarf_backtrace(frame, ips, max, col_proc.self_lo, col_proc.self_hi,
                                        t->stack_lo, t->stack_hi, &truncated, expect, token);
            if (UT_UNLIKELY(n < 0))
                return col_unwind_dwarf_fallback(ips, max, flags, token);
            if (truncated)
                *flags |= PF_STACK_TRUNCATED;
            return n;
        }
        if (col_config.unwinder == PF_UNWIND_FP)
            return col_unwind_fp(t, frame, ips, max, flags, expect, token);
    }
    return col_unwind_any(t, frame, ips, max, flags, expect, token);
}

/* ---- modules (col_modules.c) ------------------------------------------ */

typedef struct col_module {
    uint32_t id;
    uint64_t t_load, t_unload; /* t_unload 0 while loaded */
    uintptr_t bias, start, end;
    char *path;
    uint8_t build_id[64];
    uint32_t build_id_len;
    uint32_t epoch_load, epoch_unload;
} col_module_t;

/* Rescan the loaded modules; returns 1 if anything changed.  Caller holds
 * the writer lock. */
int col_modules_scan(void);
col_module_t *col_modules_list(size_t *count);
extern uint32_t col_modules_epoch_value;
/* Bumped by every scan that saw a module load or unload. */
UT_INLINE uint32_t col_modules_epoch(void)
{
    return __atomic_load_n(&col_modules_epoch_value, __ATOMIC_ACQUIRE);
}
void col_modules_self_range(uintptr_t *lo, uintptr_t *hi);
int col_modules_code_range(uintptr_t ip, uintptr_t *lo, uintptr_t *hi); /* lock-free */

/* ---- writer thread and profile (col_writer.c, col_flush.c) ------------ */

int col_writer_start(void);
void col_writer_lock(void);
void col_writer_unlock(void);
void col_writer_trigger(void);          /* async-signal-safe */
void col_writer_atfork_prepare(void);
void col_writer_atfork_parent(void);
void col_writer_atfork_child(void);
void col_writer_tick(void);             /* cold check from the hot path */

enum { COL_FLUSH_PERIODIC = 0, COL_FLUSH_FINAL = 1, COL_FLUSH_EXEC = 2 };
/* Write the whole profile; caller holds the writer lock. */
int col_flush(int kind);
void col_flush_intern_pending(void);    /* stacks -> call tree, before dlclose */
int col_flush_finished(void);
void col_flush_reset_child(void);

typedef struct col_sample {
    uint64_t t, heap, rss, allocs, frees;
} col_sample_t;
void col_sample_take(void);             /* caller holds the writer lock */
const col_sample_t *col_samples(size_t *count);
uint64_t col_rss_peak(void);
void col_sample_reset_child(void);

/* ---- output file (col_output.c) --------------------------------------- */

/* The profile's path, chosen on first use; NULL if none can be written. */
const char *col_output_path(void);
void col_output_reset_child(void);

/* ---- diagnostics (col_log.c) ------------------------------------------ */

void col_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void col_message_add(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *col_message_get(size_t i);
size_t col_message_count(void);

#endif
