/* tsan_pipeline.c - the collector's recording path, per-thread tables and
 * writer thread under ThreadSanitizer, checked against a model.
 *
 * Built with -fsanitize=thread (tests/tsan/CMakeLists.txt) from the
 * collector's own sources: col_record.c (what a malloc or free records),
 * col_thread.c (per-thread tables, attach, recycling at thread exit),
 * col_node.c, col_site.c, col_idtab.c (the call tree and the allocation
 * sites), col_shadow.c, col_writer.c / col_flush.c / col_sample.c
 * (the writer thread: samples every 1 ms, a profile every 10 ms and on
 * every trigger), col_output.c, col_config.c, col_modules.c, col_log.c and
 * the format writer.  The hooks (col_hooks*.c, col_boot.c) are left out:
 * the TSan runtime owns malloc here.  The unwinder is replaced by a stub
 * that returns the call-tree node of one of SITES synthetic stacks, the
 * "call site" the worker thread chose, built through col_node.c with the
 * recorder's guess as the real unwinders do.
 *
 * GENERATIONS times, WORKERS threads start together (so states are
 * attached, recycled from threads that exited, and released at exit) and
 * each does OPS operations on real blocks: allocate at a random site, free
 * its own block, realloc one (take / real realloc / commit, as the hook
 * does), hand a block to another thread through a mutex-protected queue,
 * or free a block another thread handed over.  Each thread leaves its last
 * blocks live.  Meanwhile a checker thread reads the profile the writer
 * keeps replacing and checks that every version reads and that the
 * allocation count never goes backwards.
 *
 * At the end the main thread frees what is left in the queue, writes the
 * final profile and reads it back with the profile reader: per site, the
 * allocations, bytes, frees and bytes freed must equal the model's, and
 * the totals must add up with no unknown free, lost or untracked event.
 *
 * Built again as tsan_pipeline_narrow, with counters that fill every 16
 * events (COL_COUNT_BITS, col_internal.h), each carry slowed down
 * (HEAPSCOPE_FAULT_SLOW_CARRY) so that the writer reads counters in the
 * middle of one.
 *
 * Usage: tsan_pipeline [SCALE]  (default 1: 25 generations of 4 threads,
 * 3,000 operations each; `make check-tsan` runs SCALE 4).
 * TSan reports fail the test (tests/tsan/CMakeLists.txt sets TSAN_OPTIONS).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "collect/col_memo.h"
#include "collect/col_record.h"
#include "format/pf_reader.h"

/* ---- what col_boot.c and col_unwind.c would define ---------------------- */

col_real_t col_real;
col_process_t col_proc;
int col_seccomp; /* no filter (col_seccomp.c is not built in) */
int col_sealed;  /* nor sealed */
unsigned char col_boot_arena[COL_BOOT_ARENA_SIZE]; /* never hands out a block here */
volatile int col_state = COL_UNINIT;
_Thread_local int col_tls_guard __attribute__((tls_model("initial-exec")));

uint64_t col_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#define SITES 48
#define SITE_IP(s, i) (0x10000000u + (uintptr_t)(s) * 0x1000u + (uintptr_t)(i) * 0x10u)

static _Thread_local int cur_site;

static int site_depth(int s)
{
    return 1 + s % 6;
}

/* The "unwinder": the node of the current site's frames, through the
 * call tree (col_node.c) with the caller's guess, as the real unwinders
 * do.  There is no memo (col_fp_memo stays NULL), so every allocation
 * "walks". */
static uint32_t stub_unwind(uint32_t guess)
{
    uintptr_t ips[8];
    uint32_t nodes[8];
    int n = site_depth(cur_site);
    for (int i = 0; i < n; i++)
        ips[i] = SITE_IP(cur_site, i);
    col_node_stack(0, ips, n, guess, nodes);
    return nodes[0];
}

_Thread_local col_fp_memo_t *col_fp_memo __attribute__((tls_model("initial-exec")));
_Thread_local col_cfi_memo_t *col_cfi_memo __attribute__((tls_model("initial-exec")));

uint32_t col_unwind_fp(col_thread_t *t, const void *frame, uint32_t guess)
{
    (void)t, (void)frame;
    return stub_unwind(guess);
}

/* The guess check, as the real ones read it: node g's records (made by
 * any thread, named by col_node_next) against the current site's frames. */
int col_unwind_fp_is(const col_thread_t *t, const void *frame, uint32_t g)
{
    (void)t, (void)frame;
    if (g == 0 || g >= COL_NODE_MAX)
        return 0;
    int n = site_depth(cur_site), i = 0;
    for (; i < n && g != 0; i++, g = col_nodes[g].parent)
        if (col_nodes[g].ip != SITE_IP(cur_site, i))
            return 0;
    return i == n && g == 0;
}

int col_dwarf_is(const col_thread_t *t, const void *frame, uint32_t g)
{
    return col_unwind_fp_is(t, frame, g);
}

void col_unwind_verify_walk(col_thread_t *t, const void *frame, uint32_t node)
{
    (void)t, (void)frame, (void)node;
}

uint32_t col_unwind_any(col_thread_t *t, const void *frame, uint32_t guess)
{
    (void)t, (void)frame;
    return stub_unwind(guess);
}

uint32_t col_dwarf_stack(const void *frame, int max, uintptr_t skip_lo, uintptr_t skip_hi,
                         uintptr_t stack_lo, uintptr_t stack_hi, uint32_t guess)
{
    (void)frame, (void)max, (void)skip_lo, (void)skip_hi, (void)stack_lo, (void)stack_hi;
    return stub_unwind(guess);
}

uint32_t col_unwind_libunwind(int max)
{
    (void)max;
    return stub_unwind(0);
}

/* No memo of a real walk to keep: the stub's stacks are never cached. */
void col_unwind_cache(col_thread_t *t, col_sc_entry_t *e, const void *frame, uint32_t node,
                      uint32_t epoch)
{
    (void)t, (void)frame, (void)node, (void)epoch;
    e->frame = NULL;
}

void col_unwind_verify_cache(uint32_t cached, uint32_t node)
{
    (void)cached, (void)node;
}

void col_unwind_thread_exit(col_thread_t *t)
{
    (void)t;
}

void col_unwind_thread_attach(col_thread_t *t)
{
    (void)t;
}

void col_unwind_modules_changed(void)
{
}

void col_unwind_quiesce(void)
{
}

/* ---- the model ------------------------------------------------------------ */

#define WORKERS 4
#define KEEP 48   /* live blocks a worker holds at most */
#define QUEUE 256 /* blocks handed over, at most */

typedef struct block {
    void *p;
    int site;
    uint64_t size;
} block_t;

typedef struct site_model {
    uint64_t allocs, bytes, frees, bytes_freed;
} site_model_t;

static site_model_t model[SITES];
static int failures;
static int generations = 25, ops = 3000;

static struct {
    pthread_mutex_t lock;
    block_t b[QUEUE];
    int n;
} queue = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void fail(const char *what, long long a, long long b)
{
    if (__atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED) <= 20)
        fprintf(stderr, "FAIL %s (%lld, %lld)\n", what, a, b);
}

static void model_alloc(int s, uint64_t size)
{
    __atomic_add_fetch(&model[s].allocs, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&model[s].bytes, size, __ATOMIC_RELAXED);
}

static void model_free(int s, uint64_t size)
{
    __atomic_add_fetch(&model[s].frees, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&model[s].bytes_freed, size, __ATOMIC_RELAXED);
}

/* Requested sizes: 1..2000, whose exact size the site gives; at every 4th
 * site 8193..14192, above PF_EXACT_SIZE_MAX, whose exact size the shadow
 * keeps as the block's slack; and every 8th site asks the allocator for
 * 4 KiB more than it records, so that the slack does not fit the shadow
 * value and the exact size goes to the side table. */
static uint64_t size_at(int s, uint64_t r)
{
    return s % 4 == 0 ? PF_EXACT_SIZE_MAX + 1 + r % 6000 : 1 + r % 2000;
}

static block_t alloc_at(int s, uint64_t size)
{
    block_t b = {NULL, s, size};
    b.p = malloc(size + (s % 8 == 0 ? 4096 : 0));
    if (!b.p)
        return b;
    cur_site = s;
    col_record_alloc(b.p, size, __builtin_frame_address(0));
    model_alloc(s, size);
    return b;
}

/* As the free hook: recorded before the real free. */
static void free_block(block_t *b)
{
    col_record_free(b->p);
    free(b->p);
    model_free(b->site, b->size);
    b->p = NULL;
}

/* As the realloc hook: take the old record, real realloc, commit, record. */
static void realloc_block(block_t *b, int s, uint64_t size)
{
    col_taken_t tk;
    col_record_take(b->p, &tk);
    if (!tk.valid || tk.size != b->size)
        fail("realloc took the wrong size", (long long)tk.size, (long long)b->size);
    void *q = realloc(b->p, size + (s % 8 == 0 ? 4096 : 0));
    if (!q) {
        col_record_restore(&tk);
        return;
    }
    col_record_commit_free(&tk);
    model_free(b->site, b->size);
    cur_site = s;
    col_record_alloc(q, size, __builtin_frame_address(0));
    model_alloc(s, size);
    *b = (block_t){q, s, size};
}

static uint64_t xorshift(uint64_t *r)
{
    *r ^= *r << 13, *r ^= *r >> 7, *r ^= *r << 17;
    return *r;
}

static void *worker(void *arg)
{
    uint64_t rng = 0x9e3779b97f4a7c15ull * ((uint64_t)(uintptr_t)arg + 1);
    block_t own[KEEP];
    int n = 0;
    /* a site is used in runs, as a loop in a program would (memo hits) */
    int s = 0;
    for (int i = 0; i < ops; i++) {
        uint64_t r = xorshift(&rng);
        if (r % 4 == 0)
            s = (int)((r >> 8) % SITES);
        uint64_t size = size_at(s, r >> 20);
        switch ((r >> 40) % 10) {
        case 0: case 1: case 2: case 3: case 4:
            if (n < KEEP) {
                block_t b = alloc_at(s, size);
                if (b.p)
                    own[n++] = b;
            }
            break;
        case 5: case 6:
            if (n > 0) {
                int k = (int)((r >> 12) % (uint64_t)n);
                free_block(&own[k]);
                own[k] = own[--n];
            }
            break;
        case 7:
            if (n > 0) {
                pthread_mutex_lock(&queue.lock);
                if (queue.n < QUEUE) {
                    queue.b[queue.n++] = own[n - 1];
                    n--;
                }
                pthread_mutex_unlock(&queue.lock);
            }
            break;
        case 8: {
            block_t b = {NULL, 0, 0};
            pthread_mutex_lock(&queue.lock);
            if (queue.n > 0)
                b = queue.b[--queue.n];
            pthread_mutex_unlock(&queue.lock);
            if (b.p)
                free_block(&b);
            break;
        }
        default:
            if (n > 0)
                realloc_block(&own[(r >> 12) % (uint64_t)n], s, size);
            break;
        }
    }
    /* the first half of what is left stays live (a leak), the rest is freed */
    for (int k = n / 2; k < n; k++)
        free_block(&own[k]);
    return NULL;
}

/* ---- the profile ------------------------------------------------------------ */

static char path[4096];
static int workers_done;
static int profiles_read, profiles_empty;

/* Reads the profile the writer keeps replacing, until the workers end. */
static void *checker(void *arg)
{
    (void)arg;
    uint64_t last = 0;
    while (!__atomic_load_n(&workers_done, __ATOMIC_ACQUIRE)) {
        pf_profile_t *p;
        char err[PF_ERRMSG_SIZE];
        int rc = pf_reader_open(path, &p, err, sizeof err);
        if (rc == PF_EEMPTY || (rc == PF_EIO && errno == ENOENT)) {
            profiles_empty++; /* not written yet */
        } else if (rc != PF_OK) {
            fail("a periodic profile does not read", rc, 0);
            fprintf(stderr, "  %s\n", err);
        } else {
            if (p->truncated || !p->has_totals)
                fail("a periodic profile is truncated", p->truncated, p->has_totals);
            else if (p->totals.allocations < last)
                fail("allocations went backwards", (long long)last,
                     (long long)p->totals.allocations);
            else
                last = p->totals.allocations;
            profiles_read++;
            pf_reader_free(p);
        }
        usleep(5000);
    }
    return NULL;
}

/* The site whose synthetic frames stack s has, or -1. */
static int site_of(const pf_profile_t *p, const pf_stack_t *st)
{
    pf_frame_t f[8];
    uint32_t d = pf_reader_stack_frames(p, st, f, 8);
    if (d == 0 || d > 6)
        return -1;
    int s = (int)((f[0].ip - 0x10000000u) / 0x1000u);
    if (f[0].ip < 0x10000000u || s >= SITES || (int)d != site_depth(s))
        return -1;
    for (uint32_t i = 0; i < d; i++)
        if (f[i].ip != SITE_IP(s, i))
            return -1;
    return s;
}

static void check_profile(int threads)
{
    pf_profile_t *p;
    char err[PF_ERRMSG_SIZE];
    int rc = pf_reader_open(path, &p, err, sizeof err);
    if (rc != PF_OK) {
        fail("the final profile does not read", rc, 0);
        fprintf(stderr, "  %s\n", err);
        return;
    }
    if (!p->final)
        fail("the final profile is not final", p->final, p->truncated);
    site_model_t got[SITES];
    memset(got, 0, sizeof got);
    int seen[SITES] = {0};
    for (size_t i = 0; i < p->n_stacks; i++) {
        const pf_stack_t *st = &p->stacks[i];
        if (st->n_counters == 0)
            continue;
        int s = site_of(p, st);
        if (s < 0) {
            fail("counters on a stack that is no site", (long long)st->id, (long long)st->depth);
            continue;
        }
        if (seen[s]++)
            fail("one site, two stacks", s, (long long)st->id);
        for (size_t c = st->first_counter; c < st->first_counter + st->n_counters; c++) {
            got[s].allocs += p->counters[c].allocations;
            got[s].bytes += p->counters[c].bytes_allocated;
            got[s].frees += p->counters[c].frees;
            got[s].bytes_freed += p->counters[c].bytes_freed;
        }
    }
    uint64_t allocs = 0, frees = 0, bytes = 0, bytes_freed = 0;
    for (int s = 0; s < SITES; s++) {
        const site_model_t *m = &model[s];
        if (got[s].allocs != m->allocs)
            fail("site allocations", (long long)got[s].allocs, (long long)m->allocs);
        if (got[s].bytes != m->bytes)
            fail("site bytes allocated", (long long)got[s].bytes, (long long)m->bytes);
        if (got[s].frees != m->frees)
            fail("site frees", (long long)got[s].frees, (long long)m->frees);
        if (got[s].bytes_freed != m->bytes_freed)
            fail("site bytes freed", (long long)got[s].bytes_freed, (long long)m->bytes_freed);
        allocs += m->allocs, frees += m->frees;
        bytes += m->bytes, bytes_freed += m->bytes_freed;
    }
    const pf_totals_t *t = &p->totals;
    if (t->allocations != allocs || t->frees != frees || t->bytes_allocated != bytes ||
        t->bytes_freed != bytes_freed)
        fail("totals", (long long)t->allocations, (long long)allocs);
    if (t->unknown_frees || t->lost_allocations || t->untracked || t->shadow_overwrites)
        fail("unknown frees / lost / untracked / overwrites", (long long)t->unknown_frees,
             (long long)(t->lost_allocations + t->untracked + t->shadow_overwrites));
    if (t->threads != (uint64_t)threads)
        fail("threads attached", (long long)t->threads, threads);
    if (p->n_samples == 0)
        fail("no timeline samples", 0, 0);
    printf("tsan_pipeline: %d threads, %llu allocations, %llu frees, %llu live, %zu stacks, "
           "%zu samples; %d periodic profiles read (%d before the first)\n",
           threads, (unsigned long long)allocs, (unsigned long long)frees,
           (unsigned long long)(allocs - frees), p->n_stacks, p->n_samples, profiles_read,
           profiles_empty);
    pf_reader_free(p);
}

int main(int argc, char **argv)
{
    int scale = argc > 1 ? atoi(argv[1]) : 1;
    if (scale < 1 || scale > 100) {
        fprintf(stderr, "usage: tsan_pipeline [SCALE 1-100]\n");
        return 2;
    }
    generations *= scale;
    char dir[] = "/tmp/tsan_pipeline.XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    snprintf(path, sizeof path, "%s/p.hsp", dir);
    setenv("HEAPSCOPE_OUTPUT", path, 1);
    setenv("HEAPSCOPE_UNWIND", "fp", 1);
    setenv("HEAPSCOPE_INTERVAL_MS", "10", 1);
    setenv("HEAPSCOPE_SAMPLE_MS", "1", 1);
    setenv("HEAPSCOPE_PEAK_SLACK", "4096", 1);
#if COL_COUNT_BITS < 31 /* tsan_pipeline_narrow: readers meet carries half done */
    setenv("HEAPSCOPE_FAULT_SLOW_CARRY", "1", 1);
#endif
    col_config_load();
    col_real.malloc_usable_size = malloc_usable_size;
    col_real.pthread_create = pthread_create; /* the writer thread's */
    col_proc.pid = (int)getpid();
    col_proc.start_mono_ns = col_now_ns();
    col_proc.granule_shift = 4; /* not glibc's chunks: ask malloc_usable_size */
    if (col_node_init() != 0 || col_site_init() != 0 || col_shadow_init() != 0 ||
        col_thread_init() != 0) {
        fprintf(stderr, "FAIL init\n");
        return 1;
    }
    col_writer_lock();
    col_modules_scan();
    col_writer_unlock();
    __atomic_store_n(&col_state, COL_READY, __ATOMIC_RELEASE);
    if (col_writer_start() != 0) {
        fprintf(stderr, "FAIL writer thread\n");
        return 1;
    }

    pthread_t chk;
    pthread_create(&chk, NULL, checker, NULL);
    int threads = 0;
    for (int g = 0; g < generations; g++) {
        pthread_t th[WORKERS];
        for (int w = 0; w < WORKERS; w++)
            pthread_create(&th[w], NULL, worker, (void *)(uintptr_t)(g * WORKERS + w));
        if (g % 5 == 0)
            col_writer_trigger(); /* a flush now, as HEAPSCOPE_SIGNAL does */
        for (int w = 0; w < WORKERS; w++)
            pthread_join(th[w], NULL);
        threads += WORKERS;
    }
    __atomic_store_n(&workers_done, 1, __ATOMIC_RELEASE);
    pthread_join(chk, NULL);

    /* the main thread frees what was handed over and never taken */
    for (int i = 0; i < queue.n; i++)
        free_block(&queue.b[i]);
    threads += queue.n > 0;

    col_writer_lock();
    if (col_flush(COL_FLUSH_FINAL) != 0)
        fail("final flush", 0, 0);
    col_writer_unlock();
    check_profile(threads);
    unlink(path);
    rmdir(dir);
    if (failures)
        printf("tsan_pipeline: %d failures\n", failures);
    return failures != 0;
}
