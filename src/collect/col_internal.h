/* col_internal.h - shared state and internal API of the preload collector.
 *
 * Reading order for a newcomer: col_hooks.c (the interposed malloc family)
 * -> col_record.h / col_record.c (what one allocation or free updates) ->
 * col_unwind_fp.c, col_dwarf.c (the stack, as a node of the call tree) ->
 * col_node.c / col_site.c (the call tree; allocation sites) ->
 * col_thread.c (per-thread counters) -> col_shadow.c (live blocks) ->
 * col_writer.c / col_flush.c (the profile).
 *
 * Threading model: every program thread owns a col_thread_t and is the only
 * writer of its counters; the writer thread reads them with relaxed loads.
 * The call tree and the sites are process-wide, insert-only tables read
 * without locks (col_idtab.h).  Live blocks are found by address in a
 * shadow map.  Nothing on the allocation path takes a lock, does I/O or
 * calls malloc.
 */
#ifndef COL_INTERNAL_H
#define COL_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <pthread.h>

#include "collect/col_chk.h"
#include "collect/col_idtab.h"
#include "common/ut_compiler.h"
#include "heapscope/profile.h"

/* ---- configuration (col_config.c) ------------------------------------ */

typedef struct col_config {
    int unwinder;          /* enum pf_unwinder */
    int max_depth;         /* frames kept per stack */
    unsigned interval_ms;  /* flush period */
    unsigned sample_ms;    /* timeline sample period */
    int64_t peak_slack;    /* bytes a thread may keep unpublished (>1 thread) */
    int writer;            /* start the writer thread at once, not with the program's second (col_writer.c) */
    int hide_writer;       /* HEAPSCOPE_HIDE_WRITER: keep the writer out of glibc's count (col_glibc.c) */
    int signal;            /* signal that triggers a flush, 0 = none */
    int quiet;             /* no diagnostics on stderr */
    int disabled;          /* HEAPSCOPE_DISABLE: pass everything through */
    int verify_unwind;     /* HEAPSCOPE_UNWIND_VERIFY: check every walk and the
                              recent-stacks cache against references */
    int stats;             /* HEAPSCOPE_STATS: how allocations found their
                              stacks, as a profile message */
    char output[4096];     /* output file pattern (%p pid, %e program), absolute
                              when the start directory was known */
    int output_explicit;   /* HEAPSCOPE_OUTPUT was set */
    int root_pid;          /* HEAPSCOPE_ROOT_PID: the launcher's child */
    long fault_shadow_leaves; /* HEAPSCOPE_FAULT_SHADOW_LEAVES (tests): leaves
                                 mapped before mapping fails; -1 = never fails */
    long fault_nodes;      /* HEAPSCOPE_FAULT_NODES (tests): the call tree is
                              full at this many nodes; 0 = at COL_NODE_MAX */
    long fault_sites;      /* HEAPSCOPE_FAULT_SITES (tests): the same for the
                              sites, COL_SITE_LOST included */
    int fault_peak_cold;   /* HEAPSCOPE_FAULT_PEAK_COLD (tests): every peak
                              share is saved in the counters' peak plane, as
                              one beyond 16 bits is */
    int fault_count_maps;  /* HEAPSCOPE_FAULT_COUNT_MAPS (tests): a mapping of
                              more than one counter leaf fails, as under a
                              tight RLIMIT_AS (col_thread.c) */
    int fault_backoff;     /* HEAPSCOPE_FAULT_BACKOFF (tests): every wait for a
                              table's lock backs off, as a thread trailing
                              another through new stacks does (col_idtab.c) */
    int fault_writer_alloc; /* HEAPSCOPE_FAULT_WRITER_ALLOC (tests): the writer
                              thread calls malloc and free after each flush */
    int fault_slow_reads;  /* HEAPSCOPE_FAULT_SLOW_READS (tests): a flush waits
                              20 us between its reads of a site's counters,
                              and a heap sample between its reads of two
                              threads' counts, as one that loses the CPU
                              there does */
    int fault_slow_carry;  /* HEAPSCOPE_FAULT_SLOW_CARRY (tests): a thread whose
                              counter fills waits 20 us between the two
                              stores of its carry (col_record_carry) */
    long fault_flush_cpu;  /* HEAPSCOPE_FAULT_FLUSH_CPU_MS (tests): a periodic
                              flush spends this many ms of CPU more, as
                              that of a program of many sites and threads
                              does (col_writer.c) */
    long fault_flush_sleep; /* HEAPSCOPE_FAULT_FLUSH_SLEEP_MS (tests): ... and
                              sleeps this many ms, as one held up without
                              working does */
} col_config_t;

extern col_config_t col_config;
/* With HEAPSCOPE_FAULT_SLOW_READS: sleep 20 us (col_config.c); inline, so
 * that the flush's reads of a million counters call nothing without it. */
void col_fault_slow_read_now(void);
UT_INLINE void col_fault_slow_read(void)
{
    if (UT_UNLIKELY(col_config.fault_slow_reads))
        col_fault_slow_read_now();
}
void col_config_load(void);
/* libheapscope*.so out of environ's LD_PRELOAD while the profile is sealed,
 * and back (col_config.c) */
void col_config_preload_drop(void);
void col_config_preload_restore(void);

/* The first id a table of ids 1 .. max - 1 cannot hand out: max, or one
 * past the test knob `fault` (HEAPSCOPE_FAULT_NODES/_SITES) when lower. */
UT_INLINE uint32_t col_config_id_limit(long fault, uint32_t max)
{
    return fault > 0 && fault < (long)max ? (uint32_t)fault + 1 : max;
}

#define COL_MAX_DEPTH 256

/* ---- the collector's own memory (col_vm.c) ---------------------------- */

/* What a mapping is for, in HEAPSCOPE_STATS's count of the collector's
 * own memory (col_memstat.c). */
typedef enum col_vm_kind {
    COL_VM_OTHER,    /* the flush's buffers, module tables, samples ... */
    COL_VM_SHADOW,   /* the shadow map of live blocks */
    COL_VM_STATES,   /* thread states: recent stacks, site memos */
    COL_VM_COUNTERS, /* the threads' counters by site */
    COL_VM_TREE,     /* the call tree, the sites and their indexes */
    COL_VM_UNWIND,   /* the unwinders' memos and DWARF rule caches */
    COL_VM_KINDS
} col_vm_kind_t;

void *col_vm_map_for(col_vm_kind_t kind, size_t size); /* zeroed, MAP_NORESERVE; NULL */
void *col_vm_map(size_t size);                  /* col_vm_map_for(COL_VM_OTHER, size) */
void *col_vm_map_populated(col_vm_kind_t kind, size_t size); /* every page mapped now */
void col_vm_unmap(void *p, size_t size);        /* p may be NULL */
int col_vm_release(void *p, size_t size);       /* pages given back, read as zeros; -1: refused */
void *col_vm_grow(void *p, size_t old_size, size_t new_size); /* moved; NULL */
/* With HEAPSCOPE_STATS: calls fn for each mapping of the collector's that
 * is still mapped; returns how many mappings were not kept track of. */
unsigned col_vm_each(void (*fn)(void *p, size_t size, col_vm_kind_t kind, void *arg), void *arg);
void col_memstat_report(void); /* HEAPSCOPE_STATS, at exit (col_memstat.c) */

/* col_mainstack.c: the initial thread's stack, at most max_size of it. */
int col_main_stack_bounds(uintptr_t max_size, uintptr_t *lo, uintptr_t *hi);

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
    int (*prctl)(int, ...);
    long (*syscall)(long, ...);
    int (*unshare)(int);
    int (*setns)(int, int);
    int (*pipe2)(int *, int);
    int (*pthread_create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
} col_real_t;

extern col_real_t col_real;

/* 0 before init, 1 while initialising, 2 ready, 3 disabled */
extern volatile int col_state;
enum { COL_UNINIT = 0, COL_BOOTING = 1, COL_READY = 2, COL_OFF = 3 };

void col_boot_init(void);                       /* idempotent, any thread */
/* In a hook of a call the collector only watches: col_real.fn as the
 * collector boots (a call before its constructor, from another library's),
 * or fail the call with ENOSYS, returning `failed`, if the C library has
 * none. */
#define COL_REAL_OR_FAIL(fn, failed)                                                           \
    do {                                                                                       \
        if (!col_real.fn)                                                                      \
            col_boot_init();                                                                   \
        if (!col_real.fn) {                                                                    \
            errno = ENOSYS;                                                                    \
            return failed;                                                                     \
        }                                                                                      \
    } while (0)
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
 * that allocations it causes (libunwind's, the C library's) go straight
 * to the real allocator, unrecorded; on the writer thread while it is
 * kept out of glibc's count, to the bootstrap arena (col_hooks_cold.c). */
extern _Thread_local int col_tls_guard __attribute__((tls_model("initial-exec")));
/* Set on heapscope's writer thread (col_writer.c). */
extern _Thread_local int col_tls_writer __attribute__((tls_model("initial-exec")));

/* Process facts fixed at start (or after fork). */
typedef struct col_process {
    int pid;
    int ppid;
    unsigned flags;             /* PF_INFO_* */
    uint64_t start_mono_ns;
    uint64_t start_real_ns;
    uintptr_t self_lo, self_hi; /* libheapscope.so's own text */
    unsigned granule_shift;     /* shadow granule: 5 for glibc, 4 otherwise */
    char allocator[512];        /* module providing the real malloc */
} col_process_t;

extern col_process_t col_proc;

/* A seccomp filter is, or may be, installed: nothing may call
 * process_vm_readv; col_seccomp_read copies memory that may be unmapped
 * (col_seccomp.c). */
extern int col_seccomp;
/* The program installed a seccomp filter that would stop it at a call the
 * collector makes: the profile was written then and ends there; no system
 * call the collector can leave out is made (col_seccomp.c). */
extern int col_sealed;
/* What a seccomp filter returns for one call (col_bpf.c): its value, or -1
 * if it cannot tell; and whether that value lets the call run (or, with
 * errno_ok, fail with an errno). */
struct sock_filter;
struct seccomp_data;
int64_t col_bpf_run(const struct sock_filter *prog, unsigned len, const struct seccomp_data *d);
int col_bpf_lets(int64_t r, int errno_ok);
/* Why the filter at prog would stop the profile, or NULL (col_seccomp_calls.c) */
const char *col_seccomp_filter_stops(const void *prog, char *why, size_t len);
void col_seccomp_init(void);
int col_seccomp_read(const void *at, void *out, size_t n);

/* Is ip in heapscope's own code (a frame the unwinders skip)? */
UT_INLINE int col_is_self(uintptr_t ip)
{
    return ip >= col_proc.self_lo && ip < col_proc.self_hi;
}

uint64_t col_now_ns(void);      /* CLOCK_MONOTONIC */

/* ---- per-thread state (col_thread.c) ---------------------------------- */

/* Counters of one allocation site (col_site.c: a stack and a size key), as
 * seen by one thread.  Frees of blocks allocated on other threads land in
 * the freeing thread's counters, so every field is a per-thread partial
 * sum; the writer adds them up.  What every event touches is these 16
 * bytes (binary-trees' 65,536 sites on 16 threads: 16 MB of them, which
 * the final flush reads).  The rest lies in the same leaf, in planes of 16
 * bytes per site (col_count_bytes, _peak, _carry), touched only by the
 * sites and threads that need them.
 *
 * allocs, frees and temporary are narrow: their low COL_COUNT_BITS (or
 * COL_TEMP_BITS) bits count, the next bit is the parity of the number of
 * times they filled.  When the low bits fill, the owner clears them and
 * flips the parity in one store, and then adds one to the counter's carry
 * (col_count_carry_t), so the whole count is carry x 2^bits + low bits,
 * and a reader that sees the carry one behind the parity knows the owner
 * is between the two stores (col_count_whole; col_record.c:
 * col_record_carry). */
#ifndef COL_COUNT_BITS
#define COL_COUNT_BITS 31 /* allocs, frees: a carry every 2^31 events */
#endif
#ifndef COL_TEMP_BITS
#define COL_TEMP_BITS 15  /* temporary: a carry every 32,768 */
#endif
typedef struct col_count {
    uint32_t allocs, frees;          /* low bits and parity (above) */
    uint32_t peak_gen;               /* col_heap.peak_gen when the peak share was saved */
    uint16_t temporary;              /* low bits and parity (above) */
    int16_t peak_blocks;             /* live partial at that peak, or COL_PEAK_COLD */
} col_count_t;
_Static_assert(sizeof(col_count_t) == 16, "four sites' counters per cache line");

/* col_count_t.peak_blocks: the share is in the peak plane (the site's
 * bytes are counted, or the live partial does not fit 16 bits). */
#define COL_PEAK_COLD INT16_MIN

/* The low bits of a counter bits wide: all clear when the next one fills
 * them, and the owner carries (col_record.c: col_record_carry); and those
 * bits with the parity above them, all a counter holds. */
#define COL_COUNT_LOW(bits) ((1u << (bits)) - 1)
#define COL_COUNT_HELD(bits) ((uint32_t)((2ull << (bits)) - 1))

/* The planes of a leaf after its hot parts, 16 bytes per site each. */
typedef struct col_count_bytes {
    uint64_t bytes, bytes_freed;     /* counted sites only (col_site_counts_bytes) */
} col_count_bytes_t;
typedef struct col_count_peak {
    int64_t blocks, bytes;           /* live partials at the last peak (COL_PEAK_COLD) */
} col_count_peak_t;
typedef struct col_count_carry {
    uint32_t allocs, frees, temporary; /* how many times each filled */
    uint32_t unused;
} col_count_carry_t;
_Static_assert(sizeof(col_count_bytes_t) == 16 && sizeof(col_count_peak_t) == 16 &&
                   sizeof(col_count_carry_t) == 16,
               "the planes are indexed as the hot parts are");

/* The whole count of a counter whose low bits and parity are h (bits
 * wide) and whose carry is n.  The owner's own n is whole; another thread
 * may read the carry one behind the parity, while the owner is between
 * its two stores, and then counts that carry in. */
UT_INLINE uint64_t col_count_whole(uint32_t n, uint32_t h, unsigned bits)
{
    if ((n & 1) != ((h >> bits) & 1))
        n++;
    return ((uint64_t)n << bits) + (h & COL_COUNT_LOW(bits));
}

#define COL_NODE_MAX (1u << 26)       /* call-tree nodes (col_node.c) */

#define COL_SITE_MAX (1u << 24)       /* site ids fit the shadow value's 24 bits */
#define COL_COUNT_LEAF_BITS 10        /* a leaf holds the counters of 1024 sites */
#define COL_COUNT_LEAF (1u << COL_COUNT_LEAF_BITS)
#define COL_COUNT_LEAVES (COL_SITE_MAX >> COL_COUNT_LEAF_BITS)

/* A leaf: COL_COUNT_LEAF hot parts, then a plane of as many bytes
 * counters, one of peak shares and one of carries; e's entry in each lies
 * COL_COUNT_LEAF entries after its entry in the one before. */
#define COL_COUNT_PLANES 4
UT_INLINE col_count_bytes_t *col_count_bytes(col_count_t *e)
{
    return (col_count_bytes_t *)(e + COL_COUNT_LEAF);
}
UT_INLINE col_count_peak_t *col_count_peak(col_count_t *e)
{
    return (col_count_peak_t *)(e + 2 * COL_COUNT_LEAF);
}
UT_INLINE col_count_carry_t *col_count_carry(col_count_t *e)
{
    return (col_count_carry_t *)(e + 3 * COL_COUNT_LEAF);
}

/* A stack this thread allocated from lately, found again by the hook's
 * frame and return address: its node, the size key and site of its last
 * allocation with the thread's counters of that site, and the checks of
 * every stack word its walk read (col_chk.h; but for a thread's entry
 * frame's, col_unwind_cache).
 * The same frame and return address with every check holding is the same
 * stack, with no walk.  Filled the second time a walk from the same frame
 * and return address finds the same stack, when its checks fit: up to
 * COL_SC_CHKS in the entry, up to COL_SC_DEEP in the entry's own chunk of
 * the thread's pool of deep checks (a stack of 20-60 frames, common in
 * C++ and in interpreters, would otherwise be walked at every
 * allocation).  The chunk stays the entry's (way's) for the stacks it
 * keeps later; one that needs more gets a new chunk, of the next multiple
 * of 16 checks, and the old one is left (col_thread_deep).
 * Eight ways per set: one function called at the same depth from many
 * callers has one frame and return address and as many stacks.  With two
 * ways, three hot stacks whose frames and return addresses fall in one
 * set evicted each other at every allocation (wl-deep, in some address
 * layouts: 958 -> 859 instructions per allocation and free in fp mode
 * with four ways); with four, sqlite3's ~22 hot stacks, all from
 * sqlite3MemMalloc's one call to malloc, walked 0.6 k to 1.8 M of its
 * 3.3 M allocations as the address layout fell (with eight ways and the
 * sets' ghosts, col_record.c: ~560 in every layout tried). */
#define COL_SC_SET_BITS 5
#define COL_SC_SETS (1u << COL_SC_SET_BITS)
#define COL_SC_WAYS 8
#define COL_SC_SET_SHIFT 13 /* log2 of a set's bytes */
#define COL_SC_CHKS 20 /* the hook frame's and pairs: up to 19 (col_chk_pad_pairs) */
#define COL_SC_DEEP 129 /* a walk of max_depth 64 frames makes 65-129 (col_chk_padded) */
#define COL_SC_POOL (COL_SC_SETS * COL_SC_WAYS * 96) /* deep checks per thread */
#define COL_SC_GHOSTS 8 /* stacks a set remembers it saw once or evicted */
typedef struct col_sc_entry {
    const void *frame;  /* NULL: empty */
    uintptr_t ra;
    uint32_t node;
    uint32_t epoch;     /* col_modules_epoch() of the walk */
    uint32_t site;      /* of (node, key) */
    uint16_t deep_off, deep_cap; /* its chunk of sc_pool, in checks (cap 0: none) */
    uint64_t key;       /* UINT64_MAX: none */
    col_count_t *cnt;   /* the owner's counters of site */
    const col_chk_t *chk_at, *chk_end; /* its checks: in chk, or its deep chunk */
    col_chk_t chk[COL_SC_CHKS];
} col_sc_entry_t;
_Static_assert(COL_SC_POOL <= UINT16_MAX && COL_SC_DEEP <= UINT16_MAX,
               "a deep chunk's offset and size fit col_sc_entry_t's 16 bits");

/* Are a kept entry's checks in the entry itself (col_unwind_cache puts
 * them at its chk when they fit), not in its deep chunk? */
UT_INLINE int col_sc_checks_inline(const col_sc_entry_t *e)
{
    return e->chk_at == e->chk;
}

/* A set is 8 KB (eight 1 KB entries), found with a shift (a size that is
 * not a power of two costs 5 more instructions per allocation).  The
 * price: the entries' first lines fall in 4 of the 64 sets of a 32 KB
 * 8-way L1, two entries each, so the first lines of way 0, the fast
 * path's, share 8 lines of L1 with those of way 4 (16 with 2 KB sets of
 * two ways): a program rotating through more than ~8 hot stacks of different
 * sets reads some of them from L2; still cheaper than a walk.  256
 * entries (256 KB of address space, whose pages only the ways a thread
 * uses touch: ways 4-7 of a set are its second page): a program with many
 * allocating call sites, such as an interpreter, evicted its stacks from
 * 32 (python3 running a JSON script, 985k allocations: 385k DWARF walks
 * and 1,804M instructions with 16 sets of 2, 239k and 1,584M with 64
 * sets of 2). */
typedef struct col_sc_set {
    col_sc_entry_t way[COL_SC_WAYS];
} UT_ALIGNED(64) col_sc_set_t;
_Static_assert(sizeof(col_sc_set_t) == 1u << COL_SC_SET_SHIFT, "a set's size is a power of two (col_sc_set)");
_Static_assert(COL_SC_SET_BITS + COL_SC_SET_SHIFT <= 64, "col_sc_set's offset fits the hash");
_Static_assert(COL_SC_SETS <= 32, "col_thread_t.sc_touched has a bit per set");
_Static_assert(COL_SC_WAYS <= 8, "col_thread_t.sc_used has a bit per way");

/* The set of sc (a thread's cache) for frame and ra: the top bits of a
 * multiplicative hash, taken as the set's byte offset (a shift and a
 * mask; an index would be scaled again, and the offset is kept).  The
 * frame counts from the top of the thread's stack, stack_hi, so that
 * threads running the same code use the same sets, whatever stack each
 * got: a state's next owner (col_thread_attach) writes the pages the last
 * one did, already its own, where other sets would be read first, mapped
 * to the zero page, and then written (a fault and a TLB flush on every
 * CPU each). */
UT_INLINE col_sc_set_t *col_sc_set(col_sc_set_t *sc, uintptr_t stack_hi, const void *frame,
                                   uintptr_t ra)
{
    uint64_t h = (((uintptr_t)frame - stack_hi) ^ ra) * 0x9e3779b97f4a7c15ull;
    size_t off = (size_t)(h >> (64 - COL_SC_SET_BITS - COL_SC_SET_SHIFT)) &
                 ((size_t)(COL_SC_SETS - 1) << COL_SC_SET_SHIFT);
    return (col_sc_set_t *)((char *)sc + off);
}

/* The site of a (stack, size key) this thread allocated from lately, so
 * that a stack allocating many sizes (a cached stack's entry keeps one)
 * finds their sites without the shared site index (col_record.c).
 * Direct-mapped; site 0: empty.  Sites are never removed, so an entry
 * stays true.  16 bytes: the thread's counters of the site are found from
 * the site (col_thread_count_mapped, a load and an add more than keeping
 * a pointer), so that a stack of many sizes (larson's ~500, shbench's
 * 1,000) touches 16 KB of memo per thread rather than 32. */
#define COL_SITE_MEMO_BITS 10
#define COL_SITE_MEMO (1u << COL_SITE_MEMO_BITS)
typedef struct col_site_memo {
    uint64_t key;
    uint32_t node;
    uint32_t site;
} col_site_memo_t;
_Static_assert(sizeof(col_site_memo_t) == 16, "four memo entries per cache line");

/* Does e hold the stack above frame, whose return address is ra?  Only an
 * entry col_unwind_cache filled has an epoch (col_modules_epoch() starts
 * at 1), so only its checks are read: the hook frame's first, whose
 * return address is ra, and an even number of at least two after it
 * (col_chk_hold_framed).  Their end is kept, not their count: the count
 * made the hook scale it into an address at every allocation. */
UT_INLINE int col_sc_hit(const col_sc_entry_t *e, const void *frame, uintptr_t ra, uint32_t epoch)
{
    return e->frame == frame && e->ra == ra && e->epoch == epoch &&
           col_chk_hold_framed(frame, e->chk_at, e->chk_end);
}

typedef struct col_thread {
    /* --- owner-only hot fields --- */
    int64_t pending;        /* live-byte change not yet published */
    const void *last_alloc; /* for temporary allocations */
    uintptr_t stack_lo, stack_hi;
    uint32_t memo_node;     /* stack of this thread's previous allocation */
    /* --- read by the writer --- */
    uint32_t cnt_leaves;    /* leaves [0, cnt_leaves) may be mapped; release */
    uint32_t carried;       /* a counter of this state has filled (col_record_carry); release */
    uint64_t n_allocs, n_frees, n_unknown_frees, n_lost, n_shadow_overwrites;
    uint64_t n_untracked;   /* blocks the shadow could not mark live */
    uint64_t n_sc_ways;     /* allocations whose stack was in ways 1-7 of its set */
    uint64_t n_walks;       /* allocations whose stack was walked (col_record_walk) */
    /* --- registry --- */
    struct col_thread *next; /* all states ever created, never unlinked */
    int in_use;              /* owned by a live thread */
    int shared;              /* the late-events state, used under a lock */
    /* The unwinders' memory of the state's last owner, emptied of its
     * walks, for the next (col_unwind_thread_exit, _attach). */
    void *unwind_fp, *unwind_cfi;
    /* Owner only: counter leaves mapped and not yet used
     * (col_thread_count_slow), and how many leaves its mappings hold. */
    char *leaf_spare;
    uint32_t leaf_spare_n, leaf_mapped;
    /* Owner only: the cache of recent stacks' bookkeeping (sc below),
     * here on the first page, which every thread writes, rather than
     * after the sets, where it took a page of its own (the pool's first,
     * which most threads never use). */
    uint32_t sc_pool_used;   /* deep checks handed out of sc_pool */
    uint32_t sc_touched;     /* the sets with a way filled, a bit each (col_thread_attach) */
    uint32_t sc_victim;      /* fills that evicted a kept stack (sc_free_way) */
    uint8_t sc_hits[COL_SC_SETS][COL_SC_WAYS]; /* hits in ways 1-7 (sc_promote) */
    uint8_t sc_used[COL_SC_SETS];     /* the ways in use, a bit each (sc_used) */
    uint8_t sc_ghost_at[COL_SC_SETS]; /* the next of its ghosts to replace */
    uint32_t sc_ghost[COL_SC_SETS][COL_SC_GHOSTS]; /* stacks seen once or evicted (sc_ghost_put) */
    /* The rest (~1.5 MB: the cache's sets 256 KB, the pool of deep checks
     * 1.1 MB) is mapped zero and touched a page at a time, as used.
     * Counters by site id, in leaves taken on first use from the state's
     * spare ones above (release). */
    col_count_t *cnt[COL_COUNT_LEAVES];
    /* Owner only: the stacks it allocated from lately, and the checks of
     * those too deep for their entry, in chunks handed out from the start
     * of sc_pool (sc_pool_used checks so far; col_thread_deep), so that
     * the pages touched are about the checks kept. */
    /* (not page-aligned: way 0's first line, the fast path's, would share
     * an L1 set with the first line of every other page-aligned table,
     * this state's header among them: wl-list -t 1 +9% CPU) */
    col_sc_set_t sc[COL_SC_SETS];
    col_chk_t sc_pool[COL_SC_POOL];
    /* Owner only: pages touched only by stacks that allocate several
     * sizes (aligned: a memo in use is 4 pages, not 5). */
    col_site_memo_t site_memo[COL_SITE_MEMO] UT_ALIGNED(4096);
} col_thread_t;

extern _Thread_local col_thread_t *col_tls_self __attribute__((tls_model("initial-exec")));
/* Set when this thread's key destructor ran (col_thread.c): its state,
 * with the unwinders' memory, is given back for the next thread, and
 * neither is made again for this one. */
extern _Thread_local int col_tls_dead __attribute__((tls_model("initial-exec")));
/* The attached state's stack_hi, for col_sc_set: a load of its own, where
 * t->stack_hi would wait for t (col_tls_fast) and delay every lookup of
 * the recent-stacks cache by a load's latency (+6% CPU on wl-list -t 1 in
 * dwarf mode). */
extern _Thread_local uintptr_t col_tls_stack_hi __attribute__((tls_model("initial-exec")));

/* The calling thread's state when its next allocation may take the fast
 * path: set while the thread is attached and not inside heapscope, NULL
 * otherwise (the hooks test only this).  A fast-path recording clears it
 * for its own duration, so that a signal handler's malloc passes through;
 * other code of heapscope brackets itself with col_guard_enter/leave. */
extern _Thread_local col_thread_t *col_tls_fast __attribute__((tls_model("initial-exec")));

/* Inside heapscope: a guarded region, or a fast-path recording. */
UT_INLINE int col_inside(void)
{
    return col_tls_guard != 0 || (col_tls_self != NULL && col_tls_fast == NULL);
}

/* Enter a guarded region; returns what col_guard_leave needs: whether the
 * region is outermost and outside any recording, so that leaving it
 * re-enables the fast path (for the thread's state, maybe just attached). */
UT_INLINE int col_guard_enter(void)
{
    int top = col_tls_guard == 0 && (col_tls_fast != NULL || col_tls_self == NULL);
    col_tls_fast = NULL;
    col_tls_guard++;
    return top;
}

UT_INLINE void col_guard_leave(int top)
{
    col_tls_guard--;
    if (top)
        col_tls_fast = col_tls_self;
}

int col_thread_init(void);                /* once, at start */
col_thread_t *col_thread_attach(void);   /* cold: state for this thread */
int col_thread_max_live(void);           /* most threads alive at once */
int col_thread_seen(void);               /* threads that ever attached */
col_thread_t *col_thread_all(void);      /* head of the registry list */
col_count_t *col_thread_count_slow(col_thread_t *t, uint32_t site);
/* Room for n deep checks (COL_SC_CHKS < n <= COL_SC_DEEP) of entry e of
 * t's cache: e's chunk of t's pool, grown if too small (owner only). */
col_chk_t *col_thread_deep(col_thread_t *t, col_sc_entry_t *e, uint32_t n);
int col_thread_live_count(void);
void col_thread_lock_shared(void);
void col_thread_unlock_shared(void);
col_thread_t *col_thread_shared(void);
void col_thread_atfork_prepare(void);
void col_thread_atfork_parent(void);
void col_thread_atfork_child(void);

/* t's counters of a site if their leaf is mapped, else NULL; no call. */
UT_INLINE col_count_t *col_thread_count_mapped(col_thread_t *t, uint32_t site)
{
    col_count_t *leaf = t->cnt[site >> COL_COUNT_LEAF_BITS];
    if (UT_UNLIKELY(leaf == NULL))
        return NULL;
    col_count_t *e = &leaf[site & (COL_COUNT_LEAF - 1)];
    UT_WRITE_FIRST(e->peak_blocks); /* the counters are read, then written */
    return e;
}

/* t's counters of a site, their leaf mapped if needed; NULL without memory
 * (the caller does not count the block). */
UT_INLINE col_count_t *col_thread_count(col_thread_t *t, uint32_t site)
{
    col_count_t *e = col_thread_count_mapped(t, site);
    return UT_LIKELY(e != NULL) ? e : col_thread_count_slow(t, site);
}

/* The width of the size bucket holding size (above PF_EXACT_SIZE_MAX):
 * 16 buckets per power of two. */
UT_INLINE uint64_t col_size_step(uint64_t size)
{
    return 1ull << (63u - (unsigned)__builtin_clzll(size) - 4);
}

/* Exact size up to PF_EXACT_SIZE_MAX, else the lowest size of its bucket
 * (the first, 8193..8703, starts above the exact sizes). */
UT_INLINE uint64_t col_size_key(uint64_t size)
{
    if (UT_LIKELY(size <= PF_EXACT_SIZE_MAX))
        return size;
    uint64_t lo = size & ~(col_size_step(size) - 1);
    return lo > PF_EXACT_SIZE_MAX ? lo : PF_EXACT_SIZE_MAX + 1;
}

/* The highest size with size key key. */
UT_INLINE uint64_t col_size_key_hi(uint64_t key)
{
    if (key <= PF_EXACT_SIZE_MAX)
        return key;
    uint64_t step = col_size_step(key);
    return (key & ~(step - 1)) + step - 1;
}

/* ---- global heap counter and peak (col_record.c) ---------------------- */

/* The peak's shares are saved by generation (docs/FORMAT.md, "Peak"): a
 * new peak only marks itself open, and the generation changes when the
 * heap leaves it (col_peak_leaving) or a flush reads the counters, so that
 * a heap that keeps growing does not make every thread save every site's
 * counters at each of its many new peaks. */
typedef struct col_heap {
    int64_t live UT_ALIGNED(UT_CACHE_LINE); /* published live bytes */
    int64_t peak UT_ALIGNED(UT_CACHE_LINE); /* the highest published */
    uint64_t peak_t;        /* set by the writer's sampler */
    int64_t peak_seen;      /* peak value the sampler last timed */
    /* read by every hook, on a line that a new peak does not write */
    uint32_t peak_gen UT_ALIGNED(UT_CACHE_LINE);
    uint32_t peak_open;     /* a peak was published since peak_gen changed */
    int64_t slack;          /* current publication slack */
} col_heap_t;

extern col_heap_t col_heap;

/* glibc's __libc_single_threaded, or a constant 0 where it has none
 * (col_writer.c). */
extern const char *col_single_threaded;

/* ---- col_glibc.c: glibc's view of the process's threads ---- */
extern int col_glibc_tcb;     /* glibc 2.36, x86_64: the thread flag below is checked */
extern int col_writer_hidden; /* the writer thread is kept out of it (col_glibc.c) */
extern int col_program_threaded; /* the program called pthread_create (col_hooks_proc.c) */
extern unsigned long col_writer_boot_allocs; /* calls of the malloc family by the hidden writer */
void col_glibc_init(void);
/* Before and after the writer's pthread_create: keep the writer out of
 * the starting thread's flag if glibc counts that thread alone. */
int col_glibc_hide_prepare(void);
void col_glibc_hide_commit(int prepared, int created);

/* The calling thread's multiple_threads field of glibc's thread control
 * block (only where col_glibc_tcb says it is there). */
UT_INLINE unsigned col_glibc_field(void)
{
#if defined(__x86_64__)
    unsigned v;
    __asm__ volatile("movl %%fs:0x18, %0" : "=r"(v));
    return v;
#else
    return 1;
#endif
}

/* Is this thread the program's only one?  Then nothing but this thread
 * and its signal handlers runs the program's code: the writer thread, if
 * it is there, does not publish heap bytes.  glibc 2.36 sets the creating
 * thread's field only once the new thread runs; the pthread_create hook
 * says so before (col_hooks_proc.c).  glibc's global flag would say so
 * in time too, but heapscope's writer has cleared it already. */
UT_INLINE int col_glibc_alone(void)
{
    if (col_glibc_tcb)
        return col_glibc_field() == 0 && !__atomic_load_n(&col_program_threaded, __ATOMIC_RELAXED);
    return *col_single_threaded;
}

/* Adds d to the published live bytes; returns the new value.  While the
 * program has a single thread (col_glibc_alone), nothing but this thread
 * and its signal handlers writes the counter, and one add without the
 * lock prefix is enough: an interrupt comes between instructions, not
 * inside one.  That keeps a lone thread's exact publication at every
 * event off the ~20 cycles of a locked instruction. */
UT_INLINE int64_t col_heap_add(int64_t d)
{
#if defined(__x86_64__)
    if (col_glibc_alone()) {
        __asm__ volatile("addq %1, %0" : "+m"(col_heap.live) : "er"(d));
        return __atomic_load_n(&col_heap.live, __ATOMIC_RELAXED);
    }
#endif
    return __atomic_add_fetch(&col_heap.live, d, __ATOMIC_RELAXED);
}

/* frame: a frame of heapscope's own (built with frame pointers) on the
 * current stack, normally the hook's; unwinding starts at its caller. */
void col_record_alloc(void *ptr, size_t size, const void *frame);
int col_record_free(void *ptr); /* 0: not for the real free (a bootstrap block) */

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
void col_record_peak_close(void); /* a new generation if a peak is open (col_heap_t) */

/* ---- the call tree (col_node.c) and allocation sites (col_site.c) ---- */

/* 16 bytes: found with a shift.  The modules epoch a node was made in is
 * kept by runs of ids (col_node_epoch), not in each record. */
typedef struct col_node {
    uintptr_t ip;       /* return address */
    uint32_t parent;    /* caller's node, 0 at the root */
    uint16_t depth;     /* frames from the root (or the cut) to here */
    uint16_t flags;     /* COL_NODE_F_* */
} col_node_t;
_Static_assert(sizeof(col_node_t) == 16, "a node record is 16 bytes");

#define COL_NODE_NONE 0xffffffffu  /* no node: the table is full */
#define COL_NODE_TRUNC 0x80000000u /* pseudo-parent of a cut stack's outermost frame */
#define COL_NODE_F_TRUNC 1u        /* the depth cap cut this stack */

extern col_node_t *col_nodes;      /* by id; records never change once made */
extern col_idtab_t col_node_tab;   /* (ip, parent) -> id */

/* The index key of node id: (ip, parent), the parent of a cut stack's
 * outermost frame being COL_NODE_TRUNC (its record says 0 and the flag). */
UT_INLINE void col_node_key(uint32_t id, uint64_t *ip, uint32_t *parent)
{
    const col_node_t *n = &col_nodes[id];
    *ip = n->ip;
    *parent = n->parent || !(n->flags & COL_NODE_F_TRUNC) ? n->parent : COL_NODE_TRUNC;
}

int col_node_init(void);
uint32_t col_node_count(void);     /* ids are 1 .. count */
/* col_modules_epoch() when node id (1 .. count) was made; UINT32_MAX if
 * not kept (more epochs with new nodes than the runs table holds). */
uint32_t col_node_epoch(uint32_t id);
uint32_t col_node_add(uint32_t parent, uintptr_t ip, uint32_t since);

/* Each node's children, and its sites, up to COL_NODE_CHAIN of each: a
 * list by node id, from the node's first child (first site) through each
 * child's next sibling (each site's next, col_site_t), every link written
 * once, with release, under its table's lock (sites under col_site_tab's).
 * These are in no index: they are found with a few loads of records made
 * about when the node was, and only a node's later children and sites go
 * in the indexes.  Most nodes have a few children and a few sizes, so the
 * first time a stack is seen costs no random probe for most of its new
 * nodes, and the indexes stay small.  A list that ends before
 * COL_NODE_CHAIN entries is the whole set: a lookup that does not find
 * its key there goes straight to the insert.  Not for COL_NODE_TRUNC's
 * children, nor node 0's sites (COL_SITE_LOST is (node 0, key 0) in the
 * index). */
#define COL_NODE_CHAIN 4
typedef struct col_node_links {
    uint32_t child; /* first child; 0: none yet */
    uint32_t next;  /* next child of this node's parent; 0: none yet */
    uint32_t site;  /* first site; 0: none yet */
} col_node_links_t;
extern col_node_links_t *col_node_links; /* by id; its pages written as ids are made */

/* Where record id's link to the next record of its list is. */
typedef uint32_t *col_list_next_fn(uint32_t id);

/* The record of key (k1, k2) in the list from *head (key_of gives a
 * record's key, next_of its link), or 0.  *tail gets the last record read
 * and *len how many were read: a miss in a list of COL_NODE_CHAIN goes on
 * in the index, a miss in a shorter one is a miss.  Acquire loads, so a
 * lookup without the lock sees the records the links name; the writer's
 * walk under the lock is the same. */
UT_INLINE uint32_t col_list_find(uint32_t *head, uint64_t k1, uint32_t k2,
                                 col_idtab_key_fn *key_of, col_list_next_fn *next_of,
                                 uint32_t *tail, int *len)
{
    uint32_t id = __atomic_load_n(head, __ATOMIC_ACQUIRE), last = 0;
    int n = 0;
    for (; id != 0 && n < COL_NODE_CHAIN; id = __atomic_load_n(next_of(id), __ATOMIC_ACQUIRE)) {
        uint64_t a;
        uint32_t b;
        key_of(id, &a, &b);
        if (a == k1 && b == k2)
            break;
        last = id;
        n++;
    }
    *tail = last;
    *len = n;
    return n < COL_NODE_CHAIN ? id : 0;
}

/* The id of key (k1, k2) in table x, whose owner's first COL_NODE_CHAIN
 * keys are in the list from *head (NULL: all of the owner's keys are in
 * the index), without the lock; 0 if absent.  *since gets the index's
 * version, read before the list: the writer's col_listed_find_locked
 * needs it (a key put in the index after the list was full moves it). */
UT_INLINE uint32_t col_listed_find(const col_idtab_t *x, uint32_t *head, uint64_t k1, uint32_t k2,
                                   col_idtab_key_fn *key_of, col_list_next_fn *next_of,
                                   uint32_t *since)
{
    *since = col_idtab_version(x);
    if (UT_LIKELY(head != NULL)) {
        uint32_t tail;
        int len;
        uint32_t id = col_list_find(head, k1, k2, key_of, next_of, &tail, &len);
        if (id != 0 || len < COL_NODE_CHAIN)
            return id;
    }
    return col_idtab_find(x, k1, k2, key_of);
}

/* For a writer whose col_listed_find missed: x's lock taken, and 0; or,
 * when another thread held it, the id of the key if the holder made it,
 * looked up again (*since updated) without the lock once it was free or
 * the writer had backed off (col_idtab_lock_or_wait), and the lock not
 * taken. */
UT_INLINE uint32_t col_listed_lock(col_idtab_t *x, uint32_t *head, uint64_t k1, uint32_t k2,
                                   col_idtab_key_fn *key_of, col_list_next_fn *next_of,
                                   uint32_t *since)
{
    uint32_t id;
    while (!col_idtab_lock_or_wait(x))
        if ((id = col_listed_find(x, head, k1, k2, key_of, next_of, since)) != 0)
            return id;
    return 0;
}

/* Where a key that is not in its table goes: after tail in the owner's
 * list at *head (0: the list is empty), or, with in_index, the index. */
typedef struct col_listed_at {
    uint32_t *head;
    uint32_t tail;
    int in_index;
} col_listed_at_t;

/* Under x's lock, for a writer whose col_listed_find missed after reading
 * the version `since`: the id another thread put meanwhile, else 0, and
 * *at tells where the new key goes (the index needs
 * col_idtab_reserve_locked first). */
UT_INLINE uint32_t col_listed_find_locked(col_idtab_t *x, uint32_t *head, uint64_t k1, uint32_t k2,
                                          col_idtab_key_fn *key_of, col_list_next_fn *next_of,
                                          uint32_t since, col_listed_at_t *at)
{
    uint32_t id = 0;
    *at = (col_listed_at_t){head, 0, 1};
    if (head != NULL) {
        int len;
        id = col_list_find(head, k1, k2, key_of, next_of, &at->tail, &len);
        at->in_index = len == COL_NODE_CHAIN;
    }
    if (id == 0 && at->in_index)
        id = col_idtab_find_locked(x, k1, k2, since);
    return id;
}

/* Under x's lock, for a key going where *at says: the id its record gets
 * (the owner's last + 1), below `limit`, with room reserved in the index
 * if it goes there; 0 if there is none. */
UT_INLINE uint32_t col_listed_new_id_locked(col_idtab_t *x, const col_listed_at_t *at,
                                            uint32_t limit)
{
    uint32_t id = x->last + 1;
    if (id >= limit || (at->in_index && col_idtab_reserve_locked(x) != 0))
        return 0;
    return id;
}

/* Under x's lock: record id (col_listed_new_id_locked), made for key (k1,
 * k2), is out: the owner's last id and then the key go where *at says;
 * both published with release, as col_idtab_put_locked's slot. */
UT_INLINE void col_listed_put_locked(col_idtab_t *x, const col_listed_at_t *at, uint64_t k1,
                                     uint32_t k2, col_list_next_fn *next_of, uint32_t id)
{
    __atomic_store_n(&x->last, id, __ATOMIC_RELEASE);
    if (at->in_index)
        col_idtab_put_locked(x, k1, k2, id);
    else
        __atomic_store_n(at->tail ? next_of(at->tail) : at->head, id, __ATOMIC_RELEASE);
}

UT_INLINE uint32_t *col_node_next_child(uint32_t id)
{
    return &col_node_links[id].next;
}

/* The node of return address ip under parent (0: the root; COL_NODE_TRUNC:
 * the outermost frame of a cut stack), made if new.  COL_NODE_NONE if the
 * table is full, and for every child of COL_NODE_NONE.  COL_NODE_TRUNC's
 * children are all in the index. */
UT_INLINE uint32_t col_node_child(uint32_t parent, uintptr_t ip)
{
    if (UT_UNLIKELY(parent == COL_NODE_NONE))
        return COL_NODE_NONE;
    uint32_t since;
    uint32_t *head = UT_LIKELY(parent != COL_NODE_TRUNC) ? &col_node_links[parent].child : NULL;
    uint32_t id = col_listed_find(&col_node_tab, head, ip, parent, col_node_key,
                                  col_node_next_child, &since);
    return UT_LIKELY(id != 0) ? id : col_node_add(parent, ip, since);
}

/* The nodes of frames ips[0..n) (innermost first) on top of node base (0,
 * COL_NODE_TRUNC or a node): out[j] is the node of the stack from frame j
 * out.  guess (0: none) is the stack the caller expects, out[0]; when it
 * is right, its records are read instead of looking the frames up, so a
 * repeating sequence of stacks reads the tree in the order it was made
 * rather than probing the index at random. */
void col_node_stack(uint32_t base, const uintptr_t *ips, int n, uint32_t guess, uint32_t *out);
/* What was allocated from after the stack of node n, the last time (by
 * any thread), in one word (col_record.c packs it): the next stack's
 * node, its site and, for a size key up to PF_EXACT_SIZE_MAX, that key;
 * 0 if nothing yet.  A program that repeats a sequence of stacks new to
 * the unwinder's memo (recursion) finds them in this order instead of
 * probing the indexes, and knows the site without reading its record. */
extern uint64_t *col_node_next; /* by node id; its pages written as ids are made */

/* The node of the stack ips[0..n) (innermost first); 0 for no frames. */
uint32_t col_node_path(const uintptr_t *ips, int n, int truncated);
/* The return addresses of node's stack, innermost first (at most max);
 * *flags gets PF_STACK_TRUNCATED for a cut stack. */
int col_node_ips(uint32_t node, uintptr_t *ips, int max, unsigned *flags);
void col_node_atfork_prepare(void);
void col_node_atfork_parent(void);
void col_node_atfork_child(void);

typedef struct col_site {
    uint64_t key;  /* size key (col_size_key) */
    uint32_t node; /* stack */
    uint32_t next; /* the node's next site in its list (col_node_links),
                    * 0: none yet; the one field set after the record is out */
} col_site_t;

/* Pseudo-site of the blocks no site could be made for (the sites table is
 * full): stack node 0, no frames.  Its size key (0) says nothing of their
 * sizes, so its bytes are counted, as above PF_EXACT_SIZE_MAX. */
#define COL_SITE_LOST 1u

extern col_site_t *col_sites;      /* by id; never change once made, but for next */
extern col_idtab_t col_site_tab;   /* (key, node) -> id */

/* The index key of site id: (size key, node). */
UT_INLINE void col_site_key(uint32_t id, uint64_t *key, uint32_t *node)
{
    *key = col_sites[id].key;
    *node = col_sites[id].node;
}
int col_site_init(void);
uint32_t col_site_count(void);     /* ids are 1 .. count */
uint32_t col_site_add(uint32_t node, uint64_t key, uint32_t since);

UT_INLINE uint32_t *col_site_next(uint32_t id)
{
    return &col_sites[id].next;
}

/* Are node's sites listed in col_node_links (else all in the index)? */
UT_INLINE int col_site_listed(uint32_t node)
{
    return node != 0 && node < COL_NODE_MAX;
}

/* The site of (node, key), made if new; 0 if the table is full.  The
 * node's list first (col_node_links), as col_node_child does. */
UT_INLINE uint32_t col_site_get(uint32_t node, uint64_t key)
{
    uint32_t since;
    uint32_t *head = UT_LIKELY(col_site_listed(node)) ? &col_node_links[node].site : NULL;
    uint32_t id = col_listed_find(&col_site_tab, head, key, node, col_site_key, col_site_next,
                                  &since);
    return UT_LIKELY(id != 0) ? id : col_site_add(node, key, since);
}
/* Are the bytes of a block of `size` from `site` counted (the counters'
 * bytes plane), rather than known from the site's size key? */
UT_INLINE int col_site_counts_bytes(uint32_t site, uint64_t size)
{
    return size > PF_EXACT_SIZE_MAX || site == COL_SITE_LOST;
}
void col_site_atfork_prepare(void);
void col_site_atfork_parent(void);
void col_site_atfork_child(void);

/* ---- shadow map of live blocks (col_shadow.c) ------------------------- */

int col_shadow_init(void);

/* The map: dir[address >> (shift + COL_SHADOW_LEAF_GRANULE_BITS)] is a
 * leaf of 2^COL_SHADOW_LEAF_BITS values (NULL until first used), followed
 * by a byte per page of the leaf, set once the page was written.  A leaf
 * covers 2^COL_SHADOW_LEAF_GRANULE_BITS granules: a granule's value is in
 * its first half, except that of a block 8 bytes into a 16-byte granule
 * (allocators other than glibc place 8-byte blocks 8 bytes apart), which
 * is in its second half.  Those blocks are few and lie together, so the
 * second half's pages are mapped only where they are: the map costs 4
 * bytes per granule of heap, not per 8 bytes.  A page never written holds
 * zeros, so a store into it needs no read of the old value: reading it
 * first would map the kernel's zero page, and the write after it would
 * replace that page and flush the other CPUs' TLBs (an interrupt to each
 * CPU running a thread of the program, on every new page of the map). */
#define COL_SHADOW_LEAF_BITS 20
#define COL_SHADOW_LEAF_GRANULE_BITS 19
#define COL_SHADOW_GLIBC_SHIFT 5 /* glibc's 32-byte granule (col_boot.c) */
#define COL_SHADOW_PAGE_BITS 10 /* 1024 values in a 4 KiB page */
#define COL_SHADOW_LEAF_BYTES ((sizeof(uint32_t) << COL_SHADOW_LEAF_BITS) + 4096)
typedef struct col_shadow_map {
    uint32_t **dir;
    uint64_t dir_len;
    unsigned shift;
} col_shadow_map_t;
extern col_shadow_map_t col_shadow;
uint32_t *col_shadow_leaf_install(uint64_t d);

/* The leaf holding ptr's value and the value's index there; with create,
 * the leaf is mapped if needed.  NULL when ptr is outside the map (or a
 * leaf cannot be mapped).  glibc's granule is taken apart with constant
 * shifts and without the second half (its blocks are 16-byte aligned):
 * 3 instructions fewer per lookup than the shift read from the map, each
 * hook making one (threadtest: 5 instructions fewer per pair, CPU -1.4%
 * to -2.5% on the tiny-block workloads). */
UT_INLINE uint32_t *col_shadow_leaf(const void *ptr, int create, uint32_t *index)
{
    uint64_t a = (uint64_t)(uintptr_t)ptr, d;
    if (UT_LIKELY(col_shadow.shift == COL_SHADOW_GLIBC_SHIFT)) {
        d = a >> (COL_SHADOW_GLIBC_SHIFT + COL_SHADOW_LEAF_GRANULE_BITS);
        *index = (uint32_t)(a >> COL_SHADOW_GLIBC_SHIFT) & ((1u << COL_SHADOW_LEAF_GRANULE_BITS) - 1);
    } else {
        uint64_t g = a >> col_shadow.shift;
        d = g >> COL_SHADOW_LEAF_GRANULE_BITS;
        /* bit 3 of the address picks the leaf's half */
        *index = (uint32_t)(g & ((1u << COL_SHADOW_LEAF_GRANULE_BITS) - 1)) |
                 (uint32_t)((a & 8) << (COL_SHADOW_LEAF_GRANULE_BITS - 3));
    }
    if (UT_UNLIKELY(d >= col_shadow.dir_len))
        return NULL;
    uint32_t *leaf = __atomic_load_n(&col_shadow.dir[d], __ATOMIC_ACQUIRE);
    if (UT_UNLIKELY(leaf == NULL)) {
        if (!create || (leaf = col_shadow_leaf_install(d)) == NULL)
            return NULL;
    }
    return leaf;
}

/* The byte that says whether the page holding value i of leaf was ever
 * written. */
UT_INLINE uint8_t *col_shadow_written(uint32_t *leaf, uint32_t i)
{
    return (uint8_t *)(leaf + (1u << COL_SHADOW_LEAF_BITS)) + (i >> COL_SHADOW_PAGE_BITS);
}

/* Store value v at index i of leaf; returns the value that was there
 * (non-zero means a free was missed). */
UT_INLINE uint32_t col_shadow_exchange(uint32_t *leaf, uint32_t i, uint32_t v)
{
    uint8_t *w = col_shadow_written(leaf, i);
    if (UT_LIKELY(__atomic_load_n(w, __ATOMIC_RELAXED))) {
        uint32_t old = __atomic_load_n(&leaf[i], __ATOMIC_RELAXED);
        __atomic_store_n(&leaf[i], v, __ATOMIC_RELAXED);
        return old;
    }
    __atomic_store_n(&leaf[i], v, __ATOMIC_RELAXED); /* the page's first write */
    __atomic_store_n(w, 1, __ATOMIC_RELAXED);
    return 0;
}

/* Mark ptr live with the given value (non-zero); returns the value that
 * was there.  0 and nothing stored if ptr is outside the map. */
UT_INLINE uint32_t col_shadow_set(const void *ptr, uint32_t value)
{
    uint32_t i, *leaf = col_shadow_leaf(ptr, 1, &i);
    if (UT_UNLIKELY(leaf == NULL))
        return 0;
    return col_shadow_exchange(leaf, i, value);
}

/* Read and clear; 0 if ptr is not a live block heapscope recorded.  (The
 * page of a live block's value was written when the block was allocated:
 * only the free of a block heapscope never saw reads a page first.) */
UT_INLINE uint32_t col_shadow_take(const void *ptr)
{
    uint32_t i, *leaf = col_shadow_leaf(ptr, 0, &i);
    if (UT_UNLIKELY(leaf == NULL))
        return 0;
    uint32_t v = __atomic_load_n(&leaf[i], __ATOMIC_RELAXED);
    if (v)
        __atomic_store_n(&leaf[i], 0, __ATOMIC_RELAXED);
    return v;
}
/* Exact sizes of blocks whose slack does not fit in the shadow value. */
/* 0, or -1 when the side table cannot grow (the size is not kept). */
int col_shadow_size_put(const void *ptr, uint64_t size);
uint64_t col_shadow_size_take(const void *ptr);
void col_shadow_atfork_prepare(void);
void col_shadow_atfork_release(void);


/* ---- unwinding (col_unwind.c, col_unwind_fp.c, col_dwarf.c) ---------- */

int col_unwind_init(void);
void col_unwind_modules_changed(void);  /* after dlopen/dlclose */
void col_unwind_atfork_prepare(void);   /* fork waits for walks in libunwind */
void col_unwind_quiesce(void);          /* sealed: waits for walks in libunwind */
void col_unwind_atfork_parent(void);
void col_unwind_atfork_child(void);
void col_unwind_report(void);           /* unwinder statistics as a MESSAGE */
/* At thread exit, the thread's unwinder memory goes to its state t, and
 * the state's next owner takes it at attach: a thread pool or a server
 * that starts a thread per connection then neither maps nor faults it in
 * again (each unmapping and each first write to a page that was read
 * first flushes the TLB of every CPU the process runs on), and the DWARF
 * rules stay looked up. */
void col_unwind_thread_exit(col_thread_t *t);
void col_unwind_thread_attach(col_thread_t *t);

/* The stack above `frame` (a frame of heapscope's own, built with frame
 * pointers, normally the hook's), without heapscope's frames, as a node of
 * the call tree: 0 for no frames, COL_NODE_NONE if the tree is full.  The
 * caching unwinders keep a memo of the thread's previous walk (col_memo.h)
 * and reuse the part of it a new stack shares; col_unwind_cache copies a
 * walk's checks into the recorder's cache of recent stacks. */
uint32_t col_unwind_fp(col_thread_t *t, const void *frame, uint32_t guess);
void col_unwind_fp_thread_exit(col_thread_t *t);
void col_unwind_fp_thread_attach(col_thread_t *t);
/* Is the stack above frame the stack of node g (made by an earlier walk)?
 * The frame-pointer walk, compared with g's frames, without the memo. */
int col_unwind_fp_is(const col_thread_t *t, const void *frame, uint32_t g);
/* The same for the DWARF walk, without its memo (col_dwarf.c). */
int col_dwarf_is(const col_thread_t *t, const void *frame, uint32_t g);
#define COL_UNWIND_FAIL 0xfffffffeu     /* col_dwarf_stack: use libunwind */
uint32_t col_dwarf_stack(const void *frame, int max, uintptr_t skip_lo, uintptr_t skip_hi,
                         uintptr_t stack_lo, uintptr_t stack_hi, uint32_t guess);
/* The unwinder keeps the checks of its walks (col_unwind_cache). */
UT_INLINE int col_unwind_memo(void)
{
    return col_config.unwinder != PF_UNWIND_LIBUNWIND;
}
uint32_t col_unwind_libunwind(int max);   /* libunwind for this call */
/* Fill e with the stack the last walk of this thread found, node, from
 * the unwinder's memo; e->frame is NULL when it cannot be cached. */
void col_unwind_cache(col_thread_t *t, col_sc_entry_t *e, const void *frame, uint32_t node,
                      uint32_t epoch);
/* HEAPSCOPE_UNWIND_VERIFY: the cache said `cached`, the walk `node`. */
void col_unwind_verify_cache(uint32_t cached, uint32_t node);
/* HEAPSCOPE_UNWIND_VERIFY: node, found without a walk, against the
 * reference walk. */
void col_unwind_verify_walk(col_thread_t *t, const void *frame, uint32_t node);
uint32_t col_unwind_any(col_thread_t *t, const void *frame, uint32_t guess); /* libunwind mode, verification */
uint64_t col_unwind_fp_foreign_walks(void); /* walks of stacks not the thread's own */
uint64_t col_unwind_fp_seccomp_cuts(void);  /* of them, stopped: no pipe for col_seccomp_read */
/* The plain frame-pointer walk (no memo), innermost first: the reference
 * of HEAPSCOPE_UNWIND_VERIFY for fp. */
int col_unwind_fp_plain(const col_thread_t *t, const void *frame, uintptr_t *ips, int max,
                        unsigned *flags);

/* The DWARF walk of t's stack above frame, or libunwind where it fails. */
UT_INLINE uint32_t col_unwind_dwarf(col_thread_t *t, const void *frame, uint32_t guess)
{
    uint32_t node = col_dwarf_stack(frame, col_config.max_depth, col_proc.self_lo,
                                    col_proc.self_hi, t->stack_lo, t->stack_hi, guess);
    if (UT_UNLIKELY(node == COL_UNWIND_FAIL))
        return col_unwind_libunwind(col_config.max_depth);
    return node;
}

/* guess: the stack the caller expects (0: none), see col_node_stack. */
UT_INLINE uint32_t col_unwind(col_thread_t *t, const void *frame, uint32_t guess)
{
    if (UT_LIKELY(!col_config.verify_unwind)) {
        if (col_config.unwinder == PF_UNWIND_DWARF)
            return col_unwind_dwarf(t, frame, guess);
        if (col_config.unwinder == PF_UNWIND_FP)
            return col_unwind_fp(t, frame, guess);
    }
    return col_unwind_any(t, frame, guess);
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
/* Say in the profile when jemalloc is loaded and its own entry points are
 * not intercepted (col_hooks_ext.c); after col_modules_scan. */
void col_ext_check(void);
extern uint32_t col_modules_epoch_value;
/* Is ip in the C library's code (glibc's libc.so.6, which is never
 * unloaded)?  0 before the first scan, or without such a library. */
extern uintptr_t col_modules_libc_lo, col_modules_libc_hi;
int col_modules_is_libc(const char *path); /* its file name starts "libc.so." (glibc) */
UT_INLINE int col_modules_in_libc(uintptr_t ip)
{
    uintptr_t hi = __atomic_load_n(&col_modules_libc_hi, __ATOMIC_ACQUIRE);
    return ip < hi && ip >= __atomic_load_n(&col_modules_libc_lo, __ATOMIC_RELAXED);
}
/* Bumped by every scan that saw a module load or unload. */
UT_INLINE uint32_t col_modules_epoch(void)
{
    return __atomic_load_n(&col_modules_epoch_value, __ATOMIC_ACQUIRE);
}
extern uint32_t col_modules_unloads;
/* Has a module been unloaded?  Until one is, an address that was code
 * still is. */
UT_INLINE int col_modules_unloaded(void)
{
    return __atomic_load_n(&col_modules_unloads, __ATOMIC_ACQUIRE) != 0;
}
void col_modules_self_range(uintptr_t *lo, uintptr_t *hi);
const char *col_modules_path_of(const void *addr, uintptr_t seg[2]); /* a shared object's path, or NULL */

/* The epoch a cache entry of recent stacks (col_sc_entry_t) is stamped
 * with: the modules' epoch, or under HEAPSCOPE_UNWIND_VERIFY one the fast
 * path never sees, so that every allocation walks and what the cache would
 * have said is checked (col_record_walk). */
#define COL_SC_VERIFY_EPOCH 0x80000000u
UT_INLINE uint32_t col_sc_epoch(void)
{
    return col_modules_epoch() | (col_config.verify_unwind ? COL_SC_VERIFY_EPOCH : 0);
}
int col_modules_code_range(uintptr_t ip, uintptr_t *lo, uintptr_t *hi); /* lock-free */

/* ---- writer thread and profile (col_writer.c, col_flush.c) ------------ */

void col_writer_init(void);             /* at start-up: finds glibc's single-thread flag */
int col_writer_start(void);
void col_writer_lock(void);
void col_writer_unlock(void);
void col_writer_trigger(void);          /* async-signal-safe */
void col_writer_atfork_prepare(void);
void col_writer_atfork_parent(void);
void col_writer_atfork_child(void);
void col_writer_tick(void);             /* cold check from the hot path */
/* End the writer thread and wait until the kernel no longer counts it
 * (unshare and setns of a user namespace want a single-threaded caller);
 * 1 if one was running.  col_writer_start starts it again. */
int col_writer_pause(void);
/* Is the writer thread to run now (HEAPSCOPE_WRITER, a flush signal, the
 * program's second thread), or does the cold check do its work? */
int col_writer_wanted(void);

enum { COL_FLUSH_PERIODIC = 0, COL_FLUSH_FINAL = 1, COL_FLUSH_EXEC = 2 };
/* Write the whole profile; caller holds the writer lock. */
int col_flush(int kind);
int col_flush_finished(void);
/* A seccomp filter on its way in `stops` the profile (the end of a
 * sentence): the first such write the profile now, ending with a message
 * that says so, which is returned (else NULL), and seal it (col_sealed);
 * each holds the seal until col_flush_unseal, called if its filter did not
 * go in, which returns 1 when that lifted the seal. */
const char *col_flush_seal(const char *stops);
int col_flush_unseal(void);
void col_flush_reset_child(void);

typedef struct col_sample {
    uint64_t t, heap, rss, allocs, frees;
} col_sample_t;
/* Takes a sample (caller holds the writer lock); returns the allocations
 * and frees counted so far, whether or not the sample was kept. */
uint64_t col_sample_take(void);
const col_sample_t *col_samples(size_t *count);
uint64_t col_rss_peak(void);

/* ---- output file (col_output.c) --------------------------------------- */

/* The profile's path, chosen on first use; NULL if none can be written. */
const char *col_output_path(void);
int col_output_take_claimed(void); /* the new file's descriptor, or -1 */
int col_fd_high(int fd); /* fd moved out of the program's way (col_output.c) */
int col_fd_high_at(int fd, int above); /* the same, `above` numbers higher (< 16) */
int col_fd_floor(void); /* where col_fd_high moves them; 0 if nowhere */
void col_fd_prepare(void); /* at start-up: room for col_fd_high */
void col_output_reset_child(void);

/* ---- diagnostics (col_log.c) ------------------------------------------ */

void col_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void col_message_add(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *col_strerror(int e); /* untranslated, allocates nothing */
const char *col_message_get(size_t i);
size_t col_message_count(void);

#endif
